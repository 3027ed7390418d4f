//! The contract between the lab (host side, `tcplab-kernel`) and the guest
//! agent: a [`Job`] goes in as JSON, a [`GuestResult`] comes out as JSON.
//!
//! Times are integer nanoseconds since `t0`, the moment the agent has
//! finished the set-up and starts the scenario's clock
//! (`CLOCK_MONOTONIC` in the guest, which with UML's `time-travel=inf-cpu`
//! is virtual time: CPU work takes none of it).

use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning, so that a stale agent binary
/// is refused instead of misread.
pub const JOB_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub version: u32,
    /// Set-up steps, run in order before `t0`. The first failure stops the
    /// job; the result then carries the step's index and message.
    pub setup: Vec<Step>,
    /// The scenario's run length: at `t0 + duration_ns` every flow is
    /// stopped where it is and the end-of-run snapshot is taken.
    pub duration_ns: u64,
    /// Sample each flow's client `TCP_INFO` every this long (and each
    /// probed qdisc's queue length). `None`: no traces.
    pub trace_interval_ns: Option<u64>,
    pub flows: Vec<FlowJob>,
    /// Namespaces whose nstat counters are collected at the end (the
    /// scenario's hosts), in this order.
    pub counter_namespaces: Vec<String>,
    /// Qdiscs whose statistics make up `links[]` of the result.
    pub link_probes: Vec<LinkProbe>,
    /// Directory (a host path, through hostfs) for `result.json`.
    pub out_dir: String,
}

/// One set-up action. `what` says which part of the scenario it comes
/// from, for error messages ("link bottleneck sw->receiver: queue").
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub what: String,
    pub action: Action,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Run a program (`ip`, `tc`, `ethtool`) and require exit status 0.
    Exec { argv: Vec<String> },
    /// Write `value` to `/proc/sys/<key with dots as slashes>` inside
    /// namespace `ns` (`None`: the initial namespace).
    Sysctl { ns: Option<String>, key: String, value: String },
    /// Write `value` to a file (module parameters under `/sys/module`).
    Write { path: String, value: String },
    /// Create a RED qdisc by netlink with `Wlog = 0` (the instantaneous
    /// backlog, which `tc` cannot set): a step ECN marker. It marks
    /// ECT packets CE, and queues not-ECT ones unmarked, when the child's
    /// backlog on arrival is at least `threshold_bytes`.
    RedStep { ns: String, dev: String, parent: u32, handle: u32, limit_bytes: u32, threshold_bytes: u32 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowJob {
    /// The scenario's flow id.
    pub id: String,
    /// Client (sender of a bulk flow) namespace and source address.
    pub client_ns: String,
    pub client_addr: String,
    /// Server namespace, address and listening port.
    pub server_ns: String,
    pub server_addr: String,
    pub server_port: u16,
    /// The client's source port for each run, in order (`len()` runs).
    pub client_ports: Vec<u16>,
    /// When run 0 connects.
    pub start_ns: u64,
    /// Idle time between a run's client connection finishing and the next
    /// run connecting.
    pub gap_ns: u64,
    /// Each run's application stops this long after its connection starts.
    pub duration_each_ns: Option<u64>,
    /// `TCP_CONGESTION` of both sockets.
    pub cc: String,
    /// `TCP_NODELAY` on both sockets.
    pub nodelay: bool,
    pub client_sock: SockOpts,
    pub server_sock: SockOpts,
    pub app: App,
}

/// Socket options set before `connect()` / `listen()`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SockOpts {
    /// `SO_SNDBUF` (0: leave autotuning on).
    pub sndbuf: u32,
    /// `SO_RCVBUF` (0: leave autotuning on).
    pub rcvbuf: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum App {
    /// netperf TCP_STREAM: the client writes until `bytes` are written or
    /// `stop_ns` has passed (then closes); the server reads everything.
    Bulk { bytes: Option<u64>, stop_ns: Option<u64> },
    /// Back-to-back transactions: the client writes `request` bytes, the
    /// server answers `response` bytes once it has read a whole request,
    /// the client issues the next request `think_ns` after reading the
    /// whole response. Stops after `count` transactions or once `stop_ns`
    /// has passed (the transaction in progress completes), then closes.
    Rpc { request: u64, response: u64, think_ns: u64, count: Option<u64>, stop_ns: Option<u64> },
}

/// A qdisc (or htb class) to read statistics from at the end of the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkProbe {
    /// `"<link>:<from>-><to>"`, as the model names link directions.
    pub id: String,
    pub ns: String,
    pub dev: String,
    /// Handle (major << 16) of the queue qdisc whose drops, backlog and
    /// RED marks count for this direction (the leaf behind the shaper).
    pub queue_handle: u32,
    /// Handle of the root qdisc whose sent bytes and packets count as
    /// transmitted.
    pub root_handle: u32,
}

