//! HyStart's exit rules (net/ipv4/tcp_cubic.c `hystart_update`), checked
//! by hand on synthetic ACK streams through CUBIC's public hooks, for each
//! modelled era (shared/linux-tcp-model.md §6.3):
//!
//! * 3.18.30: ms clock, delays in ms·8 (1 unit = 125 µs), `delay_min >> 4`,
//!   no MIB counters;
//! * 3.19: as 3.18 but `delay_min >> 3` and the `TCPHystart*` counters,
//!   both as the 3.19.8 tree (`CubicVersion::V3_19`) and as released
//!   (`CubicParams::v3_19_as_released`, the 3.18 window update);
//! * 6.13.7: µs clock, the round minimum taken over every sample, and the
//!   pacing-aware ACK-train threshold.
//!
//! # How a flow is driven
//!
//! As tests/vectors_hystart.rs does: before each ACK the test sets `now`
//! (µs) and `jiffies` (HZ = 1000, so the 3.x ms clock `jiffies_to_msecs`
//! is `jiffies`), `snd_una`, `snd_nxt`, and pins `snd_cwnd` (the vectors'
//! `cwnd_in`), then calls `pkts_acked` and `cong_avoid` in the kernel's
//! order. Every ACK acks one packet. `ssthresh` is not pinned: HyStart
//! writes it.
//!
//! A *round* lasts while `snd_una` stays at or below `end_seq` (the
//! `snd_nxt` of its start). Round 0 starts at `init` (t = T0) and carries
//! one ACK with the base RTT, which sets `delay_min`. The next round is
//! entered by an ACK that passes `end_seq` but has no RTT sample
//! (`rtt_us = -1`, e.g. it acks only retransmitted data): 3.x resets the
//! round from `cong_avoid` on that ACK, 6.13 from `hystart_update` on the
//! next sampled ACK, so in every era the following samples are samples
//! 1, 2, … of the new round (`round_boundary_sample_…` shows what happens
//! when the boundary ACK does carry a sample).
//!
//! In the delay tests ACKs are 3 ms apart, more than `hystart_ack_delta`
//! (2 ms), so the ACK train never continues.

use tcplab_core::cc::cubic::{Cubic, CubicParams, CubicTrace, CubicVersion, UpdatePath};
use tcplab_core::cc::hystart::{HystartVersion, HYSTART_ACK_TRAIN, HYSTART_DELAY, HYSTART_MIN_SAMPLES};
use tcplab_core::cc::{AckSample, AnyCc, CaCtx, CcConfig, CongestionOps, PacingStatus, TCP_INFINITE_SSTHRESH};
use tcplab_core::counters::Mib;
use tcplab_core::time::Instant;
use tcplab_core::wire::SeqNum;

/// `init` time: 10 s, a whole number of ms (the 3.x clock is exact).
const T0_US: u64 = 10_000_000;
/// `snd_una` at `init`.
const ISS: u32 = 1_000_000;
/// Packets outstanding at the start of a round: `end_seq = snd_una + 100`,
/// more ACKs than any round here uses.
const WINDOW: u32 = 100;
/// ACK spacing of the delay tests: above `hystart_ack_delta` (2 ms).
const GAP_US: u64 = 3_000;

fn set_clock(tp: &mut CaCtx, t_us: u64) {
    tp.now = Instant::from_micros(t_us);
    tp.jiffies = tp.now.jiffies32(tp.hz);
}

/// The eras, with their default module parameters.
fn eras() -> Vec<(&'static str, CubicParams)> {
    vec![
        ("3.18", CubicParams::for_version(CubicVersion::V3_18)),
        ("3.19.8", CubicParams::for_version(CubicVersion::V3_19)),
        ("3.19 as released", CubicParams::v3_19_as_released()),
        ("6.13", CubicParams::for_version(CubicVersion::Current)),
    ]
}

/// One unit of the era's delay: 1 µs (6.13), one ms·8 unit = 125 µs (3.x).
fn unit_us(p: &CubicParams) -> i64 {
    if p.hystart_version.is_ms_clock() {
        125
    } else {
        1
    }
}

/// The era's value of `found` after a delay exit.
fn found_delay(p: &CubicParams) -> u8 {
    if p.hystart_version.is_ms_clock() {
        HYSTART_DELAY
    } else {
        1
    }
}

/// The era's value of `found` after an ACK-train exit.
fn found_train(p: &CubicParams) -> u8 {
    if p.hystart_version.is_ms_clock() {
        HYSTART_ACK_TRAIN
    } else {
        1
    }
}

struct Flow {
    cc: AnyCc,
    tp: CaCtx,
    /// The sender's cwnd, pinned before every ACK.
    cwnd: u32,
    /// Time of the last ACK (µs).
    t_us: u64,
}

