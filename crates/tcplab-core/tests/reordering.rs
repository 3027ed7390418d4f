//! Reordering and the cwnd-growth rule of "tcp: increase throughput when
//! reordering is high" (v3.12), on hand-built ACK sequences: one sender,
//! ACKs crafted segment by segment.

mod common;

use common::sender::{Sender, ISS, MSS};
use tcplab_core::time::Instant;
use tcplab_core::{CaState, Mib, TcpConfig, TcpMetrics};

fn cached_reordering(r: u32) -> Option<TcpMetrics> {
    Some(TcpMetrics { reordering: r, ..Default::default() })
}

// ------------------------------------------------------------ growth rule

#[test]
fn test_disorder_sack_only_ack_grows_cwnd_only_under_patch_rule_when_reordering_high() {
    for (preset, grows) in [("v3.12", true), ("v3.11", false)] {
        let cfg = TcpConfig::preset(preset).unwrap();
        // The destination cache says reordering is 10 (> tcp_reordering).
        let mut s = Sender::new(cfg, cached_reordering(10), 200_000);
        assert_eq!(s.c.info().reordering, 10);
        s.ack(1, &[], None); // segment 0 acked in order
        s.ack(1, &[(2, 3)], None); // segment 2 SACKed: hole at 1 → Disorder
        assert_eq!(s.c.ca_state(), CaState::Disorder);
        let before = s.c.info().snd_cwnd;
        s.ack(1, &[(2, 4)], None); // SACK-only forward progress
        assert_eq!(s.c.ca_state(), CaState::Disorder);
        let after = s.c.info().snd_cwnd;
        assert_eq!(after > before, grows, "{preset}: cwnd {before} → {after}");
    }
}

#[test]
fn test_disorder_sack_only_ack_in_current_kernel_grows_cwnd_unless_data_acked_rule() {
    // linux-current with the seed's rule switched off (the kernel
    // backend's tcp_input.forward_progress_growth=0): in slow start with
    // initcwnd 10, the SACK of segment 3 at reordering 10 is forward
    // progress but no data is cumulatively acked.
    use tcplab_core::config::CwndGrowthRule;
    for (rule, grows) in [(CwndGrowthRule::V3_12, true), (CwndGrowthRule::DataAcked, false)] {
        let cfg = TcpConfig { cwnd_growth: rule, ..TcpConfig::linux_current() };
        let mut s = Sender::new(cfg, cached_reordering(10), 200_000);
        s.ack(1, &[], None);
        assert_eq!(s.c.info().snd_cwnd, 11, "{rule:?}: one segment acked in slow start");
        s.ack(1, &[(2, 3)], None);
        assert_eq!(s.c.ca_state(), CaState::Disorder);
        let before = s.c.info().snd_cwnd;
        s.ack(1, &[(2, 4)], None);
        let after = s.c.info().snd_cwnd;
        // Current Linux counts delivered segments: the SACK of segment 3
        // delivers one, +1 in slow start.
        let want = if grows { before + 1 } else { before };
        assert_eq!(after, want, "{rule:?}: cwnd {before} → {after}");
        // A cumulative ACK grows cwnd under both rules.
        s.ack(4, &[], None);
        assert!(s.c.info().snd_cwnd > after, "{rule:?}");
    }
}

#[test]
fn test_low_reordering_rules_agree() {
    // reordering == tcp_reordering (3): both rules grow only on
    // cumulative ACKs.
    let mut results = vec![];
    for preset in ["v3.11", "v3.12"] {
        let cfg = TcpConfig::preset(preset).unwrap();
        let mut s = Sender::new(cfg, None, 200_000);
        s.ack(1, &[], None);
        let c0 = s.c.info().snd_cwnd;
        s.ack(1, &[(2, 3)], None);
        let c1 = s.c.info().snd_cwnd;
        s.ack(4, &[], None); // hole filled: cumulative progress
        let c2 = s.c.info().snd_cwnd;
        results.push((c0, c1, c2));
    }
    assert_eq!(results[0], results[1], "v3.11 vs v3.12 at reordering 3");
    let (c0, c1, c2) = results[0];
    assert_eq!(c1, c0, "a SACK-only ACK does not grow cwnd at reordering 3");
    assert!(c2 > c1, "a cumulative ACK does");
}

// ------------------------------------------------------------ reordering metric

