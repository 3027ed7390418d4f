//! The application's ways out: `shutdown(2)` and `close(2)` of the socket.
//!
//! - [`Connection::shutdown`] is `inet_shutdown` → `tcp_shutdown`
//!   (net/ipv4/af_inet.c, net/ipv4/tcp.c): `SHUT_RD` only sets
//!   `RCV_SHUTDOWN` (reads then return 0 once the queue is empty; data
//!   still arrives and is ACKed), `SHUT_WR` sends a FIN after the queued
//!   data (`tcp_close_state` + `tcp_send_fin`), `SHUT_RDWR` both.
//! - [`Connection::close_socket`] is `tcp_close` (net/ipv4/tcp.c
//!   `__tcp_close`): `sk_shutdown = SHUTDOWN_MASK`, the receive queue is
//!   purged, and if it held unread data the connection is zapped with a
//!   RST (`tcp_send_active_reset`, `TCPAbortOnClose`) instead of a FIN.
//!
//! [`Connection::close`] stays the FIN-only close the simulator's
//! applications use (they read everything first, so for them the two are
//! the same).

use super::{Connection, TcpState};
use crate::counters::Mib;
use crate::time::Instant;
use crate::wire::{SegmentRepr, TcpFlags};

/// `how` of `shutdown(2)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shutdown {
    /// `SHUT_RD`.
    Read,
    /// `SHUT_WR`.
    Write,
    /// `SHUT_RDWR`.
    Both,
}

impl Connection {
    /// `shutdown(2)` (net/ipv4/tcp.c `tcp_shutdown`): `RCV_SHUTDOWN`
    /// and/or a FIN, the latter only from ESTABLISHED, SYN-SENT or
    /// CLOSE-WAIT ("If we've already sent a FIN, or it's a closed state,
    /// skip this").
    pub fn shutdown(&mut self, how: Shutdown) {
        if matches!(how, Shutdown::Read | Shutdown::Both) {
            self.rcv_shutdown = true;
        }
        if matches!(how, Shutdown::Write | Shutdown::Both)
            && matches!(self.state, TcpState::Established | TcpState::SynSent | TcpState::CloseWait)
        {
            self.close();
        }
    }

    /// `RCV_SHUTDOWN` is set: once the readable data is consumed, a read
    /// returns 0 (`tcp_recvmsg_locked`).
    pub fn read_shutdown(&self) -> bool {
        self.rcv_shutdown
    }

    /// `SEND_SHUTDOWN` is set or the connection is gone: a write fails
    /// with `EPIPE` (`tcp_sendmsg_locked`: `sk_stream_wait_connect`
    /// returns `-EPIPE` in any state but ESTABLISHED, CLOSE-WAIT and the
    /// handshake's, and `SEND_SHUTDOWN` is `do_error`).
    pub fn send_shutdown(&self) -> bool {
        !matches!(self.state, TcpState::Established | TcpState::CloseWait | TcpState::SynSent | TcpState::SynReceived)
            || self.fin_queued
    }

    /// `close(2)` of the socket (net/ipv4/tcp.c `__tcp_close`): the
    /// receive side is shut (`SHUTDOWN_MASK`); unread in-order data
    /// (`data_was_unread`, FIN not counted) zaps the connection: state
    /// CLOSE and a RST|ACK at `tcp_acceptable_seq` (`tcp_send_active_reset`,
    /// sent through `tcp_transmit_skb`, so with the usual ACK fields and
    /// options); otherwise a FIN as [`close`](Self::close).
    pub fn close_socket(&mut self) {
        self.rcv_shutdown = true;
        let data_was_unread = self.rcv.readable();
        if self.state == TcpState::Closed {
            return;
        }
        if data_was_unread > 0 && self.state != TcpState::Listen {
            // LINUX_MIB_TCPABORTONCLOSE: not among the model's counters.
            self.tp.mib.inc(Mib::TcpOutRsts);
            self.active_reset_pending = true;
            self.app_output = true;
            self.enter_closed();
        } else {
            self.close();
        }
    }

    /// `tcp_acceptable_seq`: `snd_nxt`, unless it lies beyond the peer's
    /// window (by more than one window-scale unit), then the window's end.
    fn acceptable_seq(&self) -> crate::wire::SeqNum {
        let wnd_end = self.snd_una + self.snd_wnd;
        let within_scale_unit = match self.rcv.offered_wscale() {
            Some(ws) if self.negotiated.wscale_ok => (self.snd_nxt - wnd_end) < (1u32 << ws),
            _ => false,
        };
        if !wnd_end.before(self.snd_nxt) || within_scale_unit {
            self.snd_nxt
        } else {
            wnd_end
        }
    }

