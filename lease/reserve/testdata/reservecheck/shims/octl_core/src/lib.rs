//! Stand-in for the two items of orchestratectl's octl_core that the
//! reservation seed calls; octl_core is not part of the seed. Both follow
//! docs PROTOCOLS.md §1: lock and record files are opened with O_NOFOLLOW,
//! and the per-key lock is an exclusive flock(2) on `<hash>.lock`, created
//! if missing, held for one read-decide-write step.
use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Adds O_NOFOLLOW: a symlink at the path is refused (ELOOP).
pub fn nofollow(opts: &mut OpenOptions) {
    opts.custom_flags(libc::O_NOFOLLOW);
}

/// A blocking exclusive flock on a lock file, released on drop.
pub struct RunLock {
    _file: File,
}

impl RunLock {
    pub fn acquire(path: &Path) -> std::io::Result<Self> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut opts = OpenOptions::new();
        opts.create(true).read(true).write(true).truncate(false);
        nofollow(&mut opts);
        let file = opts.open(path)?;
        file.lock()?;
        Ok(RunLock { _file: file })
    }
}
