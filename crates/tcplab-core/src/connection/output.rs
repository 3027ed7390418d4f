//! What to send next and how a segment looks (net/ipv4/tcp_output.c):
//! control segments, retransmissions of lost segments
//! (`tcp_xmit_retransmit_queue`), new data under cwnd and the peer's
//! window (`tcp_write_xmit`), and pure ACKs.

use super::rtx_queue::{EVER_RETRANS, LOST, SACKED_ACKED, SACKED_RETRANS};
use super::timer::Timer;
use super::{Connection, Rexmit, TcpState};
use crate::cc::{CaEvent, CaState, CongestionOps};
use crate::counters::Mib;
use crate::time::Instant;
use tcplab_wire::{Ecn, SegmentRepr, SeqNum, TcpFlags, TcpOptions};

/// `MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on
/// x86-64: the per-skb overhead `tcp_sndbuf_expand` charges besides the
/// payload.
const SKB_OVERHEAD: u32 = 320 + 320;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
const SKB_STRUCT: u32 = 256;

impl Connection {
    /// The next segment to transmit, if any. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        self.set_now(now);
        if let Some(rst) = self.rst_pending.take() {
            return Some(rst);
        }
        if self.syn_pending {
            self.syn_pending = false;
            return Some(self.send_syn(now));
        }
        if !self.state.synchronized() {
            return None;
        }
        if let Some((ack, ece)) = self.prior_state_ack.take() {
            // DCTCP: the ACK for the data before a CE-state change.
            let mut seg = self.base_segment(self.snd_nxt);
            let ts_val = self.ts_now();
            self.rcv.fill_ack(&mut seg, ts_val);
            seg.ack = ack;
            if ece {
                seg.flags.insert(TcpFlags::ECE);
            } else {
                seg.flags.remove(TcpFlags::ECE);
            }
            if self.cc.needs_ecn() && self.ecn.ok {
                seg.ecn = Ecn::Ect0;
            }
            self.tp.mib.inc(Mib::TcpOutSegs);
            self.rcv.on_ack_sent(now, ack, 1, &mut self.tp.mib);
            return Some(seg);
        }
        if self.rexmit == Rexmit::New {
            // F-RTO step 2.b: new data first; if none can go, the loss
            // was real after all.
            if let Some(s) = self.send_new_data(now, false) {
                return Some(s);
            }
            if !self.snd_nxt.after(self.high_seq) {
                self.frto = false;
            }
            self.rexmit = Rexmit::Lost;
        }
        if self.tlp_pending {
            self.tlp_pending = false;
            if let Some(s) = self.send_loss_probe(now) {
                return Some(s);
            }
        }
        if let Some(s) = self.retransmit(now) {
            return Some(s);
        }
        if let Some(s) = self.send_new_data(now, false) {
            return Some(s);
        }
        if self.ack_check_due {
            self.ack_check_due = false;
            let env = self.rcv_env();
            if self.rcv.ack_snd_check(now, &env) == super::receiver::AckDecision::Now {
                self.ack_pending = true;
            }
        }
        if self.ack_pending {
            let mut seg = self.base_segment(self.snd_nxt);
            self.finish_segment(now, &mut seg, false);
            return Some(seg);
        }
        None
    }

    /// Header fields common to every segment we send.
    fn base_segment(&self, seq: SeqNum) -> SegmentRepr {
        SegmentRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq,
            flags: TcpFlags::ACK,
            ..Default::default()
        }
    }

    /// Fills ACK, window, options and ECN bits, and does the per-segment
    /// bookkeeping of `__tcp_transmit_skb`.
    fn finish_segment(&mut self, now: Instant, seg: &mut SegmentRepr, retransmission: bool) {
        let ts_val = self.ts_now();
        self.rcv.fill_ack(seg, ts_val);
        let needs_ecn = self.cc.needs_ecn() && self.ecn.ok;
        if seg.payload_len > 0 && self.ecn.ok && !retransmission {
            // tcp_ecn_send: ECT(0) on new data; CWR once after a reduction.
            seg.ecn = Ecn::Ect0;
            if self.ecn.queue_cwr {
                self.ecn.queue_cwr = false;
                seg.flags.insert(TcpFlags::CWR);
            }
        } else if needs_ecn {
            // DCTCP marks every packet ECT (INET_ECN_xmit).
            seg.ecn = Ecn::Ect0;
        }
        if seg.payload_len > 0 {
            // tcp_event_data_sent
            if self.packets_in_flight() == 0 {
                self.sync_ca_ctx();
                self.cc.cwnd_event(&mut self.tp, CaEvent::TxStart);
            }
            self.tp.lsndtime = self.tp.jiffies;
            self.rcv.on_data_sent(now);
            self.data_segs_out += 1;
        }
        if retransmission {
            self.tp.mib.inc(Mib::TcpRetransSegs);
        } else {
            self.tp.mib.inc(Mib::TcpOutSegs);
        }
        if seg.flags.ack() {
            self.rcv.on_ack_sent(now, seg.ack, 1, &mut self.tp.mib);
            self.ack_pending = false;
        }
    }

    /// `tcp_connect` / `tcp_make_synack`: the SYN or SYN-ACK (also when
    /// retransmitted by the timer).
    fn send_syn(&mut self, now: Instant) -> SegmentRepr {
        let server = self.state == TcpState::SynReceived;
        let retrans = !self.rtx.is_empty();
        let mut seg = SegmentRepr {
            src_port: self.local_port,
            dst_port: self.remote_port,
            seq: self.iss,
            flags: TcpFlags::SYN,
            window: self.rcv.syn_window(),
            ..Default::default()
        };
        let mut o = TcpOptions { mss: Some(self.cfg.advmss().min(u16::MAX as u32) as u16), ..Default::default() };
        let ts_val = self.ts_now();
        if server {
            // ack, window and TSecr from the receive half.
            self.rcv.fill_ack(&mut seg, ts_val);
            o.timestamp = seg.options.timestamp;
            o.sack_permitted = self.sack_ok;
            o.wscale = self.rcv.offered_wscale();
            if self.ecn.ok {
                seg.flags.insert(TcpFlags::ECE);
            }
        } else {
            o.sack_permitted = self.cfg.tcp_sack;
            if self.cfg.tcp_timestamps {
                o.timestamp = Some((ts_val, 0));
            }
            o.wscale = self.rcv.offered_wscale();
            // tcp_ecn_send_syn; a retransmitted SYN falls back to non-ECN
            // (tcp_ecn_fallback).
            if self.ecn_requested && !retrans {
                seg.flags.insert(TcpFlags::ECE | TcpFlags::CWR);
            }
            if retrans {
                self.ecn_requested = false;
            }
        }
        if self.cc.needs_ecn() && (self.ecn_requested || self.ecn.ok) {
            seg.ecn = Ecn::Ect0;
        }
        seg.options = o;
        if retrans {
            if let Some(h) = self.rtx.head_mut() {
                h.xmit_time = now;
            }
            self.tp.mib.inc(Mib::TcpRetransSegs);
            self.total_retrans += 1;
        } else {
            let skb = self.rtx.new_skb(self.iss, self.iss + 1, true, false, now, self.tp.delivered);
            self.rtx.push(skb);
            self.packets_out = 1;
            self.snd_nxt = self.iss + 1;
            self.tp.mib.inc(Mib::TcpOutSegs);
            let rto = self.rto_now();
            self.timers.set_xmit(Timer::Retrans, now + rto);
        }
        if server {
            self.rcv.on_ack_sent(now, seg.ack, 1, &mut self.tp.mib);
        }
        seg
    }

    /// `tcp_xmit_retransmit_queue` (and the RTO's head retransmission):
    /// the lowest lost, not yet retransmitted segment, if cwnd allows.
    fn retransmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        if self.rto_head_pending {
            self.rto_head_pending = false;
            if self.rtx.head().is_some_and(|h| !h.is(SACKED_ACKED)) {
                return Some(self.retransmit_skb(now, 0, None));
            }
        }
        if self.lost_out <= self.retrans_out || self.packets_in_flight() >= self.tp.snd_cwnd {
            return None;
        }
        let mut idx = self.rtx.index_after(self.retransmit_hint);
        let mut hole_seen = false;
        while let Some(skb) = self.rtx.get(idx) {
            if !hole_seen {
                self.retransmit_hint = skb.seq;
            }
            if self.retrans_out >= self.lost_out {
                return None;
            }
            if !skb.is(LOST) {
                if !skb.is(SACKED_RETRANS | SACKED_ACKED) {
                    hole_seen = true;
                }
                idx += 1;
                continue;
            }
            if skb.is(SACKED_ACKED | SACKED_RETRANS) {
                idx += 1;
                continue;
            }
            let mib = if self.tp.ca_state != CaState::Loss {
                Mib::TcpExtTCPFastRetrans
            } else {
                Mib::TcpExtTCPSlowStartRetrans
            };
            return Some(self.retransmit_skb(now, idx, Some(mib)));
        }
        None
    }

    /// `tcp_send_loss_probe`: new data if the peer's window allows
    /// (regardless of cwnd), else the last segment again.
    fn send_loss_probe(&mut self, now: Instant) -> Option<SegmentRepr> {
        if self.tlp_high_seq.is_some() || self.packets_out == 0 {
            self.rearm_rto(now);
            return None;
        }
        if let Some(seg) = self.send_new_data(now, true) {
            self.loss_probe_sent(now, false);
            return Some(seg);
        }
        let idx = self.rtx.len().checked_sub(1)?;
        let seg = self.resend_skb(now, idx);
        self.loss_probe_sent(now, true);
        Some(seg)
    }

    /// `__tcp_retransmit_skb`: put a queued segment on the wire again
    /// (without the scoreboard accounting of `tcp_retransmit_skb`).
    fn resend_skb(&mut self, now: Instant, idx: usize) -> SegmentRepr {
        let Some(skb) = self.rtx.get_mut(idx) else {
            return self.base_segment(self.snd_nxt);
        };
        skb.sacked |= EVER_RETRANS;
        skb.xmit_time = now;
        skb.tx_delivered = self.tp.delivered;
        let skb = *skb;
        self.rtx.tsorted_move_tail(idx);
        self.total_retrans += 1;
        let mut seg = self.base_segment(skb.seq);
        seg.payload_len = skb.len();
        if skb.fin {
            seg.flags.insert(TcpFlags::FIN);
        }
        if skb.syn {
            seg.flags = TcpFlags::SYN;
        }
        if seg.payload_len > 0 {
            seg.flags.insert(TcpFlags::PSH);
        }
        self.finish_segment(now, &mut seg, true);
        seg
    }

    /// `tcp_retransmit_skb`: resend one queued segment.
    fn retransmit_skb(&mut self, now: Instant, idx: usize, mib: Option<Mib>) -> SegmentRepr {
        let Some(skb) = self.rtx.get_mut(idx) else {
            return self.base_segment(self.snd_nxt);
        };
        skb.sacked |= SACKED_RETRANS;
        self.retrans_out += 1;
        if self.retrans_stamp == 0 {
            self.retrans_stamp = self.ts_now();
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
        if let Some(m) = mib {
            self.tp.mib.inc(m);
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        let seg = self.resend_skb(now, idx);
        if idx == 0 && self.timers.pending() != Some(Timer::ReoTimeout) {
            let rto = self.rto_now();
            self.timers.set_xmit(Timer::Retrans, now + rto);
        }
        seg
    }

    /// `tcp_write_xmit` for one segment: new data (or the FIN) within cwnd
    /// and the peer's window. A loss probe (`push_one == 2`) may exceed cwnd.
    fn send_new_data(&mut self, now: Instant, probe: bool) -> Option<SegmentRepr> {
        if !matches!(self.state, TcpState::Established | TcpState::CloseWait | TcpState::FinWait1 | TcpState::LastAck | TcpState::Closing) {
            return None;
        }
        let unsent = self.unsent_bytes();
        let fin_unsent = self.fin_queued && self.snd_nxt == self.write_seq;
        if unsent == 0 && !fin_unsent {
            return None;
        }
        // tcp_cwnd_test
        if !probe && self.packets_in_flight() >= self.tp.snd_cwnd {
            self.cwnd_validate(true);
            return None;
        }
        let mss = self.tp.mss_cache;
        let len = unsent.min(mss);
        // tcp_snd_wnd_test: the whole segment must fit in the window.
        let wnd_end = self.snd_una + self.snd_wnd;
        if (self.snd_nxt + len).after(wnd_end) {
            if self.packets_out == 0 && !self.timers.is_set(Timer::Probe0) {
                let when = self.rtt.rto_backed_off(self.icsk_backoff);
                self.timers.set_xmit(Timer::Probe0, now + when);
            }
            return None;
        }
        // Nagle with Minshall's variant (tcp_nagle_check): hold a runt
        // while an earlier runt is unacknowledged.
        if len < mss && !self.nodelay && !self.fin_queued && self.packets_out > 0 && self.snd_sml.after(self.snd_una) {
            return None;
        }
        let seq = self.snd_nxt;
        let fin = self.fin_queued && seq + len == self.write_seq;
        let end_seq = seq + len + fin as u32;
        let prior_packets = self.packets_out;
        let skb = self.rtx.new_skb(seq, end_seq, false, fin, now, self.tp.delivered);
        self.rtx.push(skb);
        self.snd_nxt = end_seq;
        self.packets_out += 1;
        if len < mss {
            self.snd_sml = end_seq;
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        if prior_packets == 0 || self.timers.pending() == Some(Timer::Probe0) {
            self.rearm_rto(now);
        }
        let in_flight = self.packets_in_flight();
        self.cwnd_validate(in_flight >= self.tp.snd_cwnd);
        if !probe {
            // One loss probe per tail loss episode.
            self.schedule_loss_probe(false);
        }

        let mut seg = self.base_segment(seq);
        seg.payload_len = len;
        if fin {
            seg.flags.insert(TcpFlags::FIN);
        }
        if len > 0 && seq + len == self.write_seq {
            seg.flags.insert(TcpFlags::PSH);
        }
        self.finish_segment(now, &mut seg, false);
        Some(seg)
    }

    /// `tcp_cwnd_validate`: remember whether the window was used, and decay
    /// an unused cwnd (`tcp_cwnd_application_limited`, RFC 2861).
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if !self.snd_una.before(self.cwnd_usage_seq) || (is_cwnd_limited && !self.tp.is_cwnd_limited) {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        self.sync_ca_ctx();
        if self.tp.is_cwnd_limited() {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp = self.tp.jiffies;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(self.packets_out);
            let idle = self.tp.jiffies.wrapping_sub(self.snd_cwnd_stamp) as i32;
            if self.cfg.tcp_slow_start_after_idle && idle >= self.rtt.rto_jiffies() as i32 {
                self.cwnd_application_limited();
            }
        }
    }

    /// `tcp_cwnd_application_limited`.
    fn cwnd_application_limited(&mut self) {
        if self.tp.ca_state == CaState::Open && !self.app_nospace {
            let win_used = self.snd_cwnd_used.max(self.cfg.initcwnd);
            if win_used < self.tp.snd_cwnd {
                self.tp.snd_ssthresh = self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2));
                self.tp.snd_cwnd = (self.tp.snd_cwnd + win_used) >> 1;
            }
            self.snd_cwnd_used = 0;
        }
        self.snd_cwnd_stamp = self.tp.jiffies;
    }

    /// `tcp_slow_start_after_idle_check` (include/net/tcp.h), run when the
    /// application queues data: after more than an RTO of silence the
    /// window restarts (`tcp_cwnd_restart`).
    pub(super) fn slow_start_after_idle_check(&mut self) {
        if !self.cfg.tcp_slow_start_after_idle || self.packets_out > 0 || !self.state.synchronized() {
            return;
        }
        let delta = self.tp.jiffies.wrapping_sub(self.tp.lsndtime) as i32;
        let rto = self.rtt.rto_jiffies() as i32;
        if delta <= rto || rto <= 0 {
            return;
        }
        self.sync_ca_ctx();
        self.cc.cwnd_event(&mut self.tp, CaEvent::CwndRestart);
        let restart = self.cfg.initcwnd.min(self.tp.snd_cwnd);
        self.tp.snd_ssthresh = self.tp.snd_ssthresh.max((self.tp.snd_cwnd >> 1) + (self.tp.snd_cwnd >> 2));
        let mut cwnd = self.tp.snd_cwnd;
        let mut d = delta;
        loop {
            d -= rto;
            if d <= 0 || cwnd <= restart {
                break;
            }
            cwnd >>= 1;
        }
        self.tp.snd_cwnd = cwnd.max(restart).max(1);
        self.snd_cwnd_stamp = self.tp.jiffies;
        self.snd_cwnd_used = 0;
    }

    /// `tcp_sndbuf_expand`: grow the send buffer to two windows' worth of
    /// skbs, up to tcp_wmem[2], unless the application fixed SO_SNDBUF.
    pub(super) fn sndbuf_expand(&mut self) {
        if self.cfg.so_sndbuf > 0 || self.packets_in_flight() >= self.tp.snd_cwnd && self.state.synchronized() && self.packets_out > 0 {
            return;
        }
        let per_mss = (self.tp.mss_cache.max(self.mss_clamp) + SKB_OVERHEAD).next_power_of_two() + SKB_STRUCT;
        let nr_segs = self.tp.snd_cwnd.max(self.cfg.initcwnd).max(self.reordering + 1);
        let sndmem = (2u64 * nr_segs as u64 * per_mss as u64).min(self.cfg.tcp_wmem[2] as u64) as u32;
        if self.sk_sndbuf < sndmem {
            self.sk_sndbuf = sndmem;
        }
    }
}
