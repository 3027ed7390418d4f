//! `tcplab faithfulness`: the model against the real kernel on a suite of
//! scenarios, written as one Markdown page (docs/FAITHFULNESS.md).
//!
//! The suite is a manifest (`scenarios/diff/suite.toml`): one
//! `[[scenario]]` per entry with its file, the `--set` overrides it needs
//! and a note saying which mechanism it isolates. Each entry is a
//! [`crate::diff`] over N seeds; every metric gets a verdict against the
//! targets of the faithfulness issue: goodput medians within 5 %, counts
//! within 20 % or ±5 (whichever is wider), HyStart's exit cwnd within
//! 10 %, RPC percentiles within 10 %, Jain's index within 0.03, and (issue
//! #17, BBR) the mean pacing rate within 5 %.
//!
//! `--only` writes a page of part of the suite (docs/faithfulness-bbr.md:
//! the BBR entries), which says so and points to the whole suite's page;
//! the whole suite's page lists such pages found next to it ([`Scope`]),
//! so that a part run on its own is not lost from docs/FAITHFULNESS.md.

use crate::backend::Backend;
use crate::batch::Progress;
use crate::diff::{Diff, DiffSpec, Row};
use crate::error::{Error, Result};
use crate::metrics::{Metric, Quantity};
use crate::overrides::{parse_one, ScenarioText};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// One scenario of the suite.
#[derive(Clone, Debug)]
pub struct Entry {
    /// A short name, unique in the suite (also the plot directory).
    pub name: String,
    /// The scenario file, relative to the repository root.
    pub file: String,
    /// `KEY=VALUE` overrides, as `--set` takes them.
    pub set: Vec<String>,
    /// What the entry isolates.
    pub note: String,
    /// The metrics compared; empty: [`crate::diff::default_metrics`].
    /// BBR's entries name `pacing_rate_mean`, which no default includes
    /// (it needs `run.trace_interval`).
    pub metrics: Vec<String>,
}

/// Reads a suite manifest. Its file paths are relative to the `root`
/// given to [`run`] (the repository root, where commands run).
pub fn load_manifest(path: &Path) -> Result<Vec<Entry>> {
    let loc = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| Error::at(&loc, format!("cannot read: {e}")))?;
    let doc: toml_edit::DocumentMut =
        text.parse().map_err(|e: toml_edit::TomlError| Error::at(&loc, e.to_string().trim().to_string()))?;
    let mut out: Vec<Entry> = Vec::new();
    let Some(arr) = doc.get("scenario").and_then(|i| i.as_array_of_tables()) else {
        return Err(Error::at(&loc, "no [[scenario]] tables"));
    };
    for (i, t) in arr.iter().enumerate() {
        let at = format!("{loc}: scenario[{i}]");
        for (k, _) in t.iter() {
            if !["name", "file", "set", "note", "metrics"].contains(&k) {
                return Err(Error::at(&at, format!("unknown key {k:?} (expected name, file, set, note, metrics)")));
            }
        }
        let s = |k: &str| -> Result<String> {
            t.get(k)
                .and_then(|v| v.as_str())
                .map(str::to_string)
                .ok_or_else(|| Error::at(&at, format!("{k}: a string is required")))
        };
        let name = s("name")?;
        if out.iter().any(|e| e.name == name) {
            return Err(Error::at(&at, format!("duplicate name {name:?}")));
        }
        let strings = |k: &str, what: &str| -> Result<Vec<String>> {
            match t.get(k) {
                None => Ok(Vec::new()),
                Some(v) => v
                    .as_array()
                    .map(|a| a.iter().map(|x| x.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
                    .unwrap_or(None)
                    .ok_or_else(|| Error::at(&at, format!("{k}: an array of {what} strings"))),
            }
        };
        let set = strings("set", "\"KEY=VALUE\"")?;
        let metrics = strings("metrics", "metric")?;
        out.push(Entry { name, file: s("file")?, set, note: s("note")?, metrics });
    }
    Ok(out)
}

/// What the suite produced: per entry its diff, or why it could not run
/// (one entry's failure does not cost the others their results).
pub struct SuiteResult {
    pub runs: u32,
    pub entries: Vec<(Entry, Result<Diff>)>,
}

/// How every entry of a suite runs: the [`DiffSpec`] fields they share.
pub struct SuiteSpec {
    pub runs: u32,
    pub jobs: usize,
    pub model: Backend,
    pub linux: Backend,
    /// Keep seed 1's traces for plots.
    pub keep_first: bool,
}

/// Runs every entry on both backends.
pub fn run(
    entries: &[Entry],
    root: &Path,
    spec: &SuiteSpec,
    progress: &dyn Fn(&str) -> Box<dyn Progress>,
) -> Result<SuiteResult> {
    let mut out = Vec::new();
    for e in entries {
        let file = root.join(&e.file);
        let diff = (|| {
            let diff = DiffSpec {
                scenario: ScenarioText::read(&file.display().to_string())?,
                base: e.set.iter().map(|s| parse_one(&format!("scenario {}", e.name), s)).collect::<Result<_>>()?,
                runs: spec.runs,
                metrics: e.metrics.clone(),
                jobs: spec.jobs,
                model: spec.model.clone(),
                linux: spec.linux.clone(),
                keep_first: spec.keep_first,
            };
            let bar = progress(&e.name);
            diff.run(bar.as_ref())
        })();
        if let Err(err) = &diff {
            eprintln!("tcplab: faithfulness: {}: {err}", e.name);
        }
        out.push((e.clone(), diff));
    }
    Ok(SuiteResult { runs: spec.runs, entries: out })
}

/// A metric's verdict against the targets.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The medians are within the target.
    Ok,
    /// Outside the target, but the two 95 % intervals of the medians
    /// overlap: with this many seeds the difference is not established.
    Noise,
    /// Outside the target and the intervals do not overlap.
    Differs,
    /// Not enough data (a run failed to give the metric).
    Unknown,
}

