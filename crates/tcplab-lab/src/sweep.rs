//! `tcplab sweep` and `tcplab merge`: the cartesian product of varied
//! knobs, each point run on seeds 1..=N, one row per point with the
//! distribution of each metric; shards of the point×seed list for a
//! cluster's job scheduler, and the merge of their outputs.
//!
//! # Points, jobs and shards
//!
//! `--vary K1=a,b --vary K2=x,y,z` gives 2 × 3 points in the order
//! (a,x) (a,y) (a,z) (b,x) ...: the first `--vary` changes slowest. Job
//! `j = point · N + (seed − 1)`; `--shard K/N` runs the jobs with
//! `j mod N = K − 1` (round robin, so slow points spread over shards). A
//! shard's output lists every point, with the runs it did.
//!
//! # JSON wire format (`--json`; what `merge` reads)
//!
//! ```text
//! {
//!   "tcplab_sweep": 1,                       // format version
//!   "scenario": "scenarios/bulk-cubic.toml",
//!   "scenario_hash": "fnv1a64:…",            // the file's text + --set
//!   "set": ["run.duration=5s"],              // --set, in order
//!   "vary": [{"key": "link.bottleneck.rate", "values": ["50Mbit", "100Mbit"]}],
//!   "runs_per_point": 10,
//!   "metrics": [{"name": "goodput", "unit": "bit/s"}],
//!   "shard": null | {"k": 1, "n": 4},
//!   "points": [{
//!     "settings": {"link.bottleneck.rate": "50Mbit"},
//!     "scenario_hash": "fnv1a64:…",          // text + --set + this point's settings
//!     "runs": [{"seed": 1, "scenario_hash": "fnv1a64:…", "tcplab_version": "0.1.0",
//!               "metrics": {"goodput": 4.7e7}}],
//!     "summary": {"goodput": {"n", "min", "median", "mean", "max", "ci95", "groups"} | null}
//!   }]
//! }
//! ```
//!
//! `merge` checks that the files are shards of one sweep (same scenario
//! hash, settings, varied values, runs, metrics), that every run carries
//! its point's scenario hash, that all runs come from one tcplab version,
//! and that a seed run twice gave the same values; it then prints the same
//! table (or JSON, or CSV) as the unsharded sweep, byte for byte.

use crate::batch::{self, Job, Progress};
use crate::compare::{check_jobs, check_runs, table};
use crate::error::{Error, Result};
use crate::journal::Journal;
use crate::metrics::{self, Metric};
use crate::overrides::{parse_one, split_top_level, Layers, ScenarioText, Setting};
use crate::stats::{self, Summary};
use crate::VERSION;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// Version of the sweep JSON format.
pub const SWEEP_FORMAT: u32 = 1;

/// One `--vary KEY=V1,V2,...`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vary {
    pub key: String,
    pub values: Vec<String>,
}

/// Parses `KEY=V1,V2,...` (values split at top-level commas, so TOML
/// arrays and tables stay whole).
pub fn parse_vary(arg: &str) -> Result<Vary> {
    let loc = format!("--vary {arg}");
    let s = parse_one(&loc, arg)?;
    let values: Vec<String> = split_top_level(&s.value).into_iter().map(|v| v.trim().to_string()).collect();
    if values.is_empty() || values.iter().any(String::is_empty) {
        return Err(Error::at(loc, "expected KEY=V1,V2,... with no empty value"));
    }
    Ok(Vary { key: s.key, values })
}

/// `--shard K/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

/// Parses `K/N` with 1 ≤ K ≤ N.
pub fn parse_shard(arg: &str) -> Result<Shard> {
    let loc = format!("--shard {arg}");
    let (k, n) = arg.split_once('/').ok_or_else(|| Error::at(&loc, "expected K/N, e.g. 2/8"))?;
    let (k, n) = (k.trim().parse::<u32>(), n.trim().parse::<u32>());
    match (k, n) {
        (Ok(k), Ok(n)) if n >= 1 && (1..=n).contains(&k) => Ok(Shard { k, n }),
        _ => Err(Error::at(loc, "expected K/N with 1 <= K <= N, e.g. 2/8 (the second of eight shards)")),
    }
}

