//! HyStart, CUBIC's hybrid slow start (net/ipv4/tcp_cubic.c,
//! `hystart_update`, `bictcp_hystart_reset`), in three kernel eras.
//!
//! HyStart ends slow start early, by setting `ssthresh = cwnd`, when either
//! of two signals says the pipe is full:
//!
//! * **ACK train:** ACKs keep arriving closely spaced (≤ `hystart_ack_delta`
//!   apart) for longer than half the minimum RTT since the round started.
//! * **Delay increase:** the minimum RTT of this round, after
//!   `HYSTART_MIN_SAMPLES` samples, exceeds `delay_min` by more than
//!   `clamp(delay_min >> shift, 4 ms, 16 ms)`.
//!
//! Eras ([`HystartVersion`]):
//!
//! | | clock, delay unit | detection | round reset | counters |
//! |---|---|---|---|---|
//! | 3.18 | ms clock, delay in ms·8 | both tests always run; `found` is a bitmask, acted on only for the bits in `hystart_detect`; `curr_rtt` = min of the first 8 samples | in `cong_avoid`, after `pkts_acked` | none |
//! | 3.19 | same | each test only if enabled in `hystart_detect` | same | `TCPHystart*` |
//! | 6.13 | µs (`tcp_mstamp`) | pacing-aware ACK-train threshold; `curr_rtt` = min of all samples of the round | at the top of `hystart_update` | `TCPHystart*` |
//!
//! The delay threshold divisor is the knob of Eric Dumazet's "tcp_cubic:
//! refine Hystart delay threshold" (v3.19): `delay_min >> 4` (6.25 %)
//! before, `delay_min >> 3` (12.5 %) after; see
//! [`HystartParams::hystart_delay_thresh_shift`].
//!
//! HyStart reads its parameters as a [`HystartParams`], which CUBIC takes
//! from its module parameters (`CubicParams::hystart_params`); this file
//! needs nothing else of CUBIC.
//!
//! All arithmetic is the kernel's u32 arithmetic, wrapping; no input
//! panics.

use super::{CaCtx, PacingStatus};
use crate::counters::Mib;
use tcplab_wire::SeqNum;

