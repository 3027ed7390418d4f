//! The experiment commands of the `tcplab` binary: compare, reproduce,
//! sweep and merge, plots, pcap and reports, and their errors. Scenarios
//! are shortened with `--set run.duration=...` to keep the suite fast.

mod common;

use common::*;
use std::path::Path;
use std::process::Output;

/// A short CUBIC run with jitter on the bottleneck, so that seeds differ.
const SHORT: &[&str] = &[
    "--set",
    "run.duration=2s",
    "--set",
    "link.bottleneck.delay={ model = \"ordered-jitter\", base = \"9ms\", jitter = \"2ms\" }",
];

fn compare(extra: &[&str]) -> Output {
    let file = repo("scenarios/bulk-cubic.toml");
    let mut a = vec!["compare", file.as_str(), "--a", "flow.f1.cc=reno", "--b", "flow.f1.cc=cubic"];
    a.extend_from_slice(SHORT);
    a.extend_from_slice(extra);
    tcplab(&a)
}

fn json(o: &Output) -> serde_json::Value {
    assert_ok(o);
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

fn without_wall(mut v: serde_json::Value) -> serde_json::Value {
    v.as_object_mut().unwrap().remove("wall_s");
    v
}

// ---- compare -------------------------------------------------------------------

#[test]
fn test_compare_json_same_with_jobs_1_and_2() {
    let args = ["--runs", "4", "--metric", "goodput,TcpRetransSegs", "--json"];
    let one = compare(&[&args[..], &["--jobs", "1"]].concat());
    let two = compare(&[&args[..], &["--jobs", "2"]].concat());
    let (j1, j2) = (json(&one), json(&two));
    assert!(stderr(&one).is_empty(), "no progress bar in JSON mode: {}", stderr(&one));
    assert_eq!(without_wall(j1.clone()), without_wall(j2));
    // The shape of the issue: arms[{name, settings, runs[{seed, metrics}], summary}], ratio_of_medians.
    let arms = j1["arms"].as_array().unwrap();
    assert_eq!(arms.len(), 2);
    assert_eq!(arms[0]["name"], "a");
    assert_eq!(arms[0]["settings"]["flow.f1.cc"], "reno");
    assert_eq!(arms[1]["settings"]["flow.f1.cc"], "cubic");
    let runs = arms[0]["runs"].as_array().unwrap();
    assert_eq!(runs.iter().map(|r| r["seed"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert!(runs[0]["metrics"]["goodput"].as_f64().unwrap() > 1e6);
    let s = &arms[1]["summary"]["goodput"];
    for k in ["min", "median", "mean", "max"] {
        assert!(s[k].as_f64().is_some(), "{k}");
    }
    let ci = s["ci95"].as_array().unwrap();
    assert!(ci[0].as_f64().unwrap() <= s["median"].as_f64().unwrap());
    assert!(ci[1].as_f64().unwrap() >= s["median"].as_f64().unwrap());
    let ratio = j1["ratio_of_medians"]["goodput"].as_f64().unwrap();
    let expect = s["median"].as_f64().unwrap() / arms[0]["summary"]["goodput"]["median"].as_f64().unwrap();
    assert!((ratio - expect).abs() < 1e-12);
    assert_eq!(j1["metrics"]["goodput"]["unit"], "bit/s");
    assert_eq!(j1["set"]["run.duration"], "2s");
}

#[test]
fn test_compare_table_shows_every_run_and_the_ratio() {
    let o = compare(&["--runs", "3", "--name-a", "reno", "--name-b", "cubic", "--jobs", "2"]);
    assert_ok(&o);
    let t = stdout(&o);
    for needle in [
        "compare ",
        "3 runs per arm (seeds 1 to 3)",
        "goodput of all flows (Mbit/s)",
        "95% CI of median",
        "ratio of medians cubic/reno:",
        "every run, by seed (Mbit/s):",
    ] {
        assert!(t.contains(needle), "{needle:?} not in\n{t}");
    }
    let reno_runs = t.lines().filter(|l| l.starts_with("  reno ")).count();
    assert_eq!(reno_runs, 2, "the settings line and the runs line:\n{t}");
}

#[test]
fn test_compare_notes_identical_runs_of_a_fixed_delay_scenario() {
    let file = repo("scenarios/bulk-cubic.toml");
    let o = tcplab(&["compare", &file, "--a", "flow.f1.cc=reno", "--runs", "2", "--set", "run.duration=1s"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("note: every run of each arm gave the same values"), "{}", stdout(&o));
}

#[test]
fn test_compare_plots_and_report() {
    let dir = Scratch::new("plots");
    let plots = dir.path("plots/sub");
    let report = dir.path("out/report.html");
    let file = repo("scenarios/two-flows.toml");
    let o = tcplab(&[
        "compare",
        &file,
        "--a",
        "flow.*.cc=reno",
        "--b",
        "flow.*.cc=cubic",
        "--name-a",
        "reno",
        "--name-b",
        "cubic",
        "--runs",
        "2",
        "--set",
        "run.duration=2s",
        "--set",
        "run.goodput_window=1s",
        "--plot",
        &plots,
        "--report",
        &report,
    ]);
    assert_ok(&o);
    for stem in ["dist-goodput", "reno-seed1-cwnd-f1", "reno-seed1-cwnd-f2", "cubic-seed1-goodput"] {
        let png = std::fs::read(format!("{plots}/{stem}.png")).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "{stem}.png");
        let svg = std::fs::read_to_string(format!("{plots}/{stem}.svg")).unwrap();
        assert!(svg.starts_with("<svg"), "{stem}.svg");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    for arm in ["reno", "cubic"] {
        assert!(html.contains(&format!("<td>{arm}</td>")), "arm {arm} in the report");
    }
    assert!(html.contains("<svg") && html.contains("goodput of all flows"));
    for fetch in ["<script", "<link", "<img", "src=", "@import", "url("] {
        assert!(!html.contains(fetch), "{fetch} in a self-contained report");
    }
}

/// An RPC flow next to a bulk flow: RPC latency percentiles and CDFs.
const RPC_SCENARIO: &str = r#"
[run]
duration = "1s"
[[node]]
name = "h1"
[[node]]
name = "sw"
kind = "switch"
[[node]]
name = "h2"
[[link]]
name = "access"
a = "h1"
b = "sw"
rate = "10Gbit"
delay = "5us"
[[link]]
name = "bottleneck"
a = "sw"
b = "h2"
rate = "1Gbit"
delay = "50us"
queue = { limit = "200p", ecn_threshold = "20p" }
[[flow]]
id = "bulk"
from = "h1"
to = "h2"
[[flow]]
id = "rpc"
from = "h1"
to = "h2"
app = { kind = "rpc", request = "100B", response = "10KB" }
"#;

#[test]
fn test_compare_rpc_latency_percentiles_and_cdf() {
    let dir = Scratch::new("rpc");
    let file = dir.path("rpc.toml");
    std::fs::write(&file, RPC_SCENARIO).unwrap();
    let plots = dir.path("plots");
    let o = tcplab(&[
        "compare",
        &file,
        "--a",
        "flow.*.cc=cubic",
        "--b",
        "flow.*.cc=dctcp,tcp.tcp_ecn=1",
        "--runs",
        "2",
        "--metric",
        "rpc.p50,rpc.p99,rpc.rpc.p99.9",
        "--plot",
        &plots,
        "--json",
    ]);
    let j = json(&o);
    for m in ["rpc.p50", "rpc.p99", "rpc.rpc.p99.9"] {
        assert_eq!(j["metrics"][m]["unit"], "us");
        let v = j["arms"][0]["runs"][0]["metrics"][m].as_f64().unwrap();
        assert!(v > 100.0 && v < 1e6, "{m} = {v} µs");
    }
    let a = &j["arms"][1]["runs"][0]["metrics"];
    assert!(a["rpc.p50"].as_f64() <= a["rpc.p99"].as_f64());
    assert!(Path::new(&plots).join("rpc-cdf-rpc.png").exists());
    // The bulk flow is not an RPC flow.
    let o = tcplab(&["compare", &file, "--a", "flow.*.cc=reno", "--runs", "1", "--metric", "rpc.bulk.p99"]);
    assert_error(&o, &["--metric rpc.bulk.p99", "\"bulk\" is not an RPC flow"]);
}

/// `samples = N` puts the first N latencies in `run --json`, in
/// completion order: as many as completed (up to N), each within the
/// flow's min and max; without it the field is absent.
#[test]
fn test_run_json_lists_the_kept_rpc_latencies() {
    let dir = Scratch::new("rpc-samples");
    let file = dir.path("rpc.toml");
    std::fs::write(&file, RPC_SCENARIO).unwrap();
    let run = |extra: &[&str]| {
        let mut a = vec!["run", file.as_str(), "--set", "run.duration=200ms", "--json"];
        a.extend_from_slice(extra);
        let j = json(&tcplab(&a));
        j["flows"].as_array().unwrap().iter().find(|f| f["id"] == "rpc").unwrap()["rpc"].clone()
    };
    let plain = run(&[]);
    assert!(plain.get("samples_us").is_none(), "{plain}");
    let app = r#"flow.rpc.app={ kind = "rpc", request = "100B", response = "10KB", samples = 5 }"#;
    let r = run(&["--set", app]);
    let samples: Vec<f64> = r["samples_us"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let count = r["count"].as_u64().unwrap();
    assert!(count > 5, "{r}");
    assert_eq!(samples.len(), 5, "{r}");
    let (min, max) = (r["min_us"].as_f64().unwrap(), r["max_us"].as_f64().unwrap());
    assert!(samples.iter().all(|&v| v >= min && v <= max), "{r}");
    assert_eq!(r["count"], plain["count"], "keeping samples changes nothing else");
}

// ---- bad input -------------------------------------------------------------------

#[test]
fn test_bad_input_exits_2_and_leaves_no_files() {
    let dir = Scratch::new("bad");
    let plots = dir.path("never/plots");
    let report = dir.path("never2/report.html");
    let outs = ["--plot", plots.as_str(), "--report", report.as_str()];
    let file = repo("scenarios/bulk-cubic.toml");
    let run = |arms: &[&str], extra: &[&str]| {
        let mut a = vec!["compare", file.as_str()];
        a.extend_from_slice(arms);
        a.extend_from_slice(&["--set", "run.duration=1s"]);
        a.extend_from_slice(extra);
        a.extend_from_slice(&outs);
        tcplab(&a)
    };
    assert_error(
        &run(&["--a", "flow.f1.tcp.tcp_reorderin=10"], &[]),
        &["--a flow.f1.tcp.tcp_reorderin=10: flow[0].tcp.tcp_reorderin: unknown", "tcp_reordering"],
    );
    assert_error(
        &run(&["--a", "flow.f1.cc=reno", "--b", "flow.f9.cc=reno"], &[]),
        &["--b flow.f9.cc=reno", "no flow named \"f9\""],
    );
    assert_error(&run(&["--a", "flow.f1.cc=cubik"], &[]), &["--a flow.f1.cc=cubik", "unknown congestion control"]);
    assert_error(&run(&["--a", "flow.f1.cc"], &[]), &["--a flow.f1.cc", "is not KEY=VALUE"]);
    assert_error(
        &run(&["--a", "flow.f1.cc=reno"], &["--metric", "goodptu"]),
        &["--metric goodptu: unknown metric", "did you mean \"goodput\""],
    );
    assert_error(
        &run(&["--a", "flow.f1.cc=reno"], &["--metric", "rpc.p99.9"]),
        &["--metric rpc.p99.9", "has no RPC flows"],
    );
    assert_error(&run(&["--a", "flow.f1.cc=reno"], &["--runs", "0"]), &["--runs 0: need at least one run"]);
    assert_error(&run(&["--a", "flow.f1.cc=reno"], &["--jobs", "0"]), &["--jobs 0"]);
    assert_error(&run(&[], &[]), &["--a and/or --b"]);
    assert!(!dir.0.join("never").exists() && !dir.0.join("never2").exists(), "no output created for bad input");
    // Unwritable outputs: a path below a regular file.
    let blocker = dir.path("file");
    std::fs::write(&blocker, b"x").unwrap();
    let o = tcplab(&["compare", &file, "--a", "flow.f1.cc=reno", "--runs", "1", "--plot", &format!("{blocker}/plots")]);
    assert_error(&o, &[&format!("--plot {blocker}/plots"), "cannot create directory"]);
    let o = tcplab(&[
        "compare",
        &file,
        "--a",
        "flow.f1.cc=reno",
        "--runs",
        "1",
        "--plot",
        &plots,
        "--report",
        &format!("{blocker}/r.html"),
    ]);
    assert_error(&o, &[&format!("--report {blocker}/r.html")]);
    assert!(!dir.0.join("never").exists(), "the plot directory made for the failed command is removed");
    let o = tcplab(&["run", &file, "--set", "run.duration=1s", "--pcap", &format!("{blocker}/p")]);
    assert_error(&o, &[&format!("--pcap {blocker}/p")]);
    // Sweep: unknown knob in --vary, empty value, bad shard.
    let o = tcplab(&["sweep", &file, "--vary", "tcp.tcp_nosuch=1,2", "--runs", "1"]);
    assert_error(&o, &["--vary tcp.tcp_nosuch=1", "unknown"]);
    let o = tcplab(&["sweep", &file, "--vary", "tcp.tcp_reordering=3,,5", "--runs", "1"]);
    assert_error(&o, &["--vary tcp.tcp_reordering=3,,5"]);
    let o = tcplab(&["sweep", &file, "--vary", "tcp.tcp_reordering=3", "--runs", "0"]);
    assert_error(&o, &["--runs 0"]);
    let o = tcplab(&["sweep", &file, "--vary", "tcp.tcp_reordering=3", "--shard", "3/2", "--json"]);
    assert_error(&o, &["--shard 3/2"]);
    let o = tcplab(&["sweep", &file, "--vary", "tcp.tcp_reordering=3", "--shard", "1/2"]);
    assert_error(&o, &["--shard", "add --json"]);
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, ["file"], "nothing but the blocker");
}

// ---- reproduce --------------------------------------------------------------------

#[test]
fn test_reproduce_unknown_name_lists_the_registry() {
    let o = tcplab(&["reproduce", "nosuch"]);
    assert_error(&o, &["reproduce nosuch", "known: all, reordering, dctcp-rpc, hystart"]);
}

#[test]
fn test_reproduce_reordering_prints_patch_and_tcplab() {
    // Short runs: the machinery, not the result, is under test here.
    let o = tcplab(&["reproduce", "reordering", "--runs", "2"]);
    assert_ok(&o);
    let out = stdout(&o);
    for needle in [
        "== reordering: tcp: increase throughput when reordering is high",
        "The patch reported:",
        "check: median of v3.12 / median of v3.11 of goodput",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

// ---- sweep and merge -----------------------------------------------------------------

fn sweep(extra: &[&str]) -> Output {
    let file = repo("scenarios/bulk-cubic.toml");
    let mut a = vec![
        "sweep",
        file.as_str(),
        "--vary",
        "link.bottleneck.rate=20Mbit,50Mbit",
        "--vary",
        "flow.f1.cc=reno,cubic",
        "--runs",
        "3",
        "--metric",
        "goodput,TcpRetransSegs",
    ];
    a.extend_from_slice(SHORT);
    a.extend_from_slice(extra);
    tcplab(&a)
}

#[test]
fn test_sharded_sweep_merged_equals_unsharded() {
    let dir = Scratch::new("sweep");
    let whole = sweep(&["--json"]);
    assert_ok(&whole);
    let j = json(&whole);
    assert_eq!(j["points"].as_array().unwrap().len(), 4);
    assert_eq!(j["points"][1]["settings"]["flow.f1.cc"], "cubic");
    assert_eq!(j["points"][1]["settings"]["link.bottleneck.rate"], "20Mbit");
    let run = &j["points"][0]["runs"][0];
    assert_eq!(run["seed"], 1);
    assert!(run["scenario_hash"].as_str().unwrap().starts_with("fnv1a64:"));
    assert_eq!(run["tcplab_version"], env!("CARGO_PKG_VERSION"));
    assert_ne!(j["points"][0]["scenario_hash"], j["points"][1]["scenario_hash"]);
    let mut files = Vec::new();
    for k in 1..=3 {
        let o = sweep(&["--json", "--shard", &format!("{k}/3"), "--jobs", "1"]);
        assert_ok(&o);
        let f = dir.path(&format!("shard{k}.json"));
        std::fs::write(&f, o.stdout).unwrap();
        files.push(f);
    }
    let shard1 = json(&tcplab(&["merge", &files[0], "--json", "--partial"]));
    let n1: usize = shard1["points"].as_array().unwrap().iter().map(|p| p["runs"].as_array().unwrap().len()).sum();
    assert_eq!(n1, 4, "12 jobs round robin over 3 shards");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    let merged = tcplab(&[&args[..], &["--json"]].concat());
    assert_ok(&merged);
    assert_eq!(stdout(&merged), stdout(&whole), "merged JSON is byte-identical");
    assert_eq!(stdout(&tcplab(&[&args[..], &["--csv"]].concat())), stdout(&sweep(&["--csv"])));
    assert_eq!(stdout(&tcplab(&args)), stdout(&sweep(&[])));
    // A missing shard: an error, or with --partial a merge with a warning.
    assert_error(&tcplab(&["merge", &files[0], &files[1]]), &["runs missing"]);
    let o = tcplab(&["merge", &files[0], &files[1], "--partial"]);
    assert_ok(&o);
    assert!(stderr(&o).contains("runs missing"), "{}", stderr(&o));
    // Not shards of the same sweep.
    let other = sweep(&["--json", "--shard", "1/3", "--set", "run.duration=1s"]);
    let f = dir.path("other.json");
    std::fs::write(&f, other.stdout).unwrap();
    assert_error(&tcplab(&["merge", &files[0], &f]), &["not a shard of the same sweep"]);
    let bad = dir.path("bad.json");
    std::fs::write(&bad, "{}").unwrap();
    assert_error(&tcplab(&["merge", &bad]), &["not a tcplab sweep JSON file"]);
}

#[test]
fn test_sweep_table_and_csv() {
    let o = sweep(&[]);
    assert_ok(&o);
    let t = stdout(&o);
    assert!(t.contains("4 points x 3 runs"), "{t}");
    assert!(t.contains("link.bottleneck.rate  flow.f1.cc"), "{t}");
    let csv = stdout(&sweep(&["--csv"]));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 5);
    assert!(
        lines[0].starts_with("link.bottleneck.rate,flow.f1.cc,goodput.n,goodput.min,goodput.median"),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with("20Mbit,reno,3,"), "{}", lines[1]);
}

// ---- run: plots and pcap ------------------------------------------------------------------

#[test]
fn test_run_writes_plots_and_pcap() {
    let dir = Scratch::new("run");
    let plots = dir.path("plots");
    let pcaps = dir.path("pcap");
    let file = repo("scenarios/bulk-cubic.toml");
    let o = tcplab(&[
        "run",
        &file,
        "--set",
        "run.duration=1s",
        "--set",
        "link.bottleneck.queue=30p",
        "--plot",
        &plots,
        "--pcap",
        &pcaps,
        "--json",
    ]);
    assert_ok(&o);
    let j: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["flows"][0]["id"], "f1");
    for f in ["cwnd-f1.png", "cwnd-f1.svg", "goodput.png", "goodput.svg"] {
        assert!(Path::new(&plots).join(f).exists(), "{f}");
    }
    let mut names: Vec<String> =
        std::fs::read_dir(&pcaps).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["access@h1.pcap", "access@sw.pcap", "bottleneck@h2.pcap", "bottleneck@sw.pcap"]);
    let recs = tcplab_lab::pcap::read(&std::fs::read(Path::new(&pcaps).join("access@h1.pcap")).unwrap()).unwrap();
    assert!(recs[0].packet.packet.seg.flags.syn());
    assert_eq!(recs[0].packet.packet.src, [10, 0, 0, 1]);
    assert_eq!(recs[0].packet.packet.dst, [10, 0, 0, 3]);
    assert!(stderr(&o).contains("wrote 4 pcap file(s)"), "{}", stderr(&o));
}

// ---- the reordering patch on a short run ---------------------------------------------

/// Issue 5: on a few seconds of the reordering scenario, the v3.12 growth
/// rule beats the v3.11 one (median goodput over five seeds).
#[test]
fn test_reordering_patch_arm_beats_the_old_rule_under_jitter() {
    let file = repo("scenarios/reordering-20mbit.toml");
    let o = tcplab(&[
        "compare",
        &file,
        "--a",
        "tcp.preset=v3.11",
        "--b",
        "tcp.preset=v3.12",
        "--runs",
        "5",
        "--set",
        "run.duration=10s",
        "--json",
    ]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ratio = v["ratio_of_medians"]["goodput"].as_f64().unwrap();
    assert!(ratio > 1.0, "v3.12/v3.11 goodput ratio {ratio}");
}
