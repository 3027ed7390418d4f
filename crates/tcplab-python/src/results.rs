//! The lab's results, held as the lab made them, and their Arrow tables.
//!
//! Each result keeps the lab's own value (a `RunReport` and the run's
//! `RunResult`, a `Comparison`, a `SweepResult`, a `Diff`, a
//! `Reproduction`), so its JSON and text are the CLI's, byte for byte
//! (`to_json`, `text`); `table(name)` turns one part into an Arrow table
//! column by column.

use crate::tables::{Col, Columns, Interner, Table};
use pyo3::exceptions::PyKeyError;
use pyo3::prelude::*;
use tcplab_core::CaState;
use tcplab_lab::batch::FlowTrace;
use tcplab_lab::compare::Comparison;
use tcplab_lab::diff::Diff;
use tcplab_lab::experiments::{RefStat, Reproduction};
use tcplab_lab::report::RunReport;
use tcplab_lab::stats::Summary;
use tcplab_lab::sweep::SweepResult;
use tcplab_sim::result::RunResult;

/// What a task produced.
pub enum Output {
    Run(Box<RunOutput>),
    Compare(ComparisonOutput),
    Sweep(SweepOutput),
    Diff(DiffOutput),
    Reproduce(Vec<ReproductionOutput>),
}

impl Output {
    pub fn into_py_object(self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(match self {
            Output::Run(r) => Bound::new(py, *r)?.into_any().unbind(),
            Output::Compare(c) => Bound::new(py, c)?.into_any().unbind(),
            Output::Sweep(s) => Bound::new(py, s)?.into_any().unbind(),
            Output::Diff(d) => Bound::new(py, d)?.into_any().unbind(),
            Output::Reproduce(v) => {
                let items: Vec<Bound<'_, ReproductionOutput>> =
                    v.into_iter().map(|r| Bound::new(py, r)).collect::<PyResult<_>>()?;
                pyo3::types::PyList::new(py, items)?.into_any().unbind()
            }
        })
    }
}

fn unknown(name: &str, known: &[&str]) -> PyErr {
    PyKeyError::new_err(format!("no table {name:?} (tables: {})", known.join(", ")))
}

/// The names of the congestion-avoidance states, by `CaState as usize`.
const CA_STATES: [CaState; 5] = [CaState::Open, CaState::Disorder, CaState::Cwr, CaState::Recovery, CaState::Loss];

/// Flows' traces as one long table: a row per flow and sample.
pub fn trace_table(traces: &[FlowTrace]) -> Table {
    let n: usize = traces.iter().map(|t| t.rows.len()).sum();
    let mut flow = Vec::with_capacity(n);
    let mut time_s = Vec::with_capacity(n);
    let mut cwnd = Vec::with_capacity(n);
    let mut ssthresh = Vec::with_capacity(n);
    let mut srtt_us = Vec::with_capacity(n);
    let mut inflight = Vec::with_capacity(n);
    let mut ca_state = Vec::with_capacity(n);
    let mut delivered = Vec::with_capacity(n);
    let mut delivered_bytes = Vec::with_capacity(n);
    let mut pacing_rate = Vec::with_capacity(n);
    let mut reordering = Vec::with_capacity(n);
    let mut dctcp_alpha = Vec::with_capacity(n);
    for (i, t) in traces.iter().enumerate() {
        let k = i32::try_from(i).expect("fewer than 2^31 flows");
        for r in &t.rows {
            flow.push(k);
            time_s.push(r.time.as_secs_f64());
            cwnd.push(r.cwnd);
            ssthresh.push(r.ssthresh);
            srtt_us.push(r.srtt_us);
            inflight.push(r.inflight);
            ca_state.push(r.ca_state as i32);
            delivered.push(r.delivered);
            delivered_bytes.push(r.delivered.saturating_mul(u64::from(t.mss)));
            pacing_rate.push(r.pacing_rate);
            reordering.push(r.reordering);
            dctcp_alpha.push(r.dctcp_alpha);
        }
    }
    let mut c = Columns::new();
    c.push("flow", Col::Dict { keys: flow, values: traces.iter().map(|t| t.id.clone()).collect() })
        .push("time_s", Col::F64(time_s))
        .push("cwnd", Col::U32(cwnd))
        .push("ssthresh", Col::U32(ssthresh))
        .push("srtt_us", Col::U32(srtt_us))
        .push("inflight", Col::U32(inflight))
        .push(
            "ca_state",
            Col::Dict { keys: ca_state, values: CA_STATES.iter().map(|s| s.name().to_string()).collect() },
        )
        .push("delivered", Col::U64(delivered))
        .push("delivered_bytes", Col::U64(delivered_bytes))
        .push("pacing_rate", Col::U64(pacing_rate))
        .push("reordering", Col::U32(reordering))
        .push("dctcp_alpha", Col::OptU32(dctcp_alpha));
    c.finish()
}

