//! Writing `result.json` atomically into the job's output directory.
//!
//! The directory is opened once, before anything else happens, and the
//! file is written relative to that descriptor (`openat`, `renameat`). In
//! the guest this matters: the agent mounts tmpfs on `/tmp` and `/run`,
//! which would hide an output directory under those paths of the host's
//! file system (the guest's root is the host's `/` through hostfs); the
//! descriptor opened before the mounts still reaches it. The result is
//! written to a temporary name, synced, then renamed, so the host never
//! reads half a file.

use crate::job::GuestResult;
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const TMP: &str = "result.json.tmp";
const FINAL: &str = "result.json";

/// The job's `out_dir`, open.
#[derive(Debug)]
pub struct OutDir {
    dir: OwnedFd,
    path: String,
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

impl OutDir {
    pub fn open(path: &str) -> Result<OutDir, String> {
        let fail = |e: io::Error| format!("output directory {path}: {e}");
        let c = cstr(path).map_err(fail)?;
        // SAFETY: `c` is a valid NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(fail(io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by open() and is owned by nobody else.
        Ok(OutDir { dir: unsafe { OwnedFd::from_raw_fd(fd) }, path: path.to_string() })
    }

    /// Writes `result.json` (pretty JSON) atomically.
    pub fn write_result(&self, r: &GuestResult) -> Result<(), String> {
        let fail = |what: &str, e: io::Error| format!("{}/{what}: {e}", self.path);
        let json = serde_json::to_vec_pretty(r).map_err(|e| format!("encoding the result: {e}"))?;
        let tmp = cstr(TMP).map_err(|e| fail(TMP, e))?;
        let fin = cstr(FINAL).map_err(|e| fail(FINAL, e))?;
        // SAFETY: `tmp` is a valid relative path, resolved against the open
        // directory; the mode is an ordinary file mode.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                tmp.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(fail(TMP, io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by openat() and is owned by nobody else.
        let mut f = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        f.write_all(&json).and_then(|()| f.write_all(b"\n")).and_then(|()| f.sync_all()).map_err(|e| fail(TMP, e))?;
        drop(f);
        // SAFETY: both paths are valid and relative to the same open directory.
        let rc = unsafe { libc::renameat(self.dir.as_raw_fd(), tmp.as_ptr(), self.dir.as_raw_fd(), fin.as_ptr()) };
        if rc != 0 {
            return Err(fail(FINAL, io::Error::last_os_error()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces_result_json() {
        let dir = std::env::temp_dir().join(format!("tcplab-agent-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = OutDir::open(dir.to_str().unwrap()).unwrap();
        let mut r = GuestResult { kernel_release: "x".into(), ..GuestResult::default() };
        out.write_result(&r).unwrap();
        r.error = Some("second".into());
        out.write_result(&r).unwrap();
        let text = std::fs::read_to_string(dir.join("result.json")).unwrap();
        let back: GuestResult = serde_json::from_str(&text).unwrap();
        assert_eq!(back, r);
        assert!(!dir.join(TMP).exists());
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_missing_directory_is_named() {
        let e = OutDir::open("/no/such/dir").unwrap_err();
        assert!(e.starts_with("output directory /no/such/dir: "), "{e}");
    }
}
