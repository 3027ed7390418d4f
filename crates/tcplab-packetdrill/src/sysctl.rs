//! The harness's sysctls and CUBIC module parameters, by their kernel
//! names, applied through the core's knob registry
//! ([`tcplab_core::knobs`]): a knob that models `net.ipv4.X` (or
//! `tcp_cubic.X`) takes the value, parsed and range-checked as the
//! registry says, so a script and a scenario accept the same values.
//!
//! A `net.ipv4.*` sysctl the model has no knob for is in the registry's
//! [`UNMODELLED`](tcplab_core::knobs::UNMODELLED) list, as
//! [`Absent::Inert`] (accepted, recorded as a note) or [`Absent::Fixed`]
//! (the model's value is accepted, another makes the script skip with a
//! reason naming the sysctl). Any other sysctl makes the script skip.
//!
//! `tcp_tso_win_divisor`, `tcp_min_tso_segs` and `tcp_tso_rtt_log` are
//! knobs: the model keeps Linux's skb boundaries (TSO deferral and
//! autosizing), which decide the PSH flags, while it sends MSS-sized
//! segments that the matcher joins back into the TSO packet the script
//! expects unless `--strict_segments` is set.

use tcplab_core::cc::cubic::CubicParams;
use tcplab_core::cc::CcConfig;
use tcplab_core::knobs::{self, Absent, Models};
use tcplab_core::TcpConfig;

/// Strips `net.ipv4.`, `net/ipv4/` or `/proc/sys/net/ipv4/` from a name.
pub fn short_name(name: &str) -> Option<&str> {
    let n = name.trim();
    for p in ["/proc/sys/net/ipv4/", "net.ipv4.", "net/ipv4/"] {
        if let Some(rest) = n.strip_prefix(p) {
            return Some(rest);
        }
    }
    None
}

/// Congestion control `name` ([`CcConfig::NAMES`]) with the harness's
/// module parameters: those are global (`/sys/module/tcp_cubic`), so they
/// hold for every socket that picks the module, by sysctl or by
/// `setsockopt(TCP_CONGESTION)`.
pub fn congestion_control(name: &str, cubic: &CubicParams) -> Option<CcConfig> {
    Some(match CcConfig::from_name(name)? {
        CcConfig::Cubic(_) => CcConfig::Cubic(cubic.clone()),
        cc => cc,
    })
}

/// Applies `net.ipv4.<name> = value`. `Ok(Some(note))` for accepted
/// settings the model does not have; `Err(reason)` makes the script skip.
pub fn apply(cfg: &mut TcpConfig, cubic: &CubicParams, full_name: &str, value: &str) -> Result<Option<String>, String> {
    let Some(name) = short_name(full_name) else {
        return Err(format!("unsupported sysctl {full_name} (only net.ipv4.* is modelled)"));
    };
    let value = value.trim();
    let full = format!("net.ipv4.{name}");
    if matches!(knobs::CONGESTION_CONTROL.models, Models::Sysctl(s) if s == full) {
        cfg.congestion_control = congestion_control(value, cubic).ok_or_else(|| {
            format!("congestion control `{value}` is not in the model ({})", CcConfig::NAMES.join(", "))
        })?;
        return Ok(None);
    }
    if let Some(k) = knobs::by_sysctl(&full) {
        k.set_text(cfg, value).map_err(|e| format!("sysctl {full}: {e}"))?;
        return Ok(None);
    }
    let Some(u) = knobs::unmodelled(&full) else {
        return Err(format!("unsupported sysctl {full} (no model knob)"));
    };
    match u.treatment {
        Absent::Inert(why) => Ok(Some(format!("{full}={value} ignored: {why}"))),
        Absent::Fixed(..) if u.treatment.accepts(value) => Ok(None),
        Absent::Fixed(model, why) => {
            Err(format!("sysctl {full}={value} differs from the model's fixed behaviour ({model}): {why}"))
        }
    }
}

