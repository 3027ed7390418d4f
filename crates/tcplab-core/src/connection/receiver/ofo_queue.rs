//! The out-of-order queue: data beyond a hole, waiting for `rcv_nxt` to
//! reach it (`tp->out_of_order_queue`; tcp_input.c `tcp_data_queue_ofo`,
//! `tcp_ofo_queue`, `tcp_collapse_ofo_queue`, `tcp_prune_ofo_queue`).
//!
//! Payload is virtual, so where Linux keeps an rb-tree of skbs the model
//! keeps a sorted `Vec` of disjoint `[start, end)` ranges with their
//! modelled truesize: the work per segment depends on the number of holes,
//! never on the amount of data, and the only allocation is the amortized
//! growth of that `Vec`. Overlaps are D-SACKed the way Linux's tree walk
//! reports them.

use super::mib_add;
use super::rcvbuf::collapsed_truesize;
use super::sack::SackState;
use crate::counters::{Counters, Mib};
use tcplab_wire::SeqNum;

/// One out-of-order range `[start, end)` (`out_of_order_queue` skbs merged).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct OfoRange {
    pub(super) start: SeqNum,
    pub(super) end: SeqNum,
    /// Modelled `truesize` of the skbs holding it, bytes.
    pub(super) truesize: u64,
    /// The range ends with the peer's FIN (its last sequence number).
    pub(super) fin: bool,
}

/// The ranges, sorted and disjoint (they touch only after a FIN, onto which
/// nothing coalesces), and the sum of their truesize (their share of
/// `sk_rmem_alloc`).
#[derive(Clone, Debug, Default)]
pub(super) struct OfoQueue {
    ranges: Vec<OfoRange>,
    truesize: u64,
}

impl OfoQueue {
    pub(super) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    pub(super) fn ranges(&self) -> &[OfoRange] {
        &self.ranges
    }

    /// Truesize of everything queued, bytes.
    pub(super) fn truesize(&self) -> u64 {
        self.truesize
    }

    /// `skb_rbtree_purge`: drop everything (`tcp_fin`: "It _is_ possible,
    /// that we have something out-of-order _after_ FIN ... For now drop
    /// them.").
    pub(super) fn purge(&mut self) {
        self.ranges.clear();
        self.truesize = 0;
    }

    /// Queues `new` into an empty queue ("Initial out of order segment").
    pub(super) fn push_first(&mut self, new: OfoRange) {
        debug_assert!(self.ranges.is_empty());
        self.ranges.push(new);
        self.truesize += new.truesize;
    }

    /// Queues `new` behind the first segment (`tcp_data_queue_ofo`):
    /// coalesced onto the last range when it continues it (the common case,
    /// `tcp_ooo_try_coalesce` on `ooo_last_skb`), appended after it, or
    /// inserted with overlap handling. `rcv_nxt` orders the sequence space
    /// and sorts D-SACKs into `TCPDSACKOldSent`/`OfoSent` (sent only when
    /// `sack_ok`, SACK was negotiated). Returns `false`
    /// if every byte was already queued (the segment is dropped).
    pub(super) fn insert(
        &mut self,
        new: OfoRange,
        rcv_nxt: SeqNum,
        sack: &mut SackState,
        sack_ok: bool,
        mib: &mut Counters,
        ofo_merge: Option<Mib>,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_data_queue_ofo
        let Some(last) = self.ranges.last_mut() else {
            self.push_first(new);
            return true;
        };
        if new.start == last.end && !last.fin {
            last.end = new.end;
            last.truesize += new.truesize;
            last.fin = new.fin;
            self.truesize += new.truesize;
            true
        } else if !new.start.before(last.end) {
            self.ranges.push(new);
            self.truesize += new.truesize;
            true
        } else {
            self.insert_overlapping(new, rcv_nxt, sack, sack_ok, mib, ofo_merge)
        }
    }

