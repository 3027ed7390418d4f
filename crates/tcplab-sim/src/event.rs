//! The event list: a 4-ary min-heap ordered by `(time, insertion seq)`.
//!
//! Two events at the same nanosecond run in the order they were scheduled
//! (smoltcp's netsim orders by `(timestamp, id)` the same way), never by
//! address or hash order, so a run is reproducible bit for bit. Sequence
//! numbers are unique, so `(time, seq)` is a total order: which event pops
//! next does not depend on the heap's shape, only on the keys.
//!
//! The heap is a `Vec` that is reserved up front and only grows to its high
//! water mark: in steady state pushing and popping allocate nothing. Entries
//! are small `Copy` values. The simulator keeps two such lists, one
//! sequence numbering both ([`Agenda`]). What sits in the links' list is
//! bounded by the topology, not by the packets in flight: one entry per
//! busy serializer, one per non-empty FIFO pipe (htsim's `Pipe` keeps only
//! its head packet in the event list), plus one entry per packet in flight
//! on links with [`Uniform`](crate::config::DelayModel::Uniform)
//! (reordering) delay. The connections' list holds one live timer per
//! connection (and the stale entries of timers re-armed earlier, until
//! their time comes) and the flows' application events.
//!
//! Why not `std::collections::BinaryHeap`: in the benchmark the heap holds
//! fewer than 8 entries nearly always, and std's `pop` (sift to the bottom,
//! then back up, comparing `time` then `seq` with a branch each) cost ~130
//! instructions per event, 14 % of the run. Here the key is compared as one
//! `u128` (`time << 64 | seq`), four children per node halve the depth, and
//! a pop leaves a hole at the root instead of sifting at once: nearly every
//! event schedules another, and that push fills the hole with one sift
//! down from the root, so a pop and a push cost one sift instead of two.
//!
//! # Few entries: a sorted array
//!
//! While it holds few entries (the benchmark's dumbbell: eight link
//! directions' serializers and pipe heads, two connection timers) the list
//! is not a heap but an array sorted by key, latest first: a pop takes the
//! last entry, a push moves the entries with an earlier key up by one
//! (insertion sort's step). Nearly every push is for a time within one
//! packet's serialization of now (the next packet's `TxDone`, the next
//! pipe head), so it passes few entries, and a pop costs no comparison at
//! all; a heap pays a sift of several unpredictable comparisons for every
//! event. Past [`SORTED_MAX`] entries it becomes the large form (a sorted
//! array is already a valid heap once reversed), and back below
//! [`SORTED_MIN`] (one sort). The pop order is the keys' order in both
//! forms.
//!
//! # Many entries: a calendar for the near future, a heap for the rest
//!
//! In the large form an entry due within 65 µs of the last one popped
//! goes to a calendar of 8 ns slots (`calendar.rs`), the rest to the heap;
//! a pop takes the earlier of the two fronts. In a fabric nearly every
//! event is a link's, due within microseconds: the calendar takes them at
//! the cost of a slot and a bitmap word, where the heap spent a quarter of
//! a 32-host leaf-spine run sifting.

use crate::calendar::Calendar;
use tcplab_core::time::Instant;

/// Children per node.
const ARITY: usize = 4;

/// Most entries kept as a sorted array; one more and it becomes a heap.
const SORTED_MAX: usize = 32;
/// A heap that falls to this many entries becomes a sorted array again
/// (well below [`SORTED_MAX`], so that a list near the limit does not
/// convert at every push and pop).
const SORTED_MIN: usize = 8;

/// An event list over events of type `E`. A value: any number of them can
/// exist in one process.
#[derive(Debug)]
pub struct EventQueue<E> {
    /// With `sorted`: by [`Entry::key`], latest first. Otherwise a 4-ary
    /// min-heap by key, except that `heap[0]` is a stale copy of the last
    /// popped entry while `hole` is set (its subtrees are heaps).
    heap: Vec<Entry<E>>,
    /// Without `sorted`: the entries due soon, which stay out of the heap
    /// (`calendar.rs`). Made at the first conversion of a list made
    /// [`with_calendar`](Self::with_calendar).
    near: Option<Calendar<E>>,
    calendar: bool,
    sorted: bool,
    hole: bool,
    next_seq: u64,
}

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    /// `time << 64 | seq`: `(time, seq)` as one integer, the same order,
    /// one comparison.
    key: u128,
    ev: E,
}

