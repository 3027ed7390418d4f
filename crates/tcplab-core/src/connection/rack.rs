//! RACK-TLP (RFC 8985) as Linux implements it: time-based loss detection
//! (net/ipv4/tcp_recovery.c) and the tail loss probe (net/ipv4/tcp_output.c
//! `tcp_schedule_loss_probe` / `tcp_send_loss_probe`, tcp_input.c
//! `tcp_process_tlp_ack`). Linux 6.13 behaviour, and the probe's 3.10–4.9
//! form that `tlp_rule = "v3.10"` selects.

use super::rtx_queue::{LOST, RETRANS, SACKED_RETRANS};
use super::timer::Timer;
use super::Connection;
use crate::cc::CaState;
use crate::config::TlpRule;
use crate::counters::Mib;
use crate::flag::*;
use crate::rtt::{jiffies_to_duration, msecs_to_jiffies, usecs_to_jiffies, usecs_to_jiffies_unclamped};
use crate::time::Instant;
use tcplab_wire::SeqNum;

/// `TCP_RACK_RECOVERY_THRESH`: recoveries a widened reo_wnd persists for.
const TCP_RACK_RECOVERY_THRESH: u8 = 16;
/// `TCP_TIMEOUT_MIN_US`: slack added to the RACK and TLP timers.
const TCP_TIMEOUT_MIN_US: u32 = 2000;
/// `TCP_RACK_STATIC_REO_WND` bit of `net.ipv4.tcp_recovery`.
const TCP_RACK_STATIC_REO_WND: u32 = 0x2;
/// `TCP_RACK_NO_DUPTHRESH` bit of `net.ipv4.tcp_recovery`.
const TCP_RACK_NO_DUPTHRESH: u32 = 0x4;

/// `tp->rack` (include/linux/tcp.h) together with the tail loss probe's
/// fields of `struct tcp_sock` (`tlp_high_seq`, `tlp_retrans`): RACK-TLP is
/// one mechanism (RFC 8985), and this file schedules and settles the probe.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rack {
    /// Send time of the most recently sent segment known delivered.
    pub mstamp: Instant,
    /// RTT of that delivery, µs.
    pub rtt_us: u32,
    pub end_seq: SeqNum,
    /// `tp->delivered` when reo_wnd was last widened.
    pub last_delivered: u32,
    pub reo_wnd_steps: u8,
    pub reo_wnd_persist: u8,
    pub dsack_seen: bool,
    /// New delivery information since the last loss scan.
    pub advanced: bool,
    /// `tp->tlp_high_seq`: snd_nxt when the outstanding loss probe was
    /// sent; `None` where Linux has 0 (no probe outstanding).
    pub tlp_high_seq: Option<SeqNum>,
    /// `tp->tlp_retrans`: the outstanding probe was a retransmission.
    pub tlp_retrans: bool,
    /// The probe timer fired; the output path sends the probe
    /// (`tcp_send_loss_probe` runs from `poll_transmit`).
    pub tlp_pending: bool,
}

impl Default for Rack {
    fn default() -> Self {
        Rack {
            mstamp: Instant::ZERO,
            rtt_us: 0,
            end_seq: SeqNum(0),
            last_delivered: 0,
            reo_wnd_steps: 1,
            reo_wnd_persist: 0,
            dsack_seen: false,
            advanced: false,
            tlp_high_seq: None,
            tlp_retrans: false,
            tlp_pending: false,
        }
    }
}

impl Rack {
    /// A retransmitted loss probe is outstanding: `tcp_init_undo` counts it
    /// as one more undoable retransmission.
    pub(super) fn tlp_retrans_outstanding(&self) -> bool {
        self.tlp_high_seq.is_some() && self.tlp_retrans
    }
}

/// `tcp_skb_sent_after`: was (t1, seq1) sent after (t2, seq2)?
#[inline]
fn sent_after(t1: Instant, t2: Instant, seq1: SeqNum, seq2: SeqNum) -> bool {
    t1 > t2 || (t1 == t2 && seq1.after(seq2))
}

impl Connection {
    /// `tcp_is_rack`: RACK loss detection is on (`tcp_recovery & 1`).
    pub(super) fn rack_enabled(&self) -> bool {
        self.cfg.tcp_recovery & 0x1 != 0 && self.negotiated.sack_ok
    }