/// Everything `sweep` needs.
#[derive(Clone, Debug)]
pub struct SweepSpec {
    pub scenario: ScenarioText,
    pub base: Vec<Setting>,
    pub vary: Vec<Vary>,
    pub runs: u32,
    pub metrics: Vec<String>,
    pub shard: Option<Shard>,
    pub jobs: usize,
    /// Where the runs run.
    pub backend: crate::backend::Backend,
    /// Most runs allowed (`--max-runs`; [`batch::DEFAULT_MAX_RUNS`]).
    pub max_runs: u64,
}

/// One run of a sweep (also the merge input).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepRun {
    pub seed: u64,
    pub scenario_hash: String,
    pub tcplab_version: String,
    pub metrics: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetricDesc {
    pub name: String,
    pub unit: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub settings: BTreeMap<String, String>,
    pub scenario_hash: String,
    pub runs: Vec<SweepRun>,
    pub summary: BTreeMap<String, Option<Summary>>,
}

/// The output of `sweep` (and `merge`).
#[derive(Clone, Debug, Serialize)]
pub struct SweepResult {
    pub tcplab_sweep: u32,
    pub scenario: String,
    pub scenario_hash: String,
    pub set: Vec<String>,
    pub vary: Vec<Vary>,
    pub runs_per_point: u32,
    pub metrics: Vec<MetricDesc>,
    pub shard: Option<Shard>,
    pub points: Vec<Point>,
    /// Display units and scales, by metric (not serialized).
    #[serde(skip)]
    pub units: Vec<metrics::Unit>,
}

/// The cartesian product of the varied values, first `--vary` slowest.
pub fn points(vary: &[Vary]) -> Vec<Vec<Setting>> {
    let mut out: Vec<Vec<Setting>> = vec![Vec::new()];
    for v in vary {
        out = out
            .into_iter()
            .flat_map(|p| {
                v.values.iter().map(move |val| {
                    let mut q = p.clone();
                    q.push(Setting { key: v.key.clone(), value: val.clone() });
                    q
                })
            })
            .collect();
    }
    out
}

fn layers(base: &[Setting], point: &[Setting]) -> Layers {
    let mut l = Layers::new();
    for s in base {
        l.push(&format!("--set {}", s.text()), std::slice::from_ref(s));
    }
    for s in point {
        l.push(&format!("--vary {}", s.text()), std::slice::from_ref(s));
    }
    l
}

/// A prepared sweep: every point's scenario loaded and its metrics checked.
pub struct PreparedSweep {
    spec: SweepSpec,
    points: Vec<(Vec<Setting>, Arc<crate::Scenario>, String)>,
    metrics: Arc<Vec<Metric>>,
    base_hash: String,
}

impl SweepSpec {
    /// Loads every point (so that an unknown knob or value fails before
    /// anything runs) and parses the metrics.
    pub fn prepare(self) -> Result<PreparedSweep> {
        check_runs(self.runs)?;
        check_jobs(self.jobs)?;
        // The size first, before a point or a job is made.
        let sizes: Vec<String> = self.vary.iter().map(|v| v.values.len().to_string()).collect();
        let total = self.vary.iter().try_fold(u64::from(self.runs), |n, v| n.checked_mul(v.values.len() as u64));
        let what = if sizes.is_empty() {
            format!("{} runs", self.runs)
        } else {
            format!("{} points x {} runs", sizes.join(" x "), self.runs)
        };
        batch::check_total_runs(total, self.max_runs, &format!("this sweep ({what})"))?;
        for (i, v) in self.vary.iter().enumerate() {
            if self.vary[..i].iter().any(|w| w.key == v.key) {
                return Err(Error::at(
                    format!("--vary {}", v.key),
                    "this key is varied twice; list all its values once",
                ));
            }
        }
        let base_hash = self.scenario.hash(&layers(&self.base, &[]))?;
        let mut pts = Vec::new();
        let mut metrics: Option<Vec<Metric>> = None;
        for p in points(&self.vary) {
            let l = layers(&self.base, &p);
            let sc = self.scenario.load(&l, None)?;
            let m = metrics::parse_all("--metric", &self.metrics, &sc)?;
            metrics.get_or_insert(m);
            let h = self.scenario.hash(&l)?;
            pts.push((p, Arc::new(sc), h));
        }
        Ok(PreparedSweep { spec: self, points: pts, metrics: Arc::new(metrics.unwrap_or_default()), base_hash })
    }
}

