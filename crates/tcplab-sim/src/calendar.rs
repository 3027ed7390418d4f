//! The near future of a large event list: a calendar of 8 ns slots.
//!
//! In a fabric nearly every event is a link's, due within microseconds:
//! a serializer's next `TxDone` (120 ns to 1.2 µs ahead at 100 to 10
//! Gbit/s) or a pipe's next head (a link's delay, a few µs). A 4-ary heap
//! of a few hundred of them spent a quarter of a 32-host leaf-spine run
//! sifting (unpredictable comparisons, four children per level; issue 15,
//! docs/PERFORMANCE.md). Here an event due within [`SLOTS`] slots of the
//! last one popped goes into the slot of its time, in key order among the
//! few that share it, and the earliest is the head of the first occupied
//! slot, found in a bitmap: a push and a pop touch one slot and one word
//! or two of the bitmap. Slots are narrow because a symmetric fabric has
//! many events close together (every host's serializer finishing within
//! nanoseconds): with 64 ns slots, keeping a slot in order walked 3.3
//! nodes per insertion in the 32-host leaf-spine. What lies further ahead
//! (timers, long delays) stays in the heap, and
//! [`EventQueue`](crate::event::EventQueue) pops whichever of the two
//! fronts has the smaller key, so the order is the keys' order whichever
//! structure holds an event (the same `(time, seq)` order as before, bit
//! for bit).
//!
//! Slots are indexed by absolute slot number modulo [`SLOTS`]; every
//! entry lies in `[base, base + SLOTS)`, where `base` is the slot of the
//! last key popped (no entry is earlier), so scanning the bitmap from
//! `base` meets the slots in time order. Entries are nodes in one arena
//! with a free list: no allocation once the arena has reached its high
//! water mark.

/// log2 of a slot's width in nanoseconds.
const SLOT_SHIFT: u32 = 3;
/// Slots in the calendar: 65.5 µs ahead at 8 ns each.
const SLOTS: usize = 8192;
const WORDS: usize = SLOTS / 64;
const NIL: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Node<E> {
    key: u128,
    ev: E,
    /// The next node of the slot (later key), or of the free list.
    next: u32,
}

#[derive(Debug)]
pub(crate) struct Calendar<E> {
    nodes: Vec<Node<E>>,
    free: u32,
    /// First node of each slot, `NIL` if empty.
    heads: Box<[u32; SLOTS]>,
    /// Last node of each slot (meaningless if empty). Events at one
    /// instant are many in a symmetric fabric (every host's serializer
    /// finishing at once), and each new one is the latest of its slot.
    tails: Box<[u32; SLOTS]>,
    /// Occupied slots.
    bits: [u64; WORDS],
    /// Absolute slot no entry is earlier than.
    base: u64,
    len: usize,
}

#[inline(always)]
fn slot_of(key: u128) -> u64 {
    ((key >> 64) as u64) >> SLOT_SHIFT
}

