//! The agent's duties as the guest's init (PID 1): the pseudo file
//! systems, a `PATH`, and powering the guest off when done.
//!
//! The guest's root file system is the host's `/` through hostfs, so
//! `/proc`, `/sys`, `/run` and `/tmp` are the host's directories until the
//! guest mounts its own: proc and sysfs for the kernel's views (`ip`,
//! `tc` and the agent read them), tmpfs on `/run` for `ip netns`'s
//! `/run/netns` and on `/tmp` so that the guest writes nothing into the
//! host's.
//!
//! PID 1 must never exit: the kernel panics when init dies. The agent
//! powers off instead, after `sync()` so that hostfs has flushed the
//! result.

use std::ffi::CString;
use std::io;

/// Whether this process is the guest's init.
pub fn is_pid1() -> bool {
    std::process::id() == 1
}

/// The kernel starts init with no `PATH`; set-up steps name programs
/// (`ip`, `tc`) that live in the sbin directories. Call before any
/// thread is started.
pub fn ensure_path() {
    if std::env::var_os("PATH").is_none() {
        std::env::set_var("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
    }
}

/// One `mount(2)`; `EBUSY` (already mounted there, say by the init
/// script) counts as success.
fn mount(fstype: &str, target: &str, flags: libc::c_ulong, data: &str) -> Result<(), String> {
    let fail = |e: io::Error| format!("mount {fstype} on {target}: {e}");
    let c = |s: &str| CString::new(s).map_err(|_| fail(io::Error::from(io::ErrorKind::InvalidInput)));
    let (src, tgt, ty, dat) = (c(fstype)?, c(target)?, c(fstype)?, c(data)?);
    // SAFETY: every pointer is a valid NUL-terminated string.
    let rc = unsafe { libc::mount(src.as_ptr(), tgt.as_ptr(), ty.as_ptr(), flags, dat.as_ptr().cast()) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EBUSY) {
            return Err(fail(e));
        }
    }
    Ok(())
}

/// proc on `/proc`, sysfs on `/sys`, tmpfs on `/run` and `/tmp`.
pub fn mount_all() -> Result<(), String> {
    let safe = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
    mount("proc", "/proc", safe, "")?;
    mount("sysfs", "/sys", safe, "")?;
    mount("tmpfs", "/run", libc::MS_NOSUID | libc::MS_NODEV, "mode=0755")?;
    mount("tmpfs", "/tmp", libc::MS_NOSUID | libc::MS_NODEV, "mode=1777")?;
    Ok(())
}

/// Flushes file systems and powers the guest off. Should the kernel
/// refuse, exiting is the only way left to end the guest (init's death
/// panics the kernel, which stops UML too).
pub fn power_off() -> ! {
    // SAFETY: sync() has no preconditions.
    unsafe { libc::sync() };
    // SAFETY: reboot() with a valid command; it only returns on failure.
    unsafe { libc::reboot(libc::LINUX_REBOOT_CMD_POWER_OFF) };
    eprintln!("tcplab-agent: power-off failed: {}", io::Error::last_os_error());
    std::process::exit(1)
}
