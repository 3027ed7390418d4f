//! Bad scripts never panic the interpreter: Linux's packetdrill scripts
//! (read from ../shared at run time, GPLv2 test data, never copied here),
//! mutated line by line and character by character, must each end in a
//! pass, a fail with a message or a skip. Without ../shared the test
//! prints "SKIPPED" and checks only its own small script.

use proptest::prelude::*;
use std::path::{Path, PathBuf};
use tcplab_packetdrill::{collect_scripts, run_source, Outcome, RunOptions};

/// Used when ../shared is absent, so the property still runs.
const FALLBACK: &str = "\
0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
+0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
+0 bind(3, ..., ...) = 0
+0 listen(3, 1) = 0
+.05 < S 0:0(0) win 20000 <mss 1000,sackOK,nop,nop,nop,wscale 4>
+0 > S. 0:0(0) ack 1 <...>
+.05 < . 1:1(0) ack 1 win 1000
+0 accept(3, ..., ...) = 4
+0 write(4, ..., 3000) = 3000
+0 > . 1:1001(1000) ack 1 <...>
+.05 < . 1:1(0) ack 1001 win 1000 <sack 2001:3001,nop,nop>
+0 %{ assert tcpi_unacked >= 1, tcpi_unacked }%
";

fn corpus() -> Vec<(PathBuf, String)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/conformance/packetdrill/gtests");
    if !dir.is_dir() {
        println!("SKIPPED: ../shared not found; fuzzing the built-in script only");
        return vec![(PathBuf::from("fallback.pkt"), FALLBACK.to_string())];
    }
    let scripts = collect_scripts(&[dir]).expect("corpus readable");
    scripts.into_iter().map(|p| (p.clone(), std::fs::read_to_string(&p).expect("script readable"))).collect()
}

const TOKENS: &[&str] = &[
    "+0",
    "+.1",
    "0.5",
    "-1",
    "...",
    "<",
    ">",
    "S",
    "S.",
    "F.",
    "R",
    ".",
    "P.",
    "1:1(0)",
    "1:1001(1000)",
    "ack",
    "win 0",
    "<sack 1:2>",
    "<mss 0>",
    "<wscale 255>",
    "%{",
    "}%",
    "`",
    "=",
    "(",
    ")",
    "[",
    "]",
    "tcpi_snd_cwnd",
    "write(4, ..., 99999999)",
    "read(4, ..., 1000)",
    "close(4)",
    "4294967295",
    "\n",
    "@",
];

#[derive(Clone, Debug)]
enum Op {
    DropLine(usize),
    DupLine(usize),
    SwapLines(usize, usize),
    Insert(usize, usize),
    Delete(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        any::<usize>().prop_map(Op::DropLine),
        any::<usize>().prop_map(Op::DupLine),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::SwapLines(a, b)),
        (any::<usize>(), any::<usize>()).prop_map(|(at, t)| Op::Insert(at, t)),
        (any::<usize>(), 1usize..10).prop_map(|(at, n)| Op::Delete(at, n)),
    ]
}

fn mutate(text: &str, ops: &[Op]) -> String {
    let mut s = text.to_string();
    for op in ops {
        let mut lines: Vec<String> = s.split('\n').map(str::to_string).collect();
        let n = lines.len();
        match *op {
            Op::DropLine(i) => {
                lines.remove(i % n);
            }
            Op::DupLine(i) => {
                let l = lines[i % n].clone();
                lines.insert(i % n, l);
            }
            Op::SwapLines(a, b) => lines.swap(a % n, b % n),
            Op::Insert(at, t) | Op::Delete(at, t) => {
                let mut chars: Vec<char> = s.chars().collect();
                let a = at % (chars.len() + 1);
                if matches!(op, Op::Insert(..)) {
                    chars.splice(a..a, TOKENS[t % TOKENS.len()].chars());
                } else {
                    let b = (a + t).min(chars.len());
                    chars.drain(a..b);
                }
                s = chars.into_iter().collect();
                continue;
            }
        }
        s = lines.join("\n");
    }
    s
}

proptest! {
    // Fixed seed for CI; PROPTEST_RNG_SEED / PROPTEST_CASES search further.
    #![proptest_config(ProptestConfig {
        cases: 128,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x9d11),
        ..ProptestConfig::default()
    })]

    #[test]
    fn test_mutated_scripts_never_panic(pick in any::<usize>(), ops in prop::collection::vec(op(), 1..5)) {
        thread_local!(static CORPUS: Vec<(PathBuf, String)> = corpus());
        let (path, text) = CORPUS.with(|c| c[pick % c.len()].clone());
        let src = mutate(&text, &ops);
        let r = run_source(&src, Path::new(&path), &RunOptions::default());
        if let Outcome::Fail { message, .. } = &r.outcome {
            prop_assert!(!message.is_empty(), "a failure without a message: {}", path.display());
        }
    }
}
