//! tcplab-lab: what users touch. Scenario files (schema, parsing,
//! validation, `--set` overrides), running a scenario on the simulator,
//! and the outputs (tables for people, JSON and CSV for programs).
//!
//! The pipeline is [`load`] (text → [`tree::Tree`] → `--set` overrides →
//! [`Scenario`]), then [`runner::run`], then [`report::RunReport`]. Every
//! step reports bad input as an [`Error`] naming the file, line, column
//! and field, or the `--set` argument; none panics on any input. The
//! scenario format is documented for users in docs/scenarios.md.
//!
//! Experiments (docs/experiments.md) build on it: [`overrides`] (the
//! `--a`/`--b`/`--vary` settings), [`metrics`], [`batch`] (many runs in
//! parallel, deterministic), [`stats`] (distributions, bootstrap CI,
//! two-group test), [`compare`], [`experiments`] (`reproduce` and its
//! registry), [`sweep`] (sweeps, shards, merge), and the outputs
//! [`plot`], [`html`], [`pcap`] (with [`runner::run_with`] running one
//! scenario with a packet tap), all created through [`outputs`] so that a
//! failed command leaves no files.

pub mod align;
pub mod backend;
pub mod batch;
pub mod bench;
pub mod catalog;
pub mod choices;
pub mod compare;
pub mod diff;
pub mod error;
pub mod experiments;
pub mod faithfulness;
mod field;
pub mod flow_sizes;
mod generate;
pub mod html;
pub mod input;
pub mod interrupt;
pub mod journal;
pub mod listing;
pub mod metrics;
pub mod outputs;
pub mod overrides;
pub mod pcap;
pub mod plot;
pub mod report;
pub mod runner;
pub mod schema;
pub mod stats;
pub mod sweep;
pub mod topology;
pub mod traffic;
pub mod tree;
pub mod units;

pub use error::{Error, Result, EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK};

/// tcplab's version, carried by every experiment output and journal line.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
pub use overrides::load;
pub use schema::{load_str, Scenario};
