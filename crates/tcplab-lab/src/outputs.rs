//! Output files of one command (`--plot DIR`, `--pcap DIR`, `--report
//! FILE`): created or reserved while the arguments are checked, so that a
//! bad path fails in milliseconds and not after a long run, and removed
//! again when the command fails, so that no partial files are left behind.
//!
//! - A directory is created (with its parents) and probed for writing.
//!   Files written into it through [`Outputs::write`] or registered with
//!   [`Outputs::track`] are removed on failure, then the directories this
//!   command created (if empty).
//! - A file is reserved by creating a hidden temporary sibling; its content
//!   goes there and is renamed over the final name at [`Outputs::write`],
//!   so an existing file is replaced only by a complete one.
//!
//! Dropping an [`Outputs`] without [`Outputs::commit`] is the failure path.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

#[derive(Debug, Default)]
pub struct Outputs {
    /// Directories this command created, outermost first.
    created_dirs: Vec<PathBuf>,
    /// Files written (or being written) by this command.
    files: Vec<PathBuf>,
    /// Reserved files: (final path, temporary sibling, flag for errors).
    reserved: Vec<(PathBuf, PathBuf, String)>,
    committed: bool,
}

impl Outputs {
    pub fn new() -> Outputs {
        Outputs::default()
    }

    /// Creates `dir` (and missing parents) and checks that files can be
    /// written in it. Errors name `flag` and the path.
    pub fn dir(&mut self, flag: &str, dir: &Path) -> Result<PathBuf> {
        let loc = format!("{flag} {}", dir.display());
        if dir.as_os_str().is_empty() {
            return Err(Error::at(loc, "empty directory name"));
        }
        if dir.exists() && !dir.is_dir() {
            return Err(Error::at(loc, "exists and is not a directory"));
        }
        let mut missing = Vec::new();
        let mut cur = Some(dir);
        while let Some(d) = cur {
            if d.as_os_str().is_empty() || d.exists() {
                break;
            }
            missing.push(d.to_path_buf());
            cur = d.parent();
        }
        missing.reverse();
        let made = std::fs::create_dir_all(dir);
        // Record what exists now, even on a partial failure, to clean it up.
        self.created_dirs.extend(missing.into_iter().filter(|d| d.exists()));
        made.map_err(|e| Error::at(loc.clone(), format!("cannot create directory: {e}")))?;
        let probe = dir.join(format!(".tcplab-write-test-{}", std::process::id()));
        std::fs::write(&probe, b"")
            .map_err(|e| Error::at(loc.clone(), format!("cannot write files in this directory: {e}")))?;
        let _ = std::fs::remove_file(&probe);
        Ok(dir.to_path_buf())
    }

    /// Reserves `path` for a file written at the end with [`Outputs::write`].
    pub fn reserve_file(&mut self, flag: &str, path: &Path) -> Result<()> {
        let loc = format!("{flag} {}", path.display());
        if path.is_dir() {
            return Err(Error::at(loc, "is a directory; give a file name, e.g. report.html"));
        }
        let name = path.file_name().ok_or_else(|| Error::at(loc.clone(), "not a file name"))?;
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !parent.is_dir() {
            self.dir(flag, &parent).map_err(|e| Error::at(loc.clone(), e.message))?;
        }
        let tmp = parent.join(format!(".{}.tcplab-{}.tmp", name.to_string_lossy(), std::process::id()));
        std::fs::write(&tmp, b"").map_err(|e| Error::at(loc.clone(), format!("cannot write: {e}")))?;
        self.reserved.push((path.to_path_buf(), tmp, loc));
        Ok(())
    }