/// The target a metric is held to, as written in the report.
fn target(m: &Metric) -> &'static str {
    match m.quantity {
        Quantity::Goodput | Quantity::GoodputLast => "±5 %",
        Quantity::Counter(_) | Quantity::Reordering => "±20 % or ±5",
        Quantity::HystartExitCwnd | Quantity::RpcLatency(_) | Quantity::Fct(_) => "±10 %",
        Quantity::Jain => "±0.03",
        // Issue #17: "goodput and pacing rate within 5 %".
        Quantity::PacingRateMean => "±5 %",
        Quantity::ReorderingMean | Quantity::CaShare(_) => "±10 %",
    }
}

pub fn verdict(m: &Metric, row: &Row) -> Verdict {
    let (Some(a), Some(b)) = (&row.model, &row.linux) else { return Verdict::Unknown };
    let (x, y) = (a.median, b.median);
    let within_rel = |tol: f64| (x == 0.0 && y == 0.0) || (y - x).abs() <= tol * x.abs().max(f64::MIN_POSITIVE);
    let ok = match m.quantity {
        Quantity::Goodput | Quantity::GoodputLast | Quantity::PacingRateMean => within_rel(0.05),
        Quantity::Counter(_) | Quantity::Reordering => (y - x).abs() <= (0.2 * x.abs()).max(5.0),
        Quantity::Jain => (y - x).abs() <= 0.03,
        _ => within_rel(0.10),
    };
    if ok {
        Verdict::Ok
    } else if row.ci_overlap {
        Verdict::Noise
    } else {
        Verdict::Differs
    }
}

/// Which part of the suite a page covers, and the other pages it names.
#[derive(Clone, Debug, PartialEq)]
pub enum Scope {
    /// The whole suite. `parts`: pages of parts of it written with
    /// `--only` next to this page, as links relative to it.
    Whole { parts: Vec<String> },
    /// The entries whose names contain one of these texts (`--only`).
    Only(Vec<String>),
}

