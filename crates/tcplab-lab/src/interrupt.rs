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
use std::sync::atomic::{AtomicBool, Ordering};

/// Exit code after an interruption: 128 + SIGINT, as shells report it.
pub const EXIT_INTERRUPTED: u8 = 130;

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks running work to stop at its next safe point. Async-signal-safe
/// (one atomic store).
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Whether [`request`] was called.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// The error of work that stopped because it was interrupted.
pub fn interrupted() -> Error {
    Error::msg("interrupted")
}
