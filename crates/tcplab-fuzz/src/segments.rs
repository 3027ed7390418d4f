//! The TCP core fed segment sequences: a client and a server joined by a
//! network that the input controls (deliver, drop, reorder, duplicate),
//! with time jumps, application writes, reads and closes, and forged
//! segments (fields moved relative to the last real one, or raw IPv4
//! bytes through the wire parser) injected at either end.
//!
//! Oracles, after every operation, at both ends: nothing panics; the
//! sender's accounting holds as Linux checks it (`tcp_verify_left_out`:
//! sacked + lost never exceed packets_out; and cwnd >= 1); `poll_transmit`
//! runs dry.
//!
//! Input: bytes decoded into an [`Input`] as libFuzzer's structured
//! fuzzing does (`arbitrary`); at most 4096 operations run.

use arbitrary::{Arbitrary, Unstructured};
use std::collections::VecDeque;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::time::{Duration, Instant};
use tcplab_core::wire::packet::PacketRepr;
use tcplab_core::wire::{Ecn, SackBlock, SegmentRepr, SeqNum, TcpFlags};
use tcplab_core::{Connection, TcpConfig, TcpInfo};

/// One case: the configuration of both ends, then the operations.
#[derive(Arbitrary, Debug)]
pub struct Input {
    preset: u8,
    cc: u8,
    sack: bool,
    timestamps: bool,
    ecn: bool,
    ops: Vec<Op>,
}

#[derive(Arbitrary, Debug)]
struct Forged {
    seq_delta: i32,
    ack_delta: i32,
    flags: u8,
    window: u16,
    payload_len: u16,
    ecn: u8,
    sack: Vec<(i16, i16)>,
    ts: Option<(u32, u32)>,
    syn_options: Option<(u16, u8)>,
}

#[derive(Arbitrary, Debug)]
enum Op {
    /// Deliver the oldest segment travelling towards that end.
    Deliver {
        to_server: bool,
    },
    Drop {
        to_server: bool,
    },
    /// Swap the two oldest segments in flight in that direction.
    Reorder {
        to_server: bool,
    },
    Duplicate {
        to_server: bool,
    },
    /// Time passes (ms); due timers fire.
    Advance {
        ms: u16,
    },
    /// Jump to the earliest timer and fire it.
    NextTimer,
    Write {
        bytes: u32,
    },
    Read {
        server: bool,
    },
    Close {
        server: bool,
    },
    /// A forged segment, made from the last one the other end sent.
    Forge {
        to_server: bool,
        f: Forged,
    },
    /// Raw bytes through the wire parser; injected if they parse.
    Raw {
        to_server: bool,
        bytes: Vec<u8>,
    },
}

struct Net {
    now: Instant,
    client: Connection,
    server: Connection,
    /// In flight towards the client [0] and the server [1].
    queues: [VecDeque<SegmentRepr>; 2],
    /// The last segment each end sent: client [0], server [1].
    last: [Option<SegmentRepr>; 2],
}

impl Net {
    fn end(&mut self, server: bool) -> &mut Connection {
        if server {
            &mut self.server
        } else {
            &mut self.client
        }
    }

    fn flush(&mut self) {
        for server in [false, true] {
            let now = self.now;
            let mut n = 0;
            while let Some(seg) = self.end(server).poll_transmit(now) {
                n += 1;
                assert!(n < 100_000, "poll_transmit never runs dry");
                self.last[usize::from(server)] = Some(seg);
                self.queues[usize::from(!server)].push_back(seg);
            }
            // Bound memory: a fuzz input cannot run up a huge backlog.
            let q = &mut self.queues[usize::from(!server)];
            while q.len() > 4096 {
                q.pop_front();
            }
        }
    }

    fn fire_due(&mut self) {
        for server in [false, true] {
            let now = self.now;
            let c = self.end(server);
            if c.poll_timeout().is_some_and(|t| t <= now) {
                c.handle_timeout(now);
            }
        }
    }

    fn check(&self) {
        check_accounting(&self.client.info());
        check_accounting(&self.server.info());
    }
}

/// What Linux itself guarantees (`tcp_verify_left_out`), and cwnd >= 1.
///
/// Not `retrans_out <= packets_out`: the first campaign found (input
/// `fuzz/corpus/core_segments/regression-retrans-leak`, honest network
/// operations only) that it fails after an undo followed by an RTO, and so
/// it does in Linux: `tcp_undo_cwnd_reduction` clears TCPCB_LOST but not
/// TCPCB_SACKED_RETRANS, the RTO marks the segment lost again and
/// `tcp_retransmit_skb` counts it a second time (Linux logs "retrans_out
/// leaked"; the count is reset once nothing is in flight, as the model does).
fn check_accounting(i: &TcpInfo) {
    assert!(i.sacked + i.lost <= i.unacked, "left_out > packets_out: {i:?}");
    assert!(i.snd_cwnd >= 1, "cwnd 0: {i:?}");
}

