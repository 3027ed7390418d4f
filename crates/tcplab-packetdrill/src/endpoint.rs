//! The TCP endpoint the driver runs a script against, as a trait so that
//! the driver's own tests can use a scripted stand-in; [`tcplab_core::Connection`]
//! is the real implementation.

use tcplab_core::connection::{MsgFlags, Shutdown};
use tcplab_core::wire::{SegmentRepr, SeqNum};
use tcplab_core::{Connection, Instant, TcpConfig, TcpError, TcpInfo, TcpState};

/// The sans-IO calls the driver makes (the calling protocol of
/// [`tcplab_core::Connection`]).
pub trait Endpoint {
    fn handle_segment(&mut self, now: Instant, seg: &SegmentRepr);
    /// One GSO skb of `gso_size`-byte segments (packetdrill's `--mss`).
    fn handle_gro_segment(&mut self, now: Instant, seg: &SegmentRepr, gso_size: u32) {
        let _ = gso_size;
        self.handle_segment(now, seg)
    }
    fn handle_timeout(&mut self, now: Instant);
    fn poll_transmit(&mut self, now: Instant) -> Option<SegmentRepr>;
    fn poll_timeout(&self) -> Option<Instant>;
    fn write(&mut self, bytes: u64) -> u64;
    fn read(&mut self, max: u64) -> u64;
    fn readable(&self) -> u64;
    fn close(&mut self);
    fn set_nodelay(&mut self, on: bool);
    fn info(&self) -> TcpInfo;
    /// `tcp_info` read at `now`, which may be after the last input.
    fn info_at(&self, now: Instant) -> TcpInfo {
        let _ = now;
        self.info()
    }
    /// `send(..., MSG_EOR)`.
    fn write_eor(&mut self, bytes: u64) -> u64 {
        self.write(bytes)
    }
    /// `sendmsg(..., flags)` (`MSG_EOR`, `MSG_MORE`).
    fn send_msg(&mut self, bytes: u64, flags: MsgFlags) -> u64 {
        if flags.eor {
            self.write_eor(bytes)
        } else {
            self.write(bytes)
        }
    }
    /// Bytes written and not yet acknowledged (`SIOCOUTQ`).
    fn outq(&self) -> u64 {
        0
    }
    /// Bytes written and not yet sent (`SIOCOUTQNSD`).
    fn outq_not_sent(&self) -> u64 {
        0
    }
    /// `setsockopt(TCP_CORK)`.
    fn set_cork(&mut self, _on: bool) {}
    /// `sendmsg` at `now` (a notsent limit builds the skbs at once).
    fn send_msg_at(&mut self, now: Instant, bytes: u64, flags: MsgFlags) -> u64 {
        let _ = now;
        self.send_msg(bytes, flags)
    }
    /// The effective `TCP_NOTSENT_LOWAT` limit.
    fn set_notsent_lowat(&mut self, _lowat: u32) {}
    /// `POLLOUT` (`__sk_stream_is_writeable(sk, 1)`).
    fn poll_writable(&self) -> bool {
        true
    }
    /// The connection's packets go through fq, which holds each skb until
    /// its departure time (`Connection::set_pacing_fq(true)`).
    fn set_pacing_fq(&mut self) {}
    /// The earliest departure time of the next skb, ns, when it is still
    /// ahead of `now_ns` and no segment of an skb already stamped is left
    /// to hand out (the connection holds it for fq); else `None`.
    fn paced_until(&self, now_ns: u64) -> Option<u64> {
        let _ = now_ns;
        None
    }
    /// `tcpi_advmss`.
    fn advmss(&self) -> u32 {
        0
    }
    /// `getsockopt(TCP_MAXSEG)`.
    fn maxseg(&self) -> u32 {
        self.info().snd_mss
    }
    /// The peer's FIN was read up to.
    fn read_closed(&self) -> bool {
        false
    }
    /// `shutdown(SHUT_RD)`.
    fn shutdown_read(&mut self) {}
    /// `shutdown(2)`.
    fn shutdown(&mut self, how: Shutdown) {
        if how != Shutdown::Write {
            self.shutdown_read();
        }
        if how != Shutdown::Read {
            self.close();
        }
    }
    /// `close(2)` of the socket (`tcp_close`).
    fn close_socket(&mut self) {
        self.shutdown_read();
        self.close();
    }
    /// `RCV_SHUTDOWN` is set.
    fn read_shutdown(&self) -> bool {
        false
    }
    /// A write would fail with `EPIPE`.
    fn send_shutdown(&self) -> bool {
        !matches!(self.state(), TcpState::Established | TcpState::CloseWait | TcpState::SynSent | TcpState::SynReceived)
    }
    /// `setsockopt(TCP_USER_TIMEOUT)`, ms.
    fn set_user_timeout(&mut self, _ms: u32) {}
    /// Every transmission fails locally (`tc qdisc ... pfifo limit 0`).
    fn set_xmit_blocked(&mut self, _on: bool) {}
    /// Reads and clears the socket error (`sock_error`).
    fn take_error(&mut self) -> Option<TcpError> {
        None
    }
    fn state(&self) -> TcpState;
}