impl Flow {
    fn start(params: CubicParams, cwnd: u32) -> Flow {
        assert!(params.validate().is_ok());
        assert_eq!(params.hystart_low_window, 16);
        assert_eq!(params.hystart_ack_delta_us, 2_000);
        assert_eq!(params.hystart_detect, HYSTART_ACK_TRAIN | HYSTART_DELAY);
        let mut tp = CaCtx::default();
        assert_eq!(tp.hz, 1000);
        assert_eq!(tp.snd_ssthresh, TCP_INFINITE_SSTHRESH);
        tp.snd_cwnd = cwnd;
        tp.snd_una = SeqNum(ISS);
        tp.snd_nxt = SeqNum(ISS + WINDOW);
        tp.is_cwnd_limited = true;
        set_clock(&mut tp, T0_US);
        let mut cc = AnyCc::new(&CcConfig::Cubic(params));
        cc.init(&mut tp);
        Flow { cc, tp, cwnd, t_us: T0_US }
    }

    fn cubic(&self) -> &Cubic {
        match &self.cc {
            AnyCc::Cubic(c) => c,
            _ => unreachable!("cubic"),
        }
    }

    fn cubic_mut(&mut self) -> &mut Cubic {
        match &mut self.cc {
            AnyCc::Cubic(c) => c,
            _ => unreachable!("cubic"),
        }
    }

    /// One ACK at `t_us` with cumulative ACK `una` and RTT sample `rtt_us`
    /// (negative: none): `pkts_acked`, then `cong_avoid`.
    fn ack_una(&mut self, t_us: u64, una: u32, rtt_us: i64) -> CubicTrace {
        assert!(t_us >= self.t_us, "time runs forward");
        self.t_us = t_us;
        set_clock(&mut self.tp, t_us);
        self.tp.snd_una = SeqNum(una);
        self.tp.snd_cwnd = self.cwnd;
        self.tp.max_packets_out = self.cwnd;
        let _ = self.cubic_mut().take_trace();
        let sample = AckSample { pkts_acked: 1, rtt_us, in_flight: self.cwnd };
        self.cc.pkts_acked(&mut self.tp, &sample);
        self.cc.cong_avoid(&mut self.tp, SeqNum(una), 1);
        self.cubic_mut().take_trace()
    }

    /// The next in-round ACK (`snd_una + 1`).
    fn ack(&mut self, t_us: u64, rtt_us: i64) -> CubicTrace {
        let una = self.tp.snd_una.0 + 1;
        assert!(!SeqNum(una).after(self.tp.snd_nxt), "an in-round ACK stays within the window");
        self.ack_una(t_us, una, rtt_us)
    }

    /// An ACK passing `end_seq` without an RTT sample, `GAP_US` later;
    /// `WINDOW` new packets are sent (`snd_nxt` moves).
    fn next_round(&mut self) -> CubicTrace {
        let end = self.tp.snd_nxt.0;
        self.tp.snd_nxt = SeqNum(end + 1 + WINDOW);
        let t = self.t_us + GAP_US;
        self.ack_una(t, end + 1, -1)
    }

    /// Round 0: one ACK with RTT `base_us` (sets `delay_min`), then the
    /// round boundary.
    fn prime(&mut self, base_us: i64) {
        let t = self.t_us + GAP_US;
        self.ack(t, base_us);
        self.next_round();
    }

    /// ACKs `GAP_US` apart with the given RTT samples; returns the 1-based
    /// index of the ACK on which the delay test fired. Fails if the ACK
    /// train fires or the delay test fires twice.
    fn delay_samples(&mut self, samples: &[i64]) -> Option<usize> {
        let mut exit = None;
        for (i, &rtt) in samples.iter().enumerate() {
            let t = self.t_us + GAP_US;
            let tr = self.ack(t, rtt);
            assert!(!tr.hystart_exit.train, "ACKs 3 ms apart are no train");
            if tr.hystart_exit.delay {
                assert!(exit.is_none(), "delay exit fired twice");
                exit = Some(i + 1);
            }
        }
        exit
    }

    fn mib(&self, m: Mib) -> u64 {
        self.tp.mib.get(m)
    }

    fn hystart_mibs(&self) -> [u64; 4] {
        [
            self.mib(Mib::TcpExtTCPHystartTrainDetect),
            self.mib(Mib::TcpExtTCPHystartTrainCwnd),
            self.mib(Mib::TcpExtTCPHystartDelayDetect),
            self.mib(Mib::TcpExtTCPHystartDelayCwnd),
        ]
    }
}