// ---- one run ---------------------------------------------------------------

/// The result of one run (`tcplab.run`).
#[pyclass(module = "tcplab._native", name = "RunOutput", frozen)]
pub struct RunOutput {
    pub report: RunReport,
    pub result: RunResult,
    /// Whether traces were recorded.
    pub traced: bool,
}

const RUN_TABLES: &[&str] =
    &["flows", "links", "counters", "flow_counters", "trace", "queue_trace", "rpc", "flow_runs"];

impl RunOutput {
    fn flows(&self) -> Table {
        let f = &self.report.flows;
        let mut hosts = Interner::new();
        let mut ccs = Interner::new();
        let from: Vec<i32> = f.iter().map(|x| hosts.key(&x.from)).collect();
        let to: Vec<i32> = f.iter().map(|x| hosts.key(&x.to)).collect();
        let cc: Vec<i32> = f.iter().map(|x| ccs.key(&x.cc)).collect();
        let rpc = |g: fn(&tcplab_lab::report::RpcReport) -> f64| -> Col {
            Col::OptF64(f.iter().map(|x| x.rpc.as_ref().map(g)).collect())
        };
        let mut c = Columns::new();
        c.push("id", Col::Str(f.iter().map(|x| x.id.clone()).collect()))
            .push("cc", Col::Dict { keys: cc, values: ccs.values })
            .push("from", Col::Dict { keys: from, values: hosts.values.clone() })
            .push("to", Col::Dict { keys: to, values: hosts.values })
            .push("goodput_bps", Col::F64(f.iter().map(|x| x.goodput_bps).collect()))
            .push("bytes_delivered", Col::U64(f.iter().map(|x| x.bytes_delivered).collect()))
            .push("retransmits", Col::U64(f.iter().map(|x| x.retransmits).collect()))
            .push("final_cwnd", Col::U32(f.iter().map(|x| x.final_cwnd).collect()))
            .push("final_ssthresh", Col::U32(f.iter().map(|x| x.final_ssthresh).collect()))
            .push("srtt_us", Col::U32(f.iter().map(|x| x.srtt_us).collect()))
            .push("min_rtt_us", Col::OptU32(f.iter().map(|x| x.min_rtt_us).collect()))
            .push("completed_at_s", Col::OptF64(f.iter().map(|x| x.completed_at_s).collect()))
            .push("goodput_last_bps", Col::OptF64(f.iter().map(|x| x.goodput_last_bps).collect()))
            .push("delivered", Col::U32(f.iter().map(|x| x.sender.delivered).collect()))
            .push("delivered_ce", Col::U32(f.iter().map(|x| x.sender.delivered_ce).collect()))
            .push("data_segs_out", Col::U32(f.iter().map(|x| x.sender.data_segs_out).collect()))
            .push("busy_time_us", Col::U64(f.iter().map(|x| x.sender.busy_time_us).collect()))
            .push("rwnd_limited_us", Col::U64(f.iter().map(|x| x.sender.rwnd_limited_us).collect()))
            .push("sndbuf_limited_us", Col::U64(f.iter().map(|x| x.sender.sndbuf_limited_us).collect()))
            .push("pacing_rate", Col::U64(f.iter().map(|x| x.sender.pacing_rate).collect()))
            .push("runs", Col::U64(f.iter().map(|x| x.runs.len() as u64).collect()))
            .push("rpc_count", Col::OptU64(f.iter().map(|x| x.rpc.as_ref().map(|r| r.count)).collect()))
            .push("rpc_p50_us", rpc(|r| r.p50_us))
            .push("rpc_p99_us", rpc(|r| r.p99_us))
            .push("rpc_p999_us", rpc(|r| r.p999_us));
        c.finish()
    }

