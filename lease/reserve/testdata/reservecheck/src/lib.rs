//! The reservation seed (src/idempotency.rs, extracted verbatim from the
//! seed file at build time by build.sh) and stand-ins for the two crate
//! modules it uses that are not part of the seed: `error::CliError` and
//! `home::root_dir` ($ORCHESTRATECTL_HOME, else $HOME/.orchestratectl).
#[allow(dead_code)]
pub mod idempotency;

pub mod error {
    #[derive(Debug)]
    pub struct CliError {
        pub code: String,
        pub message: String,
    }
    impl CliError {
        pub fn system(code: &str, message: String) -> Self {
            CliError { code: code.to_string(), message }
        }
    }
    impl std::fmt::Display for CliError {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.code, self.message)
        }
    }
}

pub mod home {
    use crate::error::CliError;
    use std::path::PathBuf;
    pub fn root_dir() -> Result<PathBuf, CliError> {
        if let Some(h) = std::env::var_os("ORCHESTRATECTL_HOME").filter(|v| !v.is_empty()) {
            return Ok(PathBuf::from(h));
        }
        match std::env::var_os("HOME") {
            Some(h) => Ok(PathBuf::from(h).join(".orchestratectl")),
            None => Err(CliError::system("no_home", "HOME is not set".into())),
        }
    }
}
