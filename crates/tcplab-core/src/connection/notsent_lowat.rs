//! `TCP_NOTSENT_LOWAT` (and the `tcp_notsent_lowat` sysctl): a limit on
//! the bytes written but not yet sent, which bounds how far the
//! application runs ahead of the network.
//!
//! - `sendmsg` asks `sk_stream_memory_free` before each new skb
//!   (net/ipv4/tcp.c `tcp_sendmsg_locked`, `new_segment`), which for TCP
//!   is `tcp_stream_memory_free(sk, 0)` (net/ipv4/tcp_ipv4.c):
//!   `write_seq - snd_nxt < tcp_notsent_lowat(tp)`. Bytes go on filling
//!   the tail skb without the test, so a call returns at an skb boundary,
//!   after pushing what it queued (`wait_for_space`: `tcp_push` with
//!   `TCP_NAGLE_PUSH`).
//! - `poll()` reports `POLLOUT` when `__sk_stream_is_writeable(sk, 1)`
//!   (include/net/sock.h): free send buffer at least half what is queued,
//!   and twice the unsent bytes below the limit (`tcp_stream_memory_free`
//!   with `wake` = 1).
//!
//! Where a write stops is stream_memory.rs's.

use super::Connection;

impl Connection {
    /// Sets `tcp_notsent_lowat(tp)`, the effective limit: the
    /// `TCP_NOTSENT_LOWAT` value, or the `tcp_notsent_lowat` sysctl where
    /// the option is 0 (`u32::MAX`, the sysctl's default: no limit).
    pub fn set_notsent_lowat(&mut self, lowat: u32) {
        self.notsent_lowat = lowat;
        // do_tcp_setsockopt: sk->sk_write_space(sk).
        self.app_output = true;
    }

    /// The limit in force (`tcp_notsent_lowat`).
    pub fn notsent_lowat(&self) -> u32 {
        self.notsent_lowat
    }

    /// Bytes written and not yet sent (`write_seq - snd_nxt`,
    /// `tcpi_notsent_bytes`, `SIOCOUTQNSD`).
    pub fn notsent_bytes(&self) -> u64 {
        (self.write_seq - self.snd_nxt) as u64
    }

    /// Bytes written and not yet acknowledged (`write_seq - snd_una`,
    /// `SIOCOUTQ`).
    pub fn unacked_bytes(&self) -> u64 {
        (self.write_seq - self.snd_una) as u64
    }

    /// `poll()`'s `POLLOUT` for a connected socket (net/ipv4/tcp.c
    /// `tcp_poll`): the send side is shut (a write would fail at once), or
    /// `__sk_stream_is_writeable(sk, 1)`.
    pub fn poll_writable(&self) -> bool {
        if self.send_shutdown() {
            return true;
        }
        let queued = (self.write_seq - self.snd_una) as u64;
        let free = (self.sk_sndbuf as u64).saturating_sub(queued);
        free >= queued >> 1 && (self.notsent_bytes() << 1) < self.notsent_lowat as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::connection::MsgFlags;
    use crate::time::Instant;
    use crate::wire::{SegmentRepr, SeqNum, TcpFlags};

    fn seg(flags: TcpFlags, seq: u32, ack: u32) -> SegmentRepr {
        SegmentRepr {
            src_port: 9,
            dst_port: 8,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window: 257,
            ..Default::default()
        }
    }

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// notsent-lowat-setsockopt.pkt's connection: passive, ISS 0, peer
    /// MSS 1000 and wscale 7 (window 257 << 7 = 32896, so skbs of
    /// half of it, 16 MSS), 10 ms RTT, cwnd 10, defaults.sh's tcp_wmem.
    fn established() -> Connection {
        let cfg = TcpConfig { tcp_wmem: [4096, 256 * 1024, 4194304], ..TcpConfig::default() };
        let mut c = Connection::server(cfg, 8, 9, SeqNum(0));
        let mut syn = seg(TcpFlags::SYN, 0, 0);
        syn.window = 32792;
        syn.options.mss = Some(1000);
        syn.options.wscale = Some(7);
        c.handle_segment(at_ms(0), &syn);
        while c.poll_transmit(at_ms(0)).is_some() {}
        c.handle_segment(at_ms(10), &seg(TcpFlags::ACK, 1, 1));
        while c.poll_transmit(at_ms(10)).is_some() {}
        c
    }

    /// Linux 6.12 (kernel backend) takes 26000 bytes of a 59000-byte
    /// write for any limit from 1000 to 16000, 42000 for 20000 and 58000
    /// for 40000: the first skb is refilled after each `tcp_push_one`
    /// sends from it (5 MSS, then 5 more: cwnd 10), so it holds 26000
    /// when the second skb is asked for, with 16000 unsent; each further
    /// skb adds 16000.
    #[test]
    fn test_write_stops_at_the_skb_where_unsent_bytes_reach_the_limit() {
        for (lowat, want) in [(1000, 26000), (4000, 26000), (16000, 26000), (20000, 42000), (40000, 58000)] {
            let mut c = established();
            c.set_notsent_lowat(lowat);
            assert_eq!(c.send_msg_at(at_ms(10), 59000, MsgFlags::default()), want, "lowat {lowat}");
            let sent: u32 = std::iter::from_fn(|| c.poll_transmit(at_ms(10))).map(|s| s.payload_len).sum();
            assert_eq!(sent, 10_000);
            assert_eq!(c.notsent_bytes(), want - 10_000);
        }
    }

    /// POLLOUT once twice the unsent bytes are below the limit: with 4000,
    /// not at 16000 or 4000 unsent, at 0.
    #[test]
    fn test_poll_writable_needs_twice_the_unsent_below_the_limit() {
        let mut c = established();
        c.set_notsent_lowat(4000);
        c.send_msg_at(at_ms(10), 59000, MsgFlags::default());
        while c.poll_transmit(at_ms(10)).is_some() {}
        assert!(!c.poll_writable());
        let mut acked = 1;
        for (i, ack) in [2001u32, 4001, 6001, 8001].into_iter().enumerate() {
            let t = at_ms(20 + 10 * i as u64);
            c.handle_segment(t, &seg(TcpFlags::ACK, 1, ack));
            while c.poll_transmit(t).is_some() {}
            acked = ack;
            if c.notsent_bytes() > 0 {
                assert!(!c.poll_writable(), "ack {ack}: {} unsent", c.notsent_bytes());
            }
        }
        assert_eq!((acked, c.notsent_bytes()), (8001, 0));
        assert!(c.poll_writable());
    }
}
