//! ACK processing: `tcp_ack` and what it calls (net/ipv4/tcp_input.c,
//! Linux 6.13 structure: `tcp_fastretrans_alert` before
//! `tcp_cong_control`, "delivered" counting cumulative and SACKed packets).

use super::rtx_queue::{EVER_RETRANS, LOST, RETRANS, SACKED_ACKED, SACKED_RETRANS};
use super::{Connection, Rexmit};
use crate::cc::{ca_ack, AckSample};
use crate::config::{AckEra, AckedCount, TlpRule};
use crate::counters::Mib;
use crate::flag::*;
use crate::rate::{DeliveredSkb, RateGenInput, RateSample};
use crate::time::Instant;
use tcplab_wire::{SegmentRepr, SeqNum, MAX_SACK_BLOCKS};

/// What `tcp_sacktag_write_queue` learned (`struct tcp_sacktag_state`).
pub(super) struct SackState {
    /// Lowest sequence newly SACKed from inside a hole (reordering).
    pub reord: SeqNum,
    /// Send time of the earliest / latest newly SACKed never-retransmitted
    /// segment (SACK RTT).
    pub first_sackt: Option<Instant>,
    pub last_sackt: Option<Instant>,
    pub flag: u32,
    pub sack_delivered: u32,
    /// 3.x: lowest packet index (from snd_una) newly (S)ACKed from inside
    /// a hole (`state.reord` / `reord` of tcp_update_reordering's callers).
    pub reord_pkts: u32,
    /// `sack_state.rate`: this ACK's `struct rate_sample`, filled by
    /// `tcp_rate_skb_delivered` for each (S)ACKed skb; RACK's reordering
    /// window reads it too (`tcp_rack_update_reo_wnd`).
    pub rs: RateSample,
}

impl SackState {
    fn new(reord: SeqNum) -> SackState {
        SackState {
            reord,
            first_sackt: None,
            last_sackt: None,
            flag: 0,
            sack_delivered: 0,
            reord_pkts: u32::MAX,
            rs: RateSample::default(),
        }
    }
}

