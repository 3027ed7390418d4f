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
//!   serializer and propagation delay model; `slot`: netem's slot at the
//!   end of a delay, which releases packets in batches; `gro`: GRO at a
//!   receiving host, merging a batch's segments per flow.
//! - `fq`: the sch_fq qdisc of hosts that use it; `sim_fq`: pacing and
//!   the glue between connections, fq and the NIC (docs/sim-fq.md).
//! - `routing`: static shortest-path routes, ECMP at switches, which hosts
//!   reach which; `host`: ports, demultiplexing,
//!   NIC backpressure; `ready`: the FIFO of connections waiting for room
//!   in a NIC; `app`: bulk sender and sink, RPC client and server.
//! - `sim`: the event loop; `flows`: runs of a flow, the metrics cache;
//!   `stats`, `trace`, `hist`: results, time series, latency histograms.
//! - [`validate`](SimConfig::validate): what makes a config runnable.
//!
//! A configuration that passes [`SimConfig::validate`] never makes the
//! simulator panic; [`run`] and [`Sim::new`] validate first.

mod app;
mod bench;
mod calendar;
pub mod config;
mod delay;
pub mod event;
mod flows;
pub mod fnv;
mod fq;
mod gro;
mod hist;
mod host;
mod link;
pub mod loss;
pub mod on_off;
mod packet;
mod police;
mod queue;
mod ready;
pub mod result;
pub mod rng;
mod routing;
mod sim;
mod sim_fq;
mod slot;
mod stats;
mod trace;
mod validate;

pub use bench::{bench_config, BENCH_ACCESS_BPS, BENCH_BOTTLENECK_BPS, BENCH_RTT};
pub use config::SimConfig;
pub use delay::MAX_WALK_STEPS;
pub use fq::{ETH_HLEN, TCP_LIMIT_OUTPUT_BYTES_V4};
pub use host::{client_port, client_ports, MAX_CONNECTIONS_PER_HOST, MAX_FLOWS, SERVER_PORT};
pub use packet::{PacketEvent, PacketEventKind};
pub use result::{QueueSample, RunResult};
pub use routing::{dir_index, first_multipath, host_ip, next_hops_to, Reachability};
pub use sim::{PacketTap, Sim};
pub use validate::{ConfigError, FQ_MAX_QUANTUM, MAX_APP_TIME, MAX_DELAY, MAX_SLOT, MIN_MTU};

/// Validates `cfg` and simulates it for `cfg.duration`.
pub fn run(cfg: &SimConfig) -> Result<RunResult, ConfigError> {
    let mut sim = Sim::new(cfg)?;
    sim.run_to_end();
    Ok(sim.into_result())
}
