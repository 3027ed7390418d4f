//! The results of a run, for programs (`--json`) and for people (a table).
//!
//! # JSON wire format
//!
//! `tcplab run --json` prints exactly one JSON object on one line. Keys
//! appear in the order below (struct order; counter maps are sorted by
//! name), so two runs of the same scenario and seed print identical bytes
//! except for `wall_s`.
//!
//! ```text
//! {
//!   "scenario": "scenarios/bulk-cubic.toml",   // the file as given
//!   "backend": "model" | "linux-6.12.117",     // what ran it (--backend)
//!   "description": "..." | null,
//!   "seed": 1,
//!   "sim_time_s": 30.0,                         // simulated time
//!   "events": 123456,                           // simulator events processed
//!   "wall_s": 1.23,                             // wall-clock seconds (not deterministic)
//!   "flows": [{
//!     "id": "f1", "cc": "cubic", "from": "h1", "to": "h2",
//!     "goodput_bps": 9.4e7,        // bytes_delivered·8 / time since the flow's start
//!     "bytes_delivered": 352941176,// bytes read by the receiving application
//!     "retransmits": 12,           // TcpRetransSegs of the sender
//!     "final_cwnd": 170,           // tcpi_snd_cwnd at the end, segments
//!     "final_ssthresh": 120,       // tcpi_snd_ssthresh at the end, segments; 2147483647
//!                                  // (TCP_INFINITE_SSTHRESH) before the first reduction, as Linux reports it
//!     "srtt_us": 21000,            // tcpi_rtt at the end, µs
//!     "min_rtt_us": 20000 | null,  // tcpi_min_rtt, µs; null before any RTT sample
//!     "completed_at_s": null,      // when a finite transfer finished
//!     "goodput_last_bps": 9.4e7 | null,  // over the last run.goodput_window
//!     "counters": { "TcpExtTCPDelivered": 1, ... } | null,  // this flow, every counter;
//!                                  // null on the kernel when the flow shares a host (per-namespace counts)
//!     "rpc": null | {              // an RPC flow's transaction latencies, µs
//!       "count": 1000, "min_us": 1.0, "mean_us": 1.0, "p50_us": 1.0,
//!       "p90_us": 1.0, "p99_us": 1.0, "p999_us": 1.0, "max_us": 1.0,
//!       "samples_us": [1.0, ...]   // only with the app's `samples = N`: the first
//!                                  // N latencies, in completion order
//!     },
//!     "sender": {                  // the last run's client socket, final tcp_info
//!       "delivered": 1, "delivered_ce": 0, "data_segs_out": 1,  // tcpi_* segments
//!       "busy_time_us": 1, "rwnd_limited_us": 0, "sndbuf_limited_us": 0,  // chrono stats
//!       "pacing_rate": 1          // bytes/s
//!     },
//!     "runs": [{                   // one per connection (flow.repeat), in order
//!       "start_s": 0.0, "completed_at_s": 1.0 | null, "closed_at_s": 1.0 | null,
//!       "bytes_delivered": 1, "goodput_bps": 1.0, "retransmits": 0, "rpcs": 0
//!     }]
//!   }],
//!   "links": [{
//!     "id": "bottleneck:sw->h2",   // link name : from -> to (one per direction)
//!     "utilization": 0.95,         // fraction of the run the serializer was busy
//!     "drops": 12,                 // by the queue (or fq qdisc)
//!     "loss_drops": 0,             // by the link's loss model, after serialization
//!     "police_drops": 40,          // by the direction's policer, before the queue (only when not 0)
//!     "ce_marks": 0, "tx_packets": 1, "tx_bytes": 1, "peak_queue_packets": 1
//!   }],
//!   "fairness": { "window_s": 20.0, "jain_index": 0.99 } | null,
//!   "counters": { "TcpActiveOpens": 1, ... }   // summed over all flows, every counter, zero or not
//! }
//! ```
//!
//! `goodput_last_bps` is the increase of the sender's `tcpi_delivered`
//! (segments cumulatively ACKed or SACKed) over exactly the last
//! `run.goodput_window` of the run, read from the flow's trace (linear
//! between samples), times its `snd_mss`, over the window;
//! `fairness.jain_index` is Jain's index (Σx)²/(n·Σx²) of those rates over
//! all flows.