#[test]
fn test_reordered_delivery_raises_reordering_by_its_distance() {
    // Segment 8 is SACKed, then a cumulative ACK covers 0..9: segment 0
    // (never retransmitted) arrived 9 segments late in sequence space.
    let mut s = Sender::new(TcpConfig::default(), None, 200_000);
    s.ack(0, &[(8, 9)], None);
    assert_eq!(s.c.info().reordering, 3);
    s.ack(9, &[], None);
    assert_eq!(s.c.info().reordering, 9);
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPSACKReorder), 1);
    assert_eq!(s.c.info().reord_seen, 1);
}

#[test]
fn test_sack_blocks_walked_in_sequence_order_are_not_reordering() {
    // Segments 1 and 4 lost; one ACK brings two new SACK blocks, the most
    // recent first as receivers send them: [5, 6) then [2, 4). Linux sorts
    // the blocks before the walk (tcp_sacktag_write_queue), so segments 2
    // and 3 are tagged before 5 and none is below the highest SACK when
    // tagged: no reordering. Walking [5, 6) first would see 2 and 3 "below
    // the highest SACK" and count reordering on a path that has none.
    for preset in ["linux-current", "v4.17", "v3.12"] {
        let mut s = Sender::new(TcpConfig::preset(preset).unwrap(), None, 200_000);
        s.ack(1, &[(5, 6), (2, 4)], None);
        assert_eq!(s.c.counters().get(Mib::TcpExtTCPSACKReorder), 0, "{preset}");
        assert_eq!(s.c.info().reord_seen, 0, "{preset}");
        assert_eq!(s.c.info().reordering, 3, "{preset}");
        assert_eq!(s.c.info().sacked, 3, "{preset}: segments 2, 3 and 5 are SACKed");
    }
}

#[test]
fn test_reordering_never_exceeds_tcp_max_reordering() {
    let cfg = TcpConfig { tcp_max_reordering: 5, ..TcpConfig::default() };
    let mut s = Sender::new(cfg, None, 200_000);
    s.ack(0, &[(8, 9)], None);
    s.ack(9, &[], None);
    assert_eq!(s.c.info().reordering, 5);
}

#[test]
fn test_v3_reordering_counted_in_packets() {
    // 3.x: a cached reordering (5) is restored and switches FACK off; a
    // hole of 6 packets filled by the original raises reordering to 6,
    // counted as TCPSACKReorder (FACK off), via tcp_update_reordering.
    let mut s = Sender::new(TcpConfig::preset("v3.12").unwrap(), cached_reordering(5), 200_000);
    assert_eq!(s.c.info().reordering, 5);
    s.ack(0, &[(5, 6)], None);
    assert_eq!(s.c.ca_state(), CaState::Disorder);
    s.ack(6, &[], None);
    assert_eq!(s.c.info().reordering, 6);
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPSACKReorder), 1);
    assert_eq!(s.c.counters().get(Mib::TcpExtTCPFACKReorder), 0);
    // A shorter reordering later does not lower it.
    s.ack(6, &[(8, 9)], None);
    s.ack(9, &[], None);
    assert_eq!(s.c.info().reordering, 6);
}

// ------------------------------------------------------------ D-SACK undo

#[test]
fn test_dsack_of_spurious_fast_retransmit_restores_cwnd_and_ssthresh() {
    // SACK-based loss detection of the patch's era (RACK off), in the
    // v3.12 structure and in the current one.
    let current = TcpConfig { tcp_recovery: 0, ..TcpConfig::default() };
    for cfg in [TcpConfig::preset("v3.12").unwrap(), current] {
        let era = cfg.preset;
        let mut s = Sender::new(cfg, None, 400_000);
        for i in 1..=10 {
            s.ack(i, &[], None);
        }
        let prior = s.c.info();
        assert_eq!(prior.ca_state, CaState::Open);
        // Segment 10 is missing; three SACKs above it reach dupthresh.
        s.ack(10, &[(11, 12)], None);
        s.ack(10, &[(11, 13)], None);
        s.ack(10, &[(11, 14)], None);
        let rec = s.c.info();
        assert_eq!(rec.ca_state, CaState::Recovery, "{era}");
        assert!(rec.snd_ssthresh < prior.snd_cwnd, "{era}");
        assert_eq!(s.c.counters().get(Mib::TcpExtTCPFastRetrans), 1, "{era}: only the hole is retransmitted");
        // The original was only delayed: it fills the hole (a partial
        // ACK, still in Recovery), then the retransmission arrives and the
        // receiver D-SACKs it.
        s.ack(14, &[], None);
        assert_eq!(s.c.ca_state(), CaState::Recovery, "{era}");
        s.ack(14, &[], Some((10, 11)));
        let undone = s.c.info();
        assert_eq!(s.c.counters().get(Mib::TcpExtTCPDSACKUndo), 1, "{era}");
        assert_eq!(undone.snd_ssthresh, prior.snd_ssthresh.max(prior.snd_cwnd * 3 / 4), "{era}: prior ssthresh");
        assert!(
            undone.snd_cwnd >= prior.snd_cwnd,
            "{era}: cwnd {} restored to at least {}",
            undone.snd_cwnd,
            prior.snd_cwnd
        );
    }
}