impl<E> Entry<E> {
    #[inline(always)]
    fn time(&self) -> u64 {
        (self.key >> 64) as u64
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue with room for `capacity` entries before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(capacity),
            near: None,
            calendar: false,
            sorted: true,
            hole: false,
            next_seq: 0,
        }
    }

    /// Like [`with_capacity`](Self::with_capacity), with a calendar for
    /// the near future once the list is large: for a list of events that
    /// are nearly all due within microseconds (the links'). Not for the
    /// connections' list, whose entries are mostly far (timers): there a
    /// calendar would mostly hold the runs' starts, all at one instant
    /// (100,000 nodes, 4.3 MB more heap at the idle 100,000-flow run's
    /// peak, heaptrack).
    pub fn with_calendar(capacity: usize) -> Self {
        EventQueue { calendar: true, ..Self::with_capacity(capacity) }
    }

    /// Schedules `ev` at `time`; later than every event already scheduled
    /// for the same time.
    ///
    /// Inlined into every caller: the event is then built in registers and
    /// stored into its slot field by field. Out of line, it came through
    /// the stack and was read back with wider loads than the stores that
    /// wrote it, which the CPU cannot forward (a stall on every push: 14 %
    /// of the benchmark's samples, against 6.5 % of its instructions).
    #[inline(always)]
    pub fn push(&mut self, time: Instant, ev: E) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.push_key(key(time, seq), ev);
    }

    /// [`push`](Self::push) with the key made by the caller: the
    /// [`Agenda`]'s lists share one sequence.
    #[inline(always)]
    fn push_key(&mut self, key: u128, ev: E) {
        if self.sorted && self.heap.len() < SORTED_MAX {
            // Insertion sort's step: entries with an earlier key move up
            // by one.
            let mut i = self.heap.len();
            self.heap.push(Entry { key, ev });
            let h = self.heap.as_mut_slice();
            while i > 0 && h[i - 1].key < key {
                h[i] = h[i - 1];
                i -= 1;
            }
            h[i] = Entry { key, ev };
            return;
        }
        self.push_heap(Entry { key, ev });
    }

    /// Past the room reserved up front (the simulator reserves for its
    /// topology) the list grows by a quarter, not by doubling: what
    /// outgrows the reservation is mostly connection timer entries gone
    /// stale (a re-arm for an earlier time leaves the later entry behind),
    /// and a doubled list would hold up to twice its high-water mark,
    /// at 100,000 connections tens of megabytes (issue 15).
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let extra = (self.heap.capacity() / 4).max(1024);
        self.heap.reserve_exact(extra);
    }

    /// [`push`](Self::push) into the large form (converting to it first if
    /// the sorted array is full): the calendar if the entry is due soon,
    /// else the heap.
    #[inline(never)]
    fn push_heap(&mut self, e: Entry<E>) {
        if self.sorted {
            self.make_heap();
        }
        if let Some(near) = self.near.as_mut() {
            if near.insert(e.key, e.ev) {
                return;
            }
        }
        self.push_far(e);
    }

    /// Into the heap.
    #[inline]
    fn push_far(&mut self, e: Entry<E>) {
        if self.hole {
            self.hole = false;
            self.sift_down_from_root(e);
            return;
        }
        let k = e.key;
        let mut i = self.heap.len();
        if i == self.heap.capacity() {
            self.grow();
        }
        self.heap.push(e);
        let h = self.heap.as_mut_slice();
        // Sift up: move parents with a later key down into the hole.
        while i > 0 {
            let p = (i - 1) / ARITY;
            if h[p].key <= k {
                break;
            }
            h[i] = h[p];
            i = p;
        }
        h[i] = e;
    }

    /// Sorted form to the large one: the entries due soon to the calendar,
    /// whose window starts at the earliest entry (a later push for an
    /// earlier time goes to the heap, and still pops in order); the rest,
    /// latest first reversed, is earliest first, which is a min-heap.
    #[cold]
    fn make_heap(&mut self) {
        self.heap.reverse();
        if self.calendar {
            let near = self.near.get_or_insert_with(Calendar::new);
            if let Some(first) = self.heap.first() {
                near.advance(first.key);
            }
            self.heap.retain(|e| !near.insert(e.key, e.ev));
        }
        self.sorted = false;
        self.hole = false;
    }

    /// Large form to sorted (the hole filled first).
    #[cold]
    fn make_sorted(&mut self) {
        self.fill_hole();
        if let Some(near) = self.near.as_mut() {
            let heap = &mut self.heap;
            near.drain(|key, ev| heap.push(Entry { key, ev }));
        }
        self.heap.sort_unstable_by_key(|e| core::cmp::Reverse(e.key));
        self.sorted = true;
    }

    /// Puts `e` in the root's place and sifts it down.
    #[inline]
    fn sift_down_from_root(&mut self, e: Entry<E>) {
        let h = self.heap.as_mut_slice();
        let n = h.len();
        let mut i = 0;
        loop {
            let first = i * ARITY + 1;
            let end = first + ARITY;
            let (m, mk) = if end <= n {
                // All four children: a tournament, no loop.
                let (a, ak) = min_of(first, h[first].key, first + 1, h[first + 1].key);
                let (b, bk) = min_of(first + 2, h[first + 2].key, first + 3, h[first + 3].key);
                min_of(a, ak, b, bk)
            } else if first < n {
                let (mut m, mut mk) = (first, h[first].key);
                for (j, c) in h.iter().enumerate().skip(first + 1) {
                    (m, mk) = min_of(m, mk, j, c.key);
                }
                (m, mk)
            } else {
                break;
            };
            if e.key <= mk {
                break;
            }
            h[i] = h[m];
            i = m;
        }
        h[i] = e;
    }

    /// Fills a hole left by [`pop`](Self::pop) with the last entry.
    #[inline]
    fn fill_hole(&mut self) {
        if self.hole {
            self.hole = false;
            if let Some(last) = self.heap.pop() {
                if !self.heap.is_empty() {
                    self.sift_down_from_root(last);
                }
            }
        }
    }

    /// Time of the earliest event.
    pub fn peek_time(&mut self) -> Option<Instant> {
        self.peek_key().map(|k| Instant::from_nanos((k >> 64) as u64))
    }

    /// Key of the earliest event.
    fn peek_key(&mut self) -> Option<u128> {
        if self.sorted {
            return self.heap.last().map(|e| e.key);
        }
        self.front().map(|(k, _)| k)
    }

    /// The large form's earliest key, and its calendar slot if the
    /// calendar holds it (else the heap's root does).
    #[inline(always)]
    fn front(&mut self) -> Option<(u128, Option<usize>)> {
        self.fill_hole();
        let far = self.heap.first().map(|e| e.key);
        match self.near.as_ref().and_then(|c| c.first()) {
            Some((s, k)) if k < far.unwrap_or(u128::MAX) => Some((k, Some(s))),
            _ => far.map(|f| (f, None)),
        }
    }

    /// Removes the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<(Instant, E)> {
        self.pop_until(Instant::from_nanos(u64::MAX))
    }

    /// Removes the earliest event if it is due at or before `limit`.
    #[inline]
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, E)> {
        self.pop_before(until(limit))
    }

    /// Removes the earliest event if its key is less than `limit`.
    #[inline(always)]
    fn pop_before(&mut self, limit: u128) -> Option<(Instant, E)> {
        if !self.sorted && self.len() <= SORTED_MIN {
            self.make_sorted();
        }
        if self.sorted {
            return match self.heap.last() {
                Some(&top) if top.key < limit => {
                    self.heap.pop();
                    Some((Instant::from_nanos(top.time()), top.ev))
                }
                _ => None,
            };
        }
        // `front`, spelled out: through it (an `Option` of the key and the
        // slot) the 32-host fabric ran 3 % more instructions.
        self.fill_hole();
        let far = self.heap.first().map_or(u128::MAX, |e| e.key);
        if let Some(near) = self.near.as_mut() {
            if let Some((s, k)) = near.first() {
                if k < far {
                    if k >= limit {
                        return None;
                    }
                    let (k, ev) = near.pop_at(s);
                    return Some((Instant::from_nanos((k >> 64) as u64), ev));
                }
            }
            if far < limit {
                near.advance(far);
            }
        }
        match self.heap.first() {
            Some(&top) if top.key < limit => {
                self.hole = true;
                Some((Instant::from_nanos(top.time()), top.ev))
            }
            _ => None,
        }
    }

    /// Entries scheduled (including stale timer entries).
    pub fn len(&self) -> usize {
        self.heap.len() - self.hole as usize + self.near.as_ref().map_or(0, |c| c.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events scheduled since creation.
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }
}

