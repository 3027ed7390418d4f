//! Property tests: random mutations of a valid scenario, and random
//! `--set` arguments, never panic the parser or validator, and every
//! rejection names a place (file:line:col, the file, or the `--set`).

use proptest::prelude::*;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_lab::load_str;

const VALID: &str = r#"description = "fuzz seed"
[run]
duration = "10s"
seed = 3
goodput_window = "2s"

[tcp]
preset = "v3.12"
tcp_rmem = [4096, "87380B", "6MiB"]
tcp_rto_min_us = "200ms"
[tcp.cubic]
beta = 717
version = "v3.18"

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
rate = "1Gbit"
delay = "1us"
queue = "1000p"

[[link]]
name = "bn"
a = "sw"
b = "h2"
rate = "10Mbit"
delay = { model = "uniform", min = "4ms", max = "6ms" }
queue = { limit = "50p", ecn_threshold = "10p" }
[link.ba]
delay = { model = "ordered-jitter", base = "5ms", jitter = "1ms" }
queue = { bytes = 150000 }

[[flow]]
id = "f1"
from = "h1"
to = "h2"
start = "1s"
cc = "dctcp"
app = { kind = "bulk", bytes = "10MB", stop = "9s" }
[flow.tcp]
tcp_ecn = 1
tcp_sack = 0
[flow.tcp.dctcp]
dctcp_shift_g = 4
[flow.tcp_receiver]
tcp_ecn = 1
"#;

const TOKENS: &[&str] = &[
    "\"",
    "=",
    "[",
    "]",
    "[[",
    "]]",
    "{",
    "}",
    ",",
    ".",
    "\n",
    "0",
    "-1",
    "99999999999999999999",
    "\"0Mbit\"",
    "\"1e400s\"",
    "true",
    "\"h1\"",
    "\"sw\"",
    "nan",
    "inf",
    "1.5",
    "\"µs\"",
    "'",
    "#",
    "\"\"\"",
    "flow",
    "link",
    "node",
    "tcp",
    "cubic",
    "limit",
    "\"p\"",
    "\u{0}",
    "é",
    "😀",
    "\"-0ms\"",
    "\"18446744073709551616B\"",
    "\"0.0000000001s\"",
    "9223372036854775807",
    "-9223372036854775808",
    "[1, 2, 3]",
    "{}",
    "\"99999Tbit\"",
    "\"3601s\"",
    "[[flow]]\nid = \"f1\"",
    "[[link]]",
    "\"1_000p\"",
    "\".\"",
    "\"a.b\"",
    "ab",
    "ba",
    "model",
    "\"uniform\"",
    "\"v3.11\"",
    "reno",
    "\"switch\"",
    "1979-05-27T07:32:00Z",
];

#[derive(Clone, Debug)]
enum Op {
    Delete { at: usize, len: usize },
    Insert { at: usize, token: usize },
    Replace { at: usize, ch: char },
    DupLine { line: usize },
    DropLine { line: usize },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (any::<usize>(), 1usize..12).prop_map(|(at, len)| Op::Delete { at, len }),
        (any::<usize>(), any::<usize>()).prop_map(|(at, token)| Op::Insert { at, token }),
        (any::<usize>(), any::<char>()).prop_map(|(at, ch)| Op::Replace { at, ch }),
        any::<usize>().prop_map(|line| Op::DupLine { line }),
        any::<usize>().prop_map(|line| Op::DropLine { line }),
    ]
}

fn apply(text: &str, ops: &[Op]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for op in ops {
        let n = chars.len().max(1);
        match *op {
            Op::Delete { at, len } => {
                let a = at % n;
                let b = (a + len).min(chars.len());
                if a < b {
                    chars.drain(a..b);
                }
            }
            Op::Insert { at, token } => {
                let a = (at % (chars.len() + 1)).min(chars.len());
                let t: Vec<char> = TOKENS[token % TOKENS.len()].chars().collect();
                chars.splice(a..a, t);
            }
            Op::Replace { at, ch } => {
                if !chars.is_empty() {
                    let a = at % chars.len();
                    chars[a] = ch;
                }
            }
            Op::DupLine { line } | Op::DropLine { line } => {
                let s: String = chars.iter().collect();
                let mut lines: Vec<&str> = s.split('\n').collect();
                let i = line % lines.len();
                if matches!(op, Op::DupLine { .. }) {
                    lines.insert(i, lines[i]);
                } else {
                    lines.remove(i);
                }
                chars = lines.join("\n").chars().collect();
            }
        }
    }
    chars.into_iter().collect()
}

fn check(text: &str, sets: &[String]) -> Result<(), TestCaseError> {
    check_named("fuzz.toml", text, sets)
}

