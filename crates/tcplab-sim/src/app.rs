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
//! - [`RpcClient`] / [`RpcServer`]: netperf `TCP_RR`. The client writes
//!   a request of `request` bytes (once ESTABLISHED), reads until it has
//!   `response` bytes, and then writes the next request at once or after
//!   the think time. Only one transaction is outstanding. The server reads
//!   everything, counts request bytes on the stream and, for every whole
//!   request, queues a response of `response` bytes. A transaction's
//!   latency is from the `write()` of the request's first byte to the
//!   `read()` that completes its response, in integer nanoseconds of
//!   simulated time. After its last transaction (count reached, or stop
//!   time passed) the client closes; the server closes on EOF like the
//!   sink.
//!
//! The applications run after the connection has processed its input and
//! before the simulator polls it for segments, so a read's window update
//! and a write's new data go out in the same poll.

use crate::config::{AppConfig, RpcConfig};
use crate::hist::LatencyHistogram;
use crate::result::RpcStats;
use tcplab_core::time::{Duration, Instant};
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

/// The client side of one run.
#[derive(Clone, Debug)]
pub(crate) enum ClientApp {
    Bulk(BulkSender),
    Rpc(RpcClient),
}

/// The server side of one run.
#[derive(Clone, Debug)]
pub(crate) enum ServerApp {
    Sink(Sink),
    Rpc(RpcServer),
}

impl ClientApp {
    /// A fresh client for `app`; `each` caps the transfer (bulk bytes)
    /// like `AppConfig::Bulk::bytes`.
    pub fn new(app: &AppConfig) -> Self {
        match app {
            AppConfig::Bulk { bytes, .. } => ClientApp::Bulk(BulkSender::new(*bytes)),
            AppConfig::Rpc(r) => ClientApp::Rpc(RpcClient::new(r)),
        }
    }
}

impl ServerApp {
    pub fn new(app: &AppConfig) -> Self {
        match app {
            AppConfig::Bulk { .. } => ServerApp::Sink(Sink::default()),
            AppConfig::Rpc(r) => ServerApp::Rpc(RpcServer::new(r)),
        }
    }

    /// Bytes the server application has read.
    pub fn delivered(&self) -> u64 {
        match self {
            ServerApp::Sink(s) => s.delivered,
            ServerApp::Rpc(s) => s.read,
        }
    }
}

/// What an [`RpcClient`] event produced.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RpcEvent {
    /// A transaction completed with this latency (ns).
    pub completed: Option<u64>,
    /// Call again at this time (the think time ends).
    pub wake_at: Option<Instant>,
    /// The client has closed with no transaction outstanding.
    pub finished: bool,
}

/// netperf TCP_RR client state.
#[derive(Clone, Debug)]
pub(crate) struct RpcClient {
    request: u64,
    response: u64,
    think: Duration,
    /// Transactions still to start (`u64::MAX` = unlimited). Sentinels
    /// here and in `next_at` rather than `Option`s: 16 bytes less for each
    /// of 100,000 RPC flows (issue 15).
    left: u64,
    /// A transaction is outstanding (request written or being written).
    busy: bool,
    /// Request bytes not yet accepted by `write()`.
    req_left: u64,
    /// Response bytes of the outstanding transaction read so far.
    resp_got: u64,
    /// When the outstanding request's first byte was written.
    started_at: Instant,
    /// No new request before this time (think time; `Instant::ZERO` = none).
    next_at: Instant,
    /// Stop issuing requests (stop time or `duration_each` passed).
    stopping: bool,
    pub closed: bool,
    /// Response bytes read.
    pub read: u64,
}

impl RpcClient {
    pub fn new(cfg: &RpcConfig) -> Self {
        RpcClient {
            request: cfg.request.max(1),
            response: cfg.response.max(1),
            think: cfg.think,
            left: cfg.count.unwrap_or(u64::MAX),
            busy: false,
            req_left: 0,
            resp_got: 0,
            started_at: Instant::ZERO,
            next_at: Instant::ZERO,
            stopping: false,
            closed: false,
            read: 0,
        }
    }

