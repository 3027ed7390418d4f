//! Congestion control, shaped like Linux's `struct tcp_congestion_ops`
//! (include/net/tcp.h) so that an algorithm reads like its kernel
//! counterpart and a kernel patch ports line for line.
//!
//! The core owns loss recovery and the ca_state machine (tcp_input.c); an
//! algorithm only answers the hooks. Hooks receive [`CaCtx`], the narrow
//! slice of `struct tcp_sock` that congestion control may read or write,
//! instead of the whole socket.
//!
//! Shared helpers of net/ipv4/tcp_cong.c (`tcp_slow_start`,
//! `tcp_cong_avoid_ai`, `tcp_reno_*`) live here; each algorithm lives in a
//! file named after its kernel file.

use crate::counters::Counters;
use crate::rate::RateSample;
use crate::time::Instant;
use tcplab_wire::SeqNum;

/// `TCP_INFINITE_SSTHRESH` (include/net/tcp.h).
pub const TCP_INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// `enum tcp_ca_state` (include/uapi/linux/tcp.h). Ordered: a state
/// compares greater than the ones it may override, as Linux relies on
/// (`icsk_ca_state < TCP_CA_CWR`).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub enum CaState {
    #[default]
    Open = 0,
    Disorder = 1,
    Cwr = 2,
    Recovery = 3,
    Loss = 4,
}

impl CaState {
    /// `TCP_CA_*` name, as packetdrill scripts and tcp_info print it.
    pub fn name(self) -> &'static str {
        match self {
            CaState::Open => "Open",
            CaState::Disorder => "Disorder",
            CaState::Cwr => "CWR",
            CaState::Recovery => "Recovery",
            CaState::Loss => "Loss",
        }
    }
}

/// `enum tcp_ca_event` (include/net/tcp.h).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CaEvent {
    /// First transmit when no packets in flight.
    TxStart,
    /// Congestion window restart after idle.
    CwndRestart,
    /// End of congestion recovery.
    CompleteCwr,
    /// Loss timeout.
    Loss,
    /// ECT set, but not CE marked.
    EcnNoCe,
    /// Received CE marked IP packet.
    EcnIsCe,
}

/// `CA_ACK_*` flags for `in_ack_event` (include/net/tcp.h).
pub mod ca_ack {
    /// In slow path processing.
    pub const SLOWPATH: u32 = 1 << 0;
    /// ACK updated window.
    pub const WIN_UPDATE: u32 = 1 << 1;
    /// ECE bit is set on ACK.
    pub const ECE: u32 = 1 << 2;
}

/// `struct ack_sample` (include/net/tcp.h): what `pkts_acked` receives.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct AckSample {
    /// Packets newly acked (cumulatively) by this ACK.
    pub pkts_acked: u32,
    /// The ca RTT sample in µs (most recently sent packet newly (S)ACKed);
    /// negative when there is none.
    pub rtt_us: i64,
    /// `rs.prior_in_flight`.
    pub in_flight: u32,
}

/// `sk->sk_pacing_status` (include/net/sock.h).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum PacingStatus {
    #[default]
    None = 0,
    Needed = 1,
    Fq = 2,
}

