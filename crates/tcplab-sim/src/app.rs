//! Applications on top of a connection.
//!
//! - [`BulkSender`]: netperf `TCP_STREAM`. Once the connection is
//!   established it keeps the send buffer full: after every event on the
//!   connection it writes as much as `send_space()` allows, until `bytes`
//!   have been written or the `stop` time has passed; then it `close()`s
//!   (the FIN follows the queued data). Writes wait for ESTABLISHED, as a
//!   blocking `connect()` does before netperf's first `send()`.
//! - [`Sink`]: the receiver reads everything readable after every event on
//!   its connection (so the receive window never closes because of the
//!   application), and closes once the peer's FIN has arrived and all data
//!   has been read (CLOSE-WAIT), as netserver does on EOF.
//!
//! The applications run after the connection has processed its input and
//! before the simulator polls it for segments, so a read's window update
//! and a write's new data go out in the same poll.

use tcplab_core::{Connection, TcpState};

/// netperf TCP_STREAM sender state.
#[derive(Clone, Debug)]
pub(crate) struct BulkSender {
    /// Bytes still to write (`None` = unlimited).
    pub remaining: Option<u64>,
    /// Bytes accepted by the connection so far.
    pub written: u64,
    /// `close()` has been called: the application is done.
    pub closed: bool,
}

impl BulkSender {
    pub fn new(bytes: Option<u64>) -> Self {
        BulkSender { remaining: bytes, written: 0, closed: false }
    }

    /// Tops up the send buffer; closes when the budget is spent.
    #[inline]
    pub fn on_event(&mut self, tcp: &mut Connection) {
        if self.closed {
            return;
        }
        if matches!(tcp.state(), TcpState::Established | TcpState::CloseWait) {
            let space = tcp.send_space();
            if space > 0 {
                let want = match self.remaining {
                    Some(r) => space.min(r),
                    None => space,
                };
                if want > 0 {
                    let n = tcp.write(want).min(want);
                    self.written += n;
                    if let Some(r) = &mut self.remaining {
                        *r -= n;
                    }
                }
            }
        }
        if self.remaining == Some(0) {
            self.stop(tcp);
        }
    }

    /// Stops writing and closes (at the flow's `stop` time, or when done).
    pub fn stop(&mut self, tcp: &mut Connection) {
        if !self.closed {
            self.closed = true;
            tcp.close();
        }
    }
}

/// A receiver that reads everything at once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Sink {
    /// Bytes delivered to the application.
    pub delivered: u64,
    pub closed: bool,
}

impl Sink {
    /// Reads all readable bytes; returns how many were read now.
    #[inline]
    pub fn on_event(&mut self, tcp: &mut Connection) -> u64 {
        let mut got = 0;
        let readable = tcp.readable();
        if readable > 0 {
            got = tcp.read(readable).min(readable);
            self.delivered += got;
        }
        if !self.closed && tcp.state() == TcpState::CloseWait && tcp.readable() == 0 {
            self.closed = true;
            tcp.close();
        }
        got
    }
}