impl<E: Copy> Calendar<E> {
    pub fn new() -> Self {
        Calendar {
            nodes: Vec::new(),
            free: NIL,
            heads: Box::new([NIL; SLOTS]),
            tails: Box::new([NIL; SLOTS]),
            bits: [0; WORDS],
            base: 0,
            len: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    /// No entry will be earlier than `key` (a key just popped): the
    /// window moves on.
    #[inline(always)]
    pub fn advance(&mut self, key: u128) {
        self.base = self.base.max(slot_of(key));
    }

    /// Takes `(key, ev)` if it falls in the window; `false` if it is for
    /// the heap (too far ahead, or earlier than the window).
    #[inline]
    pub fn insert(&mut self, key: u128, ev: E) -> bool {
        let slot = slot_of(key);
        if slot.wrapping_sub(self.base) >= SLOTS as u64 {
            return false;
        }
        let s = slot as usize % SLOTS;
        let node = Node { key, ev, next: NIL };
        let n = if self.free == NIL {
            self.nodes.push(node);
            (self.nodes.len() - 1) as u32
        } else {
            let n = self.free;
            self.free = self.nodes[n as usize].next;
            self.nodes[n as usize] = node;
            n
        };
        // Keep the slot in key order; a new event is usually the latest.
        let head = self.heads[s];
        if head == NIL {
            self.heads[s] = n;
            self.tails[s] = n;
            self.bits[s / 64] |= 1 << (s % 64);
        } else if key > self.nodes[self.tails[s] as usize].key {
            self.nodes[self.tails[s] as usize].next = n;
            self.tails[s] = n;
        } else if key < self.nodes[head as usize].key {
            self.nodes[n as usize].next = head;
            self.heads[s] = n;
        } else {
            let mut p = head;
            loop {
                let next = self.nodes[p as usize].next;
                // Not past the tail: some later node exists.
                if key < self.nodes[next as usize].key {
                    self.nodes[n as usize].next = next;
                    self.nodes[p as usize].next = n;
                    break;
                }
                p = next;
            }
        }
        self.len += 1;
        true
    }

    /// The first occupied slot (as an index) and its earliest key.
    #[inline]
    pub fn first(&self) -> Option<(usize, u128)> {
        if self.len == 0 {
            return None;
        }
        let start = self.base as usize % SLOTS;
        let (w, b) = (start / 64, start % 64);
        let found = |i: usize, word: u64| Some(i * 64 + word.trailing_zeros() as usize);
        let mut at = None;
        let word = self.bits[w] & (!0u64 << b);
        if word != 0 {
            at = found(w, word);
        } else {
            for k in 1..=WORDS {
                let i = (w + k) % WORDS;
                // Last, the first word again: the slots before `start`,
                // which come after every other in time.
                let word = if k == WORDS { self.bits[i] & !(!0u64 << b) } else { self.bits[i] };
                if word != 0 {
                    at = found(i, word);
                    break;
                }
            }
        }
        let s = at?;
        Some((s, self.nodes[self.heads[s] as usize].key))
    }

    /// Removes the earliest entry of slot `s` (from [`first`](Self::first)).
    #[inline]
    pub fn pop_at(&mut self, s: usize) -> (u128, E) {
        let n = self.heads[s];
        let node = self.nodes[n as usize];
        self.heads[s] = node.next;
        if node.next == NIL {
            self.bits[s / 64] &= !(1 << (s % 64));
        }
        self.nodes[n as usize].next = self.free;
        self.free = n;
        self.len -= 1;
        self.advance(node.key);
        (node.key, node.ev)
    }

    /// Hands every entry to `out`, in no particular order; the calendar is
    /// left empty.
    pub fn drain(&mut self, mut out: impl FnMut(u128, E)) {
        for s in 0..SLOTS {
            let mut n = self.heads[s];
            while n != NIL {
                let node = self.nodes[n as usize];
                out(node.key, node.ev);
                n = node.next;
            }
            self.heads[s] = NIL;
        }
        self.bits = [0; WORDS];
        self.nodes.clear();
        self.free = NIL;
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: u64, seq: u64) -> u128 {
        (u128::from(t) << 64) | u128::from(seq)
    }

    /// A slot's width in nanoseconds.
    const W: u64 = 1 << SLOT_SHIFT;
    const N: u64 = SLOTS as u64;

    #[test]
    fn test_window_is_slots_from_the_last_pop() {
        let mut c = Calendar::new();
        assert!(c.insert(key(0, 0), 'a'));
        assert!(c.insert(key(W * N - 1, 1), 'b'));
        // One slot too far, then earlier than the window.
        assert!(!c.insert(key(W * N, 2), 'x'));
        c.advance(key(10 * W, 3));
        assert!(!c.insert(key(10 * W - 1, 4), 'y'));
        assert!(c.insert(key(10 * W + W * (N - 10) - 1, 5), 'c'));
        assert_eq!(c.len(), 3);
    }

    #[test]
    fn test_pops_in_key_order_across_the_wrap() {
        let mut c = Calendar::new();
        // Start late in the ring so that the window wraps past slot 0.
        let b = N - 24;
        c.advance(key(W * b, 0));
        let times = [W * b + 5 % W, W * (b + 500), W * b + 5 % W, W * (N - 1) + W - 1, W * N, W * (b + 1)];
        for (seq, &t) in times.iter().enumerate().rev() {
            assert!(c.insert(key(t, seq as u64), seq));
        }
        // Several keys in one slot, inserted out of order.
        for (seq, t) in [(8, W * (b + 3) + W - 1), (6, W * (b + 3)), (7, W * (b + 3) + W / 2)] {
            assert!(c.insert(key(t, seq), seq as usize));
        }
        let mut got = Vec::new();
        while let Some((s, k)) = c.first() {
            let (k2, ev) = c.pop_at(s);
            assert_eq!(k, k2);
            got.push(ev);
        }
        assert_eq!(got, [0, 2, 5, 6, 7, 8, 3, 4, 1]);
        assert_eq!(c.len(), 0);
    }
}
