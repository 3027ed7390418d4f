//! The simulator's output for one run.

use tcplab_core::time::Duration;
use tcplab_core::{CaState, Counters, TcpInfo, TcpMetrics};

pub use crate::hist::LatencyHistogram;

#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    pub sim_time: Duration,
    /// Events processed.
    pub events: u64,
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    /// Counters summed over every flow's sender and receiver.
    pub counters: Counters,
    /// Segments carrying payload that reached their destination host's TCP
    /// (the simulator's own count, independent of the TCP core; what
    /// `tcplab bench` divides by wall time).
    pub data_segments: u64,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FlowResult {
    pub id: String,
    /// Congestion control name of the sender.
    pub cc: String,
    /// Bytes delivered to the receiving application.
    pub bytes_delivered: u64,
    /// bytes_delivered·8 / (time from flow start to end of run or flow
    /// completion), bits per second.
    pub goodput_bps: f64,
    /// Segments retransmitted by the sender (TcpRetransSegs).
    pub retransmits: u64,
    /// Sender `tcp_info` at the end of the run. Boxed, as `rpc` is: the
    /// list of 100,000 flows' results is built while the run's memory is
    /// freed, and boxes reuse that memory where one long list cannot
    /// (208 bytes a flow in the list instead of 512; issue 15).
    pub sender_info: Box<TcpInfo>,
    /// Sender and receiver counters of this flow.
    pub counters: Counters,
    /// Whether `counters` are this flow's alone. Always in the model; on the
    /// kernel backend only when no other flow uses either of its hosts
    /// (Linux counts per network namespace), else `counters` is empty.
    pub counters_known: bool,
    /// When the flow finished (all bytes of a finite bulk transfer
    /// delivered), if it did: time since the start of the run (not since
    /// the flow's start). A flow with a `stop` time finishes when every
    /// byte written before the stop has been delivered.
    pub completed_at: Option<Duration>,
    /// Time series, if tracing was on. With several runs the rows of all
    /// runs follow each other (`delivered` restarts at each run).
    pub trace: Vec<TraceRow>,
    /// Request/response latencies, for an RPC flow (all runs together).
    pub rpc: Option<Box<RpcStats>>,
    /// One entry per run (connection) started, in order; a flow without
    /// `repeat` has one. The flow-level fields above sum the runs
    /// (`bytes_delivered`, `retransmits`, `counters`) or describe the last
    /// one (`sender_info`); `goodput_bps` spans the whole flow, gaps
    /// included, and `completed_at` is the last run's completion.
    pub runs: Vec<RunSummary>,
}

/// Latency statistics of an RPC flow. Latency = from the `write()` of a
/// request's first byte to the `read()` of its response's last byte,
/// integer nanoseconds. Percentiles come from [`Self::histogram`] (see
/// [`LatencyHistogram`]: nearest rank, never above the true value and
/// less than 0.1 % below it); `min`, `max` and `mean` are exact.
#[derive(Clone, Debug, PartialEq)]
pub struct RpcStats {
    /// Completed transactions.
    pub count: u64,
    pub min_ns: u64,
    pub mean_ns: u64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub p999_ns: u64,
    pub max_ns: u64,
    /// Every latency, for other quantiles and CDFs ([`LatencyHistogram::cdf`]).
    pub histogram: LatencyHistogram,
    /// The first `RpcConfig::samples` latencies exactly, in completion order.
    pub samples: Vec<u64>,
}

impl RpcStats {
    /// Statistics of `histogram`, with `samples` kept as given.
    pub fn from_histogram(histogram: LatencyHistogram, samples: Vec<u64>) -> Self {
        let q = |n, d| histogram.value_at_quantile(n, d);
        RpcStats {
            count: histogram.count(),
            min_ns: histogram.min(),
            mean_ns: histogram.mean(),
            p50_ns: q(1, 2),
            p90_ns: q(9, 10),
            p99_ns: q(99, 100),
            p999_ns: q(999, 1000),
            max_ns: histogram.max(),
            histogram,
            samples,
        }
    }
}