    fn links(&self) -> Table {
        let l = &self.report.links;
        let mut c = Columns::new();
        c.push("id", Col::Str(l.iter().map(|x| x.id.clone()).collect()))
            .push("utilization", Col::F64(l.iter().map(|x| x.utilization).collect()))
            .push("tx_packets", Col::U64(l.iter().map(|x| x.tx_packets).collect()))
            .push("tx_bytes", Col::U64(l.iter().map(|x| x.tx_bytes).collect()))
            .push("drops", Col::U64(l.iter().map(|x| x.drops).collect()))
            .push("loss_drops", Col::U64(l.iter().map(|x| x.loss_drops).collect()))
            .push("police_drops", Col::U64(l.iter().map(|x| x.police_drops).collect()))
            .push("ce_marks", Col::U64(l.iter().map(|x| x.ce_marks).collect()))
            .push("peak_queue_packets", Col::U64(l.iter().map(|x| x.peak_queue_packets).collect()));
        c.finish()
    }

    fn counters(&self) -> Table {
        let (names, values): (Vec<String>, Vec<u64>) =
            self.report.counters.iter().map(|(k, v)| (k.to_string(), v)).unzip();
        let mut c = Columns::new();
        c.push("counter", Col::Str(names)).push("value", Col::U64(values));
        c.finish()
    }

    fn flow_counters(&self) -> Table {
        let f = &self.report.flows;
        let names: Vec<&'static str> = self.report.counters.iter().map(|(k, _)| k).collect();
        let mut per: Vec<Vec<Option<u64>>> = vec![Vec::with_capacity(f.len()); names.len()];
        for x in f {
            match &x.counters {
                Some(cm) => {
                    for (i, (_, v)) in cm.iter().enumerate() {
                        per[i].push(Some(v));
                    }
                }
                None => per.iter_mut().for_each(|p| p.push(None)),
            }
        }
        let mut c = Columns::new();
        c.push("flow", Col::Str(f.iter().map(|x| x.id.clone()).collect()));
        for (n, v) in names.into_iter().zip(per) {
            c.push(n, Col::OptU64(v));
        }
        c.finish()
    }

    fn queue_trace(&self) -> Table {
        let links = &self.result.links;
        let n: usize = links.iter().map(|l| l.queue_trace.len()).sum();
        let (mut link, mut time_s, mut packets, mut bytes, mut drops) = (
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
            Vec::with_capacity(n),
        );
        for (i, l) in links.iter().enumerate() {
            for q in &l.queue_trace {
                link.push(i as i32);
                time_s.push(q.time.as_secs_f64());
                packets.push(q.packets);
                bytes.push(q.bytes);
                drops.push(q.drops);
            }
        }
        let mut c = Columns::new();
        c.push("link", Col::Dict { keys: link, values: links.iter().map(|l| l.id.clone()).collect() })
            .push("time_s", Col::F64(time_s))
            .push("packets", Col::U32(packets))
            .push("bytes", Col::U64(bytes))
            .push("drops", Col::U64(drops));
        c.finish()
    }

    fn rpc(&self) -> Table {
        let f: Vec<_> = self.report.flows.iter().filter_map(|x| x.rpc.as_ref().map(|r| (x, r))).collect();
        let col = |g: fn(&tcplab_lab::report::RpcReport) -> f64| Col::F64(f.iter().map(|(_, r)| g(r)).collect());
        let mut c = Columns::new();
        c.push("flow", Col::Str(f.iter().map(|(x, _)| x.id.clone()).collect()))
            .push("count", Col::U64(f.iter().map(|(_, r)| r.count).collect()))
            .push("min_us", col(|r| r.min_us))
            .push("mean_us", col(|r| r.mean_us))
            .push("p50_us", col(|r| r.p50_us))
            .push("p90_us", col(|r| r.p90_us))
            .push("p99_us", col(|r| r.p99_us))
            .push("p999_us", col(|r| r.p999_us))
            .push("max_us", col(|r| r.max_us));
        c.finish()
    }

    fn flow_runs(&self) -> Table {
        let rows: Vec<_> =
            self.report.flows.iter().flat_map(|f| f.runs.iter().enumerate().map(move |(k, r)| (f, k, r))).collect();
        let mut c = Columns::new();
        c.push("flow", Col::Str(rows.iter().map(|(f, _, _)| f.id.clone()).collect()))
            .push("run", Col::U64(rows.iter().map(|(_, k, _)| *k as u64).collect()))
            .push("start_s", Col::F64(rows.iter().map(|(_, _, r)| r.start_s).collect()))
            .push("completed_at_s", Col::OptF64(rows.iter().map(|(_, _, r)| r.completed_at_s).collect()))
            .push("closed_at_s", Col::OptF64(rows.iter().map(|(_, _, r)| r.closed_at_s).collect()))
            .push("bytes_delivered", Col::U64(rows.iter().map(|(_, _, r)| r.bytes_delivered).collect()))
            .push("goodput_bps", Col::F64(rows.iter().map(|(_, _, r)| r.goodput_bps).collect()))
            .push("retransmits", Col::U64(rows.iter().map(|(_, _, r)| r.retransmits).collect()))
            .push("rpcs", Col::U64(rows.iter().map(|(_, _, r)| r.rpcs).collect()));
        c.finish()
    }
}

