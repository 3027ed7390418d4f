//! `tcplab-agent guest JOB.json` (the guest's init) and `tcplab-agent run
//! JOB.json` (the same on a host, without mounts or power-off).
//!
//! Exit status of `run`: 0 the job ran and its result has no error; 1 the
//! result carries an error, or could not be written; 2 bad usage or a job
//! file that cannot be used (nothing is written then).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::process::exit;
use tcplab_agent::job::GuestResult;
use tcplab_agent::output::OutDir;
use tcplab_agent::{init, load_job, runner};

const USAGE: &str = "usage: tcplab-agent run JOB.json     run a job here (tests, debugging)
       tcplab-agent guest JOB.json   run a job as the UML guest's init, then power off
       tcplab-agent packetdrill JOB.json   run packetdrill scripts as the guest's init (only there)";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str);
    let guest = mode == Some("guest");
    // Only init may power the machine off: `guest` elsewhere (say by
    // mistake on the host) behaves like `run`.
    let pid1 = (guest || mode == Some("packetdrill")) && init::is_pid1();
    let code = match (mode, args.len()) {
        // Only inside a guest: packetdrill needs root, a tun device and namespaces.
        (Some("packetdrill"), 2) if pid1 => {
            catch_unwind(AssertUnwindSafe(|| tcplab_agent::packetdrill::execute(Path::new(&args[1]), true)))
                .unwrap_or(1)
        }
        (Some("run" | "guest"), 2) => {
            catch_unwind(AssertUnwindSafe(|| execute(Path::new(&args[1]), guest, pid1))).unwrap_or(1)
        }
        (Some("-h" | "--help" | "help"), 1) => {
            println!("{USAGE}");
            0
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    };
    if pid1 {
        init::power_off();
    }
    exit(code)
}

/// Loads and runs the job, writes its result; returns the exit status.
fn execute(path: &Path, guest: bool, pid1: bool) -> i32 {
    if pid1 {
        init::ensure_path();
    } else if guest {
        eprintln!("tcplab-agent: not PID 1: no mounts and no power-off");
    }
    let job = match load_job(path) {
        Ok(j) => j,
        Err(e) => {
            eprintln!("tcplab-agent: {e}");
            return 2;
        }
    };
    // Before the mounts: they may hide out_dir (see output.rs).
    let out = match OutDir::open(&job.out_dir) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tcplab-agent: {e}");
            return 1;
        }
    };
    // Before the mounts too (see capture.rs).
    if let Err(e) = tcplab_agent::capture::preopen(&job) {
        eprintln!("tcplab-agent: {e}");
        return 1;
    }
    let result = catch_unwind(AssertUnwindSafe(|| {
        if pid1 {
            if let Err(e) = init::mount_all() {
                return GuestResult { kernel_release: runner::kernel_release(), error: Some(e), ..Default::default() };
            }
        }
        runner::run(&job)
    }))
    .unwrap_or_else(|p| {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_default();
        GuestResult {
            kernel_release: runner::kernel_release(),
            error: Some(format!("the agent panicked: {msg}")),
            ..Default::default()
        }
    });
    if let Some(e) = &result.error {
        eprintln!("tcplab-agent: {e}");
    }
    match out.write_result(&result) {
        Ok(()) if result.error.is_none() => 0,
        Ok(()) => 1,
        Err(e) => {
            eprintln!("tcplab-agent: cannot write the result: {e}");
            1
        }
    }
}
