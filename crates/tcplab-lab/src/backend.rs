//! Which backend runs a scenario: the model (tcplab-sim with the
//! tcplab-core TCP) or the real Linux kernel (tcplab-kernel, a User-Mode
//! Linux guest in virtual time). Both return the simulator's result type,
//! so everything above [`crate::runner`] is the same for either.

use crate::error::{Error, Result};
use crate::runner;
use crate::schema::Scenario;
use std::sync::Arc;
use std::time::Duration;
use tcplab_core::cc::CcConfig;
use tcplab_core::knobs::{self, KnobSpec};
use tcplab_core::TcpConfig;
use tcplab_kernel::{FlowKnobs, KernelBackend, KnobSetting};

/// A backend, cheap to clone (one per batch job). Each carries the
/// wall-clock limit of one run (`--max-wall`).
#[derive(Clone, Debug)]
pub enum Backend {
    /// The simulator; `max_wall`: stop a run that takes longer (an error).
    Model {
        max_wall: Option<Duration>,
    },
    Linux(Arc<KernelBackend>),
}

impl Default for Backend {
    fn default() -> Backend {
        Backend::Model { max_wall: None }
    }
}

impl Backend {
    /// `model`, or the kernel image's `linux-<release>`.
    pub fn label(&self) -> String {
        match self {
            Backend::Model { .. } => "model".into(),
            Backend::Linux(k) => k.guest.image.label(),
        }
    }

    /// The kernel backend with image `kernel` (a key, name or directory;
    /// default the newest for this host) and a wall-clock limit per run
    /// (`None`: [`default_wall_limit`] of each run's duration).
    pub fn linux(kernel: Option<&str>, max_wall: Option<Duration>) -> Result<Backend> {
        let k = KernelBackend::new(kernel, max_wall.unwrap_or(Duration::ZERO))
            .map_err(|e| Error::at("--backend linux", e.message))?;
        Ok(Backend::Linux(Arc::new(k)))
    }
}

/// Which backends a command runs on (`--backend model|linux|both`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Choice {
    #[default]
    Model,
    Linux,
    Both,
}

impl Choice {
    pub fn parse(s: &str) -> Result<Choice> {
        match s {
            "model" => Ok(Choice::Model),
            "linux" => Ok(Choice::Linux),
            "both" => Ok(Choice::Both),
            _ => Err(Error::at("--backend", format!("unknown backend {s:?} (expected model, linux or both)"))),
        }
    }

    /// The backends, model first.
    pub fn backends(self, kernel: Option<&str>, max_wall: Option<Duration>) -> Result<Vec<Backend>> {
        let linux = || Backend::linux(kernel, max_wall);
        let model = Backend::Model { max_wall };
        Ok(match self {
            Choice::Model => vec![model],
            Choice::Linux => vec![linux()?],
            Choice::Both => vec![model, linux()?],
        })
    }
}

/// Wall-clock seconds a guest is allowed per packet of
/// [`runner::packet_estimate`]: five times the 60 us measured for
/// `dctcp-rpc` (0.5 s, 1.67 M estimated packets, 99 s on an idle 2-core
/// machine), as tests run guests side by side on shared machines, where
/// that run once took over 240 s.
pub const KERNEL_WALL_PER_PACKET: f64 = 300e-6;

/// A guest's wall-clock limit when none is given: two minutes plus four
/// minutes per virtual second or [`KERNEL_WALL_PER_PACKET`] per estimated
/// packet, whichever is longer. It only stops a guest that hangs; it is
/// generous for everything measured so far (docs/KERNEL.md).
pub fn default_wall_limit(sc: &Scenario) -> Duration {
    let by_time = sc.sim.duration.as_secs_f64() * 240.0;
    let by_packets = runner::packet_estimate(sc) * KERNEL_WALL_PER_PACKET;
    Duration::from_secs(120) + Duration::try_from_secs_f64(by_time.max(by_packets)).unwrap_or(Duration::MAX / 2)
}

/// Every flow's knobs, rendered for the kernel's translation.
pub fn flow_knobs(sc: &Scenario) -> Vec<FlowKnobs> {
    sc.sim.flows.iter().map(|f| FlowKnobs { sender: render(&f.tcp), receiver: render(&f.tcp_receiver) }).collect()
}

fn render_table<C: Clone>(prefix: &str, table: &[KnobSpec<C>], cfg: &C, default: &C, out: &mut Vec<KnobSetting>) {
    for k in table {
        out.push(KnobSetting::new(format!("{prefix}{}", k.name), k.get(cfg), k.get(default)));
    }
}

/// Every knob of `cfg` (the core's registry, `tcplab_core::knobs`) with its
/// value and its `linux-current` value (for the same congestion control),
/// for the kernel backend's translation, which looks each one up in the
/// same registry (tcplab-kernel's `knobs.rs`).
pub fn render(cfg: &TcpConfig) -> Vec<KnobSetting> {
    let mut default = TcpConfig::linux_current();
    let cc = cfg.congestion_control.name();
    if let Some(c) = CcConfig::from_name(cc) {
        default.congestion_control = c;
    }
    let mut out = vec![KnobSetting::new(knobs::PRESET.name, format!("{:?}", cfg.preset), "\"linux-current\"")];
    let prefix = format!("{cc}.");
    match (&cfg.congestion_control, &default.congestion_control) {
        (CcConfig::Cubic(p), CcConfig::Cubic(d)) => render_table(&prefix, knobs::CUBIC, p, d, &mut out),
        (CcConfig::Dctcp(p), CcConfig::Dctcp(d)) => render_table(&prefix, knobs::DCTCP, p, d, &mut out),
        (CcConfig::Reno(p), CcConfig::Reno(d)) => render_table(&prefix, knobs::RENO, p, d, &mut out),
        _ => {}
    }
    render_table("", knobs::TCP, cfg, &default, &mut out);
    out
}

/// Runs `sc` on the kernel, turning its errors into the lab's (a knob's
/// path names the file's field).
pub fn run_linux(k: &KernelBackend, sc: &Scenario) -> Result<tcplab_kernel::KernelRun> {
    let mut k = k.clone();
    if k.guest.wall_limit.is_zero() {
        k.guest.wall_limit = default_wall_limit(sc);
    }
    k.run(&sc.sim, &flow_knobs(sc)).map_err(|e| kernel_error(sc, e))
}

/// A kernel-backend error in the lab's form, located at the scenario file.
pub fn kernel_error(sc: &Scenario, e: tcplab_kernel::KernelError) -> Error {
    Error { location: Some(sc.name.clone()), path: e.path, message: format!("kernel backend: {}", e.message) }
}
