//! tcplab-packetdrill: runs packetdrill scripts (google/packetdrill's
//! `.pkt` language) against the tcplab TCP model in virtual time, and
//! reports pass, fail (worded as packetdrill words it) or skip (naming
//! what the interpreter or the model lacks).
//!
//! The pipeline, one module per stage:
//!
//! - [`lexer`] and [`parser`] turn the script into an [`ast::Script`]
//!   (errors carry line and column);
//! - [`harness`] interprets the back-quoted shell commands (sysctls via
//!   [`sysctl`], CUBIC module parameters, qdisc, routes) into a
//!   [`tcplab_core::TcpConfig`];
//! - [`plan`] decides before the run what would make it meaningless
//!   (unsupported options, socket options, `tcpi_*` fields, fq pacing) and
//!   turns it into a skip reason; it decodes each system call once into a
//!   [`syscall::Syscall`] (arguments through [`symbols`]) and keeps it;
//! - [`driver`] runs the events against an [`endpoint::Endpoint`] (the
//!   core's `Connection`), the plan's decoded system calls included,
//!   matching outbound packets with [`matcher`];
//! - [`python`] evaluates the `%{ }%` blocks at the end;
//! - [`report`] formats results (a table, or JSON Lines).
//!
//! The scripts are test data under GPLv2 and are never copied here: tests
//! and the CLI read them from `../shared/conformance/packetdrill`.
//! docs/CONFORMANCE.md describes what is supported.

pub mod ast;
pub mod driver;
pub mod endpoint;
pub mod harness;
pub mod lexer;
pub mod matcher;
pub mod parser;
pub mod plan;
pub mod python;
pub mod report;
pub mod symbols;
pub mod syscall;
pub mod sysctl;

pub use report::{format_json_lines, format_table, Outcome, ScriptRecord, ScriptResult, Summary};

use endpoint::{CoreFactory, EndpointFactory};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options of a run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// Record the event trace (inbound/outbound packets, system calls) in
    /// [`ScriptResult::output`].
    pub verbose: bool,
    /// Kernel `HZ` of the model (`TcpConfig::hz`); `None` keeps the
    /// model's default (1000, which the scripts assume).
    pub hz: Option<u32>,
    /// Outbound header fields not to compare, by packetdrill's field name
    /// (`tcp_psh`, `tcp_window`, `tcp_ack_seq`, ...). A diagnostic for
    /// seeing past a known model gap; results with it are not
    /// packetdrill-conformant and the run records a note saying so.
    pub ignore_fields: Vec<String>,
}

/// Whether Linux offers `hz`, as [`RunOptions::hz`] must; the error is
/// the rule, worded for a message.
pub fn check_hz(hz: u32) -> Result<(), String> {
    if tcplab_core::config::HZ_VALUES.contains(&hz) {
        Ok(())
    } else {
        Err(tcplab_core::config::hz_rule())
    }
}

/// Runs one script file with default options.
pub fn run_script(path: &Path) -> ScriptResult {
    run_script_with(path, &RunOptions::default())
}

/// Largest script or harness file read (bytes); Linux's are a few KB.
pub const MAX_FILE_BYTES: u64 = 16 << 20;

/// Reads a script or a file it sources: a regular file of UTF-8 text of
/// at most [`MAX_FILE_BYTES`], so that `/dev/zero` or a FIFO is refused at
/// once instead of read forever. (tcplab-lab's `input::read_text` does the
/// same for scenario files; this crate does not depend on the lab.)
pub fn read_file(path: &Path) -> Result<String, String> {
    use std::io::Read;
    const NOT_REGULAR: &str = "not a regular file (a device, FIFO or socket)";
    // Look before opening: opening a FIFO waits for a writer, forever if
    // none comes. The open file is checked again (it may have changed).
    if !std::fs::metadata(path).map_err(|e| e.to_string())?.is_file() {
        return Err(NOT_REGULAR.into());
    }
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if !file.metadata().map_err(|e| e.to_string())?.is_file() {
        return Err(NOT_REGULAR.into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes).map_err(|e| e.to_string())?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(format!("larger than {} MiB", MAX_FILE_BYTES >> 20));
    }
    String::from_utf8(bytes).map_err(|_| "not UTF-8 text".to_string())
}

