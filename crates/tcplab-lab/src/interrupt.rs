//! The one place that knows whether the user interrupted the command
//! (SIGINT or SIGTERM; the CLI's signal handler calls [`request`]).
//!
//! Long work polls [`requested`] at safe points, so that it stops with
//! everything on disk whole: a batch between runs (every finished run is
//! in its journal), a run between two slices of simulated time (its pcap
//! files then end on a whole record). The work then returns
//! [`interrupted`], an error; the CLI removes partial outputs as for any
//! failure and exits with [`EXIT_INTERRUPTED`]. A host that outlives
//! its work (the Python package, where a notebook goes on after an
//! interrupted batch) forgets the request with [`clear`] once the work
//! has stopped.

use crate::error::Error;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Exit code after an interruption: 128 + SIGINT, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

/// How long after the first signal a second one ends the process at once.
/// Sooner, it is the same request again: `timeout -s INT` signals the
/// process and then its group, and a double Ctrl-C is one intention; a
/// graceful stop takes well under this.
pub const FORCE_AFTER: Duration = Duration::from_secs(1);

/// When the first request came, so it also says whether one came.
static FIRST: Mutex<Option<Instant>> = Mutex::new(None);

fn first() -> std::sync::MutexGuard<'static, Option<Instant>> {
    FIRST.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Asks running work to stop at its next safe point. Returns `true` when
/// the caller should end the process now instead: the work was already
/// asked at least [`FORCE_AFTER`] ago and has not stopped. Called from the
/// signal-handling thread, not from a signal handler.
pub fn request() -> bool {
    let mut first = first();
    match *first {
        Some(t) => t.elapsed() >= FORCE_AFTER,
        None => {
            *first = Some(Instant::now());
            false
        }
    }
}

/// Whether [`request`] was called (since the last [`clear`]).
pub fn requested() -> bool {
    first().is_some()
}

/// Forgets the request, so that work started afterwards runs. Only for
/// a host whose process goes on after interrupted work has stopped (the
/// Python package); the CLI never calls it.
pub fn clear() {
    *first() = None;
}

/// The error of work that stopped because it was interrupted.
pub fn interrupted() -> Error {
    Error::msg("interrupted")
}