/// The fields of `struct tcp_sock` / `struct sock` that congestion control
/// reads or writes. The connection keeps this as the real storage of the
/// cwnd fields and refreshes the read-only snapshot fields before each hook.
#[derive(Clone, Debug)]
pub struct CaCtx {
    /// Congestion window, packets.
    pub snd_cwnd: u32,
    /// Slow-start threshold, packets.
    pub snd_ssthresh: u32,
    /// Linear increase counter (`snd_cwnd_cnt`).
    pub snd_cwnd_cnt: u32,
    /// Upper bound for cwnd (`snd_cwnd_clamp`).
    pub snd_cwnd_clamp: u32,
    /// cwnd at the start of the current reduction (`prior_cwnd`).
    pub prior_cwnd: u32,
    /// `tp->is_cwnd_limited`, latched by `tcp_cwnd_validate`.
    pub is_cwnd_limited: bool,
    /// `tp->max_packets_out` of the current window.
    pub max_packets_out: u32,
    /// `tcp_packets_in_flight()` at the time of the hook.
    pub packets_in_flight: u32,
    /// `tp->packets_out`.
    pub packets_out: u32,
    pub snd_una: SeqNum,
    pub snd_nxt: SeqNum,
    /// `tp->mss_cache`, bytes.
    pub mss_cache: u32,
    /// `icsk_ca_state`.
    pub ca_state: CaState,
    /// Now, for `tcp_mstamp` (µs) and jiffies.
    pub now: Instant,
    /// `tcp_jiffies32` at `now`.
    pub jiffies: u32,
    /// `HZ` of the modelled kernel.
    pub hz: u32,
    /// `tp->lsndtime`: jiffies of the last data transmission.
    pub lsndtime: u32,
    /// `tp->delivered`, packets.
    pub delivered: u32,
    /// `tp->delivered_ce`, packets.
    pub delivered_ce: u32,
    /// `tp->srtt_us` (8× smoothed RTT, µs).
    pub srtt_us: u32,
    /// `sk->sk_pacing_rate`, bytes per second.
    pub pacing_rate: u64,
    pub pacing_status: PacingStatus,
    /// `sk->sk_gso_max_size`, bytes.
    pub gso_max_size: u32,
    /// `icsk_ack.rcv_mss`.
    pub rcv_mss: u32,
    /// ECN was negotiated (`tp->ecn_flags & TCP_ECN_OK`).
    pub ecn_ok: bool,
    /// MIB counters the algorithm may increment (HyStart's).
    pub mib: Counters,
    /// Set around `cong_avoid` when the pre-3.16 cwnd-limited test is in
    /// force ([`crate::config::CwndLimitedRule::InFlight`]).
    pub in_flight_limit: Option<InFlightLimit>,
    /// `tcp_min_rtt(tp)` (µs, `u32::MAX` before any sample): the
    /// connection's windowed min RTT (`tp->rtt_min`), read by BBR's init.
    pub min_rtt_us: u32,
    /// `tp->app_limited` (the rate sampler's, [`crate::rate::TcpRate`]):
    /// read by BBR's `cwnd_event` and **written** by its `cong_control` in
    /// PROBE_RTT; the connection copies it back after `cong_control`.
    pub app_limited: u32,
    /// `tp->lost`: packets ever marked lost (`tcp_mark_skb_lost`, lost
    /// retransmissions included).
    pub lost: u32,
    /// `tp->delivered_mstamp` (µs), as `tcp_rate_gen` left it.
    pub delivered_mstamp: u64,
    /// `tp->tcp_wstamp_ns`: earliest departure time of the next skb (ns),
    /// kept by the connection for a socket that paces itself.
    pub wstamp_ns: u64,
    /// `sk->sk_pacing_shift` (`SK_DEFAULT_PACING_SHIFT` = 10).
    pub pacing_shift: u32,
    /// `sk->sk_max_pacing_rate`, bytes/s (`~0UL`: no `SO_MAX_PACING_RATE`).
    pub max_pacing_rate: u64,
}

/// The inputs of the pre-3.16 `tcp_is_cwnd_limited(sk, in_flight)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InFlightLimit {
    /// `tcp_packets_in_flight()` before the ACK was processed, as
    /// `tcp_ack` passes it (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// `tcp_max_burst()`: `tp->reordering` in those kernels.
    pub max_burst: u32,
    /// `sysctl_tcp_tso_win_divisor`.
    pub tso_win_divisor: u32,
}

impl Default for CaCtx {
    fn default() -> Self {
        CaCtx {
            snd_cwnd: 10,
            snd_ssthresh: TCP_INFINITE_SSTHRESH,
            snd_cwnd_cnt: 0,
            snd_cwnd_clamp: u32::MAX,
            prior_cwnd: 0,
            is_cwnd_limited: true,
            max_packets_out: 0,
            packets_in_flight: 0,
            packets_out: 0,
            snd_una: SeqNum(0),
            snd_nxt: SeqNum(0),
            mss_cache: 1448,
            ca_state: CaState::Open,
            now: Instant::ZERO,
            jiffies: Instant::ZERO.jiffies32(1000),
            hz: 1000,
            lsndtime: 0,
            delivered: 0,
            delivered_ce: 0,
            srtt_us: 0,
            pacing_rate: 0,
            pacing_status: PacingStatus::None,
            gso_max_size: 65536,
            rcv_mss: 536,
            ecn_ok: false,
            mib: Counters::default(),
            in_flight_limit: None,
            min_rtt_us: u32::MAX,
            app_limited: 0,
            lost: 0,
            delivered_mstamp: 0,
            wstamp_ns: 0,
            pacing_shift: 10,
            max_pacing_rate: u64::MAX,
        }
    }
}

