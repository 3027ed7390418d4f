//! `reproduce` machinery on a test-only registry entry (the shipped
//! registry holds only real patches; this entry is not one), and the
//! comparison engine's determinism.

use tcplab_lab::batch::Quiet;
use tcplab_lab::compare::{ArmSpec, CompareSpec};
use tcplab_lab::experiments::{self, Arm, ArmStat, Check, Experiment, Options, RefStat, RefValue, Reference};
use tcplab_lab::overrides::{parse_list, ScenarioText};

/// Reno against CUBIC on the two-flow scenario, shortened, with jitter so
/// that seeds differ. A test fixture, not a patch.
static TEST_ENTRY: Experiment = Experiment {
    name: "test-two-flows",
    title: "test fixture: Reno against CUBIC (not a kernel patch)",
    source: "crates/tcplab-lab/tests/experiments.rs",
    summary: "Exercises the reproduce machinery on a shipped scenario.",
    scenario: tcplab_lab::scenario_file!("two-flows.toml"),
    set: &[
        "run.duration=3s",
        "run.goodput_window=1s",
        "link.bottleneck.delay={ model = \"ordered-jitter\", base = \"9ms\", jitter = \"2ms\" }",
    ],
    arms: &[Arm::new("reno", &["flow.*.cc=reno"]), Arm::new("cubic", &["flow.*.cc=cubic"])],
    metrics: &["goodput", "TcpRetransSegs"],
    runs: 4,
    kernel: None,
    reference: Reference {
        quote: "THROUGHPUT=90.00\nTHROUGHPUT=91.00\nTHROUGHPUT=92.00\nTHROUGHPUT=93.00\n",
        values: &[
            RefValue { arm: "reno", metric: "goodput", stat: RefStat::Runs(&[90.0, 91.0, 92.0, 93.0]) },
            RefValue { arm: "cubic", metric: "goodput", stat: RefStat::Median(95.0) },
            RefValue { arm: "cubic", metric: "TcpRetransSegs", stat: RefStat::Total(100.0) },
        ],
    },
    checks: &[Check::Ratio {
        metric: "goodput",
        num: ArmStat::median("cubic", "cubic"),
        den: ArmStat::median("reno", "reno"),
        min: 0.5,
        max: 2.0,
    }],
};

static BAD_ENTRY: Experiment = Experiment {
    name: "bad",
    metrics: &["goodput"],
    reference: Reference {
        quote: "",
        values: &[RefValue { arm: "nosuch", metric: "goodput", stat: RefStat::Median(1.0) }],
    },
    ..TEST_ENTRY
};

static BAD_CHECK: Experiment = Experiment {
    name: "bad-check",
    checks: &[Check::Ratio {
        metric: "goodput",
        num: ArmStat::min("cubic", "cubic"),
        den: ArmStat::min("nosuch", "reno"),
        min: 1.5,
        max: f64::INFINITY,
    }],
    ..TEST_ENTRY
};

#[test]
fn test_entry_validates_and_bad_entries_do_not() {
    TEST_ENTRY.validate().unwrap();
    let e = BAD_ENTRY.validate().unwrap_err().to_string();
    assert!(e.contains("unknown arm \"nosuch\""), "{e}");
    let e = BAD_CHECK.validate().unwrap_err().to_string();
    assert!(e.contains("bad check on \"goodput\": min of cubic / min of nosuch"), "{e}");
    let registry = [TEST_ENTRY];
    assert_eq!(experiments::select(&registry, "all").unwrap().len(), 1);
    assert_eq!(experiments::select(&registry, "test-two-flows").unwrap()[0].name, "test-two-flows");
    let e = experiments::select(&registry, "hystart").unwrap_err().to_string();
    assert!(e.contains("known: all, test-two-flows"), "{e}");
}

