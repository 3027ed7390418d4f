//! Helpers shared by the tests of the `tcplab` binary.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the built binary.
pub fn tcplab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcplab")).args(args).output().expect("tcplab runs")
}

/// A path in the repository, from the crate's directory.
pub fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A fresh directory for one test, removed when dropped.
pub struct Scratch(pub PathBuf);

impl Scratch {
    pub fn new(name: &str) -> Scratch {
        let d = std::env::temp_dir().join(format!("tcplab-cli-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Scratch(d)
    }

    /// `p` inside the directory, as a string argument.
    pub fn path(&self, p: &str) -> String {
        self.0.join(p).display().to_string()
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[track_caller]
pub fn assert_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

/// Asserts exit code 2 and a stderr message containing every `needle`.
#[track_caller]
pub fn assert_error(o: &Output, needles: &[&str]) {
    let e = stderr(o);
    assert_eq!(o.status.code(), Some(2), "exit code; stderr: {e}");
    assert!(e.starts_with("error: "), "{e}");
    for n in needles {
        assert!(e.contains(n), "{n:?} not in {e:?}");
    }
    assert!(!e.contains("panicked"), "{e}");
}
