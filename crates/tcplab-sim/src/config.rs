//! The simulator's input: a fully validated, plain-data description of one
//! run. The scenario layer (tcplab-lab) builds it from TOML; tests build it
//! directly. Nothing here is parsed or defaulted implicitly.
//!
//! [`SimConfig::validate`] (in `validate.rs`) says what is accepted;
//! [`crate::run`] and [`crate::Sim::new`] validate before running.

use std::sync::Arc;
use tcplab_core::time::Duration;
use tcplab_core::TcpConfig;

pub use crate::fq::ETH_HLEN;

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

impl SimConfig {
    /// Client connections of the run: every run of every flow (`repeat`)
    /// is one, each with a client and a server end.
    pub fn connections(&self) -> u64 {
        self.flows.iter().map(|f| u64::from(f.repeat.count())).sum()
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct NodeConfig {
    pub name: String,
    pub kind: NodeKind,
    /// The queueing discipline in front of each of a host's NICs (the
    /// host-side direction of every link it has). Switches must use
    /// [`Qdisc::Pfifo`]: their queues are the links' `queue`s.
    pub qdisc: Qdisc,
    /// TSO, GSO and GRO on the node's NICs. The model sends MSS-sized
    /// segments and models no offloads, so the simulator refuses a node
    /// with them on; the kernel backend turns them on with `ethtool`.
    pub offloads: bool,
    /// GRO on the node's receiving interfaces: the packets one NAPI poll
    /// takes (those a link hands over at the same instant, e.g. at a
    /// direction's `slot`) are merged per flow by `tcp_gro_receive`'s
    /// rules before TCP sees them (see `gro.rs`). The kernel backend
    /// turns GRO (only) on for the node's veths.
    pub gro: bool,
    /// How a switch chooses among equal-cost next hops (ECMP). Hosts
    /// must leave it [`Multipath::Off`]: they do not forward.
    pub multipath: Multipath,
}

impl NodeConfig {
    /// A host with the default qdisc.
    pub fn host(name: impl Into<String>) -> Self {
        NodeConfig {
            name: name.into(),
            kind: NodeKind::Host,
            qdisc: Qdisc::Pfifo,
            offloads: false,
            gro: false,
            multipath: Multipath::Off,
        }
    }

    /// A switch.
    pub fn switch(name: impl Into<String>) -> Self {
        NodeConfig {
            name: name.into(),
            kind: NodeKind::Switch,
            qdisc: Qdisc::Pfifo,
            offloads: false,
            gro: false,
            multipath: Multipath::Off,
        }
    }
}

/// Equal-cost multipath at a switch: what it does when more than one of
/// its links leads to a neighbour one hop closer to the destination (see
/// `routing.rs`). Linux installs such routes as one route with several
/// `nexthop`s and picks one per packet by a hash of its headers
/// (`fib_select_multipath`), with the fields chosen by
/// `net.ipv4.fib_multipath_hash_policy`; a flow's packets hash alike, so
/// a flow keeps its path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Multipath {
    /// One next hop per destination: the lowest-index link.
    #[default]
    Off,
    /// Hash of the source and destination addresses
    /// (`fib_multipath_hash_policy` = 0, Linux's default).
    L3,
    /// Hash of the 5-tuple: addresses, ports and protocol
    /// (`fib_multipath_hash_policy` = 1).
    L4,
}

/// A host's root qdisc (`tc qdisc add dev ethX root ...`).
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Qdisc {
    /// A drop-tail FIFO per NIC: the host-side direction's own
    /// [`QueueConfig`] (pfifo_fast with one band, as all TCP traffic uses).
    /// TCP is not paced (`sk_pacing_status` stays `SK_PACING_NONE`).
    #[default]
    Pfifo,
    /// `sch_fq` per NIC (net/sched/sch_fq.c), which also turns on TCP
    /// pacing. The direction's `queue` settings are not used. See
    /// docs/sim-fq.md and `fq.rs`.
    Fq(FqConfig),
}

/// How an fq qdisc paces (which kernel era's sch_fq/TCP split).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum FqPacing {
    /// Linux ≥ 4.20: TCP stamps each skb with its earliest departure
    /// time (`tcp_wstamp_ns`, advanced by `skb->len/sk_pacing_rate` after
    /// the first 10 data segments) and fq releases nothing earlier.
    #[default]
    Edt,
    /// Linux 3.12–4.19: fq paces each flow itself from `sk_pacing_rate`
    /// with its credit scheme (`time_next_packet = now + max(len,
    /// quantum)/rate` once a flow's credit is spent, per skb below
    /// `low_rate_threshold`; `len` is the whole skb's).
    Credit,
}

