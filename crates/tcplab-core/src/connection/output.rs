//! What to send next and how a segment looks (net/ipv4/tcp_output.c,
//! tcp_timer.c): control segments, retransmissions of lost segments
//! (`tcp_xmit_retransmit_queue`), new data under cwnd and the peer's
//! window (`tcp_write_xmit`, with TSO deferral and autosizing deciding
//! the skbs and so the PSH flags, see `skb.rs`), window and resource
//! probes (`tcp_probe_timer`), `TCP_USER_TIMEOUT`, the send-side chrono
//! stats of `tcp_info`, and pure ACKs.
//!
//! `tcp_write_xmit` commits whole skbs at once (the retransmit queue and
//! counters change as the kernel's do when it hands an skb to the device);
//! `poll_transmit` then hands out their MSS segments one per call, before
//! anything else, in the same instant.

use super::rtx_queue::{EVER_RETRANS, LOST, SACKED_ACKED, SACKED_RETRANS, TX_PSH};
use super::skb::{TCP_CHRONO_BUSY, TCP_CHRONO_RWND_LIMITED, TCP_CHRONO_SNDBUF_LIMITED, TCP_CHRONO_UNSPEC};
use super::skb::{TCP_NAGLE_CORK, TCP_NAGLE_OFF, TCP_NAGLE_PUSH};
use super::timer::Timer;
use super::{Connection, Rexmit, TcpState};
use crate::cc::{CaEvent, CaState, PacingStatus};
use crate::counters::Mib;
use crate::time::Instant;
use tcplab_wire::{Ecn, SegmentRepr, SeqNum, TcpFlags, TcpOptions};

/// `MAX_TCP_HEADER + SKB_DATA_ALIGN(sizeof(struct skb_shared_info))` on
/// x86-64: the per-skb overhead `tcp_sndbuf_expand` charges besides the
/// payload.
const SKB_OVERHEAD: u32 = 320 + 320;
/// `SKB_DATA_ALIGN(sizeof(struct sk_buff))` on x86-64.
const SKB_STRUCT: u32 = 256;

/// `TCP_USER_TIMEOUT` in jiffies. The kernel takes
/// `msecs_to_jiffies(user_timeout)` (`tcp_probe_timer`,
/// `tcp_clamp_probe0_to_user_timeout`); the model converts ms·1000 µs,
/// saturating, without the `MAX_JIFFY_OFFSET` clamp. That is the same
/// value up to 4294967 ms (~71 min); past it the model keeps its saturated
/// value. Not the clamped `usecs_to_jiffies`: through `tcp_probe_timer`'s
/// `as i32` its `MAX_JIFFY_OFFSET` would read as -2 and abort at once.
fn user_timeout_jiffies(ms: u32, hz: u32) -> u64 {
    crate::rtt::usecs_to_jiffies_unclamped(ms.saturating_mul(1000), hz)
}