#[test]
fn test_reproduce_prints_patch_and_tcplab_side_by_side() {
    let r = TEST_ENTRY
        .run(&Options { runs: None, jobs: 2, keep_first: true, backend: Default::default() }, &Quiet)
        .unwrap();
    assert_eq!(r.comparison.runs, 4);
    let t = r.to_table();
    for needle in [
        "== test-two-flows: test fixture",
        "The patch reported:",
        "  | THROUGHPUT=90.00",
        "The patch and tcplab side by side",
        "median of 4 runs",
        "total over 4 runs",
        "goodput of \"reno\", every run (Mbit/s)",
        "check: median of cubic / median of reno of goodput in [0.5, 2]:",
        "tcplab's runs:",
    ] {
        assert!(t.contains(needle), "{needle:?} not in\n{t}");
    }
    assert!(r.passed(), "{t}");
    let j: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
    assert_eq!(j["experiment"]["name"], "test-two-flows");
    assert_eq!(j["experiment"]["scenario"]["path"], "scenarios/two-flows.toml");
    assert_eq!(j["reference"]["values"][0]["stat"], "runs");
    assert_eq!(j["reference"]["values"][1]["value"], 95.0);
    assert_eq!(j["checks"][0]["ok"], true);
    assert_eq!(j["arms"].as_array().unwrap().len(), 2);
    assert!(j["ratio_of_medians"]["goodput"].as_f64().is_some());
    // The kernel's column, read back from a results file in the form
    // `reproduce --backend linux --json` writes (these runs relabelled).
    let dir = std::env::temp_dir().join(format!("tcplab-kcol-test-{}", std::process::id()));
    let path = experiments::kernel_column::results_path(&dir, "test-two-flows");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, r.to_json().replace("\"backend\":\"model\"", "\"backend\":\"linux-test\"")).unwrap();
    let col = experiments::KernelColumn::load(&path, "test-two-flows").unwrap().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(col.kernel, "linux-test");
    assert_eq!(col.arms.len(), 2);
    assert_eq!(col.arms[0].summary["goodput"], *r.comparison.arms[0].summary[0].as_ref().unwrap());
    let mut r = r;
    r.linux = Some(col);
    let t = r.to_table();
    let median = |arm: usize| r.comparison.arms[arm].summary[0].as_ref().unwrap().median;
    for needle in [
        "| linux".to_string(),
        format!("on linux-test: median of cubic / median of reno of goodput: {:.4}", median(1) / median(0)),
    ] {
        assert!(t.contains(needle.as_str()) || t.contains(needle.trim_start_matches("| ")), "{needle:?} not in\n{t}");
    }
    let html = experiments::html_report(&[r], Some("tcplab reproduce test-two-flows")).unwrap();
    for needle in ["test fixture: Reno against CUBIC", "THROUGHPUT=90.00", "<svg", ">reno<", ">cubic<"] {
        assert!(html.contains(needle), "{needle:?} not in the report");
    }
}

fn spec(jobs: usize) -> CompareSpec {
    let sets = |s: &str| parse_list("--a", s).unwrap();
    CompareSpec {
        scenario: ScenarioText::read(&format!("{}/../../scenarios/bulk-cubic.toml", env!("CARGO_MANIFEST_DIR")))
            .unwrap(),
        base: parse_list(
            "--set",
            "run.duration=2s,link.bottleneck.delay={ model = \"ordered-jitter\", base = \"9ms\", jitter = \"2ms\" }",
        )
        .unwrap(),
        arms: vec![
            ArmSpec {
                name: "reno".into(),
                flag: "--a".into(),
                settings: sets("flow.f1.cc=reno"),
                backend: Default::default(),
            },
            ArmSpec { name: "cubic".into(), flag: "--b".into(), settings: vec![], backend: Default::default() },
        ],
        runs: 5,
        metrics: vec!["goodput".into(), "TcpRetransSegs".into()],
        jobs,
        keep_first: false,
        max_runs: tcplab_lab::batch::DEFAULT_MAX_RUNS,
    }
}

#[test]
fn test_compare_is_deterministic_across_jobs() {
    let a = spec(1).prepare().unwrap().run(&Quiet).unwrap();
    let b = spec(2).prepare().unwrap().run(&Quiet).unwrap();
    let strip = |mut v: serde_json::Value| {
        v.as_object_mut().unwrap().remove("wall_s");
        v
    };
    let ja = strip(serde_json::from_str(&a.to_json()).unwrap());
    let jb = strip(serde_json::from_str(&b.to_json()).unwrap());
    assert_eq!(ja, jb);
    // The jitter makes seeds differ; the runs are in seed order.
    let seeds: Vec<u64> = a.arms[0].runs.iter().map(|r| r.seed).collect();
    assert_eq!(seeds, [1, 2, 3, 4, 5]);
    let mut v = a.arms[1].values(0);
    v.dedup();
    assert!(v.len() > 1, "seeds should give different goodput: {v:?}");
    let s = a.arms[0].summary[0].as_ref().unwrap();
    assert!(s.ci95[0] <= s.median && s.median <= s.ci95[1]);
}

/// Records the size of the worker pool a batch runs on.
struct PoolSize(std::sync::atomic::AtomicUsize);

impl tcplab_lab::batch::Progress for PoolSize {
    fn inc(&self) {
        // Called on a worker thread of the batch's pool.
        self.0.fetch_max(rayon::current_num_threads(), std::sync::atomic::Ordering::SeqCst);
    }
}

#[test]
fn test_batch_threads_are_capped_by_runs_and_cores() {
    // `--jobs 100000` once started 100,000 threads for a handful of runs.
    let pool = PoolSize(0.into());
    let mut s = spec(100_000);
    s.runs = 1;
    s.base.extend(parse_list("--set", "run.duration=100ms").unwrap());
    s.prepare().unwrap().run(&pool).unwrap();
    assert_eq!(pool.0.into_inner(), 2, "one thread per run (2 arms x 1 run)");
    assert!(tcplab_lab::batch::worker_threads(100_000, 1_000_000) <= tcplab_lab::batch::max_jobs());
    assert_eq!(tcplab_lab::batch::worker_threads(100_000, 3), 3.min(tcplab_lab::batch::max_jobs()));
    assert_eq!(tcplab_lab::batch::worker_threads(0, 3), 1);
}
