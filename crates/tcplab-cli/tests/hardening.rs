//! Hostile use of the `tcplab` binary (issue 14, "Nothing lost, nothing
//! hung"): each test is one defect found by trying to break tcplab, and
//! shows the behaviour now: a clear error with exit 2, a bounded run, no
//! lost results and no partial files after an interruption (exit 130).

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

const SMALL: &str = include_str!("../../tcplab-lab/tests/fixtures/small.toml");

/// The small fixture (one CUBIC flow over 10 Mbit/s) written to `dir`.
fn small(dir: &Scratch) -> String {
    let p = dir.path("small.toml");
    std::fs::write(&p, SMALL).unwrap();
    p
}

/// Starts tcplab in `cwd` with stdout and stderr captured.
fn spawn(cwd: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_tcplab"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tcplab starts")
}

/// Sends SIGINT to `child`.
fn interrupt(child: &Child) {
    let ok = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill runs").success();
    assert!(ok, "kill -INT");
}

/// Blocks until `cond` holds, polling `path`'s content; fails if the
/// child exits first (it would have finished before the interruption).
fn wait_for(child: &mut Child, path: &Path, cond: impl Fn(&[u8]) -> bool) {
    loop {
        if std::fs::read(path).is_ok_and(|b| cond(&b)) {
            return;
        }
        if let Some(status) = child.try_wait().expect("child status") {
            panic!("tcplab ended ({status}) before {} was ready", path.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A compare's JSON without its wall-clock time (the one field that
/// differs between two runs of the same command).
fn without_wall(json: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(json).expect("JSON");
    if let Some(o) = v.as_object_mut() {
        o.remove("wall_s");
    }
    v
}

// ---- 1: nesting ------------------------------------------------------------------

#[test]
fn test_packetdrill_deep_nesting_fails_at_its_line_without_overflow() {
    let d = Scratch::new("nest");
    let script = d.path("deep.pkt");
    std::fs::write(
        &script,
        format!(
            "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, {}1{}, 4) = 0\n",
            "[".repeat(100_000),
            "]".repeat(100_000)
        ),
    )
    .unwrap();
    // 10,000 brackets overflowed the stack (exit 134); 100,000 overflow
    // even the main thread's 8 MiB in a release build.
    let o = tcplab(&["packetdrill", &script, "--json"]);
    assert_eq!(o.status.code(), Some(1), "a failed script, not a crash; stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("\"line\":2"), "{out}");
    assert!(out.contains("nested more than 100 levels"), "{out}");
}

// ---- 2: endless inputs -------------------------------------------------------------

#[test]
fn test_device_files_are_refused_at_once() {
    for args in [
        &["run", "/dev/zero"][..],
        &["check", "/dev/zero"],
        &["compare", "/dev/zero", "--a", "flow.*.cc=reno"],
        &["sweep", "/dev/zero", "--vary", "run.seed=1,2"],
    ] {
        assert_error(&tcplab(args), &["/dev/zero: cannot read scenario file: not a regular file"]);
    }
    assert_error(&tcplab(&["merge", "/dev/zero"]), &["/dev/zero: cannot read sweep JSON file: not a regular file"]);
    let o = tcplab(&["packetdrill", "/dev/zero"]);
    assert_error(&o, &["/dev/zero: not a regular file or directory"]);
}

/// Runs tcplab to its end, failing the test (and killing it) if that
/// takes more than 20 s: the defects here were hangs.
fn finishes(cwd: &Path, args: &[&str]) -> (Option<i32>, String) {
    let mut child = spawn(cwd, args);
    let start = std::time::Instant::now();
    while child.try_wait().expect("child status").is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            panic!("tcplab {args:?} still running after 20 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let o = child.wait_with_output().unwrap();
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn test_fifos_are_refused_without_waiting_for_a_writer() {
    let d = Scratch::new("fifo");
    let fifo = d.path("scenario.toml");
    let pkt_dir = d.path("scripts");
    std::fs::create_dir(&pkt_dir).unwrap();
    let pkt = Path::new(&pkt_dir).join("x.pkt").display().to_string();
    for f in [&fifo, &pkt] {
        assert!(Command::new("mkfifo").arg(f).status().expect("mkfifo runs").success());
    }
    for args in
        [&["run", &fifo][..], &["check", &fifo], &["merge", &fifo], &["compare", &fifo, "--a", "flow.*.cc=reno"]]
    {
        let (code, err) = finishes(&d, args);
        assert_eq!(code, Some(2), "{args:?}: {err}");
        assert!(err.contains("not a regular file"), "{args:?}: {err}");
    }
    let (code, err) = finishes(&d, &["packetdrill", &pkt_dir]);
    assert_ne!(code, Some(0), "{err}");
}

// ---- 3: --jobs ---------------------------------------------------------------------

#[test]
fn test_jobs_beyond_the_cores_are_capped_with_a_note() {
    let d = Scratch::new("jobs");
    let f = small(&d);
    let o = tcplab(&[
        "compare",
        &f,
        "--a",
        "flow.*.cc=reno",
        "--runs",
        "1",
        "--jobs",
        "100000",
        "--set",
        "run.duration=200ms",
    ]);
    assert_ok(&o);
    assert!(stderr(&o).contains("--jobs 100000: using"), "{}", stderr(&o));
}

// ---- 4: long runs -------------------------------------------------------------------

#[test]
fn test_long_run_is_warned_about_and_stopped_by_max_wall() {
    let d = Scratch::new("wall");
    let f = small(&d);
    let o = tcplab(&["run", &f, "--set", "run.duration=1000000000s", "--max-wall", "0.3", "--json"]);
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{e}");
    assert!(e.starts_with("tcplab: warning: 1000000000s simulated per run x 1 run(s) may take up to about"), "{e}");
    assert!(
        e.contains("\nerror: --max-wall 0.3: the run passed its wall-clock limit at")
            && e.contains("of 1000000000s simulated"),
        "{e}"
    );
    // One small flow's host links busy for 31.7 years: days of wall clock.
    assert!(e.contains("days of wall-clock time"), "{e}");
    assert!(stdout(&o).is_empty(), "no result for a stopped run");
    // A short run is not warned about.
    let o = tcplab(&["run", &f, "--set", "run.duration=100ms", "--json"]);
    assert_ok(&o);
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // Bad limits are errors.
    assert_error(&tcplab(&["run", &f, "--max-wall=-1"]), &["--max-wall: -1: give a positive number of seconds"]);
}

#[test]
fn test_progress_shows_under_json_when_stderr_is_a_terminal() {
    // `script` gives the command a terminal; without it there is nothing to test.
    if Command::new("script").arg("--version").output().is_err() {
        println!("SKIPPED: no `script` (util-linux) to run tcplab on a terminal");
        return;
    }
    let d = Scratch::new("tty");
    let out = d.path("out.json");
    let cmd = format!(
        "{} run {} --set run.duration=60s --json > {out}",
        env!("CARGO_BIN_EXE_tcplab"),
        repo("scenarios/bulk-cubic.toml")
    );
    let o = Command::new("script").args(["-q", "-e", "-c", &cmd, "/dev/null"]).output().expect("script runs");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // What the terminal showed: the progress bar (stderr); the JSON went to the file.
    assert!(stdout(&o).contains("% of simulated time"), "no progress bar on the terminal");
    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(json["backend"], "model");
}

// ---- 5: merge ----------------------------------------------------------------------

#[test]
fn test_merge_refuses_a_shard_run_without_the_sweeps_metrics() {
    let d = Scratch::new("merge");
    let f = small(&d);
    let mut shards = Vec::new();
    for k in 1..=2 {
        let o = tcplab(&[
            "sweep",
            &f,
            "--vary",
            "flow.f1.cc=reno,cubic",
            "--runs",
            "2",
            "--set",
            "run.duration=200ms",
            "--shard",
            &format!("{k}/2"),
            "--json",
        ]);
        assert_ok(&o);
        let p = d.path(&format!("shard{k}.json"));
        std::fs::write(&p, stdout(&o)).unwrap();
        shards.push(p);
    }
    assert_ok(&tcplab(&["merge", &shards[0], &shards[1]]));
    // A forgotten shard is not a smaller sample.
    assert_error(&tcplab(&["merge", &shards[0]]), &["runs missing (a shard not given?)", "--partial"]);
    assert_ok(&tcplab(&["merge", &shards[0], "--partial"]));
    let text = std::fs::read_to_string(&shards[1]).unwrap();
    let first_run = text.find("\"metrics\":{\"goodput\":").expect("a run's metrics");
    let end = first_run + text[first_run..].find('}').unwrap() + 1;
    for (metrics, says) in [
        ("\"metrics\":{}", "metric \"goodput\" is missing"),
        ("\"metrics\":{\"goodput\":1.0,\"rtt\":2.0}", "metric \"rtt\" is not one of the sweep's (goodput)"),
        ("\"metrics\":{\"goodput\":1.0,\"goodput\":2.0}", "metric \"goodput\" is given twice"),
    ] {
        let bad = d.path("bad.json");
        std::fs::write(&bad, format!("{}{metrics}{}", &text[..first_run], &text[end..])).unwrap();
        let o = tcplab(&["merge", &shards[0], &bad]);
        assert_error(&o, &[&format!("{bad}: point 0 seed 2: {says}")]);
        assert!(stdout(&o).is_empty());
    }
    let bad = d.path("unit.json");
    std::fs::write(&bad, text.replace("\"unit\":\"bit/s\"", "\"unit\":\"furlongs\"")).unwrap();
    assert_error(&tcplab(&["merge", &bad]), &[&format!("{bad}: metrics: \"goodput\" has unit \"furlongs\"")]);
}

// ---- 6: --trace DIR ----------------------------------------------------------------

#[test]
fn test_trace_dir_is_removed_when_another_output_fails() {
    let d = Scratch::new("trace");
    let f = small(&d);
    let blocker = d.path("blocker");
    std::fs::write(&blocker, b"x").unwrap();
    let traces = d.path("traces");
    let o = tcplab(&["run", &f, "--trace", &traces, "--plot", &format!("{blocker}/plots")]);
    assert_error(&o, &[&format!("--plot {blocker}/plots")]);
    assert!(!Path::new(&traces).exists(), "the trace directory made for the failed command is removed");
}

// ---- 7: huge sweeps ----------------------------------------------------------------

#[test]
fn test_huge_batches_are_refused_before_anything_is_allocated() {
    let d = Scratch::new("huge");
    let f = small(&d);
    let thousand: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    let vary = format!("run.seed={}", thousand.join(","));
    let rto =
        format!("tcp.tcp_rto_min_us={}", thousand.iter().map(|i| format!("{i}000")).collect::<Vec<_>>().join(","));
    let o = tcplab(&["sweep", &f, "--vary", &vary, "--vary", &rto, "--runs", "1000"]);
    assert_error(
        &o,
        &["--max-runs: this sweep (1000 x 1000 points x 1000 runs) is 1000000000 runs, more than the limit of 1000000"],
    );
    let o = tcplab(&["compare", &f, "--a", "flow.*.cc=reno", "--runs", "4000000000"]);
    assert_error(&o, &["--max-runs: 2 arms x 4000000000 runs is 8000000000 runs"]);
    // The limit is the user's to raise.
    let o = tcplab(&["sweep", &f, "--vary", "flow.f1.cc=reno,cubic", "--runs", "2", "--max-runs", "3"]);
    assert_error(&o, &["is 4 runs, more than the limit of 3"]);
    let o = tcplab(&[
        "sweep",
        &f,
        "--vary",
        "flow.f1.cc=reno,cubic",
        "--runs",
        "2",
        "--max-runs",
        "4",
        "--set",
        "run.duration=100ms",
    ]);
    assert_ok(&o);
}

// ---- 8: one HZ rule ----------------------------------------------------------------

#[test]
fn test_hz_has_one_rule_for_scenarios_packetdrill_and_kernel_builds() {
    let d = Scratch::new("hz");
    let f = small(&d);
    let o = tcplab(&["packetdrill", "--hz", "7", &f]);
    assert_error(&o, &["--hz 7: Linux offers HZ 100, 250, 300 or 1000"]);
    let o = tcplab(&["kernel", "build", "--hz", "7"]);
    assert_error(&o, &["--hz 7: Linux offers HZ 100, 250, 300 or 1000"]);
    let o = tcplab(&["check", &f, "--set", "tcp.hz=7"]);
    assert_error(&o, &["--set tcp.hz=7", "one of 100, 250, 300, 1000"]);
    assert_ok(&tcplab(&["check", &f, "--set", "tcp.hz=300"]));
}

// ---- 9: interruptions --------------------------------------------------------------

#[test]
fn test_interrupted_compare_keeps_finished_runs_and_resume_completes_it() {
    let d = Scratch::new("int-compare");
    let f = small(&d);
    let journal = d.path("runs.jsonl");
    let report = d.path("out/report.html");
    let plots = d.path("plots");
    let args = ["compare", &f, "--a", "flow.*.cc=reno", "--runs", "60", "--jobs", "1", "--set", "run.duration=500ms"];
    let mut child =
        spawn(&d, &[&args[..], &["--json", "--journal", &journal, "--report", &report, "--plot", &plots]].concat());
    wait_for(&mut child, Path::new(&journal), |b| b.iter().filter(|c| **c == b'\n').count() >= 2);
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr: {}", stderr(&o));
    assert!(stdout(&o).is_empty(), "no partial comparison printed");
    assert!(stderr(&o).contains(&format!("`--resume {journal}`")), "{}", stderr(&o));
    // Nothing partial left: no report (nor its .tmp), no plot directory.
    let left: Vec<String> =
        std::fs::read_dir(&d.0).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["runs.jsonl", "small.toml"], "only the journal and the input remain");
    // Every line of the journal is whole.
    let text = std::fs::read_to_string(&journal).unwrap();
    assert!(text.ends_with('\n'));
    let finished = text.lines().count();
    assert!((2..120).contains(&finished), "{finished} runs journaled");
    for l in text.lines() {
        let _: serde_json::Value = serde_json::from_str(l).expect("a whole JSON line");
    }
    // Resuming runs only the rest and prints what one uninterrupted command prints.
    let resumed = tcplab(&[&args[..], &["--json", "--resume", &journal]].concat());
    assert_ok(&resumed);
    assert!(stderr(&resumed).contains(&format!("{finished} finished run(s) in it")), "{}", stderr(&resumed));
    assert_eq!(std::fs::read_to_string(&journal).unwrap().lines().count(), 120, "every run journaled once");
    let whole = tcplab(&[&args[..], &["--json"]].concat());
    assert_ok(&whole);
    assert_eq!(without_wall(&stdout(&resumed)), without_wall(&stdout(&whole)));
}

#[test]
fn test_interrupted_sweep_without_journal_keeps_its_runs_in_a_resumable_file() {
    let d = Scratch::new("int-sweep");
    let f = small(&d);
    let args =
        ["sweep", &f, "--vary", "flow.f1.cc=reno,cubic", "--runs", "40", "--jobs", "1", "--set", "run.duration=500ms"];
    let mut child = spawn(&d, &[&args[..], &["--json"]].concat());
    let own = d.0.join(format!("tcplab-sweep-{}.jsonl", child.id()));
    wait_for(&mut child, &own, |b| b.contains(&b'\n'));
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "stderr: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("are in {}", own.file_name().unwrap().to_string_lossy())), "{}", stderr(&o));
    let own = own.display().to_string();
    let resumed = tcplab(&[&args[..], &["--json", "--resume", &own]].concat());
    assert_ok(&resumed);
    let whole = tcplab(&[&args[..], &["--json"]].concat());
    assert_ok(&whole);
    assert_eq!(stdout(&resumed), stdout(&whole), "sweep JSON has no wall-clock field");
    // Uninterrupted commands leave no journal of their own behind.
    let left: Vec<_> = std::fs::read_dir(&d.0).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left.len(), 2, "the input and the kept journal: {left:?}");
}

#[test]
fn test_interrupted_run_keeps_whole_pcap_records_and_removes_other_outputs() {
    let d = Scratch::new("int-run");
    let f = small(&d);
    let pcap = d.path("pcap");
    let traces = d.path("traces");
    let mut child = spawn(&d, &["run", &f, "--set", "run.duration=100000s", "--pcap", &pcap, "--trace", &traces]);
    // The capture has passed its first 64 KiB buffer: packets are flowing.
    let file = Path::new(&pcap).join("bn@h2.pcap");
    wait_for(&mut child, &file, |b| b.len() > 1 << 16);
    interrupt(&child);
    let mut err = String::new();
    let mut child = child;
    let stderr_pipe = child.stderr.take().unwrap();
    for line in BufReader::new(stderr_pipe).lines() {
        err.push_str(&line.unwrap());
        err.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "stderr: {err}");
    assert!(err.contains("tcplab: interrupted: kept 4 pcap file(s)"), "{err}");
    for end in ["access@h1", "access@sw", "bn@sw", "bn@h2"] {
        let bytes = std::fs::read(Path::new(&pcap).join(format!("{end}.pcap"))).unwrap();
        let records = tcplab_lab::pcap::read(&bytes).unwrap_or_else(|e| panic!("{end}: {e}"));
        assert!(!records.is_empty() || end.starts_with("access"), "{end}");
    }
    assert!(!Path::new(&traces).exists(), "the trace files of the unfinished run are removed");
}

#[test]
fn test_two_quick_signals_are_one_interruption() {
    // `timeout -s INT` signals the process and then its group; a double
    // Ctrl-C is one intention: both get the graceful stop, with its
    // clean-up, not a forced exit halfway through it.
    let d = Scratch::new("int-twice");
    let f = small(&d);
    let pcap = d.path("pcap");
    let traces = d.path("traces");
    let plots = d.path("plots");
    let mut child =
        spawn(&d, &["run", &f, "--set", "run.duration=100000s", "--pcap", &pcap, "--trace", &traces, "--plot", &plots]);
    wait_for(&mut child, &Path::new(&pcap).join("bn@h2.pcap"), |b| b.len() > 1 << 16);
    interrupt(&child);
    std::thread::sleep(std::time::Duration::from_millis(20));
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "stderr: {err}");
    assert!(err.contains("tcplab: interrupted: kept 4 pcap file(s)"), "{err}");
    for end in ["access@h1", "access@sw", "bn@sw", "bn@h2"] {
        let bytes = std::fs::read(Path::new(&pcap).join(format!("{end}.pcap"))).unwrap();
        tcplab_lab::pcap::read(&bytes).unwrap_or_else(|e| panic!("{end}: {e}"));
    }
    assert!(!Path::new(&traces).exists() && !Path::new(&plots).exists(), "partial outputs are removed");
}

// ---- 10: messages ------------------------------------------------------------------

#[test]
fn test_set_values_that_are_not_toml_and_wildcards_are_named() {
    let d = Scratch::new("msgs");
    let f = small(&d);
    let o = tcplab(&["check", &f, "--set", "run.seed=99999999999999999999"]);
    assert_error(&o, &["--set run.seed=99999999999999999999: run.seed: integer 99999999999999999999 is out of range"]);
    assert!(!stderr(&o).contains("found a string"), "{}", stderr(&o));
    let o = tcplab(&["check", &f, "--set", "tcp.tcp_rmem=[-1,0,99999999999999999999]"]);
    assert_error(&o, &["--set tcp.tcp_rmem=[-1,0,99999999999999999999]: tcp.tcp_rmem: ", "is not a valid TOML array"]);
    assert!(!stderr(&o).contains("found a string"), "{}", stderr(&o));
    let o = tcplab(&["check", &f, "--set", "node.*.kind=switch"]);
    assert_error(&o, &["--set node.*.kind=switch"]);
    assert!(!stderr(&o).contains(&format!("{f}:")), "blames the --set, not the file: {}", stderr(&o));
    // diff names each --set too (it checks them before looking for a kernel).
    let o = tcplab(&["diff", &f, "--set", "run.duration=1s", "--set", "run.seed=99999999999999999999"]);
    assert_error(&o, &["--set run.seed=99999999999999999999: run.seed: integer 99999999999999999999 is out of range"]);
}

// ---- 11: sentinels -----------------------------------------------------------------

#[test]
fn test_min_rtt_without_an_rtt_sample_is_null() {
    let d = Scratch::new("rtt");
    let f = small(&d);
    let o = tcplab(&["run", &f, "--set", "link.bn.rate=1bit", "--set", "run.duration=1s", "--json"]);
    assert_ok(&o);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["flows"][0]["min_rtt_us"], serde_json::Value::Null, "{v}");
    let o = tcplab(&["run", &f, "--set", "run.duration=1s", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v["flows"][0]["min_rtt_us"].as_u64().is_some_and(|us| (10_000..20_000).contains(&us)), "{v}");
}
