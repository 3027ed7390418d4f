//! tcplab-kernel: the real Linux kernel as a second backend of the lab.
//!
//! A scenario runs in a User-Mode Linux guest in virtual time: nodes are
//! network namespaces, links veth pairs with tc shaping, queues and netem,
//! the applications real sockets driven by the guest agent
//! (`tcplab-agent`). The result comes back as the simulator's
//! [`RunResult`], so the lab above treats both backends alike.
//!
//! - [`build`]: `tcplab kernel build`: a UML image from Debian's
//!   `linux-source` or a user's tree, with tcplab's run-time switches
//!   (`kernel/patches`, GPL-2.0), cached by [`image`].
//! - [`translate`]: scenario → guest set-up ([`tcplab_agent::job::Job`]),
//!   with [`knobs`] mapping each knob to a sysctl, module parameter or
//!   socket option, and [`switches`] naming the patches' parameters.
//! - [`guest`]: boots one guest for one run, with a wall-clock limit.
//! - [`collect`]: the guest's result as a [`RunResult`].
//! - [`host`]: the host facts an image depends on.
//! - [`packetdrill`]: Linux's own packetdrill run in guests against the
//!   image (`tcplab packetdrill --backend linux`).
//! - [`series`]: what each kernel series (3.12, 3.18, 4.17, mainline)
//!   builds and can do, read by the build and the translation.

pub mod build;
pub mod collect;
pub mod error;
pub mod guest;
pub mod host;
pub mod image;
pub mod knobs;
pub mod packetdrill;
pub mod series;
pub mod switches;
pub mod timeline;
pub mod translate;

pub use error::{KernelError, Result};
pub use image::Image;
pub use knobs::KnobSetting;
pub use translate::FlowKnobs;

use std::path::PathBuf;
use std::time::Duration;
use tcplab_sim::config::SimConfig;
use tcplab_sim::RunResult;

/// The kernel backend, ready to run scenarios: an image and an agent.
#[derive(Clone, Debug)]
pub struct KernelBackend {
    pub guest: guest::GuestConfig,
}

/// One run on the kernel.
#[derive(Debug)]
pub struct KernelRun {
    pub result: RunResult,
    /// Wall-clock time of the guest (boot to power-off).
    pub wall: Duration,
    /// `linux-<release>`, as `backend` in results.
    pub backend: String,
}

impl KernelBackend {
    /// The backend with image `spec` (see [`image::select`]) and the agent
    /// binary found by [`find_agent`].
    pub fn new(spec: Option<&str>, wall_limit: Duration) -> Result<KernelBackend> {
        let image = image::select(spec)?;
        let agent = find_agent()?;
        Ok(KernelBackend { guest: guest::GuestConfig { image, agent, mem_mb: 1024, wall_limit, keep: false } })
    }

    /// Translates without running: the set-up a run would perform.
    pub fn plan(&self, cfg: &SimConfig, knobs: &[FlowKnobs]) -> Result<translate::Plan> {
        let meta = &self.guest.image.meta;
        let series = self.guest.image.series()?;
        let facts = translate::ImageFacts { hz: meta.hz, switches: &meta.switches, series };
        translate::translate(cfg, knobs, facts, "")
    }

    /// Runs `cfg` once in a fresh guest.
    pub fn run(&self, cfg: &SimConfig, knobs: &[FlowKnobs]) -> Result<KernelRun> {
        let plan = self.plan(cfg, knobs)?;
        let run = guest::run(&self.guest, &plan)?;
        let result = collect::collect(cfg, &run.result);
        let backend = if run.result.kernel_release.is_empty() {
            self.guest.image.label()
        } else {
            format!("linux-{}", run.result.kernel_release)
        };
        Ok(KernelRun { result, wall: run.wall, backend })
    }
}

/// The guest agent: `$TCPLAB_AGENT`, else `tcplab-agent` beside the
/// running executable (or one directory up, for test binaries in
/// `target/*/deps`).
pub fn find_agent() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("TCPLAB_AGENT").filter(|p| !p.is_empty()) {
        let p = PathBuf::from(p);
        return if p.is_file() {
            Ok(p)
        } else {
            Err(KernelError::new(format!("TCPLAB_AGENT={}: no such file", p.display())))
        };
    }
    let exe = std::env::current_exe().map_err(|e| KernelError::new(format!("cannot locate tcplab: {e}")))?;
    let mut dir = exe.parent().map(|p| p.to_path_buf());
    for _ in 0..2 {
        let Some(d) = dir else { break };
        let candidate = d.join("tcplab-agent");
        if candidate.is_file() {
            return Ok(candidate);
        }
        dir = d.parent().map(|p| p.to_path_buf());
    }
    Err(KernelError::new(
        "the guest agent is not built: run `cargo build --release -p tcplab-agent` (or set TCPLAB_AGENT)",
    ))
}
