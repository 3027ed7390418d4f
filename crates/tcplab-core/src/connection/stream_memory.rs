//! `sk_stream_memory_free`: when `tcp_sendmsg_locked` may start a new
//! skb (net/ipv4/tcp.c, `new_segment`), and so where a write stops.
//!
//! Linux tests the send buffer only there: `sk_wmem_queued < sk_sndbuf`
//! and `tcp_stream_memory_free(sk, 0)` (`write_seq - snd_nxt` below
//! `tcp_notsent_lowat`, notsent_lowat.rs). Bytes go on filling the tail
//! skb up to `size_goal` without a test, and `tcp_push_one` sends from a
//! full head skb, which the loop then refills; so a write overshoots
//! `sk_sndbuf` by up to about one skb, and returns at an skb boundary
//! after pushing what it copied (`wait_for_space`: `tcp_push` with
//! `TCP_NAGLE_PUSH`). A blocked writer wakes when `sk_stream_write_space`
//! finds the socket writeable ([`Connection::poll_writable`]).
//!
//! [`Connection::send_msg_at`] does this, building the call's skbs at the
//! time of the call (the model charges payload bytes, not `truesize`).
//! [`Connection::write`] (the simulator's applications, which give no
//! time) still takes what fits in the buffer, counted in bytes, up front.

use super::skb::{SendCall, TCP_NAGLE_PUSH};
use super::{Connection, MsgFlags};
use crate::time::Instant;
use crate::wire::SeqNum;

impl Connection {
    /// `sendmsg(flags)` at `now` (net/ipv4/tcp.c `tcp_sendmsg_locked`):
    /// builds the call's skbs now and takes what Linux takes before
    /// `sk_stream_memory_free` fails at a new skb (returned; 0 where the
    /// state allows no data, as [`send_space`](Self::send_space)).
    pub fn send_msg_at(&mut self, now: Instant, bytes: u64, flags: MsgFlags) -> u64 {
        if self.send_space() == 0 && !self.state.can_send_data() || self.fin_queued {
            return 0;
        }
        if !self.state.can_send_data() {
            // The handshake's states: queued as before.
            return self.send_msg(bytes, flags);
        }
        self.set_now(now);
        if !self.sq.calls.is_empty() {
            self.process_sends(now);
        }
        let n = bytes.min(u32::MAX as u64 / 4) as u32;
        if n == 0 {
            return 0;
        }
        self.queue_send(n, bytes, flags);
        self.app_output = true;
        let Some(call) = self.sq.calls.pop_front() else { return 0 };
        self.sq.stream_memory_checked = true;
        let left = self.sendmsg_now(now, call);
        self.sq.stream_memory_checked = false;
        self.write_seq = SeqNum(self.write_seq.0.wrapping_sub(left));
        let n = n - left;
        self.app_nospace = left > 0 || (n as u64) < bytes;
        self.sq.partial = left > 0 && n > 0;
        n as u64
    }

    /// `sk_stream_memory_free` for the skb `sendmsg` is about to add:
    /// the notsent limit, and in a call made by
    /// [`send_msg_at`](Self::send_msg_at) the send buffer (payload bytes
    /// queued, `built_seq - snd_una`, against `sk_sndbuf`); `write`'s
    /// calls had the buffer applied when they were accepted.
    pub(super) fn stream_memory_free(&self) -> bool {
        if self.sq.stream_memory_checked && self.sq.built_seq - self.snd_una >= self.sk_sndbuf {
            return false;
        }
        self.notsent_lowat == u32::MAX || self.sq.built_seq - self.snd_nxt < self.notsent_lowat
    }

    /// `wait_for_space` in `tcp_sendmsg_locked`: push what this call
    /// copied (PSH on the tail, `TCP_NAGLE_PUSH`) and stop; returns the
    /// bytes of `call` left uncopied.
    pub(super) fn sendmsg_wait_for_space(&mut self, now: Instant, call: SendCall, copied: bool) -> u32 {
        if copied {
            self.mark_push_tail();
            self.write_xmit(now, 0, TCP_NAGLE_PUSH);
        }
        call.end - self.sq.built_seq
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::wire::{SegmentRepr, TcpFlags};

    fn seg(flags: TcpFlags, seq: u32, ack: u32, window: u16) -> SegmentRepr {
        SegmentRepr {
            src_port: 9,
            dst_port: 8,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window,
            ..Default::default()
        }
    }

    fn at_ms(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    /// blocking-write.pkt's trace (Linux 6.12 passes it on the kernel
    /// backend): SO_SNDBUF 21000 (sk_sndbuf 42000), peer window 50000
    /// without scaling (skbs of half of it, 25 MSS), tcp_min_tso_segs 10,
    /// cwnd 10. A 61000-byte write takes 60000: the head skb is refilled
    /// after each tcp_push_one (5 MSS twice), so 35000 are queued when
    /// the second skb is asked for, and 60000 when the third is refused.
    /// The writer then wakes only when free >= queued / 2: not at ACK
    /// 10001 (50000 queued) or 30001 (30000), at 36001 (24000).
    #[test]
    fn test_write_overshoots_the_send_buffer_by_an_skb_and_wakes_at_half() {
        let cfg = TcpConfig { so_sndbuf: 21000, tcp_min_tso_segs: 10, ..TcpConfig::default() };
        let mut c = Connection::server(cfg, 8, 9, SeqNum(0));
        let mut syn = seg(TcpFlags::SYN, 0, 0, 50000);
        syn.options.mss = Some(1000);
        syn.options.wscale = Some(0);
        c.handle_segment(at_ms(100), &syn);
        while c.poll_transmit(at_ms(100)).is_some() {}
        c.handle_segment(at_ms(200), &seg(TcpFlags::ACK, 1, 1, 50000));
        while c.poll_transmit(at_ms(200)).is_some() {}
        assert_eq!(c.send_msg_at(at_ms(200), 61000, MsgFlags::default()), 60000);
        let sent: u32 = std::iter::from_fn(|| c.poll_transmit(at_ms(200))).map(|s| s.payload_len).sum();
        assert_eq!(sent, 10000);
        for (ms, ack, writable) in [(300, 10001, false), (400, 30001, false), (500, 36001, true)] {
            c.handle_segment(at_ms(ms), &seg(TcpFlags::ACK, 1, ack, 50000));
            while c.poll_transmit(at_ms(ms)).is_some() {}
            assert_eq!(c.poll_writable(), writable, "after ACK {ack}");
        }
        assert_eq!(c.send_msg_at(at_ms(500), 1000, MsgFlags::default()), 1000);
    }
}
