//! Operation-sequence fuzzing (after s2n-quic's): a random sequence of
//! application and network operations (writes with and without EOR in
//! both directions, Nagle on and off, a slow reader that closes the
//! window, a local qdisc that drops everything for a while, spells of
//! loss, reordering, duplication and CE marks in both directions) drives
//! a pair of connections of a random kernel preset and congestion control.
//! After every step both ends' accounting must hold; at the end every byte
//! written must have been read once, in order, and the FIN delivered.

mod common;

use common::{check_accounting, Fate, Lcg, Pair};
use proptest::prelude::*;
use std::cell::Cell;
use std::rc::Rc;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::time::Duration;
use tcplab_core::{TcpConfig, TcpState};

/// What the path does to each segment, in per-mille, both directions.
#[derive(Clone, Copy, Debug, Default)]
struct Path {
    loss: u32,
    reorder: u32,
    dup: u32,
    ce: u32,
}

#[derive(Clone, Debug)]
enum Op {
    Write(u64),
    WriteEor(u64),
    Nodelay(bool),
    /// Let this many ms of virtual time pass.
    Run(u64),
    /// The server application stops reading for this many ms.
    PauseReader(u64),
    /// The server writes this much back to the client.
    ServerWrite(u64),
    /// The client's transmissions fail locally (`set_xmit_blocked`).
    BlockXmit(bool),
    SetPath(Path),
}

fn path() -> impl Strategy<Value = Path> {
    (0u32..50, 0u32..150, 0u32..30, 0u32..100).prop_map(|(loss, reorder, dup, ce)| Path { loss, reorder, dup, ce })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..300_000).prop_map(Op::Write),
        1 => (1u64..20_000).prop_map(Op::WriteEor),
        1 => any::<bool>().prop_map(Op::Nodelay),
        3 => (1u64..400).prop_map(Op::Run),
        1 => (1u64..3_000).prop_map(Op::PauseReader),
        1 => (1u64..100_000).prop_map(Op::ServerWrite),
        1 => any::<bool>().prop_map(Op::BlockXmit),
        2 => path().prop_map(Op::SetPath),
    ]
}

fn run(preset: &str, cc: &str, seed: u64, ops: &[Op]) {
    let mut cfg = TcpConfig::preset(preset).expect("known preset");
    cfg.congestion_control = CcConfig::from_name(cc).expect("known cc");
    let ctx = format!("preset {preset}, cc {cc}, seed {seed}, ops {ops:?}");
    let mut p = Pair::new(&cfg, &cfg, Duration::from_millis(5));
    p.ns_per_byte = 80; // 100 Mbit/s
    let shared = Rc::new(Cell::new(Path::default()));
    let path = shared.clone();
    let mut rng = Lcg(seed);
    p.filter = Box::new(move |_, _, seg| {
        let path = path.get();
        if seg.flags.syn() {
            return Fate::Deliver; // keep the handshake intact
        }
        if rng.below(1000) < path.loss {
            Fate::Drop
        } else if rng.below(1000) < path.reorder {
            Fate::Delay(Duration::from_micros(u64::from(rng.below(3_000))))
        } else if rng.below(1000) < path.dup {
            Fate::Duplicate(Duration::from_micros(u64::from(rng.below(2_000))))
        } else if rng.below(1000) < path.ce {
            Fate::MarkCe
        } else {
            Fate::Deliver
        }
    });
    assert!(p.drive_until(1000, |p| p.client.state() == TcpState::Established), "handshake ({ctx})");

    let mut written = 0u64;
    let mut pending = 0u64; // accepted by nobody yet: the send buffer was full
    let mut server_written = 0u64;
    let step = |p: &mut Pair, written: u64| -> bool {
        let more = p.step();
        check_accounting(&p.client.info(), &ctx);
        check_accounting(&p.server.info(), &ctx);
        assert!(p.server_read <= written, "read more than was written ({ctx})");
        more
    };
    for op in ops {
        match *op {
            Op::Write(n) => pending += n,
            Op::WriteEor(n) => {
                // An EOR write only goes in whole; the rest is queued as plain data.
                if pending == 0 {
                    let w = p.client.write_eor(n);
                    written += w;
                    pending += n - w;
                } else {
                    pending += n;
                }
            }
            Op::Nodelay(on) => p.client.set_nodelay(on),
            Op::Run(ms) => {
                let until = p.now + Duration::from_millis(ms);
                while p.now < until {
                    if pending > 0 {
                        let w = p.client.write(pending);
                        written += w;
                        pending -= w;
                    }
                    if !step(&mut p, written) {
                        break;
                    }
                }
            }
            Op::PauseReader(ms) => p.server_paused_until = p.now + Duration::from_millis(ms),
            Op::ServerWrite(n) => server_written += p.server.write(n),
            Op::BlockXmit(on) => p.client.set_xmit_blocked(on),
            Op::SetPath(path) => shared.set(path),
        }
    }

    // Heal the path, finish the transfer and close.
    shared.set(Path::default());
    p.client.set_xmit_blocked(false);
    let total = written + pending;
    let deadline = p.now + Duration::from_secs(900);
    let mut closed = false;
    while p.now < deadline {
        if pending > 0 {
            let w = p.client.write(pending);
            written += w;
            pending -= w;
        }
        if pending == 0 && !closed {
            p.client.close();
            closed = true;
        }
        if !step(&mut p, written) {
            break;
        }
        if p.server_read == total && p.server.read_closed() && p.client_read == server_written {
            break;
        }
    }
    assert_eq!(p.client_read, server_written, "every byte the server wrote read once ({ctx})");
    assert_eq!(p.server_read, total, "every byte read once ({ctx})");
    assert_eq!(p.server.info().bytes_received, total + 1, "each byte counted once, plus the FIN ({ctx})");
    assert!(p.server.read_closed(), "FIN delivered after all data ({ctx})");
}

proptest! {
    #![proptest_config(common::proptest_config(192, 0x0b5e9))]

    #[test]
    fn prop_op_sequences_keep_the_invariants(
        preset in proptest::sample::select(PRESETS),
        cc in proptest::sample::select(&["reno", "cubic", "dctcp", "bbr"][..]),
        seed in any::<u64>(),
        ops in proptest::collection::vec(op(), 1..24),
    ) {
        run(preset, cc, seed, &ops);
    }
}
