//! Reference listings for `tcplab presets`, `tcplab knobs` and
//! `tcplab counters`, generated from the same tables that validation uses.

use std::fmt::Write as _;
use tcplab_core::cc::cubic::CubicParams;
use tcplab_core::cc::dctcp::DctcpParams;
use tcplab_core::cc::reno::RenoParams;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::knobs::{self, KnobSpec};
use tcplab_core::{Mib, TcpConfig};

/// Every preset and the knobs in which it differs from `linux-current`.
pub fn presets() -> String {
    let base = TcpConfig::preset("linux-current").unwrap_or_default();
    let mut s = String::new();
    for name in PRESETS {
        let Some(cfg) = TcpConfig::preset(name) else { continue };
        let d = knobs::diff(&base, &cfg);
        if *name == "linux-current" {
            let _ = writeln!(s, "{name}: current Linux defaults (see `tcplab knobs`)");
            continue;
        }
        if d.is_empty() {
            let _ = writeln!(s, "{name}: same knobs as linux-current");
            continue;
        }
        let _ = writeln!(s, "{name}: differs from linux-current in");
        let w = d.iter().map(|(k, _, _)| k.len()).max().unwrap_or(0);
        for (k, cur, this) in d {
            let _ = writeln!(s, "  {k:<w$} = {this}  (linux-current: {cur})");
        }
    }
    s
}

fn knob_lines<C: Clone>(s: &mut String, prefix: &str, table: &[KnobSpec<C>], defaults: &C) {
    for k in table {
        let _ = writeln!(s, "{prefix}{} = {}", k.name, k.get(defaults));
        let _ = writeln!(s, "    {}", k.doc);
        let _ = writeln!(s, "    accepts: {}", k.accepts());
    }
}

/// Every knob a `[tcp]` table accepts, with its linux-current default.
pub fn knobs() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Socket knobs ([tcp], [flow.tcp], [flow.tcp_receiver]); defaults are linux-current");
    let base = TcpConfig::default();
    for (key, default, names) in [
        (knobs::PRESET, format!("{:?}", base.preset), PRESETS),
        (knobs::CONGESTION_CONTROL, format!("{:?}", base.congestion_control.name()), CcConfig::NAMES),
    ] {
        let _ = writeln!(s, "{} = {default}\n    {}\n    accepts: one of {}", key.name, key.doc, quoted(names));
    }
    knob_lines(&mut s, "", knobs::TCP, &base);
    let _ = writeln!(s, "\n# tcp_cubic module parameters ([tcp.cubic]); used when congestion_control = \"cubic\"");
    knob_lines(&mut s, "cubic.", knobs::CUBIC, &CubicParams::default());
    let _ = writeln!(s, "\n# tcp_dctcp module parameters ([tcp.dctcp]); used when congestion_control = \"dctcp\"");
    knob_lines(&mut s, "dctcp.", knobs::DCTCP, &DctcpParams::default());
    let _ = writeln!(s, "\n# Reno ([tcp.reno]); used when congestion_control = \"reno\"");
    knob_lines(&mut s, "reno.", knobs::RENO, &RenoParams::default());
    s
}

/// Every counter the model keeps, by nstat name.
pub fn counters() -> String {
    Mib::ALL.iter().map(|m| format!("{}\n", m.name())).collect()
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}