    /// Writes `bytes` to `path`: a reserved file (through its temporary
    /// sibling and a rename) or a new file in a prepared directory.
    pub fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        if let Some((_, tmp, loc)) = self.reserved.iter().find(|(p, _, _)| p == path) {
            std::fs::write(tmp, bytes).map_err(|e| Error::at(loc.clone(), format!("cannot write: {e}")))?;
            std::fs::rename(tmp, path).map_err(|e| Error::at(loc.clone(), format!("cannot write: {e}")))?;
            self.files.push(path.to_path_buf());
            return Ok(());
        }
        self.files.push(path.to_path_buf());
        std::fs::write(path, bytes).map_err(|e| Error::at(path.display().to_string(), format!("cannot write: {e}")))
    }

    /// Registers a file that someone else writes, so that it is removed
    /// on failure.
    pub fn track(&mut self, path: &Path) {
        self.files.push(path.to_path_buf());
    }

    /// Keeps one file, whatever happens to the rest (an interrupted run's
    /// completed pcap files). Its directory then stays too.
    pub fn keep(&mut self, path: &Path) {
        self.files.retain(|f| f != path);
    }

    /// Keeps every output: the command succeeded.
    pub fn commit(mut self) {
        self.committed = true;
        for (_, tmp, _) in &self.reserved {
            let _ = std::fs::remove_file(tmp);
        }
    }

    /// Removes every output now (the failure path, also run on drop).
    pub fn discard(&mut self) {
        for (_, tmp, _) in self.reserved.drain(..) {
            let _ = std::fs::remove_file(tmp);
        }
        for f in self.files.drain(..).rev() {
            let _ = std::fs::remove_file(f);
        }
        for d in self.created_dirs.drain(..).rev() {
            let _ = std::fs::remove_dir(d);
        }
    }
}

impl Drop for Outputs {
    fn drop(&mut self) {
        if !self.committed {
            self.discard();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tcplab-outputs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn test_failure_removes_created_dirs_and_files() {
        let base = scratch("fail");
        let dir = base.join("a/b");
        let mut o = Outputs::new();
        o.dir("--plot", &dir).unwrap();
        o.write(&dir.join("x.svg"), b"<svg/>").unwrap();
        assert!(dir.join("x.svg").exists());
        drop(o);
        assert!(!base.exists(), "every directory the command created is gone");
    }

    #[test]
    fn test_commit_keeps_and_reserved_file_replaces_atomically() {
        let base = scratch("ok");
        std::fs::create_dir_all(&base).unwrap();
        let report = base.join("r.html");
        std::fs::write(&report, b"old").unwrap();
        let mut o = Outputs::new();
        o.reserve_file("--report", &report).unwrap();
        assert_eq!(std::fs::read(&report).unwrap(), b"old", "untouched until written");
        o.write(&report, b"new").unwrap();
        o.commit();
        assert_eq!(std::fs::read(&report).unwrap(), b"new");
        let left: Vec<_> = std::fs::read_dir(&base).unwrap().collect();
        assert_eq!(left.len(), 1, "no temporary file left");
        // A failed command leaves an existing file alone.
        let mut o = Outputs::new();
        o.reserve_file("--report", &report).unwrap();
        drop(o);
        assert_eq!(std::fs::read(&report).unwrap(), b"new");
        assert_eq!(std::fs::read_dir(&base).unwrap().count(), 1);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn test_unwritable_paths_fail_with_the_flag() {
        let base = scratch("bad");
        std::fs::create_dir_all(&base).unwrap();
        let file = base.join("f");
        std::fs::write(&file, b"").unwrap();
        let mut o = Outputs::new();
        let e = o.dir("--plot", &file.join("sub")).unwrap_err().to_string();
        assert!(e.starts_with(&format!("--plot {}", file.join("sub").display())), "{e}");
        let e = o.dir("--plot", &file).unwrap_err().to_string();
        assert!(e.contains("not a directory"), "{e}");
        let e = o.reserve_file("--report", &base).unwrap_err().to_string();
        assert!(e.contains("is a directory"), "{e}");
        drop(o);
        let _ = std::fs::remove_dir_all(&base);
    }
}
