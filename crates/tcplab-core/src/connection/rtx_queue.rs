//! The retransmit queue: sent, not yet cumulatively acknowledged segments
//! with their per-segment state, like Linux's `tcp_rtx_queue` of skbs and
//! `struct tcp_skb_cb` (include/net/tcp.h).
//!
//! Segments are contiguous in sequence space and leave only from the head,
//! so a ring buffer ordered by sequence number gives O(1) append and
//! removal and O(log n) lookup by sequence number; per-ACK work is bounded
//! by what the ACK covers, never by the window size.

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
    /// `tp->delivered` when this was (re)sent (rate sampling, RACK).
    pub tx_delivered: u32,
}

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
}

#[derive(Clone, Debug, Default)]
pub struct RtxQueue {
    q: VecDeque<Skb>,
}

impl RtxQueue {
    pub fn with_capacity(n: usize) -> Self {
        RtxQueue { q: VecDeque::with_capacity(n) }
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
    #[inline]
    pub fn tail(&self) -> Option<&Skb> {
        self.q.back()
    }
    #[inline]
    pub fn push(&mut self, skb: Skb) {
        self.q.push_back(skb);
    }
    #[inline]
    pub fn pop_head(&mut self) -> Option<Skb> {
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
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Skb> + ExactSizeIterator {
        self.q.iter()
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

    fn skb(seq: u32, len: u32) -> Skb {
        Skb {
            seq: SeqNum(seq),
            end_seq: SeqNum(seq.wrapping_add(len)),
            sacked: 0,
            syn: false,
            fin: false,
            xmit_time: Instant::ZERO,
            tx_delivered: 0,
        }
    }

    #[test]
    fn test_lookup_by_seq_across_wrap() {
        let mut q = RtxQueue::default();
        let base = u32::MAX - 1500;
        for i in 0..4 {
            q.push(skb(base.wrapping_add(i * 1000), 1000));
        }
        assert_eq!(q.index_of(SeqNum(base.wrapping_add(2000))), Some(2));
        assert_eq!(q.index_after(SeqNum(base.wrapping_add(2500))), 2);
        assert_eq!(q.index_after(SeqNum(base.wrapping_add(4000))), 4);
        assert_eq!(q.index_of(SeqNum(base.wrapping_add(2500))), None);
    }
}
