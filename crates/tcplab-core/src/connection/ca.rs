//! The connection's side of `struct tcp_congestion_ops`: how the core
//! reaches the congestion control.
//!
//! Linux hands every hook the socket itself (`icsk->icsk_ca_ops->cong_avoid(sk,
//! ack, acked)`), so a hook can never see old values. The model hands the
//! algorithm [`CaCtx`], a narrow slice of `struct tcp_sock` (cc/mod.rs); the
//! fields it copies from the connection (`snd_una`, `snd_nxt`,
//! `packets_out`, `tcp_packets_in_flight()`, `srtt_us`, `rcv_mss`) are
//! refreshed by [`Connection::ca_ops`], and the algorithm is reachable only
//! through the [`CaOps`] that it returns. So a hook cannot be called with a
//! stale view: forgetting the refresh does not compile.

use super::Connection;
use crate::cc::{
    AckSample, AnyCc, CaCtx, CaEvent, CaState, CcConfig, CcInfo, CongestionOps, InFlightLimit, PacingStatus,
};
use crate::rate::{RateSample, TcpRate};
use tcplab_wire::SeqNum;

/// The connection's congestion-control module (`icsk->icsk_ca_ops` with its
/// private area `icsk_ca_priv`). The algorithm is private to this file:
/// callers go through [`Connection::ca_ops`].
#[derive(Clone, Debug)]
pub(super) struct CongestionControl {
    ops: AnyCc,
}

impl CongestionControl {
    /// `tcp_assign_congestion_control`: the module for `cfg`, its
    /// randomness seeded with `seed`.
    pub(super) fn new(cfg: &CcConfig, seed: u64) -> CongestionControl {
        CongestionControl { ops: AnyCc::with_seed(cfg, seed) }
    }

    /// `icsk_ca_ops->cong_control != NULL` (a flag of the module).
    pub(super) fn has_cong_control(&self) -> bool {
        self.ops.has_cong_control()
    }

    /// `ca_ops->min_tso_segs(sk)` for `tcp_tso_segs`; it reads only
    /// `sk_pacing_rate`, passed here, so it needs no synced view.
    pub(super) fn min_tso_segs(&self, pacing_rate: u64) -> Option<u32> {
        let tp = CaCtx { pacing_rate, ..CaCtx::default() };
        self.ops.min_tso_segs(&tp)
    }

    /// `ca_ops->sndbuf_expand(sk)` for `tcp_sndbuf_expand` (a constant of
    /// the module).
    pub(super) fn sndbuf_expand(&self) -> Option<u32> {
        self.ops.sndbuf_expand()
    }

    /// `tcp_ca_needs_ecn`: `TCP_CONG_NEEDS_ECN` is a flag of the module,
    /// not a hook, so it needs no view of the socket.
    pub(super) fn needs_ecn(&self) -> bool {
        self.ops.needs_ecn()
    }

    /// `icsk_ca_ops->get_info`, for `TCP_CC_INFO`.
    pub(super) fn get_info(&self) -> Option<CcInfo> {
        self.ops.get_info()
    }
}

/// The congestion control with a freshly synced [`CaCtx`]: one hook call.
/// Each method consumes the view, so the next hook needs a new
/// [`Connection::ca_ops`] and so a new sync.
pub(super) struct CaOps<'a> {
    ops: &'a mut AnyCc,
    tp: &'a mut CaCtx,
    /// Where `tp->app_limited` lives; `cong_control` may write it.
    rate: &'a mut TcpRate,
}

impl CaOps<'_> {
    /// `init`, when the connection is established (`tcp_init_congestion_control`).
    pub(super) fn init(self) {
        self.ops.init(self.tp);
    }

    /// `ssthresh`: the new slow-start threshold; the caller stores it.
    pub(super) fn ssthresh(self) -> u32 {
        self.ops.ssthresh(self.tp)
    }

    /// `cong_avoid` (tcp_input.c `tcp_cong_avoid`). `in_flight_limit` puts the
    /// pre-3.16 `tcp_is_cwnd_limited(sk, in_flight)` inputs in force for
    /// this call only.
    pub(super) fn cong_avoid(self, ack: SeqNum, acked: u32, in_flight_limit: Option<InFlightLimit>) {
        self.tp.in_flight_limit = in_flight_limit;
        self.ops.cong_avoid(self.tp, ack, acked);
        self.tp.in_flight_limit = None;
    }

    /// `cong_control` (`tcp_cong_control`, after `tcp_rate_gen`): cwnd and
    /// pacing rate from the ACK's rate sample. BBR's PROBE_RTT writes
    /// `tp->app_limited`, which goes back to the rate estimator.
    pub(super) fn cong_control(self, ack: SeqNum, flag: u32, rs: &RateSample) {
        self.ops.cong_control(self.tp, ack, flag, rs);
        self.rate.app_limited = self.tp.app_limited;
    }

    /// `set_state`, before `icsk_ca_state` changes (`tcp_set_ca_state`).
    pub(super) fn set_state(self, new_state: CaState) {
        self.ops.set_state(self.tp, new_state);
    }

    /// `cwnd_event` (`tcp_ca_event`).
    pub(super) fn cwnd_event(self, ev: CaEvent) {
        self.ops.cwnd_event(self.tp, ev);
    }

    /// `in_ack_event` (`tcp_in_ack_event`); `flags` are `CA_ACK_*` bits.
    pub(super) fn in_ack_event(self, flags: u32) {
        self.ops.in_ack_event(self.tp, flags);
    }

    /// `pkts_acked`, from `tcp_clean_rtx_queue`.
    pub(super) fn pkts_acked(self, sample: &AckSample) {
        self.ops.pkts_acked(self.tp, sample);
    }

    /// `undo_cwnd`: the cwnd to restore (`tcp_undo_cwnd_reduction`); the
    /// caller stores it.
    pub(super) fn undo_cwnd(self) -> u32 {
        self.ops.undo_cwnd(self.tp)
    }
}

impl Connection {
    /// The only way to the congestion control: refreshes the fields of
    /// [`CaCtx`] that copy connection state, then hands out the algorithm
    /// together with that view for one hook call.
    pub(super) fn ca_ops(&mut self) -> CaOps<'_> {
        let t = &mut self.tp;
        t.packets_in_flight = self.scoreboard.in_flight();
        t.packets_out = self.scoreboard.packets_out;
        t.snd_una = self.snd_una;
        t.snd_nxt = self.snd_nxt;
        t.srtt_us = self.rtt.srtt_us();
        t.rcv_mss = self.rcv.rcv_mss();
        t.min_rtt_us = self.min_rtt.get();
        t.app_limited = self.rate.app_limited;
        t.lost = self.scoreboard.lost;
        t.delivered_mstamp = self.rate.delivered_mstamp;
        // Without pacing the stamp is the last transmission, never ahead
        // of now: `bbr_packets_in_net_at_edt` then sees no backlog.
        t.wstamp_ns = if t.pacing_status == PacingStatus::None { 0 } else { self.tcp_wstamp_ns };
        CaOps { ops: &mut self.cc.ops, tp: &mut self.tp, rate: &mut self.rate }
    }

    /// `tcp_set_ca_state`: tell the congestion control, then switch.
    pub(super) fn set_ca_state(&mut self, s: CaState) {
        self.ca_ops().set_state(s);
        self.tp.ca_state = s;
    }
}