// ------------------------------------------------------------ RACK's reordering window

/// Data segment indices sent since `from` (an index into `Sender::sent`).
fn sent_since(s: &Sender, from: usize) -> Vec<u32> {
    s.sent[from..].iter().filter(|g| g.payload_len > 0).map(|g| (g.seq.0 - ISS - 1) / MSS).collect()
}

#[test]
fn test_dsack_after_reordering_widens_racks_window_by_one_step() {
    // tcp_rack_update_reo_wnd: a D-SACK of a spurious retransmission, once
    // reordering has been seen, adds min_rtt/4 to RACK's reordering
    // window; the round trip is read from the ACK's rate sample
    // (rs->prior_delivered). The handshake's 10 ms is min_rtt: one step is
    // 2.5 ms, two are 5 ms. A hole sent 3.5 ms before a SACKed segment is
    // lost under one step and not under two. net.ipv4.tcp_recovery's
    // static bit (0x2) keeps one step: the control.
    let at = |s: &mut Sender, us: u64| s.now = Instant::from_micros(us - 100);
    let run = |tcp_recovery: u32| {
        let cfg = TcpConfig { tcp_recovery, ..TcpConfig::default() };
        let mut s = Sender::new(cfg, None, 400_000);
        // Segments 0-9 left at 10 ms. Segment 8 arrives first, then 0-7:
        // reordering seen, no retransmission.
        at(&mut s, 30_000);
        s.ack(0, &[(8, 9)], None);
        at(&mut s, 30_100);
        s.ack(9, &[], None);
        assert_eq!(s.c.info().reord_seen, 1);
        assert_eq!(s.c.info().total_retrans, 0);
        // Segment 10 (sent at 30 ms) is SACKed at 50 ms: segment 9 (10 ms)
        // is 20 ms older, lost, retransmitted.
        at(&mut s, 50_000);
        s.ack(9, &[(10, 11)], None);
        assert_eq!(s.c.info().total_retrans, 1);
        // The original was only late: the retransmission is D-SACKed.
        at(&mut s, 50_100);
        let first = s.sent.len();
        s.ack(12, &[], Some((9, 10)));
        let xs = sent_since(&s, first);
        // 3.5 ms later an ACK sends more.
        at(&mut s, 53_600);
        let second = s.sent.len();
        s.ack(13, &[], None);
        let ys = sent_since(&s, second);
        assert!(!xs.is_empty() && !ys.is_empty(), "sent at 50.1 ms {xs:?}, at 53.6 ms {ys:?}");
        // Everything below the first segment sent at 50.1 ms arrives; then
        // the first one sent at 53.6 ms is SACKed. (Separate ACKs: RACK's
        // RTT is the last (S)ACKed segment's, and a cumulative ACK walks
        // after the SACKs, as in tcp_ack.)
        let (x, y) = (xs[0], ys[0]);
        at(&mut s, 79_900);
        s.ack(x, &[], None);
        let before = s.c.info().total_retrans;
        at(&mut s, 80_000);
        s.ack(x, &[(y, y + 1)], None);
        s.c.info().total_retrans - before
    };
    assert_eq!(run(0x1), 0, "two steps (5 ms): a 3.5 ms gap is reordering");
    assert!(run(0x1 | 0x2) > 0, "static window, one step (2.5 ms): the 3.5 ms gap is loss");
}
