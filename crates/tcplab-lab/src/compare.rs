//! `tcplab compare`: arms (knob settings) of one scenario, each run on the
//! same seeds 1..=N, and the distribution of every metric per arm.
//!
//! # JSON wire format
//!
//! `tcplab compare --json` prints one object on one line. Objects that
//! are maps (`settings`, `metrics`, `summary`, `ratio_of_medians`) have
//! their keys sorted; everything else is in the order below. Two runs
//! with the same arguments print the same bytes except `wall_s`, whatever
//! `--jobs` is.
//!
//! ```text
//! {
//!   "scenario": "scenarios/two-flows.toml", "description": "..." | null,
//!   "tcplab_version": "0.1.0",
//!   "runs_per_arm": 10,                 // seeds 1..=10 in every arm
//!   "set": {"run.duration": "30s"},     // --set, applied to every arm first
//!   "metrics": {"goodput": {"unit": "bit/s", "description": "goodput of all flows"}},
//!   "arms": [{
//!     "name": "reno",
//!     "settings": {"flow.*.cc": "reno"},  // --a / --b as given
//!     "runs": [{"seed": 1, "metrics": {"goodput": 94120000.0}}, ...],
//!     "summary": {"goodput": {"n": 10, "min": .., "median": .., "mean": .., "max": ..,
//!                             "ci95": [lo, hi],       // bootstrap CI of the median
//!                             "groups": null | {"low": {"runs", "min", "max"},
//!                                               "high": {...}, "gap": ..}}}
//!   }, ...],
//!   "ratio_of_medians": {"goodput": 1.02 | null},   // second arm / first arm
//!   "wall_s": 3.2                                    // not deterministic
//! }
//! ```
//!
//! Values are in the JSON unit of each metric (`bit/s`, `us`, `count`,
//! `index`; see [`crate::metrics`]). A ratio is null when the first arm's
//! median is zero.

use crate::batch::{self, Job, Progress, RunRecord};
use crate::error::{Error, Result};
use crate::journal::Journal;
use crate::metrics::{self, Metric};
use crate::overrides::{Layers, ScenarioText, Setting};
use crate::stats::{self, Summary};
use crate::VERSION;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// One arm: a name and the overrides that make it.
#[derive(Clone, Debug)]
pub struct ArmSpec {
    pub name: String,
    /// The flag the settings came from (`--a`), for error messages.
    pub flag: String,
    pub settings: Vec<Setting>,
    /// Where the arm's runs run (`tcplab diff` compares two backends).
    pub backend: crate::backend::Backend,
}

/// Everything `compare` needs.
#[derive(Clone, Debug)]
pub struct CompareSpec {
    pub scenario: ScenarioText,
    /// `--set`: applied to every arm before the arm's own settings.
    pub base: Vec<Setting>,
    pub arms: Vec<ArmSpec>,
    /// Seeds 1..=runs.
    pub runs: u32,
    /// Metric names (empty: goodput).
    pub metrics: Vec<String>,
    /// Worker threads.
    pub jobs: usize,
    /// For plots: keep the traces of each arm's first run (seed 1) and
    /// every run's RPC latencies.
    pub keep_first: bool,
    /// Most runs allowed (`--max-runs`; [`batch::DEFAULT_MAX_RUNS`]).
    pub max_runs: u64,
}

/// A spec whose scenarios and metrics have been checked: nothing has run.
#[derive(Clone, Debug)]
pub struct Prepared {
    spec: CompareSpec,
    scenarios: Vec<Arc<crate::Scenario>>,
    /// Each arm's scenario hash (journal identity).
    hashes: Vec<Arc<str>>,
    metrics: Arc<Vec<Metric>>,
}

/// One layer per `--set`, each named by its text, so that an error
/// blames the setting that caused it.
pub fn set_layers(base: &[Setting]) -> Layers {
    let mut l = Layers::new();
    for s in base {
        l.push(&format!("--set {}", s.text()), std::slice::from_ref(s));
    }
    l
}

