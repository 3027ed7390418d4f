//! The kernel backend's error: a message that says what failed and what
//! to do. The lab adds the location (file, flag) it knows.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelError {
    /// Dotted scenario path the error is about (`flow[0].tcp.ack_era`), if any.
    pub path: Option<String>,
    pub message: String,
}

impl KernelError {
    pub fn new(message: impl Into<String>) -> Self {
        KernelError { path: None, message: message.into() }
    }

    /// An error about scenario field `path`.
    pub fn field(path: impl Into<String>, message: impl Into<String>) -> Self {
        KernelError { path: Some(path.into()), message: message.into() }
    }
}

impl fmt::Display for KernelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = &self.path {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for KernelError {}

pub type Result<T, E = KernelError> = std::result::Result<T, E>;
