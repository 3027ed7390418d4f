//! `sch_fq`: the Fair Queue packet scheduler with per-flow pacing
//! (net/sched/sch_fq.c), as the root qdisc of a host NIC. docs/sim-fq.md
//! describes the model for users; this is the data structure.
//!
//! One [`FqFlow`] per connection whose first hop is this NIC (a socket is
//! a flow in fq), plus flow 0 for packets without a socket (injected raw
//! packets; Linux hashes those into orphan flows). Flows are created when
//! the simulation is built, so the hot path allocates nothing once each
//! flow's ring has grown to its peak; fq's garbage collection of idle
//! flows (`fq_gc`, after 3 s detached) is not modelled.
//!
//! Scheduling follows `fq_dequeue` (v6.13, one priority band since all
//! TCP traffic is band 1):
//!
//! - Deficit round robin over a `new_flows` and an `old_flows` list: the
//!   head flow with `credit ≤ 0` gets `credit += quantum` and goes to the
//!   tail of `old_flows`; otherwise its head packet is sent and its length
//!   (`qdisc_pkt_len`: the IP packet plus the 14-byte Ethernet header,
//!   [`ETH_HLEN`]) is taken from the credit. An empty flow leaves
//!   `new_flows` for the tail of `old_flows` (no starvation), and leaves
//!   `old_flows` detached.
//! - A new flow starts with `initial_quantum` of credit. A detached flow
//!   that gets a packet joins `new_flows`; if it had been detached for
//!   more than `flow_refill_delay`, its credit becomes at least `quantum`
//!   (`fq_enqueue`).
//! - A flow whose head packet is not due (`max(time_to_send,
//!   time_next_packet) > now`) is throttled: moved out of the lists into
//!   a time-ordered set and back to the tail of `old_flows` when due
//!   (`fq_check_throttled`); the simulator arms a watchdog event for the
//!   earliest one (`qdisc_watchdog_schedule_range_ns`, without the 10 µs
//!   slack).
//! - [`FqPacing::Edt`] (Linux ≥ 4.20): TCP gives every packet its
//!   departure time. The simulator keeps a socket's packets in the socket
//!   until that time (see `sim_fq.rs`), so here `time_to_send = now` and
//!   fq never throttles TCP; what it adds is the round robin, the limits
//!   and the v6.7+ fast path (`fq_fastpath_check`: a packet that finds no
//!   flow with packets ready goes to a small internal FIFO served first).
//! - [`FqPacing::Credit`] (Linux 3.12–4.19): fq paces from the socket's
//!   `sk_pacing_rate` at dequeue: with `rate ≤ low_rate_threshold` every
//!   packet is paced (`credit = 0`, gap `len/rate`), otherwise only once
//!   the flow's credit is spent, with gap `max(len, quantum)/rate`; the gap
//!   is capped at 1 s and shortened by up to half of the lateness of the
//!   previous deadline ("account for schedule/timers drifts"), and
//!   `time_next_packet = now + gap`. Pure ACKs are neither paced nor
//!   throttled ("tcp: do not pace pure ack packets", v4.9).
//! - `ce_threshold`: a packet that leaves more than this after its due
//!   time is marked CE (ECT packets only).
//!
//! Limits: an arriving packet is dropped when the qdisc holds `limit`
//! packets or its flow `flow_limit`. The simulator never lets a TCP
//! connection hit either (it stops polling the connection instead, see
//! [`FqQdisc::room`]), so only raw injected packets are ever dropped.

use crate::config::{FqConfig, FqPacing};
use crate::packet::PacketId;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Ethernet header bytes, counted by fq's `qdisc_pkt_len` and `psched_mtu`.
pub const ETH_HLEN: u32 = 14;
/// No flow / empty list.
pub(crate) const NONE: u32 = u32::MAX;
/// `fq_fastpath_check`: the internal queue may hold fewer than this.
const FASTPATH_MAX: usize = 8;
const NSEC_PER_SEC: u64 = 1_000_000_000;
/// `tcp_limit_output_bytes` of Linux 4.x (262144), which caps TSQ for
/// sockets that fq paces itself ([`FqPacing::Credit`]). Since Linux 5.x
/// the cap does not apply to paced sockets (`sk_pacing_status != NONE`).
pub const TCP_LIMIT_OUTPUT_BYTES_V4: u64 = 262_144;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum List {
    Detached,
    New,
    Old,
    Throttled,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    id: PacketId,
    /// IP packet bytes.
    len: u32,
    time_to_send: u64,
    /// Not a pure ACK.
    paced: bool,
    /// Another segment of the same skb follows (GSO): fq dequeues an skb
    /// whole, so they leave together and are credited and paced as one.
    more: bool,
}

