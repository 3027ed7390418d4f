//! `tcplab reproduce`: named experiments, each a kernel patch's own
//! experiment with the patch's behaviour off and on, printed next to the
//! numbers the patch reported.
//!
//! An [`Experiment`] is plain data (see [`registry`]): a scenario file
//! compiled into the binary, the arms (knob settings), the metrics, the run
//! count, the patch's table verbatim and its numbers as [`RefValue`]s, and
//! optional [`Check`]s. Running one is a [`crate::compare`] of its arms;
//! the output adds the patch's table and a side-by-side table of the
//! patch's numbers and tcplab's, in the metric's display unit.
//!
//! # JSON (`reproduce --json`)
//!
//! One line per experiment: the `compare` JSON object (see
//! [`crate::compare`]) with three more keys, `"experiment"` (name, title,
//! source, summary, scenario), `"reference"` (the patch's quote and values)
//! and `"checks"` (each check's description, tcplab's value and whether it
//! passed).

pub mod kernel_column;
pub mod registry;

pub use kernel_column::KernelColumn;

use crate::backend::Backend;
use crate::batch::Progress;
use crate::compare::{ArmSpec, CompareSpec, Comparison, JsonComparison};
use crate::error::{Error, Result};
use crate::html::{esc, Page};
use crate::overrides::{parse_one, ScenarioText};
use crate::stats::Summary;
use serde::Serialize;
use std::fmt::Write as _;

pub use registry::REGISTRY;

/// A scenario file of `scenarios/`, compiled into the binary so that
/// `tcplab reproduce` runs from any directory.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ScenarioFile {
    /// Path relative to the repository root, as shown to users.
    pub path: &'static str,
    #[serde(skip)]
    pub text: &'static str,
}

/// `scenario_file!("two-flows.toml")`: the shipped scenario
/// `scenarios/two-flows.toml`, its text included at compile time.
#[macro_export]
macro_rules! scenario_file {
    ($name:literal) => {
        $crate::experiments::ScenarioFile {
            path: concat!("scenarios/", $name),
            text: include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/", $name)),
        }
    };
}

/// One arm of an experiment.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Arm {
    pub name: &'static str,
    /// `KEY=VALUE` overrides, as `--set` takes them.
    pub settings: &'static [&'static str],
    /// The arm of the patch's numbers this one is set against, when its
    /// name differs (a kernel arm "/16" against the patch's "v3.18 (/16)").
    pub reference: Option<&'static str>,
}

impl Arm {
    /// An arm compared with the patch's arm of the same name.
    pub const fn new(name: &'static str, settings: &'static [&'static str]) -> Arm {
        Arm { name, settings, reference: None }
    }
}

/// How an experiment runs on the real kernel (`--backend linux`): Linux
/// 6.12 with the patch's behaviour switched off and on by tcplab's kernel
/// switches (kernel/patches), since the model's era presets have no
/// kernel counterpart.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct KernelVariant {
    /// What differs from the model's set-up, and why.
    pub note: &'static str,
    /// Overrides applied to every arm first (after the experiment's).
    pub set: &'static [&'static str],
    pub arms: &'static [Arm],
    /// Runs per arm unless `--runs` says otherwise.
    pub runs: u32,
}

/// A patch's number, in the metric's display unit (Mbit/s for goodput,
/// µs for RPC latency, a count for counters).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct RefValue {
    /// The arm it belongs to.
    pub arm: &'static str,
    /// The metric name (one of the experiment's metrics).
    pub metric: &'static str,
    #[serde(flatten)]
    pub stat: RefStat,
}

