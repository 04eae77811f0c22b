//! Shim for the part of fs4 the reservation seed uses (Debian packages no
//! fs4): `FileExt::{lock, try_lock, unlock}` and `TryLockError`, on std's
//! `File::lock`/`try_lock`/`unlock` (Rust >= 1.89). On Linux both fs4 and
//! std take flock(2) LOCK_EX on the file, so the lock is the same one; only
//! the crate that makes the system call differs.
use std::fs::File;
use std::io;

pub enum TryLockError {
    Error(io::Error),
    WouldBlock,
}

pub trait FileExt {
    fn lock(&self) -> io::Result<()>;
    fn try_lock(&self) -> Result<(), TryLockError>;
    fn unlock(&self) -> io::Result<()>;
}

impl FileExt for File {
    fn lock(&self) -> io::Result<()> {
        File::lock(self)
    }
    fn try_lock(&self) -> Result<(), TryLockError> {
        match File::try_lock(self) {
            Ok(()) => Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => Err(TryLockError::WouldBlock),
            Err(std::fs::TryLockError::Error(e)) => Err(TryLockError::Error(e)),
        }
    }
    fn unlock(&self) -> io::Result<()> {
        File::unlock(self)
    }
}
