//! Booting one guest for one run.
//!
//! The guest is the image's `linux` binary run as an ordinary process:
//! `time-travel=inf-cpu` makes its clock virtual (it advances only while
//! the guest is idle, so a run's virtual seconds do not depend on the
//! host's speed or load), the host's `/` is its root file system through
//! hostfs, and PID 1 is a two-line shell script that execs the agent. The
//! guest has no network device attached to the host: its command line
//! names none (`eth0=...` would), so no packet can leave it.
//!
//! Each run gets a private temporary directory for the job, the init
//! script, the agent's result and the console log; it is removed
//! afterwards. A run that does not finish within its wall-clock limit is
//! killed with its whole process group and reported.

use crate::error::{KernelError, Result};
use crate::image::Image;
use crate::translate::Plan;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcplab_agent::job::GuestResult;

/// How to boot guests.
#[derive(Clone, Debug)]
pub struct GuestConfig {
    pub image: Image,
    /// The agent binary (`tcplab-agent`), visible to the guest through
    /// hostfs at the same path.
    pub agent: PathBuf,
    /// Guest memory, MB.
    pub mem_mb: u32,
    /// Wall-clock limit of one run.
    pub wall_limit: Duration,
    /// Keep each run's temporary directory (for debugging).
    pub keep: bool,
}

/// What a guest run returns besides the agent's result.
#[derive(Debug)]
pub struct GuestRun {
    pub result: GuestResult,
    /// Wall time of the boot-to-poweroff.
    pub wall: Duration,
}

/// Runs `plan` in a fresh guest.
pub fn run(gc: &GuestConfig, plan: &Plan) -> Result<GuestRun> {
    let dir = TempDir::new()?;
    // `TCPLAB_KEEP_GUEST=1` keeps every run's directory, failed or not
    // (job, init script, console log): for debugging a guest.
    if std::env::var_os("TCPLAB_KEEP_GUEST").is_some_and(|v| !v.is_empty()) {
        dir.keep();
    }
    let mut job = plan.job.clone();
    job.out_dir = dir.path().to_string_lossy().into_owned();
    let job_path = dir.path().join("job.json");
    let text = serde_json::to_string(&job).map_err(|e| KernelError::new(format!("internal: job encoding: {e}")))?;
    std::fs::write(&job_path, text).map_err(|e| io_err(&job_path, e))?;
    let init = dir.path().join("init");
    let mut script = String::from("#!/bin/sh\n");
    // What the image's series needs in the guest's environment (series.rs).
    for (k, v) in gc.image.series()?.guest_env {
        script.push_str(&format!("export {k}='{v}'\n"));
    }
    script.push_str(&format!("exec {} guest {}\n", shell_quote(&gc.agent), shell_quote(&job_path)));
    std::fs::write(&init, script).map_err(|e| io_err(&init, e))?;
    set_executable(&init)?;
    let console = dir.path().join("console.log");
    let log = std::fs::File::create(&console).map_err(|e| io_err(&console, e))?;
    let log2 = log.try_clone().map_err(|e| io_err(&console, e))?;

    let mut cmd = Command::new(&gc.image.binary);
    cmd.arg(format!("mem={}M", gc.mem_mb))
        .args(["rootfstype=hostfs", "rootflags=/", "rw"])
        .arg(format!("init={}", init.display()))
        .args(["time-travel=inf-cpu", "con=null", "con0=fd:0,fd:1", "quiet"])
        .args(&plan.cmdline)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log2);
    {
        use std::os::unix::process::CommandExt;
        // Its own process group: UML forks helpers, and a timeout must
        // kill them all.
        cmd.process_group(0);
    }
    let started = Instant::now();
    let mut child = cmd
        .spawn()
        .map_err(|e| KernelError::new(format!("cannot start the guest {}: {e}", gc.image.binary.display())))?;
    let pgid = child.id() as i32;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) => {}
            Err(e) => return Err(KernelError::new(format!("waiting for the guest: {e}"))),
        }
        if started.elapsed() > gc.wall_limit {
            kill_group(pgid);
            let _ = child.wait();
            return Err(KernelError::new(format!(
                "the guest ran longer than its wall-clock limit of {} s and was killed (raise it with --max-wall); console:\n{}",
                gc.wall_limit.as_secs(),
                console_tail(&console)
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // Helpers that outlived the kernel process.
    kill_group(pgid);
    let wall = started.elapsed();
    let result_path = dir.path().join("result.json");
    let text = std::fs::read_to_string(&result_path).map_err(|_| {
        KernelError::new(format!("the guest ended ({status}) without a result; console:\n{}", console_tail(&console)))
    })?;
    let result: GuestResult =
        serde_json::from_str(&text).map_err(|e| KernelError::new(format!("the guest's result is not valid: {e}")))?;
    if let Some(e) = &result.error {
        return Err(KernelError::new(format!("in the guest: {e}")));
    }
    if gc.keep {
        dir.keep();
    }
    Ok(GuestRun { result, wall })
}

fn kill_group(pgid: i32) {
    // `kill -KILL -PGID`: the standard tool, no libc binding needed.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn console_tail(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', "'\\''"))
}

fn set_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).map_err(|e| io_err(p, e))
}

fn io_err(p: &Path, e: std::io::Error) -> KernelError {
    KernelError::new(format!("{}: {e}", p.display()))
}

/// A temporary directory removed on drop (unless kept).
struct TempDir {
    path: PathBuf,
    keep: std::cell::Cell<bool>,
}

impl TempDir {
    fn new() -> Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("tcplab-guest-{}-{n}", std::process::id()));
            if std::fs::create_dir(&path).is_ok() {
                return Ok(TempDir { path, keep: std::cell::Cell::new(false) });
            }
        }
        Err(KernelError::new(format!("cannot create a temporary directory in {}", base.display())))
    }

    fn path(&self) -> &Path {
        &self.path
    }

    fn keep(&self) {
        self.keep.set(true);
        eprintln!("tcplab: kept the guest's files in {}", self.path.display());
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.keep.get() {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}
