//! The registry of named experiments: one entry per kernel patch whose
//! commit message reports an experiment, kept as data with the patch's
//! title and the numbers it reported. `tcplab reproduce NAME` runs an
//! entry; `tcplab reproduce all` runs them all.
//!
//! This is the one place entries live. docs/experiments.md describes how
//! to add one (a scenario file in scenarios/, the two arms as knob
//! settings, the metrics, the run count, the patch's table verbatim and
//! its numbers as [`RefValue`](super::RefValue)s, and optional checks).
//! Entries are added by the issues that reproduce each seed patch
//! (reordering, dctcp-rpc, hystart); there are none yet.

use super::Experiment;

/// Every registered experiment, in the order `reproduce all` runs them.
pub static REGISTRY: &[Experiment] = &[];
