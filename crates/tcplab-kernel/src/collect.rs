//! The guest's result in the simulator's result type, so that every lab
//! command (tables, JSON, metrics, compare, plots) reads both backends the
//! same way.
//!
//! Where the kernel cannot say what the model says, the field is filled
//! as documented in docs/KERNEL.md: `events` is 0 (the guest has no
//! event count); `data_segments` sums the clients' `tcpi_data_segs_out`;
//! counters are per network namespace in Linux, so a flow's `counters` are
//! its two hosts' only when no other flow uses either host (otherwise
//! `counters_known` is false, and only the run's total `counters` has them); a run's
//! `cached_metrics` is not read back from the kernel (`None`);
//! `peak_queue_packets` is the largest sampled queue length.

use tcplab_agent::job::{FlowOut, GuestResult, QueueSampleOut, RunOut, TcpInfoOut, TraceOut};
use tcplab_core::time::Duration;
use tcplab_core::{CaState, Counters, Mib, TcpInfo};
use tcplab_sim::config::{AppConfig, SimConfig};
use tcplab_sim::result::{
    FlowResult, LatencyHistogram, LinkResult, QueueSample, RpcStats, RunResult, RunSummary, TraceRow,
};

/// Builds the run's result from the guest's.
pub fn collect(cfg: &SimConfig, g: &GuestResult) -> RunResult {
    let duration = cfg.duration;
    let ns_counters: Vec<(String, Counters)> =
        g.counters.iter().map(|(ns, list)| (ns.clone(), counters_of(list))).collect();
    let mut total = Counters::default();
    for (_, c) in &ns_counters {
        total.merge(c);
    }
    let mut data_segments = 0u64;
    let flows =
        cfg.flows
            .iter()
            .enumerate()
            .map(|(i, fc)| {
                let empty = FlowOut::default();
                let out = g.flows.iter().find(|f| f.id == fc.id).unwrap_or(&empty);
                data_segments += out.runs.iter().map(|r| r.info.data_segs_out as u64).sum::<u64>();
                let alone =
                    cfg.flows.iter().enumerate().all(|(j, other)| {
                        j == i || [other.from, other.to].iter().all(|n| *n != fc.from && *n != fc.to)
                    });
                let counters = if alone {
                    let mut c = Counters::default();
                    for node in [fc.from, fc.to] {
                        let ns = crate::translate::node_ns(&cfg.nodes[node].name);
                        if let Some((_, nc)) = ns_counters.iter().find(|(n, _)| *n == ns) {
                            c.merge(nc);
                        }
                    }
                    c
                } else {
                    Counters::default()
                };
                flow_result(cfg, i, out, alone.then_some(counters), duration)
            })
            .collect();
    let links = g
        .links
        .iter()
        .map(|l| {
            let rate = link_rate(cfg, &l.id);
            let busy = if rate > 0 && duration.as_nanos() > 0 {
                (l.tx_bytes as f64 * 8.0 / rate as f64) / duration.as_secs_f64()
            } else {
                0.0
            };
            LinkResult {
                id: l.id.clone(),
                utilization: busy.min(1.0),
                tx_packets: l.tx_packets,
                tx_bytes: l.tx_bytes,
                drops: l.drops,
                loss_drops: g.losses.iter().find(|x| x.id == l.id).map_or(0, |x| x.drops),
                // The policer's drops are the root htb's less its queue's
                // (see translate.rs: the police filter sits on the root).
                police_drops: if policed(cfg, &l.id) { l.root_drops.saturating_sub(l.drops) } else { 0 },
                ce_marks: l.ce_marks,
                peak_queue_packets: l.peak_queue_packets,
                throttled: 0,
                queue_trace: if cfg.trace_interval.is_some() { queue_trace(&l.queue_samples) } else { Vec::new() },
            }
        })
        .collect();
    RunResult { sim_time: duration, events: 0, flows, links, counters: total, data_segments }
}

/// The agent's queue samples as the model keeps them: a step series
/// ([`QueueSample::push_if_changed`]).
fn queue_trace(samples: &[QueueSampleOut]) -> Vec<QueueSample> {
    let mut series = Vec::new();
    for s in samples {
        let q = QueueSample {
            time: Duration::from_nanos(s.t_ns),
            packets: s.packets,
            bytes: u64::from(s.bytes),
            drops: u64::from(s.drops),
        };
        QueueSample::push_if_changed(&mut series, q);
    }
    series
}

/// Whether the direction `"<link>:<from>-><to>"` has a policer.
fn policed(cfg: &SimConfig, id: &str) -> bool {
    let Some((name, ends)) = id.split_once(':') else { return false };
    let Some((from, _)) = ends.split_once("->") else { return false };
    cfg.links.iter().filter(|l| l.name == name).any(|l| {
        let dir = if cfg.nodes[l.a].name == from { &l.ab } else { &l.ba };
        dir.police.is_some()
    })
}

fn link_rate(cfg: &SimConfig, id: &str) -> u64 {
    let name = id.split(':').next().unwrap_or("");
    cfg.links.iter().find(|l| l.name == name).map_or(0, |l| l.rate_bps)
}