impl SuiteResult {
    /// The page, with `command` (how it was made) at the top and plots
    /// linked under `plots` (relative to the page) when given.
    pub fn markdown(&self, command: &str, plots: Option<&str>, scope: &Scope) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Faithfulness: the model against Linux 6.12, scenario by scenario\n");
        let which = match scope {
            Scope::Whole { .. } => "every scenario of the suite".to_string(),
            Scope::Only(texts) => {
                let t: Vec<String> = texts.iter().map(|t| format!("`{t}`")).collect();
                format!("the scenarios of the suite whose name contains {}", t.join(" or "))
            }
        };
        let _ = writeln!(
            s,
            "Generated by `{command}`: {which} on both backends, the model and the \
             real kernel (docs/KERNEL.md), {} seeds each. Per metric: each backend's median with the 95 % \
             confidence interval of the median, the kernel's median relative to the model's, and a verdict \
             against the targets (goodput ±5 %, counts ±20 % or ±5, HyStart's exit cwnd ±10 %, RPC \
             percentiles ±10 %, Jain ±0.03, mean pacing rate ±5 %); a median outside its target is *within noise* when the two \
             intervals still overlap (the seeds do not establish a difference) and **differs** when they do \
             not. Kernel runs with random elements (loss, jitter) draw fresh randomness each boot; without \
             any (fixed delays) every seed gives the same run on either backend, and the interval is a point. \
             As in every `tcplab diff`, the model's side runs with the kernel backend's receive path, \
             `{}` (the guest's veths have no GRO: an skb per segment), unless an entry sets \
             `rcv_truesize` itself. The differences and their mechanisms are in \
             docs/linux-differences.md.\n",
            self.runs,
            crate::diff::KERNEL_RECEIVE_PATH
        );
        match scope {
            Scope::Only(_) => {
                let _ = writeln!(
                    s,
                    "This page is a part of the suite, written with `--only`; the whole suite's page is \
                     docs/FAITHFULNESS.md, which links this one.\n"
                );
            }
            Scope::Whole { parts } if !parts.is_empty() => {
                let links: Vec<String> = parts.iter().map(|p| format!("[{p}]({p})")).collect();
                let _ = writeln!(
                    s,
                    "Parts of the suite run on their own with `--only` have pages next to this one: {}. \
                     Their entries are on this page only if it was generated after they joined the suite.\n",
                    links.join(", ")
                );
            }
            Scope::Whole { .. } => {}
        }
        let _ = writeln!(
            s,
            "| scenario | metrics within target | differing | outside target, intervals overlap |\n|---|---|---|---|"
        );
        for (e, d) in &self.entries {
            let link = format!("[{}](#{})", e.name, anchor(&e.name));
            let Ok(d) = d else {
                let _ = writeln!(s, "| {link} | did not run | - | - |");
                continue;
            };
            let rows = d.rows();
            let verdicts: Vec<(String, Verdict)> =
                d.comparison.metrics.iter().zip(&rows).map(|(m, r)| (m.name.clone(), verdict(m, r))).collect();
            let ok = verdicts.iter().filter(|v| v.1 == Verdict::Ok).count();
            let list = |want: Verdict| {
                let v: Vec<&str> = verdicts.iter().filter(|v| v.1 == want).map(|v| v.0.as_str()).collect();
                if v.is_empty() {
                    "-".to_string()
                } else {
                    v.join(", ")
                }
            };
            let _ = writeln!(
                s,
                "| {link} | {ok} of {} | {} | {} |",
                verdicts.len(),
                list(Verdict::Differs),
                list(Verdict::Noise)
            );
        }
        s.push('\n');
        for (e, d) in &self.entries {
            let _ = writeln!(s, "## {}\n", e.name);
            let _ = writeln!(s, "{}\n", e.note.trim());
            let sets: String = e.set.iter().map(|x| format!(" --set '{x}'")).collect();
            let _ = writeln!(s, "`tcplab diff {} --runs {}{sets}`\n", e.file, self.runs);
            let d = match d {
                Ok(d) => d,
                Err(err) => {
                    let _ = writeln!(s, "Did not run: {err}\n");
                    continue;
                }
            };
            let _ =
                writeln!(s, "| metric | model | linux | linux/model | target | verdict |\n|---|---|---|---|---|---|");
            for (m, r) in d.comparison.metrics.iter().zip(d.rows()) {
                let u = m.unit();
                let cell = |x: &Option<crate::stats::Summary>| match x {
                    Some(x) => format!("{} [{}, {}]", u.show(x.median), u.show(x.ci95[0]), u.show(x.ci95[1])),
                    None => "-".into(),
                };
                let rel = r.relative_difference.map_or("-".to_string(), |v| format!("{:+.1} %", v * 100.0));
                let v = match verdict(m, &r) {
                    Verdict::Ok => "ok",
                    Verdict::Noise => "within noise",
                    Verdict::Differs => "**differs**",
                    Verdict::Unknown => "?",
                };
                let _ = writeln!(
                    s,
                    "| {} ({}) | {} | {} | {rel} | {} | {v} |",
                    m.name,
                    u.display,
                    cell(&r.model),
                    cell(&r.linux),
                    target(m)
                );
            }
            s.push('\n');
            if let Some(p) = plots {
                for (stem, _) in d.charts().iter().filter(|(stem, _)| stem.starts_with("cwnd-")) {
                    let _ = writeln!(s, "![{} {stem}]({p}/{}/{stem}.png)", e.name, crate::plot::file_stem(&e.name));
                }
                s.push('\n');
            }
        }
        s
    }

    /// The cwnd charts of every entry, as `(directory name, charts)`.
    pub fn charts(&self) -> Vec<(PathBuf, Vec<(String, crate::plot::Chart)>)> {
        self.entries
            .iter()
            .filter_map(|(e, d)| {
                let charts = d.as_ref().ok()?.charts().into_iter().filter(|(stem, _)| stem.starts_with("cwnd-"));
                Some((PathBuf::from(crate::plot::file_stem(&e.name)), charts.collect()))
            })
            .collect()
    }
}

