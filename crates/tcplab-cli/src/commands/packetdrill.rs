//! `tcplab packetdrill`: Linux's packetdrill scripts against the model,
//! against the real kernel (Linux's own packetdrill in a User-Mode Linux
//! guest, `tcplab_kernel::packetdrill`), or both side by side.

use crate::terminal::{emit, interactive, styled_bar};
use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tcplab_kernel::packetdrill::{self as kpd, Runner, TunAddresses, Verdict};
use tcplab_lab::{Error, EXIT_CHECK_FAILED, EXIT_OK};
use tcplab_packetdrill::report::one_line;
use tcplab_packetdrill::{Outcome, ScriptResult, Summary};

#[derive(Args, Debug)]
pub(crate) struct PacketdrillArgs {
    /// .pkt files, and directories searched recursively for them.
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
    /// model (the TCP model, default), linux (Linux's own packetdrill against the
    /// kernel in a User-Mode Linux guest, in virtual time; `tcplab kernel build`
    /// once first) or both (side by side, with the first line where they part).
    #[arg(long, value_name = "model|linux|both", default_value = "model")]
    backend: String,
    /// Print JSON Lines: {"type":"script","data":{...}} per script, then
    /// {"type":"summary","data":{...}}.
    #[arg(long, conflicts_with = "markdown")]
    json: bool,
    /// Print a Markdown table: per topic the pass counts, then every script's
    /// outcome per backend and HZ, then each difference (docs/CONFORMANCE.md).
    #[arg(long)]
    markdown: bool,
    /// Notes, print() output and the event trace under each script (on linux:
    /// packetdrill's stdout and stderr).
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Kernel HZ: 100, 250 (the default), 300 or 1000: the model's, and on linux
    /// the newest image built at that HZ (`tcplab kernel build --hz N`). With
    /// --markdown repeatable (--hz 250 --hz 1000: one column per HZ).
    #[arg(long, value_name = "N")]
    hz: Vec<u32>,
    /// Diagnostic: do not compare this outbound field (tcp_psh, tcp_window, ...) on
    /// the model; such results are not packetdrill-conformant. Repeatable.
    #[arg(long = "ignore-field", value_name = "NAME")]
    ignore_field: Vec<String>,
    /// Kernel image for linux: a key (or prefix) or name from `tcplab kernel list`,
    /// or an image directory. Default: the newest built for this host at --hz
    /// (250), from Debian's source if there is one.
    #[arg(long, value_name = "IMAGE")]
    kernel: Option<String>,
    /// packetdrill's C sources (built once into the cache). Default: the
    /// gtests/net/packetdrill directory that comes with the scripts.
    #[arg(long, value_name = "DIR")]
    packetdrill: Option<PathBuf>,
    /// Guests at a time on linux (each runs its share of the scripts one after
    /// another); default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// Wall-clock seconds a guest may go without finishing a script (its boot
    /// included) before it is killed and that script fails.
    #[arg(long, value_name = "SECS", default_value_t = 300.0)]
    max_wall: f64,
    /// Addresses on packetdrill's tun device in the guest: auto (198.18.0.1 and
    /// 198.19.0.1, except for scripts that name packetdrill's own) or packetdrill
    /// (run_all.py's 192.168.0.1 and 192.0.2.1 for every script).
    #[arg(long, value_name = "auto|packetdrill", default_value = "auto")]
    tun_addresses: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Which {
    Model,
    Linux,
    Both,
}

/// One backend's results at one HZ.
struct Column {
    /// `model` or `linux-6.12.118`.
    backend: String,
    hz: Option<u32>,
    results: Vec<ScriptResult>,
}

pub(crate) fn run(a: PacketdrillArgs) -> Result<ExitCode, Error> {
    let which = match a.backend.as_str() {
        "model" => Which::Model,
        "linux" => Which::Linux,
        "both" => Which::Both,
        other => return Err(Error::at("--backend", format!("{other:?}: expected model, linux or both"))),
    };
    for &hz in &a.hz {
        tcplab_packetdrill::check_hz(hz).map_err(|rule| Error::at(format!("--hz {hz}"), rule))?;
    }
    if a.hz.len() > 1 && !a.markdown {
        return Err(Error::at("--hz", "give one value, or several with --markdown (one column per HZ)"));
    }
    if !(a.max_wall.is_finite() && a.max_wall > 0.0 && a.max_wall < 1e9) {
        return Err(Error::at("--max-wall", format!("{}: give a positive number of seconds", a.max_wall)));
    }
    let addresses = TunAddresses::parse(&a.tun_addresses).map_err(|e| Error::at("--tun-addresses", e))?;
    if which == Which::Model {
        for (flag, given) in [("--kernel", a.kernel.is_some()), ("--packetdrill", a.packetdrill.is_some())] {
            if given {
                return Err(Error::at(flag, "applies to the kernel: add --backend linux or --backend both"));
            }
        }
    }
    if a.jobs == Some(0) {
        return Err(Error::at("--jobs", "0: give at least 1"));
    }
    let scripts = tcplab_packetdrill::collect_scripts(&a.paths).map_err(|e| Error::msg(e.to_string()))?;
    if scripts.is_empty() {
        let paths: Vec<String> = a.paths.iter().map(|p| p.display().to_string()).collect();
        return Err(Error::msg(format!("no .pkt scripts under {}", paths.join(", "))));
    }
    let hzs: Vec<Option<u32>> = if a.hz.is_empty() { vec![None] } else { a.hz.iter().copied().map(Some).collect() };
    let mut columns: Vec<Column> = Vec::new();
    for hz in hzs {
        let mut model_hz = hz;
        let mut linux_col = None;
        if which != Which::Model {
            let col = run_linux(&a, &scripts, hz, addresses)?;
            // The model runs at the kernel's HZ, so the two compare.
            model_hz = col.hz;
            linux_col = Some(col);
        }
        let model_col = (which != Which::Linux).then(|| {
            let opts = tcplab_packetdrill::RunOptions {
                verbose: a.verbose,
                hz: model_hz,
                ignore_fields: a.ignore_field.clone(),
            };
            let results = scripts.iter().map(|p| tcplab_packetdrill::run_script_with(p, &opts)).collect();
            Column { backend: "model".into(), hz: model_hz, results }
        });
        // Linux first in every side-by-side view.
        columns.extend(linux_col);
        columns.extend(model_col);
    }
    let failed = columns.iter().any(|c| c.results.iter().any(ScriptResult::failed));
    let text = if a.markdown {
        markdown(&columns, &scripts)
    } else if which == Which::Both {
        let (linux, model) = (&columns[0], &columns[1]);
        if a.json {
            both_json(linux, model)
        } else {
            both_table(linux, model, a.verbose)
        }
    } else {
        let c = &columns[0];
        if a.json {
            let mut s = String::new();
            if c.backend != "model" {
                let head = serde_json::json!({"type": "backend", "data": {"backend": c.backend, "hz": c.hz}});
                s.push_str(&head.to_string());
                s.push('\n');
            }
            s.push_str(&tcplab_packetdrill::format_json_lines(&c.results));
            s
        } else {
            let mut s = tcplab_packetdrill::format_table(&c.results, a.verbose);
            if c.backend != "model" {
                s.push_str(&format!("backend: {} at HZ {}\n", c.backend, c.hz.unwrap_or_default()));
            }
            s
        }
    };
    emit(&text)?;
    Ok(ExitCode::from(if failed { EXIT_CHECK_FAILED } else { EXIT_OK }))
}

/// The scripts on the kernel at `hz` (or the image's HZ).
fn run_linux(
    a: &PacketdrillArgs,
    scripts: &[PathBuf],
    hz: Option<u32>,
    addresses: TunAddresses,
) -> Result<Column, Error> {
    let kerr = |e: tcplab_kernel::KernelError| Error::msg(e.to_string());
    let image = match (&a.kernel, hz) {
        (Some(k), _) => tcplab_kernel::image::select(Some(k)).map_err(|e| Error::at("--kernel", e.to_string()))?,
        (None, Some(hz)) => kpd::image_for_hz(hz).map_err(|e| Error::at("--hz", e.to_string()))?,
        (None, None) => {
            kpd::image_for_hz(kpd::default_hz()).or_else(|_| tcplab_kernel::image::select(None)).map_err(kerr)?
        }
    };
    if let Some(hz) = hz {
        if image.meta.hz != hz {
            return Err(Error::at(
                "--kernel",
                format!("image {} is built at HZ {}, not --hz {hz}", image.meta.key, image.meta.hz),
            ));
        }
    }
    let src = match &a.packetdrill {
        Some(d) => d.clone(),
        None => kpd::find_source(scripts).ok_or_else(|| {
            Error::at(
                "--packetdrill",
                "no packetdrill sources beside the scripts (an ancestor directory with packetdrill/run.c): \
                 give --packetdrill DIR (google/packetdrill's gtests/net/packetdrill)",
            )
        })?,
    };
    let tool = kpd::tool(&src, &|what| {
        if interactive() {
            eprintln!("tcplab: {what}");
        }
    })
    .map_err(|e| Error::at("--packetdrill", e.to_string()))?;
    let agent = tcplab_kernel::find_agent().map_err(kerr)?;
    // SIGINT or SIGTERM: end the guests (each in a process group of its
    // own) with tcplab, rather than leave them running.
    let _ = ctrlc::set_handler(|| {
        kpd::kill_guests();
        std::process::exit(i32::from(tcplab_lab::interrupt::EXIT_INTERRUPTED));
    });
    let guests = a.jobs.unwrap_or_else(tcplab_kernel::host::cores);
    let runner = Runner {
        image: image.clone(),
        agent,
        tool,
        guests,
        stall_limit: Duration::from_secs_f64(a.max_wall),
        addresses,
        mem_mb: 512,
    };
    let bar = interactive().then(|| {
        styled_bar(scripts.len() as u64, "{pos}/{len} scripts", format!("packetdrill on linux HZ {}", image.meta.hz))
    });
    let (runs, release) = runner
        .run(scripts, &|_| {
            if let Some(b) = &bar {
                b.inc(1);
            }
        })
        .map_err(kerr)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    let backend = if release.is_empty() { image.label() } else { format!("linux-{release}") };
    let results = runs.into_iter().map(|r| script_result(r, a.verbose)).collect();
    Ok(Column { backend, hz: Some(image.meta.hz), results })
}

/// A kernel run in the model's result type.
fn script_result(r: kpd::ScriptRun, verbose: bool) -> ScriptResult {
    let outcome = match r.verdict {
        Verdict::Pass => Outcome::Pass,
        Verdict::Fail { line, message } => Outcome::Fail { line, message },
        Verdict::Skip { reason } => Outcome::Skipped { reason },
    };
    let mut notes = Vec::new();
    if r.addresses == Some(kpd::PACKETDRILL_ADDRESSES) {
        notes.push("ran with packetdrill's own addresses (192.168.0.1, remote 192.0.2.1)".to_string());
    }
    let mut output = Vec::new();
    if verbose {
        output.extend(r.stdout.lines().map(|l| format!("stdout: {l}")));
        output.extend(r.stderr.lines().map(|l| format!("stderr: {l}")));
    }
    ScriptResult {
        path: r.path,
        outcome,
        duration_virtual: Duration::from_secs_f64(r.virtual_secs.max(0.0)),
        notes,
        output,
    }
}

/// `PASS`, `FAIL`, `SKIP`.
fn word(o: &Outcome) -> &'static str {
    match o {
        Outcome::Pass => "PASS",
        Outcome::Fail { .. } => "FAIL",
        Outcome::Skipped { .. } => "SKIP",
    }
}