/// Runs `prime(base)` then `n` samples of `rtt` at cwnd 20; returns the
/// flow and the index of the delay exit.
fn delay_round(p: &CubicParams, base_us: i64, rtt_us: i64, n: usize) -> (Flow, Option<usize>) {
    let mut f = Flow::start(p.clone(), 20);
    f.prime(base_us);
    let exit = f.delay_samples(&vec![rtt_us; n]);
    (f, exit)
}

/// Delay threshold boundary: with `base` as delay_min and `thr_us` the
/// era's margin, 12 samples at `base + thr` (and at one unit above minus
/// 1 µs, which in 3.x is still the same ms·8 unit) never fire, while 9
/// samples one unit above fire exactly on the 9th. Also pins the era's
/// delay unit in `delay_min` and `curr_rtt`.
fn check_delay_boundary(label: &str, p: &CubicParams, base_us: i64, thr_us: i64) {
    let ms8 = p.hystart_version.is_ms_clock();
    let to_unit = |us: i64| -> u32 {
        if ms8 {
            (us * 8 / 1000) as u32
        } else {
            us as u32
        }
    };
    let quiet = base_us + thr_us;
    let fire = quiet + unit_us(p);

    let (f, exit) = delay_round(p, base_us, quiet, 12);
    assert_eq!(exit, None, "{label}: curr_rtt = delay_min + thresh does not fire");
    assert_eq!(f.cubic().ca().delay_min, to_unit(base_us), "{label}");
    assert_eq!(f.cubic().ca().hystart.curr_rtt, to_unit(quiet), "{label}");
    assert_eq!(f.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "{label}");

    let (f, exit) = delay_round(p, base_us, fire - 1, 12);
    assert_eq!(exit, None, "{label}: {} µs does not fire", fire - 1);
    assert_eq!(f.cubic().ca().hystart.curr_rtt, to_unit(quiet), "{label}");

    let (f, exit) = delay_round(p, base_us, fire, 9);
    assert_eq!(exit, Some(9), "{label}: one unit above fires on the 9th sample");
    assert_eq!(f.cubic().ca().hystart.curr_rtt, to_unit(quiet) + 1, "{label}");
    assert_eq!(f.cubic().ca().hystart.found, found_delay(p), "{label}");
    assert_eq!(f.tp.snd_ssthresh, 20, "{label}: ssthresh = cwnd");
}

// ---------------------------------------------------------------------------
// Delay increase: the threshold clamp(delay_min >> shift, 4 ms, 16 ms)
// ---------------------------------------------------------------------------

/// Unclamped middle, delay_min = 80 ms.
///
/// * 3.18: delay_min = 80000·8/1000 = 640 ms·8; 640 >> 4 = 40 (5 ms), in
///   [32, 128]. Fires iff curr_rtt > 680 (85 ms): 85 000 µs → 680 and
///   85 124 µs → 680 (85124·8/1000 = 680.99) do not; 85 125 µs → 681 does.
/// * 3.19 (both): 640 >> 3 = 80 (10 ms). Fires iff curr_rtt > 720 (90 ms):
///   90 000 / 90 124 µs → 720 no, 90 125 µs → 721 yes.
/// * 6.13: 80 000 >> 3 = 10 000 µs, in [4000, 16000]. Fires iff curr_rtt >
///   90 000 µs: 90 000 no, 90 001 yes.
#[test]
fn delay_exit_boundary_unclamped_80ms() {
    for (label, p) in eras() {
        let thr = match p.hystart_version {
            HystartVersion::V3_18 => 5_000,
            HystartVersion::V3_19 | HystartVersion::Current => 10_000,
        };
        check_delay_boundary(label, &p, 80_000, thr);
    }
}

/// 4 ms floor, delay_min = 20 ms.
///
/// * 3.18: 160 ms·8 >> 4 = 10 (1.25 ms) → clamped up to 32 (4 ms).
/// * 3.19: 160 >> 3 = 20 (2.5 ms) → 32 (4 ms).
/// * 6.13: 20 000 >> 3 = 2 500 µs → 4 000 µs.
///
/// So every era fires iff curr_rtt > 24 ms: 24 000 µs (192 ms·8) does not,
/// although it is above the unclamped 21.25 / 22.5 ms; 24 125 µs (193) /
/// 24 001 µs does.
#[test]
fn delay_exit_boundary_4ms_floor_short_rtt() {
    for (label, p) in eras() {
        check_delay_boundary(label, &p, 20_000, 4_000);
        // Above the unclamped margin but below the floor: no exit.
        let unclamped = if p.hystart_version == HystartVersion::V3_18 { 21_250 } else { 22_500 };
        let (_, exit) = delay_round(&p, 20_000, unclamped + 1_000, 12);
        assert_eq!(exit, None, "{label}: the 4 ms floor applies");
    }
}

