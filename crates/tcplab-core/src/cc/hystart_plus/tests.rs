//! HyStart++ (RFC 9406) against the RFC's rules with hand-built RTT
//! sequences, then through [`AnyCc`] for CUBIC and Reno on a simulated
//! bottleneck. There are no kernel vectors: Linux has no HyStart++.

use super::*;
use crate::cc::cubic::{Cubic, CubicParams, CubicVersion};
use crate::cc::reno::{Reno, RenoParams};
use crate::cc::AckSample;
use crate::cc::{AnyCc, CcConfig, CongestionOps};
use crate::time::Instant;
use std::collections::VecDeque;

const MS: i64 = 1000;

/// Drives one [`HystartPlusPlus`] with hand-built ACKs: each ACK
/// advances `snd_una` by one; [`Self::round`] first passes `window_end`.
struct Bench {
    h: HystartPlusPlus,
    tp: CaCtx,
    era: CcEra,
}

impl Bench {
    fn new(l: u32) -> Bench {
        let mut tp = CaCtx { snd_cwnd: 10, snd_una: SeqNum(1000), snd_nxt: SeqNum(1000), ..CaCtx::default() };
        let mut h = HystartPlusPlus::new(l);
        h.init(&tp);
        tp.snd_nxt = SeqNum(1010);
        Bench { h, tp, era: CcEra::Current }
    }

    /// One ACK inside the current round.
    fn ack(&mut self, rtt_us: i64) -> HystartPlusPlusEvent {
        self.tp.snd_una += 1;
        self.h.pkts_acked(&mut self.tp, rtt_us, self.era)
    }

    /// A new round: the first ACK passes `window_end` (ending the
    /// previous round), the others stay inside the new one. Returns the
    /// last event other than `None`.
    fn round(&mut self, rtts: &[i64]) -> HystartPlusPlusEvent {
        self.tp.snd_una = self.h.window_end;
        self.tp.snd_nxt = self.h.window_end + 1000;
        let mut last = HystartPlusPlusEvent::None;
        for &r in rtts {
            let e = self.ack(r);
            if e != HystartPlusPlusEvent::None {
                last = e;
            }
        }
        last
    }

    /// A round that only ends the previous one (one ACK, no sample).
    fn end_round(&mut self) -> HystartPlusPlusEvent {
        self.round(&[-1])
    }
}

// -----------------------------------------------------------------------
// Constants
// -----------------------------------------------------------------------

#[test]
fn test_constants_are_rfc_9406_recommended() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.3
    //= type=test
    //# It is RECOMMENDED that a HyStart++ implementation use the following
    //# constants:
    //#
    //# MIN_RTT_THRESH = 4 msec
    //# MAX_RTT_THRESH = 16 msec
    //# MIN_RTT_DIVISOR = 8
    //# N_RTT_SAMPLE = 8
    //# CSS_GROWTH_DIVISOR = 4
    //# CSS_ROUNDS = 5
    //# L = infinity if paced, L = 8 if non-paced
    assert_eq!(MIN_RTT_THRESH_US, 4_000);
    assert_eq!(MAX_RTT_THRESH_US, 16_000);
    assert_eq!(MIN_RTT_DIVISOR, 8);
    assert_eq!(N_RTT_SAMPLE, 8);
    assert_eq!(CSS_GROWTH_DIVISOR, 4);
    assert_eq!(CSS_ROUNDS, 5);
    assert_eq!(L_NON_PACED, 8);
    let h = HystartPlusPlus::default();
    let mut tp = CaCtx::default();
    assert_eq!(h.limit(&tp), 8);
    for paced in [PacingStatus::Needed, PacingStatus::Fq] {
        tp.pacing_status = paced;
        assert_eq!(h.limit(&tp), L_INFINITY);
    }
    assert_eq!(HystartPlusPlus::new(3).limit(&tp), 3);
}

// -----------------------------------------------------------------------
// Slow start: rounds and samples
// -----------------------------------------------------------------------