impl Endpoint for Connection {
    fn handle_segment(&mut self, now: Instant, seg: &SegmentRepr) {
        Connection::handle_segment(self, now, seg)
    }
    fn handle_gro_segment(&mut self, now: Instant, seg: &SegmentRepr, gso_size: u32) {
        Connection::handle_gro_segment(self, now, seg, gso_size)
    }
    fn shutdown(&mut self, how: Shutdown) {
        Connection::shutdown(self, how)
    }
    fn close_socket(&mut self) {
        Connection::close_socket(self)
    }
    fn read_shutdown(&self) -> bool {
        Connection::read_shutdown(self)
    }
    fn send_shutdown(&self) -> bool {
        Connection::send_shutdown(self)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Connection::handle_timeout(self, now)
    }
    fn poll_transmit(&mut self, now: Instant) -> Option<SegmentRepr> {
        Connection::poll_transmit(self, now)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        Connection::poll_timeout(self)
    }
    fn write(&mut self, bytes: u64) -> u64 {
        Connection::write(self, bytes)
    }
    fn read(&mut self, max: u64) -> u64 {
        Connection::read(self, max)
    }
    fn readable(&self) -> u64 {
        Connection::readable(self)
    }
    fn close(&mut self) {
        Connection::close(self)
    }
    fn set_nodelay(&mut self, on: bool) {
        Connection::set_nodelay(self, on)
    }
    fn info(&self) -> TcpInfo {
        Connection::info(self)
    }
    fn info_at(&self, now: Instant) -> TcpInfo {
        Connection::info_at(self, now)
    }
    fn write_eor(&mut self, bytes: u64) -> u64 {
        Connection::write_eor(self, bytes)
    }
    fn send_msg(&mut self, bytes: u64, flags: MsgFlags) -> u64 {
        Connection::send_msg(self, bytes, flags)
    }
    fn set_cork(&mut self, on: bool) {
        Connection::set_cork(self, on)
    }
    fn send_msg_at(&mut self, now: Instant, bytes: u64, flags: MsgFlags) -> u64 {
        Connection::send_msg_at(self, now, bytes, flags)
    }
    fn set_notsent_lowat(&mut self, lowat: u32) {
        Connection::set_notsent_lowat(self, lowat)
    }
    fn poll_writable(&self) -> bool {
        Connection::poll_writable(self)
    }
    fn read_closed(&self) -> bool {
        Connection::read_closed(self)
    }
    fn advmss(&self) -> u32 {
        Connection::advmss(self)
    }
    fn set_pacing_fq(&mut self) {
        Connection::set_pacing_fq(self, true)
    }
    fn paced_until(&self, now_ns: u64) -> Option<u64> {
        let w = Connection::tcp_wstamp_ns(self);
        (w > now_ns && !Connection::skb_segments_pending(self)).then_some(w)
    }
    fn maxseg(&self) -> u32 {
        Connection::maxseg(self)
    }
    fn outq(&self) -> u64 {
        Connection::unacked_bytes(self)
    }
    fn outq_not_sent(&self) -> u64 {
        Connection::notsent_bytes(self)
    }
    fn set_user_timeout(&mut self, ms: u32) {
        Connection::set_user_timeout(self, ms)
    }
    fn shutdown_read(&mut self) {
        Connection::shutdown_read(self)
    }
    fn set_xmit_blocked(&mut self, on: bool) {
        Connection::set_xmit_blocked(self, on)
    }
    fn take_error(&mut self) -> Option<TcpError> {
        Connection::take_error(self)
    }
    fn state(&self) -> TcpState {
        Connection::state(self)
    }
}

/// Creates endpoints: a passive one when a SYN reaches a listening
/// socket, an active one on `connect()`.
pub trait EndpointFactory {
    fn server(&mut self, cfg: &TcpConfig, local_port: u16, remote_port: u16, iss: SeqNum) -> Box<dyn Endpoint>;
    fn client(
        &mut self,
        cfg: &TcpConfig,
        local_port: u16,
        remote_port: u16,
        iss: SeqNum,
        now: Instant,
    ) -> Box<dyn Endpoint>;
}

/// Builds [`tcplab_core::Connection`]s.
#[derive(Clone, Copy, Debug, Default)]
pub struct CoreFactory;

impl EndpointFactory for CoreFactory {
    fn server(&mut self, cfg: &TcpConfig, local_port: u16, remote_port: u16, iss: SeqNum) -> Box<dyn Endpoint> {
        Box::new(Connection::server(cfg.clone(), local_port, remote_port, iss))
    }
    fn client(
        &mut self,
        cfg: &TcpConfig,
        local_port: u16,
        remote_port: u16,
        iss: SeqNum,
        now: Instant,
    ) -> Box<dyn Endpoint> {
        Box::new(Connection::client(cfg.clone(), local_port, remote_port, iss, now))
    }
}