#[pymethods]
impl RunOutput {
    /// One part of the result as an Arrow table: flows, links, counters,
    /// flow_counters, trace, queue_trace, rpc or flow_runs.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<Table> {
        if matches!(name, "trace" | "queue_trace") && !self.traced {
            return Err(crate::error::to_py(tcplab_lab::Error::at(
                "trace",
                "this run kept no traces: run it with trace=True",
            )));
        }
        py.allow_threads(|| {
            Ok(match name {
                "flows" => self.flows(),
                "links" => self.links(),
                "counters" => self.counters(),
                "flow_counters" => self.flow_counters(),
                "trace" => trace_table(&FlowTrace::all(&self.result)),
                "queue_trace" => self.queue_trace(),
                "rpc" => self.rpc(),
                "flow_runs" => self.flow_runs(),
                _ => return Err(unknown(name, RUN_TABLES)),
            })
        })
    }

    /// The tables `table` knows.
    #[staticmethod]
    fn table_names() -> Vec<&'static str> {
        RUN_TABLES.to_vec()
    }

    /// `tcplab run --json`: one line of JSON.
    fn to_json(&self) -> String {
        self.report.to_json()
    }

    /// `tcplab run`'s table for people.
    fn text(&self) -> String {
        self.report.to_table()
    }

    #[getter]
    fn scenario(&self) -> &str {
        &self.report.scenario
    }
    #[getter]
    fn description(&self) -> Option<&str> {
        self.report.description.as_deref()
    }
    #[getter]
    fn backend(&self) -> &str {
        &self.report.backend
    }
    #[getter]
    fn seed(&self) -> u64 {
        self.report.seed
    }
    #[getter]
    fn sim_time_s(&self) -> f64 {
        self.report.sim_time_s
    }
    #[getter]
    fn events(&self) -> u64 {
        self.report.events
    }
    #[getter]
    fn wall_s(&self) -> f64 {
        self.report.wall_s
    }
    #[getter]
    fn traced(&self) -> bool {
        self.traced
    }
    #[getter]
    fn flow_count(&self) -> usize {
        self.report.flows.len()
    }
    #[getter]
    fn link_count(&self) -> usize {
        self.report.links.len()
    }
    /// (window seconds, Jain's index or None) when the scenario sets
    /// `run.goodput_window`.
    #[getter]
    fn fairness(&self) -> Option<(f64, Option<f64>)> {
        self.report.fairness.as_ref().map(|f| (f.window_s, f.jain_index))
    }
}

// ---- comparisons -----------------------------------------------------------

/// `n, min, median, mean, max, ci95_lo, ci95_hi, low_runs, high_runs, gap`
/// columns of summaries (None: no runs).
fn summary_columns(c: &mut Columns, s: &[Option<&Summary>]) {
    let g = |f: fn(&Summary) -> f64| Col::OptF64(s.iter().map(|x| x.map(f)).collect());
    c.push("n", Col::U64(s.iter().map(|x| x.map_or(0, |x| x.n as u64)).collect()))
        .push("min", g(|x| x.min))
        .push("median", g(|x| x.median))
        .push("mean", g(|x| x.mean))
        .push("max", g(|x| x.max))
        .push("ci95_lo", g(|x| x.ci95[0]))
        .push("ci95_hi", g(|x| x.ci95[1]))
        .push(
            "low_runs",
            Col::OptU64(s.iter().map(|x| x.and_then(|x| x.groups.as_ref()).map(|g| g.low.runs as u64)).collect()),
        )
        .push(
            "high_runs",
            Col::OptU64(s.iter().map(|x| x.and_then(|x| x.groups.as_ref()).map(|g| g.high.runs as u64)).collect()),
        )
        .push("gap", Col::OptF64(s.iter().map(|x| x.and_then(|x| x.groups.as_ref()).map(|g| g.gap)).collect()));
}

