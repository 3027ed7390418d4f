//! Where each scenario knob goes on the real kernel.
//!
//! The lab renders every knob of a flow end under its scenario name
//! (`tcp_reordering`, `cubic.beta`) with its value and its `linux-current`
//! value ([`KnobSetting`]); the core's knob registry
//! ([`tcplab_core::knobs`], the one definition of names and values) says
//! what the kernel does with it ([`lookup`]). A knob it cannot place is an
//! error as soon as it differs from its default, so a new model knob can
//! never be dropped silently on the kernel backend.

use tcplab_core::cc::CcConfig;
use tcplab_core::knobs::{self, Kernel, Kind, KnobSpec, Models};

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
    /// A property of the guest no setting changes: accepted, not
    /// translated (the knob shapes the model only).
    Inherent,
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

/// The target and conversion of knob `name` (as the lab renders it:
/// `tcp_reordering`, `cubic.beta`), from the core's knob registry:
/// [`Kernel::Native`] sets what the entry models, a switch or model-only
/// knob says so itself. `None` for a name the registry lacks.
pub fn lookup(name: &str) -> Option<(Target, Conv)> {
    if knobs::TABLE_KEYS.iter().any(|k| k.name == name) {
        return Some((Target::Label, Conv::Plain));
    }
    match name.split_once('.') {
        None => target(knobs::find(name)?),
        Some((cc, param)) => match CcConfig::from_name(cc)? {
            CcConfig::Cubic(_) => target(knobs::CUBIC.iter().find(|k| k.name == param)?),
            CcConfig::Dctcp(_) => target(knobs::DCTCP.iter().find(|k| k.name == param)?),
            CcConfig::Reno(_) => target(knobs::RENO.iter().find(|k| k.name == param)?),
            CcConfig::Bbr(_) => target(knobs::BBR.iter().find(|k| k.name == param)?),
        },
    }
}

/// What the kernel does with one registry entry.
fn target<C>(k: &KnobSpec<C>) -> Option<(Target, Conv)> {
    let conv = match k.kind {
        Kind::Bool(_) => Conv::Bool,
        Kind::Triple(_) => Conv::Triple,
        _ => Conv::Plain,
    };
    Some(match k.kernel {
        Kernel::ModelOnly => (Target::ModelOnly, Conv::Plain),
        Kernel::Inherent { .. } => (Target::Inherent, Conv::Plain),
        Kernel::Switch { param, values: [] } => (Target::Switch(param), conv),
        Kernel::Switch { param, values } => (Target::Switch(param), Conv::Names(values)),
        Kernel::Native => match k.models {
            Models::Sysctl(s) => (Target::Sysctl(s), conv),
            Models::Param(p) => (Target::Param(p), conv),
            Models::Route("initcwnd") => (Target::RouteInitcwnd, conv),
            Models::Link("mtu") => (Target::Mtu, conv),
            Models::Build("CONFIG_HZ") => (Target::Hz, conv),
            Models::SockOpt("SO_SNDBUF") => (Target::SndBuf, conv),
            Models::SockOpt("SO_RCVBUF") => (Target::RcvBuf, conv),
            _ => return None,
        },
    })
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
    use crate::switches;

    #[test]
    fn conversions() {
        assert_eq!(convert(Conv::Bool, "true").as_deref(), Some("1"));
        assert_eq!(convert(Conv::Bool, "false").as_deref(), Some("0"));
        assert_eq!(convert(Conv::Triple, "[4096, 131072, 6291456]").as_deref(), Some("4096 131072 6291456"));
        assert_eq!(convert(Conv::Triple, "[1, 2]"), None);
        let Some((Target::Switch(_), names @ Conv::Names(_))) = lookup("cwnd_growth") else { panic!() };
        assert_eq!(convert(names, "\"data-acked\"").as_deref(), Some("0"));
        assert_eq!(convert(names, "\"v3.12\"").as_deref(), Some("1"));
        assert_eq!(convert(names, "\"v3.11\""), None);
    }

    /// Every knob of the registry, as the lab names it, has a target.
    fn names() -> Vec<String> {
        let mut v: Vec<String> = knobs::TABLE_KEYS.iter().map(|k| k.name.to_string()).collect();
        v.extend(knobs::TCP.iter().map(|k| k.name.to_string()));
        v.extend(knobs::CUBIC.iter().map(|k| format!("cubic.{}", k.name)));
        v.extend(knobs::DCTCP.iter().map(|k| format!("dctcp.{}", k.name)));
        v.extend(knobs::RENO.iter().map(|k| format!("reno.{}", k.name)));
        v
    }

    #[test]
    fn every_registry_knob_has_a_target() {
        for n in names() {
            assert!(lookup(&n).is_some(), "{n}");
        }
        assert_eq!(lookup("tcp_min_tso_segs"), Some((Target::Sysctl("net.ipv4.tcp_min_tso_segs"), Conv::Plain)));
        assert_eq!(lookup("cubic.beta"), Some((Target::Param("tcp_cubic.beta"), Conv::Plain)));
        assert_eq!(lookup("tcp_fack"), Some((Target::ModelOnly, Conv::Plain)));
        assert_eq!(lookup("so_rcvbuf"), Some((Target::RcvBuf, Conv::Plain)));
        assert_eq!(lookup("cubic.nope"), None);
        assert_eq!(lookup("vegas.beta"), None);
    }

    #[test]
    fn every_switch_in_the_registry_is_a_known_switch() {
        let targets: Vec<Target> = names().iter().filter_map(|n| lookup(n)).map(|(t, _)| t).collect();
        for t in &targets {
            if let Target::Switch(s) = t {
                assert!(switches::ALL.contains(s), "{s}");
            }
        }
        // fq's pacing mode sets `tcp_output.edt`, not a TCP knob.
        for s in switches::ALL.iter().filter(|s| **s != switches::EDT) {
            assert!(targets.contains(&Target::Switch(s)), "{s} has no knob");
        }
    }
}