/// The arm's layers: `--set`, then its own settings.
fn layers(base: &[Setting], arm: &ArmSpec) -> Layers {
    let mut l = set_layers(base);
    for s in &arm.settings {
        l.push(&format!("{} {}", arm.flag, s.text()), std::slice::from_ref(s));
    }
    l
}

/// Checks `--runs`.
pub fn check_runs(runs: u32) -> Result<()> {
    if runs == 0 {
        return Err(Error::at("--runs 0", "need at least one run per arm (seeds 1 to N)"));
    }
    Ok(())
}

/// Checks `--jobs`.
pub fn check_jobs(jobs: usize) -> Result<()> {
    if jobs == 0 {
        return Err(Error::at("--jobs 0", "need at least one worker thread"));
    }
    Ok(())
}

impl CompareSpec {
    /// Loads every arm's scenario and parses the metrics against it, so
    /// that an unknown knob or metric fails before anything runs.
    pub fn prepare(self) -> Result<Prepared> {
        check_runs(self.runs)?;
        check_jobs(self.jobs)?;
        let total = (self.arms.len() as u64).checked_mul(u64::from(self.runs));
        batch::check_total_runs(total, self.max_runs, &format!("{} arms x {} runs", self.arms.len(), self.runs))?;
        if self.arms.is_empty() {
            return Err(Error::msg("no arms to compare"));
        }
        for (i, a) in self.arms.iter().enumerate() {
            if a.name.trim().is_empty() {
                return Err(Error::at(&a.flag, "an arm name cannot be empty"));
            }
            if self.arms[..i].iter().any(|b| b.name == a.name) {
                return Err(Error::at(&a.flag, format!("two arms are named {:?}; give them different names", a.name)));
            }
        }
        let mut scenarios = Vec::new();
        let mut hashes = Vec::new();
        let mut metrics: Option<Vec<Metric>> = None;
        for arm in &self.arms {
            let l = layers(&self.base, arm);
            let sc = self.scenario.load(&l, None)?;
            let m = metrics::parse_all("--metric", &self.metrics, &sc)?;
            metrics.get_or_insert(m);
            scenarios.push(Arc::new(sc));
            hashes.push(Arc::from(self.scenario.hash(&l)?));
        }
        let metrics = Arc::new(metrics.unwrap_or_default());
        Ok(Prepared { spec: self, scenarios, hashes, metrics })
    }
}

impl Prepared {
    pub fn metrics(&self) -> &[Metric] {
        &self.metrics
    }

    /// Total runs.
    pub fn total_runs(&self) -> u64 {
        self.spec.arms.len() as u64 * u64::from(self.spec.runs)
    }

    /// The first run's scenario (for estimates).
    pub fn first_scenario(&self) -> &crate::Scenario {
        &self.scenarios[0]
    }

    /// Runs every arm on seeds 1..=runs.
    pub fn run(self, progress: &dyn Progress) -> Result<Comparison> {
        self.run_with(progress, None)
    }

    /// [`Prepared::run`], taking runs from and adding runs to `journal`.
    pub fn run_with(self, progress: &dyn Progress, journal: Option<&Journal>) -> Result<Comparison> {
        let started = std::time::Instant::now();
        let records = batch::run_all(&self.jobs(), self.spec.jobs, progress, journal)?;
        Ok(self.assemble(records.into_iter().map(Some), started))
    }

    /// [`Prepared::run_with`], keeping what an interruption leaves
    /// ([`batch::run_finished`]): the comparison of the runs that
    /// finished, and whether that is all of them.
    pub fn run_finished(self, progress: &dyn Progress, journal: Option<&Journal>) -> Result<(Comparison, bool)> {
        let started = std::time::Instant::now();
        let records = batch::run_finished(&self.jobs(), self.spec.jobs, progress, journal)?;
        let complete = records.iter().all(Option::is_some);
        Ok((self.assemble(records.into_iter(), started), complete))
    }

