//! Hand-computed BBR tests: the kernel's integer arithmetic on chosen
//! values, and traces through each mode transition. Every expected number
//! is derived in the comments from the tcp_bbr.c formulas.
//!
//! The path of the traces: MSS 1000 bytes, min RTT 100 ms, HZ 1000. At
//! these rates every pacing rate lies between 150 kB/s and 2 MB/s, so
//! `bbr_tso_segs_goal` is always 2 (1 ms of pacing is < 2 MSS, and
//! `bbr_min_tso_segs` is 2), and the quantization budget adds 3·2 = 6.
//! Bandwidths (pkts/µs << 24) of d packets per 100 ms, `d·2^24/100000`:
//! 10 → 1677, 20 → 3355, 30 → 5033, 50 → 8388.

use super::*;
use crate::time::Instant;

const MSS: u32 = 1000;
const RTT_US: u32 = 100_000;
/// 50 packets per 100 ms.
const BW50: u32 = 8388;
/// The interval of samples that must stay below the bandwidth estimate
/// (ACKs that end no round deliver `tp->delivered − 999` packets: at most
/// ~100 over 1 s is at most 1677).
const ONE_S: i64 = 1_000_000;

/// `rate(bw, gain)` of the path's MSS, for the few places a test needs
/// one that is derived in its own comment.
fn rate(bw: u32, gain: u32) -> u64 {
    bbr_rate_bytes_per_sec(MSS, bw as u64, gain)
}

/// `tcp_jiffies32` at `ms` into the run (HZ 1000, from INITIAL_JIFFIES).
fn jiffies_at_ms(ms: u64) -> u32 {
    Instant::from_millis(ms).jiffies32(1000)
}

/// One ACK, as the connection would hand it to `cong_control`.
#[derive(Clone, Copy, Debug)]
struct Ack {
    /// Packets newly (S)ACKed.
    acked: u32,
    /// `rs.prior_delivered`; `None`: `tp->delivered` before this ACK (the
    /// newest packet acked was sent after the previous ACK: a round
    /// starts whenever the previous one ended).
    prior_delivered: Option<u32>,
    /// `rs.interval_us`; −1 with `acked == 0` makes an ACK that delivers
    /// nothing (invalid sample).
    interval_us: i64,
    losses: u32,
    /// `tcp_packets_in_flight` after the ACK.
    in_flight: u32,
    prior_in_flight: u32,
    rtt_us: i64,
    app_limited: bool,
}

const ACK: Ack = Ack {
    acked: 50,
    prior_delivered: None,
    interval_us: RTT_US as i64,
    losses: 0,
    in_flight: 100,
    prior_in_flight: 100,
    rtt_us: RTT_US as i64,
    app_limited: false,
};

/// An ACK that (S)ACKs nothing new (a window update or a dupack that marks
/// nothing): `tcp_rate_gen` makes it invalid.
const NOTHING: Ack = Ack { acked: 0, interval_us: -1, rtt_us: -1, ..ACK };

struct H {
    bbr: Bbr,
    tp: CaCtx,
}

impl H {
    /// `bbr_init` at t = 0 with cwnd 10, srtt = min RTT = 100 ms.
    fn new(rand: CycleRand) -> H {
        let mut tp =
            CaCtx { mss_cache: MSS, snd_cwnd: 10, srtt_us: RTT_US << 3, min_rtt_us: RTT_US, ..CaCtx::default() };
        set_time(&mut tp, 0);
        let mut bbr = Bbr::new(rand);
        bbr.init(&mut tp);
        H { bbr, tp }
    }

    /// A flow in steady PROBE_BW at 50 packets per 100 ms, seeded at
    /// `t_ms` as the conformance harness seeds a state: phase 2 (gain 1),
    /// cwnd = bdp + budget = 50·2 + 6 = 106, `tp->delivered` 1000.
    fn probe_bw(t_ms: u64, rand: CycleRand) -> H {
        let mut h = H::new(rand);
        h.at_ms(t_ms);
        h.tp.delivered = 1000;
        h.tp.snd_cwnd = 106;
        h.tp.pacing_rate = rate(BW50, BBR_UNIT);
        h.tp.delivered_mstamp = h.tp.mstamp_us();
        let now = h.tp.mstamp_us();
        let j = h.tp.jiffies;
        let ca = h.bbr.ca_mut();
        ca.mode = BbrMode::ProbeBw;
        ca.full_bw_reached = true;
        ca.full_bw = BW50;
        ca.bw.reset(ca.rtt_cnt, BW50);
        ca.min_rtt_stamp = j;
        ca.cycle_idx = 2;
        ca.cycle_mstamp = now;
        ca.pacing_gain = BBR_UNIT;
        ca.cwnd_gain = BBR_CWND_GAIN;
        ca.next_rtt_delivered = 1000;
        ca.ack_epoch_mstamp = now;
        h
    }

    fn at_ms(&mut self, ms: u64) {
        set_time(&mut self.tp, ms * 1000);
    }

    fn at_us(&mut self, us: u64) {
        set_time(&mut self.tp, us);
    }

    /// Process `a` at the current time: the connection's accounting, then
    /// `cong_control`. Returns the sample.
    fn ack(&mut self, a: Ack) -> RateSample {
        let prior = a.prior_delivered.unwrap_or(self.tp.delivered);
        self.tp.delivered = self.tp.delivered.wrapping_add(a.acked);
        if a.acked > 0 {
            self.tp.delivered_mstamp = self.tp.mstamp_us();
        }
        self.tp.lost = self.tp.lost.wrapping_add(a.losses);
        self.tp.packets_in_flight = a.in_flight;
        let valid = a.interval_us > 0;
        let rs = RateSample {
            prior_mstamp: if valid { 1 } else { 0 },
            prior_delivered: prior,
            delivered: if valid { self.tp.delivered.wrapping_sub(prior) as i32 } else { -1 },
            interval_us: a.interval_us,
            rtt_us: a.rtt_us,
            losses: a.losses as i32,
            acked_sacked: a.acked,
            prior_in_flight: a.prior_in_flight,
            is_app_limited: a.app_limited,
            ..RateSample::default()
        };
        self.bbr.cong_control(&mut self.tp, &rs);
        rs
    }

    fn ca(&self) -> &BbrState {
        self.bbr.ca()
    }
}

fn set_time(tp: &mut CaCtx, us: u64) {
    tp.now = Instant::from_micros(us);
    tp.jiffies = tp.now.jiffies32(tp.hz);
}

// ---------------------------------------------------------------------------
// Constants and integer arithmetic
// ---------------------------------------------------------------------------

