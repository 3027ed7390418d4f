//! `tcplab-agent packetdrill JOB.json`: Linux's packetdrill scripts run by
//! the real packetdrill inside the guest, one after the other, each in a
//! network namespace of its own.
//!
//! The host side (`tcplab-kernel`'s `packetdrill` module) writes a
//! [`PdJob`]: the packetdrill binary (a host path, seen through hostfs),
//! the arguments packetdrill's own harness (`run_all.py`, IPv4 variant)
//! passes, and the scripts. For each script the agent does what
//! `run_all.py` and `in_netns.sh` do: a fresh namespace (`ip netns add`,
//! `lo` up), `ip netns exec NS packetdrill ARGS BASENAME` with the
//! script's directory as the working directory (so that its init command
//! finds `../common/defaults.sh`, which sets the sysctls every script
//! starts from), and the namespace deleted afterwards. The `tcp_cubic`
//! module parameters are global, not per namespace: the agent restores
//! the values it found at boot before each script, so a script that sets
//! one (`hystart_detect`) does not leak it into the next.
//!
//! The agent mounts tmpfs on `/tmp` and `/run` (see [`crate::init`]);
//! scripts under the host's `/tmp` are reached through a bind mount of
//! it on [`HOST_TMP`], made before the mounts hide it.
//!
//! Each script's stdout and stderr go to `<out_dir>/<index>.out` and
//! `<index>.err`, and one [`PdOutcome`] per script is appended to
//! `<out_dir>/outcomes.jsonl` as soon as it ends (synced), so the host
//! sees progress and keeps what finished should it kill a stuck guest.
//! `<out_dir>/guest.json` ([`PdGuest`]) is written first, with the kernel
//! release or the set-up error.
//!
//! Every child inherits a timer slack of 1 ns (see
//! [`crate::clock::precise_timers`]): in virtual time a sleep's slack is
//! all the delay there is.

use crate::clock;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::Path;
use std::process::{Command, Stdio};

/// Bumped whenever a field changes meaning.
pub const PD_JOB_VERSION: u32 = 1;

/// The namespace each script runs in (created and deleted per script).
pub const NETNS: &str = "pd";

/// File names in the output directory.
pub const GUEST_FILE: &str = "guest.json";
pub const OUTCOMES_FILE: &str = "outcomes.jsonl";

/// What the host asks the guest to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PdJob {
    pub version: u32,
    /// The packetdrill binary (a host path: the guest's root is the
    /// host's `/`).
    pub packetdrill: String,
    pub scripts: Vec<PdScript>,
    /// Virtual seconds a script may run before it is killed (`run_all.py`
    /// allows 180 s of wall time on a real machine).
    pub timeout_secs: u64,
    /// Directory (a host path) for the outputs; opened before the agent
    /// mounts tmpfs over `/tmp`, so a host path under `/tmp` works.
    pub out_dir: String,
}

/// One script and the arguments packetdrill gets before its name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PdScript {
    /// Its position in the host's list (names its output files).
    pub index: usize,
    /// Absolute path of the `.pkt` file.
    pub path: String,
    pub args: Vec<String>,
}

/// How one script ended in the guest.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PdOutcome {
    pub index: usize,
    /// packetdrill's exit status (0: the script passed).
    pub exit_code: Option<i32>,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    /// Killed after [`PdJob::timeout_secs`].
    pub timed_out: bool,
    /// Virtual seconds from the start of packetdrill to its end.
    pub virtual_secs: f64,
    /// What went wrong around the script (namespace set-up), if anything:
    /// then packetdrill did not run.
    pub error: Option<String>,
}

/// Written once at the start.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PdGuest {
    pub kernel_release: String,
    /// Set-up of the guest failed (mounts, no tun device): no script ran.
    pub error: Option<String>,
}

