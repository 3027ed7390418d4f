//! Hand-built send/ACK sequences for the rate sampler. Each expected value
//! is worked out in the comments from the tcp_rate.c formulas.

use super::*;

const MSS: u32 = 1000;

fn seq(n: u32) -> SeqNum {
    SeqNum(n)
}

/// An skb as the connection would keep it: its snapshot and send facts.
#[derive(Clone, Copy, Debug)]
struct Skb {
    tx: SkbTxRate,
    sent_us: u64,
    end_seq: SeqNum,
    retrans: bool,
}

impl Skb {
    fn delivered(&mut self, r: &mut TcpRate, rs: &mut RateSample, sacked: bool) {
        let d = DeliveredSkb {
            tx_mstamp_us: self.sent_us,
            end_seq: self.end_seq,
            retrans: self.retrans,
            sacked_acked: sacked,
        };
        r.skb_delivered(&mut self.tx, &d, rs);
    }
}

fn send(r: &mut TcpRate, at_us: u64, end: u32, packets_out: u32, delivered: u32) -> Skb {
    let tx = r.skb_sent(at_us, packets_out, delivered, 0);
    Skb { tx, sent_us: at_us, end_seq: seq(end), retrans: false }
}

fn gen_in(now_us: u64, delivered: u32, min_rtt_us: u32) -> RateGenInput {
    RateGenInput { now_us, delivered, delivered_ce: 0, min_rtt_us }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

#[test]
fn test_stamp_us_delta_saturates_and_truncates() {
    assert_eq!(tcp_stamp_us_delta(150, 100), 50);
    assert_eq!(tcp_stamp_us_delta(100, 150), 0);
    // s64 difference truncated to the u32 return type.
    assert_eq!(tcp_stamp_us_delta((1 << 32) + 7, 0), 7);
}

#[test]
fn test_skb_sent_after_time_then_end_seq() {
    assert!(tcp_skb_sent_after(11, 10, seq(1), seq(100)));
    assert!(!tcp_skb_sent_after(9, 10, seq(200), seq(100)));
    // Same µs (one TSO burst): the higher end sequence is the later one.
    assert!(tcp_skb_sent_after(10, 10, seq(200), seq(100)));
    assert!(!tcp_skb_sent_after(10, 10, seq(100), seq(100)));
    assert!(tcp_skb_sent_after(10, 10, seq(5), seq(u32::MAX - 5))); // wraps
}

// ---------------------------------------------------------------------------
// A first flight and the next ACKs
// ---------------------------------------------------------------------------

#[test]
fn test_first_flight_samples_take_latest_sent_and_longer_phase() {
    let mut r = TcpRate::default();
    // P1..P4 sent 100 µs apart from t = 10 ms, nothing delivered yet. The
    // first send after idle (packets_out 0) starts the clocks at 10000.
    let mut p1 = send(&mut r, 10_000, 1000, 0, 0);
    let mut p2 = send(&mut r, 10_100, 2000, 1, 0);
    let mut p3 = send(&mut r, 10_200, 3000, 2, 0);
    let mut p4 = send(&mut r, 10_300, 4000, 3, 0);
    assert_eq!(r.first_tx_mstamp, 10_000);
    assert_eq!(r.delivered_mstamp, 10_000);
    for p in [p1, p2, p3, p4] {
        assert_eq!(p.tx, SkbTxRate { first_tx_mstamp: 10_000, delivered_mstamp: 10_000, ..Default::default() });
    }

    // ACK 1 at 50 ms cumulatively acks P1, P2. prior_delivered is 0 for
    // both, so each one is taken (`!rs->prior_delivered`): P2 last.
    let mut rs = RateSample { prior_in_flight: 4, ..Default::default() };
    p1.delivered(&mut r, &mut rs, false);
    assert_eq!(rs.interval_us, 0); // 10000 - 10000
    p2.delivered(&mut r, &mut rs, false);
    assert_eq!((rs.interval_us, rs.last_end_seq, r.first_tx_mstamp), (100, seq(2000), 10_100));
    // tp->delivered = 2; min RTT = P2's RTT, 50000 - 10100 = 39900.
    r.gen(&gen_in(50_000, 2, 39_900), 2, 0, false, &mut rs);
    // delivered = 2 - 0; snd = 100, ack = 50000 - 10000 = 40000.
    assert_eq!(rs.delivered, 2);
    assert_eq!((rs.snd_interval_us, rs.rcv_interval_us, rs.interval_us), (100, 40_000, 40_000));
    assert_eq!((rs.acked_sacked, rs.losses, rs.prior_mstamp), (2, 0, 10_000));
    assert_eq!(r.delivered_mstamp, 50_000);
    assert_eq!((r.rate_delivered, r.rate_interval_us, r.rate_app_limited), (2, 40_000, false));
    // tcpi_delivery_rate: 2 · 1000 · 10^6 / 40000.
    assert_eq!(r.delivery_rate(MSS), 50_000);

    // P5 sent at 50 ms with 2 out: it snapshots the state of ACK 1.
    let mut p5 = send(&mut r, 50_000, 5000, 2, 2);
    assert_eq!(
        p5.tx,
        SkbTxRate { first_tx_mstamp: 10_100, delivered_mstamp: 50_000, delivered: 2, ..Default::default() }
    );

    // ACK 2 at 50.3 ms acks P3, P4: delivered 4 - 0 over max(300, 40300).
    let mut rs = RateSample::default();
    p3.delivered(&mut r, &mut rs, false);
    p4.delivered(&mut r, &mut rs, false);
    r.gen(&gen_in(50_300, 4, 39_900), 2, 0, false, &mut rs);
    assert_eq!((rs.delivered, rs.snd_interval_us, rs.interval_us), (4, 300, 40_300));

    // ACK 3 at 90 ms acks P5: P3..P5 (delivered 5 - 2 = 3) over
    // snd = 50000 - 10100 = 39900, ack = 90000 - 50000 = 40000.
    let mut rs = RateSample::default();
    p5.delivered(&mut r, &mut rs, false);
    r.gen(&gen_in(90_000, 5, 39_900), 1, 0, false, &mut rs);
    assert_eq!((rs.prior_delivered, rs.delivered), (2, 3));
    assert_eq!((rs.snd_interval_us, rs.rcv_interval_us, rs.interval_us), (39_900, 40_000, 40_000));
    assert_eq!(r.delivery_rate(MSS), 75_000); // 3 · 1000 · 10^6 / 40000
}

// ---------------------------------------------------------------------------
// Application-limited restart, SACK, loss and a retransmission
// ---------------------------------------------------------------------------

/// After idle, the application writes A, B, C; A is lost, B and C are
/// SACKed, A is retransmitted with new data D behind it.
fn idle_then_abc() -> (TcpRate, [Skb; 3]) {
    let mut r = TcpRate {
        delivered_mstamp: 100_000,
        first_tx_mstamp: 90_000,
        rate_delivered: 5,
        rate_interval_us: 100_000,
        ..Default::default()
    };
    // tcp_sendmsg finds nothing to send, nothing queued, cwnd open:
    // app_limited = delivered + in_flight = 10 + 0.
    let idle = AppLimitedInput {
        write_seq: seq(10_000),
        snd_nxt: seq(10_000),
        mss_cache: MSS,
        host_queue_empty: true,
        packets_in_flight: 0,
        snd_cwnd: 10,
        lost_out: 0,
        retrans_out: 0,
        delivered: 10,
    };
    r.check_app_limited(&idle);
    assert_eq!(r.app_limited, 10);
    let a = send(&mut r, 200_000, 11_000, 0, 10);
    let b = send(&mut r, 201_000, 12_000, 1, 10);
    let c = send(&mut r, 202_000, 13_000, 2, 10);
    // The first send after idle restarts both clocks at 200000.
    for s in [a, b, c] {
        assert_eq!(
            s.tx,
            SkbTxRate {
                first_tx_mstamp: 200_000,
                delivered_mstamp: 200_000,
                delivered: 10,
                delivered_ce: 0,
                is_app_limited: true
            }
        );
    }
    (r, [a, b, c])
}

#[test]
fn test_app_limited_sack_and_retransmit_sequence() {
    let (mut r, [mut a, mut b, mut c]) = idle_then_abc();

    // t = 300 ms: SACK of B. prior = B's snapshot; send phase 201000 -
    // 200000; B is marked used.
    let mut rs = RateSample::default();
    b.delivered(&mut r, &mut rs, true);
    assert_eq!((rs.prior_delivered, rs.prior_mstamp, rs.is_app_limited), (10, 200_000, true));
    assert_eq!(b.tx.delivered_mstamp, 0);
    r.gen(&gen_in(300_000, 11, 99_000), 1, 0, false, &mut rs);
    // delivered 11 is after the marker 10: the app-limited period ends.
    assert_eq!(r.app_limited, 0);
    // 1 packet over max(1000, 300000 - 200000).
    assert_eq!((rs.delivered, rs.interval_us), (1, 100_000));
    // App-limited and 1·100000 < 5·100000: tcp_info keeps the old sample.
    assert_eq!((r.rate_delivered, r.rate_interval_us), (5, 100_000));

    // t = 301 ms: SACK of C, and RACK marks A lost.
    let mut rs = RateSample::default();
    c.delivered(&mut r, &mut rs, true);
    r.gen(&gen_in(301_000, 12, 99_000), 1, 1, false, &mut rs);
    assert_eq!((rs.delivered, rs.snd_interval_us, rs.interval_us, rs.losses), (2, 2_000, 101_000, 1));
    assert!(rs.is_app_limited);
    // 2·100000 < 5·101000: still not recorded.
    assert_eq!(r.rate_delivered, 5);

    // t = 310 ms: A retransmitted (3 still out: no clock restart), then D.
    a.tx = r.skb_sent(310_000, 3, 12, 0);
    a.sent_us = 310_000;
    a.retrans = true;
    assert_eq!(
        a.tx,
        SkbTxRate {
            first_tx_mstamp: 202_000,
            delivered_mstamp: 301_000,
            delivered: 12,
            delivered_ce: 0,
            is_app_limited: false
        }
    );

    // t = 400 ms: the cumulative ACK of A, B, C. B and C were used by their
    // SACKs and give nothing; A gives a retransmission sample.
    let mut rs = RateSample::default();
    for s in [&mut a, &mut b, &mut c] {
        s.delivered(&mut r, &mut rs, false);
    }
    assert!(rs.is_retrans);
    assert_eq!((rs.prior_delivered, rs.prior_mstamp, rs.last_end_seq), (12, 301_000, seq(11_000)));
    r.gen(&gen_in(400_000, 13, 99_000), 1, 0, false, &mut rs);
    // 1 packet; send phase 310000 - 202000 = 108000 beats the ACK phase
    // 400000 - 301000 = 99000.
    assert_eq!((rs.delivered, rs.snd_interval_us, rs.rcv_interval_us, rs.interval_us), (1, 108_000, 99_000, 108_000));
    assert_eq!((r.rate_delivered, r.rate_interval_us, r.rate_app_limited), (1, 108_000, false));
}

#[test]
fn test_sacked_newer_skb_wins_over_later_acked_retransmission() {
    let (mut r, [mut a, mut b, mut c]) = idle_then_abc();
    let mut rs = RateSample::default();
    b.delivered(&mut r, &mut rs, true);
    r.gen(&gen_in(300_000, 11, 99_000), 1, 0, false, &mut rs);
    let mut rs = RateSample::default();
    c.delivered(&mut r, &mut rs, true);
    r.gen(&gen_in(301_000, 12, 99_000), 1, 1, false, &mut rs);
    a.tx = r.skb_sent(310_000, 3, 12, 0);
    a.sent_us = 310_000;
    a.retrans = true;
    let mut d = send(&mut r, 311_000, 14_000, 3, 12);

    // t = 400 ms: one ACK SACKs D (tagging runs first) and cumulatively
    // acks A..C. D was sent after A, so A does not replace it.
    let mut rs = RateSample::default();
    d.delivered(&mut r, &mut rs, true);
    assert_eq!((rs.interval_us, rs.last_end_seq), (109_000, seq(14_000))); // 311000 - 202000
    for s in [&mut a, &mut b, &mut c] {
        s.delivered(&mut r, &mut rs, false);
    }
    assert!(!rs.is_retrans);
    assert_eq!((rs.last_end_seq, r.first_tx_mstamp), (seq(14_000), 311_000));
    r.gen(&gen_in(400_000, 14, 99_000), 2, 0, false, &mut rs);
    assert_eq!((rs.delivered, rs.interval_us), (2, 109_000));
}

#[test]
fn test_same_send_time_higher_end_seq_wins_either_order() {
    for sack_high_first in [false, true] {
        let mut r = TcpRate { delivered_mstamp: 1_000, first_tx_mstamp: 1_000, ..Default::default() };
        // Two skbs of one burst: same µs, delivered 7 at send.
        let mut lo = send(&mut r, 5_000, 2_000, 1, 7);
        let mut hi = send(&mut r, 5_000, 3_000, 2, 7);
        let mut rs = RateSample::default();
        if sack_high_first {
            hi.delivered(&mut r, &mut rs, true);
            lo.delivered(&mut r, &mut rs, false);
        } else {
            lo.delivered(&mut r, &mut rs, false);
            hi.delivered(&mut r, &mut rs, false);
        }
        assert_eq!(rs.last_end_seq, seq(3_000), "sack_high_first={sack_high_first}");
    }
}

// ---------------------------------------------------------------------------
// Invalid samples
// ---------------------------------------------------------------------------

#[test]
fn test_gen_without_timing_or_with_reneg_is_invalid() {
    // No skb with timing was delivered (a pure dupack): prior_mstamp 0.
    let mut r = TcpRate { delivered_mstamp: 5, ..Default::default() };
    let mut rs = RateSample::default();
    r.gen(&gen_in(1_000, 3, 10), 0, 2, false, &mut rs);
    assert_eq!((rs.delivered, rs.interval_us, rs.losses, rs.acked_sacked), (-1, -1, 2, 0));
    // Nothing delivered: delivered_mstamp unchanged.
    assert_eq!(r.delivered_mstamp, 5);

    // SACK reneging: invalid even with timing.
    let mut r = TcpRate::default();
    let mut s = send(&mut r, 100, 1000, 0, 0);
    let mut rs = RateSample::default();
    s.delivered(&mut r, &mut rs, false);
    r.gen(&gen_in(50_000, 1, 10), 1, 0, true, &mut rs);
    assert_eq!((rs.delivered, rs.interval_us), (-1, -1));
    assert_eq!(r.delivered_mstamp, 50_000);
}

#[test]
fn test_gen_interval_below_min_rtt_is_discarded() {
    let mut r = TcpRate::default();
    let mut s = send(&mut r, 1_000, 1000, 0, 0);
    let mut rs = RateSample::default();
    s.delivered(&mut r, &mut rs, false);
    // Interval max(0, 30000 - 1000) = 29000 < min RTT 29001.
    r.gen(&gen_in(30_000, 1, 29_001), 1, 0, false, &mut rs);
    assert_eq!((rs.delivered, rs.interval_us, rs.rcv_interval_us), (1, -1, 29_000));
    assert_eq!(r.rate_delivered, 0);
    // Equal to min RTT is fine.
    let mut r = TcpRate::default();
    let mut s = send(&mut r, 1_000, 1000, 0, 0);
    let mut rs = RateSample::default();
    s.delivered(&mut r, &mut rs, false);
    r.gen(&gen_in(30_000, 1, 29_000), 1, 0, false, &mut rs);
    assert_eq!(rs.interval_us, 29_000);
    // Before any RTT sample tcp_min_rtt() is ~0U: every sample is too short.
    let mut rs2 = RateSample { prior_mstamp: 1, interval_us: 5, ..Default::default() };
    r.gen(&gen_in(200_000, 1, u32::MAX), 1, 0, false, &mut rs2);
    assert_eq!(rs2.interval_us, -1);
}

#[test]
fn test_app_limited_sample_recorded_only_when_faster() {
    let mut r = TcpRate { rate_delivered: 10, rate_interval_us: 100_000, ..Default::default() };
    // 10 in 100000 recorded; an app-limited 11 in 100000 beats it
    // (11·100000 ≥ 10·100000), an app-limited 9 does not.
    let mut rs = RateSample { prior_mstamp: 1, prior_delivered: 1, is_app_limited: true, ..Default::default() };
    r.gen(&gen_in(100_001, 10, 1), 9, 0, false, &mut rs);
    assert_eq!((rs.delivered, rs.interval_us), (9, 100_000));
    assert_eq!(r.rate_delivered, 10);
    let mut rs = RateSample { prior_mstamp: 1, prior_delivered: 1, is_app_limited: true, ..Default::default() };
    r.gen(&gen_in(100_001, 12, 1), 11, 0, false, &mut rs);
    assert_eq!((r.rate_delivered, r.rate_app_limited), (11, true));
}

#[test]
fn test_delivered_ce_keeps_twenty_bits() {
    let mut r = TcpRate::default();
    let tx = r.skb_sent(10, 0, 0, (1 << 20) + 3);
    assert_eq!(tx.delivered_ce, 3);
    let mut rs = RateSample::default();
    let mut tx = tx;
    let d = DeliveredSkb { tx_mstamp_us: 10, end_seq: seq(1), retrans: false, sacked_acked: false };
    r.skb_delivered(&mut tx, &d, &mut rs);
    // tp->delivered_ce wrapped its 20 bits since: (2 - 3) & mask.
    let tp = RateGenInput { now_us: 100, delivered: 4, delivered_ce: (1 << 21) + 2, min_rtt_us: 1 };
    r.gen(&tp, 4, 0, false, &mut rs);
    assert_eq!(rs.delivered_ce, ((2u32.wrapping_sub(3)) & TCPCB_DELIVERED_CE_MASK) as i32);
}

// ---------------------------------------------------------------------------
// tcp_rate_check_app_limited
// ---------------------------------------------------------------------------

#[test]
fn test_check_app_limited_conditions() {
    let base = AppLimitedInput {
        write_seq: seq(5_999),
        snd_nxt: seq(5_000),
        mss_cache: MSS,
        host_queue_empty: true,
        packets_in_flight: 3,
        snd_cwnd: 10,
        lost_out: 1,
        retrans_out: 1,
        delivered: 40,
    };
    let marked = |c: AppLimitedInput| {
        let mut r = TcpRate::default();
        r.check_app_limited(&c);
        r.app_limited
    };
    // 999 bytes unsent < MSS, queue empty, 3 < 10, all lost retransmitted.
    assert_eq!(marked(base), 43);
    assert_eq!(marked(AppLimitedInput { write_seq: seq(6_000), ..base }), 0); // a full MSS to send
    assert_eq!(marked(AppLimitedInput { host_queue_empty: false, ..base }), 0);
    assert_eq!(marked(AppLimitedInput { packets_in_flight: 10, ..base }), 0); // cwnd-limited
    assert_eq!(marked(AppLimitedInput { lost_out: 2, ..base }), 0); // a loss to repair
                                                                    // delivered + in_flight = 0 gives the marker 1.
    assert_eq!(marked(AppLimitedInput { packets_in_flight: 0, delivered: 0, ..base }), 1);
    // Across the u32 wrap of write_seq.
    assert_eq!(marked(AppLimitedInput { write_seq: seq(10), snd_nxt: seq(u32::MAX - 10), ..base }), 43);
}
