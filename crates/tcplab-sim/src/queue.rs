//! The output queue of a link direction: drop-tail FIFO with optional ECN
//! marking at a threshold (DCTCP's K, as configured with Linux `red`/`fq`
//! ECN thresholds or a switch's marking threshold).
//!
//! Occupancy counts only the packets *waiting*: the packet being serialized
//! has left the queue (as in Linux, where it belongs to the NIC, and in
//! ns-3's `PointToPointNetDevice`). An arriving packet that finds the
//! serializer idle goes straight to it and never enters the queue.
//!
//! Arrival rules, applied in this order:
//! 1. Drop-tail: dropped when `Packets(n)` and `n` packets are waiting, or
//!    when `Bytes(n)` and waiting bytes plus this packet would exceed `n`.
//! 2. ECN: an accepted ECT(0)/ECT(1) packet is marked CE when the occupancy
//!    it finds on arrival (before it joins) *exceeds* the threshold:
//!    `waiting packets > k` or `waiting bytes > k`. Not-ECT packets are
//!    never marked (RFC 3168 §5: they would have to be dropped instead, and
//!    this queue only drops at its limit); packets already CE stay CE and
//!    are not counted again.
//!
//! The FIFO is a ring (`VecDeque`) of `(packet id, wire bytes)` that grows to
//! its high water mark and then allocates no more.

use crate::config::{Limit, QueueConfig};
use crate::packet::PacketId;
use std::collections::VecDeque;
use tcplab_wire::Ecn;

/// Verdict on an arriving packet.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Admit {
    /// Queued; `mark` = set CE.
    Queued {
        mark: bool,
    },
    Dropped,
}

#[derive(Debug)]
pub(crate) struct DropTailQueue {
    fifo: VecDeque<(PacketId, u32)>,
    /// Waiting bytes (IP packet bytes).
    bytes: u64,
    limit: Limit,
    ecn_threshold: Option<Limit>,
    pub drops: u64,
    pub ce_marks: u64,
    /// Most packets ever waiting.
    pub peak_packets: u64,
}

impl DropTailQueue {
    pub fn new(cfg: &QueueConfig) -> Self {
        let reserve = match cfg.limit {
            Limit::Packets(n) => n.min(4096) as usize,
            Limit::Bytes(n) => (n / 1500).min(4096) as usize,
        };
        DropTailQueue {
            fifo: VecDeque::with_capacity(reserve),
            bytes: 0,
            limit: cfg.limit,
            ecn_threshold: cfg.ecn_threshold,
            drops: 0,
            ce_marks: 0,
            peak_packets: 0,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.fifo.is_empty()
    }

    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        self.fifo.len()
    }

    /// Bytes waiting.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Would a packet of `wire_len` bytes be accepted now?
    #[inline]
    pub fn has_room(&self, wire_len: u32) -> bool {
        match self.limit {
            Limit::Packets(n) => (self.fifo.len() as u64) < n,
            Limit::Bytes(n) => self.bytes + wire_len as u64 <= n,
        }
    }

    /// Applies drop-tail and ECN rules to an arriving packet and queues it
    /// unless dropped. Counts drops and marks.
    #[inline]
    pub fn enqueue(&mut self, id: PacketId, wire_len: u32, ecn: Ecn) -> Admit {
        if !self.has_room(wire_len) {
            self.drops += 1;
            return Admit::Dropped;
        }
        let mark = match self.ecn_threshold {
            Some(_) if !matches!(ecn, Ecn::Ect0 | Ecn::Ect1) => false,
            Some(Limit::Packets(k)) => self.fifo.len() as u64 > k,
            Some(Limit::Bytes(k)) => self.bytes > k,
            None => false,
        };
        if mark {
            self.ce_marks += 1;
        }
        self.fifo.push_back((id, wire_len));
        self.bytes += wire_len as u64;
        self.peak_packets = self.peak_packets.max(self.fifo.len() as u64);
        Admit::Queued { mark }
    }

    /// Removes the head packet: `(id, wire bytes)`.
    #[inline]
    pub fn dequeue(&mut self) -> Option<(PacketId, u32)> {
        let (id, len) = self.fifo.pop_front()?;
        self.bytes -= len as u64;
        Some((id, len))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(limit: Limit, ecn: Option<Limit>) -> DropTailQueue {
        DropTailQueue::new(&QueueConfig { limit, ecn_threshold: ecn })
    }

    #[test]
    fn test_packet_limit_drops_at_the_tail() {
        let mut q = q(Limit::Packets(2), None);
        assert_eq!(q.enqueue(0, 100, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(1, 100, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(2, 100, Ecn::NotEct), Admit::Dropped);
        assert_eq!(q.drops, 1);
        assert_eq!(q.dequeue(), Some((0, 100)));
        assert_eq!(q.enqueue(3, 100, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.dequeue(), Some((1, 100)));
        assert_eq!(q.dequeue(), Some((3, 100)));
        assert_eq!(q.dequeue(), None);
        assert_eq!(q.peak_packets, 2);
    }

    #[test]
    fn test_byte_limit_counts_the_arriving_packet() {
        let mut q = q(Limit::Bytes(3000), None);
        assert_eq!(q.enqueue(0, 1500, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(1, 1500, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.bytes(), 3000);
        // A small packet no longer fits either.
        assert_eq!(q.enqueue(2, 52, Ecn::NotEct), Admit::Dropped);
        q.dequeue();
        assert_eq!(q.enqueue(3, 1501, Ecn::NotEct), Admit::Dropped);
        assert_eq!(q.enqueue(4, 1500, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.drops, 2);
    }

    #[test]
    fn test_ecn_marks_only_ect_above_threshold() {
        let mut q = q(Limit::Packets(100), Some(Limit::Packets(2)));
        // Occupancy on arrival 0, 1, 2: not above K = 2.
        for i in 0..3 {
            assert_eq!(q.enqueue(i, 1500, Ecn::Ect0), Admit::Queued { mark: false });
        }
        // Occupancy 3 > 2: ECT is marked, not-ECT never, CE not recounted.
        assert_eq!(q.enqueue(3, 1500, Ecn::Ect0), Admit::Queued { mark: true });
        assert_eq!(q.enqueue(4, 1500, Ecn::NotEct), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(5, 1500, Ecn::Ect1), Admit::Queued { mark: true });
        assert_eq!(q.enqueue(6, 1500, Ecn::Ce), Admit::Queued { mark: false });
        assert_eq!(q.ce_marks, 2);
    }

    #[test]
    fn test_ecn_byte_threshold() {
        let mut q = q(Limit::Bytes(1_000_000), Some(Limit::Bytes(3000)));
        assert_eq!(q.enqueue(0, 1500, Ecn::Ect0), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(1, 1500, Ecn::Ect0), Admit::Queued { mark: false });
        // 3000 waiting: not above.
        assert_eq!(q.enqueue(2, 1500, Ecn::Ect0), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(3, 1500, Ecn::Ect0), Admit::Queued { mark: true });
    }

    #[test]
    fn test_dropped_packet_is_not_marked() {
        let mut q = q(Limit::Packets(1), Some(Limit::Packets(0)));
        assert_eq!(q.enqueue(0, 100, Ecn::Ect0), Admit::Queued { mark: false });
        assert_eq!(q.enqueue(1, 100, Ecn::Ect0), Admit::Dropped);
        assert_eq!(q.ce_marks, 0);
    }
}
