//! CUBIC (net/ipv4/tcp_cubic.c) with the kernel's integer arithmetic.
//!
//! The window follows `W(t) = C·(t − K)³ + W_max` after a reduction, with
//! `C = bic_scale·10/1024 ≈ 0.4`, `K = cbrt(W_max·(1−β)/C)` and β =
//! `beta/1024` ≈ 0.7, aimed one `delay_min` ahead; a Reno estimate
//! (`tcp_friendliness`) bounds it from below. Slow start is Linux's, with
//! HyStart ([`super::hystart`]) to leave it early.
//!
//! # Fidelity contract
//!
//! Every hook reproduces the kernel bit for bit, including u32/u64
//! wrap-around (the kernel builds with `-fno-strict-overflow`): cwnd in
//! packets, time in jiffies (`tp.jiffies`, at `tp.hz`) and in µs
//! (`tp.now`), `BICTCP_HZ` fixed point (2⁻¹⁰ s), `cubic_root` by table and
//! one Newton–Raphson step. The conformance vectors in
//! `shared/conformance/linux-vectors` (cubic_root, recalc_ssthresh,
//! bictcp_update traces, HyStart traces) are checked row for row by
//! `tests/vectors_cc.rs`. The state is integers only; no input panics.
//!
//! Two deliberate deviations, both for inputs on which the kernel itself
//! would hang or trap: the TCP-friendliness loop (subtract `delta` from `ack_cnt`
//! while it exceeds `delta`) is computed by division (same result) and skipped when `delta == 0`
//! (the kernel would loop forever); divisions by a zero module parameter
//! (`beta = 1024`, `bic_scale = 0`) are rejected by
//! [`CubicParams::validate`] and yield 0 instead of a trap.
//!
//! # Eras ([`CubicVersion`])
//!
//! * `V3_18` — Linux 3.18.30: `bictcp_update(ca, cwnd)` counts ACKs, not
//!   packets, and divides `cnt` by a delayed-ACK ratio estimated in
//!   `pkts_acked`; `cong_avoid` does either slow start (while `cwnd <=
//!   ssthresh`, to `ssthresh + 1`) or one `tcp_cong_avoid_ai(tp, cnt)` step;
//!   `delay_min` in ms·8; undo `max(cwnd, loss_cwnd)`.
//! * `V3_19` — the 3.19.8 tree (stretch-ACK aware, as mainline v4.0):
//!   `bictcp_update(ca, cwnd, acked)` counts packets, recomputes the cubic
//!   target at most once per jiffy, floors `cnt` at 2 (cwnd grows ≤ 1.5×
//!   per RTT); slow start's leftover goes to AI on the same ACK; still
//!   `cwnd <= ssthresh`, ms·8 `delay_min`, `loss_cwnd` undo.
//! * `Current` — Linux 6.13.7: as `V3_19` plus `cwnd < ssthresh`,
//!   `delay_min` in µs, `cwnd_event(TX_START)` shifting the epoch after
//!   idle, undo = `tcp_reno_undo_cwnd`, HyStart's round reset inside
//!   `hystart_update`.
//!
//! # What the core must provide
//!
//! CaCtx fields read: `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`,
//! `snd_cwnd_clamp`, `is_cwnd_limited`, `max_packets_out`, `prior_cwnd`
//! (undo, Current), `snd_una`/`snd_nxt` (HyStart rounds), `ca_state`
//! (3.18 delayed-ACK ratio), `jiffies` + `hz` (`tcp_jiffies32` /
//! `tcp_time_stamp`), `now` (µs `tcp_mstamp`; the 3.x ms clock when HZ <
//! 1000), `lsndtime` (TX_START), `pacing_rate`, `pacing_status`,
//! `gso_max_size` (6.13 ACK-train threshold). Written: `snd_cwnd`,
//! `snd_cwnd_cnt`, `snd_ssthresh` (HyStart exit, `initial_ssthresh`),
//! `mib`.
//!
//! # HyStart++ (tcplab-only)
//!
//! [`CubicParams::hystart_plus_plus`] swaps Linux HyStart for HyStart++
//! (RFC 9406, [`super::hystart_plus`]), which Linux does not ship: Linux
//! HyStart then never runs (no `hystart_update`, no round resets, no
//! `TCPHystart*` counters), and the initial slow start is HyStart++'s
//! (`L`-limited, CSS). Everything else stays the era's CUBIC.

use super::hystart::{Hystart, HystartExit, HystartParams, HystartVersion, HYSTART_ACK_TRAIN, HYSTART_DELAY};
use super::hystart_plus::HystartPlusPlus;
use super::{
    tcp_cong_avoid_ai, tcp_cong_avoid_ai_v3_18, tcp_in_slow_start, tcp_is_cwnd_limited, tcp_reno_undo_cwnd,
    tcp_slow_start, tcp_slow_start_v3_18, tcp_slow_start_v3_19, AckSample, CaCtx, CaEvent, CaState, CcEra,
    CongestionOps,
};
use crate::rtt::{msecs_to_jiffies, usecs_to_jiffies};
use tcplab_wire::SeqNum;

