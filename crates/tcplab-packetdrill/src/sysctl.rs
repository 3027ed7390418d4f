//! Mapping of the harness's sysctls and CUBIC module parameters onto
//! [`TcpConfig`] fields, by their kernel names.
//!
//! Every `net.ipv4.*` name the corpus sets is in [`SYSCTLS`], in one of
//! three classes:
//!
//! - **Knob**: a [`TcpConfig`] field of the same name takes the value.
//! - **Inert**: the model has no knob, and the setting cannot change what
//!   a script without the feature observes (e.g. `tcp_fastopen` when no
//!   script packet carries a Fast Open option, `tcp_syncookies` without a
//!   SYN flood). Accepted and recorded as a note.
//! - **Fixed**: the model has no knob and behaves as one value; setting
//!   that value is accepted, any other value makes the script skip with a
//!   reason naming the sysctl.
//!
//! `tcp_tso_win_divisor`, `tcp_min_tso_segs` and `tcp_tso_rtt_log` are
//! knobs: the model keeps Linux's skb boundaries (TSO deferral and
//! autosizing), which decide the PSH flags, while it sends MSS-sized
//! segments that the matcher joins back into the TSO packet the script
//! expects unless `--strict_segments` is set.

use tcplab_core::cc::cubic::CubicParams;
use tcplab_core::cc::CcConfig;
use tcplab_core::TcpConfig;