#[test]
fn test_slow_start_init_starts_at_infinity_with_window_end_snd_nxt() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# lastRoundMinRTT = infinity
    //# currentRoundMinRTT = infinity
    //# currRTT = infinity
    let b = Bench::new(0);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::SlowStart);
    assert_eq!(b.h.window_end, SeqNum(1000));
    assert_eq!(b.h.last_round_min_rtt, RTT_INFINITY);
    assert_eq!(b.h.current_round_min_rtt, RTT_INFINITY);
    assert_eq!(b.h.css_baseline_min_rtt, RTT_INFINITY);
    assert_eq!((b.h.rtt_sample_count, b.h.rounds), (0, 0));
}

#[test]
fn test_slow_start_round_ends_when_snd_una_passes_window_end() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# *  When windowEnd is ACKed, the current round ends and windowEnd is
    //#    set to SND.NXT.
    let mut b = Bench::new(0);
    // snd_una == window_end: byte windowEnd is not yet acked.
    b.tp.snd_una = SeqNum(1000);
    b.h.pkts_acked(&mut b.tp, 50 * MS, b.era);
    assert_eq!((b.h.rounds, b.h.window_end), (0, SeqNum(1000)));
    assert_eq!((b.h.current_round_min_rtt, b.h.rtt_sample_count), (50_000, 1));
    // One past it: a new round ends at today's snd_nxt, and this ACK's
    // sample is the new round's first (as in Linux 6.13 HyStart).
    b.tp.snd_una = SeqNum(1001);
    b.h.pkts_acked(&mut b.tp, 60 * MS, b.era);
    assert_eq!((b.h.rounds, b.h.window_end), (1, SeqNum(1010)));
    assert_eq!(b.h.last_round_min_rtt, 50_000);
    assert_eq!((b.h.current_round_min_rtt, b.h.rtt_sample_count), (60_000, 1));
    // More ACKs inside the round: the minimum tracks, the end stays
    // although snd_nxt moves.
    b.tp.snd_nxt = SeqNum(1020);
    for r in [55 * MS, 70 * MS] {
        b.ack(r);
    }
    assert_eq!((b.h.rounds, b.h.window_end), (1, SeqNum(1010)));
    assert_eq!((b.h.current_round_min_rtt, b.h.rtt_sample_count), (55_000, 3));
    // A round without samples leaves lastRoundMinRTT at infinity next.
    b.end_round();
    assert_eq!(b.h.last_round_min_rtt, 55_000);
    b.end_round();
    assert_eq!(b.h.last_round_min_rtt, RTT_INFINITY);
    assert_eq!(b.h.rounds, 3);
}

#[test]
fn test_slow_start_rounds_across_sequence_wrap() {
    let mut b = Bench::new(0);
    b.h.window_end = SeqNum(u32::MAX - 2);
    b.tp.snd_nxt = SeqNum(5);
    b.tp.snd_una = SeqNum(u32::MAX - 2);
    b.h.pkts_acked(&mut b.tp, 10 * MS, b.era);
    assert_eq!(b.h.rounds, 0);
    b.tp.snd_una = SeqNum(1);
    b.h.pkts_acked(&mut b.tp, 10 * MS, b.era);
    assert_eq!((b.h.rounds, b.h.window_end), (1, SeqNum(5)));
}

#[test]
fn test_slow_start_no_css_before_n_rtt_samples() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# if ((rttSampleCount >= N_RTT_SAMPLE) AND
    //#     (currentRoundMinRTT != infinity) AND
    //#     (lastRoundMinRTT != infinity))
    let mut b = Bench::new(0);
    b.round(&[100 * MS; 8]);
    // 7 samples far above the threshold, and ACKs without a sample,
    // do not decide.
    assert_eq!(b.round(&[200 * MS; 7]), HystartPlusPlusEvent::None);
    for _ in 0..5 {
        assert_eq!(b.ack(-1), HystartPlusPlusEvent::None);
    }
    assert_eq!((b.h.phase, b.h.rtt_sample_count), (HystartPlusPlusPhase::SlowStart, 7));
    assert_eq!(b.ack(200 * MS), HystartPlusPlusEvent::CssEntered);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::Css);
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries), 1);
    // Slow start is not over: ssthresh untouched.
    assert_eq!(b.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
}