#[cfg(test)]
mod tests;

/// `BICTCP_BETA_SCALE`: fixed-point scale of `beta`.
pub const BICTCP_BETA_SCALE: u32 = 1024;
/// `BICTCP_HZ`: CUBIC's time unit is 2^-BICTCP_HZ s.
pub const BICTCP_HZ: u32 = 10;
/// `ACK_RATIO_SHIFT` (≤ 3.18): the delayed-ACK ratio is scaled by 16.
pub const ACK_RATIO_SHIFT: u32 = 4;
/// `ACK_RATIO_LIMIT` (≤ 3.18): at most 32 packets per ACK.
pub const ACK_RATIO_LIMIT: u32 = 32 << ACK_RATIO_SHIFT;

/// Which kernel's CUBIC to model; see the module docs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CubicVersion {
    /// Linux 3.18.30: delayed-ACK ratio, one AI increment per call, slow
    /// start while `cwnd <= ssthresh`.
    V3_18,
    /// The 3.19.8 tree: stretch-ACK aware (`acked` counted, `cnt >= 2`
    /// floor, once-per-jiffy update), acked-aware AI.
    V3_19,
    /// Linux 6.13.7 (and everything since 5.7 that matters here).
    #[default]
    Current,
}

crate::names::named_enum!(CubicVersion { V3_18 => "v3.18", V3_19 => "v3.19", Current => "current" });

impl CubicVersion {
    /// The era of the shared tcp_cong.c helpers this CUBIC calls.
    pub fn cc_era(self) -> CcEra {
        match self {
            CubicVersion::V3_18 => CcEra::V3_18,
            CubicVersion::V3_19 => CcEra::V3_19,
            CubicVersion::Current => CcEra::Current,
        }
    }

    /// The HyStart of the same tree.
    pub fn hystart_version(self) -> HystartVersion {
        match self {
            CubicVersion::V3_18 => HystartVersion::V3_18,
            CubicVersion::V3_19 => HystartVersion::V3_19,
            CubicVersion::Current => HystartVersion::Current,
        }
    }
}

/// CUBIC's module parameters (`/sys/module/tcp_cubic/parameters/*`), with
/// current Linux defaults, plus the era knobs of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CubicParams {
    /// Era of `bictcp_update` / `cong_avoid` / `pkts_acked`.
    pub version: CubicVersion,
    /// "beta for multiplicative increase" (per 1024; 717 ≈ 0.7).
    pub beta: u32,
    /// "scale (scaled by 1024) value for bic function (bic_scale/1024)";
    /// 41 gives C ≈ 0.4.
    pub bic_scale: u32,
    /// "turn on/off fast convergence".
    pub fast_convergence: bool,
    /// "turn on/off tcp friendliness".
    pub tcp_friendliness: bool,
    /// "initial value of slow start threshold" (0 = none; used only when
    /// `hystart` is off).
    pub initial_ssthresh: u32,
    /// "turn on/off hybrid slow start algorithm".
    pub hystart: bool,
    /// "hybrid slow start detection mechanisms 1: packet-train 2: delay 3:
    /// both packet-train and delay".
    pub hystart_detect: u8,
    /// "lower bound cwnd for hybrid slow start" (packets).
    pub hystart_low_window: u32,
    /// "spacing between ack's indicating train (usecs)". 3.x has the ms
    /// parameter `hystart_ack_delta` (2); it is taken as this / 1000.
    pub hystart_ack_delta_us: u32,
    /// Era of HyStart. Normally `version.hystart_version()`; "3.19 as
    /// released" is `version: V3_18` with `hystart_version: V3_19`. The
    /// delay unit follows `version` (ms·8 for 3.x, µs for Current), so a
    /// 3.x HyStart needs a 3.x CUBIC and vice versa ([`Self::validate`]).
    pub hystart_version: HystartVersion,
    /// Divisor of the HyStart delay threshold, `delay_min >> shift`: 4 is
    /// before "tcp_cubic: refine Hystart delay threshold" (≤ 3.18, 6.25 %),
    /// 3 after (≥ 3.19, 12.5 %).
    pub hystart_delay_thresh_shift: u32,
    /// The ACK-train threshold of v3.x to v5.6 in the current HyStart:
    /// `delay_min/2` whether or not the socket is paced, without
    /// `hystart_ack_delay` (the kernel backend's switch
    /// `tcp_cubic.hystart_train_half_rtt`). Default false, mainline since
    /// 5.7 ("tcp_cubic: make Hystart aware of pacing"); the 3.x HyStarts
    /// always use half an RTT.
    pub hystart_train_half_rtt: bool,
    /// Not a tcp_cubic parameter (tcplab-only): leave the initial slow start
    /// by HyStart++ (RFC 9406) instead of Linux HyStart, whose `hystart*`
    /// parameters are then unused. Default false, as in Linux.
    pub hystart_plus_plus: bool,
    /// HyStart++'s `L`, packets of cwnd growth per ACK; 0 (default) = the
    /// RFC 9406 §4.3 rule: infinity when paced, 8 when not.
    pub hystart_plus_plus_l: u32,
}