/// The nstat counters the model also keeps.
fn counters_of(list: &[(String, u64)]) -> Counters {
    let mut c = Counters::default();
    for (name, v) in list {
        if let Some(m) = Mib::from_name(name) {
            c.add(m, *v);
        }
    }
    c
}

fn flow_result(cfg: &SimConfig, i: usize, out: &FlowOut, counters: Option<Counters>, duration: Duration) -> FlowResult {
    let fc = &cfg.flows[i];
    let runs: Vec<RunSummary> = out.runs.iter().map(|r| run_summary(r, duration)).collect();
    let bytes: u64 = runs.iter().map(|r| r.bytes_delivered).sum();
    let retransmits: u64 = runs.iter().map(|r| r.retransmits).sum();
    let completed_at = runs.last().and_then(|r| r.completed_at).filter(|_| {
        // The flow completes when its last run does.
        runs.len() == fc.repeat.count() as usize
    });
    let end = completed_at.unwrap_or(duration);
    let span = end.as_nanos().saturating_sub(fc.start.as_nanos());
    let goodput_bps = if span > 0 { bytes as f64 * 8.0 / (span as f64 / 1e9) } else { 0.0 };
    let rpc = match &fc.app {
        AppConfig::Rpc(r) => {
            let mut h = LatencyHistogram::new();
            for &v in &out.rpc_latencies_ns {
                h.record(v);
            }
            let samples = out.rpc_latencies_ns.iter().copied().take(r.samples as usize).collect();
            Some(Box::new(RpcStats::from_histogram(h, samples)))
        }
        AppConfig::Bulk { .. } => None,
    };
    FlowResult {
        id: fc.id.clone(),
        cc: fc.tcp.congestion_control.name().to_string(),
        bytes_delivered: bytes,
        goodput_bps,
        retransmits,
        sender_info: Box::new(runs.last().map(|r| r.sender_info).unwrap_or_default()),
        counters_known: counters.is_some(),
        counters: counters.unwrap_or_default(),
        completed_at,
        // Rows sampled only for the queue lengths are not a trace.
        trace: if cfg.trace_interval.is_some() { out.trace.iter().map(trace_row).collect() } else { Vec::new() },
        rpc,
        runs,
    }
}

fn run_summary(r: &RunOut, duration: Duration) -> RunSummary {
    let start = Duration::from_nanos(r.start_ns);
    let completed_at = r.completed_ns.map(Duration::from_nanos);
    let end = completed_at.unwrap_or(duration);
    let span = end.as_nanos().saturating_sub(r.start_ns);
    RunSummary {
        start,
        completed_at,
        closed_at: r.closed_ns.map(Duration::from_nanos),
        bytes_delivered: r.bytes_delivered,
        goodput_bps: if span > 0 { r.bytes_delivered as f64 * 8.0 / (span as f64 / 1e9) } else { 0.0 },
        retransmits: r.info.total_retrans as u64,
        rpcs: r.rpcs,
        cached_metrics: None,
        sender_info: tcp_info(&r.info),
        counters: Counters::default(),
    }
}

fn ca_state(v: u8) -> CaState {
    match v {
        1 => CaState::Disorder,
        2 => CaState::Cwr,
        3 => CaState::Recovery,
        4 => CaState::Loss,
        _ => CaState::Open,
    }
}

/// Linux's `tcp_info` in the model's shape.
pub fn tcp_info(t: &TcpInfoOut) -> TcpInfo {
    TcpInfo {
        ca_state: ca_state(t.ca_state),
        snd_cwnd: t.snd_cwnd,
        snd_ssthresh: t.snd_ssthresh,
        rto_us: t.rto_us,
        rtt_us: t.rtt_us,
        rttvar_us: t.rttvar_us,
        min_rtt_us: t.min_rtt_us,
        reordering: t.reordering,
        unacked: t.unacked,
        sacked: t.sacked,
        lost: t.lost,
        retrans: t.retrans,
        total_retrans: t.total_retrans,
        delivered: t.delivered,
        delivered_ce: t.delivered_ce,
        snd_mss: t.snd_mss,
        rcv_mss: t.rcv_mss,
        backoff: t.backoff,
        pacing_rate: t.pacing_rate,
        bytes_acked: t.bytes_acked,
        bytes_received: t.bytes_received,
        reord_seen: t.reord_seen,
        snd_wnd: t.snd_wnd,
        rcv_wnd: t.rcv_wnd,
        data_segs_out: t.data_segs_out,
        busy_time_us: t.busy_time_us,
        rwnd_limited_us: t.rwnd_limited_us,
        sndbuf_limited_us: t.sndbuf_limited_us,
        last_data_recv_ms: t.last_data_recv_ms,
        probes: t.probes,
        // The trace rows carry TCP_CC_INFO's alpha; the final tcp_info
        // does not.
        cc_info: None,
    }
}

fn trace_row(t: &TraceOut) -> TraceRow {
    TraceRow {
        time: Duration::from_nanos(t.time_ns),
        cwnd: t.cwnd,
        ssthresh: t.ssthresh,
        srtt_us: t.srtt_us,
        inflight: t.inflight,
        ca_state: ca_state(t.ca_state),
        delivered: t.delivered as u64,
        pacing_rate: t.pacing_rate,
        reordering: t.reordering,
        dctcp_alpha: t.dctcp_alpha,
    }
}