impl Connection {
    /// `tcp_ack`. Returns `None` when the segment must be discarded (it
    /// acknowledges data never sent). `flag` is the caller's:
    /// `FLAG_SLOWPATH` from the slow path, 0 from header prediction.
    pub(super) fn tcp_ack(&mut self, now: Instant, seg: &SegmentRepr, flag: u32) -> Option<u32> {
        let prior_snd_una = self.snd_una;
        let ack = seg.ack;
        let mut flag = flag;
        let prior_delivered = self.tp.delivered;
        let mut rexmit = Rexmit::None;

        // RFC 793: an ACK below snd_una is old; its SACK blocks may still
        // carry news (D-SACK undo).
        if ack.before(prior_snd_una) {
            if seg.options.sack_len > 0 && self.negotiated.sack_ok {
                let st = self.sacktag(now, seg, prior_snd_una);
                flag |= st.flag;
                self.count_delivered(st.sack_delivered, false);
                self.fastretrans_alert(prior_snd_una, 0, &mut flag, &mut rexmit);
                self.note_delivered(prior_delivered, false);
                self.rexmit = rexmit;
            }
            return Some(flag);
        }
        // Acknowledges something not yet sent: drop it.
        if ack.after(self.snd_nxt) {
            return None;
        }
        if ack.after(prior_snd_una) {
            flag |= FLAG_SND_UNA_ADVANCED;
            self.icsk_retransmits = 0;
        }
        let prior_fack = self.highest_sack_seq();
        let prior_packets = self.scoreboard.packets_out;
        let v3 = self.cfg.ack_era == AckEra::V3_12;
        if v3 && matches!(self.timers.pending(), Some(super::Timer::ReoTimeout | super::Timer::LossProbe)) {
            // 3.x tcp_ack: any ACK takes a pending early retransmit or loss
            // probe back to the RTO; the state machine and the tail decide
            // again.
            self.rearm_rto(now);
        }
        let prior_fackets = if v3 { self.fackets_out() } else { 0 };
        self.v3.prior_unsacked =
            self.scoreboard.packets_out - self.scoreboard.sacked_out.min(self.scoreboard.packets_out);
        self.v3.prior_in_flight = self.packets_in_flight();
        let prior_lost = self.scoreboard.lost;
        // tcp_ack: `rs.prior_in_flight`, and `is_sack_reneg` as it was
        // before this ACK (for tcp_rate_gen).
        let prior_in_flight = self.v3.prior_in_flight;
        let is_sack_reneg = self.is_sack_reneg;

        let mut sack = SackState::new(self.snd_nxt);
        let mut ece = false;
        if flag & FLAG_SLOWPATH == 0 && flag & FLAG_SND_UNA_ADVANCED != 0 {
            // "Window is constant, pure forward advance. No more checks
            // are required."
            self.snd_wl1 = seg.seq;
            self.snd_una_update(ack);
            flag |= FLAG_WIN_UPDATE;
            self.tp.mib.inc(Mib::TcpExtTCPHPAcks);
        } else {
            if seg.seq_len() > 0 {
                flag |= FLAG_DATA;
            } else {
                self.tp.mib.inc(Mib::TcpExtTCPPureAcks);
            }
            flag |= self.ack_update_window(seg);
            if seg.options.sack_len > 0 && self.negotiated.sack_ok {
                sack = self.sacktag(now, seg, prior_snd_una);
                flag |= sack.flag;
            }
            ece = seg.flags.ece() && self.negotiated.ecn_ok && !seg.flags.syn();
            if ece {
                flag |= FLAG_ECE;
            }
            self.count_delivered(sack.sack_delivered, ece);
        }
        let fackets_pre_clean = if v3 { self.fackets_out() } else { 0 };
        let after_clean = self.cfg.in_ack_event_after_clean;
        if !after_clean || prior_packets == 0 {
            self.in_ack_event(flag, ece);
        }

        if prior_packets == 0 {
            // no_queue: nothing was outstanding.
            if flag & FLAG_DSACKING_ACK != 0 {
                self.fastretrans_alert(prior_snd_una, 0, &mut flag, &mut rexmit);
                self.note_delivered(prior_delivered, ece);
            }
            self.ack_probe(now);
            self.process_tlp_ack(ack, flag);
            return Some(flag);
        }

        sack.rs.prior_in_flight = prior_in_flight;
        self.tcp_clean_rtx_queue(now, prior_snd_una, prior_fack, &mut sack, &mut flag);
        if after_clean && v3 {
            self.in_ack_event(flag, ece);
        }
        let pkts_acked = prior_packets - self.scoreboard.packets_out.min(prior_packets);
        if v3 {
            // 3.x: a non-retransmitted hole filled cumulatively is reordering.
            if sack.reord_pkts < prior_fackets {
                self.update_reordering_v3(fackets_pre_clean.saturating_sub(sack.reord_pkts), false);
            }
            // cong_control (BBR) came with 4.9's tcp_ack, whose tail runs
            // below: a cong_control module always takes it.
            if !self.cc.has_cong_control() {
                return Some(self.tcp_ack_v3_tail(now, ack, flag, pkts_acked, prior_delivered, ece));
            }
        }
        self.rack_update_reo_wnd(sack.rs.prior_delivered);
        if after_clean && !v3 {
            self.in_ack_event(flag, ece);
        }
        self.process_tlp_ack(ack, flag);

        if self.ack_is_dubious(flag) {
            let dup = (flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DSACKING_ACK) == 0) as u32;
            self.fastretrans_alert(prior_snd_una, dup, &mut flag, &mut rexmit);
        }
        // tcp_set_xmit_timer: a loss probe, else the RTO.
        if flag & FLAG_SET_XMIT_TIMER != 0 && !self.schedule_loss_probe(true) {
            self.rearm_rto(now);
        }
        if self.scoreboard.packets_out == 0 && self.timers.pending().is_some_and(|t| t != super::Timer::Probe0) {
            self.timers.clear();
        }

