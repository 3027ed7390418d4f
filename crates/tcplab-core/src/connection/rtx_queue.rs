//! The retransmit queue: sent, not yet cumulatively acknowledged segments
//! with their per-segment state, like Linux's `tcp_rtx_queue` of skbs and
//! `struct tcp_skb_cb` (include/net/tcp.h).
//!
//! Segments are contiguous in sequence space and leave only from the head,
//! so a ring buffer ordered by sequence number gives O(1) append and
//! removal and O(log n) lookup by sequence number; per-ACK work is bounded
//! by what the ACK covers, never by the window size.
//!
//! Each segment also gets a stable id (its creation number), so that the
//! send-time ordered list RACK walks (`tp->tsorted_sent_queue`) can be an
//! intrusive doubly linked list over the ring: id − id of the head is the
//! segment's index.

use crate::rate::SkbTxRate;
use crate::time::Instant;
use std::collections::VecDeque;
use tcplab_wire::SeqNum;

/// `TCPCB_SACKED_ACKED`: the segment was SACKed.
pub const SACKED_ACKED: u8 = 0x01;
/// `TCPCB_SACKED_RETRANS`: a retransmission of it is in flight.
pub const SACKED_RETRANS: u8 = 0x02;
/// `TCPCB_LOST`: marked lost, awaiting retransmission.
pub const LOST: u8 = 0x04;
/// `TCPCB_EVER_RETRANS`: retransmitted at least once.
pub const EVER_RETRANS: u8 = 0x80;
/// `TCPCB_RETRANS`.
pub const RETRANS: u8 = SACKED_RETRANS | EVER_RETRANS;
/// Not a `TCPCB_*` bit: this segment ends a Linux skb of the retransmit
/// queue (the last MSS a `tso_fragment` / `tcp_fragment` left in one
/// piece); see `connection/skb.rs`. Kept in `sacked` (bits Linux leaves
/// unused here) so that a segment stays small.
pub const SKB_END: u8 = 0x20;
/// Not a `TCPCB_*` bit: `TCPHDR_PSH` in the `tcp_flags` of the skb this
/// segment ends (only meaningful with [`SKB_END`]).
pub const SKB_PSH: u8 = 0x40;
/// Not a `TCPCB_*` bit: the first transmission of this segment carries
/// PSH on the wire (it ends a transmitted skb that had PSH or more than
/// one segment).
pub const TX_PSH: u8 = 0x10;

/// One transmitted segment (an skb of one packet; the model does not build
/// TSO super-packets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Skb {
    pub seq: SeqNum,
    pub end_seq: SeqNum,
    /// `TCPCB_*` bits.
    pub sacked: u8,
    pub syn: bool,
    pub fin: bool,
    /// Time of the most recent (re)transmission (`skb_mstamp_ns`).
    pub xmit_time: Instant,
    /// `TCP_SKB_CB(skb)->tx`: the delivery state when this was last
    /// (re)sent (`tcp_rate_skb_sent`); `tx.delivered` is also RACK's.
    pub tx: SkbTxRate,
    /// Creation number; see the module docs.
    pub id: u64,
    /// Neighbours in the send-time ordered list, or [`NIL`].
    tsorted_prev: u64,
    tsorted_next: u64,
    in_tsorted: bool,
}

/// No neighbour.
pub const NIL: u64 = u64::MAX;

impl Skb {
    /// Payload bytes.
    #[inline]
    pub fn len(&self) -> u32 {
        (self.end_seq - self.seq) - self.syn as u32 - self.fin as u32
    }
    #[inline]
    pub fn is(&self, bits: u8) -> bool {
        self.sacked & bits != 0
    }
    /// The segment ends an skb ([`SKB_END`]).
    #[inline]
    pub fn skb_end(&self) -> bool {
        self.is(SKB_END)
    }
    /// The skb this segment ends carries PSH ([`SKB_PSH`]).
    #[inline]
    pub fn psh(&self) -> bool {
        self.is(SKB_PSH)
    }
    /// Marks the segment as the end of an skb with or without PSH
    /// (`tso_fragment` / `tcp_fragment`).
    #[inline]
    pub fn set_skb_end(&mut self, psh: bool) {
        self.sacked = (self.sacked & !SKB_PSH) | SKB_END | if psh { SKB_PSH } else { 0 };
    }
}

