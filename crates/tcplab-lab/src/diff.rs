//! `tcplab diff`: one scenario on both backends, the model and the real
//! kernel, N seeds each, metric by metric.
//!
//! It is a [`compare`](crate::compare) whose two arms differ in backend
//! only, printed as a faithfulness table: each backend's median with its
//! 95 % confidence interval, the kernel's median relative to the model's,
//! and whether the two intervals overlap. The kernel's runs are not
//! repeatable bit for bit (netem and the kernel draw fresh randomness each
//! boot), so distributions are compared, never single runs.
//!
//! The model's side runs with the kernel backend's receive path
//! ([`KERNEL_RECEIVE_PATH`]) unless the user sets `rcv_truesize`: the
//! guest's veths have no GRO, so each segment is an skb of its own, and the
//! receive memory it is charged (`truesize`) sets the window's growth, how
//! often a slow-starting receiver ACKs every segment (`tcp_grow_window`
//! grants a quick ACK whenever the window grows) and with it the slow-start
//! rounds, HyStart's exit and every drop-tail phase after it
//! (docs/linux-differences.md).

use crate::backend::Backend;
use crate::batch::{FlowTrace, Progress};
use crate::compare::{ArmSpec, CompareSpec, Comparison};
use crate::error::Result;
use crate::overrides::{ScenarioText, Setting};
use crate::plot::{self, Chart, Series};
use crate::stats::Summary;
use serde::Serialize;
use std::fmt::Write as _;

/// Metrics compared when none are given: goodput, the loss-recovery
/// counters, and RPC latencies or fairness when the scenario has them.
pub fn default_metrics(sc: &crate::Scenario) -> Vec<String> {
    let mut m = vec!["goodput".to_string()];
    if sc.sim.flows.len() > 1 {
        m.extend(sc.sim.flows.iter().map(|f| format!("goodput.{}", f.id)));
    }
    for c in [
        "TcpRetransSegs",
        "TcpExtTCPTimeouts",
        "TcpExtTCPLossProbes",
        "TcpExtTCPFastRetrans",
        "TcpExtTCPSACKReorder",
        "TcpExtTCPFullUndo",
        "TcpExtTCPPartialUndo",
        "TcpExtTCPDSACKUndo",
        "TcpExtTCPLossUndo",
    ] {
        m.push(c.to_string());
    }
    if sc.sim.flows.iter().any(|f| f.tcp.congestion_control.name() == "cubic") {
        m.push("hystart_exit_cwnd".into());
    }
    if sc.sim.flows.iter().any(crate::metrics::is_rpc_flow) {
        m.extend(["rpc.p50".to_string(), "rpc.p99".to_string()]);
    }
    if sc.goodput_window.is_some() && sc.sim.flows.len() > 1 {
        m.push("jain".into());
    }
    m
}

/// The kernel backend's receive path in the model's terms: one skb per
/// segment, as on a veth without GRO (`RcvTruesize::PerSegment`).
pub const KERNEL_RECEIVE_PATH: &str = "flow.*.tcp_receiver.rcv_truesize=per-segment";

/// The settings the model's side adds: [`KERNEL_RECEIVE_PATH`], unless
/// `base` already sets a receive path.
pub fn model_settings(base: &[Setting]) -> Vec<Setting> {
    if base.iter().any(|s| s.key.ends_with("rcv_truesize")) {
        return Vec::new();
    }
    vec![crate::overrides::parse_one("diff", KERNEL_RECEIVE_PATH).expect("KERNEL_RECEIVE_PATH is KEY=VALUE")]
}

/// What `diff` needs.
pub struct DiffSpec {
    pub scenario: ScenarioText,
    pub base: Vec<Setting>,
    pub runs: u32,
    /// Empty: [`default_metrics`].
    pub metrics: Vec<String>,
    pub jobs: usize,
    /// The model (with its `--max-wall`).
    pub model: Backend,
    pub linux: Backend,
    /// Keep seed 1's traces for plots.
    pub keep_first: bool,
}

/// The two backends' runs.
pub struct Diff {
    pub comparison: Comparison,
    /// What the model's side ran with besides the common settings
    /// ([`model_settings`]), as `KEY=VALUE`.
    pub model_settings: Vec<String>,
}

/// One metric's row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub metric: String,
    pub unit: String,
    pub model: Option<Summary>,
    pub linux: Option<Summary>,
    /// (linux median − model median) / |model median|; None when the
    /// model's median is 0.
    pub relative_difference: Option<f64>,
    /// Whether the two 95 % intervals of the median overlap.
    pub ci_overlap: bool,
    /// Whether the min–max ranges overlap.
    pub range_overlap: bool,
}

impl DiffSpec {
    pub fn run(self, progress: &dyn Progress) -> Result<Diff> {
        let (spec, model_settings) = self.compare_spec()?;
        Ok(Diff { comparison: spec.prepare()?.run(progress)?, model_settings })
    }