/// 16 ms cap, delay_min = 400 ms.
///
/// * 3.18: 3200 ms·8 >> 4 = 200 (25 ms) → capped at 128 (16 ms).
/// * 3.19: 3200 >> 3 = 400 (50 ms) → 128 (16 ms).
/// * 6.13: 400 000 >> 3 = 50 000 µs → 16 000 µs.
///
/// Every era fires iff curr_rtt > 416 ms: 416 000 µs (3328 ms·8) does not,
/// 416 125 µs (3329) / 416 001 µs does, far below the unclamped 425 / 450 ms.
#[test]
fn delay_exit_boundary_16ms_cap_long_rtt() {
    for (label, p) in eras() {
        check_delay_boundary(label, &p, 400_000, 16_000);
    }
}

// ---------------------------------------------------------------------------
// Delay increase: sample counting and the round minimum
// ---------------------------------------------------------------------------

/// HYSTART_MIN_SAMPLES = 8: the first 8 samples of a round only fill
/// curr_rtt (sample_cnt 1…8); the comparison runs from the 9th on.
/// delay_min = 80 ms, samples 120 ms (far above 80 + 5 or 10 ms).
///
/// Round 1: 7 elevated samples, then the round ends: no exit. Round 2:
/// sample_cnt restarts; samples 1…8 no exit, the 9th fires.
#[test]
fn delay_exit_waits_for_eight_samples() {
    assert_eq!(HYSTART_MIN_SAMPLES, 8);
    for (label, p) in eras() {
        let mut f = Flow::start(p.clone(), 20);
        f.prime(80_000);
        assert_eq!(f.delay_samples(&[120_000; 7]), None, "{label}: 7 samples");
        assert_eq!(f.cubic().ca().hystart.sample_cnt, 7, "{label}");
        f.next_round();
        for i in 1..=8u8 {
            assert_eq!(f.delay_samples(&[120_000]), None, "{label}: sample {i}");
            assert_eq!(f.cubic().ca().hystart.sample_cnt, i, "{label}");
        }
        assert_eq!(f.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "{label}");
        assert_eq!(f.delay_samples(&[120_000]), Some(1), "{label}: 9th fires");
        assert_eq!(f.cubic().ca().hystart.sample_cnt, 8, "{label}: stays 8");
        assert_eq!(f.tp.snd_ssthresh, 20, "{label}");
    }
}

/// ≤ 5.6 tests the minimum of the *first 8* samples, frozen; 6.13 the
/// minimum of every sample of the round so far. delay_min = 80 ms, so the
/// limit is 85 ms (3.18) or 90 ms (3.19, 6.13); elevated samples 100 ms
/// (800 ms·8).
///
/// A: 8 × 100 ms, then one at 80 ms, then 5 × 100 ms. 3.x: curr_rtt frozen
///    at 800 > 680 / 720 → fires on the 9th (the 80 ms sample). 6.13: the
///    9th sample lowers curr_rtt to 80 000 ≤ 90 000 → never fires.
/// B: the 80 ms sample is the 4th of the first 8: min = 80 ms in every era
///    → no exit in 14 samples.
#[test]
fn delay_round_min_frozen_after_eight_in_3x_running_in_6_13() {
    let e = 100_000;
    let b = 80_000;
    for (label, p) in eras() {
        let ms8 = p.hystart_version.is_ms_clock();

        let (mut f, _) = delay_round(&p, b, e, 0);
        let exit = f.delay_samples(&[e, e, e, e, e, e, e, e, b, e, e, e, e, e]);
        if ms8 {
            assert_eq!(exit, Some(9), "{label}: frozen min of the first 8");
            assert_eq!(f.cubic().ca().hystart.curr_rtt, 800, "{label}");
            assert_eq!(f.tp.snd_ssthresh, 20, "{label}");
        } else {
            assert_eq!(exit, None, "{label}: the 9th sample lowers the min");
            assert_eq!(f.cubic().ca().hystart.curr_rtt, 80_000, "{label}");
            assert_eq!(f.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "{label}");
        }

        let (mut f, _) = delay_round(&p, b, e, 0);
        let exit = f.delay_samples(&[e, e, e, b, e, e, e, e, e, e, e, e, e, e]);
        assert_eq!(exit, None, "{label}: one low sample among the first 8");
        let min = if ms8 { 640 } else { 80_000 };
        assert_eq!(f.cubic().ca().hystart.curr_rtt, min, "{label}");
    }
}