#[derive(Clone, Debug)]
pub struct RtxQueue {
    q: VecDeque<Skb>,
    /// Id the next pushed segment gets.
    next_id: u64,
    /// Send-time ordered list: oldest and newest transmission.
    ts_head: u64,
    ts_tail: u64,
}

impl Default for RtxQueue {
    fn default() -> Self {
        RtxQueue::with_capacity(0)
    }
}

impl RtxQueue {
    pub fn with_capacity(n: usize) -> Self {
        RtxQueue { q: VecDeque::with_capacity(n), next_id: 0, ts_head: NIL, ts_tail: NIL }
    }

    /// Builds a segment for [`push`](Self::push) with the next id.
    pub fn new_skb(
        &self,
        seq: SeqNum,
        end_seq: SeqNum,
        syn: bool,
        fin: bool,
        xmit_time: Instant,
        tx: SkbTxRate,
    ) -> Skb {
        Skb {
            seq,
            end_seq,
            sacked: 0,
            syn,
            fin,
            xmit_time,
            tx,
            id: self.next_id,
            tsorted_prev: NIL,
            tsorted_next: NIL,
            in_tsorted: false,
        }
    }

    /// The id the next pushed segment gets.
    #[inline]
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    /// Index of the segment with `id`, if still queued.
    #[inline]
    pub fn index_of_id(&self, id: u64) -> Option<usize> {
        let front = self.q.front()?.id;
        let i = id.checked_sub(front)? as usize;
        (i < self.q.len()).then_some(i)
    }

    fn by_id_mut(&mut self, id: u64) -> Option<&mut Skb> {
        let i = self.index_of_id(id)?;
        self.q.get_mut(i)
    }

    /// Appends the segment at `idx` to the send-time list (it was just
    /// (re)transmitted), removing it from its old place first.
    pub fn tsorted_move_tail(&mut self, idx: usize) {
        let Some(id) = self.q.get(idx).map(|s| s.id) else { return };
        self.tsorted_unlink(idx);
        let tail = self.ts_tail;
        if let Some(s) = self.q.get_mut(idx) {
            s.tsorted_prev = tail;
            s.tsorted_next = NIL;
            s.in_tsorted = true;
        }
        if tail == NIL {
            self.ts_head = id;
        } else if let Some(t) = self.by_id_mut(tail) {
            t.tsorted_next = id;
        }
        self.ts_tail = id;
    }

    /// Removes the segment at `idx` from the send-time list (delivered,
    /// or marked lost and awaiting retransmission).
    pub fn tsorted_unlink(&mut self, idx: usize) {
        let Some(s) = self.q.get_mut(idx) else { return };
        if !s.in_tsorted {
            return;
        }
        let (prev, next) = (s.tsorted_prev, s.tsorted_next);
        s.in_tsorted = false;
        s.tsorted_prev = NIL;
        s.tsorted_next = NIL;
        if prev == NIL {
            self.ts_head = next;
        } else if let Some(p) = self.by_id_mut(prev) {
            p.tsorted_next = next;
        }
        if next == NIL {
            self.ts_tail = prev;
        } else if let Some(n) = self.by_id_mut(next) {
            n.tsorted_prev = prev;
        }
    }

    /// The oldest transmission still in the send-time list.
    #[inline]
    pub fn tsorted_first(&self) -> Option<usize> {
        if self.ts_head == NIL {
            None
        } else {
            self.index_of_id(self.ts_head)
        }
    }

