//! The knob registry, the presets and the counters as rows of data, for
//! programs (the Python package's `tcplab.knobs()`, `presets()` and
//! `counters()`); [`crate::listing`] prints the same registry for people
//! and words the Linux setting, side and kernel handling of a knob through
//! the functions here.
//!
//! Everything comes from the core's tables (`tcplab_core::knobs`,
//! `TcpConfig::preset`, `Mib::ALL`), as validation reads them, so a row
//! cannot disagree with what a scenario accepts.

use tcplab_core::cc::bbr::BbrParams;
use tcplab_core::cc::cubic::CubicParams;
use tcplab_core::cc::dctcp::DctcpParams;
use tcplab_core::cc::reno::RenoParams;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::knobs::{self, Kernel, KnobSpec, Models, Side};
use tcplab_core::{Mib, TcpConfig};

/// One knob a `[tcp]` table (or `[flow.tcp]`, `[flow.tcp_receiver]`)
/// accepts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobRow {
    /// `tcp` for socket knobs, else the congestion-control module
    /// (`cubic`, `dctcp`, `reno`, `bbr`) whose parameter it is.
    pub table: &'static str,
    /// The name in its table: `tcp_reordering`, `cubic.beta`.
    pub name: String,
    /// The dotted path that sets it in every flow, as `--set` takes it:
    /// `tcp.tcp_reordering`, `tcp.cubic.beta`.
    pub key: String,
    /// The linux-current value, as written in TOML.
    pub default: String,
    /// What values it accepts.
    pub accepts: String,
    /// The Linux setting it models (a sysctl's or module parameter's full
    /// name, `route initcwnd`, `kernel era`, `tcplab only`, ...).
    pub linux: String,
    /// The half of the connection that reads it: sender, receiver, both;
    /// empty for the table keys (`preset`, `congestion_control`).
    pub side: &'static str,
    /// What the kernel backend does with it.
    pub kernel: String,
    pub doc: &'static str,
}

/// The Linux setting `m` stands for, names passed through `code` (the
/// markdown tables put them in backticks).
pub fn linux_setting(m: Models, code: impl Fn(&str) -> String) -> String {
    match m {
        Models::Sysctl(n) | Models::Param(n) | Models::Build(n) | Models::SockOpt(n) => code(n),
        Models::Route(a) => format!("route {}", code(a)),
        Models::Link(a) => format!("link {}", code(a)),
        Models::Era => "kernel era".into(),
        Models::TcplabOnly => "tcplab only".into(),
    }
}

/// `sender`, `receiver` or `both`.
pub fn side_name(s: Side) -> &'static str {
    match s {
        Side::Sender => "sender",
        Side::Receiver => "receiver",
        Side::Both => "both",
    }
}

/// What the kernel backend does with a knob, names through `code`.
pub fn kernel_handling(k: Kernel, code: impl Fn(&str) -> String) -> String {
    match k {
        Kernel::Native => "as in Linux".into(),
        Kernel::Switch { param, .. } => format!("switch {}", code(param)),
        Kernel::ModelOnly => "model only".into(),
        Kernel::Inherent { form } => format!("always {form:?} (not set)"),
    }
}

fn rows<C: Clone>(table: &'static str, specs: &[KnobSpec<C>], defaults: &C, out: &mut Vec<KnobRow>) {
    for k in specs {
        let name = if table == "tcp" { k.name.to_string() } else { format!("{table}.{}", k.name) };
        out.push(KnobRow {
            table,
            key: format!("tcp.{name}"),
            name,
            default: k.get(defaults),
            accepts: k.accepts(),
            linux: linux_setting(k.models, str::to_string),
            side: side_name(k.side),
            kernel: kernel_handling(k.kernel, str::to_string),
            doc: k.doc,
        });
    }
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}

/// Every knob, in the order of `tcplab knobs`: the table keys, the socket
/// knobs, then each congestion-control module's parameters.
pub fn knob_rows() -> Vec<KnobRow> {
    let base = TcpConfig::default();
    let mut out = Vec::new();
    for (key, default, names) in [
        (knobs::PRESET, format!("{:?}", base.preset), PRESETS),
        (knobs::CONGESTION_CONTROL, format!("{:?}", base.congestion_control.name()), CcConfig::NAMES),
    ] {
        out.push(KnobRow {
            table: "tcp",
            name: key.name.to_string(),
            key: format!("tcp.{}", key.name),
            default,
            accepts: format!("one of {}", quoted(names)),
            linux: linux_setting(key.models, str::to_string),
            side: "",
            kernel: String::new(),
            doc: key.doc,
        });
    }
    rows("tcp", knobs::TCP, &base, &mut out);
    rows("cubic", knobs::CUBIC, &CubicParams::default(), &mut out);
    rows("dctcp", knobs::DCTCP, &DctcpParams::default(), &mut out);
    rows("reno", knobs::RENO, &RenoParams::default(), &mut out);
    rows("bbr", knobs::BBR, &BbrParams::default(), &mut out);
    out
}

/// A knob in which a preset differs from linux-current.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PresetRow {
    pub preset: &'static str,
    /// As in [`KnobRow::name`] (`tcp_reordering`, `cubic.beta`).
    pub knob: String,
    pub value: String,
    pub linux_current: String,
}

/// Every preset's differences from linux-current, preset by preset (in
/// [`PRESETS`] order), as `tcplab presets` lists them.
pub fn preset_rows() -> Vec<PresetRow> {
    let base = TcpConfig::preset("linux-current").unwrap_or_default();
    let mut out = Vec::new();
    for name in PRESETS {
        let Some(cfg) = TcpConfig::preset(name) else { continue };
        for (knob, current, value) in knobs::diff(&base, &cfg) {
            out.push(PresetRow { preset: name, knob, value, linux_current: current });
        }
    }
    out
}

/// The presets' names.
pub fn preset_names() -> &'static [&'static str] {
    PRESETS
}

/// Every counter the model keeps, by nstat name, in the order `tcplab
/// counters` lists them.
pub fn counter_names() -> Vec<&'static str> {
    Mib::ALL.iter().map(|m| m.name()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_knob_rows_cover_the_registry() {
        let rows = knob_rows();
        assert_eq!(rows.len(), 2 + knobs::TCP.len() + knobs::CUBIC.len() + knobs::DCTCP.len() + knobs::RENO.len());
        let r = rows.iter().find(|r| r.name == "tcp_reordering").expect("tcp_reordering");
        assert_eq!((r.key.as_str(), r.default.as_str()), ("tcp.tcp_reordering", "3"));
        assert_eq!(r.linux, "net.ipv4.tcp_reordering");
        assert!(rows.iter().any(|r| r.key == "tcp.cubic.beta" && r.table == "cubic"));
    }

    #[test]
    fn test_preset_rows_are_the_listing() {
        let rows = preset_rows();
        let text = crate::listing::presets();
        assert!(!rows.is_empty());
        for r in &rows {
            // A knob appears once per preset that sets it, with that preset's value.
            let want = format!("= {}  (linux-current: {})", r.value, r.linux_current);
            assert!(
                text.lines().any(|l| l.trim_start().starts_with(&format!("{} ", r.knob)) && l.ends_with(&want)),
                "{r:?}"
            );
        }
        assert_eq!(counter_names().len(), Mib::ALL.len());
    }
}