/// `HYSTART_ACK_TRAIN`: bit of `hystart_detect` / 3.x `found`.
pub const HYSTART_ACK_TRAIN: u8 = 0x1;
/// `HYSTART_DELAY`: bit of `hystart_detect` / 3.x `found`.
pub const HYSTART_DELAY: u8 = 0x2;
/// `HYSTART_MIN_SAMPLES`: RTT samples per round before the delay test.
pub const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN` ≥ 5.7: 4 ms, in µs.
pub const HYSTART_DELAY_MIN_US: u32 = 4000;
/// `HYSTART_DELAY_MAX` ≥ 5.7: 16 ms, in µs.
pub const HYSTART_DELAY_MAX_US: u32 = 16000;
/// `HYSTART_DELAY_MIN` ≤ 5.6: `4U << 3`, 4 ms in ms·8 units.
pub const HYSTART_DELAY_MIN_MS8: u32 = 4 << 3;
/// `HYSTART_DELAY_MAX` ≤ 5.6: `16U << 3`, 16 ms in ms·8 units.
pub const HYSTART_DELAY_MAX_MS8: u32 = 16 << 3;

/// Which kernel's HyStart to model.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum HystartVersion {
    /// Linux 3.18.30: ms clock, delay in ms·8, both detectors always run,
    /// `found` a bitmask, no MIB counters.
    V3_18,
    /// Linux 3.19 (checked against the 3.19.8 tree): as 3.18 but each
    /// detector only when enabled, and the `TCPHystart*` counters.
    V3_19,
    /// Linux ≥ 5.7 as in 6.13.7: µs clock, pacing-aware ACK-train
    /// threshold, round reset inside `hystart_update`, `curr_rtt` the
    /// minimum of all samples of the round.
    #[default]
    Current,
}

crate::names::named_enum!(HystartVersion { V3_18 => "v3.18", V3_19 => "v3.19", Current => "current" });

impl HystartVersion {
    /// 3.x HyStart keeps delays in ms·8 and runs on the ms clock.
    pub fn is_ms_clock(self) -> bool {
        !matches!(self, HystartVersion::Current)
    }
}

/// The `tcp_cubic` module parameters HyStart reads (under their
/// `CubicParams` names, where their documentation is): a copy taken per
/// call, so that HyStart does not depend on CUBIC's configuration type.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HystartParams {
    /// Which kernel's HyStart.
    pub hystart_version: HystartVersion,
    /// `hystart_detect`: [`HYSTART_ACK_TRAIN`] | [`HYSTART_DELAY`].
    pub hystart_detect: u8,
    /// `hystart_low_window` (packets).
    pub hystart_low_window: u32,
    /// `hystart_ack_delta_us` (µs; 3.x reads it / 1000 as ms).
    pub hystart_ack_delta_us: u32,
    /// The delay threshold is `delay_min >> hystart_delay_thresh_shift`.
    pub hystart_delay_thresh_shift: u32,
    /// The current HyStart's ACK train needs only `delay_min/2`, paced or
    /// not, as before 5.7 (see `CubicParams::hystart_train_half_rtt`).
    pub hystart_train_half_rtt: bool,
}

/// Which detector fired on one call (for tracing; the counters say the
/// same thing in aggregate).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct HystartExit {
    /// The ACK-train test fired (`TCPHystartTrainDetect`).
    pub train: bool,
    /// The delay test fired (`TCPHystartDelayDetect`).
    pub delay: bool,
}

/// HyStart's part of `struct bictcp` (tcp_cubic.c).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Hystart {
    /// `found`: the exit point is found. 6.13: 0/1. 3.x: bitmask of
    /// [`HYSTART_ACK_TRAIN`] | [`HYSTART_DELAY`].
    pub found: u8,
    /// `sample_cnt`: RTT samples so far in this round.
    pub sample_cnt: u8,
    /// `round_start`: beginning of this round (µs in 6.13, ms in 3.x; u32
    /// clock that wraps).
    pub round_start: u32,
    /// `end_seq`: `snd_nxt` when the round started; the round ends when an
    /// ACK passes it.
    pub end_seq: SeqNum,
    /// `last_ack`: last time an ACK continued the train (µs / ms).
    pub last_ack: u32,
    /// `curr_rtt`: minimum RTT of this round (µs in 6.13, ms·8 in 3.x).
    /// Unset is `u32::MAX` in 6.13 (`~0U`) and 0 in 3.x.
    pub curr_rtt: u32,
}

impl Default for Hystart {
    fn default() -> Self {
        Hystart { found: 0, sample_cnt: 0, round_start: 0, end_seq: SeqNum(0), last_ack: 0, curr_rtt: 0 }
    }
}

/// `bictcp_clock_us()` (6.13, low 32 bits of `tcp_mstamp`) or 3.x
/// `bictcp_clock()`: `jiffies_to_msecs(jiffies)` when HZ ≥ 1000, else the
/// millisecond wall clock (`ktime_get_real`), for which `tp.now` stands in.
#[inline]
pub fn hystart_clock(tp: &CaCtx, version: HystartVersion) -> u32 {
    match version {
        HystartVersion::Current => tp.now.as_micros() as u32,
        HystartVersion::V3_18 | HystartVersion::V3_19 => {
            if tp.hz == 1000 {
                tp.jiffies
            } else if tp.hz > 1000 {
                (tp.jiffies as u64 * 1000 / tp.hz as u64) as u32
            } else {
                tp.now.as_millis() as u32
            }
        }
    }
}

/// `hystart_ack_delay()` (≥ 5.7): a TSO/GRO cushion for the ACK-train
/// threshold, `min(1 ms, 4·gso_max_size / pacing_rate)` in µs; 0 without a
/// pacing rate.
#[inline]
//= linux:v6.13:net/ipv4/tcp_cubic.c#hystart_ack_delay
pub fn hystart_ack_delay(tp: &CaCtx) -> u32 {
    let rate = tp.pacing_rate;
    if rate == 0 {
        return 0;
    }
    let d = (tp.gso_max_size as u64).wrapping_mul(4).wrapping_mul(1_000_000) / rate;
    d.min(1000) as u32
}

impl Hystart {
    /// `bictcp_hystart_reset()`: start a new round now, ending when an ACK
    /// passes the current `snd_nxt`.
    #[doc(alias = "bictcp_hystart_reset")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#bictcp_hystart_reset
    pub fn reset(&mut self, tp: &CaCtx, version: HystartVersion) {
        let now = hystart_clock(tp, version);
        self.round_start = now;
        self.last_ack = now;
        self.end_seq = tp.snd_nxt;
        self.curr_rtt = match version {
            HystartVersion::Current => u32::MAX,
            HystartVersion::V3_18 | HystartVersion::V3_19 => 0,
        };
        self.sample_cnt = 0;
    }

    /// `hystart_update(sk, delay)`, called from CUBIC's `pkts_acked` once
    /// its gating passed. `delay` and `delay_min` are in the era's unit
    /// (µs in 6.13, ms·8 in 3.x). Returns the detectors that fired.
    ///
    /// Counts one round reset in `*round_resets` when 6.13 starts a round
    /// here. May set `tp.snd_ssthresh = tp.snd_cwnd` and bump
    /// `tp.mib` (`TCPHystart{Train,Delay}{Detect,Cwnd}`, 3.19 and later).
    #[doc(alias = "hystart_update")]
    pub fn update(
        &mut self,
        tp: &mut CaCtx,
        delay: u32,
        delay_min: u32,
        p: &HystartParams,
        round_resets: &mut u8,
    ) -> HystartExit {
        match p.hystart_version {
            HystartVersion::Current => self.update_v6(tp, delay, delay_min, p, round_resets),
            HystartVersion::V3_19 => self.update_v3_19(tp, delay, delay_min, p),
            HystartVersion::V3_18 => self.update_v3_18(tp, delay, delay_min, p),
        }
    }

    /// The delay-increase margin: `clamp(delay_min >> shift, MIN, MAX)`.
    #[inline]
    fn delay_thresh(delay_min: u32, shift: u32, lo: u32, hi: u32) -> u32 {
        delay_min.checked_shr(shift).unwrap_or(0).clamp(lo, hi)
    }

    fn exit(tp: &mut CaCtx, detect: Mib, cwnd_mib: Mib) {
        tp.mib.inc(detect);
        tp.mib.add(cwnd_mib, tp.snd_cwnd as u64);
        tp.snd_ssthresh = tp.snd_cwnd;
    }

    /// 6.13.7 `hystart_update`.
    //= linux:v6.13:net/ipv4/tcp_cubic.c#hystart_update
    fn update_v6(
        &mut self,
        tp: &mut CaCtx,
        delay: u32,
        delay_min: u32,
        p: &HystartParams,
        round_resets: &mut u8,
    ) -> HystartExit {
        let mut out = HystartExit::default();
        // The round reset moved here (2021, "fix spurious HYSTART_DELAY
        // exit upon drop in min RTT"), so this ACK's sample already counts
        // toward the new round.
        if tp.snd_una.after(self.end_seq) {
            self.reset(tp, HystartVersion::Current);
            *round_resets = round_resets.saturating_add(1);
        }
        if tp.snd_cwnd < p.hystart_low_window {
            return out;
        }
        if p.hystart_detect & HYSTART_ACK_TRAIN != 0 {
            let now = hystart_clock(tp, HystartVersion::Current);
            // ACK spacing vs the int parameter: a signed compare.
            if (now.wrapping_sub(self.last_ack) as i32) <= p.hystart_ack_delta_us as i32 {
                self.last_ack = now;
                let mut threshold = delay_min.wrapping_add(hystart_ack_delay(tp));
                // Without pacing the train spans half an RTT; with fq or
                // internal pacing it may be spread over a whole one.
                if tp.pacing_status == PacingStatus::None {
                    threshold >>= 1;
                }
                if p.hystart_train_half_rtt {
                    // v5.6: `delay_min >> 4` of a ms·8 delay_min, half the
                    // minimum RTT, for every socket.
                    //= linux:v5.6:net/ipv4/tcp_cubic.c#hystart_update
                    threshold = delay_min >> 1;
                }
                // The kernel casts the train length to s32, but comparing it
                // with the u32 threshold converts it back: unsigned compare.
                if now.wrapping_sub(self.round_start) > threshold {
                    self.found = 1;
                    out.train = true;
                    Self::exit(tp, Mib::TcpExtTCPHystartTrainDetect, Mib::TcpExtTCPHystartTrainCwnd);
                }
            }
        }
        if p.hystart_detect & HYSTART_DELAY != 0 {
            // Minimum over every sample of the round.
            if self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = Self::delay_thresh(
                    delay_min,
                    p.hystart_delay_thresh_shift,
                    HYSTART_DELAY_MIN_US,
                    HYSTART_DELAY_MAX_US,
                );
                if self.curr_rtt > delay_min.wrapping_add(thresh) {
                    self.found = 1;
                    out.delay = true;
                    Self::exit(tp, Mib::TcpExtTCPHystartDelayDetect, Mib::TcpExtTCPHystartDelayCwnd);
                }
            }
        }
        out
    }

    /// 3.x ACK-train test: returns true when the train is long enough.
    /// `hystart_ack_delta` is the ms parameter (2), taken here from
    /// `hystart_ack_delta_us / 1000`.
    fn train_v3(&mut self, tp: &CaCtx, delay_min: u32, p: &HystartParams, version: HystartVersion) -> bool {
        let now = hystart_clock(tp, version);
        let ack_delta_ms = (p.hystart_ack_delta_us / 1000) as i32;
        if (now.wrapping_sub(self.last_ack) as i32) <= ack_delta_ms {
            self.last_ack = now;
            // delay_min is ms·8, so `>> 4` is half the minimum RTT in ms.
            // Unsigned compare (delay_min is u32).
            if now.wrapping_sub(self.round_start) > delay_min >> 4 {
                return true;
            }
        }
        false
    }

    /// 3.x delay test: `curr_rtt` is the minimum of the first
    /// `HYSTART_MIN_SAMPLES` samples, then frozen and tested on each ACK.
    fn delay_v3(&mut self, delay: u32, delay_min: u32, p: &HystartParams) -> bool {
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            if self.curr_rtt == 0 || self.curr_rtt > delay {
                self.curr_rtt = delay;
            }
            self.sample_cnt += 1;
            false
        } else {
            let thresh = Self::delay_thresh(
                delay_min,
                p.hystart_delay_thresh_shift,
                HYSTART_DELAY_MIN_MS8,
                HYSTART_DELAY_MAX_MS8,
            );
            self.curr_rtt > delay_min.wrapping_add(thresh)
        }
    }

    /// 3.19 `hystart_update`: each detector only when enabled; counters.
    //= linux:v3.19.8:net/ipv4/tcp_cubic.c#hystart_update
    fn update_v3_19(&mut self, tp: &mut CaCtx, delay: u32, delay_min: u32, p: &HystartParams) -> HystartExit {
        let mut out = HystartExit::default();
        if self.found & p.hystart_detect != 0 {
            return out;
        }
        if p.hystart_detect & HYSTART_ACK_TRAIN != 0 && self.train_v3(tp, delay_min, p, HystartVersion::V3_19) {
            self.found |= HYSTART_ACK_TRAIN;
            out.train = true;
            Self::exit(tp, Mib::TcpExtTCPHystartTrainDetect, Mib::TcpExtTCPHystartTrainCwnd);
        }
        if p.hystart_detect & HYSTART_DELAY != 0 && self.delay_v3(delay, delay_min, p) {
            self.found |= HYSTART_DELAY;
            out.delay = true;
            Self::exit(tp, Mib::TcpExtTCPHystartDelayDetect, Mib::TcpExtTCPHystartDelayCwnd);
        }
        out
    }

    /// 3.18 `hystart_update`: both detectors always run and set their bit
    /// of `found`; slow start ends only if a bit in `hystart_detect` is
    /// set. No counters.
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#hystart_update
    fn update_v3_18(&mut self, tp: &mut CaCtx, delay: u32, delay_min: u32, p: &HystartParams) -> HystartExit {
        let mut out = HystartExit::default();
        if self.found & p.hystart_detect != 0 {
            return out;
        }
        if self.train_v3(tp, delay_min, p, HystartVersion::V3_18) {
            self.found |= HYSTART_ACK_TRAIN;
        }
        if self.delay_v3(delay, delay_min, p) {
            self.found |= HYSTART_DELAY;
        }
        let hit = self.found & p.hystart_detect;
        if hit != 0 {
            out.train = hit & HYSTART_ACK_TRAIN != 0;
            out.delay = hit & HYSTART_DELAY != 0;
            tp.snd_ssthresh = tp.snd_cwnd;
        }
        out
    }
}