#[test]
fn test_constants_are_the_kernels() {
    assert_eq!(BBR_HIGH_GAIN, 739); // 256·2885/1000 + 1 = 738 + 1
    assert_eq!(BBR_DRAIN_GAIN, 88); // 256000/2885 = 88.7
    assert_eq!(BBR_CWND_GAIN, 512);
    assert_eq!(BBR_PACING_GAIN, [320, 192, 256, 256, 256, 256, 256, 256]);
    assert_eq!(BBR_FULL_BW_THRESH, 320);
    assert_eq!((BBR_LT_BW_RATIO, BBR_LT_BW_DIFF), (32, 500));
    assert_eq!(BBR_BW_RTTS, 10);
    assert_eq!(GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER, 65_215);
}

#[test]
fn test_rate_bytes_per_sec_orders_and_truncates_like_the_kernel() {
    // 1 pkt/µs of 1500 bytes at gain 1: 1500·10^6·0.99 exactly.
    assert_eq!(bbr_rate_bytes_per_sec(1500, BW_UNIT, BBR_UNIT), 1_485_000_000);
    // 8388·1000 = 8388000; ·256 >> 8 = 8388000; ·990000 = 8304120000000;
    // >> 24 = 494964.1 → 494964.
    assert_eq!(rate(BW50, BBR_UNIT), 494_964);
    // Gain 739: 8388000·739 = 6198732000, >> 8 = 24213796 (.875 dropped),
    // ·990000 = 23971658040000, >> 24 = 1428822.
    assert_eq!(rate(BW50, BBR_HIGH_GAIN), 1_428_822);
    // MSS 1448: 8388·1448 = 12145824, ·739 = 8975763936, >> 8 = 35061577,
    // ·990000 >> 24 = 2068934.
    assert_eq!(bbr_rate_bytes_per_sec(1448, BW50 as u64, BBR_HIGH_GAIN), 2_068_934);
    // Gain 88 (DRAIN): 8388000·88 >> 8 = 2883375, ·990000 >> 24 = 170143.
    assert_eq!(rate(BW50, BBR_DRAIN_GAIN), 170_143);
    // sk_max_pacing_rate caps it.
    let tp = CaCtx { mss_cache: MSS, max_pacing_rate: 200_000, ..CaCtx::default() };
    assert_eq!(Bbr::bw_to_pacing_rate(&tp, BW50, BBR_UNIT), 200_000);
}

#[test]
fn test_bdp_rounds_up_and_caps_without_rtt() {
    let mut b = Bbr::default();
    b.ca_mut().min_rtt_us = RTT_US;
    // 8388·100000 = 838800000 (49.996 packets << 24); + 2^24 − 1, / 2^24 → 50.
    assert_eq!(b.bdp(BW50, BBR_UNIT), 50);
    // ·320 >> 8 = 1048500000 → 62.49 → 63.
    assert_eq!(b.bdp(BW50, 320), 63);
    // ·512 >> 8 → 99.99 → 100; ·739 >> 8 → 144.3 → 145.
    assert_eq!((b.bdp(BW50, 512), b.bdp(BW50, BBR_HIGH_GAIN)), (100, 145));
    // Exactly 1 pkt/µs over 100 µs: 100, no round-up; at 739/256: 288.67 → 289.
    b.ca_mut().min_rtt_us = 100;
    assert_eq!(b.bdp(BW_UNIT as u32, BBR_UNIT), 100);
    assert_eq!(b.bdp(BW_UNIT as u32, BBR_HIGH_GAIN), 289);
    // No RTT sample yet (min_rtt_us = ~0U): TCP_INIT_CWND.
    b.ca_mut().min_rtt_us = u32::MAX;
    assert_eq!(b.bdp(BW50, BBR_HIGH_GAIN), TCP_INIT_CWND);
}

#[test]
fn test_tso_segs_goal_and_min_tso_segs() {
    // bbr_min_tso_rate >> 3 = 150000 bytes/s.
    assert_eq!((bbr_min_tso_segs(149_999), bbr_min_tso_segs(150_000)), (1, 2));
    assert_eq!(bbr_tso_segs_goal(0, 10, 1448), 1);
    assert_eq!(bbr_tso_segs_goal(1_000_000, 10, 1448), 2); // 976 bytes < 1 MSS
                                                           // 100 Mbit/s: 12500000 >> 10 = 12207 bytes, / 1448 = 8.
    assert_eq!(bbr_tso_segs_goal(12_500_000, 10, 1448), 8);
    // 10 Gbit/s: capped at 65215 bytes, / 1448 = 45.
    assert_eq!(bbr_tso_segs_goal(1_250_000_000, 10, 1448), 45);
    // Small MSS: 65215 / 100 = 652, capped at 0x7f.
    assert_eq!(bbr_tso_segs_goal(1_250_000_000, 10, 100), 127);
    // A smaller pacing shift means longer bursts: 12500000 >> 8 = 48828 → 33.
    assert_eq!(bbr_tso_segs_goal(12_500_000, 8, 1448), 33);
    // A zero MSS divides as 1; a shift past 63 gives no bytes.
    assert_eq!(bbr_tso_segs_goal(12_500_000, 10, 0), 127);
    assert_eq!(bbr_tso_segs_goal(12_500_000, 64, 1448), 2);
}

#[test]
fn test_quantization_budget_and_inflight() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    let tp = &h.tp;
    // Goal 2 at 494964 B/s: +6, rounded to even.
    assert_eq!(h.bbr.quantization_budget(tp, 50), 56);
    assert_eq!(h.bbr.quantization_budget(tp, 51), 58);
    assert_eq!(h.bbr.inflight(tp, BW50, BBR_UNIT), 56);
    // In the 5/4 phase 2 more: 63 + 6 = 69 → 70 → 72.
    h.bbr.ca_mut().cycle_idx = 0;
    assert_eq!(h.bbr.inflight(&h.tp, BW50, 320), 72);
}

#[test]
fn test_packets_in_net_at_edt() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    // No departure scheduled ahead: in-flight as is at gain ≤ 1 …
    assert_eq!(h.bbr.packets_in_net_at_edt(&h.tp, 40), 40);
    // … plus the next burst (2) at gain > 1.
    h.bbr.ca_mut().pacing_gain = 320;
    assert_eq!(h.bbr.packets_in_net_at_edt(&h.tp, 40), 42);
    // EDT 20 ms ahead: the path delivers 8388·20000 >> 24 = 9 meanwhile.
    h.tp.wstamp_ns = h.tp.now.as_nanos() + 20_000_000;
    assert_eq!(h.bbr.packets_in_net_at_edt(&h.tp, 40), 33);
    assert_eq!(h.bbr.packets_in_net_at_edt(&h.tp, 5), 0);
}