/// `(time, seq)` as one integer: the same order, one comparison.
#[inline(always)]
fn key(time: Instant, seq: u64) -> u128 {
    (u128::from(time.as_nanos()) << 64) | u128::from(seq)
}

/// The least key of an event after `time`: an event is due at or before
/// `time` if its key is less (no sequence number reaches `u64::MAX`).
#[inline(always)]
fn until(time: Instant) -> u128 {
    key(time, u64::MAX)
}

/// The simulator's two event lists: what the links schedule (serializers,
/// pipe heads, fq watchdogs; a number bounded by the topology) and what
/// the connections and flows schedule (timers, pacing, application
/// wake-ups, run starts and stops; one or a few per connection, most of
/// them far in the future, and with them the stale timer entries). One
/// sequence numbers both, so they pop in exactly the order one list would
/// give; but a link event, nearly every event of a run, no longer sifts
/// through a heap that holds every connection's timer. At 100,000
/// connections that heap held 100,000 entries and more, nearly none of
/// them due soon, and only 2.5 % of the events pushed were the
/// connections' (issue 15, docs/PERFORMANCE.md).
#[derive(Debug)]
pub struct Agenda<E> {
    links: EventQueue<E>,
    conns: EventQueue<E>,
    /// Key of the earliest entry of `conns` (`u128::MAX`: none): link
    /// events before it pop without a look at `conns`.
    conns_next: u128,
    next_seq: u64,
}

