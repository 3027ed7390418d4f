//! The congestion state machine and loss recovery of net/ipv4/tcp_input.c
//! (Linux 6.13 unless a knob selects an older era): `tcp_fastretrans_alert`,
//! entering and leaving Recovery, CWR and Loss, PRR via `tcp_cwnd_reduction`,
//! undo of spurious reductions (the evidence is kept by `Undo`, undo.rs),
//! when to mark SACK losses by RFC 6675 (`tcp_update_scoreboard`; the
//! marking itself, `tcp_mark_head_lost`, is the `Scoreboard`'s), and the
//! retransmission timeout.

use super::rtx_queue::{EVER_RETRANS, LOST, SACKED_ACKED};
use super::timer::Timer;
use super::{Connection, Rexmit, TcpState};
use crate::cc::{CaEvent, CaState, InFlightLimit, TCP_INFINITE_SSTHRESH};
use crate::config::{AckEra, CwndGrowthRule, CwndLimitedRule};
use crate::counters::Mib;
use crate::flag::*;
use crate::prr;
use crate::rate::RateSample;
use crate::rtt::{jiffies_to_duration, msecs_to_jiffies, usecs_to_jiffies};
use crate::time::Instant;
use tcplab_wire::SeqNum;

impl Connection {
    /// `tcp_in_cwnd_reduction`: CWR or Recovery.
    pub(super) fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_fastretrans_alert`: process a dubious ACK — one that is not a
    /// plain in-order ACK in Open state — through the state machine.
    pub(super) fn fastretrans_alert(
        &mut self,
        prior_snd_una: SeqNum,
        num_dupack: u32,
        ack_flag: &mut u32,
        rexmit: &mut Rexmit,
    ) {
        let flag = *ack_flag;
        let ece_ack = flag & FLAG_ECE != 0;
        let v3 = self.cfg.ack_era == AckEra::V3_12;
        let mut do_lost = num_dupack > 0
            || (flag & FLAG_DATA_SACKED != 0
                && if v3 { self.fackets_out() > self.reordering } else { self.force_fast_retransmit() });
        let mut fast_rexmit = false;

        if self.scoreboard.packets_out == 0 && self.scoreboard.sacked_out > 0 {
            self.scoreboard.sacked_out = 0;
        }
        // A. ECE: the reduction is required, forbid undoing it.
        if ece_ack {
            self.undo.prior_ssthresh = 0;
        }
        // B. SACK reneging: let the RTO (shortened) sort it out.
        if flag & FLAG_SACK_RENEGING != 0 && flag & FLAG_SND_UNA_ADVANCED != 0 {
            let hz = self.cfg.hz;
            let delay = usecs_to_jiffies(self.rtt.srtt_us() >> 4, hz).max(msecs_to_jiffies(10, hz));
            self.reset_xmit_timer(Timer::Retrans, self.tp.now + jiffies_to_duration(delay, hz));
            *ack_flag &= !FLAG_SET_XMIT_TIMER;
            return;
        }
        // D. State exit once high_seq is acknowledged.
        if self.tp.ca_state == CaState::Open {
            self.undo.retrans_stamp = 0;
        } else if !self.snd_una.before(self.high_seq) {
            match self.tp.ca_state {
                // CWR must last until something above high_seq is acked,
                // so that the CWR bit reached the receiver.
                CaState::Cwr if self.snd_una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_ca_state(CaState::Open);
                }
                CaState::Recovery => {
                    if !self.negotiated.sack_ok {
                        self.reset_reno_sack();
                    }
                    if self.try_undo_recovery() {
                        return;
                    }
                    self.end_cwnd_reduction();
                }
                _ => {}
            }
        }

        // E. Process the state.
        let mut fall_through = false;
        match self.tp.ca_state {
            CaState::Recovery => {
                if flag & FLAG_SND_UNA_ADVANCED == 0 {
                    if !self.negotiated.sack_ok {
                        self.add_reno_sack(num_dupack, ece_ack);
                    }
                } else if v3 {
                    do_lost = self.try_undo_partial_v3(self.v3.pkts_acked);
                } else if self.try_undo_partial(prior_snd_una, &mut do_lost) {
                    return;
                }
                if self.try_undo_dsack() {
                    self.try_to_open(flag);
                }
                self.identify_packet_loss(ack_flag);
                if self.tp.ca_state != CaState::Recovery {
                    if !self.time_to_recover(flag) {
                        return;
                    }
                    // Undo reverted the recovery but loss is evident:
                    // start a new one.
                    self.enter_recovery(ece_ack);
                }
            }
            CaState::Loss => {
                self.process_loss(flag, num_dupack, rexmit);
                self.identify_packet_loss(ack_flag);
                if !(self.tp.ca_state == CaState::Open || *ack_flag & FLAG_LOST_RETRANS != 0) {
                    return;
                }
                fall_through = true;
            }
            _ => fall_through = true,
        }
        if fall_through {
            if !self.negotiated.sack_ok {
                if flag & FLAG_SND_UNA_ADVANCED != 0 {
                    self.reset_reno_sack();
                }
                self.add_reno_sack(num_dupack, ece_ack);
            }
            if self.tp.ca_state <= CaState::Disorder {
                self.try_undo_dsack();
            }
            self.identify_packet_loss(ack_flag);
            if !self.time_to_recover(flag) {
                self.try_to_open(flag);
                return;
            }
            self.enter_recovery(ece_ack);
            fast_rexmit = true;
        }
        if v3 {
            if do_lost {
                self.update_scoreboard_v3(fast_rexmit);
            }
            // 3.x: PRR runs inside the state machine.
            let newly = self.v3_newly_acked_sacked();
            self.cwnd_reduction(newly, 0, flag, fast_rexmit);
        } else if (!self.rack_enabled() || self.cfg.rack_with_dupthresh) && do_lost {
            // (v4.17 still marked by the RFC 6675 count with RACK on.)
            self.update_scoreboard(fast_rexmit);
        }
        *rexmit = Rexmit::Lost;
    }

    /// 3.x `newly_acked_sacked`: the change in un-SACKed outstanding
    /// packets (may be ≤ 0).
    fn v3_newly_acked_sacked(&self) -> i32 {
        self.v3.prior_unsacked as i32 - (self.scoreboard.packets_out as i32 - self.scoreboard.sacked_out as i32)
    }

    /// `tcp_force_fast_retransmit`: the highest SACK is more than
    /// `reordering` packets above snd_una.
    fn force_fast_retransmit(&self) -> bool {
        self.highest_sack_seq().after(self.snd_una + self.reordering.saturating_mul(self.tp.mss_cache))
    }

    /// `tcp_time_to_recover` (6.13): something is marked lost, or, only
    /// without RACK (or with v4.17's `rack_with_dupthresh`), more than
    /// `reordering` packets were SACKed (dupthresh).
    fn time_to_recover(&mut self, flag: u32) -> bool {
        if self.cfg.ack_era == AckEra::V3_12 {
            return self.time_to_recover_v3(flag);
        }
        let dupthresh = !self.rack_enabled() || self.cfg.rack_with_dupthresh;
        self.scoreboard.lost_out > 0 || (dupthresh && self.scoreboard.sacked_out + 1 > self.reordering)
    }

    /// `tcp_identify_packet_loss`: NewReno marks the head lost, RACK by
    /// time; without RACK, SACK marking happens in `tcp_update_scoreboard`.
    fn identify_packet_loss(&mut self, ack_flag: &mut u32) {
        if self.rtx.is_empty() {
            return;
        }
        if !self.negotiated.sack_ok {
            self.newreno_mark_lost(*ack_flag & FLAG_SND_UNA_ADVANCED != 0);
        } else if self.rack_enabled() {
            let prior_retrans = self.scoreboard.retrans_out;
            if self.rack_mark_lost() {
                *ack_flag &= !FLAG_SET_XMIT_TIMER;
            }
            if prior_retrans > self.scoreboard.retrans_out {
                *ack_flag |= FLAG_LOST_RETRANS;
            }
        }
    }

    /// `tcp_newreno_mark_lost`.
    fn newreno_mark_lost(&mut self, snd_una_advanced: bool) {
        let st = self.tp.ca_state;
        let due = (st < CaState::Recovery && self.scoreboard.sacked_out >= self.reordering)
            || (st == CaState::Recovery && snd_una_advanced);
        if due && self.rtx.head().is_some_and(|h| !h.is(LOST)) {
            self.scoreboard.mark_skb_lost(&mut self.rtx, 0, &mut self.tp.mib);
        }
    }

    /// `tcp_update_scoreboard` (RFC 6675 without FACK): mark un-SACKed
    /// segments lost from the head until `sacked_out − reordering` SACKed
    /// segments have been passed; on the entering ACK at least the head.
    pub(super) fn update_scoreboard(&mut self, fast_rexmit: bool) {
        if !self.negotiated.sack_ok {
            return;
        }
        let sacked_upto = self.scoreboard.sacked_out as i64 - self.reordering as i64;
        if sacked_upto >= 0 {
            self.scoreboard.mark_head_lost(
                &mut self.rtx,
                sacked_upto as u32,
                false,
                self.snd_una,
                self.snd_nxt,
                &mut self.tp.mib,
            );
        } else if fast_rexmit {
            self.scoreboard.mark_head_lost(&mut self.rtx, 1, true, self.snd_una, self.snd_nxt, &mut self.tp.mib);
        }
    }

    /// `tcp_enter_recovery`.
    pub(super) fn enter_recovery(&mut self, ece_ack: bool) {
        self.tp.mib.inc(if self.negotiated.sack_ok { Mib::TcpExtTCPSackRecovery } else { Mib::TcpExtTCPRenoRecovery });
        self.undo.prior_ssthresh = 0;
        self.undo.init(self.snd_una, self.scoreboard.retrans_out, self.rack.tlp_retrans_outstanding());
        if !self.in_cwnd_reduction() {
            if !ece_ack {
                self.undo.prior_ssthresh = self.current_ssthresh();
            }
            self.init_cwnd_reduction();
        }
        self.set_ca_state(CaState::Recovery);
    }

    /// `tcp_current_ssthresh`: outside a reduction, at least 3/4 cwnd.
    fn current_ssthresh(&self) -> u32 {
        if self.in_cwnd_reduction() {
            self.tp.snd_ssthresh
        } else {
            self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2))
        }
    }

    /// `tcp_init_cwnd_reduction`: start PRR towards the new ssthresh.
    pub(super) fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.snd_nxt;
        self.rack.tlp_high_seq = None;
        self.tp.snd_cwnd_cnt = 0;
        self.tp.prior_cwnd = self.tp.snd_cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tp.snd_ssthresh = self.ca_ops().ssthresh();
        // tcp_ecn_queue_cwr
        if self.negotiated.ecn_ok {
            self.ecn_queue_cwr = true;
        }
    }

    /// `tcp_end_cwnd_reduction`: cwnd = ssthresh when CWR or a recovery
    /// that was not undone ends.
    pub(super) fn end_cwnd_reduction(&mut self) {
        // A cong_control module (BBR) restores cwnd itself, and gets no
        // CA_EVENT_COMPLETE_CWR.
        if self.cc.has_cong_control() {
            return;
        }
        if self.tp.snd_ssthresh < TCP_INFINITE_SSTHRESH
            && (self.tp.ca_state == CaState::Cwr || self.undo.undo_marker.is_some())
        {
            self.tp.snd_cwnd = self.tp.snd_ssthresh;
            self.snd_cwnd_stamp = self.tp.jiffies;
        }
        self.ca_ops().cwnd_event(CaEvent::CompleteCwr);
    }

    /// `tcp_enter_cwr`: ECN (or local) congestion; one reduction per window.
    pub(super) fn enter_cwr(&mut self) {
        self.undo.prior_ssthresh = 0;
        if self.tp.ca_state < CaState::Cwr {
            self.undo.undo_marker = None;
            self.init_cwnd_reduction();
            self.set_ca_state(CaState::Cwr);
        }
    }

    /// `tcp_try_keep_open`: Disorder while anything is SACKed, lost or
    /// retransmitted, else Open.
    pub(super) fn try_keep_open(&mut self) {
        let state =
            if self.scoreboard.left_out() > 0 || self.any_retrans_done() { CaState::Disorder } else { CaState::Open };
        if self.tp.ca_state != state {
            self.set_ca_state(state);
            self.high_seq = self.snd_nxt;
        }
    }

    /// `tcp_try_to_open`.
    fn try_to_open(&mut self, flag: u32) {
        if !self.any_retrans_done() {
            self.undo.retrans_stamp = 0;
        }
        if flag & FLAG_ECE != 0 {
            self.enter_cwr();
        }
        if self.tp.ca_state == CaState::Cwr && self.cfg.ack_era == AckEra::V3_12 {
            // 3.x: CWR's reduction runs here.
            let newly = self.v3_newly_acked_sacked();
            self.cwnd_reduction(newly, 0, flag, false);
        }
        if self.tp.ca_state != CaState::Cwr {
            self.try_keep_open();
            // v3.11 (before "increase throughput when reordering is
            // high"): tcp_moderate_cwnd while in Disorder.
            if self.cfg.cwnd_growth == CwndGrowthRule::V3_11 && self.tp.ca_state != CaState::Open {
                self.moderate_cwnd();
            }
        }
    }

    /// `tcp_moderate_cwnd` (≤3.11 Disorder, removed later): limit bursts
    /// to `tcp_max_burst` = reordering packets above what is in flight.
    fn moderate_cwnd(&mut self) {
        let limit = self.packets_in_flight() + self.reordering;
        if self.tp.snd_cwnd > limit {
            self.tp.snd_cwnd = limit;
            self.snd_cwnd_stamp = self.tp.jiffies;
        }
    }

    // ------------------------------------------------------------------
    // Undo
    // ------------------------------------------------------------------

    /// `tcp_packet_delayed`.
    fn packet_delayed(&self) -> bool {
        self.undo.packet_delayed(self.rcv_tsecr, self.state == TcpState::SynSent)
    }

    /// `tcp_may_undo`.
    pub(super) fn may_undo(&self) -> bool {
        self.undo.may_undo(self.rcv_tsecr, self.state == TcpState::SynSent)
    }

    /// `tcp_undo_cwnd_reduction`: restore cwnd (through the congestion
    /// control's `undo_cwnd`) and ssthresh.
    pub(super) fn undo_cwnd_reduction(&mut self, unmark_loss: bool) {
        if unmark_loss {
            self.scoreboard.unmark_lost(&mut self.rtx);
        }
        if self.undo.prior_ssthresh != 0 {
            self.tp.snd_cwnd = self.ca_ops().undo_cwnd().max(1);
            if self.undo.prior_ssthresh > self.tp.snd_ssthresh {
                self.tp.snd_ssthresh = self.undo.prior_ssthresh;
                // tcp_ecn_withdraw_cwr
                self.ecn_queue_cwr = false;
            }
        }
        self.snd_cwnd_stamp = self.tp.jiffies;
        self.undo.undo_marker = None;
    }

    /// `tcp_try_undo_recovery`: Recovery or Loss ended; undo if it was
    /// spurious.
    fn try_undo_recovery(&mut self) -> bool {
        if self.may_undo() {
            let mib = if self.tp.ca_state == CaState::Loss { Mib::TcpExtTCPLossUndo } else { Mib::TcpExtTCPFullUndo };
            self.undo_cwnd_reduction(false);
            self.tp.mib.inc(mib);
        }
        if self.snd_una == self.high_seq && !self.negotiated.sack_ok {
            // Reno holds the state until something above high_seq is
            // acked, to avoid false fast retransmits (RFC 2582).
            if !self.any_retrans_done() {
                self.undo.retrans_stamp = 0;
            }
            return true;
        }
        self.set_ca_state(CaState::Open);
        self.is_sack_reneg = false;
        false
    }

    /// `tcp_try_undo_dsack`: every retransmission was D-SACKed.
    fn try_undo_dsack(&mut self) -> bool {
        if self.undo.undo_marker.is_some() && self.undo.undo_retrans == 0 {
            self.undo_cwnd_reduction(false);
            self.tp.mib.inc(Mib::TcpExtTCPDSACKUndo);
            return true;
        }
        false
    }

    /// `tcp_try_undo_partial`: a partial ACK for a packet that was only
    /// delayed (timestamps prove it) means reordering, not loss.
    fn try_undo_partial(&mut self, prior_snd_una: SeqNum, do_lost: &mut bool) -> bool {
        if self.undo.undo_marker.is_some() && self.packet_delayed() {
            self.check_sack_reordering(prior_snd_una, true);
            if self.scoreboard.retrans_out > 0 {
                return true;
            }
            if !self.any_retrans_done() {
                self.undo.retrans_stamp = 0;
            }
            self.undo_cwnd_reduction(true);
            self.tp.mib.inc(Mib::TcpExtTCPPartialUndo);
            self.try_keep_open();
        } else {
            *do_lost = self.force_fast_retransmit();
        }
        false
    }

    /// `tcp_try_undo_loss`: the RTO was spurious (F-RTO or timestamps).
    fn try_undo_loss(&mut self, frto_undo: bool) -> bool {
        if frto_undo || self.may_undo() {
            self.undo_cwnd_reduction(true);
            self.tp.mib.inc(Mib::TcpExtTCPLossUndo);
            if frto_undo {
                self.tp.mib.inc(Mib::TcpExtTCPSpuriousRTOs);
            }
            self.icsk_retransmits = 0;
            if frto_undo || self.negotiated.sack_ok {
                self.set_ca_state(CaState::Open);
                self.is_sack_reneg = false;
            }
            return true;
        }
        false
    }

    /// `tcp_process_loss`: ACKs in the Loss state, with F-RTO (RFC 5682,
    /// SACK-enhanced).
    fn process_loss(&mut self, flag: u32, num_dupack: u32, rexmit: &mut Rexmit) {
        let recovered = !self.snd_una.before(self.high_seq);
        if flag & FLAG_SND_UNA_ADVANCED != 0 && self.try_undo_loss(false) {
            return;
        }
        if self.frto {
            // Step 3.b: never-retransmitted data was (S)ACKed: spurious.
            if flag & FLAG_ORIG_SACK_ACKED != 0 && self.try_undo_loss(true) {
                return;
            }
            if self.snd_nxt.after(self.high_seq) {
                if flag & FLAG_DATA_SACKED != 0 || num_dupack > 0 {
                    self.frto = false; // Step 3.a: the loss was real.
                }
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 && !recovered {
                self.high_seq = self.snd_nxt;
                // Step 2.b: try to send new data.
                if self.unsent_bytes() > 0 && self.snd_una + self.snd_wnd != self.snd_nxt {
                    *rexmit = Rexmit::New;
                    return;
                }
                self.frto = false;
            }
        }
        if recovered {
            self.try_undo_recovery();
            return;
        }
        if !self.negotiated.sack_ok {
            if self.snd_nxt.after(self.high_seq) && num_dupack > 0 {
                self.add_reno_sack(num_dupack, flag & FLAG_ECE != 0);
            } else if flag & FLAG_SND_UNA_ADVANCED != 0 {
                self.reset_reno_sack();
            }
        }
        *rexmit = Rexmit::Lost;
    }

    // ------------------------------------------------------------------
    // cwnd control after an ACK
    // ------------------------------------------------------------------

    /// `tcp_cong_control`: a `cong_control` module (BBR) decides alone
    /// from the rate sample `rs`; otherwise PRR while reducing, else growth
    /// if allowed, then the pacing rate.
    //= linux:v6.12:net/ipv4/tcp_input.c#tcp_cong_control
    pub(super) fn cong_control(&mut self, ack: SeqNum, acked_sacked: u32, newly_lost: u32, flag: u32, rs: &RateSample) {
        if self.cc.has_cong_control() {
            self.ca_ops().cong_control(ack, flag, rs);
            return;
        }
        if self.in_cwnd_reduction() {
            self.cwnd_reduction(acked_sacked as i32, newly_lost, flag, self.prr_out == 0);
        } else if self.may_raise_cwnd(flag) {
            self.cong_avoid(ack, acked_sacked);
        }
        if self.tp.snd_cwnd == 0 {
            self.tp.snd_cwnd = 1;
        }
        self.update_pacing_rate();
    }

    /// `tcp_cong_avoid`: the algorithm's `cong_avoid`, with the era's
    /// cwnd-limited test in force.
    pub(super) fn cong_avoid(&mut self, ack: SeqNum, acked: u32) {
        let in_flight_limit = InFlightLimit {
            prior_in_flight: self.v3.prior_in_flight,
            max_burst: self.reordering,
            tso_win_divisor: self.cfg.tcp_tso_win_divisor,
        };
        let in_flight_limit = (self.cfg.cwnd_limited_rule == CwndLimitedRule::InFlight).then_some(in_flight_limit);
        self.ca_ops().cong_avoid(ack, acked, in_flight_limit);
        self.snd_cwnd_stamp = self.tp.jiffies;
    }

    /// `tcp_may_raise_cwnd`, by era (the knob of "tcp: increase throughput
    /// when reordering is high").
    pub(super) fn may_raise_cwnd(&self, flag: u32) -> bool {
        let high_reordering = self.reordering > self.cfg.tcp_reordering;
        match self.cfg.cwnd_growth {
            CwndGrowthRule::V3_12 => {
                // (≥ 4.9 checks the reduction in tcp_cong_control instead.)
                if self.in_cwnd_reduction() {
                    false
                } else if high_reordering {
                    flag & FLAG_FORWARD_PROGRESS != 0
                } else {
                    flag & FLAG_DATA_ACKED != 0
                }
            }
            CwndGrowthRule::DataAcked => !self.in_cwnd_reduction() && flag & FLAG_DATA_ACKED != 0,
            CwndGrowthRule::Posted => {
                if self.in_cwnd_reduction() {
                    false
                } else if high_reordering {
                    flag & FLAG_FORWARD_PROGRESS != 0
                } else {
                    self.tp.ca_state == CaState::Open && flag & FLAG_DATA_ACKED != 0
                }
            }
            CwndGrowthRule::V3_11 => {
                (flag & FLAG_ECE == 0 || self.tp.snd_cwnd < self.tp.snd_ssthresh)
                    && !self.in_cwnd_reduction()
                    && flag & FLAG_DATA_ACKED != 0
            }
        }
    }

    /// `tcp_cwnd_reduction` (PRR, RFC 6937) through [`prr`].
    /// `fast_rexmit` is read by the v3.x rule only (later eras derive it
    /// from `prr_out == 0`).
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: i32, newly_lost: u32, flag: u32, fast_rexmit: bool) {
        let st = prr::PrrState {
            ssthresh: self.tp.snd_ssthresh,
            prior_cwnd: self.tp.prior_cwnd,
            prr_delivered: self.prr_delivered,
            prr_out: self.prr_out,
            in_flight: self.packets_in_flight(),
            cwnd: self.tp.snd_cwnd,
        };
        let cfg = prr::PrrConfig { rule: self.cfg.prr_rule, cwnd_floor: self.cfg.cwnd_reduction_floor };
        let out = prr::tcp_cwnd_reduction(&st, newly_acked_sacked, newly_lost as i32, flag, fast_rexmit, &cfg);
        self.prr_delivered = out.prr_delivered;
        self.tp.snd_cwnd = out.cwnd.max(1);
    }

    // ------------------------------------------------------------------
    // Retransmission timeout (tcp_timer.c)
    // ------------------------------------------------------------------

    /// `tcp_retransmit_timer`.
    pub(super) fn retransmit_timer(&mut self, now: Instant) {
        match self.state {
            TcpState::SynSent | TcpState::SynReceived => {
                // tcp_retransmit_timer on a SYN / SYN-ACK: resend it.
                if self.scoreboard.packets_out == 0 {
                    return;
                }
                self.tp.mib.inc(Mib::TcpExtTCPTimeouts);
                self.tp.mib.inc(Mib::TcpExtTCPSynRetrans);
                if let Some(h) = self.rtx.head_mut() {
                    h.sacked |= EVER_RETRANS;
                }
                self.syn_pending = true;
                self.icsk_retransmits += 1;
                self.icsk_backoff = self.icsk_backoff.saturating_add(1);
                self.rtt.backoff();
                let rto = self.rto_now();
                self.reset_xmit_timer(Timer::Retrans, now + rto);
                return;
            }
            TcpState::Closed | TcpState::Listen | TcpState::TimeWait => return,
            _ => {}
        }
        if self.scoreboard.packets_out == 0 || self.rtx.is_empty() {
            return;
        }
        self.tp.mib.inc(Mib::TcpExtTCPTimeouts);
        if self.icsk_retransmits == 0 {
            let mib = match self.tp.ca_state {
                CaState::Recovery => Some(Mib::TcpExtTCPSackRecoveryFail),
                CaState::Loss => Some(Mib::TcpExtTCPLossFailures),
                CaState::Disorder => Some(Mib::TcpExtTCPSackFailures),
                _ if self.scoreboard.sacked_out > 0 => Some(Mib::TcpExtTCPSackFailures),
                _ => None,
            };
            if let Some(m) = mib {
                self.tp.mib.inc(m);
            }
        }
        self.enter_loss();
        self.icsk_retransmits += 1;
        self.rto_head_pending = true;
        self.icsk_backoff = self.icsk_backoff.saturating_add(1);
        self.rtt.backoff();
        let rto = self.rto_now();
        self.reset_xmit_timer(Timer::Retrans, now + rto);
    }

    /// `tcp_enter_loss`: every un-SACKed segment sent more than an RTT ago
    /// is lost; cwnd restarts from what is still in flight + 1.
    fn enter_loss(&mut self) {
        let new_recovery = self.tp.ca_state < CaState::Recovery;
        self.timeout_mark_lost();
        if self.tp.ca_state <= CaState::Disorder
            || !self.high_seq.after(self.snd_una)
            || (self.tp.ca_state == CaState::Loss && self.icsk_retransmits == 0)
        {
            self.undo.prior_ssthresh = self.current_ssthresh();
            self.tp.prior_cwnd = self.tp.snd_cwnd;
            self.tp.snd_ssthresh = self.ca_ops().ssthresh();
            self.ca_ops().cwnd_event(CaEvent::Loss);
            self.undo.init(self.snd_una, self.scoreboard.retrans_out, self.rack.tlp_retrans_outstanding());
        }
        // ≥ 4.18 counts what is still in flight; earlier kernels set 1.
        self.tp.snd_cwnd = if self.cfg.loss_cwnd_one { 1 } else { self.packets_in_flight() + 1 };
        self.tp.snd_cwnd_cnt = 0;
        self.snd_cwnd_stamp = self.tp.jiffies;
        // A timeout after many dupacks in Disorder: reordering was
        // over-estimated.
        // (v3.11 did this on every RTO; the condition came in v3.12.)
        let v3_11 = self.cfg.cwnd_growth == CwndGrowthRule::V3_11;
        if v3_11 || (self.tp.ca_state <= CaState::Disorder && self.scoreboard.sacked_out >= self.cfg.tcp_reordering) {
            self.reordering = self.reordering.min(self.cfg.tcp_reordering);
        }
        self.set_ca_state(CaState::Loss);
        self.high_seq = self.snd_nxt;
        self.rack.tlp_high_seq = None;
        if self.negotiated.ecn_ok {
            self.ecn_queue_cwr = true;
        }
        // F-RTO step 1.
        self.frto = self.cfg.tcp_frto != 0 && (new_recovery || self.icsk_retransmits > 0);
        self.rexmit = Rexmit::None;
    }

    /// `tcp_timeout_mark_lost`. On SACK reneging (the head is SACKed) all
    /// SACK state is discarded first. Segments sent within the last RACK
    /// RTT are not marked yet (they may still arrive).
    fn timeout_mark_lost(&mut self) {
        let Some(head) = self.rtx.head() else { return };
        let is_reneg = head.is(SACKED_ACKED);
        if is_reneg {
            self.tp.mib.inc(Mib::TcpExtTCPSACKReneging);
            self.scoreboard.sacked_out = 0;
            // "Mark SACK reneging until we recover from this loss event."
            self.is_sack_reneg = true;
        } else if !self.negotiated.sack_ok {
            self.reset_reno_sack();
        }
        let now = self.tp.now;
        let reo_wnd_us = 0i64;
        let rack_rtt_us = self.rack.rtt_us as i64;
        for i in 0..self.rtx.len() {
            let Some(skb) = self.rtx.get_mut(i) else { break };
            if is_reneg {
                skb.sacked &= !SACKED_ACKED;
            } else if i > 0 {
                // tcp_rack_skb_timeout(tp, skb, 0) > 0: sent too recently.
                let elapsed = now.saturating_since(skb.xmit_time).as_micros() as i64;
                if rack_rtt_us + reo_wnd_us - elapsed > 0 {
                    continue;
                }
            }
            self.scoreboard.mark_skb_lost(&mut self.rtx, i, &mut self.tp.mib);
        }
        self.scoreboard.clear_retrans_hints(self.snd_una);
    }
}
