//! The simulator's output for one run.

use tcplab_core::time::Duration;
use tcplab_core::{CaState, Counters, TcpInfo};

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
    /// Sender `tcp_info` at the end of the run.
    pub sender_info: TcpInfo,
    /// Sender and receiver counters of this flow.
    pub counters: Counters,
    /// When the flow finished (all bytes of a finite bulk transfer
    /// delivered), if it did: time since the start of the run (not since
    /// the flow's start). A flow with a `stop` time finishes when every
    /// byte written before the stop has been delivered.
    pub completed_at: Option<Duration>,
    /// Time series, if tracing was on.
    pub trace: Vec<TraceRow>,
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
}

#[derive(Clone, Debug, PartialEq)]
pub struct LinkResult {
    /// `"<link name>:<from node>-><to node>"`
    pub id: String,
    /// Fraction of the run the direction's serializer was busy.
    pub utilization: f64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub drops: u64,
    pub ce_marks: u64,
    /// Most packets ever waiting in the direction's queue.
    pub peak_queue_packets: u64,
}
