//! BBR v1 (net/ipv4/tcp_bbr.c) as Linux 6.12 runs it, with the kernel's
//! integer arithmetic.
//!
//! BBR paces at a gain times its estimate of the bottleneck bandwidth (a
//! windowed max of delivery-rate samples over 10 packet-timed rounds) and
//! caps cwnd at a gain times the estimated BDP (that bandwidth times a
//! windowed min RTT over 10 s), plus allowances for TSO bursts and ACK
//! aggregation. Its modes: STARTUP (gain 2/ln 2 until three rounds without
//! 25 % bandwidth growth), DRAIN (the inverse gain until in-flight is at
//! most one BDP), PROBE_BW (an 8-phase pacing-gain cycle 5/4, 3/4, 1 × 6
//! advanced every min RTT, started at a random phase other than 3/4) and
//! PROBE_RTT (cwnd 4 for 200 ms and a round, when the min RTT has not been
//! refreshed for 10 s). A long-term estimator detects token-bucket
//! policers (two 4–16-round intervals with ≥ 50/256 loss and consistent
//! rates) and then paces at their rate for 48 rounds.
//!
//! Units, as in the kernel: bandwidth in packets per µs << [`BW_SCALE`]
//! (24), gains in 1/[`BBR_UNIT`] (256), times in µs (`tcp_mstamp`) or
//! jiffies (`tcp_jiffies32`), pacing rates in bytes per second. Each
//! function names the kernel function it models (`#[doc(alias)]` and a
//! `//= linux:v6.12:` citation); the arithmetic keeps the kernel's widths,
//! truncations, bitfield sizes and rounding, wrapping where the kernel's
//! unsigned types wrap. Nothing here panics on any input (a zero
//! `mss_cache` divides as if it were 1).
//!
//! Calling protocol: [`Bbr::init`] when the connection is established
//! (`tcp_init_congestion_control`); per ACK, [`Bbr::cong_control`] with the
//! ACK's [`RateSample`] (from `tcp_cong_control`, after `tcp_rate_gen`);
//! [`Bbr::ssthresh`] on entering CWR/Recovery/Loss, [`Bbr::set_state`]
//! before each `ca_state` change, [`Bbr::undo_cwnd`] on undo,
//! [`Bbr::cwnd_event`] on `CA_EVENT_*`. [`CaCtx`] holds the `tcp_sock`
//! fields BBR reads (see docs/bbr.md). BBR sets `snd_cwnd`, `pacing_rate`,
//! `snd_ssthresh` (on leaving STARTUP, and `TCP_INFINITE_SSTHRESH` at
//! init), `pacing_status` (init) and `app_limited` (PROBE_RTT marks the
//! connection application-limited; the connection copies it back to its
//! rate sampler).
//!
//! `tcp_mstamp` and `tcp_clock_cache` are `CaCtx::now`; `tcp_jiffies32`
//! and `HZ` are `CaCtx::jiffies`/`hz`; `tcp_packets_in_flight()` is
//! `CaCtx::packets_in_flight` and must be refreshed to its value *after*
//! the ACK's accounting before `cong_control` (the value before the ACK is
//! `RateSample::prior_in_flight`).
//!
//! The core has no RNG: the random start phase of PROBE_BW
//! (`get_random_u32_below(7)`) comes from a [`CycleRand`] the caller seeds
//! (the simulator from the flow's stream), or is fixed.

use super::{CaCtx, CaEvent, CaState, CongestionOps, PacingStatus, TCP_INFINITE_SSTHRESH};
use crate::minmax::Minmax;
use crate::rate::{app_limited_marker, tcp_stamp_us_delta, RateSample};
use crate::rtt::msecs_to_jiffies;

/// `BW_SCALE`: bandwidth is packets per µs scaled by 2^24.
pub const BW_SCALE: u32 = 24;
/// `BW_UNIT`.
pub const BW_UNIT: u64 = 1 << BW_SCALE;
/// `BBR_SCALE`: gains are fractions scaled by 2^8.
pub const BBR_SCALE: u32 = 8;
/// `BBR_UNIT`: a gain of 1.0.
pub const BBR_UNIT: u32 = 1 << BBR_SCALE;

/// `CYCLE_LEN`: phases of the PROBE_BW pacing-gain cycle.
pub const CYCLE_LEN: u32 = 8;
/// `bbr_bw_rtts`: window of the max-bandwidth filter, in rounds.
pub const BBR_BW_RTTS: u32 = CYCLE_LEN + 2;
/// `bbr_min_rtt_win_sec`: window of the min-RTT filter, seconds.
pub const BBR_MIN_RTT_WIN_SEC: u32 = 10;
/// `bbr_probe_rtt_mode_ms`: least time at the minimum cwnd in PROBE_RTT.
pub const BBR_PROBE_RTT_MODE_MS: u32 = 200;
/// `bbr_min_tso_rate`: below this pacing rate (bits/s) TSO bursts are
/// one segment.
pub const BBR_MIN_TSO_RATE: u64 = 1_200_000;
/// `bbr_pacing_margin_percent`: pace 1 % below the estimate.
pub const BBR_PACING_MARGIN_PERCENT: u64 = 1;
/// `bbr_high_gain`: 2/ln 2 (739/256), STARTUP's pacing and cwnd gain.
pub const BBR_HIGH_GAIN: u32 = BBR_UNIT * 2885 / 1000 + 1;
/// `bbr_drain_gain`: its inverse (88/256), DRAIN's pacing gain.
pub const BBR_DRAIN_GAIN: u32 = BBR_UNIT * 1000 / 2885;
/// `bbr_cwnd_gain`: PROBE_BW's cwnd gain (2.0).
pub const BBR_CWND_GAIN: u32 = BBR_UNIT * 2;
/// `bbr_pacing_gain[]`: the PROBE_BW cycle.
pub const BBR_PACING_GAIN: [u32; CYCLE_LEN as usize] =
    [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];