#[test]
fn test_cycle_rand_start_phase_never_the_drain_phase() {
    // cycle_idx = 7 − r, then advanced: r = 0..6 gives 0, 7, 6, …, 2.
    let want = [0u8, 7, 6, 5, 4, 3, 2];
    for (r, w) in want.iter().enumerate() {
        let mut b = Bbr::new(CycleRand::Fixed(r as u32));
        b.reset_probe_bw_mode(&CaCtx::default());
        assert_eq!((b.mode(), b.ca().cycle_idx), (BbrMode::ProbeBw, *w));
    }
    // Fixed draws are reduced modulo the bound.
    assert_eq!(CycleRand::Fixed(9).below(7), 2);
    // A seeded stream is reproducible, below the bound, and hits every value.
    let mut a = CycleRand::Seeded(42);
    let mut b = CycleRand::Seeded(42);
    let mut seen = [false; 7];
    for _ in 0..200 {
        let v = a.below(7);
        assert_eq!(v, b.below(7));
        seen[v as usize] = true;
    }
    assert!(seen.iter().all(|s| *s));
    assert_eq!(CycleRand::Seeded(1).below(1), 0);
}

#[test]
fn test_get_info_reports_bytes_per_second() {
    let h = H::probe_bw(1000, CycleRand::Fixed(0));
    // 8388·1000·10^6 >> 24 = 499963 bytes/s (no pacing margin here).
    let info = h.bbr.get_info(&h.tp);
    assert_eq!(info, TcpBbrInfo { bw: 499_963, min_rtt: RTT_US, pacing_gain: 256, cwnd_gain: 512 });
    assert_eq!(h.bbr.sndbuf_expand(), 3);
    assert_eq!(h.bbr.min_tso_segs(&h.tp), 2);
}

// ---------------------------------------------------------------------------
// init
// ---------------------------------------------------------------------------

#[test]
fn test_init_paces_high_gain_cwnd_over_srtt() {
    let h = H::new(CycleRand::Fixed(0));
    // bw = 10·2^24 / (800000 >> 3) = 1677; ·1000·739 >> 8, ·990000 >> 24.
    assert_eq!(h.tp.pacing_rate, 285_662);
    assert_eq!(h.tp.pacing_rate, rate(1677, BBR_HIGH_GAIN));
    assert!(h.ca().has_seen_rtt);
    assert_eq!(h.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    assert_eq!(h.tp.pacing_status, PacingStatus::Needed);
    assert_eq!((h.bbr.mode(), h.bbr.max_bw(), h.ca().min_rtt_us), (BbrMode::Startup, 0, RTT_US));
    assert_eq!(h.ca().min_rtt_stamp, jiffies_at_ms(0));
    // Gains are set by the first ACK, not by init.
    assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (0, 0));
}

#[test]
fn test_init_without_rtt_uses_one_ms_then_first_srtt() {
    let mut tp = CaCtx { mss_cache: MSS, snd_cwnd: 10, srtt_us: 0, delivered: 77, ..CaCtx::default() };
    tp.pacing_status = PacingStatus::Fq;
    let mut b = Bbr::new(CycleRand::Fixed(0));
    b.init(&mut tp);
    // 10·2^24/1000 = 167772 at gain 739: 167772000·739 >> 8 = 484310578,
    // ·990000 >> 24 = 28578488.
    assert_eq!(tp.pacing_rate, 28_578_488);
    assert!(!b.ca().has_seen_rtt);
    // Rounds count from the current delivered (6.1's wrap fix); fq stays.
    assert_eq!(b.ca().next_rtt_delivered, 77);
    assert_eq!(tp.pacing_status, PacingStatus::Fq);
    assert_eq!(b.ca().min_rtt_us, u32::MAX);
    // The first ACK after an RTT sample re-initialises pacing from it
    // (even though the sample itself is invalid): 285662 with srtt 100 ms.
    tp.srtt_us = RTT_US << 3;
    let rs = RateSample { delivered: -1, interval_us: -1, rtt_us: -1, ..RateSample::default() };
    b.cong_control(&mut tp, &rs);
    assert!(b.ca().has_seen_rtt);
    assert_eq!(tp.pacing_rate, 285_662);
}

// ---------------------------------------------------------------------------
// STARTUP → DRAIN → PROBE_BW
// ---------------------------------------------------------------------------

#[test]
fn test_startup_to_drain_after_three_rounds_without_growth_then_probe_bw() {
    let mut h = H::new(CycleRand::Fixed(0));
    // One ACK per round, every 100 ms, delivering d packets over 100 ms.
    // full_bw grows while max_bw ≥ full_bw·320 >> 8; cwnd slow-starts by
    // `acked` while below bdp(max_bw, 739) + 6.
    //  d   max_bw  thresh           full_bw  cnt  pacing    target  cwnd
    //  10  1677    0                1677     0    285662    36      20
    //  20  3355    2096             3355     0    571494    64      40
    //  30  5033    4193             5033     0    857327    94      70
    //  50  8388    6291             8388     0    1428822   152     120
    //  50  8388    10485 (no)       8388     1    1428822   152     170
    //  50  8388    10485 (no)       8388     2    1428822   152     170
    let rows = [
        (10, 1677, 1677, 0, 285_662, 20),
        (20, 3355, 3355, 0, 571_494, 40),
        (30, 5033, 5033, 0, 857_327, 70),
        (50, 8388, 8388, 0, 1_428_822, 120),
        (50, 8388, 8388, 1, 1_428_822, 170),
        (50, 8388, 8388, 2, 1_428_822, 170),
    ];
    for (k, (d, max_bw, full_bw, cnt, pacing, cwnd)) in rows.into_iter().enumerate() {
        h.at_ms(100 * (k as u64 + 1));
        h.ack(Ack { acked: d, ..ACK });
        assert_eq!(h.bbr.mode(), BbrMode::Startup, "round {}", k + 1);
        assert_eq!((h.bbr.max_bw(), h.ca().full_bw, h.ca().full_bw_cnt), (max_bw, full_bw, cnt), "round {}", k + 1);
        assert_eq!((h.tp.pacing_rate, h.tp.snd_cwnd), (pacing, cwnd), "round {}", k + 1);
        assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (739, 739));
        assert_eq!(h.ca().rtt_cnt, k as u32 + 1);
    }

    // Round 7: the third round without 25 % growth. The pipe is full:
    // DRAIN, ssthresh = bbr_inflight(8388, 1) = 50 + 6 = 56. In-flight 100
    // (+2 for the burst, the gain still being STARTUP's) > 56: stay.
    h.at_ms(700);
    h.ack(ACK);
    assert!(h.bbr.full_bw_reached());
    assert_eq!((h.bbr.mode(), h.tp.snd_ssthresh), (BbrMode::Drain, 56));
    assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (BBR_DRAIN_GAIN, BBR_HIGH_GAIN));
    // The pipe is full, so the pacing rate may now go down: 170143.
    assert_eq!(h.tp.pacing_rate, 170_143);
    // cwnd: target = bdp(8388, 739) = 145, + the aggregation allowance
    // (now that the pipe is full) min(extra_acked 51, 100 ms of bw 49) =
    // 49, + 6 = 200; min(170 + 50, 200).
    assert_eq!(h.bbr.extra_acked(), 51);
    assert_eq!(h.tp.snd_cwnd, 200);

    // DRAIN ends when in-flight at the next departure ≤ 56 (gain 88: no
    // burst added). 57 stays …
    h.at_ms(800);
    h.ack(Ack { in_flight: 57, ..ACK });
    assert_eq!(h.bbr.mode(), BbrMode::Drain);
    // … 56 goes to PROBE_BW, at phase 0 for the draw 0 (cycle_idx 7 then
    // advanced), starting the phase now.
    h.at_ms(900);
    h.ack(Ack { in_flight: 56, ..ACK });
    assert_eq!((h.bbr.mode(), h.ca().cycle_idx, h.ca().cycle_mstamp), (BbrMode::ProbeBw, 0, 900_000));
    assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (320, 512));
    // 8388000·320 >> 8 = 10485000, ·990000 >> 24 = 618705.
    assert_eq!(h.tp.pacing_rate, 618_705);
}