/// What the agent writes to `<out_dir>/result.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GuestResult {
    /// `uname -r` inside the guest.
    pub kernel_release: String,
    /// Set-up or run failure; the rest may be partial.
    pub error: Option<String>,
    pub flows: Vec<FlowOut>,
    /// Per namespace, every nstat counter (`TcpExtTCPSACKReorder`, ...):
    /// the values of `/proc/net/netstat` and `/proc/net/snmp` at the end.
    pub counters: Vec<(String, Vec<(String, u64)>)>,
    pub links: Vec<LinkOut>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowOut {
    pub id: String,
    pub runs: Vec<RunOut>,
    /// Every RPC latency (ns), in completion order, all runs.
    pub rpc_latencies_ns: Vec<u64>,
    /// Client `TCP_INFO` samples, all runs in order.
    pub trace: Vec<TraceOut>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunOut {
    /// When the run's client called `connect()`.
    pub start_ns: u64,
    /// When the last byte of the run's data was read (bulk: the server read
    /// every byte written before the client stopped, i.e. got EOF; RPC: the
    /// last response read).
    pub completed_ns: Option<u64>,
    /// When the client socket saw the server's FIN after its own close.
    pub closed_ns: Option<u64>,
    /// Bytes read by the applications (bulk: the server; RPC: requests read
    /// by the server plus responses read by the client).
    pub bytes_delivered: u64,
    /// Transactions completed (RPC).
    pub rpcs: u64,
    /// The client's `TCP_INFO` at the end of the run (or at the end of the
    /// scenario if the run was still going).
    pub info: TcpInfoOut,
}

/// The fields of Linux's `struct tcp_info` that the lab reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpInfoOut {
    pub state: u8,
    pub ca_state: u8,
    pub retransmits: u8,
    pub probes: u8,
    pub backoff: u8,
    pub snd_mss: u32,
    pub rcv_mss: u32,
    pub unacked: u32,
    pub sacked: u32,
    pub lost: u32,
    pub retrans: u32,
    pub rtt_us: u32,
    pub rttvar_us: u32,
    pub snd_ssthresh: u32,
    pub snd_cwnd: u32,
    pub reordering: u32,
    pub total_retrans: u32,
    pub pacing_rate: u64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segs_out: u32,
    pub segs_in: u32,
    pub data_segs_out: u32,
    pub min_rtt_us: u32,
    pub delivered: u32,
    pub delivered_ce: u32,
    pub busy_time_us: u64,
    pub rwnd_limited_us: u64,
    pub sndbuf_limited_us: u64,
    pub reord_seen: u32,
    pub snd_wnd: u32,
    pub rcv_wnd: u32,
    pub last_data_recv_ms: u32,
    pub rto_us: u32,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TraceOut {
    pub time_ns: u64,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub srtt_us: u32,
    /// `tcpi_unacked - tcpi_sacked - tcpi_lost + tcpi_retrans`.
    pub inflight: u32,
    pub ca_state: u8,
    pub delivered: u32,
    pub pacing_rate: u64,
    pub reordering: u32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkOut {
    pub id: String,
    /// Sent by the root qdisc.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Dropped by the queue qdisc.
    pub drops: u64,
    /// Marked CE by the queue qdisc (RED's `marked`).
    pub ce_marks: u64,
    /// Largest queue length (packets) seen by the samples.
    pub peak_queue_packets: u64,
}