/// Reads a job file, with the same checks as [`crate::load_job`].
pub fn load(path: &Path) -> Result<PdJob, String> {
    let p = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{p}: cannot read: {e}"))?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{p}: invalid JSON: {e}"))?;
    match v.get("version").and_then(|v| v.as_u64()) {
        Some(n) if n == u64::from(PD_JOB_VERSION) => {}
        Some(n) => return Err(format!("{p}: packetdrill job version {n}, this agent reads version {PD_JOB_VERSION}")),
        None => return Err(format!("{p}: not a packetdrill job: no numeric \"version\" field")),
    }
    serde_json::from_str(&text).map_err(|e| format!("{p}: invalid packetdrill job: {e}"))
}

fn cstr(s: &str) -> io::Result<CString> {
    CString::new(s).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))
}

/// The output directory, open before the mounts (see [`crate::output`]).
pub struct PdOut {
    dir: OwnedFd,
    path: String,
}

impl PdOut {
    pub fn open(path: &str) -> Result<PdOut, String> {
        let fail = |e: io::Error| format!("output directory {path}: {e}");
        let c = cstr(path).map_err(fail)?;
        // SAFETY: `c` is a valid NUL-terminated path.
        let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(fail(io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by open() and is owned by nobody else.
        Ok(PdOut { dir: unsafe { OwnedFd::from_raw_fd(fd) }, path: path.to_string() })
    }

    /// Opens `name` in the directory for writing (created, truncated
    /// unless `append`).
    pub fn create(&self, name: &str, append: bool) -> Result<File, String> {
        let fail = |e: io::Error| format!("{}/{name}: {e}", self.path);
        let c = cstr(name).map_err(fail)?;
        let mode = if append { libc::O_APPEND } else { libc::O_TRUNC };
        // SAFETY: `c` is a valid relative path resolved against the open
        // directory; the mode is an ordinary file mode.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC | mode,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(fail(io::Error::last_os_error()));
        }
        // SAFETY: `fd` was just returned by openat() and is owned by nobody else.
        Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    fn write_json_line<T: Serialize>(&self, name: &str, value: &T, append: bool) -> Result<(), String> {
        let mut line = serde_json::to_vec(value).map_err(|e| format!("encoding {name}: {e}"))?;
        line.push(b'\n');
        let mut f = self.create(name, append)?;
        f.write_all(&line).and_then(|()| f.sync_all()).map_err(|e| format!("{}/{name}: {e}", self.path))
    }

    pub fn write_guest(&self, g: &PdGuest) -> Result<(), String> {
        self.write_json_line(GUEST_FILE, g, false)
    }

    pub fn append_outcome(&self, o: &PdOutcome) -> Result<(), String> {
        self.write_json_line(OUTCOMES_FILE, o, true)
    }
}

/// The `tcp_cubic` module parameters and their values, to be restored
/// before each script (they are global, not per namespace).
fn cubic_parameters() -> Vec<(String, String)> {
    let dir = Path::new("/sys/module/tcp_cubic/parameters");
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            if let Ok(v) = std::fs::read_to_string(e.path()) {
                out.push((e.path().display().to_string(), v.trim().to_string()));
            }
        }
    }
    out.sort();
    out
}

fn restore(params: &[(String, String)]) {
    for (path, value) in params {
        let _ = std::fs::write(path, value);
    }
}

/// Runs a program to completion; its stderr on failure.
fn run_tool(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("{}: {} {}", args.join(" "), out.status, String::from_utf8_lossy(&out.stderr).trim()))
    }
}

/// A fresh namespace [`NETNS`] with `lo` up, as `in_netns.sh` makes it.
fn fresh_netns() -> Result<(), String> {
    if Path::new(&crate::netns::path(NETNS)).exists() {
        run_tool(&["ip", "netns", "del", NETNS])?;
    }
    run_tool(&["ip", "netns", "add", NETNS])?;
    run_tool(&["ip", "-netns", NETNS, "link", "set", "lo", "up"])
}

/// Reaps children that are not ours to wait for (orphans of a script's
/// commands, handed to init).
fn reap_orphans() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid with WNOHANG and a valid status pointer.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            break;
        }
    }
}

fn kill_group(pgid: i32) {
    // SAFETY: kill() with a negative pid signals the process group.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
}

