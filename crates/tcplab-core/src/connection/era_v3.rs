//! The v3.x forms of loss detection and reordering (Linux 3.12–3.19
//! tcp_input.c), selected by [`AckEra::V3_12`](crate::config::AckEra):
//! FACK (`fackets_out`), `tcp_update_reordering` with its packet metric,
//! the 3.x `tcp_time_to_recover` and `tcp_update_scoreboard` with RFC 5827
//! early retransmit and its delay timer, and Hoe's partial undo.
//! Everything else is shared with the current code.
//!
//! 3.10 had already removed the head-timeout trick of `tcp_time_to_recover`
//! (`tcp_head_timedout`, `tcp_timeout_skbs`), so no era here has it.

use super::rtx_queue::{LOST, SACKED_ACKED};
use super::timer::Timer;
use super::{Connection, Rexmit};
use crate::counters::Mib;
use crate::flag::FLAG_ECE;
use crate::rtt::{jiffies_to_duration, msecs_to_jiffies, usecs_to_jiffies};
use crate::time::Instant;

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
    /// `tp->do_early_retrans` (3.6–4.10): RFC 5827 early retransmit is on
    /// for this socket. `tcp_enable_early_retrans` sets it at socket
    /// creation when `tcp_early_retrans` is 1–3 and `tcp_reordering` is 3;
    /// `tcp_disable_early_retrans` clears it once reordering is seen.
    pub do_early_retrans: bool,
}

impl EraV3 {
    pub(super) fn new(tcp_fack: bool, tcp_early_retrans: u8, tcp_reordering: u32) -> EraV3 {
        EraV3 {
            fack: tcp_fack,
            pkts_acked: 0,
            prior_unsacked: 0,
            prior_in_flight: 0,
            do_early_retrans: (1..=3).contains(&tcp_early_retrans) && tcp_reordering == 3,
        }
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
    /// the first of TS, Reno, FACK, SACK that applies, and switch FACK off;
    /// any reordering at all switches early retransmit off (≤ 4.10).
    pub(super) fn update_reordering_v3(&mut self, metric: u32, ts: bool) {
        if metric > 0 {
            self.v3.do_early_retrans = false;
        }
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
    /// is SACKed, or (RFC 5827) all but one of fewer than four packets out
    /// are SACKed, nothing was retransmitted and nothing more can be sent:
    /// then recover now, or after the early-retransmit delay. (The
    /// thin-stream rule is not modelled.)
    pub(super) fn time_to_recover_v3(&mut self, flag: u32) -> bool {
        if self.scoreboard.lost_out > 0 {
            return true;
        }
        let heuristic = if self.v3.fack { self.fackets_out() } else { self.scoreboard.sacked_out + 1 };
        if heuristic > self.reordering {
            return true;
        }
        let packets_out = self.scoreboard.packets_out;
        let sacked_out = self.scoreboard.sacked_out;
        if packets_out <= self.reordering
            && sacked_out >= (packets_out / 2).max(self.cfg.tcp_reordering)
            && !self.may_send_now()
        {
            return true;
        }
        if self.v3.do_early_retrans
            && self.scoreboard.retrans_out == 0
            && sacked_out > 0
            && packets_out > sacked_out
            && packets_out < 4
            && !self.may_send_now()
        {
            return !self.pause_early_retransmit(flag);
        }
        false
    }

    /// `tcp_pause_early_retransmit` (3.6–4.10): with `tcp_early_retrans`
    /// 2 or 3, hold the early retransmit back for max(srtt/4, 2 ms) (RFC
    /// 5827's mitigation A.3 against small reordering) on the early-
    /// retransmit timer, unless the ACK carries ECE, there is no RTT yet
    /// or the pending timer fires first.
    fn pause_early_retransmit(&mut self, flag: u32) -> bool {
        let srtt_us = self.rtt.srtt_us();
        if !(2..=3).contains(&self.cfg.tcp_early_retrans) || flag & FLAG_ECE != 0 || srtt_us == 0 {
            return false;
        }
        let hz = self.cfg.hz;
        let delay = usecs_to_jiffies(srtt_us >> 5, hz).max(msecs_to_jiffies(2, hz));
        let at = self.tp.now + jiffies_to_duration(delay, hz);
        // !time_after(icsk_timeout, jiffies + delay)
        if self.timers.pending_at().is_none_or(|(_, icsk_timeout)| icsk_timeout <= at) {
            return false;
        }
        self.reset_xmit_timer(Timer::ReoTimeout, at);
        true
    }

    /// `tcp_resume_early_retransmit` (3.6–4.10): the delay is over. The
    /// RTO goes back to its deadline from the head's transmission; unless
    /// reordering switched early retransmit off meanwhile, enter Recovery,
    /// mark the head lost and retransmit it.
    pub(super) fn resume_early_retransmit(&mut self, now: Instant) {
        self.rearm_rto_from_head(now);
        if !self.v3.do_early_retrans {
            return;
        }
        self.enter_recovery(false);
        self.update_scoreboard_v3(true);
        self.rexmit = Rexmit::Lost;
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
