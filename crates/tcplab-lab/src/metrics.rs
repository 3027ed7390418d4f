//! Metrics: the one number per run that `compare`, `reproduce` and
//! `sweep` put into distributions.
//!
//! | name | value (JSON unit) | shown as |
//! |---|---|---|
//! | `goodput`, `goodput.FLOW` | goodput of all flows (sum) or one flow, bit/s | Mbit/s |
//! | `goodput_last`, `goodput_last.FLOW` | the same over the last `run.goodput_window`, bit/s | Mbit/s |
//! | `jain` | Jain's fairness index over the last `run.goodput_window` | index |
//! | `rpc.p50`, `rpc.p99`, `rpc.p99.9`, `rpc.FLOW.p99`, ... | RPC latency percentile over all RPC flows or one, µs | µs |
//! | `fct.p50`, `fct.p99`, `fct.p99.9`, `fct.FLOW.p99`, ... | flow completion time percentile over the runs of finite bulk transfers, µs | µs |
//! | `NSTAT`, `NSTAT.FLOW` | a counter by its nstat name (`TcpRetransSegs`), all flows or one | count |
//! | `reordering[.FLOW]` | the sender's final `tp->reordering` (largest over flows) | count |
//! | `reordering_mean[.FLOW]` | `tp->reordering` averaged over time (needs `run.trace_interval`) | count |
//! | `ca_share.STATE[.FLOW]` | share of time in a ca_state, 0..1 (needs `run.trace_interval`) | index |
//!
//! FLOW may hold one `*` to pool several flows (`rpc.*-10k.p99.9`: every
//! flow whose id ends in `-10k`; `goodput.h1-*`).
//!
//! Values come from the exported records of a run ([`RunReport`], and the
//! simulator's [`RunResult`] for RPC latencies), never from simulator
//! internals.
//!
//! # RPC latencies
//!
//! The only place that reads the simulator's RPC results is
//! [`rpc_latencies`] (from `FlowResult::rpc`, the latency histogram); every
//! `rpc.*` metric, plot and CDF goes through it, so a change in how the
//! simulator reports latencies is a change of that one function. A flow
//! counts as an RPC flow when its application is anything but bulk
//! ([`is_rpc_flow`]); a scenario without one rejects `rpc.*` metrics before
//! running.

use crate::error::{did_you_mean, Error, Result};
use crate::report::RunReport;
use crate::schema::Scenario;
use tcplab_core::{CaState, Mib};
use tcplab_sim::config::{AppConfig, FlowConfig};
use tcplab_sim::result::RunResult;

/// RPC latency percentiles a metric may ask for: (suffix, percent).
pub const RPC_PERCENTILES: [(&str, f64); 3] = [("p50", 50.0), ("p99", 99.0), ("p99.9", 99.9)];

/// What a metric measures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Quantity {
    Goodput,
    GoodputLast,
    Jain,
    /// RPC latency at this percentile (nearest rank).
    RpcLatency(f64),
    /// Flow completion time at this percentile (nearest rank): from a
    /// run's connect to its last byte read, over every run of every finite
    /// bulk transfer chosen.
    Fct(f64),
    Counter(Mib),
    /// The sender's `tp->reordering` at the end of the run.
    Reordering,
    /// `tp->reordering` averaged over time (from the trace).
    ReorderingMean,
    /// `sk_pacing_rate` averaged over time (from the trace), bits/s: what
    /// BBR paces at on average across its gain cycle.
    PacingRateMean,
    /// Share of the time spent in a ca_state (from the trace), 0..1.
    CaShare(CaState),
    /// cwnd at which HyStart ended slow start, averaged over its exits:
    /// `(TCPHystartTrainCwnd + TCPHystartDelayCwnd) / (TCPHystartTrainDetect
    /// + TCPHystartDelayDetect)` of the run (0 without an exit).
    HystartExitCwnd,
}

/// A parsed, validated metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// The name as the user writes it (`goodput.f1`, `rpc.p99.9`).
    pub name: String,
    pub quantity: Quantity,
    /// One flow (its id), or all flows.
    pub flow: Option<String>,
    /// For `fct`: the indices of the flows whose runs count, the finite
    /// bulk transfers among those chosen (decided from the scenario when
    /// the name is parsed; run reports do not say what the application
    /// was).
    pub transfers: Vec<usize>,
}