    /// `tcp_rack_advance`: a segment sent at `xmit_time` was (S)ACKed.
    /// An ambiguous retransmission whose RTT is below min_rtt is skipped:
    /// the ACK is probably for the original.
    pub(super) fn rack_advance(&mut self, sacked: u8, end_seq: SeqNum, xmit_time: Instant) {
        let rtt_us = self.tp.now.saturating_since(xmit_time).as_micros() as u32;
        if rtt_us < self.min_rtt.get() && sacked & RETRANS != 0 {
            return;
        }
        self.rack.advanced = true;
        self.rack.rtt_us = rtt_us;
        if sent_after(xmit_time, self.rack.mstamp, end_seq, self.rack.end_seq) {
            self.rack.mstamp = xmit_time;
            self.rack.end_seq = end_seq;
        }
    }

    /// `tcp_rack_reo_wnd`: no reordering window before any reordering was
    /// seen once in recovery or past dupthresh; else min_rtt/4 per step,
    /// at most srtt.
    fn rack_reo_wnd(&self) -> u32 {
        if self.reord_seen == 0 {
            if self.tp.ca_state >= CaState::Recovery {
                return 0;
            }
            if self.scoreboard.sacked_out >= self.reordering && self.cfg.tcp_recovery & TCP_RACK_NO_DUPTHRESH == 0 {
                return 0;
            }
        }
        let min_rtt = self.min_rtt.get();
        let min_rtt = if min_rtt == u32::MAX { 0 } else { min_rtt };
        // The kernel's u32 product wraps with a huge min_rtt (forged
        // timestamps; found by fuzzing: regression-rack-overflow).
        ((min_rtt >> 2).wrapping_mul(self.rack.reo_wnd_steps as u32)).min(self.rtt.srtt_us() >> 3)
    }

    /// `tcp_rack_skb_timeout`: µs left before the segment at `xmit_time`
    /// counts as lost.
    fn rack_skb_timeout(&self, xmit_time: Instant, reo_wnd: u32) -> i64 {
        self.rack.rtt_us as i64 + reo_wnd as i64 - self.tp.now.saturating_since(xmit_time).as_micros() as i64
    }

    /// `tcp_rack_detect_loss`: walk transmissions in send order up to the
    /// RACK point; those older than RTT + reo_wnd are lost. Returns the
    /// longest remaining wait, µs (0 = none).
    fn rack_detect_loss(&mut self) -> u32 {
        let mut reo_timeout = 0u32;
        let reo_wnd = self.rack_reo_wnd();
        let mut cur = self.rtx.tsorted_first();
        while let Some(idx) = cur {
            let next = self.rtx.tsorted_next(idx);
            let Some(skb) = self.rtx.get(idx) else { break };
            // Skip ones marked lost but not yet retransmitted.
            if skb.is(LOST) && !skb.is(SACKED_RETRANS) {
                cur = next;
                continue;
            }
            if !sent_after(self.rack.mstamp, skb.xmit_time, self.rack.end_seq, skb.end_seq) {
                break;
            }
            let remaining = self.rack_skb_timeout(skb.xmit_time, reo_wnd);
            if remaining <= 0 {
                self.scoreboard.mark_skb_lost(&mut self.rtx, idx, &mut self.tp.mib);
                self.rtx.tsorted_unlink(idx);
            } else {
                reo_timeout = reo_timeout.max(remaining.min(u32::MAX as i64) as u32);
            }
            cur = next;
        }
        reo_timeout
    }

    /// `tcp_rack_mark_lost`: after new deliveries, scan; arm the
    /// reordering timer for segments not yet overdue. Returns whether it
    /// armed the timer.
    pub(super) fn rack_mark_lost(&mut self) -> bool {
        if !self.rack.advanced {
            return false;
        }
        self.rack.advanced = false;
        let timeout = self.rack_detect_loss();
        if timeout > 0 {
            // Capped by the RTO (≤ TCP_RTO_MAX) whether or not the clamp hit.
            // 6.12 rounds the sum once ("tcp: use TCP_TIMEOUT_MIN_US"):
            // at HZ 250 a 25 ms remainder is 7 jiffies, not 7 + 1 (or the
            // older 7 + TCP_TIMEOUT_MIN).
            //= linux:v6.12:net/ipv4/tcp_recovery.c#tcp_rack_mark_lost
            let j = usecs_to_jiffies(timeout.saturating_add(TCP_TIMEOUT_MIN_US), self.cfg.hz);
            let d = jiffies_to_duration(j, self.cfg.hz).min(self.rtt.rto());
            self.reset_xmit_timer(Timer::ReoTimeout, self.tp.now + d);
        }
        timeout > 0
    }