    /// Every arm on seeds 1..=runs, arm by arm.
    fn jobs(&self) -> Vec<Job> {
        let spec = &self.spec;
        let mut jobs = Vec::new();
        for ((sc, arm), hash) in self.scenarios.iter().zip(&spec.arms).zip(&self.hashes) {
            for seed in 1..=u64::from(spec.runs) {
                jobs.push(Job {
                    scenario: Arc::clone(sc),
                    scenario_hash: Arc::clone(hash),
                    metrics: Arc::clone(&self.metrics),
                    seed,
                    keep: spec.keep_first && seed == 1,
                    keep_rpc: spec.keep_first,
                    backend: arm.backend.clone(),
                });
            }
        }
        jobs
    }

    /// The comparison of [`Prepared::jobs`]' records, in job order (`None`:
    /// a run that did not finish, left out).
    fn assemble(self, records: impl Iterator<Item = Option<RunRecord>>, started: std::time::Instant) -> Comparison {
        let spec = &self.spec;
        let mut records = records;
        let arms = spec
            .arms
            .iter()
            .map(|a| {
                let runs: Vec<RunRecord> = records.by_ref().take(spec.runs as usize).flatten().collect();
                let summary = (0..self.metrics.len())
                    .map(|i| stats::summarize(&runs.iter().map(|r| r.values[i]).collect::<Vec<_>>()))
                    .collect();
                ArmResult {
                    name: a.name.clone(),
                    backend: a.backend.label(),
                    settings: a.settings.clone(),
                    runs,
                    summary,
                }
            })
            .collect();
        let first = &self.scenarios[0];
        Comparison {
            jitter_hint: jitter_hint(first),
            scenario: spec.scenario.name.clone(),
            description: first.description.clone(),
            runs: spec.runs,
            base: spec.base.clone(),
            metrics: (*self.metrics).clone(),
            arms,
            wall_s: started.elapsed().as_secs_f64(),
        }
    }
}

/// The result of `compare`.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub scenario: String,
    pub description: Option<String>,
    pub runs: u32,
    pub base: Vec<Setting>,
    pub metrics: Vec<Metric>,
    pub arms: Vec<ArmResult>,
    pub wall_s: f64,
    /// A `--set` that adds jitter to the scenario's slowest link, for the
    /// note on identical runs.
    pub jitter_hint: String,
}

/// `--set 'link.L.delay={ model = "ordered-jitter", ... }'` for the slowest
/// link of `sc` (ties: the first), keeping its mean delay: base 95 % of a
/// fixed delay, jitter 10 %.
fn jitter_hint(sc: &crate::Scenario) -> String {
    use tcplab_sim::config::DelayModel;
    let slowest = sc.sim.links.iter().min_by_key(|l| l.rate_bps);
    let (name, d) = match slowest {
        Some(l) => match l.ab.delay {
            DelayModel::Fixed(d) if d.as_nanos() >= 20 => (l.name.as_str(), d.as_nanos()),
            _ => (l.name.as_str(), 10_000_000),
        },
        None => ("NAME", 10_000_000),
    };
    let ns = |n: u64| crate::units::format_time(tcplab_core::time::Duration::from_nanos(n));
    format!(
        "--set 'link.{name}.delay={{ model = \"ordered-jitter\", base = \"{}\", jitter = \"{}\" }}'",
        ns(d - d / 20),
        ns(d / 10)
    )
}

#[derive(Clone, Debug)]
pub struct ArmResult {
    pub name: String,
    /// `model` or the kernel that ran the arm.
    pub backend: String,
    pub settings: Vec<Setting>,
    /// In seed order.
    pub runs: Vec<RunRecord>,
    /// Per metric (None: no runs).
    pub summary: Vec<Option<Summary>>,
}

impl ArmResult {
    /// Values of metric `i`, in seed order.
    pub fn values(&self, i: usize) -> Vec<f64> {
        self.runs.iter().map(|r| r.values[i]).collect()
    }

    pub fn median(&self, i: usize) -> Option<f64> {
        self.summary.get(i)?.as_ref().map(|s| s.median)
    }
}

