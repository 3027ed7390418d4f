//! The agent on the host, in real time (`tcplab-agent run`), on the
//! scenario of `common/mod.rs` over its `direct` topology (two namespaces,
//! a veth pair): bulk, RPC and repeated flows through a 10 Mbit/s htb
//! shaper with a bfifo leaf, traces, counters and link statistics, plus
//! the step-marking RED qdisc made by netlink when the host kernel has RED
//! (its parameters checked with `tc`; else the step's refusal is checked).
//!
//! Needs root and iproute2 (`ip`, `tc`); skipped with a note otherwise.
//! The namespaces are deleted by a guard whatever happens.

mod common;

use common::{check, check_red_listing, direct, scenario, summary, Slack, MS};
use std::path::{Path, PathBuf};
use std::process::Command;
use tcplab_agent::job::{GuestResult, Job, JOB_VERSION};

/// Whether the test can run here; prints why not.
fn can_run() -> bool {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        eprintln!("note: host_netns skipped: not root");
        return false;
    }
    for prog in ["ip", "tc"] {
        if Command::new(prog).arg("-V").output().map_or(true, |o| !o.status.success()) {
            eprintln!("note: host_netns skipped: {prog} not available");
            return false;
        }
    }
    true
}

/// Deletes the namespaces it names when dropped.
struct NetnsGuard(Vec<String>);

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

fn sh(argv: &[&str]) -> (bool, String) {
    match Command::new(argv[0]).args(&argv[1..]).output() {
        Ok(o) => (
            o.status.success(),
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        ),
        Err(e) => (false, e.to_string()),
    }
}

/// Whether the host kernel has RED (CI hosts may lack
/// `CONFIG_NET_SCH_RED`; the UML guest kernel has it): try `tc` in a
/// scratch namespace.
fn kernel_has_red(ns: &str) -> bool {
    let _g = NetnsGuard(vec![ns.into()]);
    sh(&["ip", "netns", "add", ns]).0
        && sh(&["ip", "-n", ns, "link", "add", "r0", "type", "veth", "peer", "name", "r1"]).0
        && sh(&[
            "tc",
            "-n",
            ns,
            "qdisc",
            "add",
            "dev",
            "r0",
            "root",
            "red",
            "limit",
            "100000",
            "min",
            "30000",
            "max",
            "30001",
            "avpkt",
            "1000",
            "burst",
            "31",
            "probability",
            "1",
        ])
        .0
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcplab-agent-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `tcplab-agent run` on `job`; returns the exit status and result.
fn run_agent(job: &Job, dir: &Path) -> (Option<i32>, GuestResult) {
    let p = dir.join("job.json");
    std::fs::write(&p, serde_json::to_string_pretty(job).unwrap()).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_tcplab-agent")).arg("run").arg(&p).output().unwrap();
    eprintln!("agent stderr: {}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("result.json")).expect("result.json written");
    (o.status.code(), serde_json::from_str(&text).unwrap())
}

#[test]
fn scenario_on_the_host_in_namespaces() {
    if !can_run() {
        return;
    }
    let pid = std::process::id();
    let (a, b) = (format!("tla{pid}"), format!("tlb{pid}"));
    let _guard = NetnsGuard(vec![a.clone(), b.clone()]);
    let red = kernel_has_red(&format!("tlp{pid}"));
    if !red {
        eprintln!("note: the host kernel has no RED qdisc: the RED step is checked for its error message only");
    }
    let dir = scratch("netns");
    let t = direct(&a, &b, red);
    let (code, r) = run_agent(&scenario(&t, &dir.to_string_lossy()), &dir);
    summary(&r);
    check(&r, &t, Slack { grid: 20 * MS, start: 30 * MS });
    assert_eq!(code, Some(0));

    // The sysctl step ran inside namespace a.
    let (ok, ecn) = sh(&["ip", "netns", "exec", &a, "cat", "/proc/sys/net/ipv4/tcp_ecn"]);
    assert!(ok && ecn.trim() == "1", "{ecn}");

    if red {
        let (ok, show) = sh(&["tc", "-n", &b, "-s", "-d", "qdisc", "show", "dev", "v1"]);
        eprintln!("{show}");
        assert!(ok);
        check_red_listing(&show);
    } else {
        red_step_refused_cleanly(&a, &b, &dir);
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Without RED in the kernel the step fails with the kernel's own reason,
/// in the documented format (on b's v1, still without a qdisc).
fn red_step_refused_cleanly(a: &str, b: &str, dir: &Path) {
    let mut setup = direct(a, b, true).setup;
    setup.drain(..setup.len() - 3); // b's shaper (two steps) and the marker
    let job = Job {
        version: JOB_VERSION,
        setup,
        duration_ns: 0,
        trace_interval_ns: None,
        flows: vec![],
        counter_namespaces: vec![],
        link_probes: vec![],
        loss_probes: vec![],
        netem_timelines: vec![],
        // On the host: no tick alignment (the host's HZ is not the image's).
        hz: 0,
        capture: None,
        out_dir: dir.to_string_lossy().into_owned(),
    };
    let (code, r) = run_agent(&job, dir);
    assert_eq!(code, Some(1));
    assert_eq!(
        r.error.unwrap(),
        format!(
            "set-up step 2 (marker {b}:v1): red step qdisc in {b}: dev v1 parent 1:1 handle 20: limit 200000b \
             threshold 30000b: No such file or directory (os error 2): Specified qdisc kind is unknown"
        )
    );
}
