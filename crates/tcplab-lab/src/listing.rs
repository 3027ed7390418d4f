//! Reference listings for `tcplab presets`, `tcplab knobs` and
//! `tcplab counters`, and the knob tables of docs/scenarios.md, generated
//! from the same tables that validation uses (the core's knob registry).

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

fn reference_rows<C: Clone>(s: &mut String, table: &[KnobSpec<C>], defaults: &C) {
    let _ = writeln!(s, "| knob | accepts | linux-current | Linux setting | read by | kernel backend |");
    let _ = writeln!(s, "|---|---|---|---|---|---|");
    for k in table {
        let code = |n: &str| format!("`{n}`");
        let linux = crate::catalog::linux_setting(k.models, code);
        let side = crate::catalog::side_name(k.side);
        let kernel = crate::catalog::kernel_handling(k.kernel, code);
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {linux} | {side} | {kernel} |",
            k.name,
            k.accepts().replace('|', "\\|"),
            k.get(defaults)
        );
    }
}

/// The knob tables of docs/scenarios.md (between its `knobs:begin` and
/// `knobs:end` markers; a test compares them): every knob of the
/// registry with what it accepts, its linux-current default, the Linux
/// setting it models (which packetdrill scripts use), the half of the
/// connection that reads it and what the kernel backend does with it.
pub fn knob_reference() -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Socket knobs:\n");
    reference_rows(&mut s, knobs::TCP, &TcpConfig::default());
    let _ = writeln!(s, "\n`[tcp.cubic]` (tcp_cubic module parameters):\n");
    reference_rows(&mut s, knobs::CUBIC, &CubicParams::default());
    let _ = writeln!(s, "\n`[tcp.dctcp]` (tcp_dctcp module parameters):\n");
    reference_rows(&mut s, knobs::DCTCP, &DctcpParams::default());
    let _ = writeln!(s, "\n`[tcp.reno]` (Linux's Reno has no module parameters):\n");
    reference_rows(&mut s, knobs::RENO, &RenoParams::default());
    s
}

/// Every counter the model keeps, by nstat name.
pub fn counters() -> String {
    Mib::ALL.iter().map(|m| format!("{}\n", m.name())).collect()
}

fn quoted(names: &[&str]) -> String {
    names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(name: &str) -> String {
        std::fs::read_to_string(format!("{}/../../docs/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    /// docs/scenarios.md lists exactly the registry's knobs: on a change
    /// of the registry, paste the printed tables between the markers.
    #[test]
    fn test_docs_knob_tables_match_the_registry() {
        let text = doc("scenarios.md");
        let (begin, end) =
            ("<!-- knobs:begin (generated: tcplab_lab::listing::knob_reference) -->\n", "<!-- knobs:end -->");
        let start = text.find(begin).expect("begin marker") + begin.len();
        let stop = start + text[start..].find(end).expect("end marker");
        let cc: Vec<String> = CcConfig::NAMES.iter().map(|n| format!("`{n:?}`")).collect();
        assert!(
            text.contains(&format!("| `cc` | {} |", cc.join(", "))),
            "docs/scenarios.md: the cc row lists CcConfig::NAMES"
        );
        let want = knob_reference();
        assert!(
            text[start..stop].trim() == want.trim(),
            "docs/scenarios.md knob tables are stale; they should be:\n{want}"
        );
    }

    /// docs/presets.md has a row for every knob a preset changes.
    #[test]
    fn test_presets_doc_names_every_knob_a_preset_changes() {
        let text = doc("presets.md");
        let base = TcpConfig::default();
        for p in PRESETS {
            for (name, _, _) in knobs::diff(&base, &TcpConfig::preset(p).unwrap()) {
                if knobs::find(&name).is_some() {
                    assert!(text.contains(&format!("| `{name}`")), "docs/presets.md: no row for {name} ({p})");
                }
            }
        }
    }
}