/// Whether two outcomes are the same: both pass, both skip, or both fail
/// at the same line.
fn same(a: &Outcome, b: &Outcome) -> bool {
    match (a, b) {
        (Outcome::Pass, Outcome::Pass) | (Outcome::Skipped { .. }, Outcome::Skipped { .. }) => true,
        (Outcome::Fail { line: x, .. }, Outcome::Fail { line: y, .. }) => x == y,
        _ => false,
    }
}

/// Where a backend went its own way: its failing line and error, or that
/// it passed / skipped.
fn departure(o: &Outcome) -> String {
    match o {
        Outcome::Pass => "passed".into(),
        Outcome::Fail { line, message } => format!(":{line}: {}", one_line(message)),
        Outcome::Skipped { reason } => format!("skipped: {}", one_line(reason)),
    }
}

fn both_table(linux: &Column, model: &Column, verbose: bool) -> String {
    let mut s = String::from("LINUX  MODEL  SCRIPT\n");
    let mut differ = 0;
    for (l, m) in linux.results.iter().zip(&model.results) {
        s.push_str(&format!("{:<6} {:<6} {}\n", word(&l.outcome), word(&m.outcome), l.path.display()));
        if !same(&l.outcome, &m.outcome) {
            differ += 1;
            s.push_str(&format!("       linux {}\n", departure(&l.outcome)));
            s.push_str(&format!("       model {}\n", departure(&m.outcome)));
        }
        if verbose {
            for (who, r) in [("linux", l), ("model", m)] {
                for n in &r.notes {
                    s.push_str(&format!("       {who} note: {n}\n"));
                }
                for o in &r.output {
                    s.push_str(&format!("       {who} > {o}\n"));
                }
            }
        }
    }
    let (ls, ms) = (Summary::of(&linux.results), Summary::of(&model.results));
    s.push_str(&format!(
        "{} scripts: {} ({} passed, {} failed, {} skipped), model at HZ {} ({} passed, {} failed, {} skipped); \
         {} the same, {} different\n",
        ls.total,
        linux.backend,
        ls.passed,
        ls.failed,
        ls.skipped,
        model.hz.unwrap_or_default(),
        ms.passed,
        ms.failed,
        ms.skipped,
        ls.total - differ,
        differ
    ));
    s
}