        let delivered = self.note_delivered(prior_delivered, ece);
        let newly_lost = self.scoreboard.lost.wrapping_sub(prior_lost);
        let gen = RateGenInput {
            now_us: now.as_micros(),
            delivered: self.tp.delivered,
            delivered_ce: self.tp.delivered_ce,
            min_rtt_us: self.min_rtt.get(),
        };
        self.rate.gen(&gen, delivered, newly_lost, is_sack_reneg, &mut sack.rs);
        self.cong_control(ack, delivered, newly_lost, flag, &sack.rs);
        self.rexmit = rexmit;
        if flag & FLAG_ACKED != 0 {
            // tcp_check_space → tcp_new_space
            self.sndbuf_expand();
        }
        Some(flag)
    }

    /// The rest of `tcp_ack` in v3.12–v3.19: grow cwnd (if allowed) before
    /// the state machine sees the ACK, then `tcp_fastretrans_alert` (which
    /// runs PRR itself), TLP, timers, pacing rate.
    #[allow(clippy::too_many_arguments)]
    fn tcp_ack_v3_tail(
        &mut self,
        now: Instant,
        ack: SeqNum,
        mut flag: u32,
        pkts_acked: u32,
        prior_delivered: u32,
        ece: bool,
    ) -> u32 {
        let mut rexmit = Rexmit::None;
        if self.may_raise_cwnd(flag) {
            let acked = match self.cfg.acked_count {
                AckedCount::PerAck => 1,
                AckedCount::Cumulative => pkts_acked,
                AckedCount::Delivered => self.tp.delivered.wrapping_sub(prior_delivered),
            };
            self.cong_avoid(ack, acked);
        }
        if self.ack_is_dubious(flag) {
            let is_dupack = (flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP) == 0) as u32;
            self.v3.pkts_acked = pkts_acked;
            self.fastretrans_alert(self.snd_una, is_dupack, &mut flag, &mut rexmit);
        }
        self.process_tlp_ack(ack, flag);
        if self.cfg.tlp_rule == TlpRule::V3_10 {
            // 3.x: tcp_clean_rtx_queue rearmed the RTO; tcp_ack ends with a
            // loss probe in the place of a pending RTO.
            if flag & FLAG_SET_XMIT_TIMER != 0 {
                self.rearm_rto(now);
            }
            if self.timers.pending() == Some(super::Timer::Retrans) {
                self.schedule_loss_probe(true);
            }
        } else if flag & FLAG_SET_XMIT_TIMER != 0 && !self.schedule_loss_probe(true) {
            self.rearm_rto(now);
        }
        if self.scoreboard.packets_out == 0 && self.timers.pending().is_some_and(|t| t != super::Timer::Probe0) {
            self.timers.clear();
        }
        if self.tp.snd_cwnd == 0 {
            self.tp.snd_cwnd = 1;
        }
        self.note_delivered(prior_delivered, ece);
        self.update_pacing_rate();
        self.rexmit = rexmit;
        if flag & FLAG_ACKED != 0 {
            self.sndbuf_expand();
        }
        flag
    }

    /// `tcp_newly_delivered`: packets delivered by this ACK (cumulatively,
    /// by SACK or, without SACK, by duplicate ACKs), counted in the MIB.
    fn note_delivered(&mut self, prior_delivered: u32, ece: bool) -> u32 {
        let delivered = self.tp.delivered.wrapping_sub(prior_delivered);
        self.tp.mib.add(Mib::TcpExtTCPDelivered, delivered as u64);
        if ece {
            self.tp.mib.add(Mib::TcpExtTCPDeliveredCE, delivered as u64);
        }
        delivered
    }

    /// `tcp_ack_is_dubious`: anything other than a plain in-order ACK in
    /// Open state goes through the state machine.
    fn ack_is_dubious(&self, flag: u32) -> bool {
        flag & FLAG_NOT_DUP == 0 || flag & FLAG_CA_ALERT != 0 || self.tp.ca_state != crate::cc::CaState::Open
    }

    /// `tcp_count_delivered`.
    pub(super) fn count_delivered(&mut self, n: u32, ece: bool) {
        self.tp.delivered = self.tp.delivered.wrapping_add(n);
        if ece {
            self.tp.delivered_ce = self.tp.delivered_ce.wrapping_add(n);
        }
    }

    /// `tcp_ack_update_window`: accept the peer's window if the ACK is
    /// newer (`tcp_may_update_window`), and advance snd_una.
    fn ack_update_window(&mut self, seg: &SegmentRepr) -> u32 {
        let mut flag = 0;
        let nwin = self.negotiated.scaled_window(seg.window, seg.flags.syn());
        let ack = seg.ack;
        let may_update = ack.after(self.snd_una)
            || seg.seq.after(self.snd_wl1)
            || (seg.seq == self.snd_wl1 && (nwin > self.snd_wnd || nwin == 0));
        if may_update {
            flag |= FLAG_WIN_UPDATE;
            self.snd_wl1 = seg.seq;
            if self.snd_wnd != nwin {
                self.snd_wnd = nwin;
                // "the only place, where fast path is recovered for
                // sending TCP"
                self.rcv.fast_path_off();
                self.rcv.fast_path_check(self.negotiated.tstamp_ok, self.snd_wnd_field());
                self.max_window = self.max_window.max(nwin);
            }
        }
        self.snd_una_update(ack);
        flag
    }

    /// `tcp_in_ack_event`: the congestion control's per-ACK hook (DCTCP's
    /// alpha), told whether the ACK took the slow path, updated the window
    /// or echoed ECE.
    fn in_ack_event(&mut self, flag: u32, ece: bool) {
        let mut ack_ev = 0;
        if flag & FLAG_WIN_UPDATE != 0 {
            ack_ev |= ca_ack::WIN_UPDATE;
        }
        if flag & FLAG_SLOWPATH != 0 {
            ack_ev |= ca_ack::SLOWPATH;
            if ece {
                ack_ev |= ca_ack::ECE;
            }
        }
        self.ca_ops().in_ack_event(ack_ev);
    }

    /// `tcp_snd_una_update`.
    fn snd_una_update(&mut self, ack: SeqNum) {
        if ack.after(self.snd_una) {
            self.bytes_acked += (ack - self.snd_una) as u64;
            self.snd_una = ack;
        }
    }

    /// `tcp_highest_sack_seq`.
    pub(super) fn highest_sack_seq(&self) -> SeqNum {
        self.scoreboard.highest_sack_seq(self.snd_una, self.negotiated.sack_ok)
    }

    /// `tcp_ack_probe`: with a zero window and data waiting, probe.
    fn ack_probe(&mut self, now: Instant) {
        if self.unsent_bytes() > 0 && self.snd_wnd == 0 && self.scoreboard.packets_out == 0 {
            if !self.timers.is_set(super::Timer::Probe0) {
                let when = self.rtt.rto_backed_off(self.icsk_backoff);
                self.reset_xmit_timer(super::Timer::Probe0, now + when);
            }
        } else {
            self.timers.stop(super::Timer::Probe0);
            if self.timers.pending().is_none() {
                self.icsk_backoff = 0;
            }
        }
    }

    /// `tcp_rearm_rto`: restart the retransmission timer from now.
    pub(super) fn rearm_rto(&mut self, now: Instant) {
        // Converting from a REO or TLP timer: keep the RTO relative to the
        // head's transmission (tcp_rto_delta_us).
        if matches!(self.timers.pending(), Some(super::Timer::ReoTimeout | super::Timer::LossProbe)) {
            self.rearm_rto_from_head(now);
        } else if self.scoreboard.packets_out == 0 {
            self.timers.stop(super::Timer::Retrans);
        } else {
            let rto = self.rto_now();
            self.reset_xmit_timer(super::Timer::Retrans, now + rto);
        }
    }

    /// `tcp_rearm_rto` while a REO, early-retransmit or TLP timer is
    /// `icsk_pending` (even the one firing): the RTO at its deadline from
    /// the head's transmission.
    pub(super) fn rearm_rto_from_head(&mut self, now: Instant) {
        if self.scoreboard.packets_out == 0 {
            self.timers.stop(super::Timer::Retrans);
            return;
        }
        let delta = self.rto_delta_us().max(1) as u32;
        // delta ≤ the RTO (≤ TCP_RTO_MAX), far below the clamp.
        let j = crate::rtt::usecs_to_jiffies(delta, self.cfg.hz);
        self.reset_xmit_timer(super::Timer::Retrans, now + crate::rtt::jiffies_to_duration(j, self.cfg.hz));
    }

    // ------------------------------------------------------------------
    // SACK (tcp_sacktag_write_queue)
    // ------------------------------------------------------------------

    /// `tcp_sacktag_write_queue`: tag SACKed segments, detect D-SACK and
    /// reordering. Work is proportional to the segments the blocks cover.
    fn sacktag(&mut self, now: Instant, seg: &SegmentRepr, prior_snd_una: SeqNum) -> SackState {
        let _ = now;
        let mut st = SackState::new(self.snd_nxt);
        let v3 = self.cfg.ack_era == AckEra::V3_12;
        let prior_fackets = if v3 { self.fackets_out() } else { 0 };
        let blocks = seg.options.sack_blocks();
        let found_dup_sack = self.check_dsack(seg, prior_snd_una, &mut st);

        // The valid blocks in sequence order, the D-SACK one keeping its
        // flag: "order SACK blocks to allow in order walk of the retrans
        // queue" (tcp_sacktag_write_queue). The receiver sends the most
        // recent block first; walking a lower block after a higher one
        // would find its new SACKs below the highest SACK and count
        // reordering where there is none.
        let mut sorted = [(SeqNum(0), SeqNum(0), false); MAX_SACK_BLOCKS];
        let mut used = 0;
        for (i, b) in blocks.iter().enumerate().take(MAX_SACK_BLOCKS) {
            let dup_sack = found_dup_sack && i == 0;
            // tcp_is_sackblock_valid
            if !self.sackblock_valid(dup_sack, b.start, b.end) {
                continue;
            }
            sorted[used] = (b.start, b.end, dup_sack);
            used += 1;
        }
        for i in (1..used).rev() {
            for j in 0..i {
                if sorted[j].0.after(sorted[j + 1].0) {
                    sorted.swap(j, j + 1);
                }
            }
        }

        for &(b_start, end, dup_sack) in &sorted[..used] {
            // Only the part above snd_una tags segments.
            let start = b_start.max(self.snd_una);
            if !end.after(start) {
                continue;
            }
            let mut idx = self.rtx.index_after(start);
            while let Some(skb) = self.rtx.get(idx) {
                if !skb.end_seq.before_eq(end) {
                    break;
                }
                // Only whole segments are tagged (the model never needs
                // tcp_match_skb_to_sack's fragmentation: segments are
                // MSS-sized and blocks are built from them).
                if skb.seq.after_eq(start) {
                    let (seq, end_seq, sacked, xmit) = (skb.seq, skb.end_seq, skb.sacked, skb.xmit_time);
                    let new =
                        self.sacktag_one(&mut st, sacked, seq, end_seq, dup_sack, xmit, idx as u32, prior_fackets);
                    if let Some(s) = self.rtx.get_mut(idx) {
                        s.sacked = new;
                        // tcp_sacktag_walk: after tcp_sacktag_one, for each
                        // skb in the block (an already SACKed one was used
                        // and is skipped).
                        let d = DeliveredSkb {
                            tx_mstamp_us: xmit.as_micros(),
                            end_seq,
                            retrans: new & RETRANS != 0,
                            sacked_acked: new & SACKED_ACKED != 0,
                        };
                        self.rate.skb_delivered(&mut s.tx, &d, &mut st.rs);
                    }
                    // SACKed segments leave RACK's send-time list.
                    if new & SACKED_ACKED != 0 {
                        self.rtx.tsorted_unlink(idx);
                    }
                }
                idx += 1;
            }
        }
        // Reordering, unless an RTO threw away the SACK state.
        if self.tp.ca_state != crate::cc::CaState::Loss || self.undo.undo_marker.is_some() {
            if v3 {
                let fackets = self.fackets_out();
                if st.reord_pkts < fackets {
                    self.update_reordering_v3(fackets - st.reord_pkts, false);
                }
            } else {
                self.check_sack_reordering(st.reord, false);
            }
        }
        st
    }

    /// `tcp_is_sackblock_valid`: reject blocks outside what was sent.
    fn sackblock_valid(&self, is_dsack: bool, start: SeqNum, end: SeqNum) -> bool {
        if !end.after(start) || end.after(self.snd_nxt) {
            return false;
        }
        if start.after_eq(self.snd_una) {
            return true;
        }
        if !is_dsack || self.undo.undo_marker.is_none() {
            return false;
        }
        // A D-SACK below snd_una must be above undo_marker and within a window.
        let undo = self.undo.undo_marker.unwrap_or(self.snd_una);
        if !end.after(undo) {
            return false;
        }
        if start.after_eq(undo) {
            return true;
        }
        !start.before(end - self.max_window.max(1))
    }

    /// `tcp_check_dsack`: is the first block a D-SACK (RFC 2883)? Below
    /// the cumulative ACK, or inside the second block.
    fn check_dsack(&mut self, seg: &SegmentRepr, prior_snd_una: SeqNum, st: &mut SackState) -> bool {
        let blocks = seg.options.sack_blocks();
        let Some(first) = blocks.first().copied() else { return false };
        if first.start.before(seg.ack) {
            self.tp.mib.inc(Mib::TcpExtTCPDSACKRecv);
        } else if blocks.len() > 1 {
            let second = blocks[1];
            if first.end.after(second.end) || first.start.before(second.start) {
                return false;
            }
            self.tp.mib.inc(Mib::TcpExtTCPDSACKOfoRecv);
        } else {
            return false;
        }
        let dup_segs = self.dsack_seen(first.start, first.end, st);
        if dup_segs == 0 {
            // Dubious D-SACK: ignored.
            return false;
        }
        // D-SACK of data below snd_una: one more spurious retransmission.
        self.undo.dsack_below_una(first.end, prior_snd_una, dup_segs);
        true
    }

    /// `tcp_dsack_seen`: how many segments a D-SACK reports as duplicate;
    /// 0 for a dubious one (larger than any window, or more duplicates
    /// than were ever retransmitted). Each counts as delivered.
    fn dsack_seen(&mut self, start: SeqNum, end: SeqNum, st: &mut SackState) -> u32 {
        if !start.before(end) {
            return 0;
        }
        let len = end - start;
        if len > self.max_window {
            return 0;
        }
        let mss = self.tp.mss_cache.max(1);
        let mut dup_segs = 1;
        if len > mss {
            dup_segs = len.div_ceil(mss);
        } else if self.rack.tlp_high_seq == Some(end) {
            st.flag |= FLAG_DSACK_TLP;
        }
        self.dsack_dups = self.dsack_dups.wrapping_add(dup_segs);
        if self.dsack_dups > self.total_retrans {
            return 0;
        }
        if self.reord_seen > 0 && st.flag & FLAG_DSACK_TLP == 0 {
            self.rack.dsack_seen = true;
        }
        st.flag |= FLAG_DSACKING_ACK;
        st.sack_delivered += dup_segs;
        dup_segs
    }

    /// `tcp_sacktag_one`: the per-segment scoreboard update.
    #[allow(clippy::too_many_arguments)]
    fn sacktag_one(
        &mut self,
        st: &mut SackState,
        mut sacked: u8,
        start_seq: SeqNum,
        end_seq: SeqNum,
        dup_sack: bool,
        xmit_time: Instant,
        idx: u32,
        prior_fackets: u32,
    ) -> u8 {
        // A D-SACK for a retransmitted segment: one spurious retransmission.
        if dup_sack && sacked & RETRANS != 0 {
            self.undo.dsack_retrans(end_seq);
            if sacked & SACKED_ACKED != 0 {
                if start_seq.before(st.reord) {
                    st.reord = start_seq;
                }
                st.reord_pkts = st.reord_pkts.min(idx);
            }
        }
        if !end_seq.after(self.snd_una) {
            return sacked;
        }
        if sacked & SACKED_ACKED == 0 {
            self.rack_advance(sacked, end_seq, xmit_time);
            if sacked & SACKED_RETRANS != 0 {
                // A retransmission was SACKed: it is out of the network.
                if sacked & LOST != 0 {
                    sacked &= !(LOST | SACKED_RETRANS);
                    self.scoreboard.lost_out = self.scoreboard.lost_out.saturating_sub(1);
                    self.scoreboard.retrans_out = self.scoreboard.retrans_out.saturating_sub(1);
                }
            } else {
                if sacked & RETRANS == 0 {
                    // A never-retransmitted segment SACKed below the
                    // highest SACK: it was reordered.
                    if start_seq.before(self.highest_sack_seq()) && start_seq.before(st.reord) {
                        st.reord = start_seq;
                    }
                    // 3.x: "If it was in a hole, we detected reordering."
                    if idx < prior_fackets {
                        st.reord_pkts = st.reord_pkts.min(idx);
                    }
                    if !end_seq.after(self.high_seq) {
                        st.flag |= FLAG_ORIG_SACK_ACKED;
                    }
                    if st.first_sackt.is_none() {
                        st.first_sackt = Some(xmit_time);
                    }
                    st.last_sackt = Some(xmit_time);
                }
                if sacked & LOST != 0 {
                    sacked &= !LOST;
                    self.scoreboard.lost_out = self.scoreboard.lost_out.saturating_sub(1);
                }
            }
            sacked |= SACKED_ACKED;
            st.flag |= FLAG_DATA_SACKED;
            st.sack_delivered += 1;
            self.scoreboard.sacked(start_seq, end_seq);
        }
        // D-SACK of a retransmission we still count in flight: it left.
        if dup_sack && sacked & SACKED_RETRANS != 0 {
            sacked &= !SACKED_RETRANS;
            self.scoreboard.retrans_out = self.scoreboard.retrans_out.saturating_sub(1);
        }
        sacked
    }

    /// `tcp_check_sack_reordering` (≥4.15): a hole below the highest SACK
    /// was filled by an original transmission; raise `reordering` to the
    /// distance in packets, capped by tcp_max_reordering.
    pub(super) fn check_sack_reordering(&mut self, low_seq: SeqNum, ts: bool) {
        let fack = self.highest_sack_seq();
        if !low_seq.before(fack) {
            return;
        }
        let mss = self.tp.mss_cache.max(1);
        let metric = fack - low_seq;
        if metric > self.reordering.saturating_mul(mss) {
            self.reordering = metric.div_ceil(mss).min(self.cfg.tcp_max_reordering);
        }
        self.reord_seen += 1;
        self.tp.mib.inc(if ts { Mib::TcpExtTCPTSReorder } else { Mib::TcpExtTCPSACKReorder });
    }

    // ------------------------------------------------------------------
    // tcp_clean_rtx_queue
    // ------------------------------------------------------------------

    /// `tcp_clean_rtx_queue`: drop cumulatively acknowledged segments,
    /// take the RTT sample, detect reordering, call `pkts_acked`.
    fn tcp_clean_rtx_queue(
        &mut self,
        now: Instant,
        prior_snd_una: SeqNum,
        prior_fack: SeqNum,
        sack: &mut SackState,
        flag: &mut u32,
    ) {
        let prior_sacked = self.scoreboard.sacked_out;
        let mut first_ackt: Option<Instant> = None;
        let mut last_ackt: Option<Instant> = None;
        let mut reord = self.snd_nxt;
        // SACK tagging is done with its reordering check; from here the
        // 3.x packet index counts cumulatively acked holes.
        sack.reord_pkts = u32::MAX;
        let mut pkts_acked = 0u32;
        let ece = *flag & FLAG_ECE != 0;
        let una = self.snd_una;

        while let Some(head) = self.rtx.head() {
            if !head.end_seq.before_eq(una) {
                // Partially acknowledged (only after MSS changes): trim.
                if head.seq.before(una) {
                    self.rtx.trim_head(una);
                }
                break;
            }
            let mut skb = match self.rtx.pop_head() {
                Some(s) => s,
                None => break,
            };
            let sacked = skb.sacked;
            if sacked & RETRANS != 0 {
                if sacked & SACKED_RETRANS != 0 {
                    self.scoreboard.retrans_out = self.scoreboard.retrans_out.saturating_sub(1);
                }
                *flag |= FLAG_RETRANS_DATA_ACKED;
            } else if sacked & SACKED_ACKED == 0 {
                last_ackt = Some(skb.xmit_time);
                if first_ackt.is_none() {
                    first_ackt = Some(skb.xmit_time);
                }
                if skb.seq.before(reord) {
                    reord = skb.seq;
                }
                sack.reord_pkts = sack.reord_pkts.min(pkts_acked);
                if !skb.end_seq.after(self.high_seq) {
                    *flag |= FLAG_ORIG_SACK_ACKED;
                }
            }
            if sacked & SACKED_ACKED != 0 {
                self.scoreboard.sacked_out = self.scoreboard.sacked_out.saturating_sub(1);
            } else if self.negotiated.sack_ok {
                self.count_delivered(1, ece);
                self.rack_advance(sacked, skb.end_seq, skb.xmit_time);
            }
            if sacked & LOST != 0 {
                self.scoreboard.lost_out = self.scoreboard.lost_out.saturating_sub(1);
            }
            self.scoreboard.packets_out = self.scoreboard.packets_out.saturating_sub(1);
            pkts_acked += 1;
            // tcp_rate_skb_delivered for every cumulatively acked skb (a
            // SACKed one was already used), SACK or not.
            let d = DeliveredSkb {
                tx_mstamp_us: skb.xmit_time.as_micros(),
                end_seq: skb.end_seq,
                retrans: sacked & RETRANS != 0,
                sacked_acked: sacked & SACKED_ACKED != 0,
            };
            self.rate.skb_delivered(&mut skb.tx, &d, &mut sack.rs);
            if skb.syn {
                *flag |= FLAG_SYN_ACKED;
            } else {
                *flag |= FLAG_DATA_ACKED;
            }
            self.scoreboard.unlinked(skb.seq);
        }
        if self.scoreboard.retransmit_hint.before(self.snd_una) {
            self.scoreboard.retransmit_hint = self.snd_una;
        }
        if self.rtx.head().is_some_and(|h| h.is(SACKED_ACKED)) {
            *flag |= FLAG_SACK_RENEGING;
        }

        let us = |t: Option<Instant>| t.map(|t| now.saturating_since(t).as_micros() as i64).unwrap_or(-1);
        let mut seq_rtt_us = us(first_ackt);
        let mut ca_rtt_us = us(last_ackt);
        let mut sack_rtt_us = -1;
        if sack.first_sackt.is_some() {
            sack_rtt_us = us(sack.first_sackt);
            ca_rtt_us = us(sack.last_sackt);
        }
        // Karn: no sequence RTT when retransmitted data was acknowledged.
        if *flag & FLAG_RETRANS_DATA_ACKED != 0 {
            seq_rtt_us = -1;
            if sack.first_sackt.is_none() {
                ca_rtt_us = -1;
            }
        }
        // FLAG_ACK_MAYBE_DELAYED: "Conservatively mark a delayed ACK. It's
        // typically from a lone runt packet over the round trip to a
        // receiver w/o out-of-order or CE events." Read by the rate sample
        // (BBR's min RTT filter).
        let maybe_delayed = first_ackt.is_some()
            && *flag & FLAG_RETRANS_DATA_ACKED == 0
            && pkts_acked == 1
            && prior_sacked == 0
            && (self.snd_una - prior_snd_una) < self.tp.mss_cache
            && sack.rs.prior_delivered.wrapping_add(1) == self.tp.delivered
            && *flag & (FLAG_CA_ALERT | FLAG_SYN_ACKED) == 0;
        sack.rs.is_ack_delayed = maybe_delayed;
        let (rtt_update, rs_rtt_us) = self.ack_update_rtt(*flag, seq_rtt_us, sack_rtt_us, ca_rtt_us);
        // tcp_ack_update_rtt: "RTT of last (S)ACKed packet (or -1)".
        sack.rs.rtt_us = rs_rtt_us;

        if *flag & FLAG_ACKED != 0 {
            *flag |= FLAG_SET_XMIT_TIMER;
            if !self.negotiated.sack_ok {
                self.remove_reno_sacks(pkts_acked, ece);
            } else if self.cfg.ack_era == AckEra::V3_12 {
                // tcp_update_reordering runs in tcp_ack (needs fackets_out).
            } else if reord.before(prior_fack) {
                // A non-retransmitted hole got filled: reordering.
                self.check_sack_reordering(reord, false);
            }
        } else if rtt_update && sack_rtt_us >= 0 {
            // Re-arm the RTO only if the SACK RTT is measured from data
            // sent before the head.
            if let Some(h) = self.rtx.head() {
                if sack_rtt_us > now.saturating_since(h.xmit_time).as_micros() as i64 {
                    *flag |= FLAG_SET_XMIT_TIMER;
                }
            }
        }

        let sample = AckSample { pkts_acked, rtt_us: rs_rtt_us, in_flight: self.packets_in_flight() };
        self.ca_ops().pkts_acked(&sample);

        self.scoreboard.clear_leaks(self.negotiated.sack_ok);
    }

    /// `tcp_ack_update_rtt`: choose the RTT sample (sequence, then SACK,
    /// then timestamp), feed the estimator and min_rtt, reset backoff.
    /// Returns whether the estimator was updated and the ca RTT (`rs->rtt_us`).
    fn ack_update_rtt(&mut self, flag: u32, mut seq_rtt_us: i64, sack_rtt_us: i64, mut ca_rtt_us: i64) -> (bool, i64) {
        if seq_rtt_us < 0 {
            seq_rtt_us = sack_rtt_us;
        }
        if seq_rtt_us < 0 && flag & FLAG_ACKED != 0 {
            if let Some(ecr) = self.rcv_tsecr.filter(|e| *e != 0) {
                // tcp_rtt_tsopt_us
                let us = self.cfg.ts_clock.ticks_to_us(self.ts_now().wrapping_sub(ecr).max(1), self.cfg.hz);
                if us < i32::MAX as u64 {
                    seq_rtt_us = us as i64;
                    ca_rtt_us = seq_rtt_us;
                }
            }
        }
        if seq_rtt_us < 0 {
            return (false, ca_rtt_us);
        }
        let sample = ca_rtt_us.max(0) as u32;
        self.min_rtt.update(self.tp.jiffies, sample, flag, self.cfg.tcp_min_rtt_wlen, self.cfg.hz);
        self.rtt.estimate(seq_rtt_us, self.snd_una, self.snd_nxt);
        self.icsk_backoff = 0;
        (true, ca_rtt_us)
    }

    // ------------------------------------------------------------------
    // Reno (no SACK) duplicate-ACK accounting
    // ------------------------------------------------------------------

    /// `tcp_add_reno_sack`: without SACK, each duplicate ACK stands for
    /// one packet that left the network.
    pub(super) fn add_reno_sack(&mut self, num_dupack: u32, ece: bool) {
        if num_dupack == 0 {
            return;
        }
        let prior_sacked = self.scoreboard.sacked_out;
        self.scoreboard.sacked_out += num_dupack;
        self.check_reno_reordering(0);
        let delivered = self.scoreboard.sacked_out.saturating_sub(prior_sacked);
        if delivered > 0 {
            self.count_delivered(delivered, ece);
        }
    }

    /// `tcp_remove_reno_sacks`: one cumulatively acked packet filled the
    /// hole; the rest were already counted by duplicate ACKs.
    fn remove_reno_sacks(&mut self, acked: u32, ece: bool) {
        if acked > 0 {
            self.count_delivered(acked.saturating_sub(self.scoreboard.sacked_out).max(1), ece);
            self.scoreboard.sacked_out = self.scoreboard.sacked_out.saturating_sub(acked - 1);
        }
        self.check_reno_reordering(acked);
    }

    /// `tcp_reset_reno_sack`.
    pub(super) fn reset_reno_sack(&mut self) {
        self.scoreboard.sacked_out = 0;
    }

    /// `tcp_check_reno_reordering` / `tcp_limit_reno_sacked`: more
    /// duplicate ACKs than holes can explain means reordering.
    fn check_reno_reordering(&mut self, addend: u32) {
        let holes = self.scoreboard.lost_out.max(1).min(self.scoreboard.packets_out);
        if self.scoreboard.sacked_out + holes <= self.scoreboard.packets_out {
            return;
        }
        self.scoreboard.sacked_out = self.scoreboard.packets_out - holes;
        self.reordering = (self.scoreboard.packets_out + addend).min(self.cfg.tcp_max_reordering);
        self.reord_seen += 1;
        self.tp.mib.inc(Mib::TcpExtTCPRenoReorder);
    }

    /// Marks `EVER_RETRANS`-aware helper: any retransmission outstanding or
    /// the head was ever retransmitted (`tcp_any_retrans_done`).
    pub(super) fn any_retrans_done(&self) -> bool {
        self.scoreboard.retrans_out > 0 || self.rtx.head().is_some_and(|h| h.is(EVER_RETRANS))
    }
}
