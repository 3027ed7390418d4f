//! Holding small segments back on the application's word: `TCP_CORK`,
//! `MSG_MORE` and `TCP_NODELAY`, the bits of `tp->nonagle`
//! (include/net/tcp.h):
//!
//! - `TCP_NAGLE_OFF`: `TCP_NODELAY`, Nagle's rule is off.
//! - `TCP_NAGLE_CORK`: `TCP_CORK`, a partial last segment waits for more
//!   data whatever is in flight (`tcp_nagle_check`); `tcp_push` passes
//!   the same bit for one `sendmsg(MSG_MORE)`, which also leaves the tail
//!   skb without PSH (net/ipv4/tcp.c `tcp_push`).
//! - `TCP_NAGLE_PUSH`: data already queued goes out once despite the
//!   cork; set by `TCP_NODELAY` and by uncorking with `TCP_NODELAY` on,
//!   cleared when the next skb is queued (`tcp_skb_entail`).
//!
//! A corked partial segment with nothing in flight leaves on the zero
//! window probe timer (`tcp_check_probe_timer`, one RTO later), which
//! sends it with PSH (`tcp_write_wakeup`).

use super::skb::{TCP_NAGLE_CORK, TCP_NAGLE_OFF, TCP_NAGLE_PUSH};
use super::Connection;

/// The `sendmsg` flags the model honours.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MsgFlags {
    /// `MSG_EOR`: the data ends a record (nothing joins its skb).
    pub eor: bool,
    /// `MSG_MORE`: more data follows; cork this call's push.
    pub more: bool,
}

impl Connection {
    /// `setsockopt(TCP_NODELAY)` (net/ipv4/tcp.c `__tcp_sock_set_nodelay`):
    /// on sets `TCP_NAGLE_OFF | TCP_NAGLE_PUSH` and pushes what is
    /// queued (`tcp_push_pending_frames`); off clears `TCP_NAGLE_OFF`.
    pub fn set_nodelay(&mut self, on: bool) {
        if on {
            self.nonagle |= TCP_NAGLE_OFF | TCP_NAGLE_PUSH;
            self.push_pending_frames();
        } else {
            self.nonagle &= !TCP_NAGLE_OFF;
        }
    }

    /// `setsockopt(TCP_CORK)` (net/ipv4/tcp.c `__tcp_sock_set_cork`): on
    /// sets `TCP_NAGLE_CORK`; off clears it, sets `TCP_NAGLE_PUSH` if
    /// `TCP_NODELAY` is on, and pushes what is queued.
    pub fn set_cork(&mut self, on: bool) {
        if on {
            self.nonagle |= TCP_NAGLE_CORK;
        } else {
            self.nonagle &= !TCP_NAGLE_CORK;
            if self.nonagle & TCP_NAGLE_OFF != 0 {
                self.nonagle |= TCP_NAGLE_PUSH;
            }
            self.push_pending_frames();
        }
    }

    /// `TCP_CORK` is on (`getsockopt`).
    pub fn cork(&self) -> bool {
        self.nonagle & TCP_NAGLE_CORK != 0
    }

    /// `tcp_push_pending_frames` with `tp->nonagle`, done by the next
    /// `poll_transmit` (the time is needed).
    fn push_pending_frames(&mut self) {
        self.sq.xmit_owed = true;
        self.app_output = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::time::Instant;
    use crate::wire::{SegmentRepr, SeqNum, TcpFlags};
    use crate::TcpState;

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

    /// sockopt_cork_nodelay.pkt's opening: a passive connection (ISS 0,
    /// peer ISN 0, MSS 1000, wscale 7) established at 10 ms.
    fn established() -> Connection {
        let mut c = Connection::server(TcpConfig::default(), 8, 9, SeqNum(0));
        let mut syn = seg(TcpFlags::SYN, 0, 0);
        syn.window = 32792;
        syn.options.mss = Some(1000);
        syn.options.wscale = Some(7);
        c.handle_segment(at_ms(0), &syn);
        while c.poll_transmit(at_ms(0)).is_some() {}
        c.handle_segment(at_ms(10), &seg(TcpFlags::ACK, 1, 1));
        while c.poll_transmit(at_ms(10)).is_some() {}
        assert_eq!(c.state(), TcpState::Established);
        c
    }

    fn sent(c: &mut Connection, now: Instant) -> Vec<(u32, u32, bool)> {
        std::iter::from_fn(|| c.poll_transmit(now))
            .filter(|s| s.payload_len > 0)
            .map(|s| (s.seq.0, s.payload_len, s.flags.contains(TcpFlags::PSH)))
            .collect()
    }

    /// Corked, two 40-byte writes 50 ms apart stay queued although nothing
    /// is in flight; uncorking sends them as one 80-byte segment with PSH
    /// (`P. 1:81(80)`).
    #[test]
    fn test_cork_holds_partial_segment_until_uncorked() {
        let mut c = established();
        c.set_cork(true);
        assert!(c.cork());
        c.write(40);
        assert_eq!(sent(&mut c, at_ms(10)), vec![]);
        c.write(40);
        assert_eq!(sent(&mut c, at_ms(60)), vec![]);
        c.set_cork(false);
        assert_eq!(sent(&mut c, at_ms(70)), vec![(1, 80, true)]);
    }

    /// Corked writes are pushed by TCP_NODELAY (`TCP_NAGLE_PUSH`) while
    /// the cork stays on; the next skb clears the push bit, so MSG_MORE
    /// data queued after that waits again, and goes without PSH when
    /// TCP_NODELAY pushes it.
    #[test]
    fn test_nodelay_pushes_corked_data_once_and_msg_more_leaves_no_psh() {
        let mut c = established();
        c.set_cork(true);
        c.write(40);
        c.write(40);
        assert_eq!(sent(&mut c, at_ms(60)), vec![]);
        c.set_nodelay(true);
        assert_eq!(sent(&mut c, at_ms(60)), vec![(1, 80, true)]);
        c.handle_segment(at_ms(70), &seg(TcpFlags::ACK, 1, 81));
        let more = MsgFlags { eor: false, more: true };
        assert_eq!(c.send_msg(40, more), 40);
        assert_eq!(sent(&mut c, at_ms(70)), vec![]);
        assert_eq!(c.send_msg(40, more), 40);
        assert_eq!(sent(&mut c, at_ms(120)), vec![]);
        c.set_nodelay(true);
        assert_eq!(sent(&mut c, at_ms(130)), vec![(81, 80, false)]);
    }

    /// MSG_MORE without the cork: with TCP_NODELAY the partial tail waits
    /// only for the sendmsg that set it; the next ACK's push (with
    /// `tp->nonagle` = TCP_NAGLE_OFF) sends it, without PSH.
    #[test]
    fn test_msg_more_data_leaves_on_the_next_ack() {
        let mut c = established();
        c.set_nodelay(true);
        assert_eq!(c.send_msg(3100, MsgFlags { eor: false, more: true }), 3100);
        // The 3000 full bytes leave (tcp_mss_split_point keeps the partial
        // 100 back), as TSO units of 2 and 1 segments (tcp_tso_autosize's
        // floor, tcp_min_tso_segs = 2): PSH only where __tcp_transmit_skb
        // forces it on the 2-segment unit; the 100 bytes wait.
        assert_eq!(sent(&mut c, at_ms(10)), vec![(1, 1000, false), (1001, 1000, true), (2001, 1000, false)]);
        c.handle_segment(at_ms(20), &seg(TcpFlags::ACK, 1, 2001));
        assert_eq!(sent(&mut c, at_ms(20)), vec![(3001, 100, false)]);
    }
}