#[test]
fn test_startup_app_limited_rounds_do_not_count() {
    let mut h = H::new(CycleRand::Fixed(0));
    for (k, d) in [10, 20, 30, 50].into_iter().enumerate() {
        h.at_ms(100 * (k as u64 + 1));
        h.ack(Ack { acked: d, ..ACK });
    }
    // Ten app-limited rounds at 50: no growth, but they are not counted.
    for k in 5..15 {
        h.at_ms(100 * k);
        h.ack(Ack { app_limited: true, ..ACK });
        assert_eq!((h.bbr.mode(), h.ca().full_bw_cnt), (BbrMode::Startup, 0));
    }
    // A round that is not a round start (prior_delivered before the round
    // end) does not count either.
    h.at_ms(1_550);
    h.ack(Ack { prior_delivered: Some(0), ..ACK });
    assert_eq!(h.ca().full_bw_cnt, 0);
}

// ---------------------------------------------------------------------------
// PROBE_BW gain cycle
// ---------------------------------------------------------------------------

#[test]
fn test_probe_bw_cycle_phases_advance_each_min_rtt() {
    // Seeded at t = 1 s in phase 0 (gain 5/4), 50 pkts/100 ms, min RTT 100 ms.
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.bbr.ca_mut().cycle_idx = 0;
    h.bbr.ca_mut().pacing_gain = 320;
    h.tp.pacing_rate = rate(BW50, 320);
    // ACKs that end no round, so that only the cycle logic moves.
    let a = Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, ..ACK };

    // Phase 0 needs a full min RTT (strictly more than 100000 µs since
    // the phase started) AND in-flight + burst ≥ bbr_inflight(bw, 5/4) =
    // 63 + 6 → 70, + 2 = 72.
    h.at_ms(1_050);
    h.ack(Ack { prior_in_flight: 80, ..a });
    assert_eq!(h.ca().cycle_idx, 0, "not a full min RTT yet");
    h.at_us(1_100_001);
    h.ack(Ack { prior_in_flight: 69, ..a });
    assert_eq!(h.ca().cycle_idx, 0, "69 + 2 < 72");
    h.at_ms(1_150);
    h.ack(Ack { prior_in_flight: 70, ..a });
    assert_eq!((h.ca().cycle_idx, h.ca().cycle_mstamp), (1, 1_150_000));
    assert_eq!(h.ca().pacing_gain, 192);
    // 8388000·192 >> 8 = 6291000, ·990000 >> 24 = 371223.
    assert_eq!(h.tp.pacing_rate, 371_223);

    // Phase 1 (3/4) ends early once in-flight ≤ bbr_inflight(bw, 1) = 56.
    h.at_ms(1_160);
    h.ack(Ack { prior_in_flight: 57, ..a });
    assert_eq!(h.ca().cycle_idx, 1);
    h.at_ms(1_170);
    h.ack(Ack { prior_in_flight: 56, ..a });
    assert_eq!((h.ca().cycle_idx, h.ca().pacing_gain), (2, 256));
    assert_eq!(h.tp.pacing_rate, rate(BW50, BBR_UNIT));

    // Phases 2..7 (gain 1) last a min RTT whatever in-flight is, then wrap
    // to phase 0.
    let mut start = 1_170_000u64;
    for idx in 2u8..8 {
        h.at_us(start + 100_000);
        h.ack(Ack { prior_in_flight: 200, ..a });
        assert_eq!(h.ca().cycle_idx, idx, "exactly one min RTT is not more");
        h.at_us(start + 100_001);
        h.ack(Ack { prior_in_flight: 0, ..a });
        assert_eq!(h.ca().cycle_idx, (idx + 1) & 7);
        start += 100_001;
    }
    assert_eq!(h.ca().pacing_gain, 320);
}

#[test]
fn test_probe_bw_up_phase_ends_on_loss() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.bbr.ca_mut().cycle_idx = 0;
    h.bbr.ca_mut().pacing_gain = 320;
    let a = Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, prior_in_flight: 30, ..ACK };
    // A loss before a full min RTT does not end it …
    h.at_ms(1_050);
    h.ack(Ack { losses: 1, ..a });
    assert_eq!(h.ca().cycle_idx, 0);
    // … after, it does, in-flight far below 5/4·BDP.
    h.at_ms(1_101);
    h.ack(Ack { losses: 1, ..a });
    assert_eq!(h.ca().cycle_idx, 1);
}

// ---------------------------------------------------------------------------
// PROBE_RTT
// ---------------------------------------------------------------------------