/// One flow (socket) of an fq qdisc.
#[derive(Debug)]
pub(crate) struct FqFlow {
    q: VecDeque<Entry>,
    /// IP bytes of this flow's packets in the qdisc (its queue and the
    /// internal fast-path queue): the socket's TSQ occupancy.
    pub bytes: u64,
    credit: i64,
    time_next_packet: u64,
    list: List,
    /// When the flow was last detached, ns.
    age: u64,
    next: u32,
    /// The connection that owns the flow (`NONE` for the orphan flow).
    pub conn: u32,
    /// The connection stopped sending because of this flow's limits (flow
    /// limit or TSQ) and waits for a packet of it to leave.
    pub waiting: bool,
    /// The last segment enqueued has another of its skb behind it.
    open_skb: bool,
}

/// Why a connection may not hand the qdisc another packet now.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Room {
    Yes,
    /// Its flow is at `flow_limit` or its TSQ limit: wait for the flow.
    Flow,
    /// The qdisc is at `limit`: wait for any packet to leave.
    Qdisc,
}

/// A packet leaving the qdisc.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Dequeued {
    pub id: PacketId,
    pub len: u32,
    pub flow: u32,
    /// Mark CE (ce_threshold exceeded).
    pub ce: bool,
}

#[derive(Debug)]
pub(crate) struct FqQdisc {
    pub edt: bool,
    limit: u32,
    flow_limit: u32,
    quantum: i64,
    initial_quantum: i64,
    refill_delay: u64,
    low_rate_threshold: u64,
    ce_threshold: Option<u64>,
    pub flows: Vec<FqFlow>,
    new_flows: (u32, u32),
    old_flows: (u32, u32),
    /// Fast-path queue `(packet, bytes, flow)`.
    internal: VecDeque<(PacketId, u32, u32)>,
    /// Throttled flows by `(time_next_packet, arrival order, flow)`.
    delayed: BinaryHeap<Reverse<(u64, u64, u32)>>,
    delayed_seq: u64,
    /// Earliest `time_next_packet` of a throttled flow (`u64::MAX`: none).
    pub time_next_delayed_flow: u64,
    qlen: u32,
    bytes: u64,
    /// Flows with packets that are not throttled (fq's `flows -
    /// inactive_flows - throttled_flows`).
    ready_flows: u32,
    // Statistics.
    pub peak_packets: u64,
    pub drops: u64,
    pub ce_marks: u64,
    /// `stat_throttled`.
    pub throttled: u64,
}

impl FqQdisc {
    /// An empty qdisc with the orphan flow (index 0).
    pub fn new(cfg: &FqConfig) -> Self {
        let mut q = FqQdisc {
            edt: cfg.pacing == FqPacing::Edt,
            limit: cfg.limit,
            flow_limit: cfg.flow_limit,
            quantum: cfg.quantum as i64,
            initial_quantum: cfg.initial_quantum as i64,
            refill_delay: cfg.flow_refill_delay.as_nanos(),
            low_rate_threshold: cfg.low_rate_threshold,
            ce_threshold: cfg.ce_threshold.map(|d| d.as_nanos()),
            flows: Vec::new(),
            new_flows: (NONE, NONE),
            old_flows: (NONE, NONE),
            internal: VecDeque::with_capacity(FASTPATH_MAX),
            delayed: BinaryHeap::new(),
            delayed_seq: 0,
            time_next_delayed_flow: u64::MAX,
            qlen: 0,
            bytes: 0,
            ready_flows: 0,
            peak_packets: 0,
            drops: 0,
            ce_marks: 0,
            throttled: 0,
        };
        q.add_flow(NONE);
        q
    }