fn both_json(linux: &Column, model: &Column) -> String {
    let mut s = String::new();
    let mut differ = 0;
    for (l, m) in linux.results.iter().zip(&model.results) {
        let is_same = same(&l.outcome, &m.outcome);
        differ += usize::from(!is_same);
        let line = serde_json::json!({"type": "script", "data": {
            "path": l.path.display().to_string(),
            "linux": l.record(),
            "model": m.record(),
            "same": is_same,
        }});
        s.push_str(&line.to_string());
        s.push('\n');
    }
    let (ls, ms) = (Summary::of(&linux.results), Summary::of(&model.results));
    let sum = serde_json::json!({"type": "summary", "data": {
        "linux": {"backend": linux.backend, "hz": linux.hz, "total": ls.total, "passed": ls.passed, "failed": ls.failed, "skipped": ls.skipped},
        "model": {"hz": model.hz, "total": ms.total, "passed": ms.passed, "failed": ms.failed, "skipped": ms.skipped},
        "same": ls.total - differ,
        "different": differ,
    }});
    s.push_str(&sum.to_string());
    s.push('\n');
    s
}

/// The scripts' paths relative to their deepest common directory that
/// holds them in subdirectories (`sack/x.pkt` for Linux's `tcp/` tree,
/// and for the `sack/` directory alone).
fn short_names(scripts: &[PathBuf]) -> Vec<String> {
    let abs: Vec<PathBuf> = scripts.iter().map(|p| p.canonicalize().unwrap_or_else(|_| p.clone())).collect();
    let mut common: Option<PathBuf> = abs.first().and_then(|p| p.parent().map(Path::to_path_buf));
    for p in &abs {
        while let Some(c) = &common {
            if p.starts_with(c) {
                break;
            }
            common = c.parent().map(Path::to_path_buf);
        }
    }
    // A script directly in the common directory: name it from one level
    // up, so that every name starts with a topic directory.
    if abs.iter().any(|p| p.parent() == common.as_deref()) {
        common = common.and_then(|c| c.parent().map(Path::to_path_buf));
    }
    abs.iter()
        .map(|p| match &common {
            Some(c) => p.strip_prefix(c).unwrap_or(p).display().to_string(),
            None => p.display().to_string(),
        })
        .collect()
}

