//! The connections waiting for room in a host NIC's queue: a FIFO per
//! NIC, intrusive (the links live in one array indexed by connection), so
//! blocking and waking allocate nothing and cost O(1).
//!
//! **Service.** When a packet leaves a NIC (one slot frees up), the NIC
//! serves its queue from the head (`Sim::serve_ready`): the head
//! connection is polled while there is room; if it sent and must wait
//! again it rejoins at the *tail*, so waiting connections share the NIC
//! round-robin, one packet per turn. If the room was too small for it (a
//! byte limit freed by a small packet) it keeps its place at the head. A
//! connection that has nothing to send when its turn comes (it blocked on
//! an ACK while cwnd-limited, or its run ended) leaves the queue and the
//! next one is served. Each freed slot thus costs O(1) amortized: every
//! connection served either takes the room, or finds none and stops the
//! service, or leaves the queue it entered by one block.
//!
//! Linux has no such queue (a full pfifo drops, and TCP sends the segment
//! again later; see `host.rs` for why the model backpressures instead).
//! The nearest mechanism is TCP Small Queues: a socket throttled on its
//! own bytes below the device is woken when one of *its* packets leaves
//! (`tcp_wfree` puts it on the per-CPU `tsq_tasklet` list, v6.12
//! `tsq_work`), so sockets sharing a FIFO device take turns in the order
//! their packets left it: round-robin, which the FIFO here reproduces
//! without modelling TSQ per connection.
//!
//! A connection is in at most one queue (its NIC's), flagged by
//! `ConnRt::blocked`.

/// "No connection": the end of a list.
pub(crate) const NIL: u32 = u32::MAX;

/// One NIC's FIFO of waiting connections (head and tail of a list whose
/// links are in [`ReadyLinks`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadyQueue {
    head: u32,
    tail: u32,
}

impl Default for ReadyQueue {
    fn default() -> Self {
        ReadyQueue { head: NIL, tail: NIL }
    }
}

/// The `next` link of every connection, shared by all NICs' queues.
#[derive(Clone, Debug, Default)]
pub(crate) struct ReadyLinks {
    next: Vec<u32>,
}

impl ReadyLinks {
    pub fn new(conns: usize) -> Self {
        ReadyLinks { next: vec![NIL; conns] }
    }
}

impl ReadyQueue {
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }

    /// Appends connection `c` (not in any queue) at the tail.
    #[inline]
    pub fn push(&mut self, links: &mut ReadyLinks, c: u32) {
        links.next[c as usize] = NIL;
        if self.tail == NIL {
            self.head = c;
        } else {
            links.next[self.tail as usize] = c;
        }
        self.tail = c;
    }

    /// Puts connection `c` (not in any queue) back at the head: it was
    /// served but found no room, so it keeps its turn.
    #[inline]
    pub fn push_front(&mut self, links: &mut ReadyLinks, c: u32) {
        links.next[c as usize] = self.head;
        if self.head == NIL {
            self.tail = c;
        }
        self.head = c;
    }

    /// Removes and returns the head.
    #[inline]
    pub fn pop(&mut self, links: &mut ReadyLinks) -> Option<u32> {
        let c = self.head;
        if c == NIL {
            return None;
        }
        self.head = links.next[c as usize];
        if self.head == NIL {
            self.tail = NIL;
        }
        links.next[c as usize] = NIL;
        Some(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::VecDeque;

    #[test]
    fn test_ready_queue_is_fifo_per_nic() {
        let mut links = ReadyLinks::new(6);
        let (mut a, mut b) = (ReadyQueue::default(), ReadyQueue::default());
        a.push(&mut links, 3);
        b.push(&mut links, 1);
        a.push(&mut links, 0);
        b.push(&mut links, 5);
        a.push(&mut links, 4);
        assert_eq!(a.pop(&mut links), Some(3));
        // Served and blocked again: back at the tail.
        a.push(&mut links, 3);
        assert_eq!(b.pop(&mut links), Some(1));
        assert_eq!(a.pop(&mut links), Some(0));
        assert_eq!(a.pop(&mut links), Some(4));
        assert_eq!(a.pop(&mut links), Some(3));
        assert_eq!(a.pop(&mut links), None);
        assert!(a.is_empty());
        assert_eq!(b.pop(&mut links), Some(5));
        assert_eq!(b.pop(&mut links), None);
    }

    #[test]
    fn test_serving_costs_o1_per_freed_slot() {
        // 2,000 bulk connections on one 10 Mbit/s NIC with a 20-packet
        // queue: nearly all of them wait at any time. Re-polling every
        // waiting connection per freed slot (as before the ready queue)
        // would poll ~2,000 per packet sent.
        use crate::config::*;
        use tcplab_core::time::Duration;
        let d = DirectionConfig {
            delay: DelayModel::Fixed(Duration::from_millis(1)),
            queue: QueueConfig { limit: Limit::Packets(20), ecn_threshold: None },
            loss: Default::default(),
            blackouts: Vec::new(),
            police: None,
            slot: None,
        };
        let link = LinkConfig { name: "l".into(), a: 0, b: 1, rate_bps: 10_000_000, ab: d.clone(), ba: d };
        let flows = (0..2000)
            .map(|i| FlowConfig::new(format!("f{i}"), 0, 1, AppConfig::Bulk { bytes: None, stop: None }))
            .collect();
        let cfg = SimConfig {
            duration: Duration::from_secs(2),
            seed: 1,
            nodes: vec![NodeConfig::host("a"), NodeConfig::host("b")],
            links: vec![link],
            flows,
            trace_interval: None,
        };
        let mut sim = crate::Sim::new(&cfg).unwrap();
        sim.run_to_end();
        let sent = sim.dirs[0].tx_packets;
        assert!(sent > 1000, "{sent}");
        assert!(sim.ready_served > sent / 2, "the queue was used: {} served, {sent} sent", sim.ready_served);
        assert!(sim.ready_served < 3 * sent, "{} connections served for {sent} packets", sim.ready_served);
    }

    #[test]
    fn test_ready_queue_against_vecdeque() {
        // Random pushes and pops over 4 queues against a VecDeque oracle.
        let mut rng = crate::rng::Pcg32::new(7, 11);
        let n = 64u32;
        let mut links = ReadyLinks::new(n as usize);
        let mut qs = [ReadyQueue::default(); 4];
        let mut oracle: [VecDeque<u32>; 4] = Default::default();
        let mut home: Vec<Option<usize>> = vec![None; n as usize];
        for _ in 0..20_000 {
            let q = rng.next_u32() as usize % 4;
            let op = rng.next_u32() % 3;
            if op < 2 {
                let c = rng.next_u32() % n;
                if home[c as usize].is_none() {
                    if op == 0 {
                        qs[q].push(&mut links, c);
                        oracle[q].push_back(c);
                    } else {
                        qs[q].push_front(&mut links, c);
                        oracle[q].push_front(c);
                    }
                    home[c as usize] = Some(q);
                }
            } else {
                let got = qs[q].pop(&mut links);
                assert_eq!(got, oracle[q].pop_front());
                if let Some(c) = got {
                    home[c as usize] = None;
                }
            }
            assert_eq!(qs[q].is_empty(), oracle[q].is_empty());
        }
    }
}