#[test]
fn test_slow_start_no_css_without_last_round_min_rtt() {
    // The first round has no previous round; a round after one
    // without samples neither.
    let mut b = Bench::new(0);
    assert_eq!(b.round(&[500 * MS; 20]), HystartPlusPlusEvent::None);
    b.end_round();
    assert_eq!(b.round(&[900 * MS; 20]), HystartPlusPlusEvent::None);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::SlowStart);
}

// -----------------------------------------------------------------------
// Slow start → CSS: the threshold and its clamp
// -----------------------------------------------------------------------

#[test]
fn test_slow_start_rtt_thresh_clamped_to_4_and_16_ms() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //#   RttThresh = max(MIN_RTT_THRESH,
    //#     min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))
    for (last_ms, thresh_us) in [
        (0, 4_000),
        (10, 4_000),
        (20, 4_000),
        (32, 4_000),
        (40, 5_000),
        (80, 10_000),
        (128, 16_000),
        (160, 16_000),
        (4_000_000, 16_000),
    ] {
        assert_eq!(rtt_thresh(last_ms * 1000), thresh_us, "{last_ms} ms");
    }
    assert_eq!(rtt_thresh(RTT_INFINITY), MAX_RTT_THRESH_US);
}

/// Enters a round whose minimum is `current_us` after one at `last_us`.
fn entry(last_us: i64, current_us: i64) -> (HystartPlusPlusEvent, Bench) {
    let mut b = Bench::new(0);
    b.round(&[last_us; 8]);
    let e = b.round(&[current_us; 8]);
    (e, b)
}

#[test]
fn test_slow_start_css_entry_exactly_at_threshold() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //#   if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh))
    //#     cssBaselineMinRtt = currentRoundMinRTT
    //#     exit slow start and enter CSS
    // The base RTTs of the sensitivity map: 20 and 40 ms sit on the 4 ms
    // floor / 5 ms, 80 ms is 10 ms, 160 ms the 16 ms ceiling.
    for (last, thresh) in [(20_000, 4_000), (40_000, 5_000), (80_000, 10_000), (160_000, 16_000), (2_000, 4_000)] {
        let (e, b) = entry(last, last + thresh - 1);
        assert_eq!(e, HystartPlusPlusEvent::None, "{last} µs + {thresh} - 1");
        assert_eq!(b.h.phase, HystartPlusPlusPhase::SlowStart);
        let (e, b) = entry(last, last + thresh);
        assert_eq!(e, HystartPlusPlusEvent::CssEntered, "{last} µs + {thresh}");
        assert_eq!(b.h.css_baseline_min_rtt, (last + thresh) as u32);
        assert_eq!(b.h.css_rounds, 0);
    }
}

#[test]
fn test_slow_start_css_entry_uses_round_minimum_not_last_sample() {
    // One low sample among high ones keeps the round minimum low.
    let mut b = Bench::new(0);
    b.round(&[40 * MS; 8]);
    let e = b.round(&[60 * MS, 60 * MS, 41 * MS, 60 * MS, 60 * MS, 60 * MS, 60 * MS, 60 * MS, 60 * MS]);
    assert_eq!(e, HystartPlusPlusEvent::None);
    assert_eq!(b.h.current_round_min_rtt, 41_000);
}

// -----------------------------------------------------------------------
// CSS: growth
// -----------------------------------------------------------------------