fn check_named(name: &str, text: &str, sets: &[String]) -> Result<(), TestCaseError> {
    match load_str(name, text, sets, None) {
        Ok(mut sc) => {
            prop_assert!(sc.sim.validate().is_ok());
            // Whatever the parser accepts must also run: no panic, and
            // no flow delivers more than its sender sent.
            sc.sim.duration = sc.sim.duration.min(tcplab_core::time::Duration::from_millis(300));
            sc.goodput_window = None;
            let out = tcplab_lab::runner::run(&sc, None);
            prop_assert!(out.is_ok(), "an accepted scenario failed to run: {:?}", out.err());
            // A bulk flow's one connection: each data segment carries at
            // most one MSS. (RPC flows deliver in both directions.)
            for f in out.unwrap().result.flows.iter().filter(|f| f.rpc.is_none() && f.runs.len() == 1) {
                let sent_max = u64::from(f.sender_info.data_segs_out) * u64::from(f.sender_info.snd_mss);
                prop_assert!(f.bytes_delivered <= sent_max, "{}: delivered more than was sent", f.id);
                prop_assert!(f.goodput_bps.is_finite() && f.goodput_bps >= 0.0, "{}: goodput {}", f.id, f.goodput_bps);
            }
        }
        Err(e) => {
            let loc = e.location.clone().unwrap_or_default();
            prop_assert!(loc.starts_with(name) || loc.starts_with("--set"), "no location: {e}");
            // The simulator's own validation is only a backstop: the
            // scenario checks must catch everything first, with a line.
            prop_assert!(!e.message.starts_with("invalid scenario:"), "missed by the schema: {e}");
        }
    }
    Ok(())
}

const SET_KEYS: &[&str] = &[
    "run.duration",
    "run.seed",
    "run.goodput_window",
    "link.bn.rate",
    "link.bn.delay",
    "link.bn.queue",
    "link.bn.ab.queue.ecn_threshold",
    "link[0].a",
    "flow.f1.cc",
    "flow.f1.start",
    "flow.f1.app",
    "flow[0].to",
    "tcp.tcp_reordering",
    "tcp.preset",
    "tcp.cubic.beta",
    "flow.f1.tcp.mtu",
    "flow.f1.tcp_receiver.tcp_wmem",
    "node.sw.kind",
    "node[1].name",
    "nosuch",
    "flow.f9.cc",
    "link.\"bn\".rate",
    "flow[0]",
    "tcp",
    "a.b.c.d",
];

proptest! {
    // Fixed seed for CI; PROPTEST_RNG_SEED / PROPTEST_CASES (e.g. 100000)
    // search further.
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0xf022),
        ..ProptestConfig::default()
    })]

    #[test]
    fn test_mutated_scenarios_never_panic(ops in prop::collection::vec(op(), 1..6)) {
        let text = apply(VALID, &ops);
        check(&text, &[])?;
    }

    #[test]
    fn test_random_sets_never_panic(
        sets in prop::collection::vec((0..SET_KEYS.len(), 0..TOKENS.len(), "[ -~]{0,12}"), 1..4)
    ) {
        let sets: Vec<String> = sets
            .into_iter()
            .enumerate()
            .map(|(i, (k, t, junk))| if i % 2 == 0 { format!("{}={}", SET_KEYS[k], TOKENS[t]) } else { format!("{}={junk}", SET_KEYS[k]) })
            .collect();
        check(VALID, &sets)?;
    }

    #[test]
    fn test_arbitrary_text_never_panics(text in "\\PC{0,200}") {
        check(&text, &[])?;
    }
}