/// How a metric's values are written for programs and shown to people.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Unit {
    /// Unit of the JSON/CSV value.
    pub json: &'static str,
    /// Unit shown in tables and plots.
    pub display: &'static str,
    /// Shown value = JSON value / scale.
    pub scale: f64,
    /// Decimals shown.
    pub decimals: usize,
}

pub const BITS_PER_SEC: Unit = Unit { json: "bit/s", display: "Mbit/s", scale: 1e6, decimals: 2 };
pub const MICROSECONDS: Unit = Unit { json: "us", display: "µs", scale: 1.0, decimals: 1 };
pub const COUNT: Unit = Unit { json: "count", display: "count", scale: 1.0, decimals: 0 };
pub const INDEX: Unit = Unit { json: "index", display: "index", scale: 1.0, decimals: 4 };

impl Unit {
    /// `x` (a JSON value) as shown to people.
    pub fn show(&self, x: f64) -> String {
        if !x.is_finite() {
            return "-".into();
        }
        let v = x / self.scale;
        if self.decimals == 0 && v.fract() != 0.0 {
            return format!("{v:.1}");
        }
        format!("{v:.*}", self.decimals)
    }
}

/// The syntax, for error messages.
pub const METRIC_FORMS: &str = "goodput, goodput.FLOW, goodput_last[.FLOW], jain, reordering[.FLOW], \
     reordering_mean[.FLOW], pacing_rate_mean[.FLOW], ca_share.STATE[.FLOW], hystart_exit_cwnd, rpc.p50, rpc.p99, rpc.p99.9, \
     rpc.FLOW.p99, fct.p50, fct.p99, fct.p99.9, fct.FLOW.p99, or a counter (nstat name, `tcplab counters`) optionally .FLOW";

/// The flow has a request/response workload (anything but bulk).
pub fn is_rpc_flow(f: &FlowConfig) -> bool {
    !matches!(f.app, AppConfig::Bulk { .. })
}

/// RPC latencies of one flow, or of several pooled: `(latency ns, count)`
/// pairs sorted by latency. Built from whatever the simulator reports (a
/// histogram's buckets or exact samples); percentiles are nearest rank,
/// as the simulator's own `RpcStats` and netperf/HdrHistogram report them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RpcLatencies {
    points: Vec<(u64, u64)>,
}

impl RpcLatencies {
    /// From `(latency ns, count)` pairs in any order (zero counts dropped).
    pub fn from_counts(pairs: impl IntoIterator<Item = (u64, u64)>) -> RpcLatencies {
        let mut points: Vec<(u64, u64)> = pairs.into_iter().filter(|p| p.1 > 0).collect();
        points.sort_unstable();
        RpcLatencies { points }
    }

    /// From exact latencies (ns).
    pub fn from_samples(ns: &[u64]) -> RpcLatencies {
        RpcLatencies::from_counts(ns.iter().map(|&v| (v, 1)))
    }

    /// Adds every latency of `other`.
    pub fn pool(&mut self, other: &RpcLatencies) {
        self.points.extend_from_slice(&other.points);
        self.points.sort_unstable();
    }

    /// Transactions.
    pub fn count(&self) -> u64 {
        self.points.iter().map(|p| p.1).sum()
    }

    /// Nearest-rank percentile `p` (0..=100), µs; None without latencies.
    pub fn percentile_us(&self, p: f64) -> Option<f64> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        // Thousandths of a percent, in integers (99.9 % of 1000 is 999 exactly).
        let milli = (p.clamp(0.0, 100.0) * 1000.0).round() as u128;
        self.at_rank_us(((milli * n as u128).div_ceil(100_000) as u64).max(1))
    }

    /// The `rank`-th smallest latency (from 1), µs.
    pub fn at_rank_us(&self, rank: u64) -> Option<f64> {
        let mut seen = 0;
        for &(v, c) in &self.points {
            seen += c;
            if seen >= rank {
                return Some(v as f64 / 1e3);
            }
        }
        self.points.last().map(|p| p.0 as f64 / 1e3)
    }

    /// The empirical CDF: `(latency µs, fraction ≤ it)` per distinct latency.
    pub fn cdf_us(&self) -> Vec<(f64, f64)> {
        let n = self.count() as f64;
        let mut seen = 0;
        let mut out: Vec<(f64, f64)> = Vec::new();
        for &(v, c) in &self.points {
            seen += c;
            let pt = (v as f64 / 1e3, seen as f64 / n);
            match out.last_mut() {
                Some(last) if last.0 == pt.0 => *last = pt,
                _ => out.push(pt),
            }
        }
        out
    }
}

