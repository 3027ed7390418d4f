//! The one place that knows whether the user interrupted the command
//! (SIGINT or SIGTERM; the CLI's signal handler calls [`request`]).
//!
//! Long work polls [`requested`] at safe points, so that it stops with
//! everything on disk whole: a batch between runs (every finished run is
//! in its journal), a run between two slices of simulated time (its pcap
//! files then end on a whole record). The work then returns
//! [`interrupted`], an error; the CLI removes partial outputs as for any
//! failure and exits with [`EXIT_INTERRUPTED`].

use crate::error::Error;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Exit code after an interruption: 128 + SIGINT, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long after the first signal a second one ends the process at once.
/// Sooner, it is the same request again: `timeout -s INT` signals the
/// process and then its group, and a double Ctrl-C is one intention; a
/// graceful stop takes well under this.
pub const FORCE_AFTER: Duration = Duration::from_secs(1);

/// When the first request came; set once, so it also says whether one came.
static FIRST: OnceLock<Instant> = OnceLock::new();

/// Asks running work to stop at its next safe point. Returns `true` when
/// the caller should end the process now instead: the work was already
/// asked at least [`FORCE_AFTER`] ago and has not stopped. Called from the
/// signal-handling thread, not from a signal handler.
pub fn request() -> bool {
    let mut again = true;
    let first = *FIRST.get_or_init(|| {
        again = false;
        Instant::now()
    });
    again && first.elapsed() >= FORCE_AFTER
}

/// Whether [`request`] was called.
pub fn requested() -> bool {
    FIRST.get().is_some()
}

/// The error of work that stopped because it was interrupted.
pub fn interrupted() -> Error {
    Error::msg("interrupted")
}
