//! A two-endpoint harness in virtual time (after quinn's `Pair`): a client
//! and a server joined by a link with a one-way delay and a rate, with
//! hooks to drop, delay or reorder individual segments. Time jumps to the
//! next event instead of sleeping.
#![allow(dead_code)]

pub mod sender;

use std::collections::BinaryHeap;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::wire::{SegmentRepr, SeqNum};
use tcplab_core::{Connection, TcpConfig};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    Client,
    Server,
}

struct InFlight {
    at: Instant,
    seq: u64,
    to: Side,
    seg: SegmentRepr,
}
impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

/// What the network does with one segment.
pub enum Fate {
    Deliver,
    Drop,
    /// Deliver with this much extra delay.
    Delay(Duration),
    /// Deliver with the IP ECN field set to CE (a marking switch).
    MarkCe,
    /// Deliver, and deliver a copy this much later (a duplicating path).
    Duplicate(Duration),
}

/// Decides each segment's fate; sees the time and the direction it travels.
pub type Filter = Box<dyn FnMut(Instant, Side, &SegmentRepr) -> Fate>;

pub struct Pair {
    pub now: Instant,
    pub client: Connection,
    pub server: Connection,
    /// One-way propagation delay.
    pub delay: Duration,
    /// Serialization time per byte in ns (0 = infinitely fast).
    pub ns_per_byte: u64,
    /// When each direction's wire is free again.
    busy_until: [Instant; 2],
    queue: BinaryHeap<InFlight>,
    seq: u64,
    /// Decides each segment's fate; sees the direction it travels.
    pub filter: Filter,
    /// Every segment sent, with the time and sender.
    pub log: Vec<(Instant, Side, SegmentRepr)>,
    /// Bytes the server application has read.
    pub server_read: u64,
    /// The server application reads nothing before this time (a slow
    /// reader: the receive buffer fills and the window closes).
    pub server_paused_until: Instant,
    pub client_read: u64,
}

impl Pair {
    pub fn new(client_cfg: &TcpConfig, server_cfg: &TcpConfig, delay: Duration) -> Pair {
        let now = Instant::ZERO;
        Pair {
            now,
            client: Connection::client(client_cfg.clone(), 40000, 80, SeqNum(1_000_000), now),
            server: Connection::server(server_cfg.clone(), 80, 40000, SeqNum(5_000_000)),
            delay,
            ns_per_byte: 0,
            busy_until: [now; 2],
            queue: BinaryHeap::new(),
            seq: 0,
            filter: Box::new(|_, _, _| Fate::Deliver),
            log: Vec::new(),
            server_read: 0,
            server_paused_until: now,
            client_read: 0,
        }
    }

    fn conn(&mut self, s: Side) -> &mut Connection {
        match s {
            Side::Client => &mut self.client,
            Side::Server => &mut self.server,
        }
    }

    /// Drains both endpoints' transmissions into the network.
    pub fn flush(&mut self) {
        for side in [Side::Client, Side::Server] {
            let now = self.now;
            while let Some(seg) = self.conn(side).poll_transmit(now) {
                self.log.push((self.now, side, seg));
                let to = if side == Side::Client { Side::Server } else { Side::Client };
                let fate = (self.filter)(now, side, &seg);
                let d = side as usize;
                let start = self.busy_until[d].max(self.now);
                let tx_done = start + Duration::from_nanos(self.ns_per_byte * seg.wire_len() as u64);
                self.busy_until[d] = tx_done;
                let mut seg = seg;
                let at = match fate {
                    Fate::Drop => continue,
                    Fate::Deliver => tx_done + self.delay,
                    Fate::Delay(x) => tx_done + self.delay + x,
                    Fate::MarkCe => {
                        if seg.ecn.is_ect() {
                            seg.ecn = tcplab_core::wire::Ecn::Ce;
                        }
                        tx_done + self.delay
                    }
                    Fate::Duplicate(later) => {
                        self.seq += 1;
                        self.queue.push(InFlight { at: tx_done + self.delay + later, seq: self.seq, to, seg });
                        tx_done + self.delay
                    }
                };
                self.seq += 1;
                self.queue.push(InFlight { at, seq: self.seq, to, seg });
            }
        }
    }