// ---- JSON ------------------------------------------------------------------

#[derive(Serialize)]
pub struct JsonComparison<'a> {
    pub scenario: &'a str,
    pub description: Option<&'a str>,
    pub tcplab_version: &'static str,
    pub runs_per_arm: u32,
    pub set: BTreeMap<&'a str, &'a str>,
    pub metrics: BTreeMap<&'a str, JsonMetric>,
    pub arms: Vec<JsonArm<'a>>,
    pub ratio_of_medians: BTreeMap<&'a str, Option<f64>>,
    pub wall_s: f64,
}

#[derive(Serialize)]
pub struct JsonMetric {
    pub unit: &'static str,
    pub description: String,
}

#[derive(Serialize)]
pub struct JsonArm<'a> {
    pub name: &'a str,
    pub backend: &'a str,
    pub settings: BTreeMap<&'a str, &'a str>,
    pub runs: Vec<JsonRun<'a>>,
    pub summary: BTreeMap<&'a str, Option<&'a Summary>>,
}

#[derive(Serialize)]
pub struct JsonRun<'a> {
    pub seed: u64,
    pub metrics: BTreeMap<&'a str, f64>,
}

fn settings_map(s: &[Setting]) -> BTreeMap<&str, &str> {
    s.iter().map(|s| (s.key.as_str(), s.value.as_str())).collect()
}

impl Comparison {
    /// Ratio of the medians of metric `i`: second arm over first. None with
    /// fewer than two arms or a zero first median.
    pub fn ratio_of_medians(&self, i: usize) -> Option<f64> {
        let a = self.arms.first()?.median(i)?;
        let b = self.arms.get(1)?.median(i)?;
        (a != 0.0 && a.is_finite() && b.is_finite()).then(|| b / a)
    }