/// Every run: arm, backend, seed, then one column per metric.
fn comparison_runs(cmp: &Comparison) -> Table {
    let rows: Vec<(usize, &tcplab_lab::batch::RunRecord)> =
        cmp.arms.iter().enumerate().flat_map(|(i, a)| a.runs.iter().map(move |r| (i, r))).collect();
    let mut c = Columns::new();
    c.push(
        "arm",
        Col::Dict {
            keys: rows.iter().map(|(i, _)| *i as i32).collect(),
            values: cmp.arms.iter().map(|a| a.name.clone()).collect(),
        },
    )
    .push("backend", Col::Str(rows.iter().map(|(i, _)| cmp.arms[*i].backend.clone()).collect()))
    .push("seed", Col::U64(rows.iter().map(|(_, r)| r.seed).collect()))
    .push("sim_s", Col::F64(rows.iter().map(|(_, r)| r.sim_s).collect()));
    for (m, metric) in cmp.metrics.iter().enumerate() {
        c.push(metric.name.clone(), Col::F64(rows.iter().map(|(_, r)| r.values[m]).collect()));
    }
    c.finish()
}

/// One row per arm and metric.
fn comparison_summary(cmp: &Comparison) -> Table {
    let mut arm = Vec::new();
    let mut backend = Vec::new();
    let mut metric = Vec::new();
    let mut unit = Vec::new();
    let mut sums = Vec::new();
    for (ai, a) in cmp.arms.iter().enumerate() {
        for (mi, m) in cmp.metrics.iter().enumerate() {
            arm.push(ai as i32);
            backend.push(a.backend.clone());
            metric.push(m.name.clone());
            unit.push(m.unit().json.to_string());
            sums.push(a.summary.get(mi).and_then(Option::as_ref));
        }
    }
    let mut c = Columns::new();
    c.push("arm", Col::Dict { keys: arm, values: cmp.arms.iter().map(|a| a.name.clone()).collect() })
        .push("backend", Col::Str(backend))
        .push("metric", Col::Str(metric))
        .push("unit", Col::Str(unit));
    summary_columns(&mut c, &sums);
    c.finish()
}

/// The metrics: name, unit, description, and the ratio of the second
/// arm's median to the first's.
fn comparison_metrics(cmp: &Comparison) -> Table {
    let m = &cmp.metrics;
    let mut c = Columns::new();
    c.push("metric", Col::Str(m.iter().map(|x| x.name.clone()).collect()))
        .push("unit", Col::Str(m.iter().map(|x| x.unit().json.to_string()).collect()))
        .push("display_unit", Col::Str(m.iter().map(|x| x.unit().display.to_string()).collect()))
        .push("display_scale", Col::F64(m.iter().map(|x| x.unit().scale).collect()))
        .push("description", Col::Str(m.iter().map(|x| x.describe()).collect()))
        .push("ratio_of_medians", Col::OptF64((0..m.len()).map(|i| cmp.ratio_of_medians(i)).collect()));
    c.finish()
}

/// The first run's traces of arm `arm` (kept with keep_traces=True).
fn comparison_trace(cmp: &Comparison, arm: &str) -> PyResult<Table> {
    let a = cmp.arms.iter().find(|a| a.name == arm).ok_or_else(|| {
        let names: Vec<&str> = cmp.arms.iter().map(|a| a.name.as_str()).collect();
        PyKeyError::new_err(format!("no arm {arm:?} (arms: {})", names.join(", ")))
    })?;
    match a.runs.first().filter(|r| !r.traces.is_empty()) {
        Some(r) => Ok(trace_table(&r.traces)),
        None => Err(crate::error::to_py(tcplab_lab::Error::at(
            "trace",
            "no traces kept: give keep_traces=True to keep each arm's first run's traces (seed 1)",
        ))),
    }
}

fn comparison_table(cmp: &Comparison, name: &str, known: &[&str]) -> PyResult<Table> {
    Ok(match name {
        "runs" => comparison_runs(cmp),
        "summary" => comparison_summary(cmp),
        "metrics" => comparison_metrics(cmp),
        _ => return Err(unknown(name, known)),
    })
}

const COMPARE_TABLES: &[&str] = &["runs", "summary", "metrics"];

/// The result of `tcplab.compare`.
#[pyclass(module = "tcplab._native", name = "ComparisonOutput", frozen)]
pub struct ComparisonOutput {
    pub cmp: Comparison,
    pub complete: bool,
}

