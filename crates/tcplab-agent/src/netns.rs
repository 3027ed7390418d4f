//! Network namespaces by name, as `ip netns` manages them.
//!
//! `ip netns add NAME` bind-mounts the new namespace on
//! `/run/netns/NAME`; `setns(fd, CLONE_NEWNET)` on that file moves the
//! *calling thread* into it. Everything that resolves a namespace at
//! creation time then uses the thread's: sockets (which stay in the
//! namespace they were created in), `/proc/sys/net/...` files (resolved
//! when opened), `/proc/<tid>/net/...`, and `if_nametoindex`.
//!
//! So the agent never switches its main thread: work that belongs to a
//! namespace runs on a thread of its own that enters it first.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// The file `ip netns add` creates for namespace `name`.
pub fn path(name: &str) -> String {
    format!("/run/netns/{name}")
}

/// Moves the calling thread into namespace `name`.
pub fn enter(name: &str) -> Result<(), String> {
    let p = path(name);
    let c = CString::new(p.clone()).map_err(|_| format!("namespace name {name:?} contains a NUL byte"))?;
    // SAFETY: `c` is a valid NUL-terminated path; the flags ask for a
    // plain read-only descriptor.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("namespace {name}: open {p}: {}", io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by open() and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: setns only reads the descriptor; it affects this thread.
    if unsafe { libc::setns(fd.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(format!("namespace {name}: setns: {}", io::Error::last_os_error()));
    }
    Ok(())
}

/// Runs `f` on a fresh thread inside namespace `ns` (`None`: the
/// namespace of the caller, still on a thread of its own so that `f` may
/// not change the caller's state) and returns its result. A panic in `f`
/// comes back as an error.
pub fn run_in<T, F>(ns: Option<&str>, f: F) -> Result<T, String>
where
    T: Send,
    F: FnOnce() -> Result<T, String> + Send,
{
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            if let Some(ns) = ns {
                enter(ns)?;
            }
            f()
        });
        h.join()
            .unwrap_or_else(|_| Err(format!("a thread working in namespace {} panicked", ns.unwrap_or("(initial)"))))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_namespace_is_an_error_naming_it() {
        let e = run_in(Some("tcplab-no-such-ns"), || Ok(())).unwrap_err();
        assert!(e.contains("/run/netns/tcplab-no-such-ns"), "{e}");
    }

    #[test]
    fn run_in_without_a_namespace_runs_the_closure() {
        assert_eq!(run_in(None, || Ok(7)), Ok(7));
    }
}