    /// The serializable view (see the module docs).
    pub fn json(&self) -> JsonComparison<'_> {
        let names: Vec<&str> = self.metrics.iter().map(|m| m.name.as_str()).collect();
        JsonComparison {
            scenario: &self.scenario,
            description: self.description.as_deref(),
            tcplab_version: VERSION,
            runs_per_arm: self.runs,
            set: settings_map(&self.base),
            metrics: self
                .metrics
                .iter()
                .map(|m| (m.name.as_str(), JsonMetric { unit: m.unit().json, description: m.describe() }))
                .collect(),
            arms: self
                .arms
                .iter()
                .map(|a| JsonArm {
                    name: &a.name,
                    backend: &a.backend,
                    settings: settings_map(&a.settings),
                    runs: a
                        .runs
                        .iter()
                        .map(|r| JsonRun {
                            seed: r.seed,
                            metrics: names.iter().copied().zip(r.values.iter().copied()).collect(),
                        })
                        .collect(),
                    summary: names.iter().copied().zip(a.summary.iter().map(Option::as_ref)).collect(),
                })
                .collect(),
            ratio_of_medians: names.iter().enumerate().map(|(i, n)| (*n, self.ratio_of_medians(i))).collect(),
            wall_s: self.wall_s,
        }
    }

    /// One line of JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string(&self.json()).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    /// Notes that a person should not miss: runs in two groups, runs
    /// that are all identical.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for (i, m) in self.metrics.iter().enumerate() {
            let u = m.unit();
            for a in &self.arms {
                if let Some(g) = a.summary[i].as_ref().and_then(|s| s.groups.as_ref()) {
                    notes.push(format!(
                        "{} of {:?} splits into two groups: {} runs in {}..{} and {} runs in {}..{} {} \
                         (a mean or a median alone hides this)",
                        m.name,
                        a.name,
                        g.low.runs,
                        u.show(g.low.min),
                        u.show(g.low.max),
                        g.high.runs,
                        u.show(g.high.min),
                        u.show(g.high.max),
                        u.display
                    ));
                }
            }
        }
        let constant = self.runs > 1 && self.arms.iter().all(|a| a.summary.iter().flatten().all(|s| s.min == s.max));
        if constant {
            notes.push(format!(
                "every run of each arm gave the same values: nothing in {} is random (fixed delays), so the \
                 seed changes nothing; for seed-dependent runs add jitter, e.g. {} (docs/experiments.md)",
                self.scenario, self.jitter_hint
            ));
        }
        notes
    }

    /// The report for people.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "compare {}: {} run{} per arm (seeds 1 to {}), wall {:.1} s",
            self.scenario,
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            self.runs,
            self.wall_s
        );
        if let Some(d) = &self.description {
            let _ = writeln!(s, "{d}");
        }
        if !self.base.is_empty() {
            let _ = writeln!(s, "  every arm: {}", join_settings(&self.base));
        }
        let w = self.arms.iter().map(|a| a.name.chars().count()).max().unwrap_or(0);
        for a in &self.arms {
            let set = if a.settings.is_empty() { "(scenario as is)".to_string() } else { join_settings(&a.settings) };
            let _ = writeln!(s, "  {:<w$}  {set}", a.name);
        }
        for (i, m) in self.metrics.iter().enumerate() {
            s.push('\n');
            s.push_str(&self.metric_table(i, m));
        }
        let notes = self.notes();
        if !notes.is_empty() {
            s.push('\n');
            for n in notes {
                let _ = writeln!(s, "note: {n}");
            }
        }
        s
    }

    fn metric_table(&self, i: usize, m: &Metric) -> String {
        let u = m.unit();
        let mut s = String::new();
        let _ = writeln!(s, "{} ({})", m.describe(), u.display);
        let all: Vec<f64> = self.arms.iter().flat_map(|a| a.values(i)).filter(|x| x.is_finite()).collect();
        let lo = all.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = all.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let strip_head =
            if all.is_empty() { "runs".to_string() } else { format!("runs from {} to {}", u.show(lo), u.show(hi)) };
        let head = ["arm", "n", "min", "median", "mean", "max", "95% CI of median", strip_head.as_str()];
        let rows: Vec<Vec<String>> = self
            .arms
            .iter()
            .map(|a| match &a.summary[i] {
                Some(x) => vec![
                    a.name.clone(),
                    x.n.to_string(),
                    u.show(x.min),
                    u.show(x.median),
                    u.show(x.mean),
                    u.show(x.max),
                    format!("[{}, {}]", u.show(x.ci95[0]), u.show(x.ci95[1])),
                    format!("|{}|", stats::strip(&a.values(i), lo, hi, STRIP_WIDTH)),
                ],
                None => vec![a.name.clone(), "0".into()],
            })
            .collect();
        table(&mut s, &head, &rows);
        if self.arms.len() >= 2 {
            let r = self.ratio_of_medians(i).map_or_else(|| "-".to_string(), |r| format!("{r:.4}"));
            let _ = writeln!(s, "ratio of medians {}/{}: {r}", self.arms[1].name, self.arms[0].name);
        }
        let _ = writeln!(s, "every run, by seed ({}):", u.display);
        let w = self.arms.iter().map(|a| a.name.chars().count()).max().unwrap_or(0);
        for a in &self.arms {
            let vals: Vec<String> = a.values(i).iter().map(|x| u.show(*x)).collect();
            for (k, chunk) in vals.chunks(RUNS_PER_LINE).enumerate() {
                let label = if k == 0 { a.name.as_str() } else { "" };
                let _ = writeln!(s, "  {label:<w$}  {}", chunk.join(" "));
            }
        }
        s
    }
}

/// Cells of the text strip.
pub const STRIP_WIDTH: usize = 30;
const RUNS_PER_LINE: usize = 10;

pub fn join_settings(s: &[Setting]) -> String {
    s.iter().map(Setting::text).collect::<Vec<_>>().join(", ")
}

/// Text columns: the first left-aligned, numbers (also with an exponent)
/// right-aligned.
pub fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    crate::report::text_table(out, head, rows, true);
}
