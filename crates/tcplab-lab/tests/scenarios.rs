//! Scenario loading: shipped files, the documented example, overrides and
//! the error messages for each kind of bad input.

use tcplab_core::time::Duration;
use tcplab_lab::{load, load_str};
use tcplab_sim::config::{AppConfig, DelayModel, Limit, NodeKind};

fn repo(path: &str) -> String {
    format!("{}/../../{path}", env!("CARGO_MANIFEST_DIR"))
}

/// A small valid scenario; tests derive bad ones from it by replacing text.
const BASE: &str = include_str!("fixtures/small.toml");

fn err(text: &str) -> String {
    load_str("bad.toml", text, &[], None).unwrap_err().to_string()
}

fn err_set(sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load_str("base.toml", BASE, &sets, None).unwrap_err().to_string()
}

fn replace(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "{from:?} not in BASE");
    BASE.replacen(from, to, 1)
}

// ---------------------------------------------------------------------------
// Shipped scenarios and docs
// ---------------------------------------------------------------------------

#[test]
fn test_shipped_scenarios_validate() {
    let dir = std::fs::read_dir(repo("scenarios")).expect("scenarios/ exists");
    let mut n = 0;
    for e in dir {
        let p = e.unwrap().path();
        if p.extension().and_then(|x| x.to_str()) == Some("toml") {
            let path = p.to_str().unwrap();
            load(path, &[], None).unwrap_or_else(|e| panic!("{path}: {e}"));
            n += 1;
        }
    }
    assert!(n >= 3, "expected at least the three shipped scenarios, found {n}");
}

#[test]
fn test_bulk_cubic_is_one_bdp_at_100mbit_20ms() {
    let sc = load(&repo("scenarios/bulk-cubic.toml"), &[], None).unwrap();
    assert_eq!(sc.sim.duration, Duration::from_secs(30));
    let bn = sc.sim.links.iter().find(|l| l.name == "bottleneck").unwrap();
    assert_eq!(bn.rate_bps, 100_000_000);
    assert_eq!(bn.ab.delay, DelayModel::Fixed(Duration::from_millis(10)));
    // 100e6 bit/s * 0.020 s / 8 = 250 000 bytes.
    assert_eq!(bn.ab.queue.limit, Limit::Bytes(100_000_000 / 8 * 20 / 1000));
    assert_eq!(sc.sim.flows.len(), 1);
    assert_eq!(sc.sim.flows[0].tcp.congestion_control.name(), "cubic");
    let reno = load(&repo("scenarios/bulk-reno.toml"), &[], None).unwrap();
    assert_eq!(reno.sim.flows[0].tcp.congestion_control.name(), "reno");
    assert_eq!(reno.sim.links, sc.sim.links);
}

#[test]
fn test_two_flows_share_one_bottleneck_and_report_a_window() {
    let sc = load(&repo("scenarios/two-flows.toml"), &[], None).unwrap();
    assert_eq!(sc.sim.flows.len(), 2);
    assert_ne!(sc.sim.flows[0].start, sc.sim.flows[1].start);
    assert_eq!(sc.sim.flows[0].to, sc.sim.flows[1].to);
    assert!(sc.sim.duration >= Duration::from_secs(60));
    assert_eq!(sc.goodput_window, Some(Duration::from_secs(20)));
}

#[test]
fn test_docs_example_validates() {
    let doc = std::fs::read_to_string(repo("docs/scenarios.md")).unwrap();
    let start = doc.find("```toml\n").unwrap() + "```toml\n".len();
    let end = start + doc[start..].find("```").unwrap();
    let sc = load_str("docs/scenarios.md", &doc[start..end], &[], None).unwrap();
    assert_eq!(sc.sim.flows[0].tcp.tcp_ecn, 0);
    assert_eq!(sc.sim.flows[0].tcp_receiver.tcp_ecn, 0);
}

// ---------------------------------------------------------------------------
// Schema details
// ---------------------------------------------------------------------------