/// Runs one script; its stdout and stderr go to `<index>.out/.err`.
pub fn run_script(job: &PdJob, s: &PdScript, out: &PdOut) -> PdOutcome {
    let mut o = PdOutcome { index: s.index, ..PdOutcome::default() };
    let seen = guest_path(&s.path);
    let path = Path::new(&seen);
    let (Some(dir), Some(base)) = (path.parent(), path.file_name()) else {
        o.error = Some(format!("{}: not a file path", s.path));
        return o;
    };
    if let Err(e) = fresh_netns() {
        o.error = Some(format!("namespace set-up: {e}"));
        return o;
    }
    let files = out.create(&format!("{}.out", s.index), false).and_then(|f| {
        let e = out.create(&format!("{}.err", s.index), false)?;
        Ok((f, e))
    });
    let (stdout, stderr) = match files {
        Ok(p) => p,
        Err(e) => {
            o.error = Some(e);
            return o;
        }
    };
    let mut cmd = Command::new("ip");
    cmd.args(["netns", "exec", NETNS, &job.packetdrill])
        .args(&s.args)
        .arg(base)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr);
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let start = clock::now_ns();
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            o.error = Some(format!("cannot start ip netns exec {}: {e}", job.packetdrill));
            return o;
        }
    };
    let pgid = child.id() as i32;
    let limit = job.timeout_secs.saturating_mul(1_000_000_000);
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Some(st),
            Ok(None) => {}
            Err(e) => {
                o.error = Some(format!("waiting for packetdrill: {e}"));
                break None;
            }
        }
        let now = clock::now_ns();
        if now.saturating_sub(start) > limit {
            o.timed_out = true;
            kill_group(pgid);
            break child.wait().ok();
        }
        clock::sleep_until(now + 2_000_000);
    };
    o.virtual_secs = clock::now_ns().saturating_sub(start) as f64 / 1e9;
    // Whatever the script left running (a command's background process).
    kill_group(pgid);
    reap_orphans();
    if let Some(st) = status {
        use std::os::unix::process::ExitStatusExt;
        o.exit_code = st.code();
        o.signal = st.signal();
    }
    let _ = run_tool(&["ip", "netns", "del", NETNS]);
    o
}

/// The whole job, as the guest's init: mounts, then every script, each
/// outcome appended as it ends. Returns the exit status.
pub fn execute(path: &Path, pid1: bool) -> i32 {
    if pid1 {
        crate::init::ensure_path();
    }
    let job = match load(path) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("tcplab-agent: {e}");
            return 2;
        }
    };
    let out = match PdOut::open(&job.out_dir) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tcplab-agent: {e}");
            return 1;
        }
    };
    let mut guest = PdGuest { kernel_release: crate::runner::kernel_release(), error: None };
    if pid1 {
        // The host's /tmp, before tmpfs hides it: scripts may live there.
        let host_tmp = open_path("/tmp");
        if let Err(e) = crate::init::mount_all() {
            guest.error = Some(e);
        } else if let Ok(fd) = host_tmp {
            guest.error = bind_host_tmp(&fd).err();
        }
    }
    if guest.error.is_none() {
        guest.error = prepare().err();
    }
    if let Err(e) = out.write_guest(&guest) {
        eprintln!("tcplab-agent: {e}");
        return 1;
    }
    if let Some(e) = &guest.error {
        eprintln!("tcplab-agent: {e}");
        return 1;
    }
    let cubic = cubic_parameters();
    for s in &job.scripts {
        restore(&cubic);
        let o = run_script(&job, s, &out);
        if let Err(e) = out.append_outcome(&o) {
            eprintln!("tcplab-agent: {e}");
            return 1;
        }
    }
    0
}

/// Where the host's `/tmp` is seen in the guest (which mounts tmpfs on
/// `/tmp` and `/run`): a script at `/tmp/x.pkt` on the host runs from
/// `HOST_TMP/x.pkt`.
pub const HOST_TMP: &str = "/run/tcplab-host-tmp";

/// `path` as the guest sees it: the host's `/tmp/...` under [`HOST_TMP`].
pub fn guest_path(path: &str) -> String {
    match path.strip_prefix("/tmp/") {
        Some(rest) => format!("{HOST_TMP}/{rest}"),
        None => path.to_string(),
    }
}

