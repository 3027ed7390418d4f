//! Where each scenario knob goes on the real kernel.
//!
//! The lab renders every knob of a flow end under its scenario name
//! (`tcp_reordering`, `cubic.beta`) with its value and its `linux-current`
//! value ([`KnobSetting`]); this table says what the kernel does with it.
//! The model's knob table stays the one definition of names and values
//! (tcplab-lab's `knobs.rs`); a knob missing here is an error as soon as it
//! differs from its default, so a new model knob can never be dropped
//! silently on the kernel backend.

use crate::switches;
use tcplab_core::config::CwndGrowthRule;

/// One knob of one flow end, as the lab renders it (TOML text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnobSetting {
    /// `tcp_reordering`, or `<module>.<param>` for the congestion
    /// control's parameters (`cubic.beta`).
    pub name: String,
    pub value: String,
    /// The value under `linux-current`, which is what an unpatched 6.12
    /// kernel does.
    pub default: String,
}

impl KnobSetting {
    pub fn new(name: impl Into<String>, value: impl Into<String>, default: impl Into<String>) -> Self {
        KnobSetting { name: name.into(), value: value.into(), default: default.into() }
    }

    pub fn is_default(&self) -> bool {
        self.value == self.default
    }
}

/// What the kernel does with a knob.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// A per-namespace sysctl: every flow end on a host must agree.
    Sysctl(&'static str),
    /// A module parameter, set on the kernel command line (so that
    /// parameters read at registration, like CUBIC's `beta` and
    /// `bic_scale`, take effect): one value for the whole guest.
    Param(&'static str),
    /// A run-time switch from tcplab's kernel patches: a [`Target::Param`]
    /// that only a patched image has.
    Switch(&'static str),
    /// `SO_SNDBUF` / `SO_RCVBUF` on the socket.
    SndBuf,
    RcvBuf,
    /// The route to the peer's host: `ip route ... initcwnd N`.
    RouteInitcwnd,
    /// The MTU of every veth (one value per scenario).
    Mtu,
    /// The image's HZ (a build option).
    Hz,
    /// Recorded by the lab only (the preset name: its effects are the
    /// other knobs).
    Label,
    /// A mechanism the real kernel has in one form only: the knob must
    /// keep its `linux-current` value on the kernel backend.
    ModelOnly,
}

/// How a value is written for the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// As is (integers).
    Plain,
    /// `true`/`false` → `1`/`0`.
    Bool,
    /// `[a, b, c]` → `a b c`.
    Triple,
    /// A named value → the kernel's number; names not listed have no
    /// kernel counterpart.
    Names(&'static [(&'static str, &'static str)]),
}

/// `cwnd_growth` on a patched kernel: `forward_progress_growth=1` is
/// v3.12's rule (mainline), `0` the rule reverted (kernel/patches/0001).
/// The other rules have no kernel counterpart. Names from the core enum.
const CWND_GROWTH_SWITCH: &[(&str, &str)] =
    &[(CwndGrowthRule::V3_12.as_str(), "1"), (CwndGrowthRule::DataAcked.as_str(), "0")];

/// Every knob the model has, and what the kernel does with it.
pub const TABLE: &[(&str, Target, Conv)] = &[
    ("preset", Target::Label, Conv::Plain),
    ("congestion_control", Target::Label, Conv::Plain),
    ("tcp_reordering", Target::Sysctl("net.ipv4.tcp_reordering"), Conv::Plain),
    ("tcp_max_reordering", Target::Sysctl("net.ipv4.tcp_max_reordering"), Conv::Plain),
    ("tcp_sack", Target::Sysctl("net.ipv4.tcp_sack"), Conv::Bool),
    ("tcp_dsack", Target::Sysctl("net.ipv4.tcp_dsack"), Conv::Bool),
    ("tcp_timestamps", Target::Sysctl("net.ipv4.tcp_timestamps"), Conv::Bool),
    ("tcp_window_scaling", Target::Sysctl("net.ipv4.tcp_window_scaling"), Conv::Bool),
    ("tcp_ecn", Target::Sysctl("net.ipv4.tcp_ecn"), Conv::Plain),
    ("tcp_recovery", Target::Sysctl("net.ipv4.tcp_recovery"), Conv::Plain),
    ("tcp_frto", Target::Sysctl("net.ipv4.tcp_frto"), Conv::Plain),
    ("tcp_early_retrans", Target::Sysctl("net.ipv4.tcp_early_retrans"), Conv::Plain),
    ("tcp_slow_start_after_idle", Target::Sysctl("net.ipv4.tcp_slow_start_after_idle"), Conv::Bool),
    ("tcp_rmem", Target::Sysctl("net.ipv4.tcp_rmem"), Conv::Triple),
    ("tcp_wmem", Target::Sysctl("net.ipv4.tcp_wmem"), Conv::Triple),
    ("tcp_rto_min_us", Target::Sysctl("net.ipv4.tcp_rto_min_us"), Conv::Plain),
    ("tcp_pacing_ss_ratio", Target::Sysctl("net.ipv4.tcp_pacing_ss_ratio"), Conv::Plain),
    ("tcp_pacing_ca_ratio", Target::Sysctl("net.ipv4.tcp_pacing_ca_ratio"), Conv::Plain),
    ("tcp_min_rtt_wlen", Target::Sysctl("net.ipv4.tcp_min_rtt_wlen"), Conv::Plain),
    ("tcp_no_metrics_save", Target::Sysctl("net.ipv4.tcp_no_metrics_save"), Conv::Bool),
    ("tcp_no_ssthresh_metrics_save", Target::Sysctl("net.ipv4.tcp_no_ssthresh_metrics_save"), Conv::Bool),
    ("tcp_min_tso_segs", Target::Sysctl("net.ipv4.tcp_min_tso_segs"), Conv::Plain),
    ("tcp_tso_win_divisor", Target::Sysctl("net.ipv4.tcp_tso_win_divisor"), Conv::Plain),
    ("tcp_tso_rtt_log", Target::Sysctl("net.ipv4.tcp_tso_rtt_log"), Conv::Plain),
    ("initcwnd", Target::RouteInitcwnd, Conv::Plain),
    ("mtu", Target::Mtu, Conv::Plain),
    ("hz", Target::Hz, Conv::Plain),
    ("so_sndbuf", Target::SndBuf, Conv::Plain),
    ("so_rcvbuf", Target::RcvBuf, Conv::Plain),
    ("cwnd_growth", Target::Switch(switches::FORWARD_PROGRESS_GROWTH), Conv::Names(CWND_GROWTH_SWITCH)),
    ("cwnd_reduction_floor", Target::Switch(switches::CWND_REDUCTION_FLOOR), Conv::Plain),
    ("ack_on_cwr", Target::Switch(switches::ACK_ON_CWR), Conv::Bool),
    ("dctcp_ack_on_ce_change", Target::Switch(switches::DCTCP_ACK_ON_CE_CHANGE), Conv::Bool),
    ("cwnd_limited_rule", Target::ModelOnly, Conv::Plain),
    ("ack_era", Target::ModelOnly, Conv::Plain),
    ("acked_count", Target::ModelOnly, Conv::Plain),
    ("tcp_fack", Target::ModelOnly, Conv::Plain),
    ("rack_with_dupthresh", Target::ModelOnly, Conv::Plain),
    ("loss_cwnd_one", Target::ModelOnly, Conv::Plain),
    ("prr_rule", Target::ModelOnly, Conv::Plain),
    // tcp_cubic.c's module parameters.
    ("cubic.version", Target::ModelOnly, Conv::Plain),
    ("cubic.hystart_version", Target::ModelOnly, Conv::Plain),
    ("cubic.beta", Target::Param("tcp_cubic.beta"), Conv::Plain),
    ("cubic.bic_scale", Target::Param("tcp_cubic.bic_scale"), Conv::Plain),
    ("cubic.fast_convergence", Target::Param("tcp_cubic.fast_convergence"), Conv::Bool),
    ("cubic.tcp_friendliness", Target::Param("tcp_cubic.tcp_friendliness"), Conv::Bool),
    ("cubic.initial_ssthresh", Target::Param("tcp_cubic.initial_ssthresh"), Conv::Plain),
    ("cubic.hystart", Target::Param("tcp_cubic.hystart"), Conv::Bool),
    ("cubic.hystart_detect", Target::Param("tcp_cubic.hystart_detect"), Conv::Plain),
    ("cubic.hystart_low_window", Target::Param("tcp_cubic.hystart_low_window"), Conv::Plain),
    ("cubic.hystart_ack_delta_us", Target::Param("tcp_cubic.hystart_ack_delta_us"), Conv::Plain),
    ("cubic.hystart_delay_thresh_shift", Target::Switch(switches::HYSTART_DELAY_THRESH_SHIFT), Conv::Plain),
    ("cubic.hystart_plus_plus", Target::ModelOnly, Conv::Plain),
    ("cubic.hystart_plus_plus_l", Target::ModelOnly, Conv::Plain),
    // tcp_dctcp.c's.
    ("dctcp.version", Target::ModelOnly, Conv::Plain),
    ("dctcp.dctcp_shift_g", Target::Param("tcp_dctcp.dctcp_shift_g"), Conv::Plain),
    ("dctcp.dctcp_alpha_on_init", Target::Param("tcp_dctcp.dctcp_alpha_on_init"), Conv::Plain),
    // Removed from Linux ("tcp: dctcp: remove clamp_alpha_on_loss"); its
    // default (off) is what 6.12 does.
    ("dctcp.dctcp_clamp_alpha_on_loss", Target::ModelOnly, Conv::Plain),
    // Reno's era and tcplab's HyStart++ for Reno.
    ("reno.version", Target::ModelOnly, Conv::Plain),
    ("reno.hystart_plus_plus", Target::ModelOnly, Conv::Plain),
    ("reno.hystart_plus_plus_l", Target::ModelOnly, Conv::Plain),
];

/// The target and conversion of knob `name`, if the table has it.
pub fn lookup(name: &str) -> Option<(Target, Conv)> {
    TABLE.iter().find(|(n, _, _)| *n == name).map(|&(_, t, c)| (t, c))
}

/// `value` as the kernel writes it, or `None` when the kernel has no
/// such value (a [`Conv::Names`] name not listed).
pub fn convert(conv: Conv, value: &str) -> Option<String> {
    let v = value.trim().trim_matches('"');
    match conv {
        Conv::Plain => Some(v.to_string()),
        Conv::Bool => match v {
            "true" | "1" => Some("1".into()),
            "false" | "0" => Some("0".into()),
            _ => None,
        },
        Conv::Triple => {
            let inner = v.trim_start_matches('[').trim_end_matches(']');
            let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
            (parts.len() == 3 && parts.iter().all(|p| p.parse::<u64>().is_ok())).then(|| parts.join(" "))
        }
        Conv::Names(names) => names.iter().find(|(n, _)| *n == v).map(|(_, k)| k.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        assert_eq!(convert(Conv::Bool, "true").as_deref(), Some("1"));
        assert_eq!(convert(Conv::Bool, "false").as_deref(), Some("0"));
        assert_eq!(convert(Conv::Triple, "[4096, 131072, 6291456]").as_deref(), Some("4096 131072 6291456"));
        assert_eq!(convert(Conv::Triple, "[1, 2]"), None);
        let names = Conv::Names(CWND_GROWTH_SWITCH);
        assert_eq!(convert(names, "\"data-acked\"").as_deref(), Some("0"));
        assert_eq!(convert(names, "\"v3.12\"").as_deref(), Some("1"));
        assert_eq!(convert(names, "\"v3.11\""), None);
    }

    #[test]
    fn every_switch_in_the_table_is_a_known_switch() {
        for (name, t, _) in TABLE {
            if let Target::Switch(s) = t {
                assert!(switches::ALL.contains(s), "{name} -> {s}");
            }
        }
        for s in switches::ALL {
            assert!(TABLE.iter().any(|(_, t, _)| *t == Target::Switch(s)), "{s} has no knob");
        }
    }
}