#[test]
fn test_defaults() {
    let sc = load_str("base.toml", BASE, &[], None).unwrap();
    assert_eq!(sc.sim.seed, 3);
    assert_eq!(sc.sim.nodes[0].kind, NodeKind::Host);
    assert_eq!(sc.sim.links[0].ab.queue.limit, Limit::Packets(1000));
    assert_eq!(sc.sim.flows[0].start, Duration::ZERO);
    assert_eq!(sc.sim.flows[0].app, AppConfig::Bulk { bytes: None, stop: None });
    assert_eq!(sc.sim.flows[0].tcp.preset, "linux-current");
    assert_eq!(sc.sim.trace_interval, None);
    assert_eq!(load_str("base.toml", BASE, &[], Some(99)).unwrap().sim.seed, 99);
}

#[test]
fn test_knob_layering_and_direction_overrides() {
    let text = format!(
        "{BASE}\n[flow.tcp]\ntcp_reordering = 7\ntcp_sack = 0\n[flow.tcp.cubic]\nbeta = 819\n\
         [flow.tcp_receiver]\ntcp_rmem = [\"4KB\", 87380, \"6MiB\"]\n\
         [tcp]\npreset = \"v3.12\"\ntcp_reordering = 5\ntcp_ecn = 1\n"
    )
    .replace(
        "queue = { limit = \"50p\" }",
        "queue = { limit = \"50p\" }\nab = { queue = { ecn_threshold = \"10p\" }, delay = { model = \"uniform\", min = \"4ms\", max = \"6ms\" } }",
    );
    let sc = load_str("x.toml", &text, &[], None).unwrap();
    let f = &sc.sim.flows[0];
    assert_eq!(f.tcp.preset, "v3.12");
    assert_eq!(f.tcp.tcp_reordering, 7);
    assert!(!f.tcp.tcp_sack);
    assert_eq!(f.tcp.tcp_ecn, 1);
    match &f.tcp.congestion_control {
        tcplab_core::cc::CcConfig::Cubic(p) => {
            assert_eq!(p.beta, 819);
            // The preset's era: v3.12 runs v3.18's tcp_cubic.c.
            assert_eq!(p.version, tcplab_core::cc::cubic::CubicVersion::V3_18);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(f.tcp_receiver.tcp_reordering, 5);
    assert!(f.tcp_receiver.tcp_sack);
    assert_eq!(f.tcp_receiver.tcp_rmem, [4000, 87380, 6 << 20]);
    assert_eq!(f.tcp_receiver.congestion_control.name(), "cubic");
    let bn = &sc.sim.links[1];
    assert_eq!(bn.ab.queue.limit, Limit::Packets(50));
    assert_eq!(bn.ab.queue.ecn_threshold, Some(Limit::Packets(10)));
    assert_eq!(bn.ba.queue.ecn_threshold, None);
    assert_eq!(bn.ab.delay, DelayModel::Uniform { min: Duration::from_millis(4), max: Duration::from_millis(6) });
    assert_eq!(bn.ba.delay, DelayModel::Fixed(Duration::from_millis(5)));
}

#[test]
fn test_module_params_are_checked_in_the_presets_era() {
    // A 3.x HyStart is consistent with v3.19's CUBIC ...
    let ok = format!("{BASE}[tcp]\npreset = \"v3.19\"\n[tcp.cubic]\nhystart_version = \"v3.19\"\n");
    load_str("x.toml", &ok, &[], None).unwrap();
    // ... but not with the current one, and the error names the table.
    let bad = format!("{BASE}[tcp.cubic]\nhystart_version = \"v3.19\"\n");
    assert!(err(&bad).starts_with("bad.toml:35:1: tcp.cubic: cubic: a 3.x HyStart needs a 3.x CUBIC"), "{}", err(&bad));
}

// ---------------------------------------------------------------------------
// --set
// ---------------------------------------------------------------------------

/// The TSO sysctls are knobs like the others (packetdrill could always
/// set them; scenarios could not): set, range-checked, and an unknown knob
/// is still an error that names it with a hint.
#[test]
fn test_tso_knobs_and_unknown_knob_hint() {
    let text = format!("{BASE}\n[tcp]\ntcp_min_tso_segs = 4\ntcp_tso_win_divisor = 0\ntcp_tso_rtt_log = 0\n");
    let f = &load_str("x.toml", &text, &[], None).unwrap().sim.flows[0];
    assert_eq!((f.tcp.tcp_min_tso_segs, f.tcp.tcp_tso_win_divisor, f.tcp.tcp_tso_rtt_log), (4, 0, 0));
    assert_eq!(f.tcp_receiver.tcp_min_tso_segs, 4);
    let e = load_str("x.toml", &format!("{BASE}\n[tcp]\ntcp_min_tso_segs = 0\n"), &[], None).unwrap_err();
    assert!(e.to_string().ends_with("tcp.tcp_min_tso_segs: must be between 1 and 255, found 0"), "{e}");
    let e = load_str("x.toml", &format!("{BASE}\n[tcp]\ntcp_tso_win_div = 2\n"), &[], None).unwrap_err();
    assert!(e.to_string().ends_with("tcp.tcp_tso_win_div: unknown key; did you mean \"tcp_tso_win_divisor\"?"), "{e}");
}

#[test]
fn test_set_overrides() {
    let sets: Vec<String> = [
        "link.bn.rate=50Mbit",
        "flow.f1.cc=reno",
        "tcp.tcp_reordering=10",
        "run.duration=5s",
        "flow[0].tcp.tcp_sack=false",
        "flow.f1.app={ kind = \"bulk\", bytes = \"1MB\" }",
        "link.bn.ab.queue.ecn_threshold=20p",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let sc = load_str("base.toml", BASE, &sets, None).unwrap();
    assert_eq!(sc.sim.links[1].rate_bps, 50_000_000);
    assert_eq!(sc.sim.flows[0].tcp.congestion_control.name(), "reno");
    assert_eq!(sc.sim.flows[0].tcp_receiver.congestion_control.name(), "reno");
    assert_eq!(sc.sim.flows[0].tcp.tcp_reordering, 10);
    assert_eq!(sc.sim.flows[0].tcp_receiver.tcp_reordering, 10);
    assert!(!sc.sim.flows[0].tcp.tcp_sack);
    assert_eq!(sc.sim.duration, Duration::from_secs(5));
    assert_eq!(sc.sim.flows[0].app, AppConfig::Bulk { bytes: Some(1_000_000), stop: None });
    assert_eq!(sc.sim.links[1].ab.queue.ecn_threshold, Some(Limit::Packets(20)));
    assert_eq!(sc.sim.links[1].ab.queue.limit, Limit::Packets(50));
}

#[test]
fn test_set_errors_name_the_argument() {
    assert_eq!(
        err_set(&["flow.f1.cc=cubik"]),
        "--set flow.f1.cc=cubik: flow[0].cc: unknown congestion control \"cubik\" (known: reno, cubic, dctcp, bbr)"
    );
    assert_eq!(
        err_set(&["link.nosuch.rate=5Mbit"]),
        "--set link.nosuch.rate=5Mbit: link.nosuch: no link named \"nosuch\" (known: \"access\", \"bn\")"
    );
    assert_eq!(
        err_set(&["bogus.x=1"]),
        "--set bogus.x=1: bogus: unknown key (expected one of: description, run, tcp, node, link, flow)"
    );
    assert!(err_set(&["run.duration"]).starts_with("--set run.duration: expected KEY=VALUE"));
    assert!(err_set(&["run..duration=1s"]).starts_with("--set run..duration=1s: bad key"));
    assert!(err_set(&["flow[5].cc=reno"]).contains("index 5 is out of range"));
    assert!(err_set(&["run.duration.x=1"]).contains("run.duration: is a string, not a table"));
}

// ---------------------------------------------------------------------------
// Bad files: each names file:line:col and the field.
// ---------------------------------------------------------------------------

#[test]
fn test_unknown_key() {
    let e = err(&replace("cc = \"cubic\"", "cc = \"cubic\"\nspeed = 3"));
    assert_eq!(
        e,
        "bad.toml:35:1: flow[0].speed: unknown key (expected one of: id, from, to, start, cc, app, tcp, tcp_receiver, nodelay, repeat, gap, duration_each)"
    );
    let e = err(&replace("seed = 3", "seeed = 3"));
    assert_eq!(e, "bad.toml:3:1: run.seeed: unknown key; did you mean \"seed\"?");
}

#[test]
fn test_wrong_type() {
    assert_eq!(
        err(&replace("seed = 3", "seed = \"three\"")),
        "bad.toml:3:8: run.seed: expected an integer, found a string \"three\""
    );
    assert_eq!(
        err(&replace("duration = \"2s\"", "duration = 10")),
        "bad.toml:2:12: run.duration: a time needs a unit: write e.g. \"10ms\" or \"10s\" (units: ns, us, ms, s)"
    );
    assert!(
        err(&replace("name = \"bn\"", "name = 5")).starts_with("bad.toml:23:8: link[1].name: expected a name string")
    );
}

#[test]
fn test_zero_and_negative_rate() {
    assert_eq!(
        err(&replace("rate = \"10Mbit\"", "rate = \"0Mbit\"")),
        "bad.toml:26:8: link[1].rate: a rate must be positive, found \"0Mbit\""
    );
    assert_eq!(
        err(&replace("rate = \"10Mbit\"", "rate = \"-10Mbit\"")),
        "bad.toml:26:8: link[1].rate: \"-10Mbit\" is negative; a rate must be positive"
    );
    assert!(err(&replace("rate = \"10Mbit\"", "rate = -10"))
        .starts_with("bad.toml:26:8: link[1].rate: a rate must be positive"));
    assert!(err(&replace("rate = \"10Mbit\"", "rate = 0"))
        .starts_with("bad.toml:26:8: link[1].rate: a rate must be positive"));
}

#[test]
fn test_unknown_node_and_unconnected_hosts() {
    assert_eq!(
        err(&replace("to = \"h2\"", "to = \"h3\"")),
        "bad.toml:33:6: flow[0].to: unknown node \"h3\"; did you mean \"h1\"?"
    );
    assert_eq!(
        err(&replace("b = \"h2\"", "b = \"nowhere\"")),
        "bad.toml:25:5: link[1].b: unknown node \"nowhere\" (known: h1, sw, h2)"
    );
    let island =
        replace("name = \"h2\"", "name = \"h2\"\n\n[[node]]\nname = \"h3\"").replace("to = \"h2\"", "to = \"h3\"");
    let e = err(&island);
    assert!(e.starts_with("bad.toml:36:6: flow[0].to: no path from \"h1\" to \"h3\""), "{e}");
    assert!(err(&replace("to = \"h2\"", "to = \"sw\"")).contains("flow[0].to: node \"sw\" is a switch"));
    assert!(err(&replace("to = \"h2\"", "to = \"h1\"")).contains("flow[0].to: flow goes from node \"h1\" to itself"));
}

#[test]
fn test_duplicate_node_link_and_flow_names() {
    assert_eq!(
        err(&replace("name = \"h2\"", "name = \"h1\"")),
        "bad.toml:13:8: node[2].name: duplicate node name \"h1\""
    );
    assert_eq!(
        err(&replace("name = \"bn\"", "name = \"access\"")),
        "bad.toml:23:8: link[1].name: duplicate link name \"access\""
    );
    let twice = format!("{BASE}\n[[flow]]\nid = \"f1\"\nfrom = \"h2\"\nto = \"h1\"\n");
    assert_eq!(err(&twice), "bad.toml:37:6: flow[1].id: duplicate flow id \"f1\"");
}

/// `n` host pairs on one switch, one flow each (`scenarios/scale/gen.sh
/// pairs`).
fn host_pairs(n: usize) -> String {
    use std::fmt::Write;
    let mut p = String::from("[run]\nduration = \"10ms\"\n\n[[node]]\nname = \"sw\"\nkind = \"switch\"\n");
    for i in 0..n {
        write!(p, "[[node]]\nname = \"a{i}\"\n[[node]]\nname = \"b{i}\"\n").unwrap();
    }
    for i in 0..n {
        for (l, h) in [("la", "a"), ("lb", "b")] {
            write!(p, "[[link]]\nname = \"{l}{i}\"\na = \"{h}{i}\"\nb = \"sw\"\nrate = \"1Gbit\"\n").unwrap();
        }
    }
    for i in 0..n {
        write!(p, "[[flow]]\nid = \"f{i}\"\nfrom = \"a{i}\"\nto = \"b{i}\"\n").unwrap();
    }
    p
}

/// A chain of `n` switches with a host on each and `n` flows half the
/// chain long (`scenarios/scale/gen.sh chain`).
fn chain(n: usize) -> String {
    use std::fmt::Write;
    let mut c = String::from("[run]\nduration = \"10ms\"\n");
    for i in 0..n {
        write!(c, "[[node]]\nname = \"s{i}\"\nkind = \"switch\"\n[[node]]\nname = \"h{i}\"\n").unwrap();
    }
    for i in 0..n {
        write!(c, "[[link]]\nname = \"h{i}\"\na = \"h{i}\"\nb = \"s{i}\"\nrate = \"1Gbit\"\n").unwrap();
        if i + 1 < n {
            write!(c, "[[link]]\nname = \"s{i}\"\na = \"s{i}\"\nb = \"s{}\"\nrate = \"1Gbit\"\n", i + 1).unwrap();
        }
    }
    for i in 0..n {
        write!(c, "[[flow]]\nid = \"f{i}\"\nfrom = \"h{i}\"\nto = \"h{}\"\n", (i + n / 2) % n).unwrap();
    }
    c
}

#[test]
fn test_large_topologies_validate() {
    // Validation used to search the links per node per flow and the names
    // linearly (10,000 host pairs took 4.3 s of CPU); it is linear now.
    // Its speed is measured in docs/PERFORMANCE.md (scenarios/scale/
    // measure.sh), not here: this test checks that the large shapes load
    // with every flow routed.
    for (text, flows) in [(host_pairs(20_000), 20_000), (chain(2_000), 2_000)] {
        let sc = load_str("big.toml", &text, &[], None).unwrap();
        assert_eq!(sc.sim.flows.len(), flows);
    }
}

#[test]
fn test_unknown_cc_and_preset() {
    assert_eq!(
        err(&replace("cc = \"cubic\"", "cc = \"cubik\"")),
        "bad.toml:34:6: flow[0].cc: unknown congestion control \"cubik\" (known: reno, cubic, dctcp, bbr)"
    );
    assert_eq!(
        err(&format!("{BASE}[flow.tcp]\npreset = \"v3.1\"\n")),
        "bad.toml:36:10: flow[0].tcp.preset: unknown preset \"v3.1\"; did you mean \"v3.11\"? \
         (known: linux-current, v3.11, v3.12, v3.18, v3.19, v4.17)"
    );
    assert!(err(&format!("{BASE}[flow.tcp]\ncongestion_control = \"reno\"\n")).contains("keep one"));
}

#[test]
fn test_unknown_enum_name_is_an_error_naming_the_knob_and_the_names() {
    // Each name knob, in a file and by --set: a typo is an error that says
    // which knob and lists what it takes, never the default.
    assert_eq!(
        err(&format!("{BASE}[tcp]\ncwnd_growth = \"v3.13\"\n")),
        "bad.toml:36:15: tcp.cwnd_growth: unknown value \"v3.13\" \
         (one of \"v3.11\", \"posted\", \"v3.12\", \"data-acked\")"
    );
    assert_eq!(
        err_set(&["tcp.prr_rule=curent"]),
        "--set tcp.prr_rule=curent: tcp.prr_rule: unknown value \"curent\" (one of \"v3.12\", \"v4.17\", \"current\")"
    );
    for (key, names) in [
        ("tcp.cwnd_limited_rule", r#""in-flight", "latched""#),
        ("tcp.ack_era", r#""v3.12", "current""#),
        ("tcp.acked_count", r#""per-ack", "cumulative", "delivered""#),
        ("tcp.cubic.version", r#""v3.18", "v3.19", "current""#),
        ("tcp.cubic.hystart_version", r#""v3.18", "v3.19", "current""#),
        ("tcp.dctcp.version", r#""v4.17", "current""#),
        ("tcp.reno.version", r#""v3.18", "v3.19", "v4.17", "current""#),
    ] {
        let e = err_set(&[&format!("{key}=nope")]);
        assert_eq!(e, format!("--set {key}=nope: {key}: unknown value \"nope\" (one of {names})"));
    }
}

#[test]
fn test_bad_units_and_ranges() {
    assert_eq!(
        err(&replace("delay = \"5ms\"", "delay = \"5 fortnights\"")),
        "bad.toml:27:9: link[1].delay: unknown time unit \"fortnights\" in \"5 fortnights\" (units: ns, us, ms, s)"
    );
    assert!(err(&replace("rate = \"10Mbit\"", "rate = \"10Mbps\"")).contains("write \"Mbit\""));
    assert!(err(&replace("\"50p\"", "\"50\"")).contains("link[1].queue.limit: \"50\" has no unit"));
    assert!(err(&format!("{BASE}[tcp]\ntcp_ecn = 7\n")).contains("tcp.tcp_ecn: must be between 0 and 2, found 7"));
    assert!(err(&format!("{BASE}[tcp]\nhz = 999\n")).contains("tcp.hz: must be one of 100, 250, 300, 1000"));
    assert!(err(&format!("{BASE}[tcp.cubic]\nbeta = 1024\n")).contains("tcp.cubic.beta: must be between 1 and 1023"));
    assert!(err(&format!("{BASE}[tcp]\ntcp_rmem = [3, 2, 1]\n")).contains("values must not decrease"));
    assert!(err(&replace("delay = \"5ms\"", "delay = \"2h\"")).contains("unknown time unit"));
    assert!(err(&replace("delay = \"5ms\"", "delay = \"3601s\"")).contains("must be at most 3600s"));
}

#[test]
fn test_malformed_toml() {
    assert_eq!(err(&replace("seed = 3", "seed = = 3")), "bad.toml:3:8: malformed TOML: extra `=`, expected nothing");
    let e = err("[run]\nduration = \"10s\n");
    assert!(e.starts_with("bad.toml:2:"), "{e}");
    assert!(e.contains("malformed TOML"), "{e}");
}

#[test]
fn test_missing_pieces() {
    assert!(err("").starts_with("bad.toml:1:1: run: missing required table [run]"));
    assert!(err("[run]\nseed = 1\n").starts_with("bad.toml:1:1: run.duration: missing required key"));
    assert!(err("[run]\nduration = \"1s\"\n").contains("node: no nodes"));
    assert_eq!(
        err("[run]\nduration = \"1s\"\n[node]\nname = \"h1\"\n"),
        "bad.toml:3:1: node: expected an array of tables: write [[node]] for each element, found a table"
    );
}

#[test]
fn test_unreadable_file() {
    let e = load("/nonexistent/dir/x.toml", &[], None).unwrap_err().to_string();
    assert!(e.starts_with("/nonexistent/dir/x.toml: cannot read scenario file"), "{e}");
}