/// What kind of number the patch reported.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(tag = "stat", content = "value", rename_all = "snake_case")]
pub enum RefStat {
    /// One value per run, in the patch's order (the patch ran the test
    /// that many times). Shown run by run next to tcplab's runs, and
    /// median against median.
    Runs(&'static [f64]),
    /// One number for the whole test (a table cell), compared with
    /// tcplab's median.
    Median(f64),
    /// A total over all runs (nstat read around the whole loop), compared
    /// with the sum over tcplab's runs.
    Total(f64),
}

/// An assertion on tcplab's result; a failed check makes `reproduce
/// --strict` exit with status 1.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(tag = "check", rename_all = "snake_case")]
pub enum Check {
    /// `num / den` of `metric` lies in `[min, max]`: a statistic of one
    /// arm's runs over a statistic of another's (or of the same arm's:
    /// the minimum over the median says the runs are steady).
    Ratio { metric: &'static str, num: ArmStat, den: ArmStat, min: f64, max: f64 },
}

/// One side of a [`Check::Ratio`]: a statistic over an arm's runs, in
/// the model's arm and in the kernel arm that measures the same thing.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct ArmStat {
    pub stat: Stat,
    pub arm: &'static str,
    /// The kernel set-up's arm, for the check's value on the kernel.
    pub kernel_arm: &'static str,
}

impl ArmStat {
    pub const fn median(arm: &'static str, kernel_arm: &'static str) -> ArmStat {
        ArmStat { stat: Stat::Median, arm, kernel_arm }
    }
    pub const fn min(arm: &'static str, kernel_arm: &'static str) -> ArmStat {
        ArmStat { stat: Stat::Min, arm, kernel_arm }
    }
}

/// The statistic of a check's side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stat {
    Median,
    /// The worst run of a throughput (a bimodal arm's low mode).
    Min,
}

impl Stat {
    pub fn of(self, s: &Summary) -> f64 {
        match self {
            Stat::Median => s.median,
            Stat::Min => s.min,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Stat::Median => "median",
            Stat::Min => "min",
        }
    }
}

impl Check {
    /// How the check reads, with the arms of one backend (`kernel`).
    fn describe(&self, kernel: bool) -> String {
        let Check::Ratio { metric, num, den, .. } = self;
        let arm = |s: &ArmStat| if kernel { s.kernel_arm } else { s.arm };
        format!("{} of {} / {} of {} of {metric}", num.stat.name(), arm(num), den.stat.name(), arm(den))
    }

    /// The ratio, from each arm's summary of the check's metric; `None`
    /// when an arm or its figure is missing or the denominator is 0.
    fn value<'s>(&self, kernel: bool, summary: impl Fn(&str) -> Option<&'s Summary>) -> Option<f64> {
        let Check::Ratio { num, den, .. } = self;
        let side = |s: &ArmStat| summary(if kernel { s.kernel_arm } else { s.arm }).map(|x| s.stat.of(x));
        let (n, d) = (side(num)?, side(den)?);
        (d != 0.0 && n.is_finite() && d.is_finite()).then(|| n / d)
    }
}

/// The patch's numbers.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Reference {
    /// The patch's table (or sentence), verbatim from its commit message.
    pub quote: &'static str,
    pub values: &'static [RefValue],
}

/// A named experiment.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Experiment {
    /// `tcplab reproduce NAME`.
    pub name: &'static str,
    /// The patch's subject line.
    pub title: &'static str,
    /// Where the patch is (commit id, list archive, seed file).
    pub source: &'static str,
    /// What the patch changed and what the experiment shows.
    pub summary: &'static str,
    pub scenario: ScenarioFile,
    /// Overrides applied to every arm first.
    pub set: &'static [&'static str],
    /// The arms, patch off first.
    pub arms: &'static [Arm],
    pub metrics: &'static [&'static str],
    /// Runs per arm (seeds 1..=runs) unless `--runs` says otherwise.
    pub runs: u32,
    /// The kernel backend's version of the experiment.
    pub kernel: Option<KernelVariant>,
    #[serde(skip)]
    pub reference: Reference,
    #[serde(skip)]
    pub checks: &'static [Check],
}

/// Picks experiments by name, or all of them for `"all"`.
pub fn select<'r>(registry: &'r [Experiment], which: &str) -> Result<Vec<&'r Experiment>> {
    if which == "all" {
        return Ok(registry.iter().collect());
    }
    match registry.iter().find(|e| e.name == which) {
        Some(e) => Ok(vec![e]),
        None if registry.is_empty() => Err(Error::at(
            format!("reproduce {which}"),
            "no experiments are registered yet (see docs/experiments.md for how to add one)",
        )),
        None => {
            let names: Vec<&str> = registry.iter().map(|e| e.name).collect();
            Err(Error::at(
                format!("reproduce {which}"),
                format!("no experiment named {which:?} (known: all, {})", names.join(", ")),
            ))
        }
    }
}