/// The sample of the ACK that passes end_seq: 6.13 resets the round at the
/// top of `hystart_update`, so it is sample 1 of the new round; ≤ 5.10
/// resets in `cong_avoid`, after `pkts_acked`, so it still belongs to the
/// old round. delay_min = 80 ms, samples 120 ms.
///
/// 6.13: after the boundary ACK sample_cnt = 1, curr_rtt = 120 000 µs; the
/// exit comes 8 ACKs later (the round's 9th sample). 3.x: sample_cnt = 0,
/// curr_rtt = 0 (unset); the exit comes 9 ACKs later.
#[test]
fn round_boundary_sample_belongs_to_new_round_only_in_6_13() {
    for (label, p) in eras() {
        let mut f = Flow::start(p.clone(), 20);
        let t = f.t_us + GAP_US;
        f.ack(t, 80_000);
        let end = f.tp.snd_nxt.0;
        f.tp.snd_nxt = SeqNum(end + 1 + WINDOW);
        let t = f.t_us + GAP_US;
        let tr = f.ack_una(t, end + 1, 120_000);
        assert_eq!(tr.round_resets, 1, "{label}");
        assert_eq!(f.cubic().ca().hystart.end_seq, SeqNum(end + 1 + WINDOW));
        let h = f.cubic().ca().hystart;
        let exit = f.delay_samples(&[120_000; 10]);
        if p.hystart_version.is_ms_clock() {
            assert_eq!((h.sample_cnt, h.curr_rtt), (0, 0), "{label}");
            assert_eq!(exit, Some(9), "{label}");
        } else {
            assert_eq!((h.sample_cnt, h.curr_rtt), (1, 120_000), "{label}");
            assert_eq!(exit, Some(8), "{label}");
        }
    }
}

// ---------------------------------------------------------------------------
// Delay increase: the gates (cwnd ≥ hystart_low_window, slow start)
// ---------------------------------------------------------------------------

/// hystart_low_window = 16. delay_min = 20 ms (limit 24 ms in every era),
/// samples 40 ms.
///
/// cwnd 15, 12 samples: no exit, nothing counted (sample_cnt 0). 3.x does
/// not call `hystart_update` at all (the gate is in `pkts_acked`); 6.13
/// calls it, resets the round on the first sample, then returns before
/// the tests. cwnd 16 from the 13th sample: samples 13…20 are the round's
/// 1…8, the 21st fires, ssthresh = 16.
#[test]
fn delay_exit_only_from_hystart_low_window() {
    for (label, p) in eras() {
        let mut f = Flow::start(p.clone(), 15);
        f.prime(20_000);
        for i in 0..12 {
            let t = f.t_us + GAP_US;
            let tr = f.ack(t, 40_000);
            assert!(!tr.hystart_exit.delay && !tr.hystart_exit.train, "{label}");
            let v6 = p.hystart_version == HystartVersion::Current;
            assert_eq!(tr.hystart_called, v6, "{label}");
            assert_eq!(tr.round_resets, u8::from(v6 && i == 0), "{label}");
        }
        assert_eq!(f.cubic().ca().hystart.sample_cnt, 0, "{label}");
        assert!(f.cubic().ca().delay_min > 0, "{label}");
        assert_eq!(f.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "{label}");

        f.cwnd = 16;
        assert_eq!(f.delay_samples(&[40_000; 9]), Some(9), "{label}");
        assert_eq!(f.tp.snd_ssthresh, 16, "{label}");
    }
}