    /// `tcp_rack_update_reo_wnd`: widen reo_wnd by one step per round trip
    /// in which a D-SACK showed a spurious retransmission; shrink back
    /// after TCP_RACK_RECOVERY_THRESH recoveries. `prior_delivered` is the
    /// ACK's rate sample's (`rs->prior_delivered`, 0 when it delivered
    /// nothing): the round trip is measured in deliveries, as BBR's are.
    pub(super) fn rack_update_reo_wnd(&mut self, prior_delivered: u32) {
        if self.cfg.tcp_recovery & TCP_RACK_STATIC_REO_WND != 0 || prior_delivered == 0 {
            return;
        }
        if (prior_delivered.wrapping_sub(self.rack.last_delivered) as i32) < 0 {
            self.rack.dsack_seen = false;
        }
        if self.rack.dsack_seen {
            self.rack.reo_wnd_steps = self.rack.reo_wnd_steps.saturating_add(1);
            self.rack.dsack_seen = false;
            self.rack.last_delivered = self.tp.delivered;
            self.rack.reo_wnd_persist = TCP_RACK_RECOVERY_THRESH;
        } else if self.rack.reo_wnd_persist == 0 {
            self.rack.reo_wnd_steps = 1;
        }
    }

    /// `tcp_rack_reo_timeout`: the reordering timer fired.
    pub(super) fn rack_reo_timeout(&mut self, now: Instant) {
        let lost = self.scoreboard.lost;
        let prior_inflight = self.packets_in_flight();
        self.rack_detect_loss();
        if prior_inflight != self.packets_in_flight() {
            if self.tp.ca_state != CaState::Recovery {
                self.enter_recovery(false);
                self.cwnd_reduction(1, self.scoreboard.lost.wrapping_sub(lost), 0, self.prr_out == 0);
            }
            self.rexmit = super::Rexmit::Lost;
        }
        // icsk_pending is still ICSK_TIME_REO_TIMEOUT unless the head was
        // retransmitted: the RTO from the head's transmission.
        if self.timers.pending() != Some(Timer::Retrans) {
            self.rearm_rto_from_head(now);
        }
    }

    // ------------------------------------------------------------------
    // Tail loss probe
    // ------------------------------------------------------------------