/// GitHub's heading anchor for a name of `A-Z a-z 0-9 _ - .`.
fn anchor(name: &str) -> String {
    name.to_ascii_lowercase().chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest(text: &str) -> Result<Vec<Entry>> {
        let p = std::env::temp_dir().join(format!("tcplab-suite-{}-{}.toml", std::process::id(), text.len()));
        std::fs::write(&p, text).unwrap();
        let r = load_manifest(&p);
        let _ = std::fs::remove_file(&p);
        r
    }

    #[test]
    fn manifest_entries_and_their_errors() {
        let e = manifest(
            "[[scenario]]\nname = \"a\"\nfile = \"scenarios/x.toml\"\nset = [\"run.duration=1s\"]\nnote = \"n\"\n",
        )
        .unwrap();
        assert_eq!(e[0].set, ["run.duration=1s"]);
        assert!(e[0].metrics.is_empty(), "no metrics: the defaults");
        let e = manifest(
            "[[scenario]]\nname = \"a\"\nfile = \"f\"\nnote = \"n\"\nmetrics = [\"goodput\", \"pacing_rate_mean\"]\n",
        )
        .unwrap();
        assert_eq!(e[0].metrics, ["goodput", "pacing_rate_mean"]);
        let err =
            manifest("[[scenario]]\nname = \"a\"\nfile = \"f\"\nnote = \"n\"\nmetrics = \"goodput\"\n").unwrap_err();
        assert!(err.to_string().contains("metrics: an array of metric strings"), "{err}");
        let err = manifest("[[scenario]]\nname = \"a\"\nfile = \"f\"\nnote = \"n\"\nruns = 3\n").unwrap_err();
        assert!(err.to_string().contains("unknown key \"runs\""), "{err}");
        let err = manifest("[[scenario]]\nname = \"a\"\nnote = \"n\"\n").unwrap_err();
        assert!(err.to_string().contains("scenario[0]: file"), "{err}");
        let dup = "[[scenario]]\nname = \"a\"\nfile = \"f\"\nnote = \"n\"\n";
        let err = manifest(&format!("{dup}{dup}")).unwrap_err();
        assert!(err.to_string().contains("duplicate name"), "{err}");
    }

    #[test]
    fn pages_of_parts_point_to_each_other() {
        let entry = Entry {
            name: "bbr-1bdp".into(),
            file: "scenarios/bulk-bbr.toml".into(),
            set: Vec::new(),
            note: "n".into(),
            metrics: Vec::new(),
        };
        let r = SuiteResult { runs: 5, entries: vec![(entry, Err(Error::at("x", "not run")))] };
        let part = r.markdown("tcplab faithfulness --only bbr", None, &Scope::Only(vec!["bbr".into()]));
        assert!(part.contains("the scenarios of the suite whose name contains `bbr` on both backends"), "{part}");
        assert!(part.contains("the whole suite's page is docs/FAITHFULNESS.md"), "{part}");
        let whole =
            r.markdown("tcplab faithfulness", None, &Scope::Whole { parts: vec!["faithfulness-bbr.md".into()] });
        assert!(whole.contains("every scenario of the suite on both backends"), "{whole}");
        assert!(whole.contains("next to this one: [faithfulness-bbr.md](faithfulness-bbr.md)."), "{whole}");
        let alone = r.markdown("tcplab faithfulness", None, &Scope::Whole { parts: Vec::new() });
        assert!(!alone.contains("--only"), "{alone}");
    }

    #[test]
    fn anchors_follow_headings() {
        assert_eq!(anchor("reorder-5ms"), "reorder-5ms");
        assert_eq!(anchor("Two.Flows"), "twoflows");
    }
}
