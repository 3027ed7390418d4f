//! tcplab-sim: a deterministic discrete-event packet simulator driving the
//! sans-IO TCP core.
//!
//! Input is a [`SimConfig`] (nodes, links, flows), output a [`RunResult`].
//! [`run`] does a whole run; [`Sim`] exposes the steps for tests and other
//! drivers. Module map:
//!
//! - [`event`]: the `(time, seq)`-ordered event list.
//! - [`rng`]: PCG32, one stream per component.
//! - `packet`: packets in an arena; [`PacketEvent`] for observers.
//! - `queue`, `delay`, `link`: a link direction's drop-tail/ECN queue,
//!   serializer and propagation delay model.
//! - `routing`: static shortest-path routes; `host`: ports, 4-tuple demux,
//!   NIC backpressure; `app`: bulk sender and sink.
//! - `sim`: the event loop; `stats`, `trace`: results and time series.
//! - [`validate`](SimConfig::validate): what makes a config runnable.
//!
//! A configuration that passes [`SimConfig::validate`] never makes the
//! simulator panic; [`run`] and [`Sim::new`] validate first.

mod app;
mod bench;
pub mod config;
mod delay;
pub mod event;
mod host;
mod link;
mod packet;
mod queue;
pub mod result;
pub mod rng;
mod routing;
mod sim;
mod stats;
mod trace;
mod validate;

pub use bench::{bench_config, BENCH_ACCESS_BPS, BENCH_BOTTLENECK_BPS, BENCH_RTT};
pub use config::SimConfig;
pub use host::{client_port, MAX_FLOWS, SERVER_PORT};
pub use packet::{PacketEvent, PacketEventKind};
pub use result::RunResult;
pub use routing::dir_index;
pub use sim::{PacketTap, Sim};
pub use validate::{ConfigError, MAX_DELAY, MIN_MTU};

/// Validates `cfg` and simulates it for `cfg.duration`.
pub fn run(cfg: &SimConfig) -> Result<RunResult, ConfigError> {
    let mut sim = Sim::new(cfg)?;
    sim.run_to_end();
    Ok(sim.result())
}