use crate::runner::Outcome;
use crate::schema::Scenario;
use serde::Serialize;
use std::fmt::Write as _;
use std::sync::OnceLock;
use tcplab_core::time::Duration;
use tcplab_core::{Counters, Mib};
use tcplab_sim::result::{RpcStats, RunSummary, TraceRow};

#[derive(Clone, Debug, Serialize)]
pub struct RunReport {
    pub scenario: String,
    pub backend: String,
    pub description: Option<String>,
    pub seed: u64,
    pub sim_time_s: f64,
    pub events: u64,
    pub wall_s: f64,
    pub flows: Vec<FlowReport>,
    pub links: Vec<LinkReport>,
    pub fairness: Option<Fairness>,
    pub counters: CounterMap,
}

/// `tcp_min_rtt()` before the first RTT sample: Linux resets the filter
/// to `~0U` (`tcp_init_sock`), on both backends.
pub const NO_RTT_SAMPLE: u32 = u32::MAX;

#[derive(Clone, Debug, Serialize)]
pub struct FlowReport {
    pub id: String,
    pub cc: String,
    pub from: String,
    pub to: String,
    pub goodput_bps: f64,
    pub bytes_delivered: u64,
    pub retransmits: u64,
    pub final_cwnd: u32,
    pub final_ssthresh: u32,
    pub srtt_us: u32,
    /// `tcpi_min_rtt`, or None where Linux reports its "no sample yet"
    /// value `~0U` (a flow that never had an ACK timed), which is no RTT.
    pub min_rtt_us: Option<u32>,
    pub completed_at_s: Option<f64>,
    pub goodput_last_bps: Option<f64>,
    /// None where the backend cannot count for this flow alone (see
    /// `FlowResult::counters_known`).
    pub counters: Option<CounterMap>,
    pub rpc: Option<RpcReport>,
    /// The sending socket's final `tcp_info` (the last run's client).
    pub sender: SenderReport,
    pub runs: Vec<FlowRunReport>,
}

/// Fields of the flow's last client socket's `struct tcp_info` at the end
/// of the run (include/uapi/linux/tcp.h; on the kernel backend the
/// agent's `getsockopt(TCP_INFO)`), for comparing what held each sender
/// back on the two backends.
#[derive(Clone, Debug, Serialize)]
pub struct SenderReport {
    /// `tcpi_delivered`: segments delivered (cumulatively ACKed or SACKed).
    pub delivered: u32,
    /// `tcpi_delivered_ce`: of those, segments whose ACK carried ECE (CE
    /// marks echoed by the receiver).
    pub delivered_ce: u32,
    /// `tcpi_data_segs_out`: data segments sent, retransmissions included.
    pub data_segs_out: u32,
    /// `tcpi_busy_time`: µs with data queued or in flight.
    pub busy_time_us: u64,
    /// `tcpi_rwnd_limited`: µs the peer's window held data back.
    pub rwnd_limited_us: u64,
    /// `tcpi_sndbuf_limited`: µs the send buffer held the application back.
    pub sndbuf_limited_us: u64,
    /// `tcpi_pacing_rate`, bytes per second.
    pub pacing_rate: u64,
}

/// An RPC flow's latencies in µs (from exact integer nanoseconds;
/// percentiles as `tcplab_sim::result::RpcStats` defines them).
#[derive(Clone, Debug, Serialize)]
pub struct RpcReport {
    pub count: u64,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p90_us: f64,
    pub p99_us: f64,
    pub p999_us: f64,
    pub max_us: f64,
    /// The app's `samples`: the first latencies exactly, in completion
    /// order (back-to-back RPCs: each starts when the one before ends).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples_us: Vec<f64>,
}