/// `tc qdisc ... fq` parameters (sch_fq.c `fq_init` defaults for a
/// 1500-byte-MTU Ethernet device, where `psched_mtu` = 1514).
#[derive(Clone, Debug, PartialEq)]
pub struct FqConfig {
    pub pacing: FqPacing,
    /// `limit`: packets in the whole qdisc (10000).
    pub limit: u32,
    /// `flow_limit`: packets per flow (100).
    pub flow_limit: u32,
    /// `quantum`, bytes (2·psched_mtu = 3028).
    pub quantum: u32,
    /// `initial_quantum`, bytes (10·psched_mtu = 15140).
    pub initial_quantum: u32,
    /// `flow_refill_delay` (40 ms).
    pub flow_refill_delay: Duration,
    /// `low_rate_threshold`, bytes per second (550 kbit/s = 68750 B/s);
    /// [`FqPacing::Credit`] only (EDT packets are paced by TCP). 0 turns
    /// it off, as before Linux 4.9.
    pub low_rate_threshold: u64,
    /// `ce_threshold`: mark ECT packets CE that leave later than this
    /// after their due time. `None` = off (the default).
    pub ce_threshold: Option<Duration>,
}

impl Default for FqConfig {
    fn default() -> Self {
        FqConfig {
            pacing: FqPacing::Edt,
            limit: 10_000,
            flow_limit: 100,
            quantum: 2 * (1500 + ETH_HLEN),
            initial_quantum: 10 * (1500 + ETH_HLEN),
            flow_refill_delay: Duration::from_millis(40),
            low_rate_threshold: 550_000 / 8,
            ce_threshold: None,
        }
    }
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
    /// Random loss on the wire, after serialization (see `loss.rs`).
    pub loss: LossModel,
    /// Outages: every packet that finishes serialization in `[start,
    /// end)` of one of these windows is lost (counted with the loss
    /// model's drops). Sorted, not overlapping (validated).
    pub blackouts: Vec<Blackout>,
    /// A token-bucket policer in front of the queue (see `police.rs`):
    /// a packet it finds short of tokens is dropped before it is queued.
    pub police: Option<Police>,
    /// netem's `slot S`: packets leave the delay only when a slot opens,
    /// in bursts (sch_netem.c `get_slot_next`, `netem_dequeue`); how
    /// interrupt moderation hands a receiver its packets in batches.
    /// `None`: each packet leaves when its delay ends.
    pub slot: Option<Duration>,
}

/// A token-bucket policer (tc's `police` action, net/sched/act_police.c):
/// tokens refill at `rate_bps` up to `burst_bytes`; a packet passes when
/// the bucket holds its length, and is dropped otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Police {
    /// Bits per second (> 0).
    pub rate_bps: u64,
    /// Bucket depth, IP bytes (> 0).
    pub burst_bytes: u64,
}

/// A window of time in which a link direction loses everything it sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blackout {
    pub start: Duration,
    pub end: Duration,
}

/// A probability as netem holds it: `p / (2³² − 1)`, so that 0 is never
/// and `u32::MAX` always (iproute2's `get_percent`: `rint(percent / 100 ×
/// UINT32_MAX)`).
pub type Probability = u32;

/// Random loss of one link direction, netem's loss models
/// (net/sched/sch_netem.c, `loss_event`): each packet that finishes
/// serialization is lost or goes on to the delay. Losses are counted apart
/// from queue drops (`LinkResult::loss_drops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LossModel {
    #[default]
    None,
    /// `loss random P`: each packet independently with probability `p`.
    Random { p: Probability },
    /// `loss gemodel p r 1-h 1-k`: the Gilbert-Elliott chain, starting
    /// good. Per packet: from good, turn bad with `p`, and lose the packet
    /// with `good_loss` (1-k); from bad, turn good with `r`, and lose it
    /// with `bad_loss` (1-h). The loss draw uses the state the packet
    /// found, as `loss_gilb_ell` does.
    GilbertElliott { p: Probability, r: Probability, bad_loss: Probability, good_loss: Probability },
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
    /// A slowly varying delay: `base + x`, where `x` is a random walk
    /// clamped to [0, amplitude] that moves by a uniform step in
    /// [−step, +step] once per `interval` of time (`None`: once per
    /// packet). Never reorders. See `delay.rs` for the exact rule.
    RandomWalk { base: Duration, amplitude: Duration, step: Duration, interval: Option<Duration> },
    /// On-off cross traffic: a two-state Markov chain in discrete time
    /// slots of `slot` (mean sojourns `mean_on` and `mean_off`) adds
    /// `delay` of queueing to packets that leave while it is on. Never
    /// reorders. See `delay.rs`.
    OnOff { base: Duration, delay: Duration, mean_on: Duration, mean_off: Duration, slot: Duration },
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
    /// Sending host (the TCP client; port 32768 + flow index for the first
    /// run, see [`crate::host`] for later runs).
    pub from: NodeId,
    /// Receiving host (the TCP server, port 5001).
    pub to: NodeId,
    /// When the client connects (time since the start of the run).
    pub start: Duration,
    /// Sender (client) socket settings. Shared (immutable; change one
    /// with `Arc::make_mut`) with the run's connections, and with other
    /// flows by [`FlowConfig::share_tcp`].
    pub tcp: Arc<TcpConfig>,
    /// Receiver (server) socket settings.
    pub tcp_receiver: Arc<TcpConfig>,
    pub app: AppConfig,
    /// `setsockopt(TCP_NODELAY)` on both ends (netperf's `-D`). Default
    /// off, as in netperf.
    pub nodelay: bool,
    /// Run the application as several consecutive connections.
    pub repeat: Repeat,
}

