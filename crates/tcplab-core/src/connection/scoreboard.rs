//! The SACK scoreboard: the counters of `struct tcp_sock` that sum the
//! retransmit queue's `TCPCB_*` bits (`packets_out`, `sacked_out`,
//! `lost_out`, `retrans_out`, `lost`) and the hints that keep walks of the
//! queue short (`highest_sack`, `lost_skb_hint`/`lost_cnt_hint`,
//! `retransmit_skb_hint`).
//!
//! The per-segment bits live in [`RtxQueue`] (rtx_queue.rs); whoever flips
//! one updates the matching counter here, as tcp_input.c does next to each
//! `TCP_SKB_CB(skb)->sacked` change. The helpers below are the ones that
//! touch only the queue and the counters (`tcp_mark_skb_lost`,
//! `tcp_mark_head_lost`); the rest of the state machine stays in
//! recovery.rs and input.rs.

use super::rtx_queue::{RtxQueue, LOST, SACKED_ACKED, SACKED_RETRANS};
use crate::counters::{Counters, Mib};
use tcplab_wire::SeqNum;

/// The scoreboard counters and hints of `struct tcp_sock`.
#[derive(Clone, Debug)]
pub(super) struct Scoreboard {
    /// `tp->packets_out`: segments in the retransmit queue.
    pub packets_out: u32,
    /// `tp->sacked_out`: SACKed segments (without SACK: duplicate ACKs).
    pub sacked_out: u32,
    /// `tp->lost_out`: segments marked lost.
    pub lost_out: u32,
    /// `tp->retrans_out`: retransmissions in flight.
    pub retrans_out: u32,
    /// `tp->lost`: segments ever marked lost.
    pub lost: u32,
    /// End of the highest SACKed segment (`tp->highest_sack`; read through
    /// [`highest_sack_seq`](Self::highest_sack_seq)).
    pub highest_sack_end: SeqNum,
    /// `lost_skb_hint` (as a sequence number) and `lost_cnt_hint`: where
    /// `tcp_mark_head_lost` resumes and the SACKed segments below it.
    pub lost_hint: Option<(SeqNum, u32)>,
    /// `retransmit_skb_hint`: nothing below this may need retransmission.
    pub retransmit_hint: SeqNum,
}

impl Scoreboard {
    pub(super) fn new(iss: SeqNum) -> Scoreboard {
        Scoreboard {
            packets_out: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            lost: 0,
            highest_sack_end: iss,
            lost_hint: None,
            retransmit_hint: iss,
        }
    }

    /// `tcp_packets_in_flight()` (include/net/tcp.h): packets_out −
    /// `tcp_left_out()` + retrans_out, RFC 6675's "pipe".
    #[inline]
    pub(super) fn in_flight(&self) -> u32 {
        (self.packets_out + self.retrans_out).saturating_sub(self.left_out())
    }

    /// `tcp_left_out()`: segments that left the network (SACKed) or are
    /// presumed to have (lost).
    #[inline]
    pub(super) fn left_out(&self) -> u32 {
        self.sacked_out + self.lost_out
    }

    /// `tcp_highest_sack_seq`: the end of the highest SACKed segment, or
    /// `snd_una` when nothing is SACKed.
    pub(super) fn highest_sack_seq(&self, snd_una: SeqNum, sack_ok: bool) -> SeqNum {
        if self.sacked_out == 0 || !sack_ok {
            snd_una
        } else {
            self.highest_sack_end
        }
    }

    /// The counters of `tcp_sacktag_one` for a newly SACKed segment
    /// `[start_seq, end_seq)`: one more SACKed, the `lost_cnt_hint` kept
    /// consistent below the hint, `highest_sack` advanced.
    pub(super) fn sacked(&mut self, start_seq: SeqNum, end_seq: SeqNum) {
        self.sacked_out += 1;
        if let Some((hint_seq, cnt)) = self.lost_hint {
            if start_seq.before(hint_seq) {
                self.lost_hint = Some((hint_seq, cnt + 1));
            }
        }
        if self.sacked_out == 1 || end_seq.after(self.highest_sack_end) {
            self.highest_sack_end = end_seq;
        }
    }

    /// `tcp_clean_rtx_queue` unlinked the segment at `seq`: a lost hint at
    /// or below it points at nothing any more (`lost_skb_hint = NULL`).
    pub(super) fn unlinked(&mut self, seq: SeqNum) {
        if let Some((hint, _)) = self.lost_hint {
            if !hint.after(seq) {
                self.lost_hint = None;
            }
        }
    }

    /// `tcp_clear_all_retrans_hints` after `tcp_timeout_mark_lost`: marking
    /// restarts from the head, retransmission from `snd_una`.
    pub(super) fn clear_retrans_hints(&mut self, snd_una: SeqNum) {
        self.lost_hint = None;
        self.retransmit_hint = snd_una;
    }