    /// Adds a flow for connection `conn` (detached, `initial_quantum` of
    /// credit, as `fq_classify` creates it); returns its index.
    pub fn add_flow(&mut self, conn: u32) -> u32 {
        self.flows.push(FqFlow {
            q: VecDeque::new(),
            bytes: 0,
            credit: self.initial_quantum,
            time_next_packet: 0,
            list: List::Detached,
            age: 0,
            next: NONE,
            conn,
            waiting: false,
            open_skb: false,
        });
        self.flows.len() as u32 - 1
    }

    /// Packets in the qdisc.
    pub fn len(&self) -> usize {
        self.qlen as usize
    }

    /// IP bytes in the qdisc.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// May the connection of flow `f` (MTU `mtu`, `sk_pacing_rate` `rate`
    /// bytes/s, 0 = not known yet) hand over another packet? TCP Small
    /// Queues (`tcp_small_queue_check`) allows a socket at most
    /// `max(2 packets, rate/1024)` bytes below it (about 1 ms of data);
    /// the model counts the bytes in this qdisc (Linux also counts the
    /// packet on the wire until its TX completion), capped at
    /// [`TCP_LIMIT_OUTPUT_BYTES_V4`] in credit mode.
    //= linux:v6.13:net/ipv4/tcp_output.c#tcp_small_queue_check
    #[inline]
    pub fn room(&self, f: u32, mtu: u32, rate: u64) -> Room {
        if self.qlen >= self.limit {
            return Room::Qdisc;
        }
        let flow = &self.flows[f as usize];
        if flow.q.len() as u32 >= self.flow_limit {
            return Room::Flow;
        }
        let mut tsq = if rate == 0 { u64::MAX } else { (rate >> 10).max(2 * mtu as u64) };
        if !self.edt {
            tsq = tsq.min(TCP_LIMIT_OUTPUT_BYTES_V4);
        }
        if flow.bytes >= tsq {
            return Room::Flow;
        }
        Room::Yes
    }

    fn push_tail(&mut self, new: bool, f: u32) {
        let list = if new { &mut self.new_flows } else { &mut self.old_flows };
        if list.0 == NONE {
            list.0 = f;
        } else {
            self.flows[list.1 as usize].next = f;
        }
        list.1 = f;
        let fl = &mut self.flows[f as usize];
        fl.next = NONE;
        fl.list = if new { List::New } else { List::Old };
    }

    fn pop_head(&mut self, new: bool) {
        let list = if new { &mut self.new_flows } else { &mut self.old_flows };
        let f = list.0;
        list.0 = self.flows[f as usize].next;
        if list.0 == NONE {
            list.1 = NONE;
        }
    }

    /// A packet that is a whole skb ([`Self::enqueue_segment`] with
    /// `more` false).
    #[cfg(test)]
    pub fn enqueue(&mut self, now: u64, f: u32, id: PacketId, len: u32, paced: bool, time_to_send: u64) -> bool {
        self.enqueue_segment(now, f, id, len, paced, time_to_send, false)
    }

    /// `fq_enqueue` of one segment of an skb of flow `f` due at
    /// `time_to_send`; `more`: another segment of the skb follows
    /// (enqueued at the same instant, before the qdisc is served). Returns
    /// false if it was dropped (limits).
    //= linux:v6.13:net/sched/sch_fq.c#fq_enqueue
    //= linux:v6.13:net/sched/sch_fq.c#fq_fastpath_check
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue_segment(
        &mut self,
        now: u64,
        f: u32,
        id: PacketId,
        len: u32,
        paced: bool,
        time_to_send: u64,
        more: bool,
    ) -> bool {
        // The limits count skbs: the rest of an skb is never refused.
        let cont = self.flows[f as usize].open_skb;
        if !cont && self.qlen >= self.limit {
            self.drops += 1;
            return false;
        }
        let fast = self.edt
            && time_to_send <= now
            && (self.qlen == 0
                || (self.ready_flows == 0 && self.internal.len() < FASTPATH_MAX && self.time_next_delayed_flow > now));
        if fast {
            self.internal.push_back((id, len, f));
        } else {
            let flow = &mut self.flows[f as usize];
            if !cont && flow.q.len() as u32 >= self.flow_limit {
                self.drops += 1;
                return false;
            }
            if flow.list == List::Detached {
                if now > flow.age.saturating_add(self.refill_delay) {
                    flow.credit = flow.credit.max(self.quantum);
                }
                self.push_tail(true, f);
            }
            let flow = &mut self.flows[f as usize];
            if flow.q.is_empty() && flow.list != List::Throttled {
                self.ready_flows += 1;
            }
            flow.q.push_back(Entry { id, len, time_to_send, paced, more });
        }
        self.flows[f as usize].bytes += len as u64;
        self.flows[f as usize].open_skb = more;
        self.qlen += 1;
        self.bytes += len as u64;
        self.peak_packets = self.peak_packets.max(self.qlen as u64);
        true
    }