/// A finite bulk transfer, whose runs have a completion time.
pub fn is_finite_transfer(f: &FlowConfig) -> bool {
    matches!(f.app, AppConfig::Bulk { bytes: Some(_), .. })
}

/// `p99` or `FLOW.p99` (and the other [`RPC_PERCENTILES`]): the percentile
/// and the flow pattern, if any.
fn percentile_suffix(rest: &str) -> Option<(f64, Option<&str>)> {
    RPC_PERCENTILES.iter().find_map(|(suffix, p)| {
        if rest == *suffix {
            Some((*p, None))
        } else {
            rest.strip_suffix(suffix).and_then(|f| f.strip_suffix('.')).map(|f| (*p, Some(f)))
        }
    })
}

/// RPC latencies of flow index `flow` of a run; `None` when the simulator
/// reports none for it. The single place that reads RPC results (see the
/// module docs).
pub fn rpc_latencies(result: &RunResult, flow: usize) -> Option<RpcLatencies> {
    // The simulator keeps every latency in a histogram (nearest-rank
    // quantiles within 0.1 %, as its own RpcStats::p99_ns); its CDF gives
    // each bucket's value and cumulative fraction, turned back into counts.
    let stats = result.flows.get(flow)?.rpc.as_ref()?;
    let total = stats.histogram.count();
    let mut prev = 0u64;
    Some(RpcLatencies::from_counts(stats.histogram.cdf().map(|(v, frac)| {
        let upto = ((frac * total as f64).round() as u64).max(prev);
        let c = upto - prev;
        prev = upto;
        (v, c)
    })))
}

