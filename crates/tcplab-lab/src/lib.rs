//! tcplab-lab: what users touch. Scenario files (schema, parsing,
//! validation, `--set` overrides), running a scenario on the simulator,
//! and the outputs (tables for people, JSON and CSV for programs).
//!
//! The pipeline is [`load`] (text → [`tree::Tree`] → `--set` overrides →
//! [`Scenario`]), then [`runner::run`], then [`report::RunReport`]. Every
//! step reports bad input as an [`Error`] naming the file, line, column
//! and field, or the `--set` argument; none panics on any input. The
//! scenario format is documented for users in docs/scenarios.md.

pub mod error;
pub mod knobs;
pub mod listing;
pub mod report;
pub mod runner;
pub mod schema;
pub mod tree;
pub mod units;

pub use error::{Error, Result, EXIT_CHECK_FAILED, EXIT_ERROR, EXIT_OK};
pub use schema::{load, load_str, Scenario};