impl CaCtx {
    /// `tcp_in_slow_start()` [≥4.3]: `cwnd < ssthresh`.
    #[inline]
    pub fn in_slow_start(&self) -> bool {
        self.snd_cwnd < self.snd_ssthresh
    }

    /// `tcp_is_cwnd_limited()` (include/net/tcp.h, 6.13 order): the
    /// latched flag, or in slow start
    /// while cwnd < 2·max_packets_out, so that an application-limited burst
    /// still doubles the window it used.
    #[inline]
    pub fn is_cwnd_limited(&self) -> bool {
        if self.is_cwnd_limited {
            return true;
        }
        self.in_slow_start() && self.snd_cwnd < 2 * self.max_packets_out
    }

    /// `tcp_mstamp` in µs.
    #[inline]
    pub fn mstamp_us(&self) -> u64 {
        self.now.as_micros()
    }
}

/// The hooks of `struct tcp_congestion_ops`. Required hooks have no default
/// body; optional ones default to doing nothing, like a NULL pointer in the
/// kernel's ops table.
pub trait CongestionOps {
    /// Module name, as `tcp_congestion_control` takes it.
    fn name(&self) -> &'static str;

    /// `init` (optional): called when the connection is established.
    fn init(&mut self, _tp: &mut CaCtx) {}

    /// `ssthresh` (required): the new slow-start threshold after loss.
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32;

    /// `cong_avoid` (required unless `cong_control`): grow cwnd.
    fn cong_avoid(&mut self, tp: &mut CaCtx, ack: SeqNum, acked: u32);

    /// Whether the module has a `cong_control` hook (a non-NULL pointer
    /// in the kernel's ops table). With one, `tcp_cong_control` calls it
    /// instead of PRR, `cong_avoid` and `tcp_update_pacing_rate`, and
    /// `tcp_end_cwnd_reduction` leaves cwnd alone.
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control` (optional): set cwnd and `pacing_rate` from the
    /// ACK's delivery-rate sample, in any ca_state (`tcp_cong_control`,
    /// after `tcp_rate_gen`). `ack` and `flag` are the 6.10+ arguments.
    fn cong_control(&mut self, _tp: &mut CaCtx, _ack: SeqNum, _flag: u32, _rs: &RateSample) {}

    /// `set_state` (optional): before the ca_state changes.
    fn set_state(&mut self, _tp: &mut CaCtx, _new_state: CaState) {}

    /// `cwnd_event` (optional).
    fn cwnd_event(&mut self, _tp: &mut CaCtx, _ev: CaEvent) {}

    /// `in_ack_event` (optional): `flags` are [`ca_ack`] bits.
    fn in_ack_event(&mut self, _tp: &mut CaCtx, _flags: u32) {}

    /// `pkts_acked` (optional): timing and count of newly acked packets.
    fn pkts_acked(&mut self, _tp: &mut CaCtx, _sample: &AckSample) {}

    /// `undo_cwnd` (required): cwnd to restore after a spurious reduction.
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32;

    /// `min_tso_segs` (optional): overrides `sysctl_tcp_min_tso_segs` in
    /// `tcp_tso_segs`; `None` = no hook.
    fn min_tso_segs(&self, _tp: &CaCtx) -> Option<u32> {
        None
    }

    /// `sndbuf_expand` (optional): send-buffer multiple of the window in
    /// `tcp_sndbuf_expand` (2 without the hook).
    fn sndbuf_expand(&self) -> Option<u32> {
        None
    }

    /// `TCP_CONG_NEEDS_ECN`.
    fn needs_ecn(&self) -> bool {
        false
    }

    /// `get_info` (optional): what `TCP_CC_INFO` and `ss -i` report of the
    /// module's state; `None` = no hook.
    fn get_info(&self) -> Option<CcInfo> {
        None
    }
}

/// The module state `get_info` reports (`union tcp_cc_info`,
/// include/uapi/linux/inet_diag.h), in the fields tcplab compares.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CcInfo {
    /// `struct tcp_dctcp_info` of a socket running DCTCP (not its Reno
    /// fallback, which reports `dctcp_enabled = 0`).
    Dctcp {
        /// `dctcp_ce_state`: the last data segment received was CE.
        ce_state: u16,
        /// `dctcp_alpha`, 0..=1024.
        alpha: u32,
    },
}

// ---------------------------------------------------------------------------
// Shared helpers of net/ipv4/tcp_cong.c, with their kernel eras.
// ---------------------------------------------------------------------------

pub mod bbr;
pub mod cubic;
pub mod dctcp;
pub mod hystart;
pub mod hystart_plus;
pub mod reno;

/// Which kernel's form of the shared `tcp_cong.c` helpers (and of CUBIC,
/// see [`cubic::CubicVersion`]) to model. The helpers changed twice in ways
/// that move cwnd by whole packets:
///
/// * [`CcEra::V3_18`] (3.13–3.18, modelled on 3.18.30): slow start while
///   `cwnd <= ssthresh`, growing to at most `ssthresh + 1` and returning
///   nothing; `tcp_cong_avoid_ai(tp, w)` adds at most one packet per call
///   (per ACK), whatever the ACK covered.
/// * [`CcEra::V3_19`] (the 3.19.8 tree, whose tcp_cong.c has the stretch-ACK
///   changes believed to be mainline v4.0): slow start still `cwnd <=
///   ssthresh` capped at `ssthresh + 1`, but it returns the acked packets it
///   did not use, and `tcp_cong_avoid_ai(tp, w, acked)` credits all of them.
/// * [`CcEra::V4_17`] (4.3 – ~5.18, modelled on 4.17.0): slow start only
///   while `cwnd < ssthresh`, capped at ssthresh ("tcp: do not slow start
///   when cwnd equals ssthresh").
/// * [`CcEra::Current`] (modelled on 6.13.7): as `V4_17`, but
///   `tcp_is_cwnd_limited` honours the latched `is_cwnd_limited` first, also
///   in slow start (Neal Cardwell's 2022 cwnd-limited fix).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CcEra {
    /// Linux 3.18.30 (also 3.13–3.18).
    V3_18,
    /// The 3.19.8 tree (stretch-ACK-aware helpers, = v4.0 – v4.2).
    V3_19,
    /// Linux 4.3 – ~5.18, as 4.17.0.
    V4_17,
    /// Current Linux, checked against 6.13.7.
    #[default]
    Current,
}