#[test]
fn test_css_growth_divided_with_remainder_carried() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# cwnd = cwnd + (min(N, L * SMSS) / CSS_GROWTH_DIVISOR)
    let (_, mut b) = entry(40 * MS, 50 * MS);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::Css);
    b.tp.snd_cwnd = 100;
    // Four 1-packet ACKs: +1 in total, on the fourth.
    let mut seen = vec![];
    for _ in 0..4 {
        assert_eq!(b.h.slow_start(&mut b.tp, 1, b.era), 0);
        seen.push(b.tp.snd_cwnd);
    }
    assert_eq!(seen, [100, 100, 100, 101]);
    // Uneven ACKs lose nothing: 3 + 3 + 2 = 8 packets → +2.
    for acked in [3, 3, 2] {
        b.h.slow_start(&mut b.tp, acked, b.era);
    }
    assert_eq!((b.tp.snd_cwnd, b.h.css_carry), (103, 0));
    // 7 packets: +1, 3 carried; 1 more: +1.
    b.h.slow_start(&mut b.tp, 7, b.era);
    assert_eq!((b.tp.snd_cwnd, b.h.css_carry), (104, 3));
    b.h.slow_start(&mut b.tp, 1, b.era);
    assert_eq!((b.tp.snd_cwnd, b.h.css_carry), (105, 0));
    // In slow start the same ACKs grow cwnd by what they acked.
    let mut s = Bench::new(0);
    s.tp.snd_cwnd = 100;
    for acked in [1, 1, 1, 1, 3, 3, 2] {
        s.h.slow_start(&mut s.tp, acked, s.era);
    }
    assert_eq!(s.tp.snd_cwnd, 112);
}

#[test]
fn test_css_growth_capped_by_l_before_division() {
    // Unpaced L = 8: a 20-packet stretch ACK credits 8, so +2 in CSS.
    let (_, mut b) = entry(40 * MS, 50 * MS);
    b.tp.snd_cwnd = 100;
    b.h.slow_start(&mut b.tp, 20, b.era);
    assert_eq!((b.tp.snd_cwnd, b.h.css_carry), (102, 0));
    // Paced, L = infinity: +5.
    b.tp.pacing_status = PacingStatus::Fq;
    b.h.slow_start(&mut b.tp, 20, b.era);
    assert_eq!((b.tp.snd_cwnd, b.h.css_carry), (107, 0));
}

// -----------------------------------------------------------------------
// L in slow start
// -----------------------------------------------------------------------

#[test]
fn test_slow_start_l_limits_increase_when_unpaced() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //#   cwnd = cwnd + min(N, L * SMSS)
    let mut b = Bench::new(0);
    b.tp.snd_cwnd = 20;
    // Unpaced: L = 8, the other 12 acked packets are not credited and
    // not left for congestion avoidance either.
    assert_eq!(b.h.slow_start(&mut b.tp, 20, b.era), 0);
    assert_eq!(b.tp.snd_cwnd, 28);
    assert_eq!(b.h.slow_start(&mut b.tp, 5, b.era), 0);
    assert_eq!(b.tp.snd_cwnd, 33);
    // Paced (fq or internal): L = infinity, like Linux's slow start.
    b.tp.pacing_status = PacingStatus::Needed;
    b.h.slow_start(&mut b.tp, 20, b.era);
    assert_eq!(b.tp.snd_cwnd, 53);
    // An explicit L overrides the rule either way.
    let mut b = Bench::new(2);
    b.tp.pacing_status = PacingStatus::Fq;
    b.tp.snd_cwnd = 20;
    b.h.slow_start(&mut b.tp, 20, b.era);
    assert_eq!(b.tp.snd_cwnd, 22);
}

#[test]
fn test_slow_start_leftover_at_ssthresh_and_clamp() {
    // The increment goes through tcp_slow_start: capped at ssthresh
    // (what is left goes to AI) and at snd_cwnd_clamp.
    let mut b = Bench::new(0);
    b.tp.snd_cwnd = 10;
    b.tp.snd_ssthresh = 14;
    assert_eq!(b.h.slow_start(&mut b.tp, 6, b.era), 2);
    assert_eq!(b.tp.snd_cwnd, 14);
    let mut b = Bench::new(0);
    b.tp.snd_cwnd = 10;
    b.tp.snd_cwnd_clamp = 12;
    b.h.slow_start(&mut b.tp, 6, b.era);
    assert_eq!(b.tp.snd_cwnd, 12);
}

// -----------------------------------------------------------------------
// CSS → slow start
// -----------------------------------------------------------------------