/// The first directory of a short name (its topic), or "." for a script
/// at the top.
fn topic(name: &str) -> String {
    match name.split_once('/') {
        Some((t, _)) => t.to_string(),
        None => ".".to_string(),
    }
}

fn cell(o: &Outcome) -> String {
    match o {
        Outcome::Pass => "pass".into(),
        Outcome::Fail { line, .. } => format!("fail :{line}"),
        Outcome::Skipped { .. } => "skip".into(),
    }
}

fn heading(c: &Column) -> String {
    let who = if c.backend == "model" { "model".to_string() } else { c.backend.replace("linux-", "Linux ") };
    match c.hz {
        Some(hz) => format!("{who} HZ {hz}"),
        None => who,
    }
}

fn clip(s: &str, n: usize) -> String {
    let s = one_line(s).replace('|', "\\|");
    if s.chars().count() <= n {
        s
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

/// The Markdown table of docs/CONFORMANCE.md (see `--markdown`).
fn markdown(columns: &[Column], scripts: &[PathBuf]) -> String {
    let names = short_names(scripts);
    let mut s = String::new();
    // Per topic: scripts, then per column the passes; for a model column
    // next to a Linux column of the same HZ also how many of Linux's
    // passes it passes.
    let mut topics: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, n) in names.iter().enumerate() {
        topics.entry(topic(n)).or_default().push(i);
    }
    let linux_at = |hz: Option<u32>| columns.iter().find(|c| c.backend != "model" && c.hz == hz);
    s.push_str("| topic | scripts |");
    for c in columns {
        if c.backend == "model" && linux_at(c.hz).is_some() {
            s.push_str(&format!(" {} passes (of Linux's passes) |", heading(c)));
        } else {
            s.push_str(&format!(" {} passes |", heading(c)));
        }
    }
    s.push_str("\n|---|---:|");
    s.push_str(&"---:|".repeat(columns.len()));
    s.push('\n');
    let mut rows: Vec<(String, Vec<usize>)> = topics.into_iter().collect();
    rows.push(("**all**".to_string(), (0..names.len()).collect()));
    for (t, idx) in &rows {
        s.push_str(&format!("| {t} | {} |", idx.len()));
        for c in columns {
            let passed = idx.iter().filter(|&&i| c.results[i].passed()).count();
            match linux_at(c.hz).filter(|_| c.backend == "model") {
                Some(l) => {
                    let of: Vec<usize> = idx.iter().copied().filter(|&i| l.results[i].passed()).collect();
                    let both = of.iter().filter(|&&i| c.results[i].passed()).count();
                    s.push_str(&format!(" {passed} ({both} of {}) |", of.len()));
                }
                None => s.push_str(&format!(" {passed} |")),
            }
        }
        s.push('\n');
    }
    s.push_str("\n| script |");
    for c in columns {
        s.push_str(&format!(" {} |", heading(c)));
    }
    s.push_str("\n|---|");
    s.push_str(&"---|".repeat(columns.len()));
    s.push('\n');
    for (i, n) in names.iter().enumerate() {
        s.push_str(&format!("| {n} |"));
        for c in columns {
            s.push_str(&format!(" {} |", cell(&c.results[i].outcome)));
        }
        s.push('\n');
    }
    // Each difference between a Linux column and the model at its HZ.
    let mut diffs = String::new();
    for m in columns.iter().filter(|c| c.backend == "model") {
        let Some(l) = linux_at(m.hz) else { continue };
        for (i, n) in names.iter().enumerate() {
            let (lo, mo) = (&l.results[i].outcome, &m.results[i].outcome);
            if !same(lo, mo) {
                diffs.push_str(&format!(
                    "| {n} | {} | {} | {} |\n",
                    m.hz.map_or(String::new(), |h| h.to_string()),
                    clip(&departure(lo), 160),
                    clip(&departure(mo), 160)
                ));
            }
        }
    }
    if !diffs.is_empty() {
        s.push_str("\n| script | HZ | Linux | model |\n|---|---:|---|---|\n");
        s.push_str(&diffs);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn res(path: &str, o: Outcome) -> ScriptResult {
        ScriptResult {
            path: PathBuf::from(path),
            outcome: o,
            duration_virtual: Duration::ZERO,
            notes: vec![],
            output: vec![],
        }
    }

    #[test]
    fn outcomes_are_the_same_only_at_the_same_line() {
        let f = |line| Outcome::Fail { line, message: "x".into() };
        assert!(same(&Outcome::Pass, &Outcome::Pass));
        assert!(same(&f(3), &f(3)));
        assert!(!same(&f(3), &f(4)));
        assert!(!same(&Outcome::Pass, &f(4)));
    }

    #[test]
    fn the_markdown_counts_the_models_passes_of_linuxs() {
        let scripts = vec![PathBuf::from("/t/tcp/sack/a.pkt"), PathBuf::from("/t/tcp/sack/b.pkt")];
        let fail = Outcome::Fail { line: 9, message: "boom | x".into() };
        let linux = Column {
            backend: "linux-6.12.118".into(),
            hz: Some(250),
            results: vec![res("/t/tcp/sack/a.pkt", Outcome::Pass), res("/t/tcp/sack/b.pkt", Outcome::Pass)],
        };
        let model = Column {
            backend: "model".into(),
            hz: Some(250),
            results: vec![res("/t/tcp/sack/a.pkt", Outcome::Pass), res("/t/tcp/sack/b.pkt", fail)],
        };
        let md = markdown(&[linux, model], &scripts);
        assert!(md.contains("| sack | 2 | 2 | 1 (1 of 2) |"), "{md}");
        assert!(md.contains("| sack/b.pkt | pass | fail :9 |"), "{md}");
        assert!(md.contains("| sack/b.pkt | 250 | passed | :9: boom \\| x |"), "{md}");
    }
}