impl<E: Copy> Agenda<E> {
    /// Empty lists with room for `links` and `conns` entries.
    pub fn with_capacity(links: usize, conns: usize) -> Self {
        Agenda {
            links: EventQueue::with_calendar(links),
            conns: EventQueue::with_capacity(conns),
            conns_next: u128::MAX,
            next_seq: 0,
        }
    }

    #[inline(always)]
    fn next_key(&mut self, time: Instant) -> u128 {
        let seq = self.next_seq;
        self.next_seq += 1;
        key(time, seq)
    }

    /// Schedules a link's event (see [`EventQueue::push`]).
    #[inline(always)]
    pub fn push_link(&mut self, time: Instant, ev: E) {
        let k = self.next_key(time);
        self.links.push_key(k, ev);
    }

    /// Schedules a connection's or flow's event.
    #[inline]
    pub fn push_conn(&mut self, time: Instant, ev: E) {
        let k = self.next_key(time);
        self.conns.push_key(k, ev);
        self.conns_next = self.conns_next.min(k);
    }

    /// Removes the earliest event of both lists if it is due at or before
    /// `limit`.
    #[inline(always)]
    pub fn pop_until(&mut self, limit: Instant) -> Option<(Instant, E)> {
        let end = until(limit);
        if let Some(e) = self.links.pop_before(self.conns_next.min(end)) {
            return Some(e);
        }
        self.pop_conn(end)
    }

    /// The connections' earliest event, if due before `end` (and before
    /// every link event, which [`pop_until`](Self::pop_until) checked).
    #[inline(never)]
    fn pop_conn(&mut self, end: u128) -> Option<(Instant, E)> {
        let e = self.conns.pop_before(end)?;
        self.conns_next = self.conns.peek_key().unwrap_or(u128::MAX);
        Some(e)
    }