#[test]
fn test_css_rtt_below_baseline_resumes_slow_start() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# if (currentRoundMinRTT < cssBaselineMinRtt)
    //#   cssBaselineMinRtt = infinity
    //#   resume slow start including HyStart++
    let (_, mut b) = entry(40 * MS, 50 * MS);
    b.h.slow_start(&mut b.tp, 1, b.era);
    assert_eq!(b.h.css_carry, 1);
    // Next round: equal to the baseline is not below it.
    assert_eq!(b.round(&[50 * MS; 10]), HystartPlusPlusEvent::None);
    assert_eq!((b.h.phase, b.h.css_rounds), (HystartPlusPlusPhase::Css, 1));
    // Then 7 lower samples are not enough, the 8th is.
    assert_eq!(b.round(&[49 * MS; 7]), HystartPlusPlusEvent::None);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::Css);
    assert_eq!(b.ack(49 * MS), HystartPlusPlusEvent::SlowStartResumed);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::SlowStart);
    assert_eq!(b.h.css_baseline_min_rtt, RTT_INFINITY);
    assert_eq!((b.h.css_rounds, b.h.css_carry), (0, 0));
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusCssResumes), 1);
    assert_eq!(b.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    // Full slow-start growth again.
    b.tp.snd_cwnd = 50;
    b.h.slow_start(&mut b.tp, 4, b.era);
    assert_eq!(b.tp.snd_cwnd, 54);
    // "including HyStart++": a later increase enters CSS again, against
    // the last round's minimum.
    // (RttThresh after a 49 ms round: 6.125 ms.)
    b.round(&[49 * MS; 8]);
    assert_eq!(b.round(&[55 * MS; 8]), HystartPlusPlusEvent::None);
    assert_eq!(b.round(&[62 * MS; 8]), HystartPlusPlusEvent::CssEntered);
    assert_eq!(b.h.css_baseline_min_rtt, 62_000);
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries), 2);
}

#[test]
fn test_css_lower_sample_in_entry_round_resumes() {
    // The entry round already has N_RTT_SAMPLE samples; a later, lower
    // sample in it takes currentRoundMinRTT below the baseline.
    let (_, mut b) = entry(40 * MS, 50 * MS);
    assert_eq!(b.ack(48 * MS), HystartPlusPlusEvent::SlowStartResumed);
}

// -----------------------------------------------------------------------
// CSS → congestion avoidance
// -----------------------------------------------------------------------

#[test]
fn test_css_exits_to_congestion_avoidance_after_css_rounds() {
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=test
    //# CSS lasts at most CSS_ROUNDS rounds.  If the transition into CSS
    //# happens in the middle of a round, that partial round counts towards
    //# the limit.
    //#
    //# If CSS_ROUNDS rounds are complete, enter congestion avoidance by
    //# setting the ssthresh to the current cwnd.
    //#
    //# ssthresh = cwnd
    let (_, mut b) = entry(40 * MS, 50 * MS);
    b.tp.snd_cwnd = 77;
    // The entry round (partial) plus 3 more end: 4 complete, still CSS.
    for n in 1..=4 {
        assert_eq!(b.round(&[50 * MS; 8]), HystartPlusPlusEvent::None);
        assert_eq!((b.h.phase, b.h.css_rounds), (HystartPlusPlusPhase::Css, n));
    }
    // The ACK ending the 5th: congestion avoidance.
    b.tp.snd_una = b.h.window_end + 1;
    assert_eq!(b.h.pkts_acked(&mut b.tp, 50 * MS, b.era), HystartPlusPlusEvent::Exited);
    assert_eq!(b.h.phase, HystartPlusPlusPhase::Done);
    assert_eq!(b.tp.snd_ssthresh, 77);
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusExits), 1);
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusExitCwnd), 77);
    // Done for good: nothing more happens, even back in slow start.
    b.tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
    assert!(!b.h.is_active(&b.tp, b.era));
    assert_eq!(b.round(&[10 * MS; 8]), HystartPlusPlusEvent::None);
    assert_eq!(b.tp.mib.get(Mib::TcplabHystartPlusPlusExits), 1);
}