/// `bbr_cycle_rand`: the start phase is drawn from this many.
pub const BBR_CYCLE_RAND: u32 = 7;
/// `bbr_cwnd_min_target`: the least cwnd, and PROBE_RTT's cwnd.
pub const BBR_CWND_MIN_TARGET: u32 = 4;
/// `bbr_full_bw_thresh`: growth (5/4) that counts as "still growing".
pub const BBR_FULL_BW_THRESH: u32 = BBR_UNIT * 5 / 4;
/// `bbr_full_bw_cnt`: rounds without such growth that end STARTUP.
pub const BBR_FULL_BW_CNT: u32 = 3;
/// `bbr_lt_intvl_min_rtts`: least rounds of a long-term interval.
pub const BBR_LT_INTVL_MIN_RTTS: u32 = 4;
/// `bbr_lt_loss_thresh`: lost/delivered (in 1/256) of a lossy interval.
pub const BBR_LT_LOSS_THRESH: u32 = 50;
/// `bbr_lt_bw_ratio`: two intervals' rates within 1/8 are consistent…
pub const BBR_LT_BW_RATIO: u32 = BBR_UNIT / 8;
/// `bbr_lt_bw_diff`: … or within 4 kbit/s (bytes per second).
pub const BBR_LT_BW_DIFF: u64 = 4000 / 8;
/// `bbr_lt_bw_max_rtts`: rounds to use the policed rate.
pub const BBR_LT_BW_MAX_RTTS: u32 = 48;
/// `bbr_extra_acked_gain`: gain on the ACK-aggregation allowance.
pub const BBR_EXTRA_ACKED_GAIN: u32 = BBR_UNIT;
/// `bbr_extra_acked_win_rtts`: rounds per extra_acked window slot.
pub const BBR_EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// `bbr_ack_epoch_acked_reset_thresh`.
pub const BBR_ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// `bbr_extra_acked_max_us`: the aggregation allowance is at most this
/// much time at the estimated bandwidth.
pub const BBR_EXTRA_ACKED_MAX_US: u32 = 100 * 1000;

/// `TCP_INIT_CWND` (include/net/tcp.h).
pub const TCP_INIT_CWND: u32 = 10;
/// `GSO_LEGACY_MAX_SIZE` (include/linux/netdevice.h).
pub const GSO_LEGACY_MAX_SIZE: u32 = 65536;
/// `MAX_TCP_HEADER` on x86-64 with the usual config (the value the
/// connection's skb model assumes as well).
pub const MAX_TCP_HEADER: u32 = 320;

const USEC_PER_SEC: u64 = 1_000_000;
const USEC_PER_MSEC: u64 = 1_000;
const NSEC_PER_USEC: u64 = 1_000;

/// `after()` on u32 stamps (jiffies, packet counts).
#[inline]
fn after(a: u32, b: u32) -> bool {
    (b.wrapping_sub(a) as i32) < 0
}

/// `enum bbr_mode`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum BbrMode {
    /// Ramp up the sending rate quickly to fill the pipe.
    #[default]
    Startup = 0,
    /// Drain the queue STARTUP created.
    Drain = 1,
    /// Pace around the estimated bandwidth, probing and yielding.
    ProbeBw = 2,
    /// Cut in-flight to the minimum to re-measure the min RTT.
    ProbeRtt = 3,
}

// The kernel's names (`BBR_STARTUP` … without the prefix).
crate::names::named_enum!(BbrMode {
    Startup => "STARTUP",
    Drain => "DRAIN",
    ProbeBw => "PROBE_BW",
    ProbeRtt => "PROBE_RTT",
});

/// `struct bbr`: the per-flow state. Public so that tests and traces can
/// read and seed it; the hooks keep it consistent. Bitfields keep their
/// kernel widths (noted), and wrap like them where they can.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct BbrState {
    /// `min_rtt_us`: min RTT in the 10 s window (µs).
    pub min_rtt_us: u32,
    /// `min_rtt_stamp`: jiffies of `min_rtt_us`.
    pub min_rtt_stamp: u32,
    /// `probe_rtt_done_stamp`: jiffies PROBE_RTT may end; 0 = not set.
    pub probe_rtt_done_stamp: u32,
    /// `bw`: max filter of delivery rates (pkts/µs << 24), time in rounds.
    pub bw: Minmax,
    /// `rtt_cnt`: packet-timed rounds elapsed.
    pub rtt_cnt: u32,
    /// `next_rtt_delivered`: `tp->delivered` that ends the current round.
    pub next_rtt_delivered: u32,
    /// `cycle_mstamp`: start of the current gain-cycle phase (µs).
    pub cycle_mstamp: u64,
    /// `mode` (3 bits).
    pub mode: BbrMode,
    /// `prev_ca_state` (3 bits): ca_state on the previous ACK.
    pub prev_ca_state: CaState,
    /// `packet_conservation`: first round of Recovery.
    pub packet_conservation: bool,
    /// `round_start`: this ACK started a new round.
    pub round_start: bool,
    /// `idle_restart`: restarting after idle, until data is (S)ACKed.
    pub idle_restart: bool,
    /// `probe_rtt_round_done`: a round passed at the PROBE_RTT cwnd.
    pub probe_rtt_round_done: bool,
    /// `lt_is_sampling`: a long-term interval is being sampled.
    pub lt_is_sampling: bool,
    /// `lt_rtt_cnt` (7 bits): rounds in the long-term interval.
    pub lt_rtt_cnt: u8,
    /// `lt_use_bw`: pacing at the policed rate `lt_bw`.
    pub lt_use_bw: bool,
    /// `lt_bw`: long-term delivery rate (pkts/µs << 24).
    pub lt_bw: u32,
    /// `lt_last_delivered`: `tp->delivered` at the interval's start.
    pub lt_last_delivered: u32,
    /// `lt_last_stamp`: `tp->delivered_mstamp` at the start, in ms.
    pub lt_last_stamp: u32,
    /// `lt_last_lost`: `tp->lost` at the start.
    pub lt_last_lost: u32,
    /// `pacing_gain` (10 bits), 1/256.
    pub pacing_gain: u32,
    /// `cwnd_gain` (10 bits), 1/256.
    pub cwnd_gain: u32,
    /// `full_bw_reached`: STARTUP filled the pipe.
    pub full_bw_reached: bool,
    /// `full_bw_cnt` (2 bits): rounds without 25 % growth.
    pub full_bw_cnt: u8,
    /// `cycle_idx` (3 bits): phase of the PROBE_BW gain cycle.
    pub cycle_idx: u8,
    /// `has_seen_rtt`: the pacing rate was set from a real RTT.
    pub has_seen_rtt: bool,
    /// `prior_cwnd`: cwnd to restore after Recovery or PROBE_RTT.
    pub prior_cwnd: u32,
    /// `full_bw`: bandwidth at the last 25 % growth.
    pub full_bw: u32,
    /// `ack_epoch_mstamp`: start of the ACK-aggregation epoch (µs).
    pub ack_epoch_mstamp: u64,
    /// `extra_acked[2]`: max excess (S)ACKed per window slot (u16).
    pub extra_acked: [u16; 2],
    /// `ack_epoch_acked` (20 bits): packets (S)ACKed in the epoch.
    pub ack_epoch_acked: u32,
    /// `extra_acked_win_rtts` (5 bits): age of the current slot, rounds.
    pub extra_acked_win_rtts: u8,
    /// `extra_acked_win_idx` (1 bit): the current slot.
    pub extra_acked_win_idx: u8,
}