impl PreparedSweep {
    /// Jobs this shard runs.
    pub fn job_count(&self) -> u64 {
        let total = self.points.len() as u64 * u64::from(self.spec.runs);
        match self.spec.shard {
            None => total,
            Some(s) => (0..total).filter(|j| j % u64::from(s.n) == u64::from(s.k - 1)).count() as u64,
        }
    }

    /// The first point's scenario (for estimates).
    pub fn first_scenario(&self) -> &crate::Scenario {
        &self.points[0].1
    }

    pub fn run(self, progress: &dyn Progress) -> Result<SweepResult> {
        self.run_with(progress, None)
    }

    /// [`PreparedSweep::run`], taking runs from and adding runs to `journal`.
    pub fn run_with(self, progress: &dyn Progress, journal: Option<&Journal>) -> Result<SweepResult> {
        let (jobs, owner) = self.jobs();
        let records = batch::run_all(&jobs, self.spec.jobs, progress, journal)?;
        Ok(self.assemble(records.into_iter().map(Some), &owner))
    }

    /// [`PreparedSweep::run_with`], keeping what an interruption leaves
    /// ([`batch::run_finished`]): the sweep of the runs that finished, and
    /// whether that is all of them.
    pub fn run_finished(self, progress: &dyn Progress, journal: Option<&Journal>) -> Result<(SweepResult, bool)> {
        let (jobs, owner) = self.jobs();
        let records = batch::run_finished(&jobs, self.spec.jobs, progress, journal)?;
        let complete = records.iter().all(Option::is_some);
        Ok((self.assemble(records.into_iter(), &owner), complete))
    }

    /// This shard's jobs, and the point each belongs to.
    fn jobs(&self) -> (Vec<Job>, Vec<usize>) {
        let runs = u64::from(self.spec.runs);
        let mut jobs = Vec::new();
        let mut owner = Vec::new();
        for (pi, (_, sc, hash)) in self.points.iter().enumerate() {
            let hash: Arc<str> = Arc::from(hash.as_str());
            for seed in 1..=runs {
                let j = pi as u64 * runs + (seed - 1);
                if let Some(s) = self.spec.shard {
                    if j % u64::from(s.n) != u64::from(s.k - 1) {
                        continue;
                    }
                }
                jobs.push(Job {
                    scenario: Arc::clone(sc),
                    scenario_hash: Arc::clone(&hash),
                    metrics: Arc::clone(&self.metrics),
                    seed,
                    keep: false,
                    keep_rpc: false,
                    backend: self.spec.backend.clone(),
                });
                owner.push(pi);
            }
        }
        (jobs, owner)
    }