fn open_path(dir: &str) -> Result<OwnedFd, String> {
    let c = cstr(dir).map_err(|e| format!("{dir}: {e}"))?;
    // SAFETY: `c` is a valid NUL-terminated path.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(format!("{dir}: {}", io::Error::last_os_error()));
    }
    // SAFETY: `fd` was just returned by open() and is owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Bind-mounts the directory `fd` (the host's `/tmp`, opened before the
/// mounts) on [`HOST_TMP`].
fn bind_host_tmp(fd: &OwnedFd) -> Result<(), String> {
    std::fs::create_dir_all(HOST_TMP).map_err(|e| format!("{HOST_TMP}: {e}"))?;
    let src = cstr(&format!("/proc/self/fd/{}", fd.as_raw_fd())).map_err(|e| e.to_string())?;
    let dst = cstr(HOST_TMP).map_err(|e| e.to_string())?;
    // SAFETY: valid NUL-terminated paths; a bind mount takes no type or data.
    let rc = unsafe { libc::mount(src.as_ptr(), dst.as_ptr(), std::ptr::null(), libc::MS_BIND, std::ptr::null()) };
    if rc != 0 {
        return Err(format!("bind-mounting the host's /tmp on {HOST_TMP}: {}", io::Error::last_os_error()));
    }
    Ok(())
}

/// The tun device packetdrill opens, and the timer slack its sleeps
/// inherit.
fn prepare() -> Result<(), String> {
    clock::precise_timers()?;
    if !Path::new("/dev/net/tun").exists() {
        // SAFETY: all pointers are valid NUL-terminated strings.
        let rc = unsafe {
            libc::mount(c"devtmpfs".as_ptr(), c"/dev".as_ptr(), c"devtmpfs".as_ptr(), libc::MS_NOSUID, std::ptr::null())
        };
        if rc != 0 || !Path::new("/dev/net/tun").exists() {
            return Err(format!(
                "no /dev/net/tun in the guest (mount devtmpfs on /dev: {}): the image needs CONFIG_TUN \
                 (rebuild it with `tcplab kernel build`)",
                if rc == 0 { "done".to_string() } else { io::Error::last_os_error().to_string() }
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_of_another_version_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("tcplab-pd-job-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("job.json");
        std::fs::write(&p, r#"{"version": 99}"#).unwrap();
        let e = load(&p).unwrap_err();
        assert!(e.contains("packetdrill job version 99"), "{e}");
        std::fs::write(&p, "{").unwrap();
        assert!(load(&p).unwrap_err().contains("invalid JSON"));
        let job = PdJob {
            version: PD_JOB_VERSION,
            packetdrill: "/x/packetdrill".into(),
            scripts: vec![PdScript { index: 0, path: "/a/b.pkt".into(), args: vec!["--ip_version=ipv4".into()] }],
            timeout_secs: 180,
            out_dir: dir.display().to_string(),
        };
        std::fs::write(&p, serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(load(&p).unwrap(), job);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_hosts_tmp_is_seen_under_host_tmp() {
        assert_eq!(guest_path("/tmp/a/b.pkt"), "/run/tcplab-host-tmp/a/b.pkt");
        assert_eq!(guest_path("/work/tcp/b.pkt"), "/work/tcp/b.pkt");
        assert_eq!(guest_path("/tmpx/b.pkt"), "/tmpx/b.pkt");
    }

    #[test]
    fn outcomes_are_appended_one_line_each() {
        let dir = std::env::temp_dir().join(format!("tcplab-pd-out-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let out = PdOut::open(dir.to_str().unwrap()).unwrap();
        out.write_guest(&PdGuest { kernel_release: "6.12".into(), error: None }).unwrap();
        for i in 0..3 {
            out.append_outcome(&PdOutcome { index: i, exit_code: Some(0), ..Default::default() }).unwrap();
        }
        let text = std::fs::read_to_string(dir.join(OUTCOMES_FILE)).unwrap();
        let v: Vec<PdOutcome> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(v.iter().map(|o| o.index).collect::<Vec<_>>(), vec![0, 1, 2]);
        let _ = std::fs::remove_dir_all(dir);
    }
}