impl FlowConfig {
    /// A flow starting at time zero with default TCP settings at both
    /// ends, Nagle on, one run.
    pub fn new(id: impl Into<String>, from: NodeId, to: NodeId, app: AppConfig) -> Self {
        FlowConfig {
            id: id.into(),
            from,
            to,
            start: Duration::ZERO,
            tcp: Arc::default(),
            tcp_receiver: Arc::default(),
            app,
            nodelay: false,
            repeat: Repeat::default(),
        }
    }

    /// Makes this flow's settings the same allocations as `previous`'s
    /// where they are equal (and the receiver's the sender's): the flows
    /// of a traffic generator, thousands made alike in a row, then hold
    /// one copy instead of 170 bytes per connection end. Comparing with
    /// the previous flow only keeps it linear in the number of flows.
    pub fn share_tcp(&mut self, previous: Option<&FlowConfig>) {
        let recent = previous.into_iter().flat_map(|p| [&p.tcp, &p.tcp_receiver]);
        share(&mut self.tcp, recent.clone());
        share(&mut self.tcp_receiver, std::iter::once(&self.tcp).chain(recent));
    }
}

/// `cfg` becomes the first of `candidates` equal to it.
fn share<'a>(cfg: &mut Arc<TcpConfig>, candidates: impl IntoIterator<Item = &'a Arc<TcpConfig>>) {
    if let Some(c) = candidates.into_iter().find(|c| **c == *cfg) {
        *cfg = Arc::clone(c);
    }
}

/// Consecutive connections of one flow (`for i in $(seq 10); do netperf
/// ...; done`). Each run is a new client connection (new client port and
/// ISN) between the same hosts, running the flow's application from
/// scratch; the next run connects `gap` after the previous client
/// connection has finished (TIME-WAIT). The client host's per-destination
/// metrics cache (tcp_metrics.c) carries state from one run to the next.
#[derive(Clone, Debug, PartialEq)]
pub struct Repeat {
    /// Number of runs (≥ 1).
    pub runs: u32,
    /// Idle time between a run's client connection finishing and the
    /// next one connecting.
    pub gap: Duration,
    /// Each run's application stops writing (bulk) or issuing requests
    /// (RPC) this long after its connection starts, then closes.
    pub duration_each: Option<Duration>,
}

impl Default for Repeat {
    fn default() -> Self {
        Repeat { runs: 1, gap: Duration::ZERO, duration_each: None }
    }
}

impl Repeat {
    /// Runs the flow makes: `runs`, and at least one.
    pub fn count(&self) -> u32 {
        self.runs.max(1)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum AppConfig {
    /// netperf TCP_STREAM: keep the send buffer full until `bytes` have
    /// been written (None = unlimited) or `stop` (None = end of run); the
    /// receiver reads everything at once.
    Bulk { bytes: Option<u64>, stop: Option<Duration> },
    /// Back-to-back request/response transactions on one connection
    /// (netperf TCP_RR with `-r request,response`).
    Rpc(RpcConfig),
}

/// A request/response workload. The client writes a request of `request`
/// bytes, the server answers with `response` bytes once the whole request
/// has arrived (counting bytes on the stream), and the client starts the
/// next request `think` after the response has been read completely.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcConfig {
    /// Request size, bytes (> 0).
    pub request: u64,
    /// Response size, bytes (> 0).
    pub response: u64,
    /// Idle time between reading a response and writing the next request.
    pub think: Duration,
    /// Transactions per run (None = until `stop` / `duration_each` / the
    /// end of the simulation).
    pub count: Option<u64>,
    /// Issue no new request after this time (since the start of the
    /// simulation); the one in progress completes, then the client closes.
    pub stop: Option<Duration>,
    /// Keep the first this-many latencies (ns, completion order) in
    /// [`RpcStats::samples`](crate::result::RpcStats::samples).
    pub samples: u32,
}

impl RpcConfig {
    /// netperf TCP_RR defaults: 1-byte request and response, no think
    /// time, no limit.
    pub fn new(request: u64, response: u64) -> Self {
        RpcConfig { request, response, think: Duration::ZERO, count: None, stop: None, samples: 0 }
    }
}