#[test]
fn test_probe_rtt_after_10s_holds_cwnd_4_for_200ms_and_a_round() {
    // min RTT stamped at t = 1 s; rand 1 → back to phase 7 on exit.
    let mut h = H::probe_bw(1000, CycleRand::Fixed(1));
    // RTT samples equal to the min do not refresh it (strict <, 5.10+).
    let a = Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, in_flight: 60, ..ACK };
    h.at_ms(11_000);
    h.ack(a);
    assert_eq!(h.bbr.mode(), BbrMode::ProbeBw, "10 s exactly: not yet expired");
    let cwnd_before = h.tp.snd_cwnd;

    // 10 s + 1 jiffy: the filter expired. The sample (100 ms) replaces the
    // min, and PROBE_RTT starts: cwnd saved, cut to 4, the connection
    // marked app-limited (delivered + in_flight).
    h.at_ms(11_001);
    h.ack(a);
    assert_eq!(h.bbr.mode(), BbrMode::ProbeRtt);
    assert_eq!((h.ca().min_rtt_us, h.ca().min_rtt_stamp), (RTT_US, jiffies_at_ms(11_001)));
    assert_eq!(h.ca().prior_cwnd, cwnd_before);
    assert_eq!(h.tp.snd_cwnd, 4);
    assert_eq!(h.tp.app_limited, h.tp.delivered + 60);
    assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (256, 256));
    assert_eq!(h.ca().probe_rtt_done_stamp, 0, "in-flight 60 > 4");

    // In-flight down to 4: the 200 ms start now, and a round with them.
    h.at_ms(11_050);
    h.ack(Ack { in_flight: 4, ..a });
    assert_eq!(h.ca().probe_rtt_done_stamp, jiffies_at_ms(11_250));
    let round_end = h.tp.delivered;
    assert_eq!(h.ca().next_rtt_delivered, round_end);
    // A packet sent after that is delivered: the round is done, the
    // time is not.
    h.at_ms(11_150);
    h.ack(Ack { in_flight: 4, prior_delivered: Some(round_end), ..a });
    assert!(h.ca().probe_rtt_round_done);
    assert_eq!((h.bbr.mode(), h.tp.snd_cwnd), (BbrMode::ProbeRtt, 4));
    h.at_ms(11_250);
    h.ack(NOTHING);
    assert_eq!(h.bbr.mode(), BbrMode::ProbeRtt, "after(), not at, the stamp");
    // 200 ms + 1 jiffy: back to PROBE_BW (the pipe was full), cwnd restored
    // (this ACK acks nothing, so bbr_set_cwnd only applies the caps).
    h.at_ms(11_251);
    h.ack(NOTHING);
    assert_eq!((h.bbr.mode(), h.ca().cycle_idx), (BbrMode::ProbeBw, 7));
    assert_eq!(h.tp.snd_cwnd, cwnd_before);
    assert_eq!(h.ca().min_rtt_stamp, jiffies_at_ms(11_251));
    assert_eq!((h.ca().pacing_gain, h.ca().cwnd_gain), (256, 512));
}

#[test]
fn test_probe_rtt_waits_for_the_round_after_200ms() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(1));
    let a = Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, in_flight: 4, ..ACK };
    h.at_ms(11_001);
    h.ack(a);
    assert_eq!((h.bbr.mode(), h.ca().probe_rtt_done_stamp), (BbrMode::ProbeRtt, jiffies_at_ms(11_201)));
    let round_end = h.tp.delivered;
    // Past the 200 ms, but no packet sent since has been delivered.
    h.at_ms(11_300);
    h.ack(a);
    assert_eq!(h.bbr.mode(), BbrMode::ProbeRtt);
    // The round ends: leave at once.
    h.at_ms(11_310);
    h.ack(Ack { prior_delivered: Some(round_end), ..a });
    assert_eq!(h.bbr.mode(), BbrMode::ProbeBw);
    assert!(h.tp.snd_cwnd > 4);
}

#[test]
fn test_probe_rtt_exit_to_startup_when_pipe_never_full() {
    let mut h = H::new(CycleRand::Fixed(0));
    let a = Ack { acked: 1, in_flight: 3, ..ACK };
    h.at_ms(10_001);
    h.ack(a);
    assert_eq!(h.bbr.mode(), BbrMode::ProbeRtt);
    h.at_ms(10_202);
    h.ack(a); // round start (prior = delivered before) and past 200 ms
    assert_eq!(h.bbr.mode(), BbrMode::Startup);
}

#[test]
fn test_probe_rtt_skipped_on_idle_restart() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    // The application went idle; the first send after it (app-limited)
    // restarts from idle.
    h.at_ms(11_500);
    h.tp.app_limited = 1005;
    h.bbr.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert!(h.ca().idle_restart);
    // The first ACK of new data: the min RTT expired, but no PROBE_RTT
    // while restarting; the sample refreshes the min instead.
    h.at_ms(11_600);
    h.ack(Ack { acked: 1, ..ACK });
    assert_eq!(h.bbr.mode(), BbrMode::ProbeBw);
    assert!(!h.ca().idle_restart);
    assert_eq!(h.ca().min_rtt_stamp, jiffies_at_ms(11_600));
    h.at_ms(11_700);
    h.ack(Ack { acked: 1, ..ACK });
    assert_eq!(h.bbr.mode(), BbrMode::ProbeBw);
}

#[test]
fn test_probe_rtt_ends_on_tx_start_after_idle() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(1));
    h.at_ms(11_001);
    h.ack(Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, in_flight: 4, ..ACK });
    let prior = h.ca().prior_cwnd;
    assert_eq!(h.bbr.mode(), BbrMode::ProbeRtt);
    // Idle past the 200 ms; the next send restarts from idle and ends
    // PROBE_RTT there, even without a round: cwnd back to exactly prior.
    h.at_ms(11_400);
    h.tp.app_limited = 7;
    h.bbr.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert_eq!((h.bbr.mode(), h.tp.snd_cwnd), (BbrMode::ProbeBw, prior));
}

// ---------------------------------------------------------------------------
// cwnd_event
// ---------------------------------------------------------------------------

#[test]
fn test_tx_start_after_idle_paces_at_bw() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.bbr.ca_mut().cycle_idx = 0;
    h.bbr.ca_mut().pacing_gain = 320;
    h.tp.pacing_rate = rate(BW50, 320);
    h.bbr.ca_mut().ack_epoch_acked = 30;
    // Not app-limited: nothing.
    h.at_ms(2_000);
    h.bbr.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert!(!h.ca().idle_restart);
    assert_eq!(h.tp.pacing_rate, 618_705);
    // Other events: nothing.
    h.tp.app_limited = 3;
    h.bbr.cwnd_event(&mut h.tp, CaEvent::CwndRestart);
    assert!(!h.ca().idle_restart);
    // App-limited restart: pace at 1.0·bw (494964 < 618705; the pipe is
    // full so it may go down), new aggregation epoch.
    h.bbr.cwnd_event(&mut h.tp, CaEvent::TxStart);
    assert!(h.ca().idle_restart);
    assert_eq!(h.tp.pacing_rate, 494_964);
    assert_eq!((h.ca().ack_epoch_mstamp, h.ca().ack_epoch_acked), (2_000_000, 0));
}

// ---------------------------------------------------------------------------
// Long-term bandwidth (policer)
// ---------------------------------------------------------------------------

/// Policer trace: from t = 1 s, one round per 100 ms, 20 packets delivered
/// and 5 lost each round (lost/delivered = 64/256 ≥ 50/256).
fn policed_round(h: &mut H, k: u64, losses: u32) {
    h.at_ms(1_000 + 100 * k);
    h.ack(Ack { acked: 20, losses, in_flight: 40, ..ACK });
}