    /// Runs after every event on the connection.
    pub fn on_event(&mut self, tcp: &mut Connection, now: Instant) -> RpcEvent {
        let mut ev = RpcEvent::default();
        let readable = tcp.readable();
        if readable > 0 {
            let got = tcp.read(readable).min(readable);
            self.read += got;
            if self.busy {
                self.resp_got += got;
            }
        }
        if self.closed {
            return ev;
        }
        if !matches!(tcp.state(), TcpState::Established | TcpState::CloseWait) {
            return ev;
        }
        if self.busy && self.req_left == 0 && self.resp_got >= self.response {
            self.busy = false;
            self.resp_got = 0;
            ev.completed = Some((now - self.started_at).as_nanos());
            if self.think > Duration::ZERO {
                let t = now + self.think;
                self.next_at = t;
                ev.wake_at = Some(t);
            }
        }
        if !self.busy && !self.stopping && self.left != 0 && now >= self.next_at {
            self.busy = true;
            self.next_at = Instant::ZERO;
            self.req_left = self.request;
            self.started_at = now;
            if self.left != u64::MAX {
                self.left -= 1;
            }
        }
        if self.req_left > 0 {
            let space = tcp.send_space();
            if space > 0 {
                let n = tcp.write(space.min(self.req_left)).min(self.req_left);
                self.req_left -= n;
            }
        }
        if !self.busy && (self.stopping || self.left == 0) {
            self.closed = true;
            tcp.close();
            ev.finished = true;
        }
        ev
    }

    /// The stop time passed: no new requests; close once idle.
    pub fn stop(&mut self) {
        self.stopping = true;
    }
}

/// netperf TCP_RR server (netserver) state.
#[derive(Clone, Debug)]
pub(crate) struct RpcServer {
    request: u64,
    response: u64,
    /// Bytes of the current (incomplete) request received.
    got: u64,
    /// Response bytes queued but not yet accepted by `write()`.
    to_write: u64,
    /// Request bytes read.
    pub read: u64,
    pub closed: bool,
}

impl RpcServer {
    pub fn new(cfg: &RpcConfig) -> Self {
        RpcServer {
            request: cfg.request.max(1),
            response: cfg.response.max(1),
            got: 0,
            to_write: 0,
            read: 0,
            closed: false,
        }
    }

    pub fn on_event(&mut self, tcp: &mut Connection) {
        let readable = tcp.readable();
        if readable > 0 {
            let n = tcp.read(readable).min(readable);
            self.read += n;
            self.got += n;
            let whole = self.got / self.request;
            self.got %= self.request;
            self.to_write += whole * self.response;
        }
        if self.to_write > 0 && matches!(tcp.state(), TcpState::Established | TcpState::CloseWait) {
            let space = tcp.send_space();
            if space > 0 {
                let n = tcp.write(space.min(self.to_write)).min(self.to_write);
                self.to_write -= n;
            }
        }
        if !self.closed && tcp.state() == TcpState::CloseWait && tcp.readable() == 0 && self.to_write == 0 {
            self.closed = true;
            tcp.close();
        }
    }
}

/// A flow's RPC latencies (all runs).
#[derive(Clone, Debug, Default)]
pub(crate) struct RpcRecorder {
    pub hist: LatencyHistogram,
    pub samples: Vec<u64>,
    cap: usize,
}

impl RpcRecorder {
    pub fn new(cap: u32) -> Self {
        RpcRecorder { hist: LatencyHistogram::new(), samples: Vec::new(), cap: cap as usize }
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.hist.record(ns);
        if self.samples.len() < self.cap {
            self.samples.push(ns);
        }
    }

    pub fn stats(&self) -> RpcStats {
        RpcStats::from_histogram(self.hist.clone(), self.samples.clone())
    }
}