impl Default for CubicParams {
    fn default() -> Self {
        CubicParams::for_version(CubicVersion::Current)
    }
}

impl CubicParams {
    /// The defaults of the given kernel: current module parameters, that
    /// tree's HyStart, and its delay-threshold divisor (4 for 3.18, else 3).
    pub fn for_version(version: CubicVersion) -> CubicParams {
        CubicParams {
            version,
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            initial_ssthresh: 0,
            hystart: true,
            hystart_detect: HYSTART_ACK_TRAIN | HYSTART_DELAY,
            hystart_low_window: 16,
            hystart_ack_delta_us: 2000,
            hystart_version: version.hystart_version(),
            hystart_delay_thresh_shift: if version == CubicVersion::V3_18 { 4 } else { 3 },
            hystart_train_half_rtt: false,
            hystart_plus_plus: false,
            hystart_plus_plus_l: 0,
        }
    }

    /// CUBIC of Linux 3.19 as released: the 3.18 window update
    /// (delayed-ACK ratio) with 3.19's HyStart (counters, per-detector
    /// enable, `delay_min >> 3`). The stretch-ACK changes of the 3.19.8
    /// tree ([`CubicVersion::V3_19`]) reached mainline only in v4.0.
    pub fn v3_19_as_released() -> CubicParams {
        CubicParams {
            hystart_version: HystartVersion::V3_19,
            hystart_delay_thresh_shift: 3,
            ..CubicParams::for_version(CubicVersion::V3_18)
        }
    }

    /// The parameters HyStart reads.
    pub fn hystart_params(&self) -> HystartParams {
        HystartParams {
            hystart_version: self.hystart_version,
            hystart_detect: self.hystart_detect,
            hystart_low_window: self.hystart_low_window,
            hystart_ack_delta_us: self.hystart_ack_delta_us,
            hystart_delay_thresh_shift: self.hystart_delay_thresh_shift,
            hystart_train_half_rtt: self.hystart_train_half_rtt,
        }
    }

    /// Checks what `cubictcp_register` and the module-parameter types
    /// would reject or trap on.
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.beta >= BICTCP_BETA_SCALE {
            return Err("cubic: beta must be below 1024 (beta_scale divides by 1024 - beta)");
        }
        if self.bic_scale == 0 || self.bic_scale.checked_mul(10).is_none() {
            return Err("cubic: bic_scale must be positive and bic_scale*10 fit in u32");
        }
        if self.hystart_delay_thresh_shift >= 32 {
            return Err("cubic: hystart_delay_thresh_shift must be below 32");
        }
        let ms_cubic = self.version != CubicVersion::Current;
        if ms_cubic != self.hystart_version.is_ms_clock() {
            return Err("cubic: a 3.x HyStart needs a 3.x CUBIC (delay_min in ms*8) and vice versa");
        }
        Ok(())
    }
}

/// Which part of `bictcp_update` ran on the last `cong_avoid` (named as the
/// conformance vectors' `path` column).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UpdatePath {
    /// `tcp_is_cwnd_limited` was false: nothing ran.
    NotCwndLimited,
    /// Slow start used every acked packet; `bictcp_update` not called.
    SlowStartOnly,
    /// cwnd unchanged and ≤ HZ/32 since `last_time`: only `ack_cnt` grew.
    EarlyReturn,
    /// Same jiffy as `last_time` in a running epoch: only the
    /// TCP-friendly clamp and the `cnt >= 2` floor (V3_19, Current).
    FriendlinessOnly,
    /// `epoch_start` was 0: a new epoch and K were computed.
    NewEpoch,
    /// Full recomputation of the cubic target.
    Recompute,
}

/// What the last hooks did, for tracing and tests; cleared by
/// [`Cubic::take_trace`]. Not part of the kernel state.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct CubicTrace {
    /// Path of the last `cong_avoid`.
    pub path: Option<UpdatePath>,
    /// `pkts_acked` reached `hystart_update`.
    pub hystart_called: bool,
    /// HyStart rounds started (in `hystart_update` or `cong_avoid`).
    pub round_resets: u8,
    /// HyStart detectors that fired.
    pub hystart_exit: HystartExit,
}