#[test]
fn test_lt_bw_engages_on_policer_and_expires_after_48_rounds() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(3));
    // Round 1 (t = 1.1 s): the first loss starts sampling: interval start
    // = (1100 ms, delivered 1020, lost 5); this round start counts 1.
    policed_round(&mut h, 1, 5);
    assert!(h.ca().lt_is_sampling);
    assert_eq!((h.ca().lt_last_stamp, h.ca().lt_last_delivered, h.ca().lt_last_lost), (1_100, 1_020, 5));
    assert_eq!(h.ca().lt_rtt_cnt, 1);
    for k in 2..4 {
        policed_round(&mut h, k, 5);
        assert_eq!((h.ca().lt_rtt_cnt, h.ca().lt_bw), (k as u8, 0));
    }
    // Round 4 (t = 1.4 s): 4 rounds and a loss end the interval: lost 20 −
    // 5 = 15, delivered 1080 − 1020 = 60, 15·256 = 3840 ≥ 50·60 = 3000;
    // 300 ms: bw = 60·2^24/300000 = 3355. First interval: remembered.
    policed_round(&mut h, 4, 5);
    assert_eq!((h.ca().lt_bw, h.ca().lt_use_bw), (3355, false));
    assert_eq!((h.ca().lt_last_stamp, h.ca().lt_last_delivered, h.ca().lt_last_lost), (1_400, 1_080, 20));
    assert_eq!(h.ca().lt_rtt_cnt, 0);
    for k in 5..8 {
        policed_round(&mut h, k, 5);
    }
    assert!(!h.ca().lt_use_bw);
    // Round 8 (t = 1.8 s): lost 40 − 20 = 20, delivered 80 (5120 ≥ 4000),
    // 400 ms: bw = 80·2^24/400000 = 3355, equal to the first: policed.
    policed_round(&mut h, 8, 5);
    assert!(h.ca().lt_use_bw);
    assert_eq!((h.ca().lt_bw, h.bbr.bw(), h.bbr.max_bw()), (3355, 3355, BW50));
    // Paced at the policed rate, gain 1: 3355000 >> 0, ·990000 >> 24 = 197973.
    assert_eq!(h.ca().pacing_gain, 256);
    assert_eq!(h.tp.pacing_rate, 197_973);
    // cwnd: rounds 1–7 held it at bdp(8388, 2) 100 + extra_acked 20 (each
    // round's 20 ≤ the 49 expected restarts the epoch) + 6 = 126. Now the
    // target comes from lt_bw: bdp(3355, 2) = 40 (39.99), + min(20,
    // 3355·100000 >> 24 = 19) + 6 = 65 → 66; min(126 − 5 lost + 20, 66).
    assert_eq!(h.tp.snd_cwnd, 66);

    // 48 rounds of PROBE_BW later the policed rate is dropped and the gain
    // cycle restarts (rand 3 → phase 4 + 1 = 5).
    for k in 9..56 {
        policed_round(&mut h, k, 0);
        assert!(h.ca().lt_use_bw, "round {k}");
        assert_eq!(h.ca().lt_rtt_cnt, (k - 8) as u8);
        assert_eq!(h.ca().pacing_gain, 256);
    }
    policed_round(&mut h, 56, 0);
    assert!(!h.ca().lt_use_bw && !h.ca().lt_is_sampling);
    assert_eq!((h.ca().lt_bw, h.ca().cycle_idx), (0, 5));
}

#[test]
fn test_lt_sampling_needs_loss_rate_and_resets_after_16_rounds() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    // 2 lost per 20 delivered: 10 % < 50/256 (19.5 %): intervals never end.
    for k in 1..=16 {
        policed_round(&mut h, k, 2);
        assert!(h.ca().lt_is_sampling, "round {k}");
        assert_eq!(h.ca().lt_bw, 0);
    }
    // The 17th round is more than 4·4: reset.
    policed_round(&mut h, 17, 2);
    assert!(!h.ca().lt_is_sampling);
    assert_eq!(h.ca().lt_rtt_cnt, 0);
    // No loss: sampling does not start.
    policed_round(&mut h, 18, 0);
    assert!(!h.ca().lt_is_sampling);
    // An app-limited sample while sampling resets it.
    policed_round(&mut h, 19, 5);
    assert!(h.ca().lt_is_sampling);
    h.at_ms(3_000);
    h.ack(Ack { acked: 20, app_limited: true, ..ACK });
    assert!(!h.ca().lt_is_sampling);
}

#[test]
fn test_lt_bw_interval_done_consistency_thresholds() {
    let h = H::probe_bw(1000, CycleRand::Fixed(0));
    let check = |lt_bw: u32, bw: u32| {
        let mut h2 = H { bbr: h.bbr.clone(), tp: h.tp.clone() };
        h2.bbr.ca_mut().lt_bw = lt_bw;
        h2.bbr.lt_bw_interval_done(&h2.tp, bw);
        (h2.ca().lt_use_bw, h2.ca().lt_bw)
    };
    // Within 1/8: 125·256 = 32000 ≤ 32·1000: policed at the mean (1062).
    assert_eq!(check(1000, 1125), (true, 1062));
    // Just over: 126·256 > 32000, and 126 is 7435 B/s > 500 B/s: restart
    // with the new interval as the first.
    assert_eq!(check(1000, 1126), (false, 1126));
    // Symmetric (abs of the difference).
    assert_eq!(check(1125, 1000), (true, 1062));
    // Tiny rates: 8 apart is 8·1000·990000 >> 24 = 472 B/s ≤ 500 (4 kbit/s).
    assert_eq!(check(8, 16), (true, 12));
    // 9 apart is 531 B/s, and 9·256 > 32·8.
    assert_eq!(check(8, 17), (false, 17));
    // No first interval yet: just remember.
    assert_eq!(check(0, 500), (false, 500));
}

// ---------------------------------------------------------------------------
// ACK aggregation
// ---------------------------------------------------------------------------