crate::names::named_enum!(CcEra { V3_18 => "v3.18", V3_19 => "v3.19", V4_17 => "v4.17", Current => "current" });

/// `tcp_in_slow_start()` of the era: `cwnd < ssthresh` (≥ 4.3) or
/// `cwnd <= ssthresh` (before).
#[inline]
pub fn tcp_in_slow_start(tp: &CaCtx, era: CcEra) -> bool {
    match era {
        CcEra::V4_17 | CcEra::Current => tp.snd_cwnd < tp.snd_ssthresh,
        CcEra::V3_18 | CcEra::V3_19 => tp.snd_cwnd <= tp.snd_ssthresh,
    }
}

/// `tcp_is_cwnd_limited()` (include/net/tcp.h, ≥ 3.16) with the era's
/// slow-start test. In slow start cwnd may grow while it is below twice the
/// packets actually sent (`max_packets_out`); otherwise the latched
/// `tp->is_cwnd_limited` decides. Current Linux checks the latch first, so
/// a cwnd-limited flow also grows in slow start beyond that bound; before
/// (≤ `V4_17`) slow start used only the `2·max_packets_out` test.
///
/// Note: [`CaCtx::is_cwnd_limited`] implements the pre-2022 order.
#[inline]
//= linux:v6.13:include/net/tcp.h#tcp_is_cwnd_limited
//= linux:v4.17:include/net/tcp.h#tcp_is_cwnd_limited
pub fn tcp_is_cwnd_limited(tp: &CaCtx, era: CcEra) -> bool {
    if let Some(v) = tp.in_flight_limit {
        return tcp_is_cwnd_limited_in_flight(tp, v);
    }
    let below_twice_sent = (tp.snd_cwnd as u64) < 2 * tp.max_packets_out as u64;
    match era {
        CcEra::Current => tp.is_cwnd_limited || (tcp_in_slow_start(tp, era) && below_twice_sent),
        CcEra::V3_18 | CcEra::V3_19 | CcEra::V4_17 => {
            if tcp_in_slow_start(tp, era) {
                return below_twice_sent;
            }
            tp.is_cwnd_limited
        }
    }
}