impl Connection {
    /// The next segment to transmit, if any. Call until `None`.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        self.app_output = false;
        if self.xmit_blocked {
            return self.poll_transmit_blocked(now);
        }
        self.next_segment(now)
    }

    /// Every transmission fails locally: the qdisc drops what would go
    /// out. Data was never committed (write_xmit, retransmit); control
    /// segments did their bookkeeping before `queue_xmit` failed, as in
    /// `__tcp_transmit_skb`.
    #[inline(never)]
    fn poll_transmit_blocked(&mut self, now: Instant) -> Option<SegmentRepr> {
        while self.next_segment(now).is_some() {}
        None
    }

    #[inline(always)]
    fn next_segment(&mut self, now: Instant) -> Option<SegmentRepr> {
        self.set_now(now);
        self.sq.unit_continues = false;
        if let Some(rst) = self.rst_pending.take() {
            return Some(*rst);
        }
        if self.active_reset_pending {
            return Some(self.send_active_reset(now));
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
            self.rcv.fill_prior_state_ack(&mut seg, ack, ts_val, &self.negotiated);
            if ece {
                seg.flags.insert(TcpFlags::ECE);
            } else {
                seg.flags.remove(TcpFlags::ECE);
            }
            if self.cc.needs_ecn() && self.negotiated.ecn_ok {
                seg.ecn = Ecn::Ect0;
            }
            self.tp.mib.inc(Mib::TcpOutSegs);
            self.rcv.on_send_ack();
            self.rcv.on_ack_sent(ack, 1, &mut self.timers, &mut self.tp.mib);
            return Some(seg);
        }
        // Segments of skbs already committed to the wire come first.
        if let Some(s) = self.emit_unit(now) {
            return Some(s);
        }
        // The application wrote (or closed): sendmsg builds skbs and
        // pushes them (skb.rs).
        if !self.sq.calls.is_empty() || (self.fin_queued && !self.sq.fin_entailed) {
            self.process_sends(now);
            if let Some(s) = self.emit_unit(now) {
                return Some(s);
            }
        }
        if self.rexmit == Rexmit::New {
            // F-RTO step 2.b (tcp_xmit_recovery): new data first; if none
            // can go, the loss was real after all.
            self.rexmit = Rexmit::Lost;
            if !self.sq.wq.is_empty() {
                self.write_xmit(now, 0, TCP_NAGLE_OFF);
            }
            if !self.snd_nxt.after(self.high_seq) {
                self.frto = false;
            }
            if let Some(s) = self.emit_unit(now) {
                return Some(s);
            }
        }
        if self.rack.tlp_pending {
            self.rack.tlp_pending = false;
            if let Some(s) = self.send_loss_probe(now) {
                return Some(s);
            }
        }
        if self.rto_head_pending || self.scoreboard.lost_out > self.scoreboard.retrans_out {
            if let Some(s) = self.retransmit(now) {
                return Some(s);
            }
        }
        if self.sq.xmit_owed && !self.sq.wq.is_empty() {
            // tcp_data_snd_check → tcp_push_pending_frames, once per input.
            self.write_xmit(now, 0, self.nonagle());
            if let Some(s) = self.emit_unit(now) {
                return Some(s);
            }
        }
        self.check_space();
        if self.ack_check_due {
            self.ack_check_due = false;
            let env = self.rcv_env(false);
            if self.rcv.ack_snd_check(now, &env, &mut self.timers) == super::receiver::AckDecision::Now {
                self.ack_pending = true;
            }
        }
        if self.probe_pending {
            // tcp_xmit_probe_skb: "Use a previous sequence. This should
            // cause the other end to send an ack." (tcp_sequence rejects it,
            // tcp_send_dupack answers with the current window.)
            //= linux:v6.13:net/ipv4/tcp_output.c#tcp_xmit_probe_skb
            self.probe_pending = false;
            let mut seg = self.base_segment(self.snd_una - 1u32);
            self.finish_segment(now, &mut seg, false);
            return Some(seg);
        }
        if self.ack_pending {
            // tcp_send_ack
            self.rcv.on_send_ack();
            let mut seg = self.base_segment(self.snd_nxt);
            self.finish_segment(now, &mut seg, false);
            return Some(seg);
        }
        None
    }

    /// Hands out the next wire segment of a committed transmission: one MSS
    /// of the skb, PSH and FIN on the last one (GSO, `tcp_gso_segment`).
    #[inline(always)]
    fn emit_unit(&mut self, now: Instant) -> Option<SegmentRepr> {
        while self.sq.emit_next < self.rtx.next_id() {
            let id = self.sq.emit_next;
            self.sq.emit_next += 1;
            // Entries cannot leave between commit and emission (same
            // instant, no input); skip defensively if one did.
            let Some(skb) = self.rtx.index_of_id(id).and_then(|i| self.rtx.get(i)).copied() else {
                continue;
            };
            let mut seg = self.base_segment(skb.seq);
            seg.payload_len = skb.len();
            if skb.fin {
                seg.flags.insert(TcpFlags::FIN);
            }
            if skb.is(TX_PSH) {
                seg.flags.insert(TcpFlags::PSH);
            }
            self.sq.unit_continues = !skb.skb_end();
            self.finish_segment(now, &mut seg, false);
            return Some(seg);
        }
        None
    }

    /// Header fields common to every segment we send.
    pub(super) fn base_segment(&self, seq: SeqNum) -> SegmentRepr {
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
    pub(super) fn finish_segment(&mut self, now: Instant, seg: &mut SegmentRepr, retransmission: bool) {
        let ts_val = self.ts_now();
        self.rcv.fill_ack(seg, ts_val, &self.negotiated);
        let needs_ecn = self.cc.needs_ecn() && self.negotiated.ecn_ok;
        if seg.payload_len > 0 && self.negotiated.ecn_ok && !retransmission {
            // tcp_ecn_send: ECT(0) on new data; CWR once after a reduction.
            seg.ecn = Ecn::Ect0;
            if self.ecn_queue_cwr {
                self.ecn_queue_cwr = false;
                seg.flags.insert(TcpFlags::CWR);
            }
        } else if needs_ecn {
            // DCTCP marks every packet ECT (INET_ECN_xmit).
            seg.ecn = Ecn::Ect0;
        }
        if seg.payload_len > 0 {
            // The rest of tcp_event_data_sent (see event_data_sent).
            self.rcv.on_data_sent(now);
            self.data_segs_out += 1;
        }
        self.sq.wstamp = now;
        // __tcp_transmit_skb: `tcp_wstamp_ns = max(tcp_wstamp_ns,
        // tcp_clock_cache)` for every segment, pure ACKs included (data
        // skbs were stamped and paced when committed).
        self.tcp_wstamp_ns = self.tcp_wstamp_ns.max(now.as_nanos());
        if retransmission {
            self.tp.mib.inc(Mib::TcpRetransSegs);
        } else {
            self.tp.mib.inc(Mib::TcpOutSegs);
        }
        if seg.flags.ack() {
            self.rcv.on_ack_sent(seg.ack, 1, &mut self.timers, &mut self.tp.mib);
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
            self.rcv.fill_ack(&mut seg, ts_val, &self.negotiated);
            o.timestamp = seg.options.timestamp;
            o.sack_permitted = self.negotiated.sack_ok;
            o.wscale = self.rcv.offered_wscale();
            if self.negotiated.ecn_ok {
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
        if self.cc.needs_ecn() && (self.ecn_requested || self.negotiated.ecn_ok) {
            seg.ecn = Ecn::Ect0;
        }
        seg.options = o;
        if retrans {
            let packets_out = self.scoreboard.packets_out;
            let (delivered, delivered_ce) = (self.tp.delivered, self.tp.delivered_ce);
            if let Some(h) = self.rtx.head_mut() {
                h.xmit_time = now;
                h.tx = self.rate.skb_sent(now.as_micros(), packets_out, delivered, delivered_ce);
            }
            self.tp.mib.inc(Mib::TcpRetransSegs);
            self.total_retrans += 1;
        } else {
            // tcp_rate_skb_sent at the end of __tcp_transmit_skb.
            let tx = self.rate.skb_sent(now.as_micros(), 0, self.tp.delivered, self.tp.delivered_ce);
            let skb = self.rtx.new_skb(self.iss, self.iss + 1, true, false, now, tx);
            self.rtx.push(skb);
            // Sent here, not through the emission queue.
            self.sq.emit_next = self.rtx.next_id();
            self.scoreboard.packets_out = 1;
            self.snd_nxt = self.iss + 1;
            self.tp.mib.inc(Mib::TcpOutSegs);
            let rto = self.rto_now();
            self.reset_xmit_timer(Timer::Retrans, now + rto);
        }
        if server {
            self.rcv.on_ack_sent(seg.ack, 1, &mut self.timers, &mut self.tp.mib);
        }
        seg
    }

    /// `tcp_event_data_sent`, before the skb counts in flight: the first
    /// transmission with nothing in flight restarts the congestion
    /// control's clock (`CA_EVENT_TX_START`); `lsndtime`.
    fn event_data_sent(&mut self) {
        if self.packets_in_flight() == 0 {
            self.ca_ops().cwnd_event(CaEvent::TxStart);
        }
        self.tp.lsndtime = self.tp.jiffies;
    }

    /// `tcp_xmit_retransmit_queue` (and the RTO's head retransmission):
    /// the lowest lost, not yet retransmitted segment, if cwnd allows.
    fn retransmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        if self.rto_head_pending {
            self.rto_head_pending = false;
            if self.rtx.head().is_some_and(|h| !h.is(SACKED_ACKED)) {
                // tcp_retransmit_skb(sk, head, 1): one segment.
                self.sq.rtx_left = 0;
                if self.xmit_blocked {
                    // "Retransmission failed because of local congestion":
                    // retry after TCP_RESOURCE_PROBE_INTERVAL.
                    self.retransmit_failed(0);
                    self.reset_xmit_timer(Timer::Retrans, now + self.resource_probe_interval());
                    return None;
                }
                return Some(self.retransmit_skb(now, 0, None, 1));
            }
        }
        if self.scoreboard.lost_out <= self.scoreboard.retrans_out {
            return None;
        }
        // tcp_xmit_retransmit_queue: "if (tcp_pacing_check(sk)) break;"
        // before each skb.
        if self.pacing_check() {
            return None;
        }
        if self.packets_in_flight() >= self.tp.snd_cwnd {
            return None;
        }
        let mut idx = self.rtx.index_after(self.scoreboard.retransmit_hint);
        let mut hole_seen = false;
        while let Some(skb) = self.rtx.get(idx) {
            if !hole_seen {
                self.scoreboard.retransmit_hint = skb.seq;
            }
            if self.scoreboard.retrans_out >= self.scoreboard.lost_out {
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
            if self.xmit_blocked {
                // tcp_xmit_retransmit_queue stops at the first failure.
                self.retransmit_failed(idx);
                return None;
            }
            // segs = cwnd - in_flight, at most the TSO autosize.
            let segs = (self.tp.snd_cwnd - self.packets_in_flight()).min(self.tso_segs(self.tp.mss_cache.max(1)));
            return Some(self.retransmit_skb(now, idx, Some(mib), segs));
        }
        None
    }

    /// Which retransmission of one skb the entry at `idx` belongs to, and
    /// whether it ends it: returns the wire PSH of this segment.
    /// `tcp_retransmit_skb(sk, skb, segs)` sends up to `segs` segments of
    /// the skb (`tcp_fragment` splits it after them); `__tcp_transmit_skb`
    /// forces PSH on a multi-segment skb, else the skb's own PSH counts.
    //= linux:v6.18:net/ipv4/tcp_output.c#__tcp_retransmit_skb
    fn rtx_unit_psh(&mut self, idx: usize, segs: u32) -> bool {
        let Some(first) = self.rtx.get(idx).copied() else { return false };
        if self.sq.rtx_left == 0 || self.sq.rtx_next_id != first.id {
            // A new skb retransmission: the run of lost, unsent entries of
            // this skb, at most `segs`.
            let mut n = 0;
            let mut i = idx;
            while let Some(e) = self.rtx.get(i) {
                if n >= segs.max(1) || !e.is(LOST) || e.is(SACKED_ACKED | SACKED_RETRANS) {
                    break;
                }
                n += 1;
                if e.skb_end() {
                    break;
                }
                i += 1;
            }
            self.sq.rtx_len = n.max(1);
            self.sq.rtx_left = self.sq.rtx_len;
        }
        self.sq.rtx_left -= 1;
        self.sq.rtx_next_id = first.id + 1;
        if self.sq.rtx_left > 0 {
            return false;
        }
        let e = self.rtx.get_mut(idx).expect("entry exists");
        let psh = self.sq.rtx_len > 1 || (e.skb_end() && e.psh());
        if !e.skb_end() {
            // tcp_fragment: the sent part ends an skb without PSH.
            e.set_skb_end(false);
        }
        psh
    }

    /// `tcp_send_loss_probe`: new data if the peer's window allows
    /// (regardless of cwnd), else the last segment again.
    ///
    /// Where no probe goes out (`rearm_timer`), `icsk_pending` is still the
    /// loss probe's, so the RTO is re-armed from the head's transmission.
    fn send_loss_probe(&mut self, now: Instant) -> Option<SegmentRepr> {
        let v3 = self.cfg.tlp_rule == crate::config::TlpRule::V3_10;
        if (self.rack.tlp_high_seq.is_some() && !v3) || self.scoreboard.packets_out == 0 {
            self.rearm_rto_from_head(now);
            return None;
        }
        if self.xmit_blocked {
            // The probe's transmission fails: rearm_timer.
            self.rearm_rto_from_head(now);
            return None;
        }
        if !self.sq.wq.is_empty() && self.snd_wnd_test(0) {
            let prior = self.scoreboard.packets_out;
            self.write_xmit(now, 2, TCP_NAGLE_OFF);
            if self.scoreboard.packets_out > prior {
                self.loss_probe_sent(now, false);
                return self.emit_unit(now);
            }
            self.rearm_rto_from_head(now);
            return None;
        }
        if self.rack.tlp_high_seq.is_some() {
            // 3.x: at most one outstanding retransmitted probe.
            self.rearm_rto_from_head(now);
            return None;
        }
        let idx = self.rtx.len().checked_sub(1)?;
        // The last MSS of the last skb (tcp_fragment at (pcount - 1) * mss),
        // with that skb's PSH.
        let psh = self.rtx.get(idx).is_some_and(|e| e.skb_end() && e.psh());
        self.event_data_sent();
        let seg = self.resend_skb(now, idx, psh);
        self.loss_probe_sent(now, true);
        Some(seg)
    }

    /// `__tcp_retransmit_skb`: put a queued segment on the wire again
    /// (without the scoreboard accounting of `tcp_retransmit_skb`).
    fn resend_skb(&mut self, now: Instant, idx: usize, psh: bool) -> SegmentRepr {
        let Some(skb) = self.rtx.get_mut(idx) else {
            return self.base_segment(self.snd_nxt);
        };
        skb.sacked |= EVER_RETRANS;
        skb.xmit_time = now;
        // tcp_rate_skb_sent: a retransmission is sampled from its new send.
        skb.tx =
            self.rate.skb_sent(now.as_micros(), self.scoreboard.packets_out, self.tp.delivered, self.tp.delivered_ce);
        let skb = *skb;
        self.update_skb_after_send(now, skb.len());
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
        if psh && seg.payload_len > 0 {
            seg.flags.insert(TcpFlags::PSH);
        }
        self.finish_segment(now, &mut seg, true);
        seg
    }

    /// `tcp_retransmit_skb`: resend one queued segment, part of a
    /// retransmission of at most `segs` segments of its skb.
    fn retransmit_skb(&mut self, now: Instant, idx: usize, mib: Option<Mib>, segs: u32) -> SegmentRepr {
        if self.rtx.get(idx).is_none() {
            return self.base_segment(self.snd_nxt);
        }
        let psh = self.rtx_unit_psh(idx, segs);
        // __tcp_transmit_skb runs before retrans_out counts the segment.
        self.event_data_sent();
        let seg = self.resend_skb(now, idx, psh);
        if let Some(skb) = self.rtx.get_mut(idx) {
            skb.sacked |= SACKED_RETRANS;
        }
        self.scoreboard.retrans_out += 1;
        let ts_now = self.ts_now();
        self.undo.retransmitted(ts_now);
        if let Some(m) = mib {
            self.tp.mib.inc(m);
        }
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        if idx == 0 && self.timers.pending() != Some(Timer::ReoTimeout) {
            let rto = self.rto_now();
            self.reset_xmit_timer(Timer::Retrans, now + rto);
        }
        seg
    }

    // ------------------------------------------------------------------
    // tcp_write_xmit
    // ------------------------------------------------------------------

    /// `tcp_write_xmit`: send write-queue skbs while cwnd, the peer's
    /// window, Nagle and TSO deferral allow, each split to at most
    /// min(cwnd quota, TSO autosize) segments (`tso_fragment`). Committed
    /// skbs wait in the retransmit queue (from `sq.emit_next`) for
    /// `poll_transmit` to hand out their
    /// segments. `push_one`: 1 = `tcp_push_one` (one skb, no deferral),
    /// 2 = a loss probe (also beyond cwnd). Returns the segments sent.
    //= linux:v6.18:net/ipv4/tcp_output.c#tcp_write_xmit
    pub(super) fn write_xmit(&mut self, now: Instant, push_one: u8, nonagle: u8) -> u32 {
        if !matches!(
            self.state,
            TcpState::Established | TcpState::CloseWait | TcpState::FinWait1 | TcpState::LastAck | TcpState::Closing
        ) {
            return 0;
        }
        if push_one == 0 {
            self.sq.xmit_owed = false;
        }
        let mss = self.tp.mss_cache.max(1);
        let mut max_segs = 0;
        let mut sent = 0;
        let mut is_cwnd_limited = false;
        let mut is_rwnd_limited = false;
        while !self.sq.wq.is_empty() {
            if self.pacing_check() {
                break;
            }
            let mut quota = self.cwnd_test();
            if quota == 0 {
                if push_one == 2 {
                    quota = 1;
                } else {
                    break;
                }
            }
            if max_segs == 0 {
                max_segs = self.tso_segs(mss);
            }
            quota = quota.min(max_segs);
            let len = self.wq_len(0);
            if quota * mss > len {
                self.grow_skb(quota * mss - len);
            }
            let len = self.wq_len(0);
            let head = self.sq.wq[0];
            let is_tail = self.sq.wq.len() == 1;
            let tso_segs = len.div_ceil(mss).max(1);
            if !self.snd_wnd_test(0) {
                is_rwnd_limited = true;
                break;
            }
            if tso_segs == 1 {
                let ng = if is_tail { nonagle } else { TCP_NAGLE_PUSH };
                if !self.nagle_test(len, mss, ng, head.fin) {
                    break;
                }
            } else if push_one == 0
                && self.tso_should_defer(now, len, is_tail, head, max_segs, &mut is_cwnd_limited, &mut is_rwnd_limited)
            {
                break;
            }
            let limit = if tso_segs > 1 { self.mss_split_point(len, mss, quota, nonagle, is_tail) } else { mss };
            if self.xmit_blocked {
                // tcp_transmit_skb failed (NET_XMIT_DROP): local congestion
                // (`tcp_enter_cwr`), nothing sent.
                self.enter_cwr();
                break;
            }
            sent += self.commit_unit(now, len.min(limit), mss, false);
            if push_one != 0 {
                break;
            }
        }
        let j = self.tp.jiffies;
        if is_rwnd_limited {
            self.sq.chrono.start(j, TCP_CHRONO_RWND_LIMITED);
        } else {
            let empty = self.rtx.is_empty() && self.sq.write_queue_empty();
            self.sq.chrono.stop(j, TCP_CHRONO_RWND_LIMITED, empty);
        }
        is_cwnd_limited |= self.packets_in_flight() >= self.tp.snd_cwnd;
        if sent > 0 || is_cwnd_limited {
            self.cwnd_validate(is_cwnd_limited);
        }
        if sent > 0 {
            if push_one != 2 {
                // One loss probe per tail loss episode.
                self.schedule_loss_probe(false);
            }
        } else if self.scoreboard.packets_out == 0 && !self.sq.wq.is_empty() && !self.timers.is_set(Timer::Probe0) {
            // tcp_check_probe_timer: nothing in flight and data waiting.
            let when = self.rtt.rto_backed_off(self.icsk_backoff);
            self.reset_xmit_timer(Timer::Probe0, now + when);
        }
        sent
    }

    /// `tcp_cwnd_test`: segments cwnd allows now, at most half of it, "for
    /// better scheduling, ensure we have at least 2 GSO packets in flight".
    fn cwnd_test(&self) -> u32 {
        let in_flight = self.packets_in_flight();
        let cwnd = self.tp.snd_cwnd;
        if in_flight >= cwnd {
            return 0;
        }
        (cwnd >> 1).max(1).min(cwnd - in_flight)
    }

    /// `tcp_may_send_now`: the head of the write queue could go out now
    /// (`tcp_snd_test`: Nagle, cwnd and the peer's window allow it).
    pub(super) fn may_send_now(&self) -> bool {
        let Some(head) = self.sq.wq.front() else { return false };
        let mss = self.tp.mss_cache.max(1);
        let nonagle = if self.sq.wq.len() == 1 { self.nonagle() } else { TCP_NAGLE_PUSH };
        self.nagle_test(self.wq_len(0), mss, nonagle, head.fin) && self.cwnd_test() > 0 && self.snd_wnd_test(0)
    }

    /// `tcp_snd_wnd_test` for write-queue skb `i`: its first MSS (or all
    /// of it, FIN included) fits in the peer's window.
    fn snd_wnd_test(&self, i: usize) -> bool {
        let Some(skb) = self.sq.wq.get(i) else { return true };
        let mss = self.tp.mss_cache.max(1);
        let len = self.wq_len(i);
        let start = skb.end_seq - len;
        let end = if len > mss { start + mss } else { skb.end_seq + skb.fin as u32 };
        !end.after(self.snd_una + self.snd_wnd)
    }

    /// `tcp_nagle_check`: hold a partial segment while Nagle (or the cork)
    /// says so; Minshall's variant waits only for an unacknowledged runt.
    fn nagle_check(&self, partial: bool, nonagle: u8) -> bool {
        partial
            && (nonagle & TCP_NAGLE_CORK != 0
                || (nonagle == 0
                    && self.scoreboard.packets_out > 0
                    && self.snd_sml.after(self.snd_una)
                    && !self.snd_sml.after(self.snd_nxt)))
    }

    /// `tcp_nagle_test` for a one-segment skb.
    fn nagle_test(&self, len: u32, mss: u32, nonagle: u8, fin: bool) -> bool {
        nonagle & TCP_NAGLE_PUSH != 0 || fin || !self.nagle_check(len < mss, nonagle)
    }

    /// `tcp_mss_split_point`: how much of the head skb one transmission
    /// takes: `max_segs` MSS, less at the window's edge, and for the tail
    /// skb without a partial last segment that Nagle holds.
    fn mss_split_point(&self, len: u32, mss: u32, max_segs: u32, nonagle: u8, is_tail: bool) -> u32 {
        let window = (self.snd_una + self.snd_wnd) - self.snd_nxt;
        let max_len = mss * max_segs;
        if max_len <= window && !is_tail {
            return max_len;
        }
        let needed = len.min(window);
        if max_len <= needed {
            return max_len;
        }
        let partial = needed % mss;
        if self.nagle_check(partial != 0, nonagle) {
            return needed - partial;
        }
        needed
    }

    /// `tcp_tso_should_defer`: hold a multi-segment skb back, expecting an
    /// ACK to allow a bigger one, if the last transmission was within 1 ms,
    /// less than a full TSO skb and less than 1/`tcp_tso_win_divisor` of
    /// the window can go, and the next ACK is due within min(1 ms, srtt/2).
    //= linux:v6.18:net/ipv4/tcp_output.c#tcp_tso_should_defer
    #[allow(clippy::too_many_arguments)]
    fn tso_should_defer(
        &self,
        now: Instant,
        len: u32,
        is_tail: bool,
        skb: super::skb::WSkb,
        max_segs: u32,
        is_cwnd_limited: &mut bool,
        is_rwnd_limited: &mut bool,
    ) -> bool {
        if self.tp.ca_state >= CaState::Recovery {
            return false;
        }
        // "Avoid bursty behavior by allowing defer only if the last write
        // was recent (1 ms)."
        // (Linux reads `tcp_wstamp_ns`; the model's departure stamp is the
        // paced one only for a socket that paces itself.)
        let wstamp =
            if self.tp.pacing_status == PacingStatus::Needed { self.tcp_wstamp_ns } else { self.sq.wstamp.as_nanos() };
        if now.as_nanos() as i64 - wstamp as i64 - 1_000_000 > 0 {
            return false;
        }
        let mss = self.tp.mss_cache.max(1);
        let in_flight = self.packets_in_flight();
        let send_win = (self.snd_una + self.snd_wnd) - self.snd_nxt;
        // The kernel's u32 arithmetic, which wraps with a huge cwnd (found
        // by fuzzing: fuzz/corpus/core_segments/regression-pacing-overflow).
        let cong_win = (self.tp.snd_cwnd - in_flight).wrapping_mul(mss);
        let limit = send_win.min(cong_win);
        if limit >= max_segs.wrapping_mul(mss) {
            return false;
        }
        if !is_tail && limit >= len {
            return false;
        }
        if let Some(chunk) =
            self.snd_wnd.min(self.tp.snd_cwnd.saturating_mul(mss)).checked_div(self.cfg.tcp_tso_win_divisor)
        {
            if limit >= chunk {
                return false;
            }
        } else if limit > 3 * mss {
            // tcp_max_tso_deferred_mss
            return false;
        }
        let Some(head) = self.rtx.head() else { return false };
        // "If next ACK is likely to come too late, ie in more than
        // min(1ms, half srtt), do not defer" (6.18: 2025 fix of "tcp: tso:
        // restore IW10 after TSO autosizing").
        let srtt_ns = self.rtt.srtt_us() as i64 * 125;
        let expected_ack = head.xmit_time.as_nanos() as i64 + srtt_ns;
        let how_far = expected_ack - now.as_nanos() as i64;
        if how_far - (srtt_ns >> 1).min(1_000_000) > 0 {
            return false;
        }
        if cong_win < send_win {
            if cong_win <= len {
                *is_cwnd_limited = true;
                return true;
            }
        } else if send_win <= len {
            *is_rwnd_limited = true;
            return true;
        }
        if skb.fin || skb.eor {
            return false;
        }
        true
    }

    /// Sends the first `take` bytes of the head skb (`tso_fragment` when
    /// less than all of it): retransmit-queue entries of one MSS each, the
    /// last ending the skb with its PSH (the front part of a split skb has
    /// none), `tcp_event_new_data_sent`. `force_psh`: a window probe
    /// (`tcp_write_wakeup`) sets PSH on what it sends. Returns the segments.
    fn commit_unit(&mut self, now: Instant, take: u32, mss: u32, force_psh: bool) -> u32 {
        let head = self.sq.wq[0];
        let whole = take == self.wq_len(0);
        let (psh, fin) = if whole { (head.psh || force_psh, head.fin) } else { (force_psh, false) };
        if whole {
            self.sq.wq.pop_front();
        }
        let seq = self.snd_nxt;
        let pcount = take.div_ceil(mss).max(1);
        self.event_data_sent();
        let prior_packets = self.scoreboard.packets_out;
        // tcp_rate_skb_sent, before packets_out counts the skb: one
        // snapshot for the skb, kept by each of its segments.
        let tx = self.rate.skb_sent(now.as_micros(), prior_packets, self.tp.delivered, self.tp.delivered_ce);
        let mut s = seq;
        let mut left = take;
        for i in 0..pcount {
            let len = left.min(mss);
            left -= len;
            let last = i + 1 == pcount;
            let end = s + len + (last && fin) as u32;
            let mut e = self.rtx.new_skb(s, end, false, last && fin, now, tx);
            if last {
                e.set_skb_end(psh);
                // GSO: PSH only on the last segment; __tcp_transmit_skb
                // forces it on multi-segment skbs.
                if psh || pcount > 1 {
                    e.sacked |= TX_PSH;
                }
            }
            self.rtx.push(e);
            s = end;
        }
        self.snd_nxt = s;
        self.scoreboard.packets_out += pcount;
        // tcp_minshall_update
        if take < pcount * mss {
            self.snd_sml = s;
        }
        if self.in_cwnd_reduction() {
            self.prr_out += pcount;
        }
        if prior_packets == 0 || self.timers.pending() == Some(Timer::Probe0) {
            self.rearm_rto(now);
        }
        self.sq.wstamp = now;
        self.update_skb_after_send(now, take);
        pcount
    }

    /// The departure-time bookkeeping of `__tcp_transmit_skb` and
    /// `tcp_update_skb_after_send` for a data skb of `len` payload bytes
    /// sent now: the stamp catches up with now, then, for a socket that
    /// paces (`sk_pacing_status != SK_PACING_NONE`) with a known rate and
    /// past its first 10 data segments ("Original sch_fq does not pace
    /// first 10 MSS"), advances by `len / sk_pacing_rate`, less up to half
    /// of the catch-up ("take into account OS jitter"). Per skb, as Linux;
    /// the data segments counted are those emitted plus those committed
    /// and waiting to be handed out (this skb's included).
    //= linux:v6.12:net/ipv4/tcp_output.c#tcp_update_skb_after_send
    fn update_skb_after_send(&mut self, now: Instant, len: u32) {
        let prior_wstamp = self.tcp_wstamp_ns;
        self.tcp_wstamp_ns = self.tcp_wstamp_ns.max(now.as_nanos());
        if self.tp.pacing_status == PacingStatus::None {
            return;
        }
        let rate = self.tp.pacing_rate;
        let unemitted = self.rtx.next_id().saturating_sub(self.sq.emit_next);
        let data_segs_out = u64::from(self.data_segs_out) + unemitted;
        if rate != u64::MAX && rate != 0 && data_segs_out >= 10 {
            let mut len_ns = (u128::from(len) * 1_000_000_000 / u128::from(rate)) as u64;
            let credit = self.tcp_wstamp_ns - prior_wstamp;
            len_ns -= (len_ns / 2).min(credit);
            self.tcp_wstamp_ns += len_ns;
        }
    }

    /// `tcp_pacing_check`: a socket that paces itself
    /// (`tcp_needs_internal_pacing`: `SK_PACING_NEEDED`, set by BBR when no
    /// fq qdisc paces it) may not send before `tcp_wstamp_ns`; the pacing
    /// hrtimer is armed for then (`hrtimer_start(&tp->pacing_timer,
    /// tcp_wstamp_ns)` unless queued) and its expiry pushes again.
    //= linux:v6.12:net/ipv4/tcp_output.c#tcp_pacing_check
    fn pacing_check(&mut self) -> bool {
        if self.tp.pacing_status == PacingStatus::Fq {
            // The driver's fq cannot hold an early skb (set_pacing_fq); what
            // stays queued goes out when the driver polls at the stamp.
            // Without EDT it applies TCP Small Queues between polls
            // (tcp_small_queue_check runs before each skb is sent), so an
            // skb is committed, and stamped, only once the one before it
            // has been handed to the driver.
            let hold =
                if self.edt_hold { self.tcp_wstamp_ns > self.tp.now.as_nanos() } else { self.skb_segments_pending() };
            self.sq.xmit_owed |= hold;
            return hold;
        }
        if self.tp.pacing_status != PacingStatus::Needed {
            return false;
        }
        if self.tcp_wstamp_ns <= self.tp.now.as_nanos() {
            return false;
        }
        if !self.timers.is_set(Timer::Pacing) {
            self.timers.set(Timer::Pacing, Instant::from_nanos(self.tcp_wstamp_ns));
        }
        true
    }

    /// `tcp_retransmit_skb` when `__tcp_retransmit_skb` failed locally:
    /// no SACKED_RETRANS, not in flight, but the attempt counts
    /// (`EVER_RETRANS`, `retrans_stamp`, `undo_retrans`) and the packet
    /// was locally congested (`tcp_enter_cwr`).
    fn retransmit_failed(&mut self, idx: usize) {
        self.enter_cwr();
        if let Some(e) = self.rtx.get_mut(idx) {
            e.sacked |= EVER_RETRANS;
        }
        let ts_now = self.ts_now();
        self.undo.retransmitted(ts_now);
    }

    /// `TCP_RESOURCE_PROBE_INTERVAL` (HZ/2).
    fn resource_probe_interval(&self) -> crate::time::Duration {
        crate::rtt::jiffies_to_duration((self.cfg.hz / 2) as u64, self.cfg.hz)
    }

    /// `retransmits_timed_out(sk, .., icsk_user_timeout)`: with
    /// `TCP_USER_TIMEOUT` set, retransmissions began that long ago.
    pub(super) fn user_timeout_expired(&self) -> bool {
        self.user_timeout_ms > 0
            && self.icsk_retransmits > 0
            && self.undo.retrans_stamp != 0
            && self.state.synchronized()
            && self.scoreboard.packets_out > 0
            && self.ts_ms_since(self.undo.retrans_stamp) >= self.user_timeout_ms as i64
    }

    /// `tcp_write_err`: the connection timed out (`ETIMEDOUT`) and is done.
    pub(super) fn write_err(&mut self) {
        self.sk_err = Some(super::TcpError::TimedOut);
        self.enter_closed();
        self.sq.wq.clear();
        self.sq.calls.clear();
        self.sq.emit_next = self.rtx.next_id();
    }

    /// `tcp_clamp_rto_to_user_timeout`: the next RTO fires no later than
    /// the user timeout.
    pub(super) fn clamp_rto_to_user_timeout(&mut self, now: Instant) {
        if self.user_timeout_ms == 0 || self.undo.retrans_stamp == 0 {
            return;
        }
        let Some((Timer::Retrans, at)) = self.timers.pending_at() else { return };
        let elapsed = self.ts_ms_since(self.undo.retrans_stamp);
        let remaining = self.user_timeout_ms as i64 - elapsed;
        let hz = self.cfg.hz;
        let j =
            if remaining <= 0 { 1 } else { crate::rtt::msecs_to_jiffies(remaining.min(u32::MAX as i64) as u32, hz) };
        let clamp = crate::rtt::jiffies_to_duration(j, hz);
        if now + clamp < at {
            self.reset_xmit_timer(Timer::Retrans, now + clamp);
        }
    }

    /// `tcp_probe_timer`: nothing in flight and data waiting, because the
    /// peer's window is closed or transmissions failed locally. Gives up
    /// after `TCP_USER_TIMEOUT` of unanswered probes, else probes.
    //= linux:v6.18:net/ipv4/tcp_timer.c#tcp_probe_timer
    pub(super) fn probe_timer(&mut self, now: Instant) {
        if self.scoreboard.packets_out > 0 || self.sq.write_queue_empty() {
            self.probes_out = 0;
            self.probes_tstamp = None;
            return;
        }
        let j = self.tp.jiffies;
        match self.probes_tstamp {
            None => self.probes_tstamp = Some(j),
            Some(t) => {
                let limit = user_timeout_jiffies(self.user_timeout_ms, self.cfg.hz) as i32;
                if self.user_timeout_ms > 0 && j.wrapping_sub(t) as i32 >= limit {
                    self.write_err();
                    return;
                }
            }
        }
        // max_probes = tcp_retries2 (15)
        if self.probes_out >= 15 {
            self.write_err();
            return;
        }
        self.send_probe0(now);
    }

    /// `tcp_send_probe0`: a window probe (`tcp_write_wakeup`), then the
    /// next one after the backed-off RTO, or after
    /// `TCP_RESOURCE_PROBE_INTERVAL` without backoff when the probe failed
    /// locally; never after the user timeout.
    fn send_probe0(&mut self, now: Instant) {
        let local_failure = !self.write_wakeup(now);
        if self.scoreboard.packets_out > 0 || self.sq.write_queue_empty() {
            self.probes_out = 0;
            self.icsk_backoff = 0;
            self.probes_tstamp = None;
            return;
        }
        self.probes_out = self.probes_out.saturating_add(1);
        let mut when = if !local_failure {
            if self.icsk_backoff < 15 {
                self.icsk_backoff += 1;
            }
            self.rtt.rto_backed_off(self.icsk_backoff)
        } else {
            self.resource_probe_interval()
        };
        // tcp_clamp_probe0_to_user_timeout
        if let (true, Some(t)) = (self.user_timeout_ms > 0, self.probes_tstamp) {
            let elapsed = self.tp.jiffies.wrapping_sub(t).min(i32::MAX as u32) as u64;
            let limit = user_timeout_jiffies(self.user_timeout_ms, self.cfg.hz);
            let remaining = limit.saturating_sub(elapsed).max(2); // TCP_TIMEOUT_MIN
            when = when.min(crate::rtt::jiffies_to_duration(remaining, self.cfg.hz));
        }
        self.reset_xmit_timer(Timer::Probe0, now + when);
    }

    /// `tcp_write_wakeup`: send what the window allows of the head skb, at
    /// most an MSS, with PSH; with the window closed, a zero-window probe
    /// (an ACK). Returns false when the transmission failed locally.
    fn write_wakeup(&mut self, now: Instant) -> bool {
        if self.xmit_blocked {
            self.enter_cwr();
            return false;
        }
        let wnd_end = self.snd_una + self.snd_wnd;
        if !self.sq.wq.is_empty() && self.snd_nxt.before(wnd_end) {
            let mss = self.tp.mss_cache.max(1);
            let len = self.wq_len(0);
            let head = self.sq.wq[0];
            if head.end_seq.after(self.sq.pushed_seq) {
                self.sq.pushed_seq = head.end_seq;
            }
            let seg_size = (wnd_end - self.snd_nxt).min(mss).min(len.max(1));
            // The probe always carries PSH (tcp_fragment, then PSH again).
            if seg_size < len {
                self.sq.wq[0].psh = true;
            }
            self.commit_unit(now, seg_size.min(len), mss, true);
        } else {
            self.probe_pending = true;
            self.tp.mib.inc(Mib::TcpExtTCPWinProbe);
        }
        true
    }

    /// `tcp_cwnd_validate` (v5.18+, "fix cwnd-limited bug for TSO deferral
    /// where we send nothing"): latch whether this window was cwnd-limited
    /// and the most packets it had out; decay an unused cwnd
    /// (`tcp_cwnd_application_limited`, RFC 2861); note a send buffer that
    /// held the application back (`TCP_CHRONO_SNDBUF_LIMITED`).
    //= linux:v6.18:net/ipv4/tcp_output.c#tcp_cwnd_validate
    fn cwnd_validate(&mut self, is_cwnd_limited: bool) {
        if !self.snd_una.before(self.cwnd_usage_seq)
            || is_cwnd_limited
            || (!self.tp.is_cwnd_limited && self.scoreboard.packets_out > self.tp.max_packets_out)
        {
            self.tp.is_cwnd_limited = is_cwnd_limited;
            self.tp.max_packets_out = self.scoreboard.packets_out;
            self.cwnd_usage_seq = self.snd_nxt;
        }
        if self.tp.is_cwnd_limited() {
            self.snd_cwnd_used = 0;
            self.snd_cwnd_stamp = self.tp.jiffies;
        } else {
            self.snd_cwnd_used = self.snd_cwnd_used.max(self.scoreboard.packets_out);
            let idle = self.tp.jiffies.wrapping_sub(self.snd_cwnd_stamp) as i32;
            if self.cfg.tcp_slow_start_after_idle && idle >= self.rtt.rto_jiffies() as i32 {
                self.cwnd_application_limited();
            }
            if self.sq.write_queue_empty() && self.app_nospace && self.state.can_send_data() {
                let j = self.tp.jiffies;
                self.sq.chrono.start(j, TCP_CHRONO_SNDBUF_LIMITED);
            }
        }
    }

    /// `tcp_check_space` → `sk_stream_write_space`: once a third of the
    /// send buffer is free again the application may write
    /// (`SOCK_NOSPACE` clears), which ends a send-buffer-limited period.
    fn check_space(&mut self) {
        if !self.app_nospace {
            return;
        }
        let queued = self.write_seq - self.snd_una;
        let free = self.sk_sndbuf.saturating_sub(queued);
        if free >= queued >> 1 {
            self.app_nospace = false;
            let j = self.tp.jiffies;
            let empty = self.rtx.is_empty() && self.sq.write_queue_empty();
            self.sq.chrono.stop(j, TCP_CHRONO_SNDBUF_LIMITED, empty);
        }
    }

    /// `tcp_clean_rtx_queue`'s `tcp_chrono_stop(sk, TCP_CHRONO_BUSY)`: with
    /// nothing queued or in flight any more, the chrono goes idle.
    pub(super) fn after_ack_chrono(&mut self) {
        if self.sq.chrono.ty != TCP_CHRONO_UNSPEC && self.rtx.is_empty() && self.sq.write_queue_empty() {
            let j = self.tp.jiffies;
            self.sq.chrono.stop(j, TCP_CHRONO_BUSY, true);
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
        if !self.cfg.tcp_slow_start_after_idle || self.scoreboard.packets_out > 0 || !self.state.synchronized() {
            return;
        }
        let delta = self.tp.jiffies.wrapping_sub(self.tp.lsndtime) as i32;
        let rto = self.rtt.rto_jiffies() as i32;
        if delta <= rto || rto <= 0 {
            return;
        }
        self.ca_ops().cwnd_event(CaEvent::CwndRestart);
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
        if self.cfg.so_sndbuf > 0
            || self.packets_in_flight() >= self.tp.snd_cwnd
                && self.state.synchronized()
                && self.scoreboard.packets_out > 0
        {
            return;
        }
        let per_mss =
            (self.tp.mss_cache.max(self.negotiated.mss_clamp) + SKB_OVERHEAD).next_power_of_two() + SKB_STRUCT;
        let nr_segs = self.tp.snd_cwnd.max(self.cfg.initcwnd).max(self.reordering + 1);
        // ca_ops->sndbuf_expand (BBR: 3 windows) or 2.
        let mult = self.cc.sndbuf_expand().unwrap_or(2);
        let sndmem = (u64::from(mult) * nr_segs as u64 * per_mss as u64).min(self.cfg.tcp_wmem[2] as u64) as u32;
        if self.sk_sndbuf < sndmem {
            self.sk_sndbuf = sndmem;
        }
    }
}