    /// General out-of-order insertion: D-SACK what `new` duplicates (the
    /// first overlap sets the block, later ones only extend a touching
    /// block, as Linux's rb-tree walk does), merge it with what it covers
    /// (`merge_right`: "Remove other segments covered by skb"), and keep
    /// the ranges maximal.
    fn insert_overlapping(
        &mut self,
        new: OfoRange,
        rcv_nxt: SeqNum,
        sack: &mut SackState,
        sack_ok: bool,
        mib: &mut Counters,
        ofo_merge: Option<Mib>,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_data_queue_ofo
        let (seq, end_seq) = (new.start, new.end);
        let key = |s: SeqNum| s - rcv_nxt;
        // First range ending after seq.
        let idx = self.ranges.partition_point(|r| key(r.end) <= key(seq));
        let mut start = seq;
        let mut truesize = new.truesize;
        let mut fin = new.fin;
        let mut first = idx;
        if let Some(r) = self.ranges.get(idx).copied() {
            if !r.start.after(seq) {
                if !end_seq.after(r.end) {
                    // "All the bits are present. Drop."
                    mib_add(mib, ofo_merge, 1);
                    sack.dsack_set(sack_ok, seq, end_seq, rcv_nxt, mib);
                    return false;
                }
                if seq.after(r.start) {
                    // "Partial overlap."
                    sack.dsack_set(sack_ok, seq, r.end, rcv_nxt, mib);
                    truesize += r.truesize;
                } else {
                    // Same start, covers it: replace.
                    sack.dsack_extend(sack_ok, r.start, r.end, rcv_nxt, mib);
                    mib_add(mib, ofo_merge, 1);
                }
                start = r.start;
                first = idx + 1;
            }
        }
        // merge_right: "Remove other segments covered by skb."
        let mut last = first;
        let mut end = end_seq;
        while let Some(r) = self.ranges.get(last).copied() {
            if !end_seq.after(r.start) {
                break;
            }
            if end_seq.before(r.end) {
                sack.dsack_extend(sack_ok, r.start, end_seq, rcv_nxt, mib);
                end = r.end;
                fin = r.fin;
                truesize += r.truesize;
                last += 1;
                break;
            }
            sack.dsack_extend(sack_ok, r.start, r.end, rcv_nxt, mib);
            mib_add(mib, ofo_merge, 1);
            last += 1;
        }
        let removed: u64 = self.ranges[idx..last].iter().map(|r| r.truesize).sum();
        let merged = OfoRange { start, end, truesize, fin };
        self.truesize = self.truesize.saturating_sub(removed) + truesize;
        self.ranges.splice(idx..last, core::iter::once(merged));
        // Keep ranges maximal: join with touching neighbours.
        self.join_adjacent(idx);
        true
    }

    /// Merges range `i` with its neighbours when they touch.
    fn join_adjacent(&mut self, mut i: usize) {
        let q = &mut self.ranges;
        if i > 0 && i < q.len() && q[i - 1].end == q[i].start && !q[i - 1].fin {
            let r = q.remove(i);
            let l = &mut q[i - 1];
            l.end = r.end;
            l.truesize += r.truesize;
            l.fin = r.fin;
            i -= 1;
        }
        if i + 1 < q.len() && q[i].end == q[i + 1].start && !q[i].fin {
            let r = q.remove(i + 1);
            let l = &mut q[i];
            l.end = r.end;
            l.truesize += r.truesize;
            l.fin = r.fin;
        }
    }

    /// Removes the first `n` ranges, which `tcp_ofo_queue` moved to the
    /// receive queue.
    pub(super) fn dequeue_front(&mut self, n: usize) {
        for r in self.ranges.drain(..n) {
            self.truesize = self.truesize.saturating_sub(r.truesize);
        }
    }

    /// The out-of-order half of `tcp_collapse_ofo_queue`: copying the data
    /// into page-sized skbs shrinks each range's truesize.
    pub(super) fn collapse(&mut self) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_collapse_ofo_queue
        for r in &mut self.ranges {
            let bytes = (r.end - r.start) as u64;
            r.truesize = r.truesize.min(collapsed_truesize(bytes));
        }
        self.truesize = self.ranges.iter().map(|r| r.truesize).sum();
    }

    /// `tcp_prune_ofo_queue`: drop ranges from the highest, in steps of
    /// `rcvbuf / 8`, until the socket's memory (`other_rmem`, the receive
    /// queue's truesize, plus this queue's) fits `rcvbuf`, stopping where
    /// the incoming segment at `in_seq` would land last. Returns whether
    /// anything was dropped.
    pub(super) fn prune(&mut self, in_seq: SeqNum, rcvbuf: u32, other_rmem: u64) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_prune_ofo_queue
        let mut goal = (rcvbuf >> 3) as i64;
        let mut pruned = false;
        while let Some(r) = self.ranges.last().copied() {
            if in_seq.after(r.start) {
                break;
            }
            pruned = true;
            self.ranges.pop();
            self.truesize = self.truesize.saturating_sub(r.truesize);
            goal -= r.truesize.min(i64::MAX as u64) as i64;
            if self.ranges.is_empty() || goal <= 0 {
                if other_rmem + self.truesize <= rcvbuf as u64 {
                    break;
                }
                goal = (rcvbuf >> 3) as i64;
            }
        }
        pruned
    }
}
