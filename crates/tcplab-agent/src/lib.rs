//! tcplab's guest agent: the program that runs inside a User-Mode Linux
//! guest for the kernel backend. It performs a [`job::Job`]'s set-up
//! (namespaces, veth links, qdiscs, sysctls, module parameters), runs the
//! scenario's applications with real sockets in virtual time, samples
//! `TCP_INFO`, and writes a [`job::GuestResult`].
//!
//! The host side depends on this crate for [`job`] only; the rest is the
//! agent binary's machinery, public so that it can be tested:
//!
//! - [`runner`]: one job from set-up to result, the order of things and
//!   where `t0` falls; [`init`]: the PID-1 duties; [`output`]: the atomic
//!   `result.json`.
//! - [`setup`]: the set-up steps; [`netns`]: threads inside a namespace;
//!   [`netlink`]: rtnetlink for the RED step marker and qdisc statistics.
//! - [`flows`]: per-flow shared state; [`apps`]: the bulk and RPC
//!   applications; [`sock`]: socket set-up; [`tcp_info`]: Linux's
//!   `struct tcp_info`.
//! - [`sampler`]: periodic traces and queue lengths; [`links`]: link
//!   statistics; [`nstat`]: SNMP counters; [`clock`]: the scenario clock.

pub mod apps;
pub mod capture;
pub mod clock;
pub mod flows;
pub mod init;
pub mod job;
pub mod links;
pub mod modulator;
pub mod netlink;
pub mod netns;
pub mod nstat;
pub mod output;
pub mod packetdrill;
pub mod runner;
pub mod sampler;
pub mod setup;
pub mod sock;
pub mod tcp_info;

use job::{Job, JOB_VERSION};
use std::path::Path;

/// Reads a job file: `"<path>: <reason>"` if it cannot be read, is not
/// JSON (serde's message gives the line and column), has another
/// [`JOB_VERSION`], or is not a valid [`Job`].
pub fn load_job(path: &Path) -> Result<Job, String> {
    let p = path.display();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{p}: cannot read: {e}"))?;
    // The version first, so that a job of another version is refused as
    // such rather than with whatever field changed.
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{p}: invalid JSON: {e}"))?;
    match v.get("version").and_then(|v| v.as_u64()) {
        Some(n) if n == u64::from(JOB_VERSION) => {}
        Some(n) => return Err(format!("{p}: job version {n}, this agent reads version {JOB_VERSION}")),
        None => return Err(format!("{p}: not a job: no numeric \"version\" field")),
    }
    serde_json::from_str(&text).map_err(|e| format!("{p}: invalid job: {e}"))
}