    /// Entries pending in both lists (stale timer entries included).
    pub fn len(&self) -> usize {
        self.links.len() + self.conns.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Events scheduled since creation.
    pub fn scheduled(&self) -> u64 {
        self.next_seq
    }
}

/// The earlier of two keyed slots (the first on a tie, which cannot
/// happen: keys are unique).
#[inline(always)]
fn min_of(a: usize, ak: u128, b: usize, bk: u128) -> (usize, u128) {
    if bk < ak {
        (b, bk)
    } else {
        (a, ak)
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

    /// xorshift64: the tests' deterministic stream.
    fn next(x: &mut u64) -> u64 {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        *x
    }

    /// Pops the least `(time, seq)` of `reference` and checks that the
    /// queue pops the same; returns its time.
    fn pop_least(q: &mut EventQueue<u64>, reference: &mut Vec<(u64, u64)>) -> u64 {
        reference.sort_unstable();
        let want = reference.remove(0);
        assert_eq!(q.len(), reference.len() + 1);
        assert_eq!(q.peek_time(), Some(Instant::from_nanos(want.0)));
        assert_eq!(q.pop(), Some((Instant::from_nanos(want.0), want.1)));
        want.0
    }

    /// Against a sorted reference: random times with many ties, pushes
    /// interleaved with pops, every pop the least `(time, seq)`; with and
    /// without a calendar.
    #[test]
    fn test_matches_sorted_reference() {
        for mut q in [EventQueue::with_capacity(0), EventQueue::with_calendar(0)] {
            let mut reference: Vec<(u64, u64)> = Vec::new();
            let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
            for round in 0..20_000u64 {
                let r = next(&mut x);
                if r % 3 != 0 || reference.is_empty() {
                    let t = round / 4 + r % 37;
                    q.push(Instant::from_nanos(t), round);
                    reference.push((t, round));
                } else {
                    pop_least(&mut q, &mut reference);
                }
            }
            while !reference.is_empty() {
                pop_least(&mut q, &mut reference);
            }
            assert!(q.is_empty());
        }
    }

    /// Past its reservation the list grows by a quarter (at least 1,024
    /// entries), not by doubling, and pops in order across the growth.
    #[test]
    fn test_growth_past_the_reservation_is_by_a_quarter() {
        let mut q = EventQueue::with_capacity(8192);
        let mut x: u64 = 0x5851_f42d_4c95_7f2d;
        for i in 0..10_000u64 {
            // Milliseconds ahead: beyond the calendar, all in the heap.
            q.push(Instant::from_nanos(next(&mut x) % 5000 * 1_000_000), i);
        }
        // 8,192 then 10,240; doubling would have made 16,384.
        assert!((10_000..12_000).contains(&q.heap.capacity()), "{}", q.heap.capacity());
        let mut last = (0, 0);
        while let Some((t, i)) = q.pop() {
            assert!((t.as_nanos(), i) > last || last == (0, 0), "{last:?} then {:?}", (t, i));
            last = (t.as_nanos(), i);
        }
    }

    /// The large form's two parts, calendar and heap, pop as one: times
    /// near (in the calendar's window) and far (beyond it), some earlier
    /// than the last pop (the heap's), over a span that wraps the
    /// calendar's ring many times.
    #[test]
    fn test_calendar_and_heap_pop_the_same_order() {
        grow_and_drain(0xbb67_ae85_84ca_a73b, 60_000, 1500, |r, now| match r % 7 {
            0 => now + r % 400_000,
            1 => now.saturating_sub(r % 300),
            _ => now + r % 3_000,
        });
    }

    /// Phases of `phase` rounds that push three times in four (at
    /// `time(random, now)`) and of as many that pop three times in four,
    /// every pop checked against a sorted reference; then drains.
    fn grow_and_drain(seed: u64, rounds: u64, phase: u64, time: impl Fn(u64, u64) -> u64) {
        for q in [EventQueue::with_capacity(0), EventQueue::with_calendar(0)] {
            grow_and_drain_one(q, seed, rounds, phase, &time);
        }
    }

    fn grow_and_drain_one(mut q: EventQueue<u64>, seed: u64, rounds: u64, phase: u64, time: &impl Fn(u64, u64) -> u64) {
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut x = seed;
        let mut now = 0u64;
        for round in 0..rounds {
            let r = next(&mut x);
            let grow = (round / phase) % 2 == 0;
            if reference.is_empty() || (grow && r % 4 != 0) || (!grow && r % 4 == 0) {
                let t = time(r, now);
                q.push(Instant::from_nanos(t), round);
                reference.push((t, round));
            } else {
                now = pop_least(&mut q, &mut reference);
            }
        }
        while !reference.is_empty() {
            pop_least(&mut q, &mut reference);
        }
        assert!(q.is_empty());
    }

    /// The two lists of an [`Agenda`] pop as one: by time, then in the
    /// order pushed, whichever list an event went to; `pop_until` stops
    /// at its limit in both.
    #[test]
    fn test_agenda_pops_both_lists_in_one_order() {
        let mut a = Agenda::with_capacity(0, 0);
        a.push_conn(Instant::from_nanos(10), 'a');
        a.push_link(Instant::from_nanos(10), 'b');
        a.push_link(Instant::from_nanos(5), 'c');
        a.push_conn(Instant::from_nanos(5), 'd');
        a.push_conn(Instant::from_nanos(20), 'e');
        assert_eq!(a.len(), 5);
        let due = |a: &mut Agenda<char>, t| {
            core::iter::from_fn(|| a.pop_until(Instant::from_nanos(t))).map(|(_, c)| c).collect::<String>()
        };
        assert_eq!(due(&mut a, 9), "cd");
        assert_eq!(due(&mut a, 10), "ab");
        a.push_link(Instant::from_nanos(20), 'f');
        assert_eq!(due(&mut a, 19), "");
        assert_eq!(due(&mut a, u64::MAX), "ef");
        assert!(a.is_empty());
        assert_eq!(a.scheduled(), 6);
    }

    /// Against a sorted reference: random pushes to either list, in both
    /// of a list's forms (sorted array and heap), interleaved with pops.
    #[test]
    fn test_agenda_matches_sorted_reference() {
        let mut a = Agenda::with_capacity(0, 0);
        let mut reference: Vec<(u64, u64)> = Vec::new();
        let mut x: u64 = 0x6a09_e667_f3bc_c908;
        let mut now = 0u64;
        for round in 0..40_000u64 {
            let r = next(&mut x);
            let grow = (round / 700) % 2 == 0;
            if reference.is_empty() || (grow && r % 4 != 0) || (!grow && r % 4 == 0) {
                // Links' events soon, connections' later (and some soon).
                let t = if r % 5 == 0 { now + r % 997 } else { now + r % 13 };
                if r % 5 == 0 || r % 7 == 0 {
                    a.push_conn(Instant::from_nanos(t), round);
                } else {
                    a.push_link(Instant::from_nanos(t), round);
                }
                reference.push((t, round));
            } else {
                reference.sort_unstable();
                let want = reference.remove(0);
                assert_eq!(a.pop_until(Instant::from_nanos(u64::MAX)), Some((Instant::from_nanos(want.0), want.1)));
                now = want.0;
            }
            assert_eq!(a.len(), reference.len());
        }
        reference.sort_unstable();
        for want in reference {
            assert_eq!(a.pop_until(Instant::from_nanos(want.0)), Some((Instant::from_nanos(want.0), want.1)));
        }
        assert!(a.is_empty());
    }

    /// Grows past [`SORTED_MAX`] and shrinks below [`SORTED_MIN`] again and
    /// again (each form and both conversions), against a sorted reference.
    #[test]
    fn test_sorted_and_heap_forms_pop_the_same_order() {
        // Phases of growth (to ~60 entries) and of draining.
        grow_and_drain(0x2545_f491_4f6c_dd1d, 40_000, 500, |r, now| now + r % 29);
    }
}