    /// The RST|ACK of `tcp_send_active_reset`, built at its send time
    /// (its TS value is the clock's then).
    pub(super) fn send_active_reset(&mut self, now: Instant) -> SegmentRepr {
        self.active_reset_pending = false;
        let mut seg = self.base_segment(self.acceptable_seq());
        seg.flags = TcpFlags::ACK | TcpFlags::RST;
        self.finish_segment(now, &mut seg, false);
        seg
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TcpConfig;
    use crate::wire::{SeqNum, TcpOptions};

    fn seg(flags: TcpFlags, seq: u32, ack: u32, len: u32) -> SegmentRepr {
        SegmentRepr {
            src_port: 9,
            dst_port: 8,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window: 20000,
            options: TcpOptions::default(),
            payload_len: len,
            ..Default::default()
        }
    }

    /// A passive connection (ISS 1000) established with a peer at ISN
    /// 5000 (no options), at 0.1 s.
    fn established() -> Connection {
        let mut c = Connection::server(TcpConfig::default(), 8, 9, SeqNum(1000));
        let t0 = Instant::from_nanos(0);
        let mut syn = seg(TcpFlags::SYN, 5000, 0, 0);
        syn.options.mss = Some(1000);
        c.handle_segment(t0, &syn);
        while c.poll_transmit(t0).is_some() {}
        let t1 = Instant::from_nanos(100_000_000);
        c.handle_segment(t1, &seg(TcpFlags::ACK, 5001, 1001, 0));
        while c.poll_transmit(t1).is_some() {}
        assert_eq!(c.state(), TcpState::Established);
        c
    }

    /// reset_tsval.pkt's trace: 1000 bytes arrive and are ACKed, then
    /// `close()` with them unread sends `R. 1001:1001(0) ack 6001`
    /// (snd_nxt, rcv_nxt) and nothing else, and the socket is CLOSED.
    #[test]
    fn test_close_with_unread_data_sends_rst_ack_not_fin() {
        let mut c = established();
        let t = Instant::from_nanos(100_000_000);
        c.handle_segment(t, &seg(TcpFlags::ACK, 5001, 1001, 1000));
        while c.poll_transmit(t).is_some() {}
        assert_eq!(c.readable(), 1000);
        let t2 = Instant::from_nanos(1_100_000_000);
        c.close_socket();
        assert_eq!(c.state(), TcpState::Closed);
        let rst = c.poll_transmit(t2).expect("a RST");
        assert_eq!(rst.flags, TcpFlags::ACK | TcpFlags::RST);
        assert_eq!((rst.seq, rst.ack, rst.payload_len), (SeqNum(1001), SeqNum(6001), 0));
        assert!(c.poll_transmit(t2).is_none());
    }

    /// With everything read, `close()` is a FIN (tcp_close_state).
    #[test]
    fn test_close_with_all_data_read_sends_fin() {
        let mut c = established();
        let t = Instant::from_nanos(100_000_000);
        c.handle_segment(t, &seg(TcpFlags::ACK, 5001, 1001, 1000));
        while c.poll_transmit(t).is_some() {}
        assert_eq!(c.read(1000), 1000);
        c.close_socket();
        assert_eq!(c.state(), TcpState::FinWait1);
        let fin = c.poll_transmit(t).expect("a FIN");
        assert!(fin.flags.fin() && !fin.flags.rst());
    }

    /// SHUT_RD: reads end (read_shutdown) but data is still taken in and
    /// readable; no FIN. SHUT_WR then sends the FIN and writes fail.
    #[test]
    fn test_shutdown_read_keeps_receiving_and_write_sends_fin() {
        let mut c = established();
        c.shutdown(Shutdown::Read);
        assert!(c.read_shutdown() && !c.send_shutdown());
        let t = Instant::from_nanos(110_000_000);
        assert!(c.poll_transmit(t).is_none());
        c.handle_segment(t, &seg(TcpFlags::ACK, 5001, 1001, 1000));
        let ack = c.poll_transmit(t).expect("data is ACKed");
        assert_eq!(ack.ack, SeqNum(6001));
        assert_eq!(c.read(1000), 1000);
        c.shutdown(Shutdown::Write);
        assert!(c.send_shutdown());
        assert_eq!(c.state(), TcpState::FinWait1);
        assert!(c.poll_transmit(t).expect("FIN").flags.fin());
    }
}