#[test]
fn test_extra_acked_grows_cwnd_on_aggregated_acks() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.tp.snd_cwnd = 110;
    // No round starts here (prior_delivered before the round end).
    let a = Ack { prior_delivered: Some(999), interval_us: ONE_S, ..ACK };
    // t = 1.1 s, 5 acked: expected over the 100 ms epoch = 8388·100000 >>
    // 24 = 49 ≥ 0 acked so far: a new epoch starts now with 5: extra 5.
    h.at_ms(1_100);
    h.ack(Ack { acked: 5, ..a });
    assert_eq!((h.ca().ack_epoch_mstamp, h.ca().ack_epoch_acked, h.ca().extra_acked), (1_100_000, 5, [5, 0]));
    // cwnd: target = bdp(8388, 2) 100 + 5 + 6 = 111 → 112; min(110 + 5, 112).
    assert_eq!(h.tp.snd_cwnd, 112);
    // 10 ms later, 20 at once: expected 8388·10000 >> 24 = 4, acked 25:
    // extra 21. target = 100 + 21 + 6 = 127 → 128; min(112 + 20, 128).
    h.at_ms(1_110);
    h.ack(Ack { acked: 20, ..a });
    assert_eq!((h.ca().ack_epoch_acked, h.bbr.extra_acked()), (25, 21));
    assert_eq!(h.tp.snd_cwnd, 128);
    // 1 ms later, 60 more: expected 5, extra 85 − 5 = 80 (≤ cwnd 128);
    // the allowance is capped at 100 ms of bw, 8388·100000 >> 24 = 49:
    // target 100 + 49 + 6 = 155 → 156.
    h.at_ms(1_111);
    h.ack(Ack { acked: 60, ..a });
    assert_eq!(h.bbr.extra_acked(), 80);
    assert_eq!(h.bbr.ack_aggregation_cwnd(), 49);
    assert_eq!(h.tp.snd_cwnd, 156);

    // The filter: slot 0 is replaced after 10 round starts. Rounds of 1
    // packet per 100 ms reset the epoch each time (extra 1).
    for r in 1..=10u64 {
        h.at_ms(1_111 + 100 * r);
        h.ack(Ack { acked: 1, ..ACK });
        let (idx, want) = match r {
            1..=4 => (0, 80),
            5..=9 => (1, 80),
            _ => (0, 1),
        };
        assert_eq!((h.ca().extra_acked_win_idx, h.bbr.extra_acked()), (idx, want), "round {r}");
    }
    assert_eq!(h.ca().extra_acked, [1, 1]);
}

#[test]
fn test_extra_acked_capped_by_cwnd_and_ignored_before_full_pipe() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.tp.snd_cwnd = 10;
    h.at_ms(1_100);
    h.ack(Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, ..ACK });
    h.at_ms(1_101);
    // 40 more in 1 ms: 45 − 0 expected, but at most cwnd (now 15).
    h.ack(Ack { acked: 40, prior_delivered: Some(999), interval_us: ONE_S, ..ACK });
    assert_eq!(h.bbr.extra_acked(), 15);
    // Before the pipe is full the allowance is 0.
    h.bbr.ca_mut().full_bw_reached = false;
    assert_eq!(h.bbr.ack_aggregation_cwnd(), 0);
}

// ---------------------------------------------------------------------------
// Loss recovery, RTO, undo
// ---------------------------------------------------------------------------

#[test]
fn test_recovery_conserves_packets_for_a_round_then_restores() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    // tcp_enter_recovery → ssthresh: cwnd saved, ssthresh untouched.
    h.tp.snd_ssthresh = 77;
    assert_eq!(h.bbr.ssthresh(&mut h.tp), 77);
    assert_eq!(h.ca().prior_cwnd, 106);
    h.tp.ca_state = CaState::Recovery;
    let a = Ack { prior_delivered: Some(999), interval_us: ONE_S, ..ACK };
    // First ACK in Recovery: 2 lost: 106 − 2; then cut to in_flight +
    // acked = 40 + 3 = 43, packet conservation, a round starts now.
    h.at_ms(1_010);
    h.ack(Ack { acked: 3, losses: 2, in_flight: 40, ..a });
    assert_eq!(h.tp.snd_cwnd, 43);
    assert!(h.ca().packet_conservation);
    assert_eq!(h.ca().next_rtt_delivered, 1003);
    // Conservation: max(cwnd, in_flight + acked) = max(43, 42 + 2).
    h.at_ms(1_020);
    h.ack(Ack { acked: 2, in_flight: 42, ..a });
    assert_eq!(h.tp.snd_cwnd, 44);
    // A round later conservation ends: slow start toward the target
    // (100 + aggregation 5 + 6 → 112): 44 + 5.
    h.at_ms(1_030);
    h.ack(Ack { acked: 5, prior_delivered: Some(1003), in_flight: 42, ..ACK });
    assert!(!h.ca().packet_conservation);
    assert_eq!(h.tp.snd_cwnd, 49);
    // Recovery ends: cwnd back to max(49, 106), then + 2 acked (≤ 112).
    h.tp.ca_state = CaState::Open;
    h.at_ms(1_040);
    h.ack(Ack { acked: 2, in_flight: 42, ..a });
    assert_eq!(h.tp.snd_cwnd, 108);
    assert_eq!(h.ca().prev_ca_state, CaState::Open);
}

#[test]
fn test_rto_loss_state_starts_lt_sampling_and_restores_on_exit() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.tp.lost = 7;
    // tcp_enter_loss: ssthresh (saves 106), then set_state(Loss) before
    // the state changes; the core then sets cwnd = in_flight + 1.
    h.bbr.ssthresh(&mut h.tp);
    h.bbr.set_state(&mut h.tp, CaState::Loss);
    assert_eq!((h.ca().prev_ca_state, h.ca().full_bw), (CaState::Loss, 0));
    assert!(h.ca().round_start && h.ca().lt_is_sampling);
    assert_eq!((h.ca().lt_rtt_cnt, h.ca().lt_last_delivered, h.ca().lt_last_lost), (1, 1000, 7));
    h.tp.ca_state = CaState::Loss;
    h.tp.snd_cwnd = 1;
    // In Loss: slow start from 1, at least 4.
    h.at_ms(1_300);
    h.ack(Ack { acked: 1, in_flight: 1, ..ACK });
    assert_eq!(h.tp.snd_cwnd, 4);
    // Back to Open: restored to max(4, 106), then + 1.
    h.tp.ca_state = CaState::Open;
    h.at_ms(1_400);
    h.ack(Ack { acked: 1, in_flight: 5, ..ACK });
    assert_eq!(h.tp.snd_cwnd, 107);
    // Other states are not BBR's business.
    let before = *h.ca();
    h.bbr.set_state(&mut h.tp, CaState::Recovery);
    assert_eq!(*h.ca(), before);
}

#[test]
fn test_undo_resets_full_bw_and_lt_and_keeps_cwnd() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    {
        let ca = h.bbr.ca_mut();
        ca.full_bw_cnt = 2;
        ca.lt_use_bw = true;
        ca.lt_bw = 3355;
        ca.lt_is_sampling = true;
    }
    h.tp.lost = 9;
    assert_eq!(h.bbr.undo_cwnd(&mut h.tp), 106);
    let ca = h.ca();
    assert_eq!((ca.full_bw, ca.full_bw_cnt, ca.lt_bw, ca.lt_use_bw, ca.lt_is_sampling), (0, 0, 0, false, false));
    assert_eq!((ca.lt_last_lost, ca.lt_last_stamp), (9, 1000));
    assert!(ca.full_bw_reached, "the mode is kept");
}