/// Properties and tables every comparison-shaped result has.
macro_rules! comparison_methods {
    ($t:ty, $cmp:ident, { $($extra:tt)* }) => {
        #[pymethods]
        impl $t {
            $($extra)*

            /// Every run (arm, backend, seed, sim_s, one column per metric),
            /// the summary (arm x metric: n, min, median, mean, max, the 95 %
            /// CI of the median, two groups), or the metrics (unit, description,
            /// ratio of medians).
            fn comparison_table(&self, py: Python<'_>, name: &str) -> PyResult<Table> {
                let c = &self.$cmp();
                py.allow_threads(|| comparison_table(c, name, COMPARE_TABLES))
            }

            /// Arm `arm`'s first run's traces (seed 1), kept with keep_traces=True.
            fn trace(&self, py: Python<'_>, arm: &str) -> PyResult<Table> {
                let c = &self.$cmp();
                py.allow_threads(|| comparison_trace(c, arm))
            }

            /// The arms' names, in order.
            #[getter]
            fn arms(&self) -> Vec<String> {
                self.$cmp().arms.iter().map(|a| a.name.clone()).collect()
            }

            /// The metrics' names, in order.
            #[getter]
            fn metrics(&self) -> Vec<String> {
                self.$cmp().metrics.iter().map(|m| m.name.clone()).collect()
            }

            /// The arms' settings as (name, backend, ["KEY=VALUE", ...]).
            #[getter]
            fn arm_settings(&self) -> Vec<(String, String, Vec<String>)> {
                self.$cmp()
                    .arms
                    .iter()
                    .map(|a| (a.name.clone(), a.backend.clone(), a.settings.iter().map(|s| s.text()).collect()))
                    .collect()
            }

            /// Runs per arm asked for (seeds 1..=runs).
            #[getter]
            fn runs(&self) -> u32 {
                self.$cmp().runs
            }

            /// Runs that finished (less than arms x runs when interrupted).
            #[getter]
            fn finished_runs(&self) -> usize {
                self.$cmp().arms.iter().map(|a| a.runs.len()).sum()
            }

            /// Whether every run finished (False: the batch was interrupted).
            #[getter]
            fn complete(&self) -> bool {
                self.complete
            }

            #[getter]
            fn scenario(&self) -> String {
                self.$cmp().scenario.clone()
            }

            #[getter]
            fn wall_s(&self) -> f64 {
                self.$cmp().wall_s
            }

            /// Notes a person should not miss (runs in two groups, identical runs).
            fn notes(&self) -> Vec<String> {
                self.$cmp().notes()
            }
        }
    };
}

impl ComparisonOutput {
    fn comparison(&self) -> &Comparison {
        &self.cmp
    }
}
comparison_methods!(ComparisonOutput, comparison, {
    /// `tcplab compare --json`.
    fn to_json(&self) -> String {
        self.cmp.to_json()
    }

    /// `tcplab compare`'s report for people.
    fn text(&self) -> String {
        self.cmp.to_table()
    }
});

// ---- diff ------------------------------------------------------------------

/// The result of `tcplab.diff`.
#[pyclass(module = "tcplab._native", name = "DiffOutput", frozen)]
pub struct DiffOutput {
    pub diff: Diff,
    pub complete: bool,
}

impl DiffOutput {
    fn comparison(&self) -> &Comparison {
        &self.diff.comparison
    }
}
comparison_methods!(DiffOutput, comparison, {
    /// One row per metric: each backend's median, 95 % CI and range, the
    /// kernel's median relative to the model's, and whether they overlap.
    fn rows(&self, py: Python<'_>) -> Table {
        py.allow_threads(|| {
            let rows = self.diff.rows();
            let mut c = Columns::new();
            c.push("metric", Col::Str(rows.iter().map(|r| r.metric.clone()).collect()))
                .push("unit", Col::Str(rows.iter().map(|r| r.unit.clone()).collect()));
            for side in ["model", "linux"] {
                let s: Vec<Option<Summary>> =
                    rows.iter().map(|r| if side == "model" { r.model.clone() } else { r.linux.clone() }).collect();
                let f = |g: fn(&Summary) -> f64| Col::OptF64(s.iter().map(|x| x.as_ref().map(g)).collect());
                c.push(format!("{side}_n"), Col::U64(s.iter().map(|x| x.as_ref().map_or(0, |x| x.n as u64)).collect()))
                    .push(format!("{side}_median"), f(|x| x.median))
                    .push(format!("{side}_ci95_lo"), f(|x| x.ci95[0]))
                    .push(format!("{side}_ci95_hi"), f(|x| x.ci95[1]))
                    .push(format!("{side}_min"), f(|x| x.min))
                    .push(format!("{side}_max"), f(|x| x.max));
            }
            c.push("relative_difference", Col::OptF64(rows.iter().map(|r| r.relative_difference).collect()))
                .push("ci_overlap", Col::Bool(rows.iter().map(|r| r.ci_overlap).collect()))
                .push("range_overlap", Col::Bool(rows.iter().map(|r| r.range_overlap).collect()));
            c.finish()
        })
    }

    /// What the model's side ran with besides the common settings.
    #[getter]
    fn model_settings(&self) -> Vec<String> {
        self.diff.model_settings.clone()
    }

    /// `tcplab diff --json`.
    fn to_json(&self) -> String {
        self.diff.to_json()
    }

    /// `tcplab diff`'s table for people.
    fn text(&self) -> String {
        self.diff.to_table()
    }
});