fn shift(s: SeqNum, d: i32) -> SeqNum {
    SeqNum(s.0.wrapping_add(d as u32))
}

fn forge(t: &SegmentRepr, f: &Forged) -> SegmentRepr {
    let mut seg = *t;
    seg.seq = shift(t.seq, f.seq_delta);
    seg.ack = shift(t.ack, f.ack_delta);
    seg.flags = TcpFlags(f.flags);
    seg.window = f.window;
    seg.payload_len = u32::from(f.payload_len);
    seg.ecn = match f.ecn % 4 {
        0 => Ecn::NotEct,
        1 => Ecn::Ect1,
        2 => Ecn::Ect0,
        _ => Ecn::Ce,
    };
    seg.options.sack_len = 0;
    for &(a, b) in f.sack.iter().take(4) {
        seg.options.push_sack(SackBlock { start: shift(t.ack, a.into()), end: shift(t.ack, b.into()) });
    }
    if f.ts.is_some() {
        seg.options.timestamp = f.ts;
    }
    if let Some((mss, wscale)) = f.syn_options {
        seg.options.mss = Some(mss);
        seg.options.wscale = Some(wscale);
        seg.options.sack_permitted = true;
    }
    seg
}

/// Decodes `data` as libFuzzer's structured fuzzing does
/// (`arbitrary_take_rest`) and runs it.
pub fn check(data: &[u8]) {
    if let Ok(input) = Input::arbitrary_take_rest(Unstructured::new(data)) {
        run(&input);
    }
}

/// Runs one case.
pub fn run(input: &Input) {
    let preset = PRESETS[usize::from(input.preset) % PRESETS.len()];
    let Some(mut cfg) = TcpConfig::preset(preset) else { return };
    let cc = CcConfig::NAMES[usize::from(input.cc) % CcConfig::NAMES.len()];
    let Some(cc) = CcConfig::from_name(cc) else { return };
    cfg.congestion_control = cc;
    cfg.tcp_sack = input.sack;
    cfg.tcp_timestamps = input.timestamps;
    if input.ecn {
        cfg.tcp_ecn = 1;
    }
    let now = Instant::ZERO;
    let mut net = Net {
        now,
        client: Connection::client(cfg.clone(), 40000, 80, SeqNum(1_000_000), now),
        server: Connection::server(cfg.clone(), 80, 40000, SeqNum(5_000_000)),
        queues: [VecDeque::new(), VecDeque::new()],
        last: [None, None],
    };
    net.flush();
    for op in input.ops.iter().take(4096) {
        match op {
            Op::Deliver { to_server } => {
                if let Some(seg) = net.queues[usize::from(*to_server)].pop_front() {
                    let now = net.now;
                    net.end(*to_server).handle_segment(now, &seg);
                }
            }
            Op::Drop { to_server } => {
                net.queues[usize::from(*to_server)].pop_front();
            }
            Op::Reorder { to_server } => {
                let q = &mut net.queues[usize::from(*to_server)];
                if q.len() >= 2 {
                    q.swap(0, 1);
                }
            }
            Op::Duplicate { to_server } => {
                let q = &mut net.queues[usize::from(*to_server)];
                if let Some(s) = q.front().copied() {
                    q.push_back(s);
                }
            }
            Op::Advance { ms } => {
                net.now += Duration::from_millis(u64::from(*ms));
                net.fire_due();
            }
            Op::NextTimer => {
                let next = [net.client.poll_timeout(), net.server.poll_timeout()].into_iter().flatten().min();
                if let Some(t) = next {
                    net.now = net.now.max(t);
                    net.fire_due();
                }
            }
            Op::Write { bytes } => {
                net.client.write(u64::from(*bytes));
            }
            Op::Read { server } => {
                let c = net.end(*server);
                let n = c.readable();
                c.read(n);
            }
            Op::Close { server } => net.end(*server).close(),
            Op::Forge { to_server, f } => {
                if let Some(t) = net.last[usize::from(!*to_server)] {
                    let seg = forge(&t, f);
                    let now = net.now;
                    net.end(*to_server).handle_segment(now, &seg);
                }
            }
            Op::Raw { to_server, bytes } => {
                if let Ok(p) = PacketRepr::parse(bytes) {
                    let now = net.now;
                    net.end(*to_server).handle_segment(now, &p.packet.seg);
                }
            }
        }
        net.flush();
        net.check();
    }
}