impl Metric {
    /// Parses a metric name for scenario `sc`: flows must exist, `rpc.*`
    /// needs RPC flows, `goodput_last`/`jain` need `run.goodput_window`.
    /// `flag` is the option the name came from, for error messages.
    pub fn parse(flag: &str, text: &str, sc: &Scenario) -> Result<Metric> {
        let loc = format!("{flag} {text}");
        let err = |m: String| Error::at(loc.clone(), m);
        let text = text.trim();
        let flow_ids: Vec<&str> = sc.sim.flows.iter().map(|f| f.id.as_str()).collect();
        let check_flow = |flow: &str| -> Result<String> {
            if flow_ids.iter().any(|id| flow_matches(flow, id)) {
                Ok(flow.to_string())
            } else {
                Err(err(format!("no flow {flow:?} in {} (flows: {})", sc.name, flow_ids.join(", "))))
            }
        };
        let need_trace = || -> Result<()> {
            if sc.sim.trace_interval.is_none() {
                return Err(
                    err("needs run.trace_interval in the scenario (e.g. --set run.trace_interval=10ms)".into()),
                );
            }
            Ok(())
        };
        let need_window = |what: &str| -> Result<()> {
            if sc.goodput_window.is_none() {
                return Err(err(format!(
                    "{what} needs run.goodput_window in the scenario (e.g. --set run.goodput_window=5s)"
                )));
            }
            Ok(())
        };
        let (head, flow) = match text.split_once('.') {
            Some((h, f)) => (h, Some(f)),
            None => (text, None),
        };
        let mut transfers = Vec::new();
        let (quantity, flow) = match head {
            "goodput" => (Quantity::Goodput, flow.map(check_flow).transpose()?),
            "goodput_last" => {
                need_window("goodput_last")?;
                (Quantity::GoodputLast, flow.map(check_flow).transpose()?)
            }
            "jain" if flow.is_none() => {
                need_window("jain")?;
                (Quantity::Jain, None)
            }
            "rpc" => {
                let (pct, flow) = percentile_suffix(flow.unwrap_or(""))
                    .ok_or_else(|| err("expected rpc.p50, rpc.p99, rpc.p99.9 or rpc.FLOW.p99 (and so on)".into()))?;
                let flow = flow.map(check_flow).transpose()?;
                let rpc: Vec<&str> = sc.sim.flows.iter().filter(|f| is_rpc_flow(f)).map(|f| f.id.as_str()).collect();
                if rpc.is_empty() {
                    return Err(err(format!(
                        "{} has no RPC flows, so it has no RPC latencies (its flows are bulk transfers: {}); \
                         use goodput or a counter",
                        sc.name,
                        flow_ids.join(", ")
                    )));
                }
                if let Some(f) = &flow {
                    if !rpc.iter().any(|id| flow_matches(f, id)) {
                        return Err(err(format!("flow {f:?} is not an RPC flow (RPC flows: {})", rpc.join(", "))));
                    }
                }
                (Quantity::RpcLatency(pct), flow)
            }
            "fct" => {
                let (pct, flow) = percentile_suffix(flow.unwrap_or(""))
                    .ok_or_else(|| err("expected fct.p50, fct.p99, fct.p99.9 or fct.FLOW.p99 (and so on)".into()))?;
                let flow = flow.map(check_flow).transpose()?;
                transfers = (0..sc.sim.flows.len())
                    .filter(|&i| {
                        let f = &sc.sim.flows[i];
                        is_finite_transfer(f) && flow.as_deref().map_or(true, |p| flow_matches(p, &f.id))
                    })
                    .collect();
                if transfers.is_empty() {
                    return Err(err(format!(
                        "no finite bulk transfer (app = {{ kind = \"bulk\", bytes = ... }}) {} in {}, so no completion times",
                        flow.as_deref().map_or(String::new(), |f| format!("matches {f:?}")),
                        sc.name
                    )));
                }
                (Quantity::Fct(pct), flow)
            }
            "reordering" => (Quantity::Reordering, flow.map(check_flow).transpose()?),
            "hystart_exit_cwnd" if flow.is_none() => (Quantity::HystartExitCwnd, None),
            "reordering_mean" => {
                need_trace()?;
                (Quantity::ReorderingMean, flow.map(check_flow).transpose()?)
            }
            "pacing_rate_mean" => {
                need_trace()?;
                (Quantity::PacingRateMean, flow.map(check_flow).transpose()?)
            }
            "ca_share" => {
                need_trace()?;
                let rest = flow.unwrap_or("");
                let (state, flow) = match rest.split_once('.') {
                    Some((st, f)) => (st, Some(f)),
                    None => (rest, None),
                };
                let st = [CaState::Open, CaState::Disorder, CaState::Cwr, CaState::Recovery, CaState::Loss]
                    .into_iter()
                    .find(|s| s.name().eq_ignore_ascii_case(state))
                    .ok_or_else(|| err("expected ca_share.STATE (Open, Disorder, CWR, Recovery, Loss)".into()))?;
                (Quantity::CaShare(st), flow.map(check_flow).transpose()?)
            }
            _ => match Mib::from_name(head) {
                Some(m) => (Quantity::Counter(m), flow.map(check_flow).transpose()?),
                None => {
                    let mut known: Vec<&str> = vec![
                        "goodput",
                        "goodput_last",
                        "jain",
                        "rpc",
                        "fct",
                        "reordering",
                        "reordering_mean",
                        "pacing_rate_mean",
                        "ca_share",
                        "hystart_exit_cwnd",
                    ];
                    known.extend(Mib::ALL.iter().map(|m| m.name()));
                    let hint = match did_you_mean(head, known.iter().copied()) {
                        Some(k) => format!(" (did you mean {k:?}?)"),
                        None => String::new(),
                    };
                    return Err(err(format!("unknown metric {text:?}{hint}; metrics are {METRIC_FORMS}")));
                }
            },
        };
        Ok(Metric { name: text.to_string(), quantity, flow, transfers })
    }

    pub fn unit(&self) -> Unit {
        match self.quantity {
            Quantity::Goodput | Quantity::GoodputLast => BITS_PER_SEC,
            Quantity::Jain => INDEX,
            Quantity::RpcLatency(_) | Quantity::Fct(_) => MICROSECONDS,
            Quantity::Counter(_) | Quantity::Reordering => COUNT,
            Quantity::HystartExitCwnd => Unit { decimals: 1, ..COUNT },
            Quantity::ReorderingMean => Unit { decimals: 1, ..COUNT },
            Quantity::PacingRateMean => BITS_PER_SEC,
            Quantity::CaShare(_) => INDEX,
        }
    }

