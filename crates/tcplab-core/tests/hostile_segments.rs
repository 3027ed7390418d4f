//! Hostile and corrupted input: during a transfer, segments made by
//! mutating real ones (sequence and ACK numbers moved a little or a lot,
//! any flag combination, any window, bogus SACK blocks and timestamps,
//! odd payload lengths and ECN codepoints) are fed to either end. Nothing
//! may panic, and both ends' accounting must hold after every event. (A
//! forged ACK can legitimately stall or reset a connection, and forged
//! in-window data is delivered as data, so delivery is not asserted here;
//! tests/op_sequences.rs covers it for honest paths.)

mod common;

use common::{check_accounting, Pair, Side};
use proptest::prelude::*;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::wire::{Ecn, SackBlock, SegmentRepr, SeqNum, TcpFlags};
use tcplab_core::{TcpConfig, TcpState};

#[derive(Clone, Debug)]
struct Mutation {
    /// When to inject, in steps of the transfer.
    at_step: usize,
    /// Inject into the server (else the client).
    to_server: bool,
    seq_delta: i64,
    ack_delta: i64,
    flags: u8,
    window: u16,
    payload_len: u32,
    ecn: u8,
    sack: Vec<(i64, i64)>,
    ts: Option<(u32, u32)>,
    syn_options: bool,
}

fn delta() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => -3000i64..3000,
        1 => any::<i32>().prop_map(i64::from),
        1 => Just(0i64),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    (
        (0usize..3000, any::<bool>(), delta(), delta(), any::<u8>(), any::<u16>()),
        (
            prop_oneof![Just(0u32), 1u32..3000, any::<u32>().prop_map(|x| x % 70_000)],
            0u8..4,
            prop::collection::vec((delta(), delta()), 0..5),
            prop::option::of((any::<u32>(), any::<u32>())),
            any::<bool>(),
        ),
    )
        .prop_map(
            |((at_step, to_server, seq_delta, ack_delta, flags, window), (payload_len, ecn, sack, ts, syn_options))| {
                Mutation {
                    at_step,
                    to_server,
                    seq_delta,
                    ack_delta,
                    flags,
                    window,
                    payload_len,
                    ecn,
                    sack,
                    ts,
                    syn_options,
                }
            },
        )
}

fn shift(s: SeqNum, d: i64) -> SeqNum {
    SeqNum(s.0.wrapping_add(d as u32))
}

/// The last segment `from` sent, mutated, as if it came from that side.
fn forge(p: &Pair, from: Side, m: &Mutation) -> Option<SegmentRepr> {
    let (_, _, t) = p.log.iter().rev().find(|(_, s, _)| *s == from)?;
    let mut seg = *t;
    seg.seq = shift(t.seq, m.seq_delta);
    seg.ack = shift(t.ack, m.ack_delta);
    seg.flags = TcpFlags(m.flags);
    seg.window = m.window;
    seg.payload_len = m.payload_len;
    seg.ecn = match m.ecn {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    seg.options.sack_len = 0;
    for &(a, b) in &m.sack {
        seg.options.push_sack(SackBlock { start: shift(t.ack, a), end: shift(t.ack, b) });
    }
    if m.ts.is_some() {
        seg.options.timestamp = m.ts;
    }
    if m.syn_options {
        seg.options.mss = Some(m.window % 2000);
        seg.options.wscale = Some(m.flags % 20);
        seg.options.sack_permitted = true;
    }
    Some(seg)
}

fn run(preset: &str, cc: &str, sack: bool, ts: bool, muts: &[Mutation]) {
    let mut cfg = TcpConfig::preset(preset).expect("known preset");
    cfg.congestion_control = CcConfig::from_name(cc).expect("known cc");
    cfg.tcp_sack = sack;
    cfg.tcp_timestamps = ts;
    let ctx = format!("preset {preset}, cc {cc}, sack {sack}, ts {ts}, mutations {muts:?}");
    let mut p = Pair::new(&cfg, &cfg, Duration::from_millis(5));
    p.ns_per_byte = 80;
    assert!(p.drive_until(1000, |p| p.client.state() == TcpState::Established), "handshake ({ctx})");
    let mut muts: Vec<&Mutation> = muts.iter().collect();
    muts.sort_by_key(|m| m.at_step);
    let mut next = 0;
    let total = 2_000_000u64;
    let mut written = 0u64;
    let deadline = Instant::from_millis(300_000);
    for step in 0..200_000 {
        if p.now >= deadline {
            break;
        }
        while next < muts.len() && muts[next].at_step <= step {
            let m = muts[next];
            next += 1;
            let from = if m.to_server { Side::Client } else { Side::Server };
            if let Some(seg) = forge(&p, from, m) {
                let now = p.now;
                if m.to_server {
                    p.server.handle_segment(now, &seg);
                } else {
                    p.client.handle_segment(now, &seg);
                }
            }
        }
        if written < total {
            written += p.client.write(total - written);
        }
        let more = p.step();
        check_accounting(&p.client.info(), &ctx);
        check_accounting(&p.server.info(), &ctx);
        if !more && next >= muts.len() {
            break;
        }
    }
}

proptest! {
    #![proptest_config(common::proptest_config(128, 0x5e9f))]

    #[test]
    fn prop_hostile_segments_never_panic_or_break_accounting(
        preset in proptest::sample::select(PRESETS),
        cc in proptest::sample::select(&["reno", "cubic", "dctcp", "bbr"][..]),
        sack in any::<bool>(),
        ts in any::<bool>(),
        muts in prop::collection::vec(mutation(), 1..40),
    ) {
        run(preset, cc, sack, ts, &muts);
    }
}