impl RpcReport {
    fn new(s: &RpcStats) -> Self {
        let us = |ns: u64| ns as f64 / 1e3;
        RpcReport {
            count: s.count,
            min_us: us(s.min_ns),
            mean_us: us(s.mean_ns),
            p50_us: us(s.p50_ns),
            p90_us: us(s.p90_ns),
            p99_us: us(s.p99_ns),
            p999_us: us(s.p999_ns),
            max_us: us(s.max_ns),
            samples_us: s.samples.iter().map(|&ns| us(ns)).collect(),
        }
    }
}

/// One run (connection) of a flow.
#[derive(Clone, Debug, Serialize)]
pub struct FlowRunReport {
    pub start_s: f64,
    pub completed_at_s: Option<f64>,
    pub closed_at_s: Option<f64>,
    pub bytes_delivered: u64,
    pub goodput_bps: f64,
    pub retransmits: u64,
    pub rpcs: u64,
}

impl FlowRunReport {
    fn new(r: &RunSummary) -> Self {
        FlowRunReport {
            start_s: r.start.as_secs_f64(),
            completed_at_s: r.completed_at.map(|d| d.as_secs_f64()),
            closed_at_s: r.closed_at.map(|d| d.as_secs_f64()),
            bytes_delivered: r.bytes_delivered,
            goodput_bps: r.goodput_bps,
            retransmits: r.retransmits,
            rpcs: r.rpcs,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct LinkReport {
    pub id: String,
    pub utilization: f64,
    pub drops: u64,
    pub loss_drops: u64,
    /// Dropped by the direction's policer before its queue; left out of
    /// the JSON when zero (every direction without a policer).
    #[serde(skip_serializing_if = "is_zero")]
    pub police_drops: u64,
    pub ce_marks: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub peak_queue_packets: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Fairness {
    pub window_s: f64,
    pub jain_index: Option<f64>,
}

/// Counters as the report shows them: every counter by its nstat name, in
/// name order (a JSON object), zero or not. Kept as the counters
/// themselves, not as a map: 48 bytes a flow where a map of the 58 names
/// took about 1.8 KB, most of a 100,000-flow report's memory (issue 15).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CounterMap(Counters);

impl CounterMap {
    pub fn new(c: &Counters) -> CounterMap {
        CounterMap(c.clone())
    }

    pub fn get(&self, m: Mib) -> u64 {
        self.0.get(m)
    }

    /// Every counter by name, in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        static BY_NAME: OnceLock<Vec<Mib>> = OnceLock::new();
        let by_name = BY_NAME.get_or_init(|| {
            let mut v = Mib::ALL.to_vec();
            v.sort_by_key(|m| m.name());
            v
        });
        by_name.iter().map(|m| (m.name(), self.0.get(*m)))
    }
}

impl Serialize for CounterMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

/// `tcpi_delivered` (segments) at time `t` from a flow's trace: linear
/// between the samples around `t`, 0 before the first sample (no ACK yet),
/// the last sample's value after it.
fn delivered_at(rows: &[TraceRow], t: Duration) -> f64 {
    let i = rows.partition_point(|r| r.time <= t);
    match (i.checked_sub(1).and_then(|j| rows.get(j)), rows.get(i)) {
        (None, _) => 0.0,
        (Some(a), None) => a.delivered as f64,
        (Some(a), Some(b)) => {
            let span = (b.time - a.time).as_nanos() as f64;
            let frac = if span > 0.0 { (t - a.time).as_nanos() as f64 / span } else { 0.0 };
            a.delivered as f64 + frac * (b.delivered as f64 - a.delivered as f64)
        }
    }
}

/// Delivery rate (bit/s) over exactly `[end - window, end]` from a flow's
/// trace: the increase of `tcpi_delivered` over the window (see
/// [`delivered_at`]) times `mss`, over the window. None without samples.
pub fn window_rate(rows: &[TraceRow], end: Duration, window: Duration, mss: u32) -> Option<f64> {
    if rows.is_empty() || window == Duration::ZERO {
        return None;
    }
    let segs = delivered_at(rows, end) - delivered_at(rows, end - window);
    Some(segs.max(0.0) * f64::from(mss) * 8.0 / window.as_secs_f64())
}

/// Jain's fairness index (Σx)²/(n·Σx²); None without flows or traffic.
pub fn jain_index(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || sq <= 0.0 {
        return None;
    }
    Some(sum * sum / (n * sq))
}

impl RunReport {
    /// The report of `out`, a run of `sc`: the flows' hosts and the seed
    /// are the scenario's.
    pub fn new(sc: &Scenario, out: &Outcome) -> RunReport {
        let r = &out.result;
        let cfg = &sc.sim;
        let node_name = |i: usize| cfg.nodes.get(i).map_or_else(String::new, |n| n.name.clone());
        let by_id: std::collections::HashMap<&str, &tcplab_sim::config::FlowConfig> =
            cfg.flows.iter().map(|c| (c.id.as_str(), c)).collect();
        let flows: Vec<FlowReport> = r
            .flows
            .iter()
            .map(|f| {
                let fc = by_id.get(f.id.as_str()).copied();
                let mss =
                    if f.sender_info.snd_mss > 0 { f.sender_info.snd_mss } else { fc.map_or(1460, |c| c.tcp.advmss()) };
                let goodput_last_bps = sc.goodput_window.and_then(|w| window_rate(&f.trace, r.sim_time, w, mss));
                FlowReport {
                    id: f.id.clone(),
                    cc: f.cc.clone(),
                    from: fc.map_or_else(String::new, |c| node_name(c.from)),
                    to: fc.map_or_else(String::new, |c| node_name(c.to)),
                    goodput_bps: f.goodput_bps,
                    bytes_delivered: f.bytes_delivered,
                    retransmits: f.retransmits,
                    final_cwnd: f.sender_info.snd_cwnd,
                    final_ssthresh: f.sender_info.snd_ssthresh,
                    srtt_us: f.sender_info.rtt_us,
                    min_rtt_us: Some(f.sender_info.min_rtt_us).filter(|us| *us != NO_RTT_SAMPLE),
                    completed_at_s: f.completed_at.map(|d| d.as_secs_f64()),
                    goodput_last_bps,
                    counters: f.counters_known.then(|| CounterMap::new(&f.counters)),
                    rpc: f.rpc.as_deref().map(RpcReport::new),
                    sender: SenderReport {
                        delivered: f.sender_info.delivered,
                        delivered_ce: f.sender_info.delivered_ce,
                        data_segs_out: f.sender_info.data_segs_out,
                        busy_time_us: f.sender_info.busy_time_us,
                        rwnd_limited_us: f.sender_info.rwnd_limited_us,
                        sndbuf_limited_us: f.sender_info.sndbuf_limited_us,
                        pacing_rate: f.sender_info.pacing_rate,
                    },
                    runs: f.runs.iter().map(FlowRunReport::new).collect(),
                }
            })
            .collect();
        let fairness = sc.goodput_window.map(|w| {
            let rates: Vec<f64> = flows.iter().filter_map(|f| f.goodput_last_bps).collect();
            Fairness {
                window_s: w.as_secs_f64(),
                jain_index: if rates.len() == flows.len() { jain_index(&rates) } else { None },
            }
        });
        RunReport {
            scenario: sc.name.clone(),
            backend: out.backend.clone(),
            description: sc.description.clone(),
            seed: cfg.seed,
            sim_time_s: r.sim_time.as_secs_f64(),
            events: r.events,
            wall_s: out.wall.as_secs_f64(),
            flows,
            links: r
                .links
                .iter()
                .map(|l| LinkReport {
                    id: l.id.clone(),
                    utilization: l.utilization,
                    drops: l.drops,
                    loss_drops: l.loss_drops,
                    police_drops: l.police_drops,
                    ce_marks: l.ce_marks,
                    tx_packets: l.tx_packets,
                    tx_bytes: l.tx_bytes,
                    peak_queue_packets: l.peak_queue_packets,
                })
                .collect(),
            fairness,
            counters: CounterMap::new(&r.counters),
        }
    }

    /// One line of JSON (see the module docs).
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    /// The table for people.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "scenario {}  backend {}  seed {}  sim time {:.3} s  events {}  wall {:.3} s",
            self.scenario, self.backend, self.seed, self.sim_time_s, self.events, self.wall_s
        );
        if let Some(d) = &self.description {
            let _ = writeln!(s, "{d}");
        }
        s.push('\n');
        let window = self.fairness.as_ref().map(|f| f.window_s);
        let mut head = vec!["flow", "cc", "goodput Mbit/s", "bytes", "retrans", "cwnd", "srtt ms"];
        let last_head = window.map(|w| format!("last {w}s Mbit/s"));
        if let Some(h) = &last_head {
            head.push(h);
        }
        let mut rows: Vec<Vec<String>> = Vec::new();
        for f in &self.flows {
            let mut row = vec![
                f.id.clone(),
                f.cc.clone(),
                format!("{:.2}", f.goodput_bps / 1e6),
                f.bytes_delivered.to_string(),
                f.retransmits.to_string(),
                f.final_cwnd.to_string(),
                format!("{:.2}", f64::from(f.srtt_us) / 1e3),
            ];
            if window.is_some() {
                row.push(f.goodput_last_bps.map_or_else(|| "-".into(), |g| format!("{:.2}", g / 1e6)));
            }
            rows.push(row);
        }
        table(&mut s, &head, &rows);
        if let Some(fair) = &self.fairness {
            let j = fair.jain_index.map_or_else(|| "-".into(), |j| format!("{j:.4}"));
            let _ = writeln!(s, "Jain's fairness index over the last {} s: {j}", fair.window_s);
        }
        s.push('\n');
        let rpc_rows: Vec<Vec<String>> = self
            .flows
            .iter()
            .filter_map(|f| f.rpc.as_ref().map(|r| (f, r)))
            .map(|(f, r)| {
                let ms = |us: f64| format!("{:.3}", us / 1e3);
                vec![
                    f.id.clone(),
                    r.count.to_string(),
                    ms(r.p50_us),
                    ms(r.p90_us),
                    ms(r.p99_us),
                    ms(r.p999_us),
                    ms(r.max_us),
                ]
            })
            .collect();
        if !rpc_rows.is_empty() {
            table(&mut s, &["rpc flow", "count", "p50 ms", "p90 ms", "p99 ms", "p99.9 ms", "max ms"], &rpc_rows);
            s.push('\n');
        }
        let run_rows: Vec<Vec<String>> = self
            .flows
            .iter()
            .filter(|f| f.runs.len() > 1)
            .flat_map(|f| {
                f.runs.iter().enumerate().map(move |(k, r)| {
                    vec![
                        f.id.clone(),
                        k.to_string(),
                        format!("{:.3}", r.start_s),
                        format!("{:.2}", r.goodput_bps / 1e6),
                        r.bytes_delivered.to_string(),
                        r.retransmits.to_string(),
                    ]
                })
            })
            .collect();
        if !run_rows.is_empty() {
            table(&mut s, &["flow", "run", "start s", "goodput Mbit/s", "bytes", "retrans"], &run_rows);
            s.push('\n');
        }
        // A "policed" column only when a policer dropped something, so
        // that the table of a scenario without one is unchanged.
        let policed = self.links.iter().any(|l| l.police_drops > 0);
        let rows: Vec<Vec<String>> = self
            .links
            .iter()
            .map(|l| {
                let mut row = vec![
                    l.id.clone(),
                    format!("{:.1}", l.utilization * 100.0),
                    l.drops.to_string(),
                    l.loss_drops.to_string(),
                ];
                if policed {
                    row.push(l.police_drops.to_string());
                }
                row.extend([l.ce_marks.to_string(), l.peak_queue_packets.to_string()]);
                row
            })
            .collect();
        let mut head = vec!["link", "util %", "drops", "lost"];
        if policed {
            head.push("policed");
        }
        head.extend(["CE marks", "peak queue p"]);
        table(&mut s, &head, &rows);
        s.push('\n');
        let nonzero: Vec<Vec<String>> =
            self.counters.iter().filter(|(_, v)| *v != 0).map(|(k, v)| vec![k.to_string(), v.to_string()]).collect();
        if nonzero.is_empty() {
            s.push_str("counters: all zero\n");
        } else {
            table(&mut s, &["counter (non-zero, all flows)", "value"], &nonzero);
        }
        s
    }
}

/// Left-aligned text columns, numbers right-aligned.
fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    text_table(out, head, rows, false);
}