/// Runs one script file.
pub fn run_script_with(path: &Path, opts: &RunOptions) -> ScriptResult {
    match read_file(path) {
        Ok(src) => run_source(&src, path, opts),
        Err(e) => ScriptResult {
            path: path.to_path_buf(),
            outcome: Outcome::Fail { line: 0, message: format!("cannot read script: {e}") },
            duration_virtual: Duration::ZERO,
            notes: Vec::new(),
            output: Vec::new(),
        },
    }
}

/// Runs script text; `path` names it in results and locates harness
/// files such as `../common/defaults.sh` (relative to its directory).
pub fn run_source(source: &str, path: &Path, opts: &RunOptions) -> ScriptResult {
    run_source_with(source, path, opts, &mut CoreFactory)
}

/// Runs script text against endpoints made by `factory`.
pub fn run_source_with(
    source: &str,
    path: &Path,
    opts: &RunOptions,
    factory: &mut dyn EndpointFactory,
) -> ScriptResult {
    let mut result = ScriptResult {
        path: path.to_path_buf(),
        outcome: Outcome::Pass,
        duration_virtual: Duration::ZERO,
        notes: Vec::new(),
        output: Vec::new(),
    };
    let script = match parser::parse(source) {
        Ok(s) => s,
        Err(e) => {
            result.outcome = Outcome::Fail { line: e.line, message: format!("{}: {}", e.col, e.message) };
            return result;
        }
    };
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut harness = harness::Harness::new(tcplab_core::TcpConfig::default(), &dir);
    let plan = plan::make_plan(&script, &mut harness);
    if !plan.skips.is_empty() {
        result.outcome = Outcome::Skipped { reason: plan.skips.join("; ") };
        result.notes = harness.notes.clone();
        return result;
    }
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        driver::Driver::new(&script, &plan, harness, factory, opts).run()
    }));
    match run {
        Ok(out) => {
            result.duration_virtual = Duration::from_micros(out.end_us.max(0) as u64);
            result.notes = out.notes;
            result.output = out.output;
            result.outcome = match out.result {
                Ok(()) => Outcome::Pass,
                Err(driver::Stop::Fail { line, message }) => Outcome::Fail { line, message },
                Err(driver::Stop::Skip(reason)) => Outcome::Skipped { reason },
            };
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".into());
            result.outcome = Outcome::Fail { line: 0, message: format!("model panicked: {msg}") };
        }
    }
    result
}

/// The `.pkt` files named by `paths`: files as given, directories
/// searched recursively; sorted, without duplicates.
pub fn collect_scripts(paths: &[PathBuf]) -> std::io::Result<Vec<PathBuf>> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let p = entry?.path();
            if p.is_dir() {
                walk(&p, out)?;
            } else if p.extension().is_some_and(|e| e == "pkt") {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            walk(p, &mut out)?;
        } else if p.is_file() {
            out.push(p.clone());
        } else if p.exists() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: not a regular file or directory (a device, FIFO or socket)", p.display()),
            ));
        } else {
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, format!("{} does not exist", p.display())));
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Runs every script under `paths` (see [`collect_scripts`]); a path that
/// does not exist yields one failed result naming it.
pub fn run_paths(paths: &[PathBuf]) -> Vec<ScriptResult> {
    run_paths_with(paths, &RunOptions::default())
}

/// [`run_paths`] with options.
pub fn run_paths_with(paths: &[PathBuf], opts: &RunOptions) -> Vec<ScriptResult> {
    match collect_scripts(paths) {
        Ok(scripts) => scripts.iter().map(|p| run_script_with(p, opts)).collect(),
        Err(e) => vec![ScriptResult {
            path: paths.first().cloned().unwrap_or_default(),
            outcome: Outcome::Fail { line: 0, message: e.to_string() },
            duration_virtual: Duration::ZERO,
            notes: Vec::new(),
            output: Vec::new(),
        }],
    }
}
