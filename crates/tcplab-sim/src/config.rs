//! The simulator's input: a fully validated, plain-data description of one
//! run. The scenario layer (tcplab-lab) builds it from TOML; tests build it
//! directly. Nothing here is parsed or defaulted implicitly.
//!
//! [`SimConfig::validate`] (in `validate.rs`) says what is accepted;
//! [`crate::run`] and [`crate::Sim::new`] validate before running.

use tcplab_core::time::Duration;
use tcplab_core::TcpConfig;

/// Index into [`SimConfig::nodes`].
pub type NodeId = usize;

#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Simulated time to run.
    pub duration: Duration,
    /// Master seed; every random component derives its own stream from it
    /// and its stable index (link direction, flow), see [`crate::rng`].
    pub seed: u64,
    pub nodes: Vec<NodeConfig>,
    pub links: Vec<LinkConfig>,
    pub flows: Vec<FlowConfig>,
    /// Record per-flow time series (cwnd, ssthresh, srtt, inflight,
    /// ca_state, delivered) at most once per this interval.
    pub trace_interval: Option<Duration>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    pub name: String,
    pub kind: NodeKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// An end host with a TCP stack.
    Host,
    /// A switch/router forwarding by static (shortest-path) routes.
    Switch,
}

/// A point-to-point, full-duplex link. Each direction has its own
/// serializer, queue and delay model.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    pub name: String,
    pub a: NodeId,
    pub b: NodeId,
    /// Line rate, bits per second (> 0).
    pub rate_bps: u64,
    /// Direction a → b.
    pub ab: DirectionConfig,
    /// Direction b → a.
    pub ba: DirectionConfig,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DirectionConfig {
    pub delay: DelayModel,
    pub queue: QueueConfig,
}

/// Propagation delay of one link direction, applied after serialization.
/// Random draws are integer nanoseconds, both ends inclusive.
#[derive(Clone, Debug, PartialEq)]
pub enum DelayModel {
    /// Constant delay.
    Fixed(Duration),
    /// Per-packet delay uniform in [min, max]; packets may overtake each
    /// other, like netem's `delay X Y` jitter.
    Uniform { min: Duration, max: Duration },
    /// Per-packet jitter uniform in [base, base + jitter] but never
    /// reordering: a packet leaves no earlier than the one before it.
    OrderedJitter { base: Duration, jitter: Duration },
}

/// A queue limit in packets or bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

/// The output queue in front of a link direction. On a host's side of a
/// link this is the host's NIC queue (TCP is not polled while it is full,
/// so it never drops a connection's segments; see `host.rs`).
///
/// Occupancy counts waiting packets only, not the one being serialized.
#[derive(Clone, Debug, PartialEq)]
pub struct QueueConfig {
    /// Drop-tail limit (> 0): an arriving packet is dropped when `Packets(n)`
    /// are waiting, or when waiting bytes plus its own would exceed `Bytes(n)`.
    pub limit: Limit,
    /// Mark CE on ECT packets when the queue (on arrival) exceeds this
    /// (strictly greater). Not-ECT packets are never marked.
    pub ecn_threshold: Option<Limit>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowConfig {
    /// Unique among the run's flows.
    pub id: String,
    /// Sending host (the TCP client, port 32768 + flow index).
    pub from: NodeId,
    /// Receiving host (the TCP server, port 5001).
    pub to: NodeId,
    /// When the client connects (time since the start of the run).
    pub start: Duration,
    /// Sender (client) socket settings.
    pub tcp: TcpConfig,
    /// Receiver (server) socket settings.
    pub tcp_receiver: TcpConfig,
    pub app: AppConfig,
}

#[derive(Clone, Debug, PartialEq)]
pub enum AppConfig {
    /// netperf TCP_STREAM: keep the send buffer full until `bytes` have
    /// been written (None = unlimited) or `stop` (None = end of run); the
    /// receiver reads everything at once.
    Bulk { bytes: Option<u64>, stop: Option<Duration> },
}