    /// The transmission after the segment at `idx` in send-time order.
    #[inline]
    pub fn tsorted_next(&self, idx: usize) -> Option<usize> {
        let n = self.q.get(idx)?.tsorted_next;
        if n == NIL {
            None
        } else {
            self.index_of_id(n)
        }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.q.len()
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }
    #[inline]
    pub fn head(&self) -> Option<&Skb> {
        self.q.front()
    }
    #[inline]
    pub fn head_mut(&mut self) -> Option<&mut Skb> {
        self.q.front_mut()
    }
    /// Appends a segment made by [`new_skb`](Self::new_skb) and puts it
    /// at the tail of the send-time list.
    #[inline]
    pub fn push(&mut self, skb: Skb) {
        debug_assert_eq!(skb.id, self.next_id);
        self.next_id += 1;
        if self.q.capacity() == 0 {
            // Room for one segment first, not the four a first push_back
            // would reserve: a connection that stays idle after its SYN or
            // a one-segment request keeps this buffer for its lifetime.
            // Growth from here doubles as usual (once per connection).
            self.q.reserve_exact(1);
        }
        self.q.push_back(skb);
        self.tsorted_move_tail(self.q.len() - 1);
    }
    #[inline]
    pub fn pop_head(&mut self) -> Option<Skb> {
        self.tsorted_unlink(0);
        self.q.pop_front()
    }
    #[inline]
    pub fn get(&self, i: usize) -> Option<&Skb> {
        self.q.get(i)
    }
    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut Skb> {
        self.q.get_mut(i)
    }
    /// Index of the first segment whose `end_seq` is after `seq`, i.e.
    /// the segment containing `seq` or the next one after it.
    #[inline]
    pub fn index_after(&self, seq: SeqNum) -> usize {
        self.q.partition_point(|s| !s.end_seq.after(seq))
    }
    /// Index of the segment starting exactly at `seq`, if any.
    pub fn index_of(&self, seq: SeqNum) -> Option<usize> {
        let i = self.index_after(seq);
        self.q.get(i).filter(|s| s.seq == seq).map(|_| i)
    }
    pub fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Skb> + ExactSizeIterator {
        self.q.iter_mut()
    }
    /// Splits the head segment at `seq` (which lies strictly inside it),
    /// keeping only `[seq, end_seq)`: Linux `tcp_trim_head` for a partially
    /// acknowledged segment.
    pub fn trim_head(&mut self, seq: SeqNum) {
        if let Some(h) = self.q.front_mut() {
            if seq.after(h.seq) && seq.before(h.end_seq) {
                if h.syn {
                    h.syn = false;
                }
                h.seq = seq;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn push(q: &mut RtxQueue, seq: u32, len: u32) {
        let s =
            q.new_skb(SeqNum(seq), SeqNum(seq.wrapping_add(len)), false, false, Instant::ZERO, SkbTxRate::default());
        q.push(s);
    }

    fn tsorted_seqs(q: &RtxQueue) -> Vec<u32> {
        let mut v = vec![];
        let mut i = q.tsorted_first();
        while let Some(idx) = i {
            v.push(q.get(idx).unwrap().seq.0);
            i = q.tsorted_next(idx);
        }
        v
    }

    #[test]
    fn test_tsorted_list_follows_retransmissions_and_acks() {
        let mut q = RtxQueue::default();
        for i in 0..4 {
            push(&mut q, i * 10, 10);
        }
        assert_eq!(tsorted_seqs(&q), vec![0, 10, 20, 30]);
        q.tsorted_move_tail(1); // retransmitted
        assert_eq!(tsorted_seqs(&q), vec![0, 20, 30, 10]);
        q.tsorted_unlink(2); // marked lost
        assert_eq!(tsorted_seqs(&q), vec![0, 30, 10]);
        q.pop_head();
        assert_eq!(tsorted_seqs(&q), vec![30, 10]);
        q.pop_head(); // seq 10 leaves
        assert_eq!(tsorted_seqs(&q), vec![30]);
        push(&mut q, 40, 10);
        assert_eq!(tsorted_seqs(&q), vec![30, 40]);
    }

    #[test]
    fn test_lookup_by_seq_across_wrap() {
        let mut q = RtxQueue::default();
        let base = u32::MAX - 1500;
        for i in 0..4 {
            push(&mut q, base.wrapping_add(i * 1000), 1000);
        }
        assert_eq!(q.index_of(SeqNum(base.wrapping_add(2000))), Some(2));
        assert_eq!(q.index_after(SeqNum(base.wrapping_add(2500))), 2);
        assert_eq!(q.index_after(SeqNum(base.wrapping_add(4000))), 4);
        assert_eq!(q.index_of(SeqNum(base.wrapping_add(2500))), None);
    }
}