/// Options of a reproduction.
#[derive(Clone, Debug)]
pub struct Options {
    /// Overrides [`Experiment::runs`].
    pub runs: Option<u32>,
    pub jobs: usize,
    /// Keep the first run's traces (for plots and reports).
    pub keep_first: bool,
    /// Where the runs run.
    pub backend: crate::backend::Backend,
}

impl Experiment {
    /// The comparison this experiment is.
    pub fn compare_spec(&self, opts: &Options) -> Result<CompareSpec> {
        self.spec_for(matches!(opts.backend, Backend::Linux(_)), opts)
    }

    /// The comparison with the model's arms, or the kernel's.
    fn spec_for(&self, kernel: bool, opts: &Options) -> Result<CompareSpec> {
        let loc = format!("experiment {}", self.name);
        let parse = |s: &&str| parse_one(&loc, s);
        let (set, arms, runs): (Vec<&str>, &[Arm], u32) = match (kernel, &self.kernel) {
            (false, _) => (self.set.to_vec(), self.arms, self.runs),
            (true, Some(k)) => (self.set.iter().chain(k.set).copied().collect(), k.arms, k.runs),
            (true, None) => {
                return Err(Error::at(loc, "this experiment has no kernel set-up yet: run it on the model backend"))
            }
        };
        Ok(CompareSpec {
            scenario: ScenarioText { name: self.scenario.path.to_string(), text: self.scenario.text.to_string() },
            base: set.iter().map(parse).collect::<Result<_>>()?,
            arms: arms
                .iter()
                .map(|a| {
                    Ok(ArmSpec {
                        name: a.name.to_string(),
                        flag: format!("{loc} arm {}", a.name),
                        settings: a.settings.iter().map(parse).collect::<Result<_>>()?,
                        backend: opts.backend.clone(),
                    })
                })
                .collect::<Result<_>>()?,
            runs: opts.runs.unwrap_or(runs),
            metrics: self.metrics.iter().map(|m| m.to_string()).collect(),
            jobs: opts.jobs,
            keep_first: opts.keep_first,
            max_runs: crate::batch::DEFAULT_MAX_RUNS,
        })
    }

    /// Checks that the entry is consistent: arms, reference values and
    /// checks name arms and metrics of the experiment; the scenario and
    /// every arm load (done by preparing the comparison).
    pub fn validate(&self) -> Result<()> {
        let loc = format!("experiment {}", self.name);
        if self.arms.len() < 2 {
            return Err(Error::at(loc, "needs at least two arms (patch off, patch on)"));
        }
        for v in self.reference.values {
            if !self.arms.iter().any(|a| a.name == v.arm) {
                return Err(Error::at(loc, format!("reference value for unknown arm {:?}", v.arm)));
            }
            if !self.metrics.contains(&v.metric) {
                return Err(Error::at(loc, format!("reference value for metric {:?}, not in metrics", v.metric)));
            }
        }
        let kernel_arms = self.kernel.as_ref().map_or(&[][..], |k| k.arms);
        for c in self.checks {
            let Check::Ratio { metric, num, den, min, max } = c;
            let known = |s: &ArmStat| {
                self.arms.iter().any(|a| a.name == s.arm)
                    && (self.kernel.is_none() || kernel_arms.iter().any(|a| a.name == s.kernel_arm))
            };
            if !self.metrics.contains(metric) || min > max || !known(num) || !known(den) {
                return Err(Error::at(loc, format!("bad check on {metric:?}: {}", c.describe(false))));
            }
        }
        let opts = Options { runs: Some(1), jobs: 1, keep_first: false, backend: Default::default() };
        self.spec_for(false, &opts)?.prepare()?;
        if let Some(k) = &self.kernel {
            if k.arms.len() < 2 {
                return Err(Error::at(loc, "the kernel set-up needs at least two arms (patch off, patch on)"));
            }
            for a in k.arms {
                let r = a.reference.unwrap_or(a.name);
                if a.reference.is_some() && !self.reference.values.iter().any(|v| v.arm == r) {
                    return Err(Error::at(
                        loc,
                        format!("kernel arm {:?} refers to {r:?}, which has no patch numbers", a.name),
                    ));
                }
            }
            // The kernel arms' settings load (nothing runs).
            self.spec_for(true, &opts)?.prepare()?;
        }
        Ok(())
    }