/// How the model treats a sysctl.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SysctlClass {
    /// Sets the [`TcpConfig`] field of the same name.
    Knob,
    /// No knob; has no effect on the scripts that pass the other checks.
    Inert(&'static str),
    /// No knob; the model behaves as this value.
    Fixed(&'static str, &'static str),
    /// No knob; approximated whatever the value.
    Approximated(&'static str),
}

/// One row of the sysctl table.
#[derive(Clone, Copy, Debug)]
pub struct SysctlEntry {
    /// Name under `net.ipv4.`.
    pub name: &'static str,
    pub class: SysctlClass,
}

/// Every `net.ipv4.*` sysctl the interpreter understands.
pub const SYSCTLS: &[SysctlEntry] = &[
    SysctlEntry { name: "tcp_congestion_control", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_reordering", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_max_reordering", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_sack", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_dsack", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_timestamps", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_window_scaling", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_ecn", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_recovery", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_frto", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_early_retrans", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_slow_start_after_idle", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_rmem", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_wmem", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_rto_min_us", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_pacing_ss_ratio", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_pacing_ca_ratio", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_min_rtt_wlen", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_no_metrics_save", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_no_ssthresh_metrics_save", class: SysctlClass::Knob },
    SysctlEntry {
        name: "tcp_fack",
        class: SysctlClass::Fixed("0", "FACK is not modelled (and was removed from Linux in 4.15)"),
    },
    SysctlEntry {
        name: "tcp_notsent_lowat",
        class: SysctlClass::Fixed("4294967295", "TCP_NOTSENT_LOWAT is not modelled (no limit)"),
    },
    SysctlEntry {
        name: "tcp_mtu_probing",
        class: SysctlClass::Fixed("0", "MTU probing (tcp_mtu_probe) is not modelled"),
    },
    SysctlEntry { name: "tcp_base_mss", class: SysctlClass::Inert("used only by MTU probing, which is off") },
    SysctlEntry {
        name: "tcp_syn_retries",
        class: SysctlClass::Inert("no SYN retry limit in the model; matters only after that many SYN timeouts"),
    },
    SysctlEntry {
        name: "tcp_synack_retries",
        class: SysctlClass::Inert("no SYN-ACK retry limit in the model; matters only after that many timeouts"),
    },
    SysctlEntry {
        name: "tcp_fastopen",
        class: SysctlClass::Inert("Fast Open is not modelled; no script packet uses it"),
    },
    SysctlEntry { name: "tcp_fastopen_key", class: SysctlClass::Inert("Fast Open is not modelled") },
    SysctlEntry {
        name: "tcp_syncookies",
        class: SysctlClass::Inert("SYN cookies are sent only when the SYN queue overflows"),
    },
    SysctlEntry {
        name: "tcp_ecn_option",
        class: SysctlClass::Inert("AccECN option; used only when AccECN (tcp_ecn >= 3) is negotiated"),
    },
    SysctlEntry { name: "tcp_tso_win_divisor", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_min_tso_segs", class: SysctlClass::Knob },
    SysctlEntry { name: "tcp_tso_rtt_log", class: SysctlClass::Knob },
];

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

fn parse_int(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else {
        v.parse().ok()
    }
}

fn int_in<T: TryFrom<i64>>(name: &str, v: &str) -> Result<T, String> {
    parse_int(v).and_then(|x| T::try_from(x).ok()).ok_or_else(|| format!("sysctl net.ipv4.{name}: bad value `{v}`"))
}

fn triple(name: &str, v: &str) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = v.split_whitespace().collect();
    if parts.len() != 3 {
        return Err(format!("sysctl net.ipv4.{name}: expected three numbers, got `{v}`"));
    }
    let mut out = [0u32; 3];
    for (o, p) in out.iter_mut().zip(parts) {
        *o = int_in(name, p)?;
    }
    Ok(out)
}

/// Applies `net.ipv4.<name> = value`. `Ok(Some(note))` for accepted
/// settings the model does not have; `Err(reason)` makes the script skip.
pub fn apply(cfg: &mut TcpConfig, cubic: &CubicParams, full_name: &str, value: &str) -> Result<Option<String>, String> {
    let Some(name) = short_name(full_name) else {
        return Err(format!("unsupported sysctl {full_name} (only net.ipv4.* is modelled)"));
    };
    let value = value.trim();
    let Some(entry) = SYSCTLS.iter().find(|e| e.name == name) else {
        return Err(format!("unsupported sysctl net.ipv4.{name} (no model knob)"));
    };
    match entry.class {
        SysctlClass::Inert(why) => return Ok(Some(format!("net.ipv4.{name}={value} ignored: {why}"))),
        SysctlClass::Approximated(why) => return Ok(Some(format!("net.ipv4.{name}={value} approximated: {why}"))),
        SysctlClass::Fixed(model, why) => {
            let same = match (parse_int(value), parse_int(model)) {
                (Some(a), Some(b)) => a == b,
                _ => value == model,
            };
            return if same {
                Ok(None)
            } else {
                Err(format!("sysctl net.ipv4.{name}={value} differs from the model's fixed behaviour ({model}): {why}"))
            };
        }
        SysctlClass::Knob => {}
    }
    match name {
        "tcp_congestion_control" => {
            cfg.congestion_control = match value {
                "cubic" => CcConfig::Cubic(cubic.clone()),
                other => CcConfig::from_name(other).ok_or_else(|| {
                    format!("congestion control `{other}` is not in the model ({})", CcConfig::NAMES.join(", "))
                })?,
            }
        }
        "tcp_reordering" => cfg.tcp_reordering = int_in(name, value)?,
        "tcp_max_reordering" => cfg.tcp_max_reordering = int_in(name, value)?,
        "tcp_sack" => cfg.tcp_sack = int_in::<u8>(name, value)? != 0,
        "tcp_dsack" => cfg.tcp_dsack = int_in::<u8>(name, value)? != 0,
        "tcp_timestamps" => {
            let v: u8 = int_in(name, value)?;
            if v > 1 {
                return Err(format!(
                    "sysctl net.ipv4.tcp_timestamps={v} (no random offsets / usec TS) is not modelled"
                ));
            }
            cfg.tcp_timestamps = v != 0
        }
        "tcp_window_scaling" => cfg.tcp_window_scaling = int_in::<u8>(name, value)? != 0,
        "tcp_ecn" => {
            let v: u8 = int_in(name, value)?;
            if v > 2 {
                return Err(format!("sysctl net.ipv4.tcp_ecn={v} (AccECN) is not modelled"));
            }
            cfg.tcp_ecn = v
        }
        "tcp_recovery" => cfg.tcp_recovery = int_in(name, value)?,
        "tcp_frto" => cfg.tcp_frto = int_in(name, value)?,
        "tcp_early_retrans" => cfg.tcp_early_retrans = int_in(name, value)?,
        "tcp_slow_start_after_idle" => cfg.tcp_slow_start_after_idle = int_in::<u8>(name, value)? != 0,
        "tcp_rmem" => cfg.tcp_rmem = triple(name, value)?,
        "tcp_wmem" => cfg.tcp_wmem = triple(name, value)?,
        "tcp_rto_min_us" => cfg.tcp_rto_min_us = int_in(name, value)?,
        "tcp_pacing_ss_ratio" => cfg.tcp_pacing_ss_ratio = int_in(name, value)?,
        "tcp_pacing_ca_ratio" => cfg.tcp_pacing_ca_ratio = int_in(name, value)?,
        "tcp_min_rtt_wlen" => cfg.tcp_min_rtt_wlen = int_in(name, value)?,
        "tcp_no_metrics_save" => cfg.tcp_no_metrics_save = int_in::<u8>(name, value)? != 0,
        "tcp_no_ssthresh_metrics_save" => cfg.tcp_no_ssthresh_metrics_save = int_in::<u8>(name, value)? != 0,
        "tcp_tso_win_divisor" => cfg.tcp_tso_win_divisor = int_in(name, value)?,
        "tcp_min_tso_segs" => cfg.tcp_min_tso_segs = int_in::<u32>(name, value)?.max(1),
        "tcp_tso_rtt_log" => cfg.tcp_tso_rtt_log = int_in(name, value)?,
        _ => return Err(format!("unsupported sysctl net.ipv4.{name}")),
    }
    Ok(None)
}

/// Applies `/sys/module/tcp_cubic/parameters/<name>` = value.
pub fn apply_cubic_param(p: &mut CubicParams, name: &str, value: &str) -> Result<(), String> {
    let bad = || format!("tcp_cubic parameter {name}: bad value `{value}`");
    let v = parse_int(value).ok_or_else(bad)?;
    let u32v = || u32::try_from(v).map_err(|_| bad());
    match name {
        "beta" => p.beta = u32v()?,
        "bic_scale" => p.bic_scale = u32v()?,
        "fast_convergence" => p.fast_convergence = v != 0,
        "tcp_friendliness" => p.tcp_friendliness = v != 0,
        "initial_ssthresh" => p.initial_ssthresh = u32v()?,
        "hystart" => p.hystart = v != 0,
        "hystart_detect" => p.hystart_detect = u8::try_from(v).map_err(|_| bad())?,
        "hystart_low_window" => p.hystart_low_window = u32v()?,
        "hystart_ack_delta_us" => p.hystart_ack_delta_us = u32v()?,
        // Before 5.7 the parameter was in ms.
        "hystart_ack_delta" => p.hystart_ack_delta_us = u32v()?.saturating_mul(1000),
        _ => return Err(format!("unsupported tcp_cubic parameter {name}")),
    }
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

    #[test]
    fn test_fixed_value_skips_when_different() {
        let mut cfg = TcpConfig::default();
        let cubic = CubicParams::default();
        assert_eq!(apply(&mut cfg, &cubic, "net.ipv4.tcp_fack", "0"), Ok(None));
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
    }
}
