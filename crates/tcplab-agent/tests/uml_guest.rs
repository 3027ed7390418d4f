//! The scenario of `common/mod.rs` inside a User-Mode Linux guest, with
//! the agent as the guest's init (`tcplab-agent guest`: mounts, set-up,
//! flows, power-off) in virtual time (`time-travel=inf-cpu`), over the
//! `routed` topology (a–r–b, forwarding), where the RED step marker gets
//! a queue and marks.
//!
//! Runs only when `TCPLAB_UML_LINUX` names a UML kernel binary with
//! hostfs, time travel, veth, htb, fifo and RED built in (as the kernel
//! backend builds them); skipped with a note otherwise. The guest's root is
//! the host's `/` through hostfs, so the agent binary, `ip` and `tc` are
//! the host's.

mod common;

use common::{check, check_red_listing, routed, scenario, summary, Slack, MS};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tcplab_agent::job::{Action, GuestResult, Step};

#[test]
fn scenario_in_a_uml_guest() {
    let Some(linux) = std::env::var_os("TCPLAB_UML_LINUX") else {
        eprintln!("note: uml_guest skipped: set TCPLAB_UML_LINUX to a User-Mode Linux kernel binary");
        return;
    };
    // Not under /tmp: the guest mounts its own tmpfs there, and the tc
    // listing below is written by a set-up step after the mounts.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("uml-guest-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_string_lossy().into_owned();

    let topo = routed("a", "r", "b");
    let mut job = scenario(&topo, &d);
    job.setup.push(Step {
        what: "show red".into(),
        action: Action::Exec {
            argv: vec!["sh".into(), "-c".into(), format!("tc -n r -s -d qdisc show dev ra > {d}/red.txt")],
        },
    });
    std::fs::write(dir.join("job.json"), serde_json::to_string_pretty(&job).unwrap()).unwrap();
    let init = dir.join("init.sh");
    std::fs::write(&init, format!("#!/bin/sh\nexec {} guest {d}/job.json\n", env!("CARGO_BIN_EXE_tcplab-agent")))
        .unwrap();
    std::fs::set_permissions(&init, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();

    let console = std::fs::File::create(dir.join("console.txt")).unwrap();
    let mut child = Command::new(&linux)
        .args(["mem=256M", "rootfstype=hostfs", "rootflags=/", "rw", "time-travel=inf-cpu", "con=null"])
        .arg("con0=null,fd:1")
        .arg(format!("init={}", init.display()))
        .stdin(Stdio::null())
        .stdout(console.try_clone().unwrap())
        .stderr(console)
        .spawn()
        .expect("the UML kernel starts");
    let t = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if t.elapsed() > Duration::from_secs(300) {
            let _ = child.kill();
            panic!("the guest did not power off within 300 s; see {}/console.txt", dir.display());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let console = std::fs::read_to_string(dir.join("console.txt")).unwrap_or_default();
    eprintln!("guest ran {:?} (real), {status}; console tail:", t.elapsed());
    for l in console.lines().rev().take(8).collect::<Vec<_>>().into_iter().rev() {
        eprintln!("  {l}");
    }
    assert!(console.contains("reboot: Power down"), "the agent powered the guest off");

    let r: GuestResult =
        serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).expect("result.json")).unwrap();
    summary(&r);
    assert!(r.kernel_release.starts_with("6."), "{}", r.kernel_release);
    // Virtual time: a sleep to t wakes at t, and work takes no time.
    check(&r, &topo, Slack { grid: MS, start: MS });

    // The RED qdisc as the netlink step made it: Wlog 0, which tc cannot set.
    let show = std::fs::read_to_string(dir.join("red.txt")).unwrap();
    eprintln!("{show}");
    check_red_listing(&show);
    let _ = std::fs::remove_dir_all(dir);
}