/// Where the PROBE_BW start phase comes from: the kernel's
/// `get_random_u32_below(bbr_cycle_rand)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CycleRand {
    /// A SplitMix64 stream from this state: the same seed gives the same
    /// phases. Draws are made as the kernel's constant-bound
    /// `get_random_u32_below` makes them from a random byte (multiply, keep
    /// the high byte, reject the low `256 % bound` values).
    Seeded(u64),
    /// Always this draw (reduced modulo the bound): for tests, or to pin
    /// the phase.
    Fixed(u32),
}

impl CycleRand {
    /// SplitMix64's next output.
    fn next_u64(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `get_random_u32_below(ceil)` for a `ceil` ≤ 256: uniform in
    /// `0..ceil`.
    #[doc(alias = "get_random_u32_below")]
    pub fn below(&mut self, ceil: u32) -> u32 {
        if ceil <= 1 {
            return 0;
        }
        match self {
            CycleRand::Fixed(v) => *v % ceil,
            CycleRand::Seeded(state) => {
                let ceil = ceil.min(256);
                let reject = (1u32 << 8) % ceil;
                loop {
                    let mult = ceil * (Self::next_u64(state) & 0xff) as u32;
                    if ceil.is_power_of_two() || (mult & 0xff) >= reject {
                        return mult >> 8;
                    }
                }
            }
        }
    }
}

impl Default for CycleRand {
    fn default() -> Self {
        CycleRand::Seeded(0)
    }
}

/// The module parameters of `tcp_bbr`: none. Every tunable of tcp_bbr.c
/// is a `static const` (`bbr_high_gain`, `bbr_cwnd_gain`, …), so neither
/// the kernel nor the model lets a scenario change one; the type exists
/// so that [`super::CcConfig::Bbr`] has the shape of the other modules.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct BbrParams {}

/// `struct tcp_bbr_info` (include/uapi/linux/inet_diag.h), as
/// `bbr_get_info` fills it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TcpBbrInfo {
    /// `bbr_bw_lo`/`bbr_bw_hi`: bandwidth estimate, bytes per second.
    pub bw: u64,
    /// `bbr_min_rtt` (µs).
    pub min_rtt: u32,
    /// `bbr_pacing_gain` (1/256).
    pub pacing_gain: u32,
    /// `bbr_cwnd_gain` (1/256).
    pub cwnd_gain: u32,
}

/// `bbr_rate_bytes_per_sec`: a rate in pkts/µs << 24 times a gain, in
/// bytes per second, 1 % below: `rate·mss·gain >> 8 · 990000 >> 24`, in
/// that order and in u64 (wrapping) as the kernel computes it.
//= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_rate_bytes_per_sec
pub fn bbr_rate_bytes_per_sec(mss_cache: u32, rate: u64, gain: u32) -> u64 {
    let mut rate = rate.wrapping_mul(mss_cache as u64);
    rate = rate.wrapping_mul(gain as u64);
    rate >>= BBR_SCALE;
    rate = rate.wrapping_mul(USEC_PER_SEC / 100 * (100 - BBR_PACING_MARGIN_PERCENT));
    rate >> BW_SCALE
}

/// `bbr_min_tso_segs`: TSO bursts of 1 segment below 1.2 Mbit/s, else 2.
//= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_min_tso_segs
pub fn bbr_min_tso_segs(pacing_rate: u64) -> u32 {
    if pacing_rate < (BBR_MIN_TSO_RATE >> 3) {
        1
    } else {
        2
    }
}

/// `bbr_tso_segs_goal`: segments per TSO burst, about 1 ms of pacing
/// (`pacing_rate >> sk_pacing_shift` bytes, at most a legacy GSO
/// packet), at least [`bbr_min_tso_segs`], at most 127.
//= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_tso_segs_goal
pub fn bbr_tso_segs_goal(pacing_rate: u64, pacing_shift: u32, mss_cache: u32) -> u32 {
    let bytes =
        pacing_rate.checked_shr(pacing_shift).unwrap_or(0).min((GSO_LEGACY_MAX_SIZE - 1 - MAX_TCP_HEADER) as u64)
            as u32;
    let segs = (bytes / mss_cache.max(1)).max(bbr_min_tso_segs(pacing_rate));
    segs.min(0x7f)
}

/// BBR v1 congestion control (`struct tcp_congestion_ops tcp_bbr_cong_ops`).
///
/// The hooks are inherent (what the unit tests drive) and reached through
/// [`CongestionOps`], which the connection calls.
#[derive(Clone, Debug, Default)]
pub struct Bbr {
    ca: BbrState,
    rand: CycleRand,
}

impl Bbr {
    /// A BBR whose private area is zeroed (as `icsk_ca_priv` is before
    /// `init`), drawing PROBE_BW start phases from `rand`.
    pub fn new(rand: CycleRand) -> Bbr {
        Bbr { ca: BbrState::default(), rand }
    }