    /// The comparison a diff runs (arms `model` and `linux`), and what the
    /// model's side adds to the common settings ([`model_settings`]), as
    /// `KEY=VALUE`.
    pub fn compare_spec(self) -> Result<(CompareSpec, Vec<String>)> {
        let metrics = if self.metrics.is_empty() {
            let sc = self.scenario.load(&crate::compare::set_layers(&self.base), None)?;
            default_metrics(&sc)
        } else {
            self.metrics
        };
        let model_settings = model_settings(&self.base);
        let arm = |name: &str, settings: Vec<Setting>, backend: Backend| ArmSpec {
            name: name.to_string(),
            flag: format!("--backend {name}"),
            settings,
            backend,
        };
        let shown = model_settings.iter().map(Setting::text).collect();
        let spec = CompareSpec {
            scenario: self.scenario,
            base: self.base,
            arms: vec![arm("model", model_settings, self.model), arm("linux", Vec::new(), self.linux)],
            runs: self.runs,
            metrics,
            jobs: self.jobs,
            keep_first: self.keep_first,
            max_runs: crate::batch::DEFAULT_MAX_RUNS,
        };
        Ok((spec, shown))
    }
}

impl Diff {
    pub fn rows(&self) -> Vec<Row> {
        let c = &self.comparison;
        c.metrics
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let model = c.arms[0].summary[i].clone();
                let linux = c.arms.get(1).and_then(|a| a.summary[i].clone());
                let (rel, ci, range) = match (&model, &linux) {
                    (Some(a), Some(b)) => (
                        (a.median != 0.0).then(|| (b.median - a.median) / a.median.abs()),
                        a.ci95[0] <= b.ci95[1] && b.ci95[0] <= a.ci95[1],
                        a.min <= b.max && b.min <= a.max,
                    ),
                    _ => (None, false, false),
                };
                Row {
                    metric: m.name.clone(),
                    unit: m.unit().display.to_string(),
                    model,
                    linux,
                    relative_difference: rel,
                    ci_overlap: ci,
                    range_overlap: range,
                }
            })
            .collect()
    }

    /// The table for people.
    pub fn to_table(&self) -> String {
        let c = &self.comparison;
        let mut s = String::new();
        let _ = writeln!(s, "diff {}: model vs linux, {} runs each (seeds 1..{})", c.scenario, c.runs, c.runs);
        if !self.model_settings.is_empty() {
            let _ = writeln!(
                s,
                "model side also: {} (the kernel backend's receive path: veth without GRO)",
                self.model_settings.join(", ")
            );
        }
        let _ = writeln!(
            s,
            "{:<26} {:>28} {:>28} {:>9}  overlap",
            "metric", "model median [95% CI]", "linux median [95% CI]", "linux/model"
        );
        let metrics = &c.metrics;
        for (row, m) in self.rows().iter().zip(metrics) {
            let u = m.unit();
            let cell = |x: &Option<Summary>| match x {
                Some(x) => format!("{} [{}, {}]", u.show(x.median), u.show(x.ci95[0]), u.show(x.ci95[1])),
                None => "-".into(),
            };
            let rel = row.relative_difference.map_or("-".to_string(), |r| format!("{:+.1}%", r * 100.0));
            let overlap = match (row.ci_overlap, row.range_overlap) {
                (true, _) => "CI",
                (false, true) => "range",
                (false, false) => "no",
            };
            let name = format!("{} ({})", row.metric, row.unit);
            let _ = writeln!(s, "{name:<26} {:>28} {:>28} {rel:>9}  {overlap}", cell(&row.model), cell(&row.linux));
        }
        let _ = writeln!(s, "\noverlap: CI = the 95% intervals of the medians overlap; range = only the min-max ranges do; no = neither");
        s
    }

    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct J<'a> {
            scenario: &'a str,
            runs: u32,
            backends: [&'a str; 2],
            model_settings: &'a [String],
            rows: Vec<Row>,
        }
        let j = J {
            scenario: &self.comparison.scenario,
            runs: self.comparison.runs,
            backends: ["model", "linux"],
            model_settings: &self.model_settings,
            rows: self.rows(),
        };
        serde_json::to_string(&j).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    /// Per flow, both backends' cwnd of seed 1 on one figure, plus the
    /// comparison's distribution charts.
    pub fn charts(&self) -> Vec<(String, Chart)> {
        let c = &self.comparison;
        let first =
            |arm: usize| -> &[FlowTrace] { c.arms.get(arm).and_then(|a| a.runs.first()).map_or(&[], |r| &r.traces) };
        let (model, linux) = (first(0), first(1));
        let mut v: Vec<(String, Chart)> = model
            .iter()
            .map(|t| {
                let points = |tr: &FlowTrace| -> Vec<(f64, f64)> {
                    tr.rows.iter().map(|r| (r.time.as_secs_f64(), r.cwnd as f64)).collect()
                };
                let mut series = vec![Series { name: "model".into(), points: points(t) }];
                if let Some(k) = linux.iter().find(|k| k.id == t.id) {
                    series.push(Series { name: "linux".into(), points: points(k) });
                }
                (
                    format!("cwnd-{}", plot::file_stem(&t.id)),
                    Chart::Lines {
                        title: format!("flow {}: cwnd, model and linux (seed 1)", t.id),
                        x_desc: "time (s)".into(),
                        y_desc: "cwnd (segments)".into(),
                        series,
                    },
                )
            })
            .collect();
        v.extend(
            plot::compare_charts(c)
                .into_iter()
                .filter(|(stem, _)| stem.starts_with("dist-") || stem.starts_with("rpc-cdf-")),
        );
        v
    }
}