/// Applies `/sys/module/tcp_cubic/parameters/<name>` = value: the knob
/// that models `tcp_cubic.<name>`, then CUBIC's own consistency check.
/// `hystart_ack_delta`, in ms, is the parameter's name before 5.7.
pub fn apply_cubic_param(p: &mut CubicParams, name: &str, value: &str) -> Result<(), String> {
    let bad = |e: String| format!("tcp_cubic parameter {name}: {e}");
    let (param, text) = match name {
        "hystart_ack_delta" => {
            let ms: u32 = value.trim().parse().map_err(|_| bad(format!("bad value `{value}`")))?;
            ("hystart_ack_delta_us", ms.saturating_mul(1000).to_string())
        }
        _ => (name, value.to_string()),
    };
    let k = knobs::by_param(knobs::CUBIC, &format!("tcp_cubic.{param}"))
        .ok_or_else(|| format!("unsupported tcp_cubic parameter {name}"))?;
    k.set_text(p, &text).map_err(bad)?;
    p.validate().map_err(|e| format!("tcp_cubic parameter {name}={value} rejected: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_knob_sets_config_field() {
        let mut cfg = TcpConfig::default();
        let cubic = CubicParams::default();
        assert_eq!(apply(&mut cfg, &cubic, "net.ipv4.tcp_reordering", "5"), Ok(None));
        assert_eq!(cfg.tcp_reordering, 5);
        apply(&mut cfg, &cubic, "net/ipv4/tcp_rmem", "4096 540000 15728640").unwrap();
        assert_eq!(cfg.tcp_rmem, [4096, 540000, 15728640]);
        apply(&mut cfg, &cubic, "/proc/sys/net/ipv4/tcp_slow_start_after_idle", "0").unwrap();
        assert!(!cfg.tcp_slow_start_after_idle);
    }

    /// Every knob the registry models as a sysctl is one here: tcp_fack
    /// (which this table once called "not modelled") and the TSO knobs,
    /// with the registry's range.
    #[test]
    fn test_registry_knobs_are_sysctls_with_their_range() {
        let mut cfg = TcpConfig::default();
        let cubic = CubicParams::default();
        assert_eq!(apply(&mut cfg, &cubic, "net.ipv4.tcp_fack", "1"), Ok(None));
        assert!(cfg.tcp_fack);
        assert_eq!(apply(&mut cfg, &cubic, "net.ipv4.tcp_min_tso_segs", "10"), Ok(None));
        assert_eq!(cfg.tcp_min_tso_segs, 10);
        let e = apply(&mut cfg, &cubic, "net.ipv4.tcp_ecn", "3").unwrap_err();
        assert_eq!(e, "sysctl net.ipv4.tcp_ecn: must be between 0 and 2, found 3");
        let e = apply(&mut cfg, &cubic, "net.ipv4.tcp_sack", "x").unwrap_err();
        assert_eq!(e, "sysctl net.ipv4.tcp_sack: bad value `x`");
        for k in tcplab_core::knobs::TCP {
            if let tcplab_core::knobs::Models::Sysctl(s) = k.models {
                assert!(!apply(&mut cfg, &cubic, s, "x").unwrap_err().contains("unsupported"), "{s}");
            }
        }
    }

    #[test]
    fn test_congestion_control_keeps_the_module_parameters() {
        let mut cfg = TcpConfig::default();
        let cubic = CubicParams { beta: 819, ..CubicParams::default() };
        apply(&mut cfg, &cubic, "net.ipv4.tcp_congestion_control", "reno").unwrap();
        assert_eq!(cfg.congestion_control.name(), "reno");
        apply(&mut cfg, &cubic, "net.ipv4.tcp_congestion_control", "cubic").unwrap();
        assert_eq!(cfg.congestion_control, CcConfig::Cubic(cubic.clone()));
        assert!(apply(&mut cfg, &cubic, "net.ipv4.tcp_congestion_control", "vegas").is_err());
    }

    #[test]
    fn test_fixed_value_skips_when_different() {
        let mut cfg = TcpConfig::default();
        let cubic = CubicParams::default();
        assert_eq!(apply(&mut cfg, &cubic, "net.ipv4.tcp_notsent_lowat", "4294967295"), Ok(None));
        let e = apply(&mut cfg, &cubic, "net.ipv4.tcp_mtu_probing", "2").unwrap_err();
        assert!(e.contains("tcp_mtu_probing=2"), "{e}");
        assert!(apply(&mut cfg, &cubic, "net.ipv4.tcp_bogus", "1").is_err());
        assert!(apply(&mut cfg, &cubic, "net.core.default_qdisc", "fq").is_err());
    }

    #[test]
    fn test_cubic_param() {
        let mut p = CubicParams::default();
        apply_cubic_param(&mut p, "hystart_detect", "3").unwrap();
        assert_eq!(p.hystart_detect, 3);
        assert!(apply_cubic_param(&mut p, "beta", "2000").is_err());
        apply_cubic_param(&mut p, "hystart_ack_delta", "4").unwrap();
        assert_eq!(p.hystart_ack_delta_us, 4000);
        // Model-only keys of [tcp.cubic] are no module parameters.
        assert_eq!(
            apply_cubic_param(&mut p, "version", "v3.18"),
            Err("unsupported tcp_cubic parameter version".into())
        );
    }
}
