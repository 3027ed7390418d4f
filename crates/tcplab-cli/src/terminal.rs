//! Terminal behaviour, decided in one place: progress bars and chatter on
//! stderr for a person at a terminal, data on stdout.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use tcplab_lab::backend::Backend;
use tcplab_lab::batch::{self, Progress, Quiet};
use tcplab_lab::runner;
use tcplab_lab::{Error, EXIT_OK};

/// Whether to draw a progress bar and chatter on stderr: only for a person
/// at a terminal. Data on stdout (JSON too) is not affected, so `--json`
/// does not turn progress off: a long run piped into a program still
/// shows a person at the terminal how far it is.
pub(crate) fn interactive() -> bool {
    std::io::stderr().is_terminal() && std::env::var("TERM").map_or(true, |t| t != "dumb")
}

/// Runs estimated to take longer than this (wall clock) are warned about.
pub(crate) const LONG_RUN: std::time::Duration = std::time::Duration::from_secs(600);

/// Warns on stderr (always: also in a pipe) when `runs` model runs of
/// `sc` on `jobs` threads are estimated to take longer than [`LONG_RUN`].
pub(crate) fn warn_if_long(sc: &tcplab_lab::Scenario, backend: &Backend, runs: u64, jobs: usize) {
    let Backend::Model { max_wall } = backend else { return };
    let one = runner::wall_estimate(sc);
    let waves = runs.div_ceil(batch::worker_threads(jobs, runs as usize).max(1) as u64).max(1);
    let total = one.saturating_mul(u32::try_from(waves).unwrap_or(u32::MAX));
    if total > LONG_RUN {
        let limit = match max_wall {
            Some(w) => format!("--max-wall {} stops each run after that many seconds", w.as_secs_f64()),
            None => "--max-wall SECS limits each run".into(),
        };
        eprintln!(
            "tcplab: warning: {} simulated per run x {runs} run(s) may take up to about {} of wall-clock time \
             (estimated from the links' rates); {limit}",
            tcplab_lab::units::format_time(sc.sim.duration),
            human_wall(total)
        );
    }
}

/// `3.2 hours`, `41 days`.
pub(crate) fn human_wall(d: std::time::Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 3600.0 => format!("{:.0} minutes", s / 60.0),
        s if s < 86400.0 * 2.0 => format!("{:.1} hours", s / 3600.0),
        s if s < 86400.0 * 365.0 * 2.0 => format!("{:.0} days", s / 86400.0),
        s => format!("{:.0} years", s / (86400.0 * 365.25)),
    }
}

/// A progress bar on stderr (indicatif).
pub(crate) struct Bar(indicatif::ProgressBar);

impl Progress for Bar {
    fn start(&self, total: u64) {
        self.0.set_length(total);
    }
    fn inc(&self) {
        self.0.inc(1);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// The progress display for a batch of runs.
pub(crate) fn progress(what: &str) -> Box<dyn Progress> {
    if !interactive() {
        return Box::new(Quiet);
    }
    Box::new(Bar(styled_bar(0, "{pos}/{len} runs", what.to_string())))
}

/// A progress bar for one run: per mille of the simulated duration.
pub(crate) fn sim_time_bar(message: String) -> indicatif::ProgressBar {
    styled_bar(1000, "{percent}% of simulated time", message)
}

/// A bar on stderr in the project's style: `message [====>   ] counts,
/// elapsed, eta`, coloured unless `NO_COLOR` is set.
pub(crate) fn styled_bar(len: u64, counts: &str, message: String) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    let colour = if std::env::var_os("NO_COLOR").is_some() { "" } else { ".cyan/blue" };
    let template = format!("{{msg}} [{{bar:30{colour}}}] {counts}, {{elapsed}}, eta {{eta}}");
    if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// The command line, quoted for a shell, for reports.
pub(crate) fn command_line() -> String {
    let quote = |a: &str| {
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "_./=:,@%+-".contains(c)) {
            a.to_string()
        } else {
            format!("'{}'", a.replace('\'', "'\\''"))
        }
    };
    let mut v = vec!["tcplab".to_string()];
    v.extend(std::env::args().skip(1).map(|a| quote(&a)));
    v.join(" ")
}

/// Writes data to stdout. A closed pipe (`tcplab ... | head`) is success.
pub(crate) fn emit(s: &str) -> Result<ExitCode, Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(s.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(ExitCode::from(EXIT_OK)),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(EXIT_OK)),
        Err(e) => Err(Error::at("stdout", format!("cannot write: {e}"))),
    }
}