    /// Runs the experiment.
    pub fn run(&self, opts: &Options, progress: &dyn Progress) -> Result<Reproduction<'_>> {
        let cmp = self.compare_spec(opts)?.prepare()?.run(progress)?;
        Ok(Reproduction { experiment: self, comparison: cmp, linux: None })
    }
}

/// An experiment and what tcplab measured.
#[derive(Clone, Debug)]
pub struct Reproduction<'e> {
    pub experiment: &'e Experiment,
    pub comparison: Comparison,
    /// The real kernel's figures beside the model's, when there are some
    /// (see [`kernel_column`]).
    pub linux: Option<KernelColumn>,
}

/// The outcome of one [`Check`].
#[derive(Clone, Debug, Serialize)]
pub struct CheckOutcome {
    pub description: String,
    pub value: Option<f64>,
    pub ok: bool,
}

#[derive(Serialize)]
struct JsonReproduction<'a> {
    experiment: &'a Experiment,
    reference: &'a Reference,
    checks: Vec<CheckOutcome>,
    #[serde(flatten)]
    comparison: JsonComparison<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    linux: Option<&'a KernelColumn>,
}

impl Reproduction<'_> {
    /// The arm of the patch's numbers that arm `name` is set against.
    fn reference_arm<'a>(&self, name: &'a str) -> &'a str {
        let e = self.experiment;
        let kernel_arms = e.kernel.as_ref().map_or(&[][..], |k| k.arms);
        e.arms.iter().chain(kernel_arms).find(|a| a.name == name).and_then(|a| a.reference).unwrap_or(name)
    }

    /// The backend the runs ran on and the kernel set-up's note, when not
    /// the model.
    fn kernel_note(&self) -> Option<(&str, &'static str)> {
        let backend = self.comparison.arms.first().map(|a| a.backend.as_str())?;
        let k = self.experiment.kernel.as_ref()?;
        (backend != "model").then_some((backend, k.note))
    }

    fn metric_index(&self, name: &str) -> Option<usize> {
        self.comparison.metrics.iter().position(|m| m.name == name)
    }

    pub fn checks(&self) -> Vec<CheckOutcome> {
        let kernel = self.kernel_note().is_some();
        self.experiment
            .checks
            .iter()
            .map(|c| {
                let Check::Ratio { metric, min, max, .. } = *c;
                let i = self.metric_index(metric);
                let value = c.value(kernel, |arm| {
                    let a = self.comparison.arms.iter().find(|a| a.name == arm)?;
                    a.summary.get(i?)?.as_ref()
                });
                CheckOutcome {
                    description: format!("{} in [{min}, {max}]", c.describe(kernel)),
                    value,
                    ok: value.is_some_and(|v| (min..=max).contains(&v)),
                }
            })
            .collect()
    }

    /// Every check passed.
    pub fn passed(&self) -> bool {
        self.checks().iter().all(|c| c.ok)
    }

    pub fn to_json(&self) -> String {
        let j = JsonReproduction {
            experiment: self.experiment,
            reference: &self.experiment.reference,
            checks: self.checks(),
            comparison: self.comparison.json(),
            linux: self.linux.as_ref(),
        };
        serde_json::to_string(&j).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    /// Rows of the side-by-side table: arm, metric, statistic, patch, tcplab.
    fn side_by_side(&self) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for v in self.experiment.reference.values {
            let Some(i) = self.metric_index(v.metric) else { continue };
            let u = self.comparison.metrics[i].unit();
            let Some(arm) = self.comparison.arms.iter().find(|a| self.reference_arm(&a.name) == v.arm) else {
                continue;
            };
            let Some(s) = arm.summary[i].as_ref() else { continue };
            let label = if arm.name == v.arm { arm.name.clone() } else { format!("{} (patch: {})", arm.name, v.arm) };
            let show = |x: f64| u.show(x * u.scale);
            let median_ci =
                |s: &Summary| format!("{} [{}, {}]", u.show(s.median), u.show(s.ci95[0]), u.show(s.ci95[1]));
            let range = |s: &Summary| format!("{} .. {}", u.show(s.min), u.show(s.max));
            // The kernel arm set against the same patch arm: its cell of a
            // row, shown by `what` (with its run count), when there are
            // kernel figures at all.
            let kernel = self.kernel_arm(v.arm).map(|k| (k.name.as_str(), k.summary.get(v.metric), k.runs));
            let mut push =
                |statistic: String, patch: String, ours: String, what: &dyn Fn(&Summary, usize) -> String| {
                    let mut row = vec![label.clone(), v.metric.into(), statistic, patch, ours];
                    if self.linux.is_some() {
                        row.push(match kernel {
                            Some((name, Some(ks), n)) => format!("{} ({name})", what(ks, n)),
                            _ => "-".into(),
                        });
                    }
                    rows.push(row);
                };
            match v.stat {
                RefStat::Runs(patch) => {
                    let mut p = patch.to_vec();
                    p.sort_by(f64::total_cmp);
                    let statistic = format!("median of {} runs", patch.len());
                    push(statistic, show(crate::stats::median_sorted(&p)), median_ci(s), &|k, _| median_ci(k));
                    if let (Some(lo), Some(hi)) = (p.first(), p.last()) {
                        let patch = format!("{} .. {}", show(*lo), show(*hi));
                        push("min .. max".into(), patch, range(s), &|k, _| range(k));
                    }
                }
                RefStat::Median(x) => push("value".into(), show(x), median_ci(s), &|k, _| median_ci(k)),
                RefStat::Total(x) => {
                    let sum: f64 = arm.values(i).iter().sum();
                    let statistic = format!("total over {} runs", arm.runs.len());
                    push(statistic, show(x), u.show(sum), &|k, n| {
                        format!("{} over {n} runs", u.show(k.mean * n as f64))
                    });
                }
            }
        }
        rows
    }

    /// Header of the side-by-side table.
    fn side_by_side_header(&self) -> Vec<&'static str> {
        let mut h = vec!["arm", "metric", "statistic", "patch", "tcplab"];
        if self.linux.is_some() {
            h.push("linux");
        }
        h
    }

    /// Each check's value on the kernel, as text (empty without kernel figures).
    pub fn kernel_checks(&self) -> Vec<String> {
        let Some(k) = &self.linux else { return Vec::new() };
        self.experiment
            .checks
            .iter()
            .map(|c| {
                let Check::Ratio { metric, .. } = *c;
                match c.value(true, |arm| k.summary(arm, metric)) {
                    Some(r) => format!("{}: {}: {r:.4}", k.kernel, c.describe(true)),
                    None => format!("{}: no kernel figure for {}", k.kernel, c.describe(true)),
                }
            })
            .collect()
    }

    /// Run-by-run columns for every [`RefStat::Runs`]: (heading, rows of run, patch, tcplab).
    fn run_lists(&self) -> Vec<(String, Vec<Vec<String>>)> {
        let mut out = Vec::new();
        for v in self.experiment.reference.values {
            let RefStat::Runs(patch) = v.stat else { continue };
            let Some(i) = self.metric_index(v.metric) else { continue };
            let u = self.comparison.metrics[i].unit();
            let Some(arm) = self.comparison.arms.iter().find(|a| self.reference_arm(&a.name) == v.arm) else {
                continue;
            };
            let ours = arm.values(i);
            let n = patch.len().max(ours.len());
            let rows = (0..n)
                .map(|k| {
                    vec![
                        (k + 1).to_string(),
                        patch.get(k).map_or("-".into(), |x| u.show(x * u.scale)),
                        arm.runs.get(k).map_or("-".into(), |r| format!("{} (seed {})", u.show(r.values[i]), r.seed)),
                    ]
                })
                .collect();
            out.push((format!("{} of {:?}, every run ({})", v.metric, v.arm, u.display), rows));
        }
        out
    }

    pub fn to_table(&self) -> String {
        let e = self.experiment;
        let mut s = String::new();
        let _ = writeln!(s, "== {}: {}", e.name, e.title);
        let _ = writeln!(s, "source: {}", e.source);
        let _ = writeln!(s, "{}\n", e.summary.trim());
        if let Some((backend, note)) = self.kernel_note() {
            let _ = writeln!(s, "On {backend}: {}\n", note.trim());
        }
        let _ = writeln!(s, "The patch reported:");
        for l in e.reference.quote.trim_end().lines() {
            let _ = writeln!(s, "  | {l}");
        }
        s.push('\n');
        let rows = self.side_by_side();
        if !rows.is_empty() {
            let _ = writeln!(s, "The patch and tcplab side by side (tcplab: median [95% CI]):");
            crate::compare::table(&mut s, &self.side_by_side_header(), &rows);
            s.push('\n');
        }
        for (head, rows) in self.run_lists() {
            let _ = writeln!(s, "{head}:");
            crate::compare::table(&mut s, &["run", "patch", "tcplab"], &rows);
            s.push('\n');
        }
        let mut on_kernel = self.kernel_checks().into_iter();
        for c in self.checks() {
            let v = c.value.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
            let _ = writeln!(s, "check: {}: {v} {}", c.description, if c.ok { "ok" } else { "FAILED" });
            if let Some(k) = on_kernel.next() {
                let _ = writeln!(s, "  on {k}");
            }
        }
        if let (Some(k), Some(v)) = (&self.linux, &self.experiment.kernel) {
            let _ = writeln!(s, "linux column: {} ({}). {}", k.kernel, k.source, v.note.trim());
        }
        let _ = writeln!(s, "\ntcplab's runs:");
        s.push_str(&self.comparison.to_table());
        s
    }

    /// This experiment's sections of an HTML report.
    pub fn html_sections(&self, page: &mut Page, command: Option<&str>) -> Result<()> {
        let e = self.experiment;
        page.el("h1", &format!("{}: {}", e.name, e.title));
        page.raw(&format!("<p class=\"muted\">Source: {}</p>\n<p>{}</p>\n", esc(e.source), esc(e.summary.trim())));
        if let Some((backend, note)) = self.kernel_note() {
            page.raw(&format!("<p>On {}: {}</p>\n", esc(backend), esc(note.trim())));
        }
        page.el("h2", "What the patch reported");
        page.el("pre", e.reference.quote.trim_end());
        let rows = self.side_by_side();
        if !rows.is_empty() {
            page.el("h2", "The patch and tcplab side by side");
            page.raw("<p>tcplab: median [95% confidence interval of the median].</p>\n");
            page.table(&self.side_by_side_header(), &rows);
        }
        for (head, rows) in self.run_lists() {
            page.el("h3", &head);
            page.table(&["run", "patch", "tcplab"], &rows);
        }
        let checks = self.checks();
        if !checks.is_empty() {
            page.el("h2", "Checks");
            let mut on_kernel = self.kernel_checks().into_iter();
            for c in checks {
                let v = c.value.map_or_else(|| "-".to_string(), |v| format!("{v:.4}"));
                let (class, word) = if c.ok { ("ok", "ok") } else { ("fail", "FAILED") };
                page.raw(&format!(
                    "<p>{}: {} <span class=\"{class}\">{word}</span></p>\n",
                    esc(&c.description),
                    esc(&v)
                ));
                if let Some(k) = on_kernel.next() {
                    page.raw(&format!("<p>on {}</p>\n", esc(&k)));
                }
            }
        }
        crate::html::comparison_sections(page, &self.comparison, command)
    }
}