// ---- reproductions ---------------------------------------------------------

/// One experiment of `tcplab.reproduce`.
#[pyclass(module = "tcplab._native", name = "ReproductionOutput", frozen)]
pub struct ReproductionOutput {
    pub rep: Reproduction<'static>,
    pub complete: bool,
}

impl ReproductionOutput {
    fn comparison(&self) -> &Comparison {
        &self.rep.comparison
    }
}
comparison_methods!(ReproductionOutput, comparison, {
    /// The experiment's name (`tcplab reproduce NAME`).
    #[getter]
    fn name(&self) -> &'static str {
        self.rep.experiment.name
    }
    /// The patch's subject line.
    #[getter]
    fn title(&self) -> &'static str {
        self.rep.experiment.title
    }
    /// Where the patch is.
    #[getter]
    fn source(&self) -> &'static str {
        self.rep.experiment.source
    }
    /// What the patch changed and what the experiment shows.
    #[getter]
    fn summary(&self) -> &'static str {
        self.rep.experiment.summary
    }
    /// The patch's own table, verbatim.
    #[getter]
    fn quote(&self) -> &'static str {
        self.rep.experiment.reference.quote
    }
    /// Every check passed.
    #[getter]
    fn passed(&self) -> bool {
        self.rep.passed()
    }
    /// The kernel whose figures stand beside the model's, if any.
    #[getter]
    fn linux(&self) -> Option<String> {
        self.rep.linux.as_ref().map(|k| format!("{} ({})", k.kernel, k.source))
    }

    /// The checks: description, value, ok.
    fn checks(&self) -> Table {
        let ch = self.rep.checks();
        let mut c = Columns::new();
        c.push("check", Col::Str(ch.iter().map(|x| x.description.clone()).collect()))
            .push("value", Col::OptF64(ch.iter().map(|x| x.value).collect()))
            .push("ok", Col::Bool(ch.iter().map(|x| x.ok).collect()));
        c.finish()
    }

    /// The patch's numbers: arm, metric, statistic (runs, median, total),
    /// the patch's value (for runs: their median), its runs, and tcplab's
    /// median of the arm set against it (JSON units).
    fn reference(&self) -> Table {
        let e = self.rep.experiment;
        let cmp = &self.rep.comparison;
        let vals = e.reference.values;
        let mut ours = Vec::new();
        let mut patch = Vec::new();
        let mut stat = Vec::new();
        let mut runs = Vec::new();
        for v in vals {
            let mi = cmp.metrics.iter().position(|m| m.name == v.metric);
            let scale = mi.map_or(1.0, |i| cmp.metrics[i].unit().scale);
            let arm = cmp.arms.iter().find(|a| {
                a.name == v.arm
                    || e.arms
                        .iter()
                        .chain(e.kernel.as_ref().map_or(&[][..], |k| k.arms))
                        .any(|x| x.name == a.name && x.reference == Some(v.arm))
            });
            ours.push(mi.and_then(|i| arm?.median(i)));
            let (s, p, r): (&str, f64, Option<String>) = match v.stat {
                RefStat::Runs(xs) => {
                    let mut sorted = xs.to_vec();
                    sorted.sort_by(f64::total_cmp);
                    let shown: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
                    ("median of runs", tcplab_lab::stats::median_sorted(&sorted), Some(shown.join(" ")))
                }
                RefStat::Median(x) => ("value", x, None),
                RefStat::Total(x) => ("total", x, None),
            };
            stat.push(s.to_string());
            // The patch's numbers are in display units; the table's are JSON units.
            patch.push(p * scale);
            runs.push(r);
        }
        let mut c = Columns::new();
        c.push("arm", Col::Str(vals.iter().map(|v| v.arm.to_string()).collect()))
            .push("metric", Col::Str(vals.iter().map(|v| v.metric.to_string()).collect()))
            .push("statistic", Col::Str(stat))
            .push("patch", Col::F64(patch))
            .push("patch_runs", Col::OptStr(runs))
            .push("tcplab_median", Col::OptF64(ours));
        c.finish()
    }

    /// `tcplab reproduce NAME --json` (one line).
    fn to_json(&self) -> String {
        self.rep.to_json()
    }

    /// `tcplab reproduce NAME`'s report for people.
    fn text(&self) -> String {
        self.rep.to_table()
    }
});