    /// The sweep of the jobs' records, in job order (`None`: a run that did
    /// not finish, left out).
    fn assemble(self, records: impl Iterator<Item = Option<batch::RunRecord>>, owner: &[usize]) -> SweepResult {
        let mut per_point: Vec<Vec<SweepRun>> = vec![Vec::new(); self.points.len()];
        for (rec, &pi) in records.zip(owner) {
            let Some(rec) = rec else { continue };
            per_point[pi].push(SweepRun {
                seed: rec.seed,
                scenario_hash: self.points[pi].2.clone(),
                tcplab_version: VERSION.to_string(),
                metrics: self.metrics.iter().map(|m| m.name.clone()).zip(rec.values).collect(),
            });
        }
        let names: Vec<String> = self.metrics.iter().map(|m| m.name.clone()).collect();
        let points = self
            .points
            .iter()
            .zip(per_point)
            .map(|((settings, _, hash), runs)| Point {
                settings: settings.iter().map(|s| (s.key.clone(), s.value.clone())).collect(),
                scenario_hash: hash.clone(),
                summary: summaries(&names, &runs),
                runs,
            })
            .collect();
        SweepResult {
            tcplab_sweep: SWEEP_FORMAT,
            scenario: self.spec.scenario.name.clone(),
            scenario_hash: self.base_hash,
            set: self.spec.base.iter().map(Setting::text).collect(),
            vary: self.spec.vary.clone(),
            runs_per_point: self.spec.runs,
            metrics: self
                .metrics
                .iter()
                .map(|m| MetricDesc { name: m.name.clone(), unit: m.unit().json.into() })
                .collect(),
            shard: self.spec.shard,
            points,
            units: self.metrics.iter().map(Metric::unit).collect(),
        }
    }
}

fn summaries(names: &[String], runs: &[SweepRun]) -> BTreeMap<String, Option<Summary>> {
    names
        .iter()
        .map(|n| {
            let v: Vec<f64> = runs.iter().filter_map(|r| r.metrics.get(n).copied()).collect();
            (n.clone(), stats::summarize(&v))
        })
        .collect()
}

/// The units a metric can have in JSON.
const UNITS: [metrics::Unit; 4] = [metrics::BITS_PER_SEC, metrics::MICROSECONDS, metrics::COUNT, metrics::INDEX];

fn unit_for(json_unit: &str) -> metrics::Unit {
    UNITS.into_iter().find(|u| u.json == json_unit).unwrap_or(metrics::COUNT)
}

impl SweepResult {
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_else(|e| format!("{{\"error\":{:?}}}", e.to_string()))
    }

    fn cells(&self, p: &Point) -> Vec<String> {
        self.vary.iter().map(|v| p.settings.get(&v.key).cloned().unwrap_or_default()).collect()
    }

    /// The table for people: one row per point.
    pub fn to_table(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "sweep {}: {} point{} x {} run{} (seeds 1 to {}){}",
            self.scenario,
            self.points.len(),
            if self.points.len() == 1 { "" } else { "s" },
            self.runs_per_point,
            if self.runs_per_point == 1 { "" } else { "s" },
            self.runs_per_point,
            self.shard.map_or(String::new(), |sh| format!(", shard {}/{}", sh.k, sh.n))
        );
        if !self.set.is_empty() {
            let _ = writeln!(s, "  every point: {}", self.set.join(", "));
        }
        for (mi, m) in self.metrics.iter().enumerate() {
            let u = self.units.get(mi).copied().unwrap_or_else(|| unit_for(&m.unit));
            let _ = writeln!(s, "\n{} ({})", m.name, u.display);
            let mut head: Vec<&str> = self.vary.iter().map(|v| v.key.as_str()).collect();
            head.extend(["n", "min", "median", "mean", "max", "95% CI of median", "note"]);
            let rows: Vec<Vec<String>> = self
                .points
                .iter()
                .map(|p| {
                    let mut r = self.cells(p);
                    match p.summary.get(&m.name).and_then(Option::as_ref) {
                        Some(x) => r.extend([
                            x.n.to_string(),
                            u.show(x.min),
                            u.show(x.median),
                            u.show(x.mean),
                            u.show(x.max),
                            format!("[{}, {}]", u.show(x.ci95[0]), u.show(x.ci95[1])),
                            x.groups.as_ref().map_or(String::new(), |g| {
                                format!("two groups: {} low, {} high", g.low.runs, g.high.runs)
                            }),
                        ]),
                        None => r.push("0".into()),
                    }
                    r
                })
                .collect();
            table(&mut s, &head, &rows);
        }
        s
    }

    /// CSV: a header, then one row per point; per metric its n, min,
    /// median, mean, max and CI bounds (JSON units) and the sizes of two
    /// groups when the runs split (else empty).
    pub fn to_csv(&self) -> String {
        let mut head: Vec<String> = self.vary.iter().map(|v| v.key.clone()).collect();
        for m in &self.metrics {
            for f in ["n", "min", "median", "mean", "max", "ci95_lo", "ci95_hi", "groups"] {
                head.push(format!("{}.{f}", m.name));
            }
        }
        let mut s = csv_line(&head);
        for p in &self.points {
            let mut r = self.cells(p);
            for m in &self.metrics {
                match p.summary.get(&m.name).and_then(Option::as_ref) {
                    Some(x) => r.extend([
                        x.n.to_string(),
                        x.min.to_string(),
                        x.median.to_string(),
                        x.mean.to_string(),
                        x.max.to_string(),
                        x.ci95[0].to_string(),
                        x.ci95[1].to_string(),
                        x.groups.as_ref().map_or(String::new(), |g| format!("{}+{}", g.low.runs, g.high.runs)),
                    ]),
                    None => {
                        r.push("0".to_string());
                        r.extend(vec![String::new(); 7]);
                    }
                }
            }
            s.push_str(&csv_line(&r));
        }
        s
    }
}