    /// The last segment of flow `f`'s skb under way never arrived (a
    /// policer took it): the skb ends with what is queued.
    pub fn end_skb(&mut self, f: u32) {
        let flow = &mut self.flows[f as usize];
        flow.open_skb = false;
        if let Some(e) = flow.q.back_mut() {
            e.more = false;
        }
    }

    /// Moves flows whose time has come from the throttled set to the tail
    /// of `old_flows` (`fq_check_throttled`).
    //= linux:v6.13:net/sched/sch_fq.c#fq_check_throttled
    fn check_throttled(&mut self, now: u64) {
        if self.time_next_delayed_flow > now {
            return;
        }
        self.time_next_delayed_flow = u64::MAX;
        while let Some(&Reverse((t, _, f))) = self.delayed.peek() {
            if t > now {
                self.time_next_delayed_flow = t;
                break;
            }
            self.delayed.pop();
            self.ready_flows += 1;
            self.push_tail(false, f);
        }
    }

    fn throttle(&mut self, f: u32, t: u64) {
        let fl = &mut self.flows[f as usize];
        fl.time_next_packet = t;
        fl.list = List::Throttled;
        fl.next = NONE;
        self.ready_flows -= 1;
        self.delayed.push(Reverse((t, self.delayed_seq, f)));
        self.delayed_seq += 1;
        self.throttled += 1;
        self.time_next_delayed_flow = self.time_next_delayed_flow.min(t);
    }

    /// `fq_dequeue`: the next packet to transmit at `now`, if one is due.
    /// `rate_of(conn)` is the connection's `sk_pacing_rate` in bytes/s (0 =
    /// not pacing), read only in credit mode. When this returns `None`
    /// with packets queued, [`Self::time_next_delayed_flow`] says when to
    /// try again.
    //= linux:v6.13:net/sched/sch_fq.c#fq_dequeue
    pub fn dequeue(&mut self, now: u64, rate_of: impl Fn(u32) -> u64) -> Option<Dequeued> {
        if self.qlen == 0 {
            return None;
        }
        if let Some((id, len, f)) = self.internal.pop_front() {
            self.qlen -= 1;
            self.bytes -= len as u64;
            self.flows[f as usize].bytes -= len as u64;
            return Some(Dequeued { id, len, flow: f, ce: false });
        }
        self.check_throttled(now);
        loop {
            let new = self.new_flows.0 != NONE;
            let f = if new { self.new_flows.0 } else { self.old_flows.0 };
            if f == NONE {
                return None;
            }
            let quantum = self.quantum;
            let flow = &mut self.flows[f as usize];
            if flow.credit <= 0 {
                flow.credit += quantum;
                self.pop_head(new);
                self.push_tail(false, f);
                continue;
            }
            let Some(&head) = flow.q.front() else {
                self.pop_head(new);
                // v6.x always passes through old_flows; v4.x only if it
                // is not empty.
                if new && (self.edt || self.old_flows.0 != NONE) {
                    self.push_tail(false, f);
                } else {
                    let flow = &mut self.flows[f as usize];
                    flow.list = List::Detached;
                    flow.age = now;
                }
                continue;
            };
            let gate = if head.paced || self.edt { flow.time_next_packet } else { 0 };
            let due = head.time_to_send.max(gate);
            if now < due {
                self.pop_head(new);
                self.throttle(f, due);
                continue;
            }
            flow.q.pop_front();
            flow.bytes -= head.len as u64;
            let mut plen = (head.len + ETH_HLEN) as i64;
            // The rest of a GSO skb goes next, unpaced (the internal queue
            // is served first); its bytes count for the credit and the gap.
            let mut more = head.more;
            while more {
                let Some(e) = flow.q.pop_front() else { break };
                more = e.more;
                plen += (e.len + ETH_HLEN) as i64;
                self.internal.push_back((e.id, e.len, f));
            }
            let emptied = flow.q.is_empty();
            flow.credit -= plen;
            let conn = flow.conn;
            self.qlen -= 1;
            self.bytes -= head.len as u64;
            if emptied {
                self.ready_flows -= 1;
            }
            let ce = self.ce_threshold.is_some_and(|th| now - due > th);
            if !self.edt && head.paced {
                self.credit_pace(f, now, plen as u64, rate_of(conn));
            }
            return Some(Dequeued { id: head.id, len: head.len, flow: f, ce });
        }
    }