#[test]
fn test_cwnd_clamp_and_min_target() {
    let mut h = H::probe_bw(1000, CycleRand::Fixed(0));
    h.tp.snd_cwnd_clamp = 50;
    h.at_ms(1_010);
    h.ack(Ack { acked: 5, prior_delivered: Some(999), interval_us: ONE_S, ..ACK });
    assert_eq!(h.tp.snd_cwnd, 50);
    // A big loss cannot take cwnd below 1 (then min target 4 applies when
    // not conserving).
    h.tp.snd_cwnd_clamp = u32::MAX;
    h.tp.snd_cwnd = 3;
    h.at_ms(1_020);
    h.ack(Ack { acked: 1, losses: 10, prior_delivered: Some(999), interval_us: ONE_S, ..ACK });
    assert_eq!(h.tp.snd_cwnd, 4);
}

#[test]
fn test_no_input_panics() {
    // Extreme and inconsistent inputs run through every hook.
    let mut h = H::new(CycleRand::Seeded(7));
    let extremes = [0u32, 1, 3, 4, 1000, 0x7fff_ffff, u32::MAX];
    for (i, &v) in extremes.iter().enumerate() {
        h.tp.mss_cache = v;
        h.tp.snd_cwnd = v;
        h.tp.snd_cwnd_clamp = v;
        h.tp.pacing_shift = v;
        h.tp.wstamp_ns = u64::MAX >> (i as u32);
        h.at_us(u64::from(v) * 7);
        for a in [
            Ack { acked: v, losses: v, in_flight: v, prior_in_flight: v, interval_us: 1, rtt_us: v as i64, ..ACK },
            Ack { acked: v, prior_delivered: Some(v), interval_us: i64::MAX, rtt_us: 0, ..ACK },
            NOTHING,
        ] {
            h.ack(a);
        }
        h.bbr.set_state(&mut h.tp, CaState::Loss);
        h.bbr.cwnd_event(&mut h.tp, CaEvent::TxStart);
        h.bbr.undo_cwnd(&mut h.tp);
        h.bbr.ssthresh(&mut h.tp);
        let _ = h.bbr.get_info(&h.tp);
    }
}

// ---------------------------------------------------------------------------
// The rate sampler driving BBR
// ---------------------------------------------------------------------------

/// An ideal path: one FIFO bottleneck serving a packet every 2 ms (50 per
/// 100 ms, `BW50`), then 100 ms until its ACK returns; one ACK per packet,
/// no loss, the sender paced at BBR's rate (one packet per `mss/rate`) and
/// limited by cwnd. rate.rs produces every sample; BBR's view must match
/// the path.
#[test]
fn test_rate_sampler_drives_bbr_on_an_ideal_path() {
    use crate::rate::{DeliveredSkb, RateGenInput, SkbTxRate, TcpRate};
    use std::collections::VecDeque;
    use tcplab_wire::SeqNum;

    const SERVICE_US: u64 = 2_000;
    const PROP_US: u64 = 100_000;
    struct Pkt {
        sent: u64,
        ack_at: u64,
        tx: SkbTxRate,
        end: u32,
    }

    let mut tp = CaCtx { mss_cache: MSS, snd_cwnd: 10, srtt_us: 0, ..CaCtx::default() };
    set_time(&mut tp, 1_000);
    let mut bbr = Bbr::new(CycleRand::Seeded(1));
    bbr.init(&mut tp);
    let mut rate = TcpRate::default();
    let mut out: VecDeque<Pkt> = VecDeque::new();
    let (mut next_seq, mut link_free, mut min_rtt, mut pace_at) = (0u32, 0u64, u32::MAX, 1_000u64);
    let mut modes = vec![(1_000u64, BbrMode::Startup)];

    loop {
        let ack_at = out.front().map_or(u64::MAX, |p| p.ack_at);
        let can_send = (out.len() as u32) < tp.snd_cwnd;
        let now = if can_send { ack_at.min(pace_at) } else { ack_at };
        if now > 3_000_000 {
            break;
        }
        set_time(&mut tp, now);
        if now == pace_at && can_send && now < ack_at {
            // Paced send: one packet, the next one mss/rate later.
            let tx = rate.skb_sent(now, out.len() as u32, tp.delivered, 0);
            link_free = link_free.max(now) + SERVICE_US;
            next_seq += MSS;
            out.push_back(Pkt { sent: now, ack_at: link_free + PROP_US, tx, end: next_seq });
            pace_at = now + (MSS as u64 * 1_000_000).div_ceil(tp.pacing_rate.max(1));
            continue;
        }
        let Some(mut p) = out.pop_front() else { break };
        let mut rs = RateSample { prior_in_flight: out.len() as u32 + 1, ..RateSample::default() };
        let d = DeliveredSkb { tx_mstamp_us: p.sent, end_seq: SeqNum(p.end), retrans: false, sacked_acked: false };
        rate.skb_delivered(&mut p.tx, &d, &mut rs);
        tp.delivered += 1;
        let rtt = (now - p.sent) as u32;
        min_rtt = min_rtt.min(rtt);
        rs.rtt_us = rtt as i64;
        tp.srtt_us = rtt << 3;
        let g = RateGenInput { now_us: now, delivered: tp.delivered, delivered_ce: 0, min_rtt_us: min_rtt };
        rate.gen(&g, 1, 0, false, &mut rs);
        // The bottleneck's rate bounds every sample.
        if rs.interval_us > 0 {
            assert!((rs.delivered as u64) * BW_UNIT / (rs.interval_us as u64) <= BW50 as u64, "{rs:?}");
        }
        tp.packets_in_flight = out.len() as u32;
        tp.delivered_mstamp = rate.delivered_mstamp;
        tp.app_limited = rate.app_limited;
        bbr.cong_control(&mut tp, &rs);
        rate.app_limited = tp.app_limited;
        if modes.last().map(|m| m.1) != Some(bbr.mode()) {
            modes.push((now, bbr.mode()));
        }
        pace_at = pace_at.max(now);
    }
    // First packet: served 1000..3000 µs, ACKed at 103000: 102 ms.
    assert_eq!(bbr.ca().min_rtt_us, 102_000);
    // The estimate is the bottleneck's rate, up to the floor of the
    // integer division.
    assert!((8_300..=BW50).contains(&bbr.max_bw()), "{}", bbr.max_bw());
    // STARTUP, DRAIN, PROBE_BW, each once, PROBE_BW within 2 s.
    let seq: Vec<BbrMode> = modes.iter().map(|m| m.1).collect();
    assert_eq!(seq, [BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw], "{modes:?}");
    assert!(modes[2].0 < 2_000_000, "{modes:?}");
    // In PROBE_BW cwnd tracks bdp(bw, 2) ≈ 102 plus at most 49 of
    // aggregation and 8 of budget.
    assert!((100..=160).contains(&tp.snd_cwnd), "{}", tp.snd_cwnd);
}