#[test]
fn test_css_resume_restarts_the_css_round_count() {
    let (_, mut b) = entry(40 * MS, 50 * MS);
    b.round(&[50 * MS; 8]);
    b.round(&[50 * MS; 8]);
    assert_eq!(b.h.css_rounds, 2);
    b.round(&[45 * MS; 8]); // resume
    b.round(&[55 * MS; 8]); // 45 + 5 ms: CSS again
    assert_eq!((b.h.phase, b.h.css_rounds), (HystartPlusPlusPhase::Css, 0));
    for _ in 0..4 {
        assert_eq!(b.round(&[55 * MS; 8]), HystartPlusPlusEvent::None);
    }
    assert_eq!(b.end_round(), HystartPlusPlusEvent::Exited);
}

// -----------------------------------------------------------------------
// Congestion, and which slow starts HyStart++ governs
// -----------------------------------------------------------------------

#[test]
fn test_css_congestion_ends_hystart_plus_plus() {
    let (_, mut b) = entry(40 * MS, 50 * MS);
    b.h.on_congestion();
    assert_eq!(b.h.phase, HystartPlusPlusPhase::Done);
    // The owner set ssthresh from its own hook; whatever it is,
    // HyStart++ no longer acts.
    b.tp.snd_ssthresh = 30;
    assert!(!b.h.is_active(&b.tp, b.era));
    assert_eq!(b.round(&[50 * MS; 8]), HystartPlusPlusEvent::None);
    assert_eq!(b.tp.snd_ssthresh, 30);
}

#[test]
fn test_slow_start_only_the_initial_one() {
    // A finite ssthresh at start (metrics cache, initial_ssthresh):
    // standard slow start, HyStart++ idle.
    let mut b = Bench::new(0);
    b.tp.snd_ssthresh = 1000;
    b.round(&[40 * MS; 8]);
    assert_eq!(b.round(&[90 * MS; 8]), HystartPlusPlusEvent::None);
    assert_eq!(b.h.rounds, 0);
    // Not in slow start (era test): idle as well.
    let mut b = Bench::new(0);
    b.tp.snd_cwnd = TCP_INFINITE_SSTHRESH;
    assert!(!b.h.is_active(&b.tp, CcEra::Current));
    assert!(b.h.is_active(&b.tp, CcEra::V3_18));
}

#[test]
fn test_no_panic_on_arbitrary_inputs() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x9e37_79b9_7f4a_7c15)
    };
    for era in [CcEra::V3_18, CcEra::V3_19, CcEra::V4_17, CcEra::Current] {
        let mut h = HystartPlusPlus::new([0, 1, 8, u32::MAX][(next() % 4) as usize]);
        let mut tp = CaCtx::default();
        h.init(&tp);
        for _ in 0..20_000 {
            let pick = |v: u64| match v % 5 {
                0 => 0,
                1 => u32::MAX,
                2 => TCP_INFINITE_SSTHRESH,
                _ => (v >> 8) as u32,
            };
            tp.snd_cwnd = pick(next());
            tp.snd_ssthresh = if next() % 2 == 0 { TCP_INFINITE_SSTHRESH } else { pick(next()) };
            tp.snd_cwnd_clamp = pick(next());
            tp.snd_una = SeqNum(next() as u32);
            tp.snd_nxt = SeqNum(next() as u32);
            tp.pacing_status = [PacingStatus::None, PacingStatus::Fq][(next() % 2) as usize];
            let rtt = match next() % 4 {
                0 => -1,
                1 => i64::MAX,
                2 => i64::MIN,
                _ => (next() % 1_000_000) as i64,
            };
            let _ = h.pkts_acked(&mut tp, rtt, era);
            let _ = h.slow_start(&mut tp, pick(next()), era);
            if next() % 1000 == 0 {
                h.on_congestion();
                h.init(&tp);
            }
        }
    }
}

// -----------------------------------------------------------------------
// Through AnyCc: CUBIC and Reno on a bottleneck
// -----------------------------------------------------------------------

