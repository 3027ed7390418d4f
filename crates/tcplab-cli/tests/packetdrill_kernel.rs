//! `tcplab packetdrill --backend linux|both`: Linux's own packetdrill in a
//! User-Mode Linux guest against the kernel image, end to end.
//!
//! The kernel runs need a kernel image (`tcplab kernel build`), the guest
//! agent beside the binary, and Linux's scripts with packetdrill's sources
//! in `../shared/conformance/packetdrill`. Without them each such test
//! prints "SKIPPED" — unless `TCPLAB_KERNEL_TESTS=1` (as CI sets it after
//! building the kernel), which turns a missing image into a failure. The
//! usage errors at the end need none of it.

mod common;
use common::*;
use std::path::Path;

/// Whether the kernel tests can run here; panics when they must.
fn kernel_available() -> bool {
    let required = std::env::var("TCPLAB_KERNEL_TESTS").is_ok_and(|v| v == "1");
    let list = tcplab(&["kernel", "list", "--json"]);
    let has_image = list.status.success() && stdout(&list).trim() != "[]";
    let agent = Path::new(env!("CARGO_BIN_EXE_tcplab")).with_file_name("tcplab-agent").is_file();
    let suite = Path::new(&tcp_dir()).is_dir();
    if has_image && agent && suite {
        return true;
    }
    let why = if !has_image {
        "no kernel image (tcplab kernel build)"
    } else if !agent {
        "the guest agent is not built"
    } else {
        "no packetdrill scripts in ../shared/conformance/packetdrill"
    };
    assert!(!required, "TCPLAB_KERNEL_TESTS=1 but {why}");
    println!("SKIPPED: {why}");
    false
}

/// Linux's TCP scripts.
fn tcp_dir() -> String {
    repo("../shared/conformance/packetdrill/gtests/net/tcp")
}

fn script(rel: &str) -> String {
    format!("{}/{rel}", tcp_dir())
}

fn json_lines(o: &std::process::Output) -> Vec<serde_json::Value> {
    stdout(o).lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
}

/// The script records of a `--json` run, by file name.
fn by_name(lines: &[serde_json::Value]) -> std::collections::BTreeMap<String, serde_json::Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "script")
        .map(|l| {
            let path = l["data"]["path"].as_str().unwrap().to_string();
            let name = path.rsplit('/').next().unwrap().to_string();
            (name, l["data"].clone())
        })
        .collect()
}

#[test]
fn test_kernel_packetdrill_passes_fails_and_skips_as_linux_does() {
    if !kernel_available() {
        return;
    }
    let o = tcplab(&[
        "packetdrill",
        "--backend",
        "linux",
        "--json",
        &script("slow_start/slow-start-ack-per-1pkt.pkt"),
        &script("fast_recovery/prr-ss-10pkt-lost-1.pkt"),
        &script("cubic/cubic-bulk-166k.pkt"),
        &script("mtu_probe/basic-v6.pkt"),
    ]);
    // A script failed (the CUBIC one fails on Linux too): exit 1.
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let lines = json_lines(&o);
    assert_eq!(lines[0]["type"], "backend");
    assert!(lines[0]["data"]["backend"].as_str().unwrap().starts_with("linux-6.12"), "{}", lines[0]);
    let s = by_name(&lines);
    assert_eq!(s["slow-start-ack-per-1pkt.pkt"]["outcome"], "pass", "{}", s["slow-start-ack-per-1pkt.pkt"]);
    assert_eq!(s["prr-ss-10pkt-lost-1.pkt"]["outcome"], "pass", "{}", s["prr-ss-10pkt-lost-1.pkt"]);
    // As LINUX-6.18-RESULTS.tsv has it: the Python block's assertion at
    // line 53 (`AssertionError: 36`), worded as packetdrill words it.
    let cubic = &s["cubic-bulk-166k.pkt"];
    assert_eq!(cubic["outcome"], "fail", "{cubic}");
    assert_eq!(cubic["line"], 53, "{cubic}");
    assert!(cubic["message"].as_str().unwrap().contains("AssertionError"), "{cubic}");
    assert_eq!(s["basic-v6.pkt"]["outcome"], "skip");
    assert!(s["basic-v6.pkt"]["reason"].as_str().unwrap().contains("IPv6"));
    let sum = lines.last().unwrap();
    assert_eq!(sum["data"]["total"], 4);
    assert_eq!(sum["data"]["passed"], 2);
}

#[test]
fn test_kernel_packetdrill_runs_a_script_of_ones_own_and_names_its_failing_line() {
    if !kernel_available() {
        return;
    }
    // Under the host's /tmp, which the guest reaches through a bind mount.
    let d = Scratch::new("packetdrill-kernel-own");
    let ok = d.path("ok.pkt");
    let bad = d.path("bad.pkt");
    std::fs::write(&ok, "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 0x2\n+0 close(3) = 0\n")
        .unwrap();
    std::fs::write(&bad, "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 fcntl(3, F_GETFL) = 7\n").unwrap();
    let sources = repo("../shared/conformance/packetdrill/gtests/net/packetdrill");
    let o = tcplab(&["packetdrill", "--backend", "both", "--packetdrill", &sources, &ok, &bad]);
    assert_eq!(o.status.code(), Some(1), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("LINUX  MODEL  SCRIPT\n"), "{out}");
    assert!(out.contains(&format!("PASS   PASS   {ok}\n")), "{out}");
    // Both fail at line 2; packetdrill's own words on the Linux side.
    assert!(out.contains(&format!("FAIL   FAIL   {bad}\n")), "{out}");
    assert!(out.contains("2 scripts: linux-6.12"), "{out}");
    assert!(out.contains("2 the same, 0 different"), "{out}");
    let j = tcplab(&["packetdrill", "--backend", "linux", "--json", "--packetdrill", &sources, &bad]);
    let lines = json_lines(&j);
    let rec = &by_name(&lines)["bad.pkt"];
    assert_eq!(rec["line"], 2, "{rec}");
    assert!(rec["message"].as_str().unwrap().contains("Expected result 7 but got"), "{rec}");
}

#[test]
fn test_packetdrill_backend_usage_errors() {
    let d = Scratch::new("packetdrill-kernel-usage");
    let ok = d.path("ok.pkt");
    std::fs::write(&ok, "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n").unwrap();
    assert_error(&tcplab(&["packetdrill", "--backend", "bsd", &ok]), &["--backend", "\"bsd\""]);
    assert_error(&tcplab(&["packetdrill", "--hz", "250", "--hz", "1000", &ok]), &["--hz", "--markdown"]);
    assert_error(&tcplab(&["packetdrill", "--hz", "999", &ok]), &["--hz", "999"]);
    assert_error(&tcplab(&["packetdrill", "--max-wall", "0", &ok]), &["--max-wall"]);
    assert_error(
        &tcplab(&["packetdrill", "--tun-addresses", "ipv6", &ok]),
        &["--tun-addresses", "auto or packetdrill"],
    );
    assert_error(&tcplab(&["packetdrill", "--backend", "linux", "--kernel", "no-such-image", &ok]), &["--kernel"]);
    assert_error(&tcplab(&["packetdrill", "--kernel", "x", &ok]), &["--kernel", "--backend linux"]);
    assert_error(&tcplab(&["packetdrill", "--packetdrill", "/x", &ok]), &["--packetdrill", "--backend linux"]);
    assert_error(
        &tcplab(&["packetdrill", "--backend", "linux", "--json", "--markdown", &ok]),
        &["--json", "--markdown"],
    );
}