/// `struct bictcp` (tcp_cubic.c): CUBIC's per-flow state. Public so that
/// tests and tracing can read and seed it; the hooks keep it consistent.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Bictcp {
    /// `cnt`: increase cwnd by 1 after this many acked packets (ACKs in
    /// 3.18).
    pub cnt: u32,
    /// `last_max_cwnd`: W_max before the last reduction (packets).
    pub last_max_cwnd: u32,
    /// `loss_cwnd` (3.x): cwnd at the last reduction, for undo.
    pub loss_cwnd: u32,
    /// `last_cwnd`: cwnd at the last recomputation.
    pub last_cwnd: u32,
    /// `last_time`: jiffies of the last recomputation.
    pub last_time: u32,
    /// `bic_origin_point`: W_max of the curve (packets).
    pub bic_origin_point: u32,
    /// `bic_K`: time from epoch start to the origin, 2^-10 s.
    pub bic_k: u32,
    /// `delay_min`: minimum RTT (µs in 6.13; ms·8 in 3.x).
    pub delay_min: u32,
    /// `epoch_start`: jiffies when the epoch began; 0 = no epoch.
    pub epoch_start: u32,
    /// `ack_cnt`: packets (3.18: ACKs) acked in this epoch, for the Reno
    /// estimate.
    pub ack_cnt: u32,
    /// `tcp_cwnd`: Reno-equivalent cwnd estimate (packets).
    pub tcp_cwnd: u32,
    /// `delayed_ack` (≤ 3.18): packets per ACK, ×16.
    pub delayed_ack: u16,
    /// HyStart's fields.
    pub hystart: Hystart,
}

impl Default for Bictcp {
    fn default() -> Self {
        Bictcp {
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            bic_origin_point: 0,
            bic_k: 0,
            delay_min: 0,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            delayed_ack: (2 << ACK_RATIO_SHIFT) as u16,
            hystart: Hystart::default(),
        }
    }
}

/// CUBIC congestion control (`struct tcp_congestion_ops cubictcp`).
///
/// Construct with [`Cubic::new`] (or [`super::AnyCc::new`]), call
/// [`CongestionOps::init`] once when the connection is established, then
/// the hooks in the kernel's order per ACK: `pkts_acked` (from
/// `tcp_clean_rtx_queue`) before `cong_avoid` (from `tcp_cong_control`).
#[derive(Clone, Debug)]
pub struct Cubic {
    params: CubicParams,
    /// `beta_scale = 8·(1024 + beta) / 3 / (1024 − beta)` (15).
    beta_scale: u32,
    /// `cube_rtt_scale = bic_scale · 10` (410).
    cube_rtt_scale: u32,
    /// `cube_factor = 2^40 / cube_rtt_scale` (2681735677).
    cube_factor: u64,
    ca: Bictcp,
    trace: CubicTrace,
    /// HyStart++ state, present when `params.hystart_plus_plus`
    /// (tcplab-only). Boxed: 8 bytes instead of 40 in the connections that
    /// do not select it, every one by default (issue 15: memory per
    /// connection).
    hspp: Option<Box<HystartPlusPlus>>,
}

/// `cubic_root(a)`: cube root of a u64 by a 64-entry table of the top bits
/// and one Newton–Raphson step (average error ≈ 0.195 %), exactly as the
/// kernel computes it, including the u32 wrap-around of the final step for
/// inputs far above anything CUBIC passes (≈ 2^52).
//= linux:v6.13:net/ipv4/tcp_cubic.c#cubic_root (same text in 3.18.30, 3.19.8, 4.17)
pub fn cubic_root(a: u64) -> u32 {
    // v[x] = cbrt(x << 18) - 1, refined by hand (Willy Tarreau);
    // cbrt(x) = (v[x] + 10) >> 6 for x in 0..64.
    const V: [u8; 64] = [
        0, 54, 54, 54, 118, 118, 118, 118, 123, 129, 134, 138, 143, 147, 151, 156, 157, 161, 164, 168, 170, 173, 176,
        179, 181, 185, 187, 190, 192, 194, 197, 199, 200, 202, 204, 206, 209, 211, 213, 215, 217, 219, 221, 222, 224,
        225, 227, 229, 231, 232, 234, 236, 237, 239, 240, 242, 244, 245, 246, 248, 250, 251, 252, 254,
    ];
    let bits = 64 - a.leading_zeros(); // fls64
    if bits < 7 {
        return (V[a as usize] as u32 + 35) >> 6;
    }
    // b ≈ bits/3 - 1: the table index takes the top 4..6 bits.
    let b = ((bits * 84) >> 8) - 1;
    let shift = (a >> (b * 3)) as u32;
    let v = V.get(shift as usize).copied().unwrap_or(V[63]) as u32;
    let x = (v + 10).wrapping_shl(b) >> 6;
    // One Newton-Raphson step, x' = (2x + a / x²) / 3, with x·(x−1) as the
    // divisor and ·341/1024 for /3, in u32 as the kernel does.
    let div = (x as u64).wrapping_mul(x.wrapping_sub(1) as u64);
    let q = a.checked_div(div).unwrap_or(0) as u32;
    let x = x.wrapping_mul(2).wrapping_add(q);
    x.wrapping_mul(341) >> 10
}