// ---- sweeps ----------------------------------------------------------------

/// The result of `tcplab.sweep`.
#[pyclass(module = "tcplab._native", name = "SweepOutput", frozen)]
pub struct SweepOutput {
    pub sweep: SweepResult,
    pub complete: bool,
}

const SWEEP_TABLES: &[&str] = &["runs", "summary"];

#[pymethods]
impl SweepOutput {
    /// `runs`: a row per point and seed (the varied keys, seed, one column
    /// per metric); `summary`: a row per point and metric.
    fn table(&self, py: Python<'_>, name: &str) -> PyResult<Table> {
        let s = &self.sweep;
        py.allow_threads(|| {
            let mut c = Columns::new();
            match name {
                "runs" => {
                    let rows: Vec<_> = s.points.iter().flat_map(|p| p.runs.iter().map(move |r| (p, r))).collect();
                    for v in &s.vary {
                        c.push(
                            v.key.clone(),
                            Col::Str(
                                rows.iter().map(|(p, _)| p.settings.get(&v.key).cloned().unwrap_or_default()).collect(),
                            ),
                        );
                    }
                    c.push("seed", Col::U64(rows.iter().map(|(_, r)| r.seed).collect()));
                    for m in &s.metrics {
                        c.push(
                            m.name.clone(),
                            Col::OptF64(rows.iter().map(|(_, r)| r.metrics.get(&m.name).copied()).collect()),
                        );
                    }
                }
                "summary" => {
                    let rows: Vec<_> = s.points.iter().flat_map(|p| s.metrics.iter().map(move |m| (p, m))).collect();
                    for v in &s.vary {
                        c.push(
                            v.key.clone(),
                            Col::Str(
                                rows.iter().map(|(p, _)| p.settings.get(&v.key).cloned().unwrap_or_default()).collect(),
                            ),
                        );
                    }
                    c.push("metric", Col::Str(rows.iter().map(|(_, m)| m.name.clone()).collect()))
                        .push("unit", Col::Str(rows.iter().map(|(_, m)| m.unit.clone()).collect()));
                    let sums: Vec<Option<&Summary>> =
                        rows.iter().map(|(p, m)| p.summary.get(&m.name).and_then(Option::as_ref)).collect();
                    summary_columns(&mut c, &sums);
                }
                _ => return Err(unknown(name, SWEEP_TABLES)),
            }
            Ok(c.finish())
        })
    }

    /// The varied keys and their values, in order.
    #[getter]
    fn vary(&self) -> Vec<(String, Vec<String>)> {
        self.sweep.vary.iter().map(|v| (v.key.clone(), v.values.clone())).collect()
    }

    /// The metrics' names.
    #[getter]
    fn metrics(&self) -> Vec<String> {
        self.sweep.metrics.iter().map(|m| m.name.clone()).collect()
    }

    #[getter]
    fn points(&self) -> usize {
        self.sweep.points.len()
    }

    #[getter]
    fn runs(&self) -> u32 {
        self.sweep.runs_per_point
    }

    #[getter]
    fn finished_runs(&self) -> usize {
        self.sweep.points.iter().map(|p| p.runs.len()).sum()
    }

    #[getter]
    fn complete(&self) -> bool {
        self.complete
    }

    #[getter]
    fn scenario(&self) -> String {
        self.sweep.scenario.clone()
    }

    /// `tcplab sweep --json` (what `tcplab merge` reads).
    fn to_json(&self) -> String {
        self.sweep.to_json()
    }

    /// `tcplab sweep --csv`.
    fn to_csv(&self) -> String {
        self.sweep.to_csv()
    }

    /// `tcplab sweep`'s table for people.
    fn text(&self) -> String {
        self.sweep.to_table()
    }
}
