//! The real kernel's column of a reproduction: each kernel arm's summaries,
//! set beside the patch's numbers and the model's.
//!
//! Kernel runs take minutes, so `tcplab reproduce NAME` (the model, the
//! README's first command) does not run them: it quotes the committed
//! results file `results/linux/NAME.json`, which is the JSON output of
//! `tcplab reproduce NAME --backend linux --json` (see
//! `results/README.md`). `--backend both` fills the column from the runs
//! it just made instead.

use super::Reproduction;
use crate::compare::Comparison;
use crate::error::{Error, Result};
use crate::stats::Summary;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The kernel's runs of one experiment, reduced to what the tables show.
#[derive(Clone, Debug, Serialize)]
pub struct KernelColumn {
    /// The kernel that ran them (`linux-6.12.117`).
    pub kernel: String,
    /// Where the figures come from: "this run" or the results file.
    pub source: String,
    /// Kernel arms in their order.
    pub arms: Vec<KernelArm>,
}

#[derive(Clone, Debug, Serialize)]
pub struct KernelArm {
    pub name: String,
    pub runs: usize,
    /// Per metric; a metric with no runs is absent.
    pub summary: BTreeMap<String, Summary>,
}

/// The committed results file of experiment `name` under `root`.
pub fn results_path(root: &Path, name: &str) -> PathBuf {
    root.join("results").join("linux").join(format!("{name}.json"))
}

/// The subset of `reproduce --json` read back.
#[derive(Deserialize)]
struct SavedReproduction {
    experiment: SavedExperiment,
    arms: Vec<SavedArm>,
}

#[derive(Deserialize)]
struct SavedExperiment {
    name: String,
}

#[derive(Deserialize)]
struct SavedArm {
    name: String,
    backend: String,
    runs: Vec<serde_json::Value>,
    summary: BTreeMap<String, Option<Summary>>,
}

impl KernelColumn {
    /// The column of kernel runs made by this invocation.
    pub fn from_comparison(c: &Comparison) -> KernelColumn {
        let arms = c
            .arms
            .iter()
            .map(|a| KernelArm {
                name: a.name.clone(),
                runs: a.runs.len(),
                summary: c
                    .metrics
                    .iter()
                    .zip(&a.summary)
                    .filter_map(|(m, s)| Some((m.name.clone(), s.clone()?)))
                    .collect(),
            })
            .collect();
        let kernel = c.arms.first().map_or_else(String::new, |a| a.backend.clone());
        KernelColumn { kernel, source: "this run".into(), arms }
    }

    /// Reads the committed results of experiment `name`; `Ok(None)` when
    /// there are none. A file that is there but unreadable is an error
    /// naming it: a stale or edited file must not be quoted silently.
    pub fn load(path: &Path, name: &str) -> Result<Option<KernelColumn>> {
        let shown = path.display().to_string();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::at(&shown, format!("cannot read: {e}"))),
        };
        let saved: SavedReproduction = serde_json::from_str(text.trim()).map_err(|e| {
            Error::at(
                format!("{shown}:{}:{}", e.line(), e.column()),
                format!("not the JSON of `tcplab reproduce --json`: {e}"),
            )
        })?;
        if saved.experiment.name != name {
            return Err(Error::at(&shown, format!("holds experiment {:?}, not {name:?}", saved.experiment.name)));
        }
        let Some(kernel) = saved.arms.first().map(|a| a.backend.clone()) else {
            return Err(Error::at(&shown, "no arms"));
        };
        if kernel == "model" || saved.arms.iter().any(|a| a.backend != kernel) {
            return Err(Error::at(&shown, "not the runs of one kernel: write it with --backend linux"));
        }
        let arms = saved
            .arms
            .into_iter()
            .map(|a| KernelArm {
                name: a.name,
                runs: a.runs.len(),
                summary: a.summary.into_iter().filter_map(|(k, v)| Some((k, v?))).collect(),
            })
            .collect();
        Ok(Some(KernelColumn { kernel, source: shown, arms }))
    }

    /// Kernel arm `arm`'s summary of `metric`.
    pub fn summary(&self, arm: &str, metric: &str) -> Option<&Summary> {
        self.arms.iter().find(|a| a.name == arm)?.summary.get(metric)
    }
}

impl Reproduction<'_> {
    /// The kernel arm set against the patch's arm `patch_arm`.
    pub(super) fn kernel_arm(&self, patch_arm: &str) -> Option<&KernelArm> {
        self.linux.as_ref()?.arms.iter().find(|a| self.reference_arm(&a.name) == patch_arm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, text: &str) -> PathBuf {
        let p = dir.join("x.json");
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn a_missing_file_is_no_column_and_a_bad_one_an_error_naming_it() {
        let dir = std::env::temp_dir().join(format!("tcplab-kcol-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert!(KernelColumn::load(&dir.join("none.json"), "x").unwrap().is_none());
        let p = write(&dir, "{\"experiment\": 3}");
        let e = KernelColumn::load(&p, "x").unwrap_err().to_string();
        assert!(e.contains("x.json:1:"), "{e}");
        let model = r#"{"experiment":{"name":"x"},"arms":[{"name":"a","backend":"model","runs":[],"summary":{}}]}"#;
        let e = KernelColumn::load(&write(&dir, model), "x").unwrap_err().to_string();
        assert!(e.contains("--backend linux"), "{e}");
        let other = r#"{"experiment":{"name":"y"},"arms":[]}"#;
        let e = KernelColumn::load(&write(&dir, other), "x").unwrap_err().to_string();
        assert!(e.contains("\"y\""), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_check_reads_each_sides_statistic_from_its_kernel_arm() {
        use super::super::{ArmStat, Check};
        let s = |min: f64, median: f64| Summary {
            n: 3,
            min,
            median,
            mean: median,
            max: median,
            ci95: [min, median],
            groups: None,
        };
        let arm = |name: &str, summary: Summary| KernelArm {
            name: name.into(),
            runs: 3,
            summary: [("goodput".to_string(), summary)].into_iter().collect(),
        };
        let col = KernelColumn {
            kernel: "linux".into(),
            source: "t".into(),
            arms: vec![arm("off", s(15.0, 150.0)), arm("on", s(240.0, 250.0))],
        };
        let check = |num, den| Check::Ratio { metric: "goodput", num, den, min: 1.5, max: f64::INFINITY };
        let value = |c: Check| c.value(true, |a| col.summary(a, "goodput"));
        // Worst run of "on" over worst run of "off"; the model's arm names are not the kernel's.
        assert_eq!(value(check(ArmStat::min("m-on", "on"), ArmStat::min("m-off", "off"))), Some(16.0));
        assert_eq!(value(check(ArmStat::min("m-on", "on"), ArmStat::median("m-on", "on"))), Some(0.96));
        assert_eq!(value(check(ArmStat::min("m-on", "nosuch"), ArmStat::min("m-off", "off"))), None);
        assert!(col.summary("on", "other").is_none());
    }
}
