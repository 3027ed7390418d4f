//! The event list: a binary min-heap ordered by `(time, insertion seq)`.
//!
//! Two events at the same nanosecond run in the order they were scheduled
//! (smoltcp's netsim orders by `(timestamp, id)` the same way), never by
//! address or hash order, so a run is reproducible bit for bit.
//!
//! The heap is a `Vec` that is reserved up front and only grows to its high
//! water mark: in steady state pushing and popping allocate nothing. Entries
//! are small `Copy` values. What sits in the heap is bounded by the
//! topology, not by the packets in flight: one entry per busy serializer,
//! one per non-empty FIFO pipe (htsim's `Pipe` keeps only its head packet in
//! the event list), one live timer per connection, plus one entry per packet
//! in flight on links with [`Uniform`](crate::config::DelayModel::Uniform)
//! (reordering) delay.

use core::cmp::Ordering;
use std::collections::BinaryHeap;
use tcplab_core::time::Instant;

/// An event list over events of type `E`. A value: any number of them can
/// exist in one process.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    time: u64,
    seq: u64,
    ev: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed, so that std's max-heap pops the earliest `(time, seq)`.
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        other.time.cmp(&self.time).then_with(|| other.seq.cmp(&self.seq))
    }
}

impl<E> EventQueue<E> {
    /// An empty queue with room for `capacity` entries before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(capacity), next_seq: 0 }
    }

    /// Schedules `ev` at `time`; later than every event already scheduled
    /// for the same time.
    #[inline]
    pub fn push(&mut self, time: Instant, ev: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time: time.as_nanos(), seq, ev });
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Instant> {
        self.heap.peek().map(|e| Instant::from_nanos(e.time))
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.heap.pop().map(|e| (Instant::from_nanos(e.time), e.ev))
    }

    /// Removes the earliest event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, E)> {
        match self.heap.peek() {
            Some(e) if e.time <= limit.as_nanos() => self.pop(),
            _ => None,
        }
    }

    /// Entries scheduled (including stale timer entries).
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Events scheduled since creation.
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_events_pop_by_time_then_insertion_order() {
        let mut q = EventQueue::with_capacity(4);
        q.push(Instant::from_nanos(20), 'a');
        q.push(Instant::from_nanos(10), 'b');
        q.push(Instant::from_nanos(20), 'c');
        q.push(Instant::from_nanos(10), 'd');
        q.push(Instant::from_nanos(5), 'e');
        let order: Vec<(u64, char)> = core::iter::from_fn(|| q.pop()).map(|(t, e)| (t.as_nanos(), e)).collect();
        assert_eq!(order, [(5, 'e'), (10, 'b'), (10, 'd'), (20, 'a'), (20, 'c')]);
    }

    #[test]
    fn test_pop_until_respects_limit() {
        let mut q = EventQueue::with_capacity(2);
        q.push(Instant::from_nanos(10), 1);
        q.push(Instant::from_nanos(11), 2);
        assert_eq!(q.pop_until(Instant::from_nanos(10)), Some((Instant::from_nanos(10), 1)));
        assert_eq!(q.pop_until(Instant::from_nanos(10)), None);
        assert_eq!(q.len(), 1);
        assert_eq!(q.peek_time(), Some(Instant::from_nanos(11)));
    }

    #[test]
    fn test_same_time_many_events_keep_fifo_order() {
        let mut q = EventQueue::with_capacity(0);
        for i in 0..1000u32 {
            q.push(Instant::from_nanos(7), i);
        }
        for i in 0..1000u32 {
            assert_eq!(q.pop().map(|(_, e)| e), Some(i));
        }
        assert!(q.is_empty());
    }
}