impl Cubic {
    /// Builds CUBIC, computing the derived constants once as
    /// `cubictcp_register` does. Parameters that the kernel would trap on
    /// (see [`CubicParams::validate`]) give zero constants, never a panic.
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_register
    pub fn new(params: CubicParams) -> Cubic {
        // `int` arithmetic in the kernel; beta < 1024 keeps it positive.
        let beta = params.beta as i64;
        let scale = BICTCP_BETA_SCALE as i64;
        let beta_scale = if beta < scale { (8 * (scale + beta) / 3 / (scale - beta)) as u32 } else { 0 };
        let cube_rtt_scale = params.bic_scale.wrapping_mul(10);
        // cube_factor = 2^(10+3·BICTCP_HZ) / (bic_scale·10)
        let cube_factor = (1u64 << (10 + 3 * BICTCP_HZ)).checked_div(cube_rtt_scale as u64).unwrap_or(0);
        let hspp = params.hystart_plus_plus.then(|| Box::new(HystartPlusPlus::new(params.hystart_plus_plus_l)));
        Cubic {
            params,
            beta_scale,
            cube_rtt_scale,
            cube_factor,
            ca: Bictcp::default(),
            trace: CubicTrace::default(),
            hspp,
        }
    }

    pub fn params(&self) -> &CubicParams {
        &self.params
    }
    /// Derived `beta_scale` (15 with beta 717).
    pub fn beta_scale(&self) -> u32 {
        self.beta_scale
    }
    /// Derived `cube_rtt_scale` (410 with bic_scale 41).
    pub fn cube_rtt_scale(&self) -> u32 {
        self.cube_rtt_scale
    }
    /// Derived `cube_factor` (2^40/410 = 2681735677).
    pub fn cube_factor(&self) -> u64 {
        self.cube_factor
    }
    /// The `struct bictcp` state.
    pub fn ca(&self) -> &Bictcp {
        &self.ca
    }
    /// Mutable state, for tests that seed a situation (as the conformance
    /// harness does after `init`).
    pub fn ca_mut(&mut self) -> &mut Bictcp {
        &mut self.ca
    }
    /// Returns and clears what the hooks did since the last call.
    pub fn take_trace(&mut self) -> CubicTrace {
        core::mem::take(&mut self.trace)
    }
    /// The HyStart++ state, if HyStart++ is selected.
    pub fn hystart_plus_plus(&self) -> Option<&HystartPlusPlus> {
        self.hspp.as_deref()
    }
    /// Mutable HyStart++ state, if selected (tests seed situations).
    pub fn hystart_plus_plus_mut(&mut self) -> Option<&mut HystartPlusPlus> {
        self.hspp.as_deref_mut()
    }

    /// Linux HyStart is on: `hystart` and HyStart++ not selected instead.
    fn linux_hystart(&self) -> bool {
        self.params.hystart && !self.params.hystart_plus_plus
    }

    fn is_v3(&self) -> bool {
        self.params.version != CubicVersion::Current
    }

    /// `bictcp_reset()`: forget W_max, the epoch, delay_min and `found`.
    /// 3.x keeps `loss_cwnd` (only `init` clears it); 3.18 restarts the
    /// delayed-ACK ratio at 2.
    #[doc(alias = "bictcp_reset")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#bictcp_reset
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_reset
    fn reset(&mut self) {
        let keep = Bictcp { loss_cwnd: self.ca.loss_cwnd, hystart: self.ca.hystart, ..Bictcp::default() };
        self.ca = keep;
        self.ca.hystart.found = 0;
    }

