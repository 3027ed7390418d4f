//! The contract between the lab (host side, `tcplab-kernel`) and the guest
//! agent: a [`Job`] goes in as JSON, a [`GuestResult`] comes out as JSON.
//!
//! Times are integer nanoseconds since `t0`, the moment the agent has
//! finished the set-up and starts the scenario's clock
//! (`CLOCK_MONOTONIC` in the guest, which with UML's `time-travel=inf-cpu`
//! is virtual time: CPU work takes none of it).
//!
//! The agent (`tcplab-agent guest JOB.json` as the guest's init, or
//! `tcplab-agent run JOB.json` on a host) writes `<out_dir>/result.json`
//! whenever it could read the job and open `out_dir`, also when the job
//! failed (then `error` says why). `run` exits with 0 (no error), 1 (the
//! result has an error, or could not be written) or 2 (bad usage, or a job
//! file that is unreadable, not JSON, of another [`JOB_VERSION`] or not a
//! [`Job`]: the message on stderr names the file, with line and column).
//! As init, the agent powers the guest off in every case instead.

use serde::{Deserialize, Serialize};

/// Bumped whenever a field changes meaning, so that a stale agent binary
/// is refused instead of misread.
pub const JOB_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub version: u32,
    /// Set-up steps, run in order before `t0`. The first failure stops the
    /// job; the result's error is then `"set-up step N (<what>): <the
    /// action, as a command line>: <reason>"`, N the index in this list
    /// (from 0), the reason a program's stderr or the errno / netlink
    /// message.
    ///
    /// As init the agent has already mounted proc, sysfs, and tmpfs on
    /// `/run` (for `ip netns add`'s `/run/netns`) and `/tmp`, and set
    /// `PATH` if the kernel gave none. Namespaces used anywhere in the job
    /// must exist under `/run/netns/` (`ip netns add`) by the end of the
    /// set-up.
    pub setup: Vec<Step>,
    /// The scenario's run length: at `t0 + duration_ns` every flow is
    /// stopped where it is and the end-of-run snapshot is taken.
    pub duration_ns: u64,
    /// Sample each flow's client `TCP_INFO` every this long (and each
    /// probed qdisc's queue length), at `k * interval` for k = 1, 2, ...
    /// while before `duration_ns`. A flow gets a row only while a run's
    /// client connection exists (established, or closing but not yet
    /// closed: not during the handshake).
    /// `None`: no traces; `Some(0)` is refused.
    pub trace_interval_ns: Option<u64>,
    pub flows: Vec<FlowJob>,
    /// Namespaces whose nstat counters are collected at the end (the
    /// scenario's hosts), in this order.
    pub counter_namespaces: Vec<String>,
    /// Qdiscs whose statistics make up `links[]` of the result.
    pub link_probes: Vec<LinkProbe>,
    /// The netem qdiscs of link directions with a loss model: their drops
    /// are the direction's random losses (`losses[]` of the result; both
    /// handles name the netem).
    #[serde(default)]
    pub loss_probes: Vec<LinkProbe>,
    /// Netem qdiscs whose parameters change during the run, each replayed
    /// by its own thread from `t0`.
    #[serde(default)]
    pub netem_timelines: Vec<NetemTimeline>,
    /// The image's `HZ`. When set, `t0` is a tick whose jiffies equal
    /// `INITIAL_JIFFIES` modulo [`crate::clock::JIFFY_ALIGN`], where the
    /// model's run starts, so that both backends' timer wheels round on the
    /// same grid. 0: `t0` is when the set-up has settled.
    #[serde(default)]
    pub hz: u32,
    /// Packet capture for `tcplab align` (crate::capture); `None`: none.
    #[serde(default)]
    pub capture: Option<crate::capture::CaptureJob>,
    /// Directory (a host path, through hostfs) for `result.json`. It must
    /// exist. It is opened before the agent mounts anything, so a host
    /// path under `/tmp` or `/run` works even though the guest mounts
    /// tmpfs over those.
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
    /// namespace `ns` (`None`: the initial namespace). A key containing a
    /// `/` is taken as a path under `/proc/sys` as it is (for device names
    /// with dots: `net/ipv4/conf/veth0.5/rp_filter`), as `sysctl` does.
    Sysctl { ns: Option<String>, key: String, value: String },
    /// Write `value` to a file (module parameters under `/sys/module`).
    Write { path: String, value: String },
    /// Create a RED qdisc by netlink with `Wlog = 0` (the instantaneous
    /// backlog, which `tc` cannot set): a step ECN marker. It marks
    /// ECT packets CE, and queues not-ECT ones unmarked, when the child's
    /// backlog on arrival is at least `threshold_bytes`. RED creates its
    /// own bfifo child of `limit_bytes` (its drops count in RED's stats).
    /// `parent` and `handle` are tc handles (`major << 16 | minor`), the
    /// device is looked up inside `ns`. Needs `CONFIG_NET_SCH_RED`.
    RedStep { ns: String, dev: String, parent: u32, handle: u32, limit_bytes: u32, threshold_bytes: u32 },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlowJob {
    /// The scenario's flow id.
    pub id: String,
    /// Client (sender of a bulk flow) namespace and source address (IPv4
    /// or IPv6, as text).
    pub client_ns: String,
    pub client_addr: String,
    /// Server namespace, address and listening port. Every flow needs a
    /// port of its own: the server accepts exactly one connection per run,
    /// in order.
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
    /// `TCP_CONGESTION` of both sockets (set on the listener; accepted
    /// sockets inherit it). Empty: the namespace's default.
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

/// A link direction's netem whose parameters change during the run (an
/// on-off delay, blackouts). At each change the agent runs `change_argv`
/// (a `tc ... qdisc change ... netem` command line) followed by the
/// change's `args`; a change at `at_ns == 0` is made before `t0`, the
/// others at their time (ns since `t0`, increasing). Running a program
/// costs the guest CPU time only, which under `time-travel=inf-cpu` is no
/// virtual time; netem keeps its queued packets across a change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetemTimeline {
    pub what: String,
    pub change_argv: Vec<String>,
    pub changes: Vec<NetemChange>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetemChange {
    pub at_ns: u64,
    pub args: Vec<String>,
}

/// Qdiscs to read statistics from at the end of the run (and queue
/// lengths during it), found by handle on `dev` in `ns` through an
/// rtnetlink qdisc dump. Both handles must name qdiscs, not classes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkProbe {
    /// `"<link>:<from>-><to>"`, as the model names link directions.
    pub id: String,
    pub ns: String,
    pub dev: String,
    /// Handle (major << 16) of the queue qdisc whose drops, queue length
    /// and RED marks count for this direction (the leaf behind the
    /// shaper).
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
    /// One per job flow, in the job's order.
    pub flows: Vec<FlowOut>,
    /// Per namespace, every nstat counter (`TcpExtTCPSACKReorder`, ...):
    /// the values of `/proc/net/netstat` and `/proc/net/snmp` at the end,
    /// groups `Ip*`, `IpExt*`, `Tcp*`, `TcpExt*`, `Udp*` and `UdpLite*`
    /// only; negative values (`TcpMaxConn` = -1) are left out.
    pub counters: Vec<(String, Vec<(String, u64)>)>,
    pub links: Vec<LinkOut>,
    /// One per loss probe: `drops` are the direction's random losses.
    #[serde(default)]
    pub losses: Vec<LinkOut>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FlowOut {
    pub id: String,
    /// The runs that have started (called `connect()`), in order.
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
    /// every byte written before the client stopped, i.e. got EOF; the time
    /// of its last read that returned data, or of the EOF if none did; RPC:
    /// the last response read, or the stop if there was no transaction).
    pub completed_ns: Option<u64>,
    /// When the client socket saw the server's FIN after its own close
    /// (`shutdown(SHUT_WR)`, then a read returned EOF). `None` while the run
    /// is going, or if it failed (the error says how).
    pub closed_ns: Option<u64>,
    /// Bytes read by the applications (bulk: the server; RPC: requests read
    /// by the server plus responses read by the client).
    pub bytes_delivered: u64,
    /// Transactions completed (RPC).
    pub rpcs: u64,
    /// The client's `TCP_INFO` at the end of the run, just before its
    /// socket was closed (or at the end of the scenario if the run was
    /// still going).
    pub info: TcpInfoOut,
}

/// The fields of Linux's `struct tcp_info` that the lab reports, each the
/// `tcpi_` field of the same name (`rtt_us` is `tcpi_rtt`, `rto_us`
/// `tcpi_rto`, `busy_time_us` `tcpi_busy_time`, `last_data_recv_ms`
/// `tcpi_last_data_recv`, ...), unconverted.
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
    /// When the sample was read: on the `k * interval` grid in virtual
    /// time (within a microsecond after it: UML's time travel charges a
    /// few hundred ns per system call), some µs to ms after it in real
    /// time.
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
    /// DCTCP's `dctcp_alpha` from `TCP_CC_INFO` (`struct tcp_dctcp_info`),
    /// when the socket runs DCTCP.
    pub dctcp_alpha: Option<u32>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkOut {
    pub id: String,
    /// Sent by the root qdisc.
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Dropped by the queue qdisc.
    pub drops: u64,
    /// Dropped by the root qdisc: the queue's drops and those of a
    /// policer on its filter (htb_enqueue counts a packet its classifier
    /// shot, `TC_ACT_SHOT`, as a drop of its own).
    pub root_drops: u64,
    /// Marked CE by the queue qdisc (RED's `marked`).
    pub ce_marks: u64,
    /// Largest queue length (packets) seen by the samples and the final
    /// snapshot.
    pub peak_queue_packets: u64,
    /// The queue qdisc at every sample of the periodic sampler.
    #[serde(default)]
    pub queue_samples: Vec<QueueSampleOut>,
}

/// The queue qdisc of a link probe at one sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSampleOut {
    /// Nanoseconds since `t0`.
    pub t_ns: u64,
    /// `qlen`, packets.
    pub packets: u32,
    /// `backlog`, bytes (as the qdisc counts them: with the size table).
    pub bytes: u32,
    /// The queue qdisc's drops so far.
    pub drops: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The wire format: enum variants are tagged by `"kind"` in snake
    /// case; every field is required, except that an `Option` may also be
    /// left out (serde reads a missing `Option` as `None`).
    const EXAMPLE: &str = r#"{
      "version": 1,
      "setup": [
        {"what": "host a", "action": {"kind": "exec", "argv": ["ip", "netns", "add", "a"]}},
        {"what": "ecn", "action": {"kind": "sysctl", "ns": "a", "key": "net.ipv4.tcp_ecn", "value": "1"}},
        {"what": "hystart", "action": {"kind": "write", "path": "/sys/module/tcp_cubic/parameters/hystart", "value": "0"}},
        {"what": "marker", "action": {"kind": "red_step", "ns": "a", "dev": "v0", "parent": 65537, "handle": 2097152,
                                      "limit_bytes": 200000, "threshold_bytes": 30000}}
      ],
      "duration_ns": 2000000000,
      "trace_interval_ns": 100000000,
      "flows": [
        {"id": "f1", "client_ns": "a", "client_addr": "198.18.0.1", "server_ns": "b", "server_addr": "198.18.0.2",
         "server_port": 5001, "client_ports": [40000, 40001], "start_ns": 0, "gap_ns": 1000000,
         "duration_each_ns": 500000000, "cc": "cubic", "nodelay": false,
         "client_sock": {"sndbuf": 0, "rcvbuf": 0}, "server_sock": {"sndbuf": 0, "rcvbuf": 0},
         "app": {"kind": "bulk", "bytes": null, "stop_ns": null}},
        {"id": "f2", "client_ns": "a", "client_addr": "198.18.0.1", "server_ns": "b", "server_addr": "198.18.0.2",
         "server_port": 5002, "client_ports": [40100], "start_ns": 0, "gap_ns": 0,
         "cc": "", "nodelay": true,
         "client_sock": {"sndbuf": 65536, "rcvbuf": 0}, "server_sock": {"sndbuf": 0, "rcvbuf": 0},
         "app": {"kind": "rpc", "request": 100, "response": 10000, "think_ns": 0, "count": 10, "stop_ns": null}}
      ],
      "counter_namespaces": ["a", "b"],
      "link_probes": [{"id": "l:a->b", "ns": "a", "dev": "v0", "queue_handle": 2097152, "root_handle": 65536}],
      "out_dir": "/tmp/out"
    }"#;

    #[test]
    fn example_job_parses_and_round_trips() {
        let job: Job = serde_json::from_str(EXAMPLE).unwrap();
        assert_eq!(job.setup.len(), 4);
        assert!(matches!(job.setup[3].action, Action::RedStep { parent: 0x0001_0001, handle: 0x0020_0000, .. }));
        assert!(matches!(job.flows[1].app, App::Rpc { count: Some(10), .. }));
        assert_eq!(job.flows[1].duration_each_ns, None);
        let back: Job = serde_json::from_str(&serde_json::to_string(&job).unwrap()).unwrap();
        assert_eq!(back, job);
    }

    #[test]
    fn result_round_trips() {
        let r = GuestResult {
            kernel_release: "6.12.0".into(),
            error: Some("x".into()),
            flows: vec![FlowOut {
                id: "f1".into(),
                runs: vec![RunOut {
                    start_ns: 1,
                    completed_ns: Some(2),
                    closed_ns: None,
                    bytes_delivered: 3,
                    rpcs: 4,
                    info: TcpInfoOut { snd_cwnd: 10, pacing_rate: u64::MAX, ..TcpInfoOut::default() },
                }],
                rpc_latencies_ns: vec![5, 6],
                trace: vec![TraceOut { time_ns: 7, cwnd: 8, ..TraceOut::default() }],
            }],
            counters: vec![("a".into(), vec![("TcpActiveOpens".into(), 1)])],
            links: vec![LinkOut { id: "l".into(), tx_bytes: 9, ce_marks: 2, ..LinkOut::default() }],
            losses: vec![LinkOut { id: "l".into(), drops: 3, ..LinkOut::default() }],
        };
        let text = serde_json::to_string(&r).unwrap();
        assert!(text.contains(r#""counters":[["a",[["TcpActiveOpens",1]]]]"#), "{text}");
        assert_eq!(serde_json::from_str::<GuestResult>(&text).unwrap(), r);
    }
}
