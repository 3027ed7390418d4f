//! A sender whose peer is played by the test: handshake done, then ACKs
//! crafted segment by segment (hand-built ACK traces).

use tcplab_core::time::{Duration, Instant};
use tcplab_core::wire::{SackBlock, SegmentRepr, SeqNum, TcpFlags, TcpOptions};
use tcplab_core::{Connection, TcpConfig, TcpMetrics};

pub const ISS: u32 = 1000;
pub const IRS: u32 = 9000;
pub const MSS: u32 = 1460;

/// A sender whose peer is played by the test.
pub struct Sender {
    pub now: Instant,
    pub c: Connection,
    pub sent: Vec<SegmentRepr>,
}

impl Sender {
    /// Handshake done (RTT 10 ms), `bytes` written, the initial window out.
    pub fn new(mut cfg: TcpConfig, cached: Option<TcpMetrics>, bytes: u64) -> Sender {
        cfg.tcp_timestamps = false;
        let now = Instant::ZERO;
        let mut c = Connection::client_with_metrics(cfg.clone(), 40000, 80, SeqNum(ISS), now, cached.as_ref());
        let syn = c.poll_transmit(now).expect("SYN");
        assert!(syn.flags.syn());
        let mut s = Sender { now, c, sent: vec![] };
        s.now = Instant::from_millis(10);
        let synack = SegmentRepr {
            src_port: 80,
            dst_port: 40000,
            seq: SeqNum(IRS),
            ack: SeqNum(ISS + 1),
            flags: TcpFlags::SYN | TcpFlags::ACK,
            window: 65535,
            options: TcpOptions { mss: Some(MSS as u16), sack_permitted: true, wscale: Some(7), ..Default::default() },
            ..Default::default()
        };
        s.c.handle_segment(s.now, &synack);
        s.drain();
        s.sent.clear();
        s.c.write(bytes);
        s.drain();
        s
    }

    pub fn drain(&mut self) {
        while let Some(seg) = self.c.poll_transmit(self.now) {
            self.sent.push(seg);
        }
    }

    /// Start of data segment `i` (0-based).
    pub fn seq(i: u32) -> SeqNum {
        SeqNum(ISS + 1 + i * MSS)
    }

    /// An ACK up to segment `upto` (exclusive) with SACK blocks given as
    /// segment ranges [a, b).
    pub fn ack(&mut self, upto: u32, sacks: &[(u32, u32)], dsack: Option<(u32, u32)>) {
        self.ack_window(upto, sacks, dsack, 2000);
    }

    /// As [`ack`](Self::ack), advertising `window` (scaled by 2^7).
    pub fn ack_window(&mut self, upto: u32, sacks: &[(u32, u32)], dsack: Option<(u32, u32)>, window: u16) {
        self.now += Duration::from_micros(100);
        let mut o = TcpOptions::default();
        if let Some((a, b)) = dsack {
            o.push_sack(SackBlock { start: Self::seq(a), end: Self::seq(b) });
        }
        for &(a, b) in sacks {
            o.push_sack(SackBlock { start: Self::seq(a), end: Self::seq(b) });
        }
        let seg = SegmentRepr {
            src_port: 80,
            dst_port: 40000,
            seq: SeqNum(IRS + 1),
            ack: Self::seq(upto),
            flags: TcpFlags::ACK,
            window,
            options: o,
            ..Default::default()
        };
        self.c.handle_segment(self.now, &seg);
        self.drain();
    }
}