/// One flow over a FIFO bottleneck with an unbounded queue: `base_us`
/// two-way propagation, one packet served every `serve_us`, one ACK per
/// packet, one sequence number per packet. The queue makes the RTT rise
/// once cwnd passes the BDP, so the delay detectors have something to
/// see; ACKs `serve_us` (> 2 ms) apart never form a HyStart ACK train.
/// Returns the context after `acks` ACKs and whether Linux HyStart's
/// `hystart_update` ever ran (CUBIC only).
fn bottleneck_run(cc: &mut AnyCc, base_us: u64, serve_us: u64, acks: u32) -> (CaCtx, bool) {
    let mut tp = CaCtx { snd_cwnd: 10, snd_una: SeqNum(1), snd_nxt: SeqNum(1), ..CaCtx::default() };
    let set_time = |tp: &mut CaCtx, us: u64| {
        tp.now = Instant::from_micros(us);
        tp.jiffies = tp.now.jiffies32(tp.hz);
    };
    let mut now = 1_000_000u64;
    set_time(&mut tp, now);
    cc.init(&mut tp);
    // In flight, oldest first: (send time, ACK time).
    let mut flight: VecDeque<(u64, u64)> = VecDeque::new();
    let mut last_departure = 0u64;
    let mut linux_hystart_ran = false;
    let mut send = |tp: &mut CaCtx, flight: &mut VecDeque<(u64, u64)>, now: u64| {
        while (flight.len() as u32) < tp.snd_cwnd {
            last_departure = last_departure.max(now + base_us / 2) + serve_us;
            flight.push_back((now, last_departure + base_us / 2));
            tp.snd_nxt += 1;
        }
    };
    send(&mut tp, &mut flight, now);
    for _ in 0..acks {
        let Some((sent, acked_at)) = flight.pop_front() else {
            break;
        };
        now = acked_at;
        set_time(&mut tp, now);
        tp.snd_una += 1;
        tp.max_packets_out = tp.snd_cwnd;
        tp.packets_out = flight.len() as u32;
        let sample = AckSample { pkts_acked: 1, rtt_us: (now - sent) as i64, in_flight: flight.len() as u32 + 1 };
        cc.pkts_acked(&mut tp, &sample);
        let ack = tp.snd_una;
        cc.cong_avoid(&mut tp, ack, 1);
        if let AnyCc::Cubic(c) = cc {
            linux_hystart_ran |= c.take_trace().hystart_called;
        }
        send(&mut tp, &mut flight, now);
    }
    (tp, linux_hystart_ran)
}

fn cubic(version: CubicVersion, hspp: bool) -> AnyCc {
    AnyCc::new(&CcConfig::Cubic(CubicParams { hystart_plus_plus: hspp, ..CubicParams::for_version(version) }))
}

#[test]
fn test_any_cc_cubic_with_hystart_plus_plus_never_runs_linux_hystart() {
    for version in [CubicVersion::V3_18, CubicVersion::V3_19, CubicVersion::Current] {
        // Control: Linux HyStart's delay test ends slow start on this
        // path (40 ms, 2 ms per packet: BDP 20 packets).
        let mut cc = cubic(version, false);
        let (tp, ran) = bottleneck_run(&mut cc, 40_000, 2_500, 3_000);
        assert!(ran, "{version:?}");
        let AnyCc::Cubic(c) = &cc else { unreachable!() };
        assert_ne!(c.ca().hystart.found, 0, "{version:?}: Linux HyStart fired");
        assert!(tp.snd_ssthresh < TCP_INFINITE_SSTHRESH, "{version:?}");
        assert_eq!(tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries), 0);

        // HyStart++ selected: Linux HyStart never runs, never fires,
        // never starts a round; HyStart++ alone ends slow start.
        let mut cc = cubic(version, true);
        assert!(matches!(&cc, AnyCc::Cubic(c) if c.params().validate().is_ok()));
        let (tp, ran) = bottleneck_run(&mut cc, 40_000, 2_500, 3_000);
        assert!(!ran, "{version:?}: hystart_update ran");
        let AnyCc::Cubic(c) = &cc else { unreachable!() };
        assert_eq!(c.ca().hystart.found, 0, "{version:?}");
        assert_eq!(c.ca().hystart.sample_cnt, 0, "{version:?}");
        for m in [
            Mib::TcpExtTCPHystartDelayDetect,
            Mib::TcpExtTCPHystartDelayCwnd,
            Mib::TcpExtTCPHystartTrainDetect,
            Mib::TcpExtTCPHystartTrainCwnd,
        ] {
            assert_eq!(tp.mib.get(m), 0, "{version:?} {m:?}");
        }
        assert!(tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries) >= 1, "{version:?}");
        assert_eq!(tp.mib.get(Mib::TcplabHystartPlusPlusExits), 1, "{version:?}");
        let hspp = c.hystart_plus_plus().expect("selected");
        assert_eq!(hspp.phase, HystartPlusPlusPhase::Done);
        assert!(tp.snd_ssthresh < TCP_INFINITE_SSTHRESH);
    }
}