/// Text columns for people: the first and every non-numeric cell
/// left-aligned, numbers right-aligned. `sci` also counts a cell written
/// with an exponent (`1e-3`) as a number. Shared by every table the lab
/// prints (`run`, `compare`, `sweep`, `reproduce`).
pub(crate) fn text_table(out: &mut String, head: &[&str], rows: &[Vec<String>], sci: bool) {
    let n = head.len();
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let numeric = |c: &str| {
        !c.is_empty() && c.chars().all(|ch| ch.is_ascii_digit() || ch == '.' || ch == '-' || (sci && ch == 'e'))
    };
    let line = |out: &mut String, cells: &[&str], is_head: bool| {
        let mut l = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            let pad = w[i].saturating_sub(c.chars().count());
            if !is_head && i > 0 && numeric(c) {
                l.push_str(&" ".repeat(pad));
                l.push_str(c);
            } else {
                l.push_str(c);
                l.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(l.trim_end());
        out.push('\n');
    };
    line(out, head, true);
    for r in rows {
        let cells: Vec<&str> = r.iter().map(String::as_str).collect();
        line(out, &cells, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_core::CaState;

    fn row(ms: u64, delivered: u64) -> TraceRow {
        TraceRow {
            time: Duration::from_millis(ms),
            cwnd: 10,
            ssthresh: 10,
            srtt_us: 1,
            inflight: 1,
            ca_state: CaState::Open,
            delivered,
            pacing_rate: 0,
            reordering: 3,
            dctcp_alpha: None,
        }
    }

    #[test]
    fn test_window_rate_from_trace() {
        let rows = [row(0, 0), row(1000, 100), row(2000, 300), row(3000, 600)];
        let s = Duration::from_secs;
        // Last 2 s: from 100 at 1 s to 600 at 3 s.
        let r = window_rate(&rows, s(3), s(2), 1000).unwrap();
        assert!((r - 500.0 * 1000.0 * 8.0 / 2.0).abs() < 1e-6);
        // Between samples: 1.5 s interpolates to 200.
        let r = window_rate(&rows, s(3), Duration::from_millis(1500), 1000).unwrap();
        assert!((r - 400.0 * 8000.0 / 1.5).abs() < 1e-6);
        // A window starting before the first sample counts from zero.
        let r = window_rate(&rows[2..], s(3), s(2), 1000).unwrap();
        assert!((r - 600.0 * 8000.0 / 2.0).abs() < 1e-6);
        // A flow idle at the end keeps its last count (rate over the whole window).
        let r = window_rate(&rows[..3], s(4), s(3), 1000).unwrap();
        assert!((r - 200.0 * 8000.0 / 3.0).abs() < 1e-6);
        assert_eq!(window_rate(&[], s(3), s(2), 1000), None);
    }

    #[test]
    fn test_jain_index() {
        assert_eq!(jain_index(&[5.0, 5.0]), Some(1.0));
        assert!((jain_index(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
        assert_eq!(jain_index(&[]), None);
        assert_eq!(jain_index(&[0.0, 0.0]), None);
    }
}