/// The HTML report of several reproductions.
pub fn html_report(runs: &[Reproduction<'_>], command: Option<&str>) -> Result<String> {
    let names: Vec<&str> = runs.iter().map(|r| r.experiment.name).collect();
    let mut page = Page::new(&format!("tcplab reproduce: {}", names.join(", ")));
    for r in runs {
        r.html_sections(&mut page, command)?;
    }
    Ok(page.finish())
}

/// Said by `reproduce all` when the registry is empty.
pub const NOTHING_REGISTERED: &str = "tcplab reproduce: no experiments are registered yet. The seed patches' \
     experiments (reordering, dctcp-rpc, hystart) are added to crates/tcplab-lab/src/experiments/registry.rs \
     as they are reproduced; docs/experiments.md describes how to add one. Meanwhile `tcplab compare` runs \
     any A/B comparison.";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_registry_entries_are_well_formed() {
        for e in REGISTRY {
            e.validate().unwrap_or_else(|err| panic!("{}: {err}", e.name));
            assert!(REGISTRY.iter().filter(|o| o.name == e.name).count() == 1, "duplicate name {}", e.name);
            assert_ne!(e.name, "all");
        }
    }

    #[test]
    fn test_select() {
        assert!(select(REGISTRY, "all").is_ok());
        let e = select(&[], "hystart").unwrap_err().to_string();
        assert!(e.contains("no experiments are registered yet"), "{e}");
    }
}