/// One run (connection) of a flow.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// When the run's client connected, since the start of the simulation.
    pub start: Duration,
    /// When the run's data was complete (every byte written before the
    /// application stopped was read; for RPC, the last response read),
    /// since the start of the simulation.
    pub completed_at: Option<Duration>,
    /// When the run's client connection finished (TIME-WAIT or CLOSED):
    /// the moment its metrics went into the host's cache.
    pub closed_at: Option<Duration>,
    /// Bytes read by the applications (bulk: the receiver; RPC: requests
    /// read by the server plus responses read by the client).
    pub bytes_delivered: u64,
    /// `bytes_delivered·8 / (completed_at (or now) − start)`, bit/s.
    pub goodput_bps: f64,
    /// TcpRetransSegs of the run's sender.
    pub retransmits: u64,
    /// RPC transactions completed in this run (0 for bulk).
    pub rpcs: u64,
    /// What the client host's metrics cache held for the destination when
    /// the run connected (None: no entry), as handed to the connection.
    pub cached_metrics: Option<TcpMetrics>,
    /// The run's sender `tcp_info` at its end (or now).
    pub sender_info: TcpInfo,
    /// Sender and receiver counters of this run.
    pub counters: Counters,
}

/// One sample of a flow's sender state (see `trace.rs` for when samples
/// are taken).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TraceRow {
    /// Time since the start of the run.
    pub time: Duration,
    /// `tcpi_snd_cwnd`, segments.
    pub cwnd: u32,
    /// `tcpi_snd_ssthresh`, segments.
    pub ssthresh: u32,
    /// `tcpi_rtt` (smoothed RTT), µs.
    pub srtt_us: u32,
    /// `tcp_packets_in_flight`: unacked − sacked − lost + retrans, segments.
    pub inflight: u32,
    pub ca_state: CaState,
    /// `tcpi_delivered`: segments delivered (cumulatively ACKed or SACKed).
    pub delivered: u64,
    /// Sender pacing rate, bytes per second (0 = not pacing).
    pub pacing_rate: u64,
    /// `tcpi_reordering`: the sender's `tp->reordering`, segments.
    pub reordering: u32,
    /// DCTCP's `dctcp_alpha` (0..=1024) from `TCP_CC_INFO`; `None` for
    /// other congestion controls.
    pub dctcp_alpha: Option<u32>,
}

/// One sample of a link direction's queue, taken on the trace grid
/// (`k · trace_interval`). Kept only when it differs from the direction's
/// previous sample (a step series: an idle queue costs one row).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueSample {
    /// Time since the start of the run.
    pub time: Duration,
    /// Packets waiting (not the one being serialized).
    pub packets: u32,
    /// Bytes waiting (IP bytes; Ethernet frames under fq, as fq counts).
    pub bytes: u64,
    /// Drops of the queue so far.
    pub drops: u64,
}

impl QueueSample {
    /// Appends `s` to a step series unless it repeats the last sample.
    pub fn push_if_changed(series: &mut Vec<QueueSample>, s: QueueSample) {
        let same = series.last().is_some_and(|l| (l.packets, l.bytes, l.drops) == (s.packets, s.bytes, s.drops));
        if !same {
            series.push(s);
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkResult {
    /// `"<link name>:<from node>-><to node>"`
    pub id: String,
    /// Fraction of the run the direction's serializer was busy.
    pub utilization: f64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Drops of the direction's queue (or fq qdisc).
    pub drops: u64,
    /// Packets lost by the direction's loss model, after serialization.
    pub loss_drops: u64,
    /// Packets the direction's policer dropped before its queue.
    pub police_drops: u64,
    pub ce_marks: u64,
    /// Most packets ever waiting in the direction's queue (or fq qdisc).
    pub peak_queue_packets: u64,
    /// For a host NIC with fq: times a flow was throttled (fq's
    /// `stat_throttled`, [`FqPacing::Credit`](crate::config::FqPacing)
    /// only), else 0.
    pub throttled: u64,
    /// The queue over time, when the run traces (`trace_interval`): see
    /// [`QueueSample`].
    pub queue_trace: Vec<QueueSample>,
}