    /// `tcp_schedule_loss_probe`: in Open or CWR with SACK, probe after
    /// 2·srtt (+ rto_min with a single packet out), never after the RTO.
    pub(super) fn schedule_loss_probe(&mut self, advancing_rto: bool) -> bool {
        if self.cfg.tlp_rule == TlpRule::V3_10 {
            return self.schedule_loss_probe_v3();
        }
        let er = self.cfg.tcp_early_retrans;
        if (er != 3 && er != 4)
            || self.scoreboard.packets_out == 0
            || !self.negotiated.sack_ok
            || !matches!(self.tp.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let hz = self.cfg.hz;
        let srtt = self.rtt.srtt_us();
        let mut timeout = if srtt > 0 {
            let mut us = srtt >> 2;
            us += if self.scoreboard.packets_out == 1 { self.rtt.rto_min_us() } else { TCP_TIMEOUT_MIN_US };
            // Unclamped: with an RTT of half an hour or more and the RTO
            // already due (no `min` below), the clamp would arm the probe
            // for MAX_JIFFY_OFFSET jiffies instead of the model's ~71 min.
            usecs_to_jiffies_unclamped(us, hz)
        } else {
            crate::rtt::tcp_timeout_init(hz) as u64
        };
        let rto_delta_us = if advancing_rto { self.rtt.rto_us() as i64 } else { self.rto_delta_us() };
        if rto_delta_us > 0 {
            // rto_delta_us ≤ the RTO, far below the clamp.
            timeout = timeout.min(usecs_to_jiffies(rto_delta_us.min(u32::MAX as i64) as u32, hz));
        }
        self.reset_xmit_timer(Timer::LossProbe, self.tp.now + jiffies_to_duration(timeout, hz));
        true
    }

    /// `tcp_schedule_loss_probe` (3.10–4.9): only in place of a pending
    /// RTO, in Open, and when cwnd or the application limits the sender;
    /// after 2·srtt (with one packet out at least 1.5·srtt +
    /// `TCP_DELACK_MAX`, for the peer's delayed ACK), at least 10 ms, and
    /// at the RTO's deadline if that comes first. (The form of 3.15+, which
    /// uses `TCP_TIMEOUT_INIT` without an RTT sample where 3.10–3.14 did
    /// not probe.)
    fn schedule_loss_probe_v3(&mut self) -> bool {
        let Some((Timer::Retrans, rto_at)) = self.timers.pending_at() else { return false };
        if self.cfg.tcp_early_retrans < 3
            || self.scoreboard.packets_out == 0
            || !self.negotiated.sack_ok
            || self.tp.ca_state != CaState::Open
        {
            return false;
        }
        if self.tp.snd_cwnd > self.packets_in_flight() && !self.sq.wq.is_empty() {
            return false;
        }
        let hz = self.cfg.hz;
        let rtt = usecs_to_jiffies(self.rtt.srtt_us() >> 3, hz);
        let mut timeout = if rtt << 1 != 0 { rtt << 1 } else { crate::rtt::tcp_timeout_init(hz) as u64 };
        if self.scoreboard.packets_out == 1 {
            timeout = timeout.max(rtt + (rtt >> 1) + crate::rtt::tcp_delack_max(hz) as u64);
        }
        timeout = timeout.max(msecs_to_jiffies(10, hz));
        let now = self.tp.now;
        let mut at = now + jiffies_to_duration(timeout, hz);
        // "If RTO is shorter, just schedule TLP in its place."
        if at > rto_at && rto_at > now {
            at = rto_at;
        }
        self.reset_xmit_timer(Timer::LossProbe, at);
        true
    }

    /// `tcp_rto_delta_us`: how far in the future the RTO of the head is.
    pub(super) fn rto_delta_us(&self) -> i64 {
        let Some(head) = self.rtx.head() else { return self.rtt.rto_us() as i64 };
        let deadline = head.xmit_time + self.rtt.rto();
        deadline.as_micros() as i64 - self.tp.now.as_micros() as i64
    }

    /// `tcp_send_loss_probe`: the probe timer fired. Send new data if the
    /// window allows, else retransmit the last segment; at most one probe
    /// outstanding.
    pub(super) fn loss_probe_timer(&mut self, now: Instant) {
        // (3.x: only a retransmitted probe waits for the episode's end;
        // send_loss_probe checks.)
        let episode_open = self.rack.tlp_high_seq.is_some() && self.cfg.tlp_rule != TlpRule::V3_10;
        if !episode_open && self.scoreboard.packets_out > 0 {
            self.rack.tlp_pending = true;
        } else {
            self.rearm_rto_from_head(now);
        }
    }

    /// Called by the output path after it sent the probe (`probe_sent`).
    pub(super) fn loss_probe_sent(&mut self, now: Instant, retrans: bool) {
        self.rack.tlp_retrans = retrans;
        // 3.x recorded snd_nxt only for a retransmitted probe.
        if retrans || self.cfg.tlp_rule != TlpRule::V3_10 {
            self.rack.tlp_high_seq = Some(self.snd_nxt);
        }
        self.tp.mib.inc(Mib::TcpExtTCPLossProbes);
        self.timers.stop(Timer::LossProbe);
        self.rearm_rto(now);
    }

    /// `tcp_process_tlp_ack`: did the probe repair a loss?
    pub(super) fn process_tlp_ack(&mut self, ack: SeqNum, flag: u32) {
        let Some(high) = self.rack.tlp_high_seq else { return };
        if self.cfg.tlp_rule == TlpRule::V3_10 {
            self.process_tlp_ack_v3(ack, high, flag);
            return;
        }
        if ack.before(high) {
            return;
        }
        if !self.rack.tlp_retrans {
            // A probe of new data was acknowledged.
            self.rack.tlp_high_seq = None;
        } else if flag & FLAG_DSACK_TLP != 0 {
            // Both the original and the probe arrived: no loss.
            self.rack.tlp_high_seq = None;
        } else if ack.after(high) {
            self.tlp_repaired_loss();
        } else if flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            // Pure dupack: original and probe both arrived.
            self.rack.tlp_high_seq = None;
        }
    }

    /// `tcp_process_tlp_ack` (3.10–4.9): a duplicate ACK of exactly
    /// `tlp_high_seq` ends the episode (original and probe both arrived);
    /// an ACK beyond it ends it with one cwnd reduction unless the ACK
    /// carries any D-SACK.
    fn process_tlp_ack_v3(&mut self, ack: SeqNum, high: SeqNum, flag: u32) {
        if ack == high && flag & (FLAG_SND_UNA_ADVANCED | FLAG_NOT_DUP | FLAG_DATA_SACKED) == 0 {
            self.rack.tlp_high_seq = None;
        } else if ack.after(high) {
            self.rack.tlp_high_seq = None;
            if flag & FLAG_DSACKING_ACK == 0 {
                self.tlp_repaired_loss();
            }
        }
    }

    /// The probe repaired a loss: reduce cwnd once (CWR entered and left
    /// at once), counted as `TCPLossProbeRecovery`.
    fn tlp_repaired_loss(&mut self) {
        self.init_cwnd_reduction();
        self.set_ca_state(CaState::Cwr);
        self.end_cwnd_reduction();
        self.try_keep_open();
        self.tp.mib.inc(Mib::TcpExtTCPLossProbeRecovery);
    }
}