    /// `bictcp_update()` of the era: recompute `cnt`, the number of acked
    /// packets per cwnd increment.
    #[doc(alias = "bictcp_update")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#bictcp_update
    //= linux:v3.19.8:net/ipv4/tcp_cubic.c#bictcp_update
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_update
    fn update(&mut self, tp: &CaCtx, cwnd: u32, acked: u32) -> UpdatePath {
        let now = tp.jiffies;
        let hz = tp.hz.max(1);
        let v3_18 = self.params.version == CubicVersion::V3_18;
        let ca = &mut self.ca;

        // 3.18 counts ACKs, later kernels packets.
        ca.ack_cnt = ca.ack_cnt.wrapping_add(if v3_18 { 1 } else { acked });

        if ca.last_cwnd == cwnd && (now.wrapping_sub(ca.last_time) as i32) <= (hz / 32) as i32 {
            return UpdatePath::EarlyReturn;
        }

        // ≥ 3.19.8 tree: the cubic target is recomputed at most once per
        // jiffy; on every reduction epoch_start = 0 forces a recomputation.
        let path = if !v3_18 && ca.epoch_start != 0 && now == ca.last_time {
            UpdatePath::FriendlinessOnly
        } else {
            ca.last_cwnd = cwnd;
            ca.last_time = now;
            let mut path = UpdatePath::Recompute;
            if ca.epoch_start == 0 {
                path = UpdatePath::NewEpoch;
                ca.epoch_start = now;
                ca.ack_cnt = if v3_18 { 1 } else { acked };
                ca.tcp_cwnd = cwnd;
                if ca.last_max_cwnd <= cwnd {
                    ca.bic_k = 0;
                    ca.bic_origin_point = cwnd;
                } else {
                    // K = cbrt((W_max − cwnd) · cube_factor), 2^-10 s.
                    ca.bic_k = cubic_root(self.cube_factor.wrapping_mul((ca.last_max_cwnd - cwnd) as u64));
                    ca.bic_origin_point = ca.last_max_cwnd;
                }
            }

            // t = (now − epoch_start + delay_min) in 2^-10 s: the target is
            // one minimum RTT ahead.
            let t: u64 = match self.params.version {
                CubicVersion::V3_18 => {
                    // now + delay_min (ms·8 → jiffies) − epoch_start, scaled
                    // to 2^-10 s; computed in 64-bit unsigned long (it wraps
                    // there, not in u32), then stored in the u32 `t`.
                    let m = msecs_to_jiffies(ca.delay_min >> 3, hz);
                    let x = (now as u64).wrapping_add(m).wrapping_sub(ca.epoch_start as u64);
                    ((x << BICTCP_HZ) / hz as u64) as u32 as u64
                }
                CubicVersion::V3_19 | CubicVersion::Current => {
                    // The jiffies difference is taken as s32 and sign-extends
                    // into the u64 `t`.
                    let mut t = now.wrapping_sub(ca.epoch_start) as i32 as i64 as u64;
                    t = t.wrapping_add(if delay_min_in_ms8(self.params.version) {
                        msecs_to_jiffies(ca.delay_min >> 3, hz)
                    } else {
                        usecs_to_jiffies(ca.delay_min, hz)
                    });
                    (t << BICTCP_HZ) / hz as u64
                }
            };

            let k = ca.bic_k as u64;
            let offs = t.abs_diff(k);
            // Eq. W(t) = C·(t−K)³ + W_max: delta = (410·offs³) >> 40 packets.
            let delta = ((self.cube_rtt_scale as u64).wrapping_mul(offs).wrapping_mul(offs).wrapping_mul(offs)
                >> (10 + 3 * BICTCP_HZ)) as u32;
            let bic_target = if t < k {
                ca.bic_origin_point.wrapping_sub(delta) // below origin
            } else {
                ca.bic_origin_point.wrapping_add(delta) // above origin
            };

            ca.cnt = if bic_target > cwnd {
                cwnd / (bic_target - cwnd)
            } else {
                cwnd.wrapping_mul(100) // very small increment
            };

            // Before the first loss W_max is unknown: grow ≥ 5 % per RTT.
            if ca.last_max_cwnd == 0 && ca.cnt > 20 {
                ca.cnt = 20;
            }
            path
        };

        // TCP friendliness: a Reno flow with the same beta grows one packet
        // per `cwnd·beta_scale/8` acked; never be slower than it.
        if self.params.tcp_friendliness {
            let delta = cwnd.wrapping_mul(self.beta_scale) >> 3;
            // The kernel's subtract-and-count loop (one tcp_cwnd per delta
            // acked), done by division; delta == 0 would hang the kernel
            // and is skipped.
            if delta != 0 && ca.ack_cnt > delta {
                let n = (ca.ack_cnt - 1) / delta;
                ca.ack_cnt -= n * delta;
                ca.tcp_cwnd = ca.tcp_cwnd.wrapping_add(n);
            }
            if ca.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (ca.tcp_cwnd - cwnd);
                if ca.cnt > max_cnt {
                    ca.cnt = max_cnt;
                }
            }
        }

        if v3_18 {
            // Scale by the delayed-ACK ratio: cnt counts ACKs here.
            ca.cnt = (ca.cnt << ACK_RATIO_SHIFT).checked_div(ca.delayed_ack as u32).unwrap_or(ca.cnt);
            if ca.cnt == 0 {
                ca.cnt = 1;
            }
        } else {
            // At most 1 packet per 2 acked: cwnd grows ≤ 1.5× per RTT.
            ca.cnt = ca.cnt.max(2);
        }
        path
    }
}

/// 3.x CUBIC keeps delay_min in ms·8, 6.13 in µs.
#[inline]
fn delay_min_in_ms8(v: CubicVersion) -> bool {
    v != CubicVersion::Current
}