/// `tcp_is_cwnd_limited(sk, in_flight)` before 3.16: cwnd is full, or what
/// is left is too little for a TSO frame worth sending, or at most a
/// `tcp_max_burst`. The modelled sender always has GSO (`sk_can_gso`),
/// with `sk_gso_max_segs` = 65535.
//= linux:v3.11:net/ipv4/tcp_cong.c#tcp_is_cwnd_limited
pub fn tcp_is_cwnd_limited_in_flight(tp: &CaCtx, v: InFlightLimit) -> bool {
    if v.prior_in_flight >= tp.snd_cwnd {
        return true;
    }
    let left = tp.snd_cwnd - v.prior_in_flight;
    if u64::from(left) * u64::from(v.tso_win_divisor) < u64::from(tp.snd_cwnd)
        && u64::from(left) * u64::from(tp.mss_cache) < u64::from(tp.gso_max_size)
        && left < 65535
    {
        return true;
    }
    left <= v.max_burst
}

/// `tcp_slow_start()` (tcp_cong.c, ≥ 4.3): grow cwnd by `acked`, but not
/// past ssthresh, and return the acked packets left over for congestion
/// avoidance. The caller keeps the contract `cwnd < ssthresh`.
///
/// Linux increases by every packet acked rather than by one per ACK (RFC
/// 3465 ABC with L = infinity) because stretch ACKs from GRO/LRO receivers
/// would otherwise slow the ramp-up; capping at ssthresh hands the rest of
/// a stretch ACK to `tcp_cong_avoid_ai`.
///
/// Unsigned arithmetic wraps exactly as the kernel's u32 does.
//= linux:v6.13:net/ipv4/tcp_cong.c#tcp_slow_start
pub fn tcp_slow_start(tp: &mut CaCtx, acked: u32) -> u32 {
    let cwnd = tp.snd_cwnd.wrapping_add(acked).min(tp.snd_ssthresh);
    let left = acked.wrapping_sub(cwnd.wrapping_sub(tp.snd_cwnd));
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// `tcp_slow_start()` of the 3.19.8 tree (3.13–4.2 cap): may be called at
/// `cwnd == ssthresh` and then goes one packet past it (`ssthresh + 1`).
/// Returns the acked packets not used.
#[doc(alias = "tcp_slow_start")]
//= linux:v3.19.8:net/ipv4/tcp_cong.c#tcp_slow_start
pub fn tcp_slow_start_v3_19(tp: &mut CaCtx, acked: u32) -> u32 {
    let mut cwnd = tp.snd_cwnd.wrapping_add(acked);
    if cwnd > tp.snd_ssthresh {
        cwnd = tp.snd_ssthresh.wrapping_add(1);
    }
    let left = acked.wrapping_sub(cwnd.wrapping_sub(tp.snd_cwnd));
    tp.snd_cwnd = cwnd.min(tp.snd_cwnd_clamp);
    left
}

/// `tcp_slow_start()` of 3.18: as [`tcp_slow_start_v3_19`] but returns
/// nothing; 3.18's callers do no congestion avoidance on the same ACK.
#[doc(alias = "tcp_slow_start")]
//= linux:v3.18.30:net/ipv4/tcp_cong.c#tcp_slow_start
pub fn tcp_slow_start_v3_18(tp: &mut CaCtx, acked: u32) {
    let _ = tcp_slow_start_v3_19(tp, acked);
}

/// Era dispatch of slow start; returns the acked packets left for
/// congestion avoidance on this ACK (always 0 in 3.18, whose
/// `cong_avoid` hooks do either slow start or AI, never both).
pub fn tcp_slow_start_era(tp: &mut CaCtx, acked: u32, era: CcEra) -> u32 {
    match era {
        CcEra::V4_17 | CcEra::Current => tcp_slow_start(tp, acked),
        CcEra::V3_19 => tcp_slow_start_v3_19(tp, acked),
        CcEra::V3_18 => {
            tcp_slow_start_v3_18(tp, acked);
            0
        }
    }
}

/// `tcp_cong_avoid_ai()` (tcp_cong.c, ≥ 3.19.8 tree / v4.0): additive
/// increase, cwnd += acked / w. Credits left over from a larger `w` are
/// first turned into one packet ("apply them gently"), then `acked` is
/// credited and every full `w` becomes one packet. Finally clamped.
///
/// `w == 0` would divide by zero in the kernel; here it is treated as
/// `w == 1` (no caller passes 0: CUBIC's `cnt >= 2`, Reno's `w = cwnd`).
//= linux:v6.13:net/ipv4/tcp_cong.c#tcp_cong_avoid_ai
//= linux:v3.19.8:net/ipv4/tcp_cong.c#tcp_cong_avoid_ai
pub fn tcp_cong_avoid_ai(tp: &mut CaCtx, w: u32, acked: u32) {
    let w = w.max(1);
    if tp.snd_cwnd_cnt >= w {
        tp.snd_cwnd_cnt = 0;
        tp.snd_cwnd = tp.snd_cwnd.wrapping_add(1);
    }
    tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(acked);
    if tp.snd_cwnd_cnt >= w {
        let delta = tp.snd_cwnd_cnt / w;
        tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_sub(delta.wrapping_mul(w));
        tp.snd_cwnd = tp.snd_cwnd.wrapping_add(delta);
    }
    tp.snd_cwnd = tp.snd_cwnd.min(tp.snd_cwnd_clamp);
}

/// `tcp_cong_avoid_ai(tp, w)` of 3.18: one call is one ACK, whatever it
/// covered. When `snd_cwnd_cnt` has reached `w`, cwnd grows by one (below
/// the clamp) and the counter restarts; otherwise the counter counts this
/// ACK. So cwnd grows by one per `w + 1` ACKs.
#[doc(alias = "tcp_cong_avoid_ai")]
//= linux:v3.18.30:net/ipv4/tcp_cong.c#tcp_cong_avoid_ai
pub fn tcp_cong_avoid_ai_v3_18(tp: &mut CaCtx, w: u32) {
    if tp.snd_cwnd_cnt >= w {
        if tp.snd_cwnd < tp.snd_cwnd_clamp {
            tp.snd_cwnd += 1;
        }
        tp.snd_cwnd_cnt = 0;
    } else {
        tp.snd_cwnd_cnt = tp.snd_cwnd_cnt.wrapping_add(1);
    }
}

/// Era dispatch of additive increase (3.18 ignores `acked`).
pub fn tcp_cong_avoid_ai_era(tp: &mut CaCtx, w: u32, acked: u32, era: CcEra) {
    match era {
        CcEra::V3_18 => tcp_cong_avoid_ai_v3_18(tp, w),
        CcEra::V3_19 | CcEra::V4_17 | CcEra::Current => tcp_cong_avoid_ai(tp, w, acked),
    }
}

/// `tcp_reno_ssthresh()`: halve cwnd, but not below 2.
#[inline]
//= linux:v6.13:net/ipv4/tcp_cong.c#tcp_reno_ssthresh
pub fn tcp_reno_ssthresh(tp: &CaCtx) -> u32 {
    (tp.snd_cwnd >> 1).max(2)
}

/// `tcp_reno_undo_cwnd()` (≥ 4.13): restore the cwnd the reduction started
/// from, `max(cwnd, prior_cwnd)`. CUBIC uses it too since 4.13.
#[inline]
//= linux:v6.13:net/ipv4/tcp_cong.c#tcp_reno_undo_cwnd
pub fn tcp_reno_undo_cwnd(tp: &CaCtx) -> u32 {
    tp.snd_cwnd.max(tp.prior_cwnd)
}

/// `tcp_reno_cong_avoid()` (≥ 4.3): only when cwnd-limited; slow start,
/// then additive increase with `w = cwnd` on whatever slow start left.
//= linux:v6.13:net/ipv4/tcp_cong.c#tcp_reno_cong_avoid
pub fn tcp_reno_cong_avoid(tp: &mut CaCtx, _ack: SeqNum, acked: u32) {
    tcp_reno_cong_avoid_era(tp, acked, CcEra::Current);
}

/// `tcp_reno_cong_avoid()` in the given era's form (3.18: slow start or one
/// AI step per ACK; 3.19.8 tree: stretch-ACK aware, `cwnd <= ssthresh`).
pub fn tcp_reno_cong_avoid_era(tp: &mut CaCtx, acked: u32, era: CcEra) {
    if !tcp_is_cwnd_limited(tp, era) {
        return;
    }
    let mut acked = acked;
    if tcp_in_slow_start(tp, era) {
        if era == CcEra::V3_18 {
            tcp_slow_start_v3_18(tp, acked);
            return;
        }
        acked = tcp_slow_start_era(tp, acked, era);
        if acked == 0 {
            return;
        }
    }
    let w = tp.snd_cwnd;
    tcp_cong_avoid_ai_era(tp, w, acked, era);
}

// ---------------------------------------------------------------------------
// Enum dispatch and name lookup (tcp_ca_find).
// ---------------------------------------------------------------------------

/// A congestion-control module and its parameters, as
/// `net.ipv4.tcp_congestion_control` plus the module's parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum CcConfig {
    /// `reno` (tcp_cong.c) in the era [`reno::RenoParams::era`] selects,
    /// with tcplab's optional HyStart++ (Linux's Reno has no early
    /// slow-start exit).
    Reno(reno::RenoParams),
    /// `cubic` (tcp_cubic.c) with its module parameters and era.
    Cubic(cubic::CubicParams),
    /// `dctcp` (tcp_dctcp.c) with its module parameters and era.
    Dctcp(dctcp::DctcpParams),
    /// `bbr` (tcp_bbr.c, BBR v1 as Linux 6.12 runs it). tcp_bbr has no
    /// module parameters: its tunables are `static const`.
    Bbr(bbr::BbrParams),
}

