//! Finished runs of `compare`, `reproduce` and `sweep`, written as they
//! finish, one JSON line each, so that an interrupted command loses no
//! finished run and `--resume FILE` runs only what is missing.
//!
//! # Format (JSON Lines)
//!
//! ```text
//! {"type":"run","data":{"scenario_hash":"fnv1a64:…","backend":"model","seed":3,
//!   "tcplab_version":"0.1.0","sim_s":10.0,"metrics":{"goodput":94120000.0}}}
//! ```
//!
//! A run is identified by its scenario hash (the file's text with every
//! override of its arm or point, [`crate::overrides::ScenarioText::hash`]),
//! backend, seed and tcplab version; it is reused only when its metrics
//! are exactly the ones asked for. So a journal can be resumed by the same
//! command only, and lines of other runs are ignored. A last line cut by a
//! crash is dropped when the journal is resumed. Values round-trip
//! exactly (shortest representation), so a resumed command prints what
//! an uninterrupted one would.
//!
//! Runs whose traces are needed (`--plot`, `--report`) are not journaled
//! and always run.

use crate::error::{Error, Result};
use crate::VERSION;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// One line.
#[derive(Serialize, Deserialize)]
struct Line {
    #[serde(rename = "type")]
    kind: String,
    data: RunLine,
}

#[derive(Clone, Serialize, Deserialize)]
struct RunLine {
    scenario_hash: String,
    backend: String,
    seed: u64,
    tcplab_version: String,
    sim_s: f64,
    metrics: BTreeMap<String, f64>,
}

/// What identifies a run: scenario hash, backend, seed.
type Key = (String, String, u64);

/// A run as the journal holds it: its seed, simulated seconds and one
/// value per metric of the batch, in the batch's order.
#[derive(Clone, Debug, PartialEq)]
pub struct JournaledRun {
    pub seed: u64,
    pub sim_s: f64,
    pub values: Vec<f64>,
}

/// An open journal: the runs read from it, and the file new runs go to.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    /// `--journal`/`--resume`, for messages.
    flag: String,
    done: HashMap<Key, (f64, BTreeMap<String, f64>)>,
    file: Mutex<std::fs::File>,
    /// Runs written by this command.
    written: Mutex<u64>,
}

impl Journal {
    /// Starts a new journal at `path`, which must not exist (resuming is
    /// `--resume`).
    pub fn create(flag: &str, path: &Path) -> Result<Journal> {
        let loc = format!("{flag} {}", path.display());
        let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path).map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                Error::at(&loc, "exists: continue it with --resume FILE, or give a new file")
            } else {
                Error::at(&loc, format!("cannot create: {e}"))
            }
        })?;
        Ok(Journal {
            path: path.to_path_buf(),
            flag: flag.into(),
            done: HashMap::new(),
            file: Mutex::new(file),
            written: Mutex::new(0),
        })
    }

    /// Opens `path` to continue it: reads its runs (a cut last line is
    /// dropped from the file), and appends new runs after them.
    pub fn resume(path: &Path) -> Result<Journal> {
        let loc = format!("--resume {}", path.display());
        let text = crate::input::read_text(path, "journal", crate::input::RESULTS_LIMIT)
            .map_err(|e| Error { location: Some(loc.clone()), ..e })?;
        // Whole lines only: a crash can leave the last one cut.
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let mut done = HashMap::new();
        for (i, l) in text[..whole].lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(l).map_err(|e| {
                Error::at(format!("{}:{}", path.display(), i + 1), format!("not a tcplab journal line: {e}"))
            })?;
            if line.kind != "run" {
                continue;
            }
            let r = line.data;
            if r.tcplab_version == VERSION {
                done.insert((r.scenario_hash, r.backend, r.seed), (r.sim_s, r.metrics));
            }
        }
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(whole as u64).map(|()| f))
            .map_err(|e| Error::at(&loc, format!("cannot write: {e}")))?;
        let mut file = file;
        use std::io::Seek;
        file.seek(std::io::SeekFrom::End(0)).map_err(|e| Error::at(&loc, format!("cannot write: {e}")))?;
        Ok(Journal {
            path: path.to_path_buf(),
            flag: "--resume".into(),
            done,
            file: Mutex::new(file),
            written: Mutex::new(0),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Runs read from the file.
    pub fn resumed(&self) -> usize {
        self.done.len()
    }

    /// Runs written by this command.
    pub fn written(&self) -> u64 {
        self.written.lock().map_or(0, |w| *w)
    }

    /// A journaled run with exactly `metrics`, if any.
    pub fn lookup(&self, scenario_hash: &str, backend: &str, seed: u64, metrics: &[String]) -> Option<JournaledRun> {
        let (sim_s, values) = self.done.get(&(scenario_hash.to_string(), backend.to_string(), seed))?;
        if values.len() != metrics.len() {
            return None;
        }
        let values = metrics.iter().map(|m| values.get(m).copied()).collect::<Option<Vec<f64>>>()?;
        Some(JournaledRun { seed, sim_s: *sim_s, values })
    }

    /// Appends a finished run (one whole line, flushed).
    pub fn append(&self, scenario_hash: &str, backend: &str, metrics: &[String], r: &JournaledRun) -> Result<()> {
        let line = Line {
            kind: "run".into(),
            data: RunLine {
                scenario_hash: scenario_hash.into(),
                backend: backend.into(),
                seed: r.seed,
                tcplab_version: VERSION.into(),
                sim_s: r.sim_s,
                metrics: metrics.iter().cloned().zip(r.values.iter().copied()).collect(),
            },
        };
        let mut text = serde_json::to_string(&line).map_err(|e| Error::msg(e.to_string()))?;
        text.push('\n');
        let loc = || format!("{} {}", self.flag, self.path.display());
        let mut f = self.file.lock().map_err(|_| Error::at(loc(), "journal lock poisoned"))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.flush())
            .map_err(|e| Error::at(loc(), format!("cannot write: {e}")))?;
        if let Ok(mut w) = self.written.lock() {
            *w += 1;
        }
        Ok(())
    }
}