    /// Module name.
    pub fn name(&self) -> &'static str {
        "bbr"
    }

    /// The `struct bbr` state.
    pub fn ca(&self) -> &BbrState {
        &self.ca
    }

    /// Mutable state, for tests that seed a situation.
    pub fn ca_mut(&mut self) -> &mut BbrState {
        &mut self.ca
    }

    /// The random source of the PROBE_BW start phase.
    pub fn rand_mut(&mut self) -> &mut CycleRand {
        &mut self.rand
    }

    /// Current mode.
    pub fn mode(&self) -> BbrMode {
        self.ca.mode
    }

    /// `bbr_full_bw_reached`: STARTUP estimated the pipe full.
    #[doc(alias = "bbr_full_bw_reached")]
    pub fn full_bw_reached(&self) -> bool {
        self.ca.full_bw_reached
    }

    /// `bbr_max_bw`: the windowed max bandwidth (pkts/µs << 24).
    #[doc(alias = "bbr_max_bw")]
    pub fn max_bw(&self) -> u32 {
        self.ca.bw.get()
    }

    /// `bbr_bw`: the bandwidth in use: the policed rate while
    /// `lt_use_bw`, else the windowed max.
    #[doc(alias = "bbr_bw")]
    pub fn bw(&self) -> u32 {
        if self.ca.lt_use_bw {
            self.ca.lt_bw
        } else {
            self.max_bw()
        }
    }

    /// `bbr_extra_acked`: the larger of the two window slots.
    #[doc(alias = "bbr_extra_acked")]
    pub fn extra_acked(&self) -> u16 {
        self.ca.extra_acked[0].max(self.ca.extra_acked[1])
    }

    // -----------------------------------------------------------------------
    // Pacing
    // -----------------------------------------------------------------------

    /// `bbr_bw_to_pacing_rate`: [`bbr_rate_bytes_per_sec`] capped at
    /// `sk_max_pacing_rate`.
    #[doc(alias = "bbr_bw_to_pacing_rate")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_bw_to_pacing_rate
    pub fn bw_to_pacing_rate(tp: &CaCtx, bw: u32, gain: u32) -> u64 {
        bbr_rate_bytes_per_sec(tp.mss_cache, bw as u64, gain).min(tp.max_pacing_rate)
    }

    /// `bbr_init_pacing_rate_from_rtt`: high gain × cwnd / RTT, with the
    /// smoothed RTT if there is one, else a nominal 1 ms.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_init_pacing_rate_from_rtt
    fn init_pacing_rate_from_rtt(&mut self, tp: &mut CaCtx) {
        let rtt_us = if tp.srtt_us != 0 {
            self.ca.has_seen_rtt = true;
            (tp.srtt_us >> 3).max(1)
        } else {
            USEC_PER_MSEC as u32
        };
        let bw = (tp.snd_cwnd as u64 * BW_UNIT) / rtt_us as u64;
        // The u64 passes through the u32 `bw` parameter.
        tp.pacing_rate = Self::bw_to_pacing_rate(tp, bw as u32, BBR_HIGH_GAIN);
    }

    /// `bbr_set_pacing_rate`: pace at `gain × bw`; before the pipe is full
    /// the rate only goes up.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_set_pacing_rate
    fn set_pacing_rate(&mut self, tp: &mut CaCtx, bw: u32, gain: u32) {
        let rate = Self::bw_to_pacing_rate(tp, bw, gain);
        if !self.ca.has_seen_rtt && tp.srtt_us != 0 {
            self.init_pacing_rate_from_rtt(tp);
        }
        if self.ca.full_bw_reached || rate > tp.pacing_rate {
            tp.pacing_rate = rate;
        }
    }

    /// `min_tso_segs` hook (`bbr_min_tso_segs`): overrides
    /// `sysctl_tcp_min_tso_segs` in `tcp_tso_autosize`.
    pub fn min_tso_segs(&self, tp: &CaCtx) -> u32 {
        bbr_min_tso_segs(tp.pacing_rate)
    }

    /// `sndbuf_expand` hook (`bbr_sndbuf_expand`): the send buffer holds 3
    /// cwnds, since BBR may slow-start in Recovery.
    #[doc(alias = "bbr_sndbuf_expand")]
    pub fn sndbuf_expand(&self) -> u32 {
        3
    }

    // -----------------------------------------------------------------------
    // cwnd targets
    // -----------------------------------------------------------------------

    /// `bbr_save_cwnd`: remember the cwnd to restore after Recovery or
    /// PROBE_RTT (the larger one if already reduced).
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_save_cwnd
    fn save_cwnd(&mut self, tp: &CaCtx) {
        if self.ca.prev_ca_state < CaState::Recovery && self.ca.mode != BbrMode::ProbeRtt {
            self.ca.prior_cwnd = tp.snd_cwnd;
        } else {
            self.ca.prior_cwnd = self.ca.prior_cwnd.max(tp.snd_cwnd);
        }
    }

    /// `bbr_bdp`: `ceil(bw · min_rtt · gain)` in packets
    /// (`((bw·min_rtt·gain) >> 8 + 2^24 − 1) / 2^24`); `TCP_INIT_CWND` while
    /// there is no min RTT.
    #[doc(alias = "bbr_bdp")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_bdp
    pub fn bdp(&self, bw: u32, gain: u32) -> u32 {
        if self.ca.min_rtt_us == u32::MAX {
            return TCP_INIT_CWND;
        }
        let w = bw as u64 * self.ca.min_rtt_us as u64;
        ((w.wrapping_mul(gain as u64) >> BBR_SCALE).wrapping_add(BW_UNIT - 1) / BW_UNIT) as u32
    }

    /// `bbr_quantization_budget`: room for 3 TSO bursts (qdisc, NIC,
    /// receiver), rounded up to even, +2 in the 5/4 phase so small BDPs
    /// can still probe.
    #[doc(alias = "bbr_quantization_budget")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_quantization_budget
    pub fn quantization_budget(&self, tp: &CaCtx, cwnd: u32) -> u32 {
        let mut cwnd =
            cwnd.wrapping_add(3u32.wrapping_mul(bbr_tso_segs_goal(tp.pacing_rate, tp.pacing_shift, tp.mss_cache)));
        cwnd = cwnd.wrapping_add(1) & !1u32;
        if self.ca.mode == BbrMode::ProbeBw && self.ca.cycle_idx == 0 {
            cwnd = cwnd.wrapping_add(2);
        }
        cwnd
    }

    /// `bbr_inflight`: [`Bbr::bdp`] plus [`Bbr::quantization_budget`].
    #[doc(alias = "bbr_inflight")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_inflight
    pub fn inflight(&self, tp: &CaCtx, bw: u32, gain: u32) -> u32 {
        self.quantization_budget(tp, self.bdp(bw, gain))
    }

    /// `bbr_packets_in_net_at_edt`: in-flight at the next departure time,
    /// less what the path delivers until then, plus the next burst when
    /// the gain is above 1.
    #[doc(alias = "bbr_packets_in_net_at_edt")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_packets_in_net_at_edt
    pub fn packets_in_net_at_edt(&self, tp: &CaCtx, inflight_now: u32) -> u32 {
        let now_ns = tp.now.as_nanos();
        let edt_ns = tp.wstamp_ns.max(now_ns);
        let interval_us = (edt_ns - now_ns) / NSEC_PER_USEC;
        let interval_delivered = ((self.bw() as u64).wrapping_mul(interval_us) >> BW_SCALE) as u32;
        let mut inflight_at_edt = inflight_now;
        if self.ca.pacing_gain > BBR_UNIT {
            inflight_at_edt =
                inflight_at_edt.wrapping_add(bbr_tso_segs_goal(tp.pacing_rate, tp.pacing_shift, tp.mss_cache));
        }
        if interval_delivered >= inflight_at_edt {
            return 0;
        }
        inflight_at_edt - interval_delivered
    }

    /// `bbr_ack_aggregation_cwnd`: the ACK-aggregation allowance, once the
    /// pipe is full: `extra_acked` at most 100 ms of bandwidth.
    #[doc(alias = "bbr_ack_aggregation_cwnd")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_ack_aggregation_cwnd
    pub fn ack_aggregation_cwnd(&self) -> u32 {
        if BBR_EXTRA_ACKED_GAIN == 0 || !self.ca.full_bw_reached {
            return 0;
        }
        let max_aggr_cwnd = ((self.bw() as u64 * BBR_EXTRA_ACKED_MAX_US as u64) / BW_UNIT) as u32;
        let aggr_cwnd = (BBR_EXTRA_ACKED_GAIN * self.extra_acked() as u32) >> BBR_SCALE;
        aggr_cwnd.min(max_aggr_cwnd)
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: take the losses off cwnd;
    /// on entering Recovery cut cwnd to in-flight + acked and conserve
    /// packets for a round; on leaving Recovery/Loss restore `prior_cwnd`.
    /// Returns the cwnd and whether packet conservation applies.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_set_cwnd_to_recover_or_restore
    fn set_cwnd_to_recover_or_restore(&mut self, tp: &CaCtx, rs: &RateSample, acked: u32) -> (bool, u32) {
        let prev_state = self.ca.prev_ca_state;
        let state = tp.ca_state;
        let mut cwnd = tp.snd_cwnd;
        if rs.losses > 0 {
            cwnd = (cwnd.wrapping_sub(rs.losses as u32) as i32).max(1) as u32;
        }
        if state == CaState::Recovery && prev_state != CaState::Recovery {
            self.ca.packet_conservation = true;
            self.ca.next_rtt_delivered = tp.delivered;
            cwnd = tp.packets_in_flight.wrapping_add(acked);
        } else if prev_state >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.ca.prior_cwnd);
            self.ca.packet_conservation = false;
        }
        self.ca.prev_ca_state = state;
        if self.ca.packet_conservation {
            return (true, cwnd.max(tp.packets_in_flight.wrapping_add(acked)));
        }
        (false, cwnd)
    }

    /// `bbr_set_cwnd`: slow-start toward `bdp·gain + aggregation +
    /// budget` (only cutting once the pipe is full), at least 4, at most
    /// the clamp; 4 in PROBE_RTT.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_set_cwnd
    fn set_cwnd(&mut self, tp: &mut CaCtx, rs: &RateSample, acked: u32, bw: u32, gain: u32) {
        let mut cwnd = tp.snd_cwnd;
        'done: {
            if acked == 0 {
                break 'done;
            }
            let (conserving, c) = self.set_cwnd_to_recover_or_restore(tp, rs, acked);
            cwnd = c;
            if conserving {
                break 'done;
            }
            let mut target_cwnd = self.bdp(bw, gain);
            target_cwnd = target_cwnd.wrapping_add(self.ack_aggregation_cwnd());
            target_cwnd = self.quantization_budget(tp, target_cwnd);
            if self.ca.full_bw_reached {
                cwnd = cwnd.wrapping_add(acked).min(target_cwnd);
            } else if cwnd < target_cwnd || tp.delivered < TCP_INIT_CWND {
                cwnd = cwnd.wrapping_add(acked);
            }
            cwnd = cwnd.max(BBR_CWND_MIN_TARGET);
        }
        tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
        if self.ca.mode == BbrMode::ProbeRtt {
            tp.snd_cwnd = tp.snd_cwnd.min(BBR_CWND_MIN_TARGET);
        }
    }

    // -----------------------------------------------------------------------
    // PROBE_BW gain cycle
    // -----------------------------------------------------------------------

    /// `bbr_is_next_cycle_phase`: a phase lasts a min RTT; the 5/4 phase
    /// also waits for in-flight to reach 5/4·BDP (or a loss), the 3/4 phase
    /// ends early once in-flight is down to one BDP.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_is_next_cycle_phase
    fn is_next_cycle_phase(&self, tp: &CaCtx, rs: &RateSample) -> bool {
        let is_full_length = tcp_stamp_us_delta(tp.delivered_mstamp, self.ca.cycle_mstamp) > self.ca.min_rtt_us;
        if self.ca.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.ca.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses != 0 || inflight >= self.inflight(tp, bw, self.ca.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tp, bw, BBR_UNIT)
    }

    /// `bbr_advance_cycle_phase`.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_advance_cycle_phase
    fn advance_cycle_phase(&mut self, tp: &CaCtx) {
        self.ca.cycle_idx = (self.ca.cycle_idx + 1) & (CYCLE_LEN as u8 - 1);
        self.ca.cycle_mstamp = tp.delivered_mstamp;
    }

    /// `bbr_update_cycle_phase`.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_cycle_phase
    fn update_cycle_phase(&mut self, tp: &CaCtx, rs: &RateSample) {
        if self.ca.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(tp, rs) {
            self.advance_cycle_phase(tp);
        }
    }

    /// `bbr_reset_startup_mode`.
    fn reset_startup_mode(&mut self) {
        self.ca.mode = BbrMode::Startup;
    }

    /// `bbr_reset_probe_bw_mode`: enter PROBE_BW at a random phase, never
    /// the 3/4 one: `7 − rand(7)` is 1..=7, advanced to 2..=7 or 0.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_reset_probe_bw_mode
    fn reset_probe_bw_mode(&mut self, tp: &CaCtx) {
        self.ca.mode = BbrMode::ProbeBw;
        self.ca.cycle_idx = (CYCLE_LEN - 1 - self.rand.below(BBR_CYCLE_RAND)) as u8;
        self.advance_cycle_phase(tp);
    }

    /// `bbr_reset_mode`: STARTUP if the pipe was never full, else PROBE_BW.
    fn reset_mode(&mut self, tp: &CaCtx) {
        if !self.ca.full_bw_reached {
            self.reset_startup_mode();
        } else {
            self.reset_probe_bw_mode(tp);
        }
    }

    // -----------------------------------------------------------------------
    // Long-term (policer) bandwidth
    // -----------------------------------------------------------------------

    /// `bbr_reset_lt_bw_sampling_interval`.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_reset_lt_bw_sampling_interval
    fn reset_lt_bw_sampling_interval(&mut self, tp: &CaCtx) {
        self.ca.lt_last_stamp = (tp.delivered_mstamp / USEC_PER_MSEC) as u32;
        self.ca.lt_last_delivered = tp.delivered;
        self.ca.lt_last_lost = tp.lost;
        self.ca.lt_rtt_cnt = 0;
    }

    /// `bbr_reset_lt_bw_sampling`.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_reset_lt_bw_sampling
    fn reset_lt_bw_sampling(&mut self, tp: &CaCtx) {
        self.ca.lt_bw = 0;
        self.ca.lt_use_bw = false;
        self.ca.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_interval_done`: a second interval whose rate is within
    /// 1/8 or 4 kbit/s of the first means a policer: pace at their mean.
    /// Otherwise this interval becomes the first.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_lt_bw_interval_done
    fn lt_bw_interval_done(&mut self, tp: &CaCtx, bw: u32) {
        if self.ca.lt_bw != 0 {
            // abs() of the u32 difference taken as an int.
            let diff = (bw.wrapping_sub(self.ca.lt_bw) as i32).wrapping_abs() as u32;
            if diff.wrapping_mul(BBR_UNIT) <= BBR_LT_BW_RATIO.wrapping_mul(self.ca.lt_bw)
                || bbr_rate_bytes_per_sec(tp.mss_cache, diff as u64, BBR_UNIT) <= BBR_LT_BW_DIFF
            {
                self.ca.lt_bw = ((bw as u64 + self.ca.lt_bw as u64) >> 1) as u32;
                self.ca.lt_use_bw = true;
                self.ca.pacing_gain = BBR_UNIT;
                self.ca.lt_rtt_cnt = 0;
                return;
            }
        }
        self.ca.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tp);
    }

    /// `bbr_lt_bw_sampling`: after a first loss, measure delivery over
    /// intervals of 4 to 16 rounds that end on a loss with a loss rate of
    /// at least 50/256; stop using the policed rate after 48 rounds of
    /// PROBE_BW.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_lt_bw_sampling
    fn lt_bw_sampling(&mut self, tp: &CaCtx, rs: &RateSample) {
        if self.ca.lt_use_bw {
            if self.ca.mode == BbrMode::ProbeBw && self.ca.round_start {
                self.ca.lt_rtt_cnt = (self.ca.lt_rtt_cnt + 1) & 0x7f;
                if self.ca.lt_rtt_cnt as u32 >= BBR_LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tp);
                    self.reset_probe_bw_mode(tp);
                }
            }
            return;
        }
        // Start at a loss: the policer's token bucket is then empty.
        if !self.ca.lt_is_sampling {
            if rs.losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tp);
            self.ca.lt_is_sampling = true;
        }
        if rs.is_app_limited {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        if self.ca.round_start {
            self.ca.lt_rtt_cnt = (self.ca.lt_rtt_cnt + 1) & 0x7f;
        }
        if (self.ca.lt_rtt_cnt as u32) < BBR_LT_INTVL_MIN_RTTS {
            return;
        }
        if self.ca.lt_rtt_cnt as u32 > 4 * BBR_LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        // End the interval at a loss, when the tokens are exhausted.
        if rs.losses == 0 {
            return;
        }
        let lost = tp.lost.wrapping_sub(self.ca.lt_last_lost);
        let delivered = tp.delivered.wrapping_sub(self.ca.lt_last_delivered);
        if delivered == 0 || (lost << BBR_SCALE) < BBR_LT_LOSS_THRESH.wrapping_mul(delivered) {
            return;
        }
        let mut t = ((tp.delivered_mstamp / USEC_PER_MSEC) as u32).wrapping_sub(self.ca.lt_last_stamp);
        if (t as i32) < 1 {
            return;
        }
        if t >= u32::MAX / USEC_PER_MSEC as u32 {
            self.reset_lt_bw_sampling(tp);
            return;
        }
        t *= USEC_PER_MSEC as u32;
        let bw = (delivered as u64 * BW_UNIT) / t as u64;
        self.lt_bw_interval_done(tp, bw as u32);
    }

    // -----------------------------------------------------------------------
    // The model: bandwidth, aggregation, full pipe, drain, min RTT, gains
    // -----------------------------------------------------------------------

    /// `bbr_update_bw`: count rounds (a round ends when a packet sent after
    /// the previous round's end is delivered), then feed the sample to the
    /// max filter unless it is application-limited and below the estimate.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_bw
    fn update_bw(&mut self, tp: &CaCtx, rs: &RateSample) {
        self.ca.round_start = false;
        if rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if !after(self.ca.next_rtt_delivered, rs.prior_delivered) {
            self.ca.next_rtt_delivered = tp.delivered;
            self.ca.rtt_cnt = self.ca.rtt_cnt.wrapping_add(1);
            self.ca.round_start = true;
            self.ca.packet_conservation = false;
        }
        self.lt_bw_sampling(tp, rs);
        // div64_long: s64 by long.
        let bw = ((rs.delivered as i64).wrapping_mul(BW_UNIT as i64) / rs.interval_us) as u64;
        if !rs.is_app_limited || bw >= self.max_bw() as u64 {
            self.ca.bw.running_max(BBR_BW_RTTS, self.ca.rtt_cnt, bw as u32);
        }
    }

    /// `bbr_update_ack_aggregation`: packets (S)ACKed in the current epoch
    /// beyond what the bandwidth estimate explains; its max per slot of 5
    /// rounds, over two slots, is the aggregation allowance.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_ack_aggregation
    fn update_ack_aggregation(&mut self, tp: &CaCtx, rs: &RateSample) {
        if BBR_EXTRA_ACKED_GAIN == 0 || rs.acked_sacked == 0 || rs.delivered < 0 || rs.interval_us <= 0 {
            return;
        }
        if self.ca.round_start {
            self.ca.extra_acked_win_rtts = (self.ca.extra_acked_win_rtts + 1).min(0x1f);
            if self.ca.extra_acked_win_rtts as u32 >= BBR_EXTRA_ACKED_WIN_RTTS {
                self.ca.extra_acked_win_rtts = 0;
                self.ca.extra_acked_win_idx = if self.ca.extra_acked_win_idx != 0 { 0 } else { 1 };
                self.ca.extra_acked[self.ca.extra_acked_win_idx as usize] = 0;
            }
        }
        let epoch_us = tcp_stamp_us_delta(tp.delivered_mstamp, self.ca.ack_epoch_mstamp);
        let mut expected_acked = ((self.bw() as u64 * epoch_us as u64) / BW_UNIT) as u32;
        // A slow epoch, or a huge one: start a new epoch now.
        if self.ca.ack_epoch_acked <= expected_acked
            || self.ca.ack_epoch_acked.wrapping_add(rs.acked_sacked) >= BBR_ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.ca.ack_epoch_acked = 0;
            self.ca.ack_epoch_mstamp = tp.delivered_mstamp;
            expected_acked = 0;
        }
        self.ca.ack_epoch_acked = self.ca.ack_epoch_acked.wrapping_add(rs.acked_sacked).min(0xfffff);
        let extra_acked = self.ca.ack_epoch_acked.wrapping_sub(expected_acked).min(tp.snd_cwnd);
        let idx = self.ca.extra_acked_win_idx as usize;
        if extra_acked > self.ca.extra_acked[idx] as u32 {
            self.ca.extra_acked[idx] = extra_acked as u16;
        }
    }

    /// `bbr_check_full_bw_reached`: at each non-app-limited round start,
    /// the pipe is full after 3 rounds in a row without 25 % growth of the
    /// max bandwidth.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_check_full_bw_reached
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.ca.full_bw_reached || !self.ca.round_start || rs.is_app_limited {
            return;
        }
        let bw_thresh = ((self.ca.full_bw as u64 * BBR_FULL_BW_THRESH as u64) >> BBR_SCALE) as u32;
        if self.max_bw() >= bw_thresh {
            self.ca.full_bw = self.max_bw();
            self.ca.full_bw_cnt = 0;
            return;
        }
        self.ca.full_bw_cnt = (self.ca.full_bw_cnt + 1) & 3;
        self.ca.full_bw_reached = self.ca.full_bw_cnt as u32 >= BBR_FULL_BW_CNT;
    }

    /// `bbr_check_drain`: STARTUP → DRAIN once the pipe is full (ssthresh
    /// becomes one BDP's in-flight, for tcp_info), DRAIN → PROBE_BW once
    /// in-flight at the next departure is at most that.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_check_drain
    fn check_drain(&mut self, tp: &mut CaCtx) {
        if self.ca.mode == BbrMode::Startup && self.ca.full_bw_reached {
            self.ca.mode = BbrMode::Drain;
            tp.snd_ssthresh = self.inflight(tp, self.max_bw(), BBR_UNIT);
        }
        if self.ca.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(tp, tp.packets_in_flight) <= self.inflight(tp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode(tp);
        }
    }

    /// `bbr_check_probe_rtt_done`: after the 200 ms (and the round), restore
    /// cwnd and go back to STARTUP or PROBE_BW.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_check_probe_rtt_done
    fn check_probe_rtt_done(&mut self, tp: &mut CaCtx) {
        if !(self.ca.probe_rtt_done_stamp != 0 && after(tp.jiffies, self.ca.probe_rtt_done_stamp)) {
            return;
        }
        self.ca.min_rtt_stamp = tp.jiffies;
        tp.snd_cwnd = tp.snd_cwnd.max(self.ca.prior_cwnd);
        self.reset_mode(tp);
    }

    /// `bbr_update_min_rtt`: track the min RTT over 10 s (a larger sample
    /// replaces an expired one unless the ACK was maybe delayed); on expiry
    /// enter PROBE_RTT (not while restarting from idle), hold in-flight at 4
    /// for 200 ms and a round, marking the connection application-limited
    /// so that those low-rate samples do not lower the bandwidth estimate.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_min_rtt
    fn update_min_rtt(&mut self, tp: &mut CaCtx, rs: &RateSample) {
        let win = BBR_MIN_RTT_WIN_SEC.wrapping_mul(tp.hz);
        let filter_expired = after(tp.jiffies, self.ca.min_rtt_stamp.wrapping_add(win));
        if rs.rtt_us >= 0 && (rs.rtt_us < self.ca.min_rtt_us as i64 || (filter_expired && !rs.is_ack_delayed)) {
            self.ca.min_rtt_us = rs.rtt_us as u32;
            self.ca.min_rtt_stamp = tp.jiffies;
        }

        if BBR_PROBE_RTT_MODE_MS > 0 && filter_expired && !self.ca.idle_restart && self.ca.mode != BbrMode::ProbeRtt {
            self.ca.mode = BbrMode::ProbeRtt;
            self.save_cwnd(tp);
            self.ca.probe_rtt_done_stamp = 0;
        }

        if self.ca.mode == BbrMode::ProbeRtt {
            tp.app_limited = app_limited_marker(tp.delivered, tp.packets_in_flight);
            if self.ca.probe_rtt_done_stamp == 0 && tp.packets_in_flight <= BBR_CWND_MIN_TARGET {
                let hold = msecs_to_jiffies(BBR_PROBE_RTT_MODE_MS, tp.hz) as u32;
                self.ca.probe_rtt_done_stamp = tp.jiffies.wrapping_add(hold);
                self.ca.probe_rtt_round_done = false;
                self.ca.next_rtt_delivered = tp.delivered;
            } else if self.ca.probe_rtt_done_stamp != 0 {
                if self.ca.round_start {
                    self.ca.probe_rtt_round_done = true;
                }
                if self.ca.probe_rtt_round_done {
                    self.check_probe_rtt_done(tp);
                }
            }
        }
        // Idle restart ends with the first (S)ACK of new data.
        if rs.delivered > 0 {
            self.ca.idle_restart = false;
        }
    }

    /// `bbr_update_gains`: the mode's pacing and cwnd gains.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_gains
    fn update_gains(&mut self) {
        let (pacing, cwnd) = match self.ca.mode {
            BbrMode::Startup => (BBR_HIGH_GAIN, BBR_HIGH_GAIN),
            BbrMode::Drain => (BBR_DRAIN_GAIN, BBR_HIGH_GAIN),
            BbrMode::ProbeBw => {
                let g = if self.ca.lt_use_bw { BBR_UNIT } else { BBR_PACING_GAIN[self.ca.cycle_idx as usize & 7] };
                (g, BBR_CWND_GAIN)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
        self.ca.pacing_gain = pacing;
        self.ca.cwnd_gain = cwnd;
    }

    /// `bbr_update_model`.
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_update_model
    fn update_model(&mut self, tp: &mut CaCtx, rs: &RateSample) {
        self.update_bw(tp, rs);
        self.update_ack_aggregation(tp, rs);
        self.update_cycle_phase(tp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tp);
        self.update_min_rtt(tp, rs);
        self.update_gains();
    }

    // -----------------------------------------------------------------------
    // Hooks
    // -----------------------------------------------------------------------

    /// `cong_control` hook (`bbr_main`): update the model from the ACK's
    /// rate sample, then set the pacing rate and cwnd. (6.10+ also passes
    /// the ACK number and flags; BBR ignores them.)
    #[doc(alias = "bbr_main")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_main
    pub fn cong_control(&mut self, tp: &mut CaCtx, rs: &RateSample) {
        self.update_model(tp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tp, bw, self.ca.pacing_gain);
        self.set_cwnd(tp, rs, rs.acked_sacked, bw, self.ca.cwnd_gain);
    }

    /// `init` hook (`bbr_init`): STARTUP with no bandwidth, min RTT from
    /// `tcp_min_rtt`, pacing from the initial cwnd and RTT, rounds counted
    /// from the current `tp->delivered`, and pacing requested from the
    /// stack if no qdisc paces (`SK_PACING_NONE` → `SK_PACING_NEEDED`).
    #[doc(alias = "bbr_init")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_init
    pub fn init(&mut self, tp: &mut CaCtx) {
        let ca = &mut self.ca;
        ca.prior_cwnd = 0;
        tp.snd_ssthresh = TCP_INFINITE_SSTHRESH;
        ca.rtt_cnt = 0;
        ca.next_rtt_delivered = tp.delivered;
        ca.prev_ca_state = CaState::Open;
        ca.packet_conservation = false;
        ca.probe_rtt_done_stamp = 0;
        ca.probe_rtt_round_done = false;
        ca.min_rtt_us = tp.min_rtt_us;
        ca.min_rtt_stamp = tp.jiffies;
        ca.bw.reset(ca.rtt_cnt, 0);
        ca.has_seen_rtt = false;
        self.init_pacing_rate_from_rtt(tp);
        let ca = &mut self.ca;
        ca.round_start = false;
        ca.idle_restart = false;
        ca.full_bw_reached = false;
        ca.full_bw = 0;
        ca.full_bw_cnt = 0;
        ca.cycle_mstamp = 0;
        ca.cycle_idx = 0;
        self.reset_lt_bw_sampling(tp);
        self.reset_startup_mode();
        let ca = &mut self.ca;
        ca.ack_epoch_mstamp = tp.mstamp_us();
        ca.ack_epoch_acked = 0;
        ca.extra_acked_win_rtts = 0;
        ca.extra_acked_win_idx = 0;
        ca.extra_acked = [0, 0];
        if tp.pacing_status == PacingStatus::None {
            tp.pacing_status = PacingStatus::Needed;
        }
    }

    /// `ssthresh` hook (`bbr_ssthresh`): save cwnd for the end of
    /// recovery; ssthresh itself is unchanged.
    #[doc(alias = "bbr_ssthresh")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_ssthresh
    pub fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        self.save_cwnd(tp);
        tp.snd_ssthresh
    }

    /// `undo_cwnd` hook (`bbr_undo_cwnd`): the reduction was spurious:
    /// restart full-pipe detection and long-term sampling; cwnd stays.
    #[doc(alias = "bbr_undo_cwnd")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_undo_cwnd
    pub fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        self.ca.full_bw = 0;
        self.ca.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tp);
        tp.snd_cwnd
    }

    /// `set_state` hook (`bbr_set_state`), called before `ca_state`
    /// changes: an RTO (Loss) ends a round, restarts full-pipe growth
    /// tracking and counts as a loss for long-term sampling.
    #[doc(alias = "bbr_set_state")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_set_state
    pub fn set_state(&mut self, tp: &mut CaCtx, new_state: CaState) {
        if new_state == CaState::Loss {
            let rs = RateSample { losses: 1, ..RateSample::default() };
            self.ca.prev_ca_state = CaState::Loss;
            self.ca.full_bw = 0;
            self.ca.round_start = true;
            self.lt_bw_sampling(tp, &rs);
        }
    }

    /// `cwnd_event` hook (`bbr_cwnd_event`): the first transmission after
    /// idle while application-limited starts an idle restart: new
    /// aggregation epoch, pacing at 1.0 × bw in PROBE_BW, and PROBE_RTT may
    /// end now.
    #[doc(alias = "bbr_cwnd_event")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_cwnd_event
    pub fn cwnd_event(&mut self, tp: &mut CaCtx, event: CaEvent) {
        if event == CaEvent::TxStart && tp.app_limited != 0 {
            self.ca.idle_restart = true;
            self.ca.ack_epoch_mstamp = tp.mstamp_us();
            self.ca.ack_epoch_acked = 0;
            if self.ca.mode == BbrMode::ProbeBw {
                let bw = self.bw();
                self.set_pacing_rate(tp, bw, BBR_UNIT);
            } else if self.ca.mode == BbrMode::ProbeRtt {
                self.check_probe_rtt_done(tp);
            }
        }
    }

    /// `get_info` hook (`bbr_get_info`): `INET_DIAG_BBRINFO`.
    #[doc(alias = "bbr_get_info")]
    //= linux:v6.12:net/ipv4/tcp_bbr.c#bbr_get_info
    pub fn get_info(&self, tp: &CaCtx) -> TcpBbrInfo {
        let bw = (self.bw() as u64).wrapping_mul(tp.mss_cache as u64).wrapping_mul(USEC_PER_SEC) >> BW_SCALE;
        TcpBbrInfo { bw, min_rtt: self.ca.min_rtt_us, pacing_gain: self.ca.pacing_gain, cwnd_gain: self.ca.cwnd_gain }
    }
}

/// `tcp_bbr_cong_ops`: `init`, `cong_control` (`bbr_main`), `sndbuf_expand`,
/// `undo_cwnd`, `cwnd_event`, `ssthresh`, `min_tso_segs`, `get_info`,
/// `set_state`; no `cong_avoid` (with `cong_control` the stack never calls
/// it) and no `pkts_acked`/`in_ack_event`.
impl CongestionOps for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn init(&mut self, tp: &mut CaCtx) {
        Bbr::init(self, tp);
    }
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        Bbr::ssthresh(self, tp)
    }
    fn cong_avoid(&mut self, _tp: &mut CaCtx, _ack: tcplab_wire::SeqNum, _acked: u32) {}
    fn has_cong_control(&self) -> bool {
        true
    }
    fn cong_control(&mut self, tp: &mut CaCtx, _ack: tcplab_wire::SeqNum, _flag: u32, rs: &RateSample) {
        Bbr::cong_control(self, tp, rs);
    }
    fn set_state(&mut self, tp: &mut CaCtx, new_state: CaState) {
        Bbr::set_state(self, tp, new_state);
    }
    fn cwnd_event(&mut self, tp: &mut CaCtx, ev: CaEvent) {
        Bbr::cwnd_event(self, tp, ev);
    }
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        Bbr::undo_cwnd(self, tp)
    }
    fn min_tso_segs(&self, tp: &CaCtx) -> Option<u32> {
        Some(bbr_min_tso_segs(tp.pacing_rate))
    }
    fn sndbuf_expand(&self) -> Option<u32> {
        Some(Bbr::sndbuf_expand(self))
    }
}

#[cfg(test)]
mod tests;