    /// FASTRETRANS_DEBUG (1 by default) in `tcp_clean_rtx_queue`: with
    /// nothing left in flight a SACK connection zeroes counters that
    /// leaked, e.g. a retransmission still flagged SACKED_RETRANS after an
    /// undo and counted again when the RTO resent it ("Leak r=").
    //= linux:v6.13:net/ipv4/tcp_input.c#tcp_clean_rtx_queue
    pub(super) fn clear_leaks(&mut self, sack_ok: bool) {
        if self.packets_out == 0 && sack_ok {
            self.lost_out = 0;
            self.sacked_out = 0;
            self.retrans_out = 0;
        }
    }

    /// The loss marks of `tcp_undo_cwnd_reduction(sk, unmark_loss)`: every
    /// `TCPCB_LOST` is cleared, `lost_out` is 0, the lost hint is reset.
    pub(super) fn unmark_lost(&mut self, rtx: &mut RtxQueue) {
        for skb in rtx.iter_mut() {
            skb.sacked &= !LOST;
        }
        self.lost_out = 0;
        self.lost_hint = None;
    }

    /// `tcp_mark_skb_lost`: count the segment at `idx` lost (once), or a
    /// lost retransmission lost again (`TcpExtTCPLostRetransmit`); pull
    /// `retransmit_skb_hint` back to it. Both count in `tp->lost`
    /// (`tcp_notify_skb_loss_event`): PRR's `newly_lost` and the rate
    /// sample's losses see a retransmission lost again as a new loss.
    pub(super) fn mark_skb_lost(&mut self, rtx: &mut RtxQueue, idx: usize, mib: &mut Counters) {
        let Some(skb) = rtx.get_mut(idx) else { return };
        if skb.is(SACKED_ACKED) {
            return;
        }
        let seq = skb.seq;
        if skb.is(LOST) {
            if skb.is(SACKED_RETRANS) {
                skb.sacked &= !SACKED_RETRANS;
                self.retrans_out = self.retrans_out.saturating_sub(1);
                mib.inc(Mib::TcpExtTCPLostRetransmit);
                self.lost = self.lost.wrapping_add(1);
            }
        } else {
            skb.sacked |= LOST;
            self.lost_out += 1;
            self.lost = self.lost.wrapping_add(1);
        }
        if seq.before(self.retransmit_hint) {
            self.retransmit_hint = seq;
        }
    }

    /// `tcp_mark_head_lost`: mark un-SACKed segments lost from the head
    /// until `packets` SACKed ones were passed (just the head with
    /// `mark_head`), never past `snd_nxt`. Resumes from `lost_skb_hint`, so
    /// that repeated calls cost only the segments newly passed.
    pub(super) fn mark_head_lost(
        &mut self,
        rtx: &mut RtxQueue,
        packets: u32,
        mark_head: bool,
        snd_una: SeqNum,
        snd_nxt: SeqNum,
        mib: &mut Counters,
    ) {
        let (mut idx, mut cnt) = match self.lost_hint {
            Some((seq, cnt)) => {
                if mark_head && seq.after(snd_una) {
                    return;
                }
                match rtx.index_of(seq) {
                    Some(i) => (i, cnt),
                    None => (0, 0),
                }
            }
            None => (0, 0),
        };
        let loss_high = snd_nxt;
        while let Some(skb) = rtx.get(idx) {
            self.lost_hint = Some((skb.seq, cnt));
            if skb.end_seq.after(loss_high) {
                break;
            }
            if skb.is(SACKED_ACKED) {
                cnt += 1;
            }
            if cnt > packets {
                break;
            }
            if !skb.is(LOST) {
                self.mark_skb_lost(rtx, idx, mib);
            }
            if mark_head {
                break;
            }
            idx += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate::SkbTxRate;
    use crate::time::Instant;

    #[test]
    fn test_a_retransmission_lost_again_counts_in_tp_lost_once_more() {
        // Two segments; the first is marked lost, retransmitted, and marked
        // lost again (RACK or an RTO): tp->lost 1 → 2, lost_out stays 1,
        // retrans_out back to 0. Marking it once more without a new
        // retransmission counts nothing; a SACKed segment is never lost.
        let mut q = RtxQueue::default();
        for i in 0..2u32 {
            let s =
                q.new_skb(SeqNum(i * 100), SeqNum(i * 100 + 100), false, false, Instant::ZERO, SkbTxRate::default());
            q.push(s);
        }
        let (mut sb, mut mib) = (Scoreboard::new(SeqNum(0)), Counters::default());
        sb.packets_out = 2;
        sb.mark_skb_lost(&mut q, 0, &mut mib);
        assert_eq!((sb.lost, sb.lost_out), (1, 1));
        q.get_mut(0).unwrap().sacked |= SACKED_RETRANS;
        sb.retrans_out = 1;
        sb.mark_skb_lost(&mut q, 0, &mut mib);
        assert_eq!((sb.lost, sb.lost_out, sb.retrans_out), (2, 1, 0));
        assert_eq!(mib.get(Mib::TcpExtTCPLostRetransmit), 1);
        sb.mark_skb_lost(&mut q, 0, &mut mib);
        assert_eq!(sb.lost, 2);
        q.get_mut(1).unwrap().sacked |= SACKED_ACKED;
        sb.mark_skb_lost(&mut q, 1, &mut mib);
        assert_eq!((sb.lost, sb.lost_out), (2, 1));
    }
}