impl CcConfig {
    /// Every algorithm the model has (its `tcp_available_congestion_control`),
    /// the one list scenarios, packetdrill, the fuzz targets and the kernel
    /// backend read. [`from_name`](Self::from_name) takes exactly these.
    pub const NAMES: &'static [&'static str] = &["reno", "cubic", "dctcp", "bbr"];

    /// `tcp_ca_find()`: the module by name with default parameters.
    pub fn from_name(name: &str) -> Option<CcConfig> {
        match name {
            "reno" => Some(CcConfig::Reno(reno::RenoParams::default())),
            "cubic" => Some(CcConfig::Cubic(cubic::CubicParams::default())),
            "dctcp" => Some(CcConfig::Dctcp(dctcp::DctcpParams::default())),
            "bbr" => Some(CcConfig::Bbr(bbr::BbrParams::default())),
            _ => None,
        }
    }

    /// The module name (`tcp_congestion_ops.name`).
    pub fn name(&self) -> &'static str {
        match self {
            CcConfig::Reno(_) => "reno",
            CcConfig::Cubic(_) => "cubic",
            CcConfig::Dctcp(_) => "dctcp",
            CcConfig::Bbr(_) => "bbr",
        }
    }
}

impl Default for CcConfig {
    /// CUBIC with current defaults, as Linux's default.
    fn default() -> Self {
        CcConfig::Cubic(cubic::CubicParams::default())
    }
}