/// One CSV line (RFC 4180 quoting).
fn csv_line(cells: &[String]) -> String {
    let mut l = cells
        .iter()
        .map(|c| if c.contains([',', '"', '\n', '\r']) { format!("\"{}\"", c.replace('"', "\"\"")) } else { c.clone() })
        .collect::<Vec<_>>()
        .join(",");
    l.push('\n');
    l
}

// ---- merge -------------------------------------------------------------------

#[derive(Deserialize)]
struct FileIn {
    tcplab_sweep: u32,
    scenario: String,
    scenario_hash: String,
    set: Vec<String>,
    vary: Vec<Vary>,
    runs_per_point: u32,
    metrics: Vec<MetricDesc>,
    #[allow(dead_code)]
    shard: Option<Shard>,
    points: Vec<PointIn>,
}

#[derive(Deserialize)]
struct PointIn {
    settings: BTreeMap<String, String>,
    scenario_hash: String,
    runs: Vec<RunIn>,
}

/// A run as read: its metrics keep every key in file order, so that a
/// duplicated key is seen (a map would keep one of them silently).
#[derive(Deserialize)]
struct RunIn {
    seed: u64,
    scenario_hash: String,
    tcplab_version: String,
    metrics: Entries,
}

/// A JSON object's entries, in order, duplicates kept.
struct Entries(Vec<(String, f64)>);

impl<'de> Deserialize<'de> for Entries {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Entries, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Entries;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of metric values")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> std::result::Result<Entries, A::Error> {
                let mut v = Vec::new();
                while let Some(entry) = m.next_entry::<String, f64>()? {
                    v.push(entry);
                }
                Ok(Entries(v))
            }
        }
        d.deserialize_map(V)
    }
}

/// Checks a shard's metric list: known units, no name twice.
fn check_metric_set(name: &str, metrics: &[MetricDesc]) -> Result<()> {
    for (i, m) in metrics.iter().enumerate() {
        if metrics[..i].iter().any(|o| o.name == m.name) {
            return Err(Error::at(name, format!("metrics: {:?} is listed twice", m.name)));
        }
        if !UNITS.iter().any(|u| u.json == m.unit) {
            let known: Vec<&str> = UNITS.iter().map(|u| u.json).collect();
            return Err(Error::at(
                name,
                format!("metrics: {:?} has unit {:?}, not one of {}", m.name, m.unit, known.join(", ")),
            ));
        }
    }
    Ok(())
}