/// Values a user may well give, extreme ones included: every combination
/// the schema accepts must run.
const RUN_SETS: &[(&str, &[&str])] = &[
    ("link.bn.rate", &["1kbit", "64kbit", "1Mbit", "100Mbit", "10Gbit", "400Gbit"]),
    ("link.access.rate", &["56kbit", "10Mbit", "1Gbit", "100Gbit"]),
    (
        "link.bn.delay",
        &[
            "0us",
            "1us",
            "20ms",
            "2s",
            r#"{ model = "uniform", min = "0ms", max = "30ms" }"#,
            r#"{ model = "ordered-jitter", base = "0us", jitter = "10ms" }"#,
            r#"{ model = "random-walk", base = "1ms", amplitude = "20ms", step = "1ms", interval = "100us" }"#,
            r#"{ model = "on-off", base = "1ms", delay = "50ms", mean_on = "10ms", mean_off = "10ms", slot = "1ms" }"#,
        ],
    ),
    (
        "link.bn.queue",
        &[
            r#"{ limit = "1p" }"#,
            r#"{ limit = "2p", ecn_threshold = "1p" }"#,
            r#"{ limit = "100000p" }"#,
            r#"{ bytes = 1500 }"#,
            r#"{ limit = "64KB", ecn_threshold = "1p" }"#,
        ],
    ),
    ("flow.f1.cc", CcConfig::NAMES),
    ("tcp.preset", PRESETS),
    (
        "flow.f1.app",
        &[
            r#"{ kind = "bulk" }"#,
            r#"{ kind = "bulk", bytes = "1B" }"#,
            r#""rpc""#,
            r#"{ kind = "rpc", request = "1B", response = "1MB", count = 3 }"#,
            r#"{ kind = "rpc", request = "100KB", response = "1B", think = "1ms", samples = 5 }"#,
        ],
    ),
    ("flow.f1.tcp.tcp_sack", &["0", "1"]),
    ("flow.f1.tcp.tcp_timestamps", &["0", "1"]),
    ("flow.f1.tcp.tcp_ecn", &["0", "1"]),
    ("flow.f1.tcp.mtu", &["68", "576", "9000"]),
    ("node.h1.qdisc", &[r#""pfifo""#, r#""fq""#]),
];

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x5ce2),
        ..ProptestConfig::default()
    })]

    #[test]
    fn test_accepted_random_scenarios_run(picks in prop::collection::vec((0..RUN_SETS.len(), any::<usize>()), 1..8)) {
        // Start the flow inside the 300 ms that check() runs.
        let mut sets = vec!["flow.f1.start=0s".to_string()];
        sets.extend(picked_sets(RUN_SETS, picks));
        check(VALID, &sets)?;
    }

    #[test]
    fn test_accepted_random_multi_flow_scenarios_run(picks in prop::collection::vec((any::<usize>(), any::<usize>()), 1..8)) {
        check_named("multi.toml", MULTI, &picked_sets(MULTI_SETS, picks))?;
    }
}

/// Three hosts into a fourth through one switch: a repeated bulk flow, an
/// RPC flow and a paced bulk flow share the port, for [`MULTI_SETS`].
const MULTI: &str = r#"[run]
duration = "300ms"
seed = 5

[[node]]
name = "h1"
[[node]]
name = "h2"
qdisc = "fq"
[[node]]
name = "h3"
[[node]]
name = "sw"
kind = "switch"

[[link]]
name = "l1"
a = "h1"
b = "sw"
rate = "1Gbit"
delay = "10us"
[[link]]
name = "l2"
a = "h2"
b = "sw"
rate = "1Gbit"
delay = "10us"
[[link]]
name = "port"
a = "sw"
b = "h3"
rate = "100Mbit"
delay = "1ms"
queue = { limit = "100p", ecn_threshold = "20p" }

[[flow]]
id = "bulk"
from = "h1"
to = "h3"
cc = "cubic"
app = { kind = "bulk", bytes = "200KB" }
repeat = 3
gap = "10ms"
[[flow]]
id = "rpc"
from = "h1"
to = "h3"
cc = "reno"
app = { kind = "rpc", request = "10KB", response = "10KB" }
[[flow]]
id = "paced"
from = "h2"
to = "h3"
cc = "dctcp"
"#;

const MULTI_SETS: &[(&str, &[&str])] = &[
    ("link.port.rate", &["10kbit", "1Mbit", "1Gbit", "100Gbit"]),
    ("link.port.queue", &[r#"{ limit = "1p" }"#, r#"{ limit = "3p", ecn_threshold = "1p" }"#, r#"{ bytes = 1000 }"#]),
    ("link.port.delay", &["0us", r#"{ model = "uniform", min = "0ms", max = "5ms" }"#]),
    ("node.h2.qdisc", &[r#""pfifo""#, r#"{ kind = "fq", pacing = "edt" }"#]),
    ("flow.bulk.cc", CcConfig::NAMES),
    ("flow.rpc.cc", CcConfig::NAMES),
    ("flow.paced.cc", CcConfig::NAMES),
    ("flow.paced.start", &["0s", "100ms"]),
    ("flow.rpc.nodelay", &["true", "false"]),
    ("flow.bulk.repeat", &["1", "50"]),
    ("flow.bulk.gap", &["0s", "1ms"]),
    ("flow.rpc.app", &[r#""rpc""#, r#"{ kind = "rpc", request = "1B", response = "3MB" }"#]),
    ("tcp.preset", PRESETS),
    ("tcp.tcp_ecn", &["0", "1", "2"]),
];

/// `--set` arguments from a table of keys and values.
fn picked_sets(table: &[(&str, &[&str])], picks: Vec<(usize, usize)>) -> Vec<String> {
    picks
        .into_iter()
        .map(|(k, v)| {
            let (key, values) = table[k % table.len()];
            format!("{key}={}", values[v % values.len()])
        })
        .collect()
}

#[test]
fn test_seed_scenario_is_valid() {
    load_str("fuzz.toml", VALID, &[], None).unwrap();
    load_str("multi.toml", MULTI, &[], None).unwrap();
}
