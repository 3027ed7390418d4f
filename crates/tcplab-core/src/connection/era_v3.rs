//! The v3.x forms of loss detection and reordering (Linux 3.12–3.19
//! tcp_input.c), selected by [`AckEra::V3_12`](crate::config::AckEra):
//! FACK (`fackets_out`), `tcp_update_reordering` with its packet metric,
//! the 3.x `tcp_time_to_recover` and `tcp_update_scoreboard`, and Hoe's
//! partial undo. Everything else is shared with the current code.

use super::rtx_queue::{LOST, SACKED_ACKED};
use super::Connection;
use crate::counters::Mib;

/// The fields of `struct tcp_sock` and of the ACK being processed that only
/// the older eras read, kept apart so that the current code paths show
/// none of them.
#[derive(Clone, Copy, Debug)]
pub(super) struct EraV3 {
    /// FACK is still on for this socket (`tcp_is_fack`, ≤ 4.14): set from
    /// `tcp_fack` with SACK, off once reordering is seen
    /// (`tcp_disable_fack`) or a cached reordering is used.
    pub fack: bool,
    /// `tcp_fastretrans_alert`'s `pkts_acked` (3.x): packets the ACK being
    /// processed acknowledged cumulatively.
    pub pkts_acked: u32,
    /// `prior_unsacked` of the 3.x `tcp_ack`: `packets_out − sacked_out`
    /// before the ACK, for `newly_acked_sacked`.
    pub prior_unsacked: u32,
    /// `prior_in_flight` of the pre-3.16 `tcp_ack`: `tcp_packets_in_flight()`
    /// when the ACK arrived, for the in-flight form of
    /// `tcp_is_cwnd_limited` ([`CwndLimitedRule::InFlight`]).
    ///
    /// [`CwndLimitedRule::InFlight`]: crate::config::CwndLimitedRule::InFlight
    pub prior_in_flight: u32,
}

impl EraV3 {
    pub(super) fn new(tcp_fack: bool) -> EraV3 {
        EraV3 { fack: tcp_fack, pkts_acked: 0, prior_unsacked: 0, prior_in_flight: 0 }
    }
}

impl Connection {
    /// `tp->fackets_out`: packets from snd_una up to and including the
    /// highest SACKed one (`tcp_fackets_out` is sacked_out + 1 for Reno).
    pub(super) fn fackets_out(&self) -> u32 {
        if !self.negotiated.sack_ok {
            return self.scoreboard.sacked_out + 1;
        }
        if self.scoreboard.sacked_out == 0 {
            return 0;
        }
        self.rtx.index_after(self.scoreboard.highest_sack_end - 1) as u32 + 1
    }

    /// `tcp_update_reordering` (≤ 4.14): raise `reordering` to `metric`
    /// packets (capped by tcp_max_reordering), counting the detection under
    /// the first of TS, Reno, FACK, SACK that applies, and switch FACK off.
    pub(super) fn update_reordering_v3(&mut self, metric: u32, ts: bool) {
        if metric > self.reordering {
            self.reordering = metric.min(self.cfg.tcp_max_reordering);
            let mib = if ts {
                Mib::TcpExtTCPTSReorder
            } else if !self.negotiated.sack_ok {
                Mib::TcpExtTCPRenoReorder
            } else if self.v3.fack {
                Mib::TcpExtTCPFACKReorder
            } else {
                Mib::TcpExtTCPSACKReorder
            };
            self.tp.mib.inc(mib);
            self.reord_seen += 1;
            // tcp_disable_fack
            self.v3.fack = false;
        }
    }

    /// `tcp_time_to_recover` (3.12–3.19): something is lost, or the
    /// duplicate-ACK heuristic (fackets_out with FACK, else sacked_out + 1)
    /// exceeds reordering, or nothing more can be sent and half the window
    /// is SACKed. (Early retransmit and the thin-stream rule are not
    /// modelled.)
    pub(super) fn time_to_recover_v3(&self) -> bool {
        if self.scoreboard.lost_out > 0 {
            return true;
        }
        let heuristic = if self.v3.fack { self.fackets_out() } else { self.scoreboard.sacked_out + 1 };
        if heuristic > self.reordering {
            return true;
        }
        let packets_out = self.scoreboard.packets_out;
        packets_out <= self.reordering
            && self.scoreboard.sacked_out >= (packets_out / 2).max(self.cfg.tcp_reordering)
            && self.unsent_bytes() == 0
    }

    /// `tcp_update_scoreboard` (3.x): with FACK the first
    /// `fackets_out − reordering` packets (at least one) are lost, SACKed or
    /// not; without FACK the RFC 6675 count of the current code.
    pub(super) fn update_scoreboard_v3(&mut self, fast_rexmit: bool) {
        if !self.negotiated.sack_ok {
            if self.rtx.head().is_some_and(|h| !h.is(LOST)) {
                self.scoreboard.mark_skb_lost(&mut self.rtx, 0, &mut self.tp.mib);
            }
            return;
        }
        if !self.v3.fack {
            self.update_scoreboard(fast_rexmit);
            return;
        }
        let lost = (self.fackets_out() as i64 - self.reordering as i64).max(1) as usize;
        // tcp_mark_head_lost with FACK: every segment counts.
        let loss_high = self.snd_nxt;
        for idx in 0..lost.min(self.rtx.len()) {
            let Some(skb) = self.rtx.get(idx) else { break };
            if skb.end_seq.after(loss_high) {
                break;
            }
            if !skb.is(LOST | SACKED_ACKED) {
                self.scoreboard.mark_skb_lost(&mut self.rtx, idx, &mut self.tp.mib);
            }
        }
    }

    /// `tcp_try_undo_partial` (3.x, Hoe's): on a partial ACK, undo if the
    /// retransmissions were unnecessary (timestamps); else report whether
    /// more must be marked lost (`failed`).
    pub(super) fn try_undo_partial_v3(&mut self, acked: u32) -> bool {
        let fackets = if self.negotiated.sack_ok { self.fackets_out() } else { self.scoreboard.sacked_out + 1 };
        let mut failed = !self.negotiated.sack_ok || fackets > self.reordering;
        if self.may_undo() {
            if !self.any_retrans_done() {
                self.undo.retrans_stamp = 0;
            }
            self.update_reordering_v3(fackets + acked, true);
            self.undo_cwnd_reduction(false);
            self.tp.mib.inc(Mib::TcpExtTCPPartialUndo);
            failed = false;
        }
        failed
    }
}