    /// Lets the applications read everything available.
    fn read_apps(&mut self) {
        if self.now >= self.server_paused_until {
            let n = self.server.readable();
            self.server_read += self.server.read(n);
        }
        let n = self.client.readable();
        self.client_read += self.client.read(n);
    }

    /// Advances to the next event (delivery or timer); false when idle.
    pub fn step(&mut self) -> bool {
        self.flush();
        let next_pkt = self.queue.peek().map(|p| p.at);
        // The end of a reader pause is an event when there is data to read.
        let reader_wakes =
            (self.now < self.server_paused_until && self.server.readable() > 0).then_some(self.server_paused_until);
        let next_timer =
            [self.client.poll_timeout(), self.server.poll_timeout(), reader_wakes].into_iter().flatten().min();
        let next = match (next_pkt, next_timer) {
            (Some(a), Some(b)) => a.min(b),
            (a, b) => match a.or(b) {
                Some(t) => t,
                None => return false,
            },
        };
        self.now = self.now.max(next);
        if next_pkt == Some(next) {
            let p = self.queue.pop().expect("peeked");
            let now = self.now;
            self.conn(p.to).handle_segment(now, &p.seg);
        } else {
            let now = self.now;
            if self.client.poll_timeout().is_some_and(|t| t <= now) {
                self.client.handle_timeout(now);
            }
            if self.server.poll_timeout().is_some_and(|t| t <= now) {
                self.server.handle_timeout(now);
            }
        }
        self.read_apps();
        self.flush();
        true
    }

    /// Steps until `until` or idle.
    pub fn run_until(&mut self, until: Instant) {
        while self.now < until {
            if !self.step() {
                break;
            }
        }
    }

    /// Steps until `pred` holds, at most `max_steps` steps. Returns whether it held.
    pub fn drive_until(&mut self, max_steps: usize, mut pred: impl FnMut(&Pair) -> bool) -> bool {
        for _ in 0..max_steps {
            if pred(self) {
                return true;
            }
            if !self.step() {
                return pred(self);
            }
        }
        pred(self)
    }

    /// The client writes `total` bytes and closes; steps until the server
    /// has read them all and the client is closed, the pair is idle or
    /// `deadline` passes, calling `each_step` after every step.
    pub fn send_and_close(&mut self, total: u64, deadline: Instant, mut each_step: impl FnMut(&Pair)) {
        let mut written = 0u64;
        while self.now < deadline {
            if written < total {
                written += self.client.write(total - written);
                if written == total {
                    self.client.close();
                }
            }
            if !self.step() {
                break;
            }
            each_step(self);
            if self.server_read == total && self.client.is_closed() {
                break;
            }
        }
    }

    /// Segments the client sent that carried payload.
    pub fn client_data_segments(&self) -> impl Iterator<Item = &(Instant, Side, SegmentRepr)> {
        self.log.iter().filter(|(_, s, seg)| *s == Side::Client && seg.payload_len > 0)
    }
}

/// A small deterministic generator, so each property-test case is
/// reproducible from its seed.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    /// True with probability `per_mille` / 1000.
    pub fn chance(&mut self, per_mille: u32) -> bool {
        self.next() % 1000 < per_mille
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
}

/// The sender's accounting invariants (`tcp_verify_left_out`): sacked +
/// lost never exceed packets_out, retrans_out never exceeds packets_out,
/// so `tcp_packets_in_flight` is never negative; and cwnd ≥ 1.
pub fn check_accounting(i: &tcplab_core::TcpInfo, ctx: &str) {
    assert!(i.sacked + i.lost <= i.unacked, "left_out > packets_out ({ctx}): {i:?}");
    assert!(i.retrans <= i.unacked, "retrans_out > packets_out ({ctx}): {i:?}");
    assert!(i.snd_cwnd >= 1, "cwnd 0 ({ctx}): {i:?}");
}

/// The property tests' configuration: `cases` cases from a fixed seed, so
/// CI sees the same cases every run. `PROPTEST_CASES=N` and
/// `PROPTEST_RNG_SEED=N`, which proptest applies over this, search
/// further.
pub fn proptest_config(cases: u32, seed: u64) -> proptest::test_runner::Config {
    proptest::test_runner::Config {
        cases,
        rng_seed: proptest::test_runner::RngSeed::Fixed(seed),
        ..proptest::test_runner::Config::default()
    }
}