/// A run read from a shard as a [`SweepRun`], if its metrics are exactly
/// the sweep's: every metric once, nothing else. A run short of a metric
/// would silently shrink that metric's n; refusing it names the shard,
/// the point and the seed.
fn checked_run(name: &str, pi: usize, r: &RunIn, set: &[MetricDesc]) -> Result<SweepRun> {
    let at = |msg: String| Error::at(name, format!("point {pi} seed {}: {msg}", r.seed));
    let mut metrics = BTreeMap::new();
    for (k, v) in &r.metrics.0 {
        if !set.iter().any(|m| m.name == *k) {
            let known: Vec<&str> = set.iter().map(|m| m.name.as_str()).collect();
            return Err(at(format!("metric {k:?} is not one of the sweep's ({})", known.join(", "))));
        }
        if !(v.is_finite() && *v >= 0.0) {
            // Every metric (rates, times, counts, indices, shares) is a
            // finite non-negative number: anything else was edited.
            return Err(at(format!("metric {k:?} is {v}; tcplab's metrics are never negative")));
        }
        if metrics.insert(k.clone(), *v).is_some() {
            return Err(at(format!("metric {k:?} is given twice")));
        }
    }
    if let Some(m) = set.iter().find(|m| !metrics.contains_key(&m.name)) {
        return Err(at(format!("metric {:?} is missing; every run must have every metric of the sweep", m.name)));
    }
    Ok(SweepRun {
        seed: r.seed,
        scenario_hash: r.scenario_hash.clone(),
        tcplab_version: r.tcplab_version.clone(),
        metrics,
    })
}