/// Every built-in algorithm behind one type, dispatched by `match` (like
/// smoltcp's `AnyController`), so a connection needs no boxing.
#[derive(Clone, Debug)]
pub enum AnyCc {
    Reno(reno::Reno),
    Cubic(cubic::Cubic),
    Dctcp(dctcp::Dctcp),
    Bbr(bbr::Bbr),
}

impl AnyCc {
    /// Builds the algorithm for `cfg`; derived constants (CUBIC's
    /// `beta_scale`, `cube_factor`) are computed here, once, as module load
    /// does. Call [`CongestionOps::init`] when the connection is
    /// established.
    pub fn new(cfg: &CcConfig) -> AnyCc {
        AnyCc::with_seed(cfg, 0)
    }

    /// As [`new`](Self::new), with `seed` for the module's randomness
    /// (BBR's PROBE_BW start phase, `get_random_u32_below` in the kernel):
    /// the connection passes one derived from its ISN, so that a run is
    /// reproducible.
    pub fn with_seed(cfg: &CcConfig, seed: u64) -> AnyCc {
        match cfg {
            CcConfig::Reno(p) => AnyCc::Reno(reno::Reno::with_params(*p)),
            CcConfig::Cubic(p) => AnyCc::Cubic(cubic::Cubic::new(p.clone())),
            CcConfig::Dctcp(p) => AnyCc::Dctcp(dctcp::Dctcp::new(p.clone())),
            CcConfig::Bbr(_) => AnyCc::Bbr(bbr::Bbr::new(bbr::CycleRand::Seeded(seed))),
        }
    }
}

macro_rules! any_cc_dispatch {
    ($self:ident, $cc:ident => $e:expr) => {
        match $self {
            AnyCc::Reno($cc) => $e,
            AnyCc::Cubic($cc) => $e,
            AnyCc::Dctcp($cc) => $e,
            AnyCc::Bbr($cc) => $e,
        }
    };
}