    /// A phrase for headings: "goodput of all flows".
    pub fn describe(&self) -> String {
        let whom = match &self.flow {
            Some(f) => format!("flow {f}"),
            None => "all flows".to_string(),
        };
        match self.quantity {
            Quantity::Goodput => format!("goodput of {whom}"),
            Quantity::GoodputLast => format!("goodput over the last run.goodput_window, {whom}"),
            Quantity::Jain => "Jain's fairness index over the last run.goodput_window".to_string(),
            Quantity::RpcLatency(p) => format!("RPC latency p{p} of {whom}"),
            Quantity::Fct(p) => format!("flow completion time p{p} of {whom} (finite bulk transfers)"),
            Quantity::Counter(m) => format!("{} of {whom}", m.name()),
            Quantity::Reordering => format!("final tp->reordering of {whom} (largest)"),
            Quantity::ReorderingMean => format!("time-averaged tp->reordering of {whom}"),
            Quantity::PacingRateMean => format!("time-averaged sk_pacing_rate of {whom}"),
            Quantity::CaShare(st) => format!("share of time in {} of {whom}", st.name()),
            Quantity::HystartExitCwnd => "cwnd at HyStart's slow-start exits (mean over exits)".to_string(),
        }
    }

    /// The metric's value in run `rep` (with its simulator result `result`).
    pub fn eval(&self, rep: &RunReport, result: &RunResult) -> Result<f64> {
        let flows: Vec<usize> = match &self.flow {
            Some(pat) => (0..rep.flows.len()).filter(|&i| flow_matches(pat, &rep.flows[i].id)).collect(),
            None => (0..rep.flows.len()).collect(),
        };
        if flows.is_empty() && self.flow.is_some() {
            return Err(Error::msg(format!("metric {}: the run has no such flow", self.name)));
        }
        match self.quantity {
            Quantity::Goodput => Ok(flows.iter().map(|&i| rep.flows[i].goodput_bps).sum()),
            Quantity::GoodputLast => flows
                .iter()
                .map(|&i| rep.flows[i].goodput_last_bps)
                .sum::<Option<f64>>()
                .ok_or_else(|| Error::msg(format!("metric {}: no trace to compute it from", self.name))),
            Quantity::Jain => rep
                .fairness
                .as_ref()
                .and_then(|f| f.jain_index)
                .ok_or_else(|| Error::msg("metric jain: no flow delivered data in the window")),
            Quantity::Counter(m) => Ok(match &self.flow {
                None => rep.counters.get(m),
                Some(_) => {
                    let mut sum = 0;
                    for i in flows {
                        let f = &rep.flows[i];
                        sum += match (&f.counters, m) {
                            (Some(c), _) => c.get(m),
                            // tcp_info's total_retrans is per socket on either backend.
                            (None, Mib::TcpRetransSegs) => f.retransmits,
                            (None, _) => {
                                return Err(Error::msg(format!(
                                    "metric {}: {} counts per host and flow {} shares a host with another \
                                     flow; measure the run's {} instead",
                                    self.name,
                                    rep.backend,
                                    f.id,
                                    m.name()
                                )))
                            }
                        };
                    }
                    sum
                }
            } as f64),
            Quantity::HystartExitCwnd => {
                let c = |m: Mib| rep.counters.get(m) as f64;
                let exits = c(Mib::TcpExtTCPHystartTrainDetect) + c(Mib::TcpExtTCPHystartDelayDetect);
                let cwnd = c(Mib::TcpExtTCPHystartTrainCwnd) + c(Mib::TcpExtTCPHystartDelayCwnd);
                Ok(if exits > 0.0 { cwnd / exits } else { 0.0 })
            }
            Quantity::Reordering => Ok(flows
                .iter()
                .filter_map(|&i| result.flows.get(i))
                .map(|f| f.sender_info.reordering)
                .max()
                .unwrap_or(0) as f64),
            Quantity::ReorderingMean | Quantity::PacingRateMean | Quantity::CaShare(_) => {
                // Time-weighted over the trace rows of the chosen flows.
                let (mut num, mut den) = (0.0f64, 0.0f64);
                for f in flows.iter().filter_map(|&i| result.flows.get(i)) {
                    for w in f.trace.windows(2) {
                        let dt = (w[1].time - w[0].time).as_secs_f64();
                        let v = match self.quantity {
                            Quantity::ReorderingMean => w[0].reordering as f64,
                            Quantity::PacingRateMean => w[0].pacing_rate as f64 * 8.0,
                            Quantity::CaShare(st) => (w[0].ca_state == st) as u8 as f64,
                            _ => 0.0,
                        };
                        num += v * dt;
                        den += dt;
                    }
                }
                if den > 0.0 {
                    Ok(num / den)
                } else {
                    Err(Error::msg(format!("metric {}: no trace rows", self.name)))
                }
            }
            Quantity::Fct(p) => {
                let (mut done, mut runs) = (Vec::new(), 0u64);
                for f in self.transfers.iter().filter_map(|&i| result.flows.get(i)) {
                    for r in &f.runs {
                        runs += 1;
                        if let Some(end) = r.completed_at {
                            done.push(end.as_nanos().saturating_sub(r.start.as_nanos()));
                        }
                    }
                }
                let all = RpcLatencies::from_samples(&done);
                let rank = ((p / 100.0 * runs as f64).ceil() as u64).max(1);
                if rank > all.count() {
                    return Err(Error::msg(format!(
                        "metric {}: {} of {runs} transfers completed, so the p{p} is past the end of the run \
                         (lengthen run.duration)",
                        self.name,
                        all.count()
                    )));
                }
                Ok(all.at_rank_us(rank).unwrap_or(0.0))
            }
            Quantity::RpcLatency(p) => {
                let mut all = RpcLatencies::default();
                for &i in &flows {
                    if let Some(l) = rpc_latencies(result, i) {
                        all.pool(&l);
                    }
                }
                all.percentile_us(p).ok_or_else(|| {
                    Error::msg(format!(
                        "metric {}: the simulator reported no RPC latencies for {}",
                        self.name,
                        self.flow.as_deref().unwrap_or("any flow")
                    ))
                })
            }
        }
    }
}