#[test]
fn test_any_cc_cubic_css_loss_gets_cubic_reaction() {
    let mut cc = cubic(CubicVersion::Current, true);
    let mut tp = CaCtx::default();
    cc.init(&mut tp);
    let AnyCc::Cubic(c) = &mut cc else { unreachable!() };
    c.hystart_plus_plus_mut().unwrap().phase = HystartPlusPlusPhase::Css;
    tp.snd_cwnd = 100;
    // Loss in CSS: CUBIC's own beta, not ssthresh = cwnd, and HyStart++
    // is over.
    assert_eq!(cc.ssthresh(&mut tp), 70);
    let AnyCc::Cubic(c) = &cc else { unreachable!() };
    assert_eq!(c.hystart_plus_plus().unwrap().phase, HystartPlusPlusPhase::Done);
    // Default CUBIC has no HyStart++ state to show.
    let AnyCc::Cubic(c) = cubic(CubicVersion::Current, false) else { unreachable!() };
    assert!(c.hystart_plus_plus().is_none());
    assert!(!Cubic::new(CubicParams::default()).params().hystart_plus_plus);
}

#[test]
fn test_any_cc_reno_with_hystart_plus_plus() {
    let params = RenoParams { hystart_plus_plus: true, ..RenoParams::default() };
    let mut cc = AnyCc::Reno(Reno::with_params(params));
    let (tp, _) = bottleneck_run(&mut cc, 40_000, 2_500, 3_000);
    assert!(tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries) >= 1);
    assert_eq!(tp.mib.get(Mib::TcplabHystartPlusPlusExits), 1);
    assert!(tp.snd_ssthresh < TCP_INFINITE_SSTHRESH);
    // Loss: Reno's halving, HyStart++ over.
    let mut tp = tp;
    tp.snd_cwnd = 100;
    assert_eq!(cc.ssthresh(&mut tp), 50);
    // Default Reno (as Linux): no early exit on the same path.
    let mut cc = AnyCc::new(&CcConfig::from_name("reno").unwrap());
    let (tp, _) = bottleneck_run(&mut cc, 40_000, 2_500, 3_000);
    assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
    assert_eq!(tp.mib.get(Mib::TcplabHystartPlusPlusCssEntries), 0);
}

#[test]
fn test_any_cc_reno_l_and_css_growth_in_cong_avoid() {
    let mut r = Reno::with_params(RenoParams { hystart_plus_plus: true, ..RenoParams::default() });
    let mut tp = CaCtx { snd_cwnd: 20, max_packets_out: 20, ..CaCtx::default() };
    r.init(&mut tp);
    // A 20-packet stretch ACK, unpaced: +8.
    r.cong_avoid(&mut tp, SeqNum(0), 20);
    assert_eq!(tp.snd_cwnd, 28);
    // In CSS: +2 for the same ACK.
    r.hystart_plus_plus_mut().unwrap().phase = HystartPlusPlusPhase::Css;
    r.cong_avoid(&mut tp, SeqNum(0), 20);
    assert_eq!(tp.snd_cwnd, 30);
    // Linux's Reno: all 20.
    let mut plain = Reno::new();
    let mut tp = CaCtx { snd_cwnd: 20, max_packets_out: 20, ..CaCtx::default() };
    plain.cong_avoid(&mut tp, SeqNum(0), 20);
    assert_eq!(tp.snd_cwnd, 40);
    assert!(plain.hystart_plus_plus().is_none());
}