/// Only in slow start. cwnd 20, delay_min = 20 ms, 12 samples at 40 ms
/// (above the 24 ms limit). The flow is not cwnd-limited outside slow
/// start (`is_cwnd_limited = false`), so `cong_avoid` does nothing there
/// and epoch_start stays 0: the samples reach the HyStart gate instead of
/// being dropped by the "1 s after a reduction" rule.
///
/// * ssthresh 21 (cwnd < ssthresh): every era exits on the 9th sample.
/// * ssthresh 20 (cwnd == ssthresh): 3.x slow start is `cwnd <= ssthresh`,
///   so HyStart runs and exits on the 9th (ssthresh = cwnd = 20, already
///   so; 3.19 still counts DelayDetect 1, DelayCwnd 20). 6.13's slow start
///   is `cwnd < ssthresh`: HyStart does not run.
/// * ssthresh 19: no era runs HyStart.
#[test]
fn delay_exit_only_in_slow_start() {
    for (label, p) in eras() {
        let ms8 = p.hystart_version.is_ms_clock();
        let counted = p.hystart_version != HystartVersion::V3_18;
        for (ssthresh, runs) in [(21, true), (20, ms8), (19, false)] {
            let mut f = Flow::start(p.clone(), 20);
            f.tp.is_cwnd_limited = false;
            f.tp.snd_ssthresh = ssthresh;
            f.prime(20_000);
            let mut called = false;
            let mut exit = None;
            for i in 1..=12 {
                let t = f.t_us + GAP_US;
                let tr = f.ack(t, 40_000);
                called |= tr.hystart_called;
                if tr.hystart_exit.delay {
                    exit = Some(i);
                }
            }
            let l = format!("{label}, ssthresh {ssthresh}");
            assert_eq!(f.cubic().ca().epoch_start, 0, "{l}");
            assert_eq!(f.cubic().ca().delay_min, if ms8 { 160 } else { 20_000 }, "{l}");
            assert_eq!(called, runs, "{l}");
            if runs {
                assert_eq!(exit, Some(9), "{l}");
                assert_eq!(f.tp.snd_ssthresh, 20, "{l}");
                let n = u64::from(counted);
                assert_eq!(f.hystart_mibs(), [0, 0, n, 20 * n], "{l}");
            } else {
                assert_eq!(exit, None, "{l}");
                assert_eq!(f.cubic().ca().hystart.found, 0, "{l}");
                assert_eq!(f.tp.snd_ssthresh, ssthresh, "{l}");
                assert_eq!(f.hystart_mibs(), [0; 4], "{l}");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// Delay increase: the exit action
// ---------------------------------------------------------------------------

/// The exit: cwnd 37, delay_min 80 ms, 20 samples at 100 ms. On the 9th:
/// ssthresh = 37; found = 1 (6.13) or HYSTART_DELAY (3.x bitmask);
/// TcpExtTCPHystartDelayDetect += 1, TcpExtTCPHystartDelayCwnd += 37
/// (3.19, 6.13), no counter at all in 3.18; the train counters stay 0.
/// The same ACK's `cong_avoid` then sees cwnd == ssthresh: 6.13 leaves
/// slow start (CUBIC starts an epoch, cwnd stays 37); 3.x still slow starts
/// at `cwnd <= ssthresh` and grows once, to ssthresh + 1 = 38. The 11 later
/// samples exit no more.
#[test]
fn delay_exit_sets_ssthresh_to_cwnd_and_counts() {
    for (label, p) in eras() {
        let mut f = Flow::start(p.clone(), 37);
        f.prime(80_000);
        assert_eq!(f.delay_samples(&[100_000; 8]), None, "{label}");
        let t = f.t_us + GAP_US;
        let tr = f.ack(t, 100_000);
        assert!(tr.hystart_exit.delay && !tr.hystart_exit.train, "{label}");
        assert_eq!(f.tp.snd_ssthresh, 37, "{label}");
        assert_eq!(f.cubic().ca().hystart.found, found_delay(&p), "{label}");
        let n = u64::from(p.hystart_version != HystartVersion::V3_18);
        assert_eq!(f.hystart_mibs(), [0, 0, n, 37 * n], "{label}");
        if p.hystart_version.is_ms_clock() {
            assert_eq!(tr.path, Some(UpdatePath::SlowStartOnly), "{label}");
            assert_eq!(f.tp.snd_cwnd, 38, "{label}");
        } else {
            assert_eq!(tr.path, Some(UpdatePath::NewEpoch), "{label}");
            assert_eq!(f.tp.snd_cwnd, 37, "{label}");
        }
        assert_eq!(f.delay_samples(&[100_000; 11]), None, "{label}");
        assert_eq!(f.tp.snd_ssthresh, 37, "{label}");
        assert_eq!(f.hystart_mibs(), [0, 0, n, 37 * n], "{label}");
    }
}

// ---------------------------------------------------------------------------
// ACK train, ≤ 5.6: ms clock, delay_min / 2 in ms
// ---------------------------------------------------------------------------

/// Round 0 from `init` at T0; ACKs at T0 + `at_ms[i]` ms (as µs offsets),
/// each with RTT `rtt_us`. Returns the offset (µs) of the ACK on which the
/// train fired.
fn train_round(f: &mut Flow, at_us: &[u64], rtt_us: i64) -> Option<u64> {
    let mut fired = None;
    for &dt in at_us {
        let tr = f.ack(T0_US + dt, rtt_us);
        assert!(!tr.hystart_exit.delay, "no delay exit at a constant RTT");
        if tr.hystart_exit.train {
            assert!(fired.is_none(), "train fired twice");
            fired = Some(dt);
        }
    }
    fired
}

fn ms(v: &[u64]) -> Vec<u64> {
    v.iter().map(|m| m * 1_000).collect()
}

/// 3.x ACK train, cwnd 20, every RTT sample 20 ms: delay_min = 160 ms·8,
/// threshold = 160 >> 4 = 10 ms; round_start = last_ack = T0 (ms clock =
/// jiffies at HZ 1000).
///
/// * ACKs 1 ms apart (≤ hystart_ack_delta = 2 ms): +1 … +10 ms do not
///   fire (10 > 10 is false), +11 ms does. An ACK at +10.999 ms is still
///   +10 on the ms clock. ssthresh = 20; found = HYSTART_ACK_TRAIN;
///   3.19: TrainDetect 1, TrainCwnd 20; 3.18: no counters.
/// * 3.x ignores pacing: the same with PacingStatus::Fq.
/// * ACKs exactly 2 ms apart keep the train: +2 … +10 no, +12 fires.
#[test]
fn ack_train_v3_ms_clock_fires_after_half_delay_min() {
    for (label, p) in eras() {
        if !p.hystart_version.is_ms_clock() {
            continue;
        }
        let n = u64::from(p.hystart_version != HystartVersion::V3_18);
        for pacing in [PacingStatus::None, PacingStatus::Fq] {
            let mut f = Flow::start(p.clone(), 20);
            f.tp.pacing_status = pacing;
            let mut at = ms(&[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
            at.push(10_999);
            at.push(11_000);
            assert_eq!(train_round(&mut f, &at, 20_000), Some(11_000), "{label}");
            assert_eq!(f.cubic().ca().delay_min, 160, "{label}");
            assert_eq!(f.cubic().ca().hystart.found, found_train(&p), "{label}");
            assert_eq!(f.tp.snd_ssthresh, 20, "{label} {pacing:?}");
            assert_eq!(f.hystart_mibs(), [n, 20 * n, 0, 0], "{label}");
        }
        let mut f = Flow::start(p.clone(), 20);
        let at = ms(&[2, 4, 6, 8, 10, 12]);
        assert_eq!(train_round(&mut f, &at, 20_000), Some(12_000), "{label}");
    }
}

/// A gap above hystart_ack_delta ends the train for the rest of the round:
/// last_ack is then never advanced again, so every later gap is measured
/// from the last train ACK. delay_min = 20 ms (threshold 10 ms).
///
/// * 3.x (ms): ACKs at +1, +2, then +5 (gap 3 ms > 2), then every 1 ms to
///   +30: `now − last_ack` = now − 2 ms > 2 for all of them → never fires.
/// * 6.13 (µs, hystart_ack_delta_us = 2000): ACKs at +2000 µs, then +4001
///   (gap 2001 µs), then every 1000 µs to +30 000 → never fires; with
///   exact 2000 µs gaps, +2000 … +10 000 do not fire (10 000 > 10 000 is
///   false) and +12 000 does.
#[test]
fn ack_train_gap_above_ack_delta_ends_the_train() {
    for (label, p) in eras() {
        let mut f = Flow::start(p.clone(), 20);
        let mut at: Vec<u64> = if p.hystart_version.is_ms_clock() { ms(&[1, 2, 5]) } else { vec![2_000, 4_001] };
        at.extend((5..=30).map(|m| m * 1_000));
        at.dedup();
        assert_eq!(train_round(&mut f, &at, 20_000), None, "{label}");
        assert_eq!(f.tp.snd_ssthresh, TCP_INFINITE_SSTHRESH, "{label}");
        let last = f.cubic().ca().hystart.last_ack;
        let expect_last = if p.hystart_version.is_ms_clock() {
            f.tp.jiffies.wrapping_sub(28) // +2 ms; the last ACK was at +30 ms
        } else {
            (T0_US + 2_000) as u32
        };
        assert_eq!(last, expect_last, "{label}: last_ack stuck");

        let mut f = Flow::start(p.clone(), 20);
        let at: Vec<u64> = (1..=6).map(|k| k * 2_000).collect();
        assert_eq!(train_round(&mut f, &at, 20_000), Some(12_000), "{label}");
    }
}

// ---------------------------------------------------------------------------
// ACK train, 6.13: µs clock, pacing-aware threshold
// ---------------------------------------------------------------------------

/// ACKs every 1000 µs from +1000 up to `thr`, then at exactly `thr` and
/// `thr + 1` µs after round_start.
fn schedule_to(thr: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (1..=thr / 1_000).map(|k| k * 1_000).collect();
    if v.last() != Some(&thr) {
        v.push(thr);
    }
    v.push(thr + 1);
    v
}

/// 6.13 threshold = delay_min + hystart_ack_delay, where ack_delay =
/// min(1000 µs, 4·gso_max_size·10⁶ / pacing_rate) (0 without a rate), and
/// halved only when pacing_status is None. delay_min = 20 000 µs, gso_max_size
/// 65 536 (4·65 536 = 262 144 bytes):
///
/// | pacing  | rate (B/s)    | ack_delay                          | threshold            |
/// |---------|---------------|------------------------------------|----------------------|
/// | None    | 0             | 0                                  | 20 000 >> 1 = 10 000 |
/// | Fq      | 0             | 0                                  | 20 000               |
/// | Needed  | 0             | 0                                  | 20 000               |
/// | None    | 1 048 576 000 | 262 144·10⁶ / 1 048 576 000 = 250  | 20 250 >> 1 = 10 125 |
/// | Fq      | 1 048 576 000 | 250                                | 20 250               |
/// | None    | 12 500 000    | 20 971 → capped at 1 000           | 21 000 >> 1 = 10 500 |
/// | Fq      | 12 500 000    | 1 000                              | 21 000               |
///
/// In each case the ACK at exactly round_start + threshold does not fire
/// (an unsigned `>`), the one 1 µs later does: ssthresh = 20, TrainDetect
/// 1, TrainCwnd 20.
#[test]
fn ack_train_6_13_threshold_by_pacing_status_and_rate() {
    let p = CubicParams::for_version(CubicVersion::Current);
    let cases: [(PacingStatus, u64, u64); 7] = [
        (PacingStatus::None, 0, 10_000),
        (PacingStatus::Fq, 0, 20_000),
        (PacingStatus::Needed, 0, 20_000),
        (PacingStatus::None, 1_048_576_000, 10_125),
        (PacingStatus::Fq, 1_048_576_000, 20_250),
        (PacingStatus::None, 12_500_000, 10_500),
        (PacingStatus::Fq, 12_500_000, 21_000),
    ];
    for (status, rate, thr) in cases {
        let mut f = Flow::start(p.clone(), 20);
        assert_eq!(f.tp.gso_max_size, 65_536);
        f.tp.pacing_status = status;
        f.tp.pacing_rate = rate;
        let fired = train_round(&mut f, &schedule_to(thr), 20_000);
        assert_eq!(fired, Some(thr + 1), "{status:?} rate {rate}");
        assert_eq!(f.cubic().ca().hystart.found, 1);
        assert_eq!(f.tp.snd_ssthresh, 20);
        assert_eq!(f.hystart_mibs(), [1, 20, 0, 0], "{status:?} rate {rate}");
    }
}

/// The same ACK spacing, paced and unpaced (6.13, no pacing rate, so no
/// cushion; delay_min = 20 ms): ACKs every 1000 µs to +10 000, one at
/// +10 001, then every 1000 µs to +20 000, one at +20 001.
///
/// * PacingStatus::None: threshold 10 000 µs → fires at +10 001.
/// * PacingStatus::Fq: threshold 20 000 µs: +10 001 … +20 000 do not fire,
///   although the train is already longer than half of delay_min; fires
///   at +20 001, a full delay_min after round_start.
/// * 3.x on the same ACKs (ms clock: +10 001 µs reads +10 ms, +11 000 µs
///   +11 ms): fires at +11 000 under both statuses.
#[test]
fn ack_train_fq_needs_a_full_delay_min_where_unpaced_needs_half() {
    let mut at: Vec<u64> = (1..=10).map(|k| k * 1_000).collect();
    at.push(10_001);
    at.extend((11..=20).map(|k| k * 1_000));
    at.push(20_001);
    for (label, p) in eras() {
        for status in [PacingStatus::None, PacingStatus::Fq] {
            let mut f = Flow::start(p.clone(), 20);
            f.tp.pacing_status = status;
            let fired = train_round(&mut f, &at, 20_000);
            let expect = match (p.hystart_version.is_ms_clock(), status) {
                (true, _) => 11_000,
                (false, PacingStatus::None) => 10_001,
                (false, _) => 20_001,
            };
            assert_eq!(fired, Some(expect), "{label} {status:?}");
            assert_eq!(f.tp.snd_ssthresh, 20, "{label} {status:?}");
        }
    }
}

/// `hystart_train_half_rtt` (the pre-5.7 threshold in the current HyStart,
/// the kernel backend's `tcp_cubic.hystart_train_half_rtt`): the same ACKs
/// as above with a pacing rate of 12 500 000 B/s (ack_delay 1000 µs),
/// delay_min = 20 ms. Paced or not, the threshold is 20 000 >> 1 = 10 000
/// µs with no ACK-delay allowance, so the ACK at +10 001 fires; without the
/// switch, Fq needs 21 000 and None 10 500 (neither fires at +10 001).
#[test]
fn ack_train_half_rtt_switch_ignores_pacing_and_ack_delay() {
    let at: Vec<u64> = (1..=10).map(|k| k * 1_000).chain([10_001, 11_000]).collect();
    for half_rtt in [false, true] {
        for status in [PacingStatus::None, PacingStatus::Fq] {
            let p = CubicParams { hystart_train_half_rtt: half_rtt, ..CubicParams::for_version(CubicVersion::Current) };
            let mut f = Flow::start(p, 20);
            f.tp.pacing_status = status;
            f.tp.pacing_rate = 12_500_000;
            let fired = train_round(&mut f, &at, 20_000);
            let expect = match (half_rtt, status) {
                (true, _) => Some(10_001),
                (false, PacingStatus::None) => Some(11_000),
                (false, _) => None,
            };
            assert_eq!(fired, expect, "half_rtt {half_rtt} {status:?}");
        }
    }
}