impl CongestionOps for AnyCc {
    // Fully qualified: `Bbr` also has inherent hooks of the same names
    // with its extra inputs.
    fn name(&self) -> &'static str {
        any_cc_dispatch!(self, cc => CongestionOps::name(cc))
    }
    fn init(&mut self, tp: &mut CaCtx) {
        any_cc_dispatch!(self, cc => CongestionOps::init(cc, tp))
    }
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        any_cc_dispatch!(self, cc => CongestionOps::ssthresh(cc, tp))
    }
    fn cong_avoid(&mut self, tp: &mut CaCtx, ack: SeqNum, acked: u32) {
        any_cc_dispatch!(self, cc => CongestionOps::cong_avoid(cc, tp, ack, acked))
    }
    fn has_cong_control(&self) -> bool {
        any_cc_dispatch!(self, cc => CongestionOps::has_cong_control(cc))
    }
    fn cong_control(&mut self, tp: &mut CaCtx, ack: SeqNum, flag: u32, rs: &RateSample) {
        any_cc_dispatch!(self, cc => CongestionOps::cong_control(cc, tp, ack, flag, rs))
    }
    fn set_state(&mut self, tp: &mut CaCtx, new_state: CaState) {
        any_cc_dispatch!(self, cc => CongestionOps::set_state(cc, tp, new_state))
    }
    fn cwnd_event(&mut self, tp: &mut CaCtx, ev: CaEvent) {
        any_cc_dispatch!(self, cc => CongestionOps::cwnd_event(cc, tp, ev))
    }
    fn in_ack_event(&mut self, tp: &mut CaCtx, flags: u32) {
        any_cc_dispatch!(self, cc => CongestionOps::in_ack_event(cc, tp, flags))
    }
    fn pkts_acked(&mut self, tp: &mut CaCtx, sample: &AckSample) {
        any_cc_dispatch!(self, cc => CongestionOps::pkts_acked(cc, tp, sample))
    }
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        any_cc_dispatch!(self, cc => CongestionOps::undo_cwnd(cc, tp))
    }
    fn min_tso_segs(&self, tp: &CaCtx) -> Option<u32> {
        any_cc_dispatch!(self, cc => CongestionOps::min_tso_segs(cc, tp))
    }
    fn sndbuf_expand(&self) -> Option<u32> {
        any_cc_dispatch!(self, cc => CongestionOps::sndbuf_expand(cc))
    }
    fn needs_ecn(&self) -> bool {
        any_cc_dispatch!(self, cc => CongestionOps::needs_ecn(cc))
    }
    fn get_info(&self) -> Option<CcInfo> {
        any_cc_dispatch!(self, cc => CongestionOps::get_info(cc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(cwnd: u32, prior_in_flight: u32, max_burst: u32) -> bool {
        let tp = CaCtx { snd_cwnd: cwnd, ..CaCtx::default() };
        tcp_is_cwnd_limited_in_flight(&tp, InFlightLimit { prior_in_flight, max_burst, tso_win_divisor: 3 })
    }

    /// Hand-computed against the 3.11 function (mss 1448, gso_max_size
    /// 65536, tcp_tso_win_divisor 3).
    #[test]
    fn test_pre_3_16_cwnd_limited() {
        assert!(limited(100, 100, 3)); // cwnd full
        assert!(limited(100, 120, 3)); // over-full (undo, reordering)
        assert!(limited(100, 90, 3)); // 10 left: 30 < 100 and 14480 < 65536, no TSO frame worth it
        assert!(!limited(100, 50, 3)); // 50 left: 150 >= 100, more than a burst
        assert!(limited(100, 50, 60)); // ... unless the burst (reordering) is larger
        assert!(!limited(10, 5, 3)); // 5 left: 15 >= 10, > 3
        assert!(!limited(200, 150, 3)); // 50 left: 150 < 200 but 72400 >= 65536 bytes

        // The latched rule is bypassed while the in-flight test is set.
        let tp = CaCtx {
            snd_cwnd: 100,
            is_cwnd_limited: false,
            snd_ssthresh: 50,
            in_flight_limit: Some(InFlightLimit { prior_in_flight: 100, max_burst: 3, tso_win_divisor: 3 }),
            ..CaCtx::default()
        };
        assert!(tcp_is_cwnd_limited(&tp, CcEra::V3_18));
        assert!(!tcp_is_cwnd_limited(&CaCtx { in_flight_limit: None, ..tp.clone() }, CcEra::V3_18));
    }
}