    /// The pre-EDT pacing step of `fq_dequeue` after sending `plen` bytes
    /// of flow `f`.
    //= linux:v4.19:net/sched/sch_fq.c#fq_dequeue
    //# Account for schedule/timers drifts.
    fn credit_pace(&mut self, f: u32, now: u64, plen: u64, rate: u64) {
        if rate == 0 {
            // sk_pacing_rate unknown (~0UL in Linux): not paced.
            return;
        }
        let (low, quantum) = (self.low_rate_threshold, self.quantum as u64);
        let flow = &mut self.flows[f as usize];
        let plen = if rate <= low {
            flow.credit = 0;
            plen
        } else {
            if flow.credit > 0 {
                return;
            }
            plen.max(quantum)
        };
        let mut len = ((plen as u128 * NSEC_PER_SEC as u128) / rate as u128).min(NSEC_PER_SEC as u128) as u64;
        if flow.time_next_packet != 0 {
            len -= (len / 2).min(now.saturating_sub(flow.time_next_packet));
        }
        flow.time_next_packet = now + len;
    }

    /// Marks a CE mark as applied (statistics).
    pub fn count_ce(&mut self) {
        self.ce_marks += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::time::Duration;

    fn fq(pacing: FqPacing) -> FqQdisc {
        FqQdisc::new(&FqConfig { pacing, ..FqConfig::default() })
    }

    /// Dequeues everything due at `now`: `(flow, packet)` in order.
    fn drain(q: &mut FqQdisc, now: u64, rate: u64) -> Vec<(u32, PacketId)> {
        core::iter::from_fn(|| q.dequeue(now, |_| rate).map(|d| (d.flow, d.id))).collect()
    }

    #[test]
    fn test_round_robin_two_packets_per_quantum() {
        // Credit mode (no fast path), pacing off (rate 0): pure DRR.
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        let b = q.add_flow(2);
        for i in 0..40 {
            assert!(q.enqueue(0, a, i, 1500, true, 0));
            assert!(q.enqueue(0, b, 100 + i, 1500, true, 0));
        }
        let order = drain(&mut q, 0, 0);
        assert_eq!(order.len(), 80);
        // initial_quantum = 15140 = 10 packets of 1514: flow a sends 10
        // (credit 0 after 10), then b 10, then alternate by quantum =
        // 3028 = exactly 2 packets.
        let flows: Vec<u32> = order.iter().map(|o| o.0).collect();
        assert!(flows[..10].iter().all(|f| *f == a));
        assert!(flows[10..20].iter().all(|f| *f == b));
        assert_eq!(&flows[20..28], &[a, a, b, b, a, a, b, b]);
        assert_eq!(q.len(), 0);
        // FIFO within a flow.
        let ids_a: Vec<PacketId> = order.iter().filter(|o| o.0 == a).map(|o| o.1).collect();
        assert_eq!(ids_a, (0..40).collect::<Vec<_>>());
    }

    #[test]
    fn test_an_skb_leaves_whole_and_is_credited_and_paced_as_one() {
        // Credit mode, 1 Mbyte/s. Flow a: one skb of 5 segments of 1500 B
        // (ids 0-4), then a lone segment (5); flow b: two segments.
        let mut q = fq(FqPacing::Credit);
        let (a, b) = (q.add_flow(1), q.add_flow(2));
        for i in 0..5 {
            assert!(q.enqueue_segment(0, a, i, 1500, true, 0, i < 4));
        }
        assert!(q.enqueue_segment(0, a, 5, 1500, true, 0, false));
        assert!(q.enqueue(0, b, 10, 1500, true, 0));
        assert!(q.enqueue(0, b, 11, 1500, true, 0));
        // a's initial quantum (15140 B) covers the skb (5·1514 = 7570) and
        // its lone segment: 0-5 back to back, then b's two.
        let order = drain(&mut q, 0, 0);
        let ids: Vec<PacketId> = order.iter().map(|o| o.1).collect();
        assert_eq!(ids, vec![0, 1, 2, 3, 4, 5, 10, 11]);
        // Paced: credit spent by one skb of 5 segments, the gap is the
        // whole skb's 7570 B at 1 MB/s (7.57 ms), not one segment's.
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        for k in 0..3u32 {
            for i in 0..5 {
                q.enqueue_segment(0, a, k * 10 + i, 1500, true, 0, i < 4);
            }
        }
        let first = drain(&mut q, 0, 1_000_000);
        assert_eq!(first.len(), 10, "the initial quantum covers two skbs");
        assert!(drain(&mut q, 7_569_999, 1_000_000).is_empty());
        assert_eq!(drain(&mut q, 7_570_000, 1_000_000).len(), 5);
    }

    #[test]
    fn test_credit_pacing_bursts_of_a_quantum_at_the_pacing_rate() {
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        for i in 0..30 {
            q.enqueue(0, a, i, 1500, true, 0);
        }
        // 1 Mbyte/s: a quantum (3028 B) takes 3.028 ms.
        let rate = 1_000_000;
        let mut t = 0u64;
        let mut sent = Vec::new();
        while q.len() > 0 {
            match q.dequeue(t, |_| rate) {
                Some(d) => sent.push((t, d.id)),
                None => t = q.time_next_delayed_flow,
            }
        }
        // First 10 packets unpaced (initial quantum), then 2 per gap.
        assert!(sent[..10].iter().all(|s| s.0 == 0));
        let times: Vec<u64> = sent[10..].iter().map(|s| s.0).collect();
        // The 10th packet exhausted the credit: next due 3.028 ms later.
        assert_eq!(times[0], 3_028_000);
        assert_eq!(times[1], 3_028_000);
        assert_eq!(times[2], 6_056_000);
        assert_eq!(times[3], 6_056_000);
        assert_eq!(q.throttled as usize, (30 - 10) / 2);
    }

    #[test]
    fn test_credit_pacing_per_packet_below_low_rate_threshold() {
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        for i in 0..5 {
            q.enqueue(0, a, i, 1000, true, 0);
        }
        // 50 000 B/s < 68 750 B/s: every packet paced by its own length.
        let mut t = 0;
        let mut times = Vec::new();
        while q.len() > 0 {
            match q.dequeue(t, |_| 50_000) {
                Some(_) => times.push(t),
                None => t = q.time_next_delayed_flow,
            }
        }
        // 1014 B / 50 000 B/s = 20.28 ms.
        assert_eq!(times, [0, 20_280_000, 40_560_000, 60_840_000, 81_120_000]);
    }

    #[test]
    fn test_pure_acks_are_not_paced_in_credit_mode() {
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        q.enqueue(0, a, 0, 1000, true, 0);
        q.enqueue(0, a, 1, 52, false, 0);
        q.enqueue(0, a, 2, 52, false, 0);
        // Rate below the threshold: the data packet would gate the next.
        assert_eq!(q.dequeue(0, |_| 50_000).map(|d| d.id), Some(0));
        assert_eq!(q.dequeue(0, |_| 50_000).map(|d| d.id), Some(1));
        assert_eq!(q.dequeue(0, |_| 50_000).map(|d| d.id), Some(2));
    }

    /// A qdisc where flow 1 (conn 1) was detached at time 0 with a small
    /// credit, flow 2 still busy.
    fn detached_flow() -> (FqQdisc, u32) {
        let mut q = fq(FqPacing::Credit);
        let a = q.add_flow(1);
        let b = q.add_flow(2);
        q.enqueue(0, a, 0, 1500, true, 0);
        for i in 0..12 {
            q.enqueue(0, b, 10 + i, 1500, true, 0);
        }
        // a sends, moves to old_flows; b sends 10 and queues behind a;
        // a is found empty at the head of old_flows: detached.
        for _ in 0..11 {
            q.dequeue(0, |_| 0).unwrap();
        }
        assert_eq!(q.flows[a as usize].list, List::Detached);
        assert_eq!(q.flows[a as usize].credit, 15140 - 1514);
        q.flows[a as usize].credit = 5;
        (q, a)
    }

    #[test]
    fn test_refill_after_flow_refill_delay() {
        let refill = Duration::from_millis(40).as_nanos();
        // Back within the refill delay: keeps its credit.
        let (mut q, a) = detached_flow();
        q.enqueue(refill, a, 50, 1500, true, refill);
        assert_eq!(q.flows[a as usize].credit, 5);
        assert_eq!(q.flows[a as usize].list, List::New);
        // Later: at least a quantum.
        let (mut q, a) = detached_flow();
        q.enqueue(refill + 1, a, 50, 1500, true, refill + 1);
        assert_eq!(q.flows[a as usize].credit, 3028);
    }

    #[test]
    fn test_edt_fast_path_and_limits() {
        let mut q = FqQdisc::new(&FqConfig { flow_limit: 3, limit: 5, ..FqConfig::default() });
        let a = q.add_flow(1);
        let b = q.add_flow(2);
        // Empty qdisc: fast path, up to 8 while no flow is ready.
        assert!(q.enqueue(10, a, 0, 1500, true, 10));
        assert!(q.enqueue(10, a, 1, 1500, true, 10));
        assert_eq!(q.internal.len(), 2);
        assert_eq!(q.flows[a as usize].bytes, 3000);
        assert_eq!(q.room(a, 1500, 0), Room::Yes);
        // TSQ: at 1 MB/s, 1 ms = 976 B < 2 packets: a is at its limit.
        assert_eq!(q.room(a, 1500, 1_000_000), Room::Flow);
        assert_eq!(q.dequeue(10, |_| 0).map(|d| d.id), Some(0));
        assert_eq!(q.flows[a as usize].bytes, 1500);
        assert_eq!(q.dequeue(10, |_| 0).map(|d| d.id), Some(1));
        // Packets due in the future (only possible with other senders)
        // skip the fast path and make their flow ready: later packets of
        // every flow queue in their flows, up to flow_limit (3).
        assert!(q.enqueue(10, b, 10, 100, true, 20));
        assert!(q.enqueue(10, a, 11, 100, true, 10));
        assert!(q.enqueue(10, a, 12, 100, true, 10));
        assert!(q.enqueue(10, a, 13, 100, true, 10));
        assert_eq!(q.internal.len(), 0);
        assert_eq!(q.room(a, 1500, 0), Room::Flow);
        assert!(!q.enqueue(10, a, 14, 100, true, 10));
        assert_eq!(q.drops, 1);
        // Qdisc limit 5.
        assert!(q.enqueue(10, b, 15, 100, true, 10));
        assert_eq!(q.room(b, 1500, 0), Room::Qdisc);
        assert!(!q.enqueue(10, b, 16, 100, true, 10));
        assert_eq!(q.drops, 2);
        // b's head is not due until 20: a is served, then b at 20.
        let ids: Vec<PacketId> = drain(&mut q, 10, 0).into_iter().map(|x| x.1).collect();
        assert_eq!(ids, [11, 12, 13]);
        assert_eq!(q.time_next_delayed_flow, 20);
        let ids: Vec<PacketId> = drain(&mut q, 20, 0).into_iter().map(|x| x.1).collect();
        assert_eq!(ids, [10, 15]);
    }

    #[test]
    fn test_ce_threshold_marks_late_packets() {
        let mut q = FqQdisc::new(&FqConfig {
            pacing: FqPacing::Credit,
            ce_threshold: Some(Duration::from_micros(100)),
            ..FqConfig::default()
        });
        let a = q.add_flow(1);
        q.enqueue(0, a, 0, 1500, true, 0);
        q.enqueue(0, a, 1, 1500, true, 0);
        assert!(!q.dequeue(100_000, |_| 0).unwrap().ce);
        assert!(q.dequeue(100_001, |_| 0).unwrap().ce);
    }
}
