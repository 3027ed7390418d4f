//! Results of script runs: the in-memory [`ScriptResult`], its serde
//! record, and the text table and JSON Lines that `tcplab packetdrill`
//! prints.
//!
//! # Text output
//!
//! One line per script, then a summary:
//!
//! ```text
//! PASS  gtests/net/tcp/fast_retransmit/fr-4pkt.pkt
//! FAIL  gtests/net/tcp/sack/x.pkt:24: error handling packet: live packet field tcp_seq: expected: 1001 (0x3e9) vs actual: 1 (0x1) || script packet: ...
//! SKIP  gtests/net/tcp/mtu_probe/basic-v4.pkt: sysctl net.ipv4.tcp_mtu_probing=2 differs ...
//! 36 scripts: 27 passed, 6 failed, 3 skipped
//! ```
//!
//! A failure is worded as packetdrill words it (`<file>:<line>: <error>`);
//! multi-line errors are joined with ` || ` on one line, as in
//! LINUX-6.18-RESULTS.tsv. `--verbose` adds the notes, `print()` output
//! and the event trace under each script.
//!
//! # JSON output (`--json`)
//!
//! JSON Lines, each object a `{"type": ..., "data": ...}` envelope:
//! `{"type":"script","data":<ScriptRecord>}` per script, then
//! `{"type":"summary","data":{"total":N,"passed":P,"failed":F,"skipped":S}}`.
//! A [`ScriptRecord`] has `path`, `outcome` (`"pass"`, `"fail"`, `"skip"`),
//! `line` and `message` for failures, `reason` for skips, `virtual_secs`,
//! `notes` and `output`.

use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

/// How a script ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum Outcome {
    Pass,
    /// The script line and packetdrill's error text (for parse errors the
    /// text starts with the column: `11: parse error at ...`).
    Fail {
        line: u32,
        message: String,
    },
    /// The interpreter or the model lacks something the script needs; the
    /// reason names it.
    Skipped {
        reason: String,
    },
}

/// The result of one script.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScriptResult {
    pub path: PathBuf,
    pub outcome: Outcome,
    /// Virtual time the script ran for.
    pub duration_virtual: Duration,
    /// Approximations and ignored harness settings of this run.
    pub notes: Vec<String>,
    /// `print()` output of `%{ }%` blocks, and the event trace when verbose.
    pub output: Vec<String>,
}

/// Flat, serializable form of a [`ScriptResult`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScriptRecord {
    pub path: String,
    /// `"pass"`, `"fail"` or `"skip"`.
    pub outcome: &'static str,
    pub line: Option<u32>,
    pub message: Option<String>,
    pub reason: Option<String>,
    pub virtual_secs: f64,
    pub notes: Vec<String>,
    pub output: Vec<String>,
}

impl ScriptResult {
    pub fn passed(&self) -> bool {
        self.outcome == Outcome::Pass
    }
    pub fn failed(&self) -> bool {
        matches!(self.outcome, Outcome::Fail { .. })
    }
    pub fn skipped(&self) -> bool {
        matches!(self.outcome, Outcome::Skipped { .. })
    }

    pub fn record(&self) -> ScriptRecord {
        let (outcome, line, message, reason) = match &self.outcome {
            Outcome::Pass => ("pass", None, None, None),
            Outcome::Fail { line, message } => ("fail", Some(*line), Some(message.clone()), None),
            Outcome::Skipped { reason } => ("skip", None, None, Some(reason.clone())),
        };
        ScriptRecord {
            path: self.path.display().to_string(),
            outcome,
            line,
            message,
            reason,
            virtual_secs: self.duration_virtual.as_secs_f64(),
            notes: self.notes.clone(),
            output: self.output.clone(),
        }
    }

    /// The file name packetdrill prints before the line number.
    fn file_name(&self) -> String {
        self.path.display().to_string()
    }
}

impl fmt::Display for ScriptResult {
    /// One table line (see the module docs).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Pass => write!(f, "PASS  {}", self.file_name()),
            Outcome::Fail { line, message } => {
                write!(f, "FAIL  {}:{}: {}", self.file_name(), line, one_line(message))
            }
            Outcome::Skipped { reason } => write!(f, "SKIP  {}: {}", self.file_name(), one_line(reason)),
        }
    }
}

/// Joins the lines of a message with ` || `.
pub fn one_line(s: &str) -> String {
    s.lines().map(str::trim_end).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" || ")
}

/// Totals of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub total: usize,
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Summary {
    pub fn of(results: &[ScriptResult]) -> Summary {
        Summary {
            total: results.len(),
            passed: results.iter().filter(|r| r.passed()).count(),
            failed: results.iter().filter(|r| r.failed()).count(),
            skipped: results.iter().filter(|r| r.skipped()).count(),
        }
    }
}

impl fmt::Display for Summary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} scripts: {} passed, {} failed, {} skipped", self.total, self.passed, self.failed, self.skipped)
    }
}

/// The text table: one line per script (with notes and output indented
/// under it when `verbose`), then the summary line.
pub fn format_table(results: &[ScriptResult], verbose: bool) -> String {
    let mut s = String::new();
    for r in results {
        s.push_str(&r.to_string());
        s.push('\n');
        if verbose {
            if let Outcome::Fail { message, .. } = &r.outcome {
                for l in message.lines().skip(1) {
                    s.push_str(&format!("      | {l}\n"));
                }
            }
            for n in &r.notes {
                s.push_str(&format!("      note: {n}\n"));
            }
            for o in &r.output {
                s.push_str(&format!("      > {o}\n"));
            }
        }
    }
    s.push_str(&Summary::of(results).to_string());
    s.push('\n');
    s
}

#[derive(Serialize)]
struct Envelope<'a, T: Serialize> {
    #[serde(rename = "type")]
    kind: &'a str,
    data: T,
}

/// JSON Lines (see the module docs).
pub fn format_json_lines(results: &[ScriptResult]) -> String {
    let mut s = String::new();
    for r in results {
        let line = serde_json::to_string(&Envelope { kind: "script", data: r.record() }).unwrap_or_default();
        s.push_str(&line);
        s.push('\n');
    }
    let sum = serde_json::to_string(&Envelope { kind: "summary", data: Summary::of(results) }).unwrap_or_default();
    s.push_str(&sum);
    s.push('\n');
    s
}