/// Joins shard outputs `(name, JSON text)` into one sweep. Returns the
/// result and warnings (missing runs).
pub fn merge(files: &[(String, String)]) -> Result<(SweepResult, Vec<String>)> {
    if files.is_empty() {
        return Err(Error::msg("merge: give the JSON files written by `tcplab sweep --shard K/N --json`"));
    }
    let mut parsed = Vec::new();
    for (name, text) in files {
        let f: FileIn = serde_json::from_str(text).map_err(|e| {
            Error::at(name, format!("not a tcplab sweep JSON file (written by `tcplab sweep --json`): {e}"))
        })?;
        if f.tcplab_sweep != SWEEP_FORMAT {
            return Err(Error::at(name, format!("sweep format {} (this tcplab reads {SWEEP_FORMAT})", f.tcplab_sweep)));
        }
        check_metric_set(name, &f.metrics)?;
        parsed.push((name, f));
    }
    let (first_name, first) = &parsed[0];
    for (name, f) in &parsed[1..] {
        let same = f.scenario_hash == first.scenario_hash
            && f.set == first.set
            && f.vary == first.vary
            && f.runs_per_point == first.runs_per_point
            && f.metrics == first.metrics
            && f.points.len() == first.points.len()
            && f.points
                .iter()
                .zip(&first.points)
                .all(|(a, b)| a.settings == b.settings && a.scenario_hash == b.scenario_hash);
        if !same {
            return Err(Error::at(
                *name,
                format!(
                    "not a shard of the same sweep as {first_name} (scenario, --set, --vary, --runs and --metric \
                     must be identical)"
                ),
            ));
        }
    }
    let mut version: Option<(String, &str)> = None;
    let names: Vec<String> = first.metrics.iter().map(|m| m.name.clone()).collect();
    let mut warnings = Vec::new();
    let mut points = Vec::new();
    for (pi, p0) in first.points.iter().enumerate() {
        let mut by_seed: BTreeMap<u64, (SweepRun, &str)> = BTreeMap::new();
        for (name, f) in &parsed {
            for r in &f.points[pi].runs {
                let r = &checked_run(name, pi, r, &first.metrics)?;
                if r.scenario_hash != p0.scenario_hash {
                    return Err(Error::at(
                        *name,
                        format!(
                            "point {pi} seed {}: scenario hash {} differs from its point's {}",
                            r.seed, r.scenario_hash, p0.scenario_hash
                        ),
                    ));
                }
                match &version {
                    None => version = Some((r.tcplab_version.clone(), name.as_str())),
                    Some((v, from)) if *v != r.tcplab_version => {
                        return Err(Error::at(
                            *name,
                            format!(
                                "results of tcplab {} cannot be merged with results of tcplab {v} ({from}): \
                                 rerun the shards with one version",
                                r.tcplab_version
                            ),
                        ));
                    }
                    _ => {}
                }
                if r.seed == 0 || r.seed > u64::from(first.runs_per_point) {
                    return Err(Error::at(
                        *name,
                        format!("point {pi}: seed {} is outside 1 to {}", r.seed, first.runs_per_point),
                    ));
                }
                match by_seed.get(&r.seed) {
                    Some((old, from)) if old != r => {
                        return Err(Error::at(
                            *name,
                            format!(
                                "point {pi} seed {}: different results than in {from}; the runs are not reproducible",
                                r.seed
                            ),
                        ));
                    }
                    Some(_) => {}
                    None => {
                        by_seed.insert(r.seed, (r.clone(), name.as_str()));
                    }
                }
            }
        }
        let runs: Vec<SweepRun> = by_seed.into_values().map(|(r, _)| r).collect();
        if runs.len() < first.runs_per_point as usize {
            let settings: Vec<String> = p0.settings.iter().map(|(k, v)| format!("{k}={v}")).collect();
            warnings.push(format!(
                "point {pi} ({}): {} of {} runs missing (a shard not given?)",
                settings.join(", "),
                first.runs_per_point as usize - runs.len(),
                first.runs_per_point
            ));
        }
        points.push(Point {
            settings: p0.settings.clone(),
            scenario_hash: p0.scenario_hash.clone(),
            summary: summaries(&names, &runs),
            runs,
        });
    }
    Ok((
        SweepResult {
            tcplab_sweep: SWEEP_FORMAT,
            scenario: first.scenario.clone(),
            scenario_hash: first.scenario_hash.clone(),
            set: first.set.clone(),
            vary: first.vary.clone(),
            runs_per_point: first.runs_per_point,
            units: first.metrics.iter().map(|m| unit_for(&m.unit)).collect(),
            metrics: first.metrics.clone(),
            shard: None,
            points,
        },
        warnings,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_parse_vary_and_points() {
        let v = parse_vary("tcp.tcp_rmem=[4096, 87380, 6291456],[4096, 131072, 6291456]").unwrap();
        assert_eq!(v.values, ["[4096, 87380, 6291456]", "[4096, 131072, 6291456]"]);
        assert!(parse_vary("x").is_err());
        assert!(parse_vary("x=").is_err());
        assert!(parse_vary("x=1,,2").is_err());
        let a = parse_vary("a=1,2").unwrap();
        let b = parse_vary("b=x,y,z").unwrap();
        let p = points(&[a, b]);
        let text: Vec<String> = p.iter().map(|s| s.iter().map(Setting::text).collect::<Vec<_>>().join(" ")).collect();
        assert_eq!(text, ["a=1 b=x", "a=1 b=y", "a=1 b=z", "a=2 b=x", "a=2 b=y", "a=2 b=z"]);
        assert_eq!(points(&[]).len(), 1);
    }

    #[test]
    fn test_parse_shard() {
        assert_eq!(parse_shard("2/8").unwrap(), Shard { k: 2, n: 8 });
        for bad in ["0/2", "3/2", "1/0", "x", "1/", "1/2/3"] {
            assert!(parse_shard(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn test_csv_quoting() {
        assert_eq!(csv_line(&["a".into(), "b,c".into(), "d\"e".into()]), "a,\"b,c\",\"d\"\"e\"\n");
    }

    /// A shard with one run of two points, `metrics` being that run's
    /// metrics object.
    fn shard(metrics: &str) -> String {
        format!(
            r#"{{"tcplab_sweep":1,"scenario":"s.toml","scenario_hash":"fnv1a64:1","set":[],"vary":[],
            "runs_per_point":2,"metrics":[{{"name":"goodput","unit":"bit/s"}},{{"name":"jain","unit":"index"}}],
            "shard":{{"k":1,"n":1}},"points":[{{"settings":{{}},"scenario_hash":"fnv1a64:2","runs":[
            {{"seed":1,"scenario_hash":"fnv1a64:2","tcplab_version":"0.1.0","metrics":{{"goodput":1.0,"jain":1.0}}}},
            {{"seed":2,"scenario_hash":"fnv1a64:2","tcplab_version":"0.1.0","metrics":{metrics}}}]}}]}}"#
        )
    }

    #[test]
    fn test_merge_refuses_runs_without_exactly_the_sweeps_metrics() {
        let (ok, _) = merge(&[("a.json".into(), shard(r#"{"goodput":2.0,"jain":0.9}"#))]).unwrap();
        assert_eq!(ok.points[0].summary["goodput"].as_ref().unwrap().n, 2);
        for (metrics, says) in [
            ("{}", r#"a.json: point 0 seed 2: metric "goodput" is missing"#),
            (
                r#"{"goodput":-1.0,"jain":0.5}"#,
                r#"a.json: point 0 seed 2: metric "goodput" is -1; tcplab's metrics are never negative"#,
            ),
            (r#"{"goodput":2.0}"#, r#"a.json: point 0 seed 2: metric "jain" is missing"#),
            (r#"{"goodput":2.0,"jain":1.0,"rtt":5.0}"#, r#"a.json: point 0 seed 2: metric "rtt" is not one of"#),
            (
                r#"{"goodput":2.0,"goodput":3.0,"jain":1.0}"#,
                r#"a.json: point 0 seed 2: metric "goodput" is given twice"#,
            ),
        ] {
            let e = merge(&[("a.json".into(), shard(metrics))]).unwrap_err().to_string();
            assert!(e.starts_with(says), "{metrics}: {e}");
        }
        let invented = shard(r#"{"goodput":2.0,"jain":0.9}"#).replace(r#""unit":"index""#, r#""unit":"furlongs""#);
        let e = merge(&[("a.json".into(), invented)]).unwrap_err().to_string();
        assert!(e.starts_with(r#"a.json: metrics: "jain" has unit "furlongs", not one of"#), "{e}");
        let twice = shard(r#"{"goodput":2.0,"jain":0.9}"#).replace(r#""name":"jain""#, r#""name":"goodput""#);
        let e = merge(&[("a.json".into(), twice)]).unwrap_err().to_string();
        assert!(e.starts_with(r#"a.json: metrics: "goodput" is listed twice"#), "{e}");
    }

    #[test]
    fn test_merge_keeps_values_bit_for_bit() {
        // Found by fuzzing (fuzz/corpus/merge/regression-float-roundtrip):
        // serde_json's default float parsing is off by one ulp for some
        // values, so a merged sweep differed from the unsharded one.
        let text = shard(r#"{"goodput":1.1111111111111164e+72,"jain":0.9}"#);
        let (merged, _) = merge(&[("a.json".into(), text)]).unwrap();
        let json = merged.to_json();
        assert!(json.contains("1.1111111111111164e+72"), "{json}");
        let (again, _) = merge(&[("m.json".into(), json.clone())]).unwrap();
        assert_eq!(again.to_json(), json);
    }

    #[test]
    fn test_merge_rejects_bad_input() {
        assert!(merge(&[]).is_err());
        let e = merge(&[("x.json".into(), "{".into())]).unwrap_err().to_string();
        assert!(e.starts_with("x.json: not a tcplab sweep JSON file"), "{e}");
    }
}