impl CongestionOps for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    /// `cubictcp_init` / `bictcp_init`: reset the state, start a HyStart
    /// round if HyStart is on, else apply `initial_ssthresh`.
    #[doc(alias = "cubictcp_init")]
    #[doc(alias = "bictcp_init")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_init
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_init
    fn init(&mut self, tp: &mut CaCtx) {
        self.reset();
        if self.is_v3() {
            self.ca.loss_cwnd = 0;
        }
        if self.linux_hystart() {
            self.ca.hystart.reset(tp, self.params.hystart_version);
        }
        if let Some(hspp) = self.hspp.as_deref_mut() {
            hspp.init(tp);
        }
        if !self.params.hystart && self.params.initial_ssthresh != 0 {
            tp.snd_ssthresh = self.params.initial_ssthresh;
        }
    }

    /// `cubictcp_recalc_ssthresh`: end the epoch, remember W_max (reduced
    /// further by fast convergence when the flow is losing ground) and
    /// return `max(cwnd·beta/1024, 2)`. u32 products wrap as the kernel's.
    #[doc(alias = "cubictcp_recalc_ssthresh")]
    #[doc(alias = "bictcp_recalc_ssthresh")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_recalc_ssthresh
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_recalc_ssthresh
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        let cwnd = tp.snd_cwnd;
        let beta = self.params.beta;
        // A congestion event ends HyStart++ for good (CUBIC's own beta
        // applies, see hystart_plus.rs).
        if let Some(hspp) = self.hspp.as_deref_mut() {
            hspp.on_congestion();
        }
        self.ca.epoch_start = 0; // end of epoch
        if cwnd < self.ca.last_max_cwnd && self.params.fast_convergence {
            self.ca.last_max_cwnd = cwnd.wrapping_mul(BICTCP_BETA_SCALE.wrapping_add(beta)) / (2 * BICTCP_BETA_SCALE);
        } else {
            self.ca.last_max_cwnd = cwnd;
        }
        if self.is_v3() {
            self.ca.loss_cwnd = cwnd;
        }
        (cwnd.wrapping_mul(beta) / BICTCP_BETA_SCALE).max(2)
    }

    /// `cubictcp_cong_avoid` / `bictcp_cong_avoid`.
    #[doc(alias = "cubictcp_cong_avoid")]
    #[doc(alias = "bictcp_cong_avoid")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_cong_avoid
    //= linux:v3.19.8:net/ipv4/tcp_cubic.c#bictcp_cong_avoid
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_cong_avoid
    fn cong_avoid(&mut self, tp: &mut CaCtx, ack: SeqNum, acked: u32) {
        let era = self.params.version.cc_era();
        if !tcp_is_cwnd_limited(tp, era) {
            self.trace.path = Some(UpdatePath::NotCwndLimited);
            return;
        }
        let mut acked = acked;
        if tcp_in_slow_start(tp, era) {
            // ≤ 5.10: a HyStart round ends when the ACK passes end_seq,
            // checked here, after pkts_acked has seen this ACK.
            if self.linux_hystart()
                && self.params.hystart_version != HystartVersion::Current
                && ack.after(self.ca.hystart.end_seq)
            {
                self.ca.hystart.reset(tp, self.params.hystart_version);
                self.trace.round_resets = self.trace.round_resets.saturating_add(1);
            }
            match (self.hspp.as_deref_mut().filter(|h| h.is_active(tp, era)), self.params.version) {
                // tcplab-only: HyStart++'s L-limited (in CSS divided) slow
                // start in the era's form; in 3.18 it leaves nothing for AI.
                (Some(h), _) => acked = h.slow_start(tp, acked, era),
                (None, CubicVersion::V3_18) => {
                    tcp_slow_start_v3_18(tp, acked);
                    self.trace.path = Some(UpdatePath::SlowStartOnly);
                    return;
                }
                (None, CubicVersion::V3_19) => acked = tcp_slow_start_v3_19(tp, acked),
                (None, CubicVersion::Current) => acked = tcp_slow_start(tp, acked),
            }
            if acked == 0 {
                self.trace.path = Some(UpdatePath::SlowStartOnly);
                return;
            }
        }
        let cwnd = tp.snd_cwnd;
        let path = self.update(tp, cwnd, acked);
        self.trace.path = Some(path);
        match self.params.version {
            CubicVersion::V3_18 => tcp_cong_avoid_ai_v3_18(tp, self.ca.cnt),
            CubicVersion::V3_19 | CubicVersion::Current => tcp_cong_avoid_ai(tp, self.ca.cnt, acked),
        }
    }

    /// `cubictcp_state`: on entering Loss (RTO), forget everything,
    /// including W_max and delay_min, and re-arm HyStart.
    #[doc(alias = "cubictcp_state")]
    #[doc(alias = "bictcp_state")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_state
    fn set_state(&mut self, tp: &mut CaCtx, new_state: CaState) {
        if new_state == CaState::Loss {
            if let Some(hspp) = self.hspp.as_deref_mut() {
                hspp.on_congestion();
            }
            self.reset();
            self.ca.hystart.reset(tp, self.params.hystart_version);
        }
    }

    /// `cubictcp_cwnd_event` (≥ 4.3, Current only): on the first send after
    /// idle, shift `epoch_start` forward by the idle time so the curve
    /// resumes where it stopped, but never past now.
    #[doc(alias = "cubictcp_cwnd_event")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_cwnd_event
    fn cwnd_event(&mut self, tp: &mut CaCtx, ev: CaEvent) {
        if self.params.version != CubicVersion::Current || ev != CaEvent::TxStart {
            return;
        }
        let now = tp.jiffies;
        let delta = now.wrapping_sub(tp.lsndtime) as i32;
        if self.ca.epoch_start != 0 && delta > 0 {
            self.ca.epoch_start = self.ca.epoch_start.wrapping_add(delta as u32);
            if SeqNum(self.ca.epoch_start).after(SeqNum(now)) {
                self.ca.epoch_start = now;
            }
        }
    }

    /// `cubictcp_acked` / `bictcp_acked`: track delay_min from the ACK's
    /// RTT sample (ignored for a second after a reduction) and run HyStart
    /// in slow start. 3.18 first updates its delayed-ACK ratio in Open.
    #[doc(alias = "cubictcp_acked")]
    #[doc(alias = "bictcp_acked")]
    //= linux:v6.13:net/ipv4/tcp_cubic.c#cubictcp_acked
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_acked
    fn pkts_acked(&mut self, tp: &mut CaCtx, sample: &AckSample) {
        if self.params.version == CubicVersion::V3_18 && tp.ca_state == CaState::Open {
            // ratio = 15/16·ratio + packets of this ACK, capped at 32·16.
            let ratio = (self.ca.delayed_ack as u32)
                .wrapping_sub((self.ca.delayed_ack as u32) >> ACK_RATIO_SHIFT)
                .wrapping_add(sample.pkts_acked);
            self.ca.delayed_ack = ratio.min(ACK_RATIO_LIMIT) as u16;
        }
        if let Some(hspp) = self.hspp.as_deref_mut() {
            // Rounds advance on every ACK, sample or not.
            let era = self.params.version.cc_era();
            hspp.pkts_acked(tp, sample.rtt_us, era);
        }
        // The kernel's sample is an s32.
        let rtt_us = sample.rtt_us as i32;
        // Some calls are for duplicates without timestamps.
        if rtt_us < 0 {
            return;
        }
        // Discard delay samples right after fast recovery.
        let hz = tp.hz as i32;
        if self.ca.epoch_start != 0 && (tp.jiffies.wrapping_sub(self.ca.epoch_start) as i32) < hz {
            return;
        }
        let mut delay = if self.is_v3() {
            // ms·8: eight times the µs sample over 1000, the shift done in
            // 32-bit int (wraps for samples above 2^28 µs).
            (rtt_us.wrapping_shl(3) as i64 / 1000) as u32
        } else {
            rtt_us as u32
        };
        if delay == 0 {
            delay = 1;
        }
        // First call, or the path's delay decreased.
        if self.ca.delay_min == 0 || self.ca.delay_min > delay {
            self.ca.delay_min = delay;
        }

        let linux_hystart = self.linux_hystart();
        let p = &self.params;
        let run = match p.hystart_version {
            HystartVersion::Current => {
                self.ca.hystart.found == 0 && tcp_in_slow_start(tp, CcEra::Current) && linux_hystart
            }
            HystartVersion::V3_18 | HystartVersion::V3_19 => {
                linux_hystart && tp.snd_cwnd <= tp.snd_ssthresh && tp.snd_cwnd >= p.hystart_low_window
            }
        };
        if run {
            self.trace.hystart_called = true;
            let delay_min = self.ca.delay_min;
            let mut resets = self.trace.round_resets;
            let exit = self.ca.hystart.update(tp, delay, delay_min, &p.hystart_params(), &mut resets);
            self.trace.round_resets = resets;
            self.trace.hystart_exit.train |= exit.train;
            self.trace.hystart_exit.delay |= exit.delay;
        }
    }

    /// Undo: Current = `tcp_reno_undo_cwnd` (`max(cwnd, prior_cwnd)`,
    /// ≥ 4.13); 3.x `bictcp_undo_cwnd` = `max(cwnd, loss_cwnd)`.
    #[doc(alias = "bictcp_undo_cwnd")]
    //= linux:v3.18.30:net/ipv4/tcp_cubic.c#bictcp_undo_cwnd
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        if self.is_v3() {
            tp.snd_cwnd.max(self.ca.loss_cwnd)
        } else {
            tcp_reno_undo_cwnd(tp)
        }
    }
}