/// Does flow id `id` match `pat`, a flow id with at most one `*` (any
/// run of characters)? `rpc.*-10k.p99` pools every flow ending in `-10k`.
pub fn flow_matches(pat: &str, id: &str) -> bool {
    match pat.split_once('*') {
        None => pat == id,
        Some((pre, post)) => id.len() >= pre.len() + post.len() && id.starts_with(pre) && id.ends_with(post),
    }
}

/// Parses several metric names; names may also be comma-separated.
/// Duplicates are dropped (first kept). Empty input gives `goodput`.
pub fn parse_all(flag: &str, texts: &[String], sc: &Scenario) -> Result<Vec<Metric>> {
    let mut out: Vec<Metric> = Vec::new();
    for t in texts {
        for name in t.split(',').map(str::trim) {
            if name.is_empty() {
                return Err(Error::at(format!("{flag} {t}"), format!("empty metric name; metrics are {METRIC_FORMS}")));
            }
            let m = Metric::parse(flag, name, sc)?;
            if !out.iter().any(|o| o.name == m.name) {
                out.push(m);
            }
        }
    }
    if out.is_empty() {
        out.push(Metric::parse(flag, "goodput", sc)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SC: &str = "[run]\nduration = \"1s\"\n[[node]]\nname = \"h1\"\n[[node]]\nname = \"h2\"\n\
        [[link]]\nname = \"l\"\na = \"h1\"\nb = \"h2\"\nrate = \"10Mbit\"\n\
        [[flow]]\nid = \"f1\"\nfrom = \"h1\"\nto = \"h2\"\n[[flow]]\nid = \"f.2\"\nfrom = \"h1\"\nto = \"h2\"\n";

    fn sc() -> Scenario {
        crate::load_str("x.toml", SC, &[], None).unwrap()
    }

    #[test]
    fn test_parse_names() {
        let s = sc();
        let m = Metric::parse("--metric", "goodput", &s).unwrap();
        assert_eq!((m.quantity, m.flow), (Quantity::Goodput, None));
        let m = Metric::parse("--metric", "goodput.f.2", &s).unwrap();
        assert_eq!(m.flow.as_deref(), Some("f.2"));
        let m = Metric::parse("--metric", "TcpRetransSegs.f1", &s).unwrap();
        assert_eq!(m.quantity, Quantity::Counter(Mib::from_name("TcpRetransSegs").unwrap()));
        assert_eq!(m.unit(), COUNT);
    }

    #[test]
    fn test_parse_errors_are_clear() {
        let s = sc();
        let e = Metric::parse("--metric", "goodput.f9", &s).unwrap_err().to_string();
        assert_eq!(e, "--metric goodput.f9: no flow \"f9\" in x.toml (flows: f1, f.2)");
        let e = Metric::parse("--metric", "TcpRetransSeg", &s).unwrap_err().to_string();
        assert!(e.contains("unknown metric \"TcpRetransSeg\" (did you mean \"TcpRetransSegs\"?)"), "{e}");
        let e = Metric::parse("--metric", "rpc.p99.9", &s).unwrap_err().to_string();
        assert!(e.contains("x.toml has no RPC flows"), "{e}");
        let e = Metric::parse("--metric", "rpc.p98", &s).unwrap_err().to_string();
        assert!(e.contains("expected rpc.p50"), "{e}");
        let e = Metric::parse("--metric", "jain", &s).unwrap_err().to_string();
        assert!(e.contains("needs run.goodput_window"), "{e}");
        assert!(parse_all("--metric", &["goodput,".into()], &s).is_err());
    }

    #[test]
    fn test_parse_all_defaults_and_dedups() {
        let s = sc();
        let m = parse_all("--metric", &[], &s).unwrap();
        assert_eq!(m.len(), 1);
        assert_eq!(m[0].name, "goodput");
        let m = parse_all("--metric", &["goodput,TcpRetransSegs".into(), "goodput".into()], &s).unwrap();
        assert_eq!(m.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["goodput", "TcpRetransSegs"]);
    }

    #[test]
    fn test_rpc_latencies_percentiles_and_cdf() {
        // 1000 transactions of 1..=1000 µs.
        let l = RpcLatencies::from_samples(&(1..=1000u64).map(|v| v * 1000).collect::<Vec<_>>());
        assert_eq!(l.percentile_us(50.0), Some(500.0));
        assert_eq!(l.percentile_us(99.0), Some(990.0));
        assert_eq!(l.percentile_us(99.9), Some(999.0));
        assert_eq!(l.percentile_us(100.0), Some(1000.0));
        // Counted buckets and pooling.
        let mut a = RpcLatencies::from_counts([(2000, 3), (1000, 1), (5000, 0)]);
        assert_eq!(a.count(), 4);
        assert_eq!(a.cdf_us(), [(1.0, 0.25), (2.0, 1.0)]);
        a.pool(&RpcLatencies::from_samples(&[9000]));
        assert_eq!(a.percentile_us(99.0), Some(9.0));
        assert_eq!(a.percentile_us(50.0), Some(2.0));
        assert_eq!(RpcLatencies::default().percentile_us(50.0), None);
    }

    #[test]
    fn test_per_flow_counters_a_backend_cannot_attribute_are_an_error_not_zero() {
        // Two flows between the same hosts: on the kernel backend their
        // counters are one namespace's, so neither flow's are known.
        let s = sc();
        let mut out = crate::runner::run(&s, None).unwrap();
        for f in &mut out.result.flows {
            f.counters_known = false;
            f.counters = Default::default();
        }
        out.backend = "linux-test".into();
        let rep = crate::report::RunReport::new(&s, &out);
        assert!(rep.flows[0].counters.is_none());
        let m = Metric::parse("--metric", "TcpExtTCPLossProbes.f1", &s).unwrap();
        let e = m.eval(&rep, &out.result).unwrap_err().to_string();
        assert!(e.contains("linux-test counts per host and flow f1 shares a host"), "{e}");
        // Retransmissions come from the socket's tcp_info on either backend.
        let m = Metric::parse("--metric", "TcpRetransSegs.f1", &s).unwrap();
        assert_eq!(m.eval(&rep, &out.result).unwrap(), out.result.flows[0].retransmits as f64);
        // The run's total is always known.
        let m = Metric::parse("--metric", "TcpExtTCPLossProbes", &s).unwrap();
        assert!(m.eval(&rep, &out.result).is_ok());
    }

    #[test]
    fn test_unit_show() {
        assert_eq!(BITS_PER_SEC.show(94_123_456.0), "94.12");
        assert_eq!(COUNT.show(12.0), "12");
        assert_eq!(COUNT.show(12.5), "12.5");
        assert_eq!(MICROSECONDS.show(f64::NAN), "-");
    }
}
