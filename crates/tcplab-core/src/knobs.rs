//! The knob registry: every setting of [`TcpConfig`] and of the
//! congestion-control modules that something outside the core may change,
//! defined once.
//!
//! Why one table: scenario files (`[tcp]`), `tcplab knobs`/`tcplab presets`,
//! packetdrill's `sysctl`/`/sys/module` commands and the kernel backend's
//! guest set-up all name the same knobs. When each kept its own list they
//! drifted: `tcp_fack` was modelled but packetdrill called it "not
//! modelled", and `tcp_tso_*` could be set from packetdrill but not from a
//! scenario. Now each reads [`KnobSpec`]s from here:
//!
//! - `name`, `kind` (values, range, unit) and `doc`: scenario validation
//!   (tcplab-lab's schema), `tcplab knobs` and the knob table of
//!   docs/scenarios.md (a test keeps it in step);
//! - `models`: the Linux sysctl or module parameter it stands for, which is
//!   how packetdrill addresses it ([`by_sysctl`], [`by_param`]) and how the
//!   kernel backend writes it;
//! - `kernel`: what the kernel backend does with it ([`Kernel`]);
//! - `side`: which half of the connection reads it ([`Side`]).
//!
//! The default per preset is not a column: it is the knob's value in
//! [`TcpConfig::preset`] (read through the same accessor, as
//! `tcplab presets` and [`diff`] do), so it cannot disagree with the code.
//! The congestion-control names are [`CcConfig::NAMES`]; each has one
//! module-parameter table here, keyed by that name.

use crate::cc::cubic::{CubicParams, CubicVersion};
use crate::cc::dctcp::{DctcpParams, DctcpVersion};
use crate::cc::hystart::HystartVersion;
use crate::cc::reno::RenoParams;
use crate::cc::{CcConfig, CcEra};
use crate::config::{
    AckEra, AckedCount, CwndGrowthRule, CwndLimitedRule, RcvTruesize, TcpConfig, TimerWheel, TlpRule, TsClock,
    HZ_VALUES, MIN_MTU,
};
use crate::names::UnknownName;
use crate::prr::PrrRule;

/// What a knob accepts. Each variant carries the accessor of its field in
/// the configuration type `C`: the one typed getter and setter.
pub enum Kind<C> {
    /// `true`/`false` or Linux's `1`/`0`.
    Bool(fn(&mut C) -> &mut bool),
    /// An integer in `[min, max]`. With [`IntUnit::Micros`] a time string
    /// such as `"200ms"` is accepted too; with [`IntUnit::Bytes`] a size
    /// string such as `"4MB"`.
    U32 { acc: fn(&mut C) -> &mut u32, min: u32, max: u32, unit: IntUnit },
    /// A small integer in `[min, max]` (sysctl modes like `tcp_ecn`).
    U8 { acc: fn(&mut C) -> &mut u8, min: u8, max: u8 },
    /// Three byte sizes `[min, default, max]`, like `tcp_rmem`: each at
    /// most `i32::MAX`, in non-decreasing order.
    Triple(fn(&mut C) -> &mut [u32; 3]),
    /// One of a fixed set of names: a core enum's `NAMES`, `as_str` and
    /// `FromStr` ([`crate::names`]). `set` fails on a name not in
    /// `names`, so a typo is never read as the default.
    Choice {
        names: &'static [&'static str],
        get: fn(&C) -> &'static str,
        set: fn(&mut C, &str) -> Result<(), UnknownName>,
    },
}

/// How a plain integer is to be read, and which strings are accepted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum IntUnit {
    /// A count; strings are not accepted.
    Count,
    /// Microseconds; `"200ms"` is accepted.
    Micros,
    /// Bytes; `"64KB"` is accepted.
    Bytes,
    /// One of the listed values only.
    OneOf(&'static [u32]),
}

/// The Linux setting a knob stands for: where a user of a real kernel
/// would change it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Models {
    /// A per-network-namespace sysctl, by its full name
    /// (`net.ipv4.tcp_reordering`). packetdrill sets it with `sysctl` or
    /// `/proc/sys/net/ipv4/...`.
    Sysctl(&'static str),
    /// A module parameter `<module>.<param>` (`tcp_cubic.beta`, in
    /// `/sys/module/tcp_cubic/parameters/beta`).
    Param(&'static str),
    /// An attribute of the route to the peer (`ip route ... initcwnd`).
    Route(&'static str),
    /// An attribute of the interface (`ip link set ... mtu`).
    Link(&'static str),
    /// A kernel build option (`CONFIG_HZ`).
    Build(&'static str),
    /// A socket option the application sets (`SO_SNDBUF`).
    SockOpt(&'static str),
    /// No setting in Linux: the behaviour of a kernel era, which a kernel
    /// change replaced (the doc names the change).
    Era,
    /// Not in Linux at all: a tcplab-only option.
    TcplabOnly,
}

/// Which half of the connection reads a knob. In a scenario, a
/// sender-side knob matters in `[flow.tcp]`, a receiver-side one in
/// `[flow.tcp_receiver]`; both ends take the whole table either way.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Side {
    /// The data sender (loss recovery, congestion control, pacing).
    Sender,
    /// The data receiver (ACKs, window, SACK blocks, ECN echo).
    Receiver,
    /// Both (negotiated at the handshake, or a clock or size both use).
    Both,
}

/// What the kernel backend does with a knob.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kernel {
    /// Sets what [`Models`] names: the sysctl in each host's namespace,
    /// the module parameter on the kernel command line, the route's
    /// `initcwnd`, every veth's MTU, the image's HZ, the socket option.
    Native,
    /// A run-time switch of tcplab's kernel patches (kernel/patches), a
    /// module parameter `<file>.<param>` that only a patched image has.
    /// `values` maps a [`Kind::Choice`] name to the switch's value (a name
    /// not listed has no kernel counterpart); empty for other kinds.
    Switch { param: &'static str, values: &'static [(&'static str, &'static str)] },
    /// A mechanism the real kernel has in one form only: the knob must
    /// keep its `linux-current` value on the kernel backend.
    ModelOnly,
    /// A property of the kernel backend's guest that no setting changes
    /// (`form` names which of the knob's values the guest has): every
    /// value is accepted and none is translated, so that a scenario can
    /// make the model match the guest (or another system) without the
    /// kernel run refusing it.
    Inherent { form: &'static str },
}

/// One knob: its name in a scenario's knob table (or module table), what
/// it accepts, what it stands for in Linux, and who reads it.
pub struct KnobSpec<C: 'static = TcpConfig> {
    pub name: &'static str,
    pub kind: Kind<C>,
    pub models: Models,
    pub side: Side,
    pub kernel: Kernel,
    pub doc: &'static str,
}

impl<C: Clone> KnobSpec<C> {
    /// The value of this knob in `cfg`, as it would be written in TOML.
    pub fn get(&self, cfg: &C) -> String {
        let mut c = cfg.clone();
        match &self.kind {
            Kind::Bool(acc) => acc(&mut c).to_string(),
            Kind::U32 { acc, .. } => acc(&mut c).to_string(),
            Kind::U8 { acc, .. } => acc(&mut c).to_string(),
            Kind::Triple(acc) => {
                let [a, b, d] = *acc(&mut c);
                format!("[{a}, {b}, {d}]")
            }
            Kind::Choice { get, .. } => format!("{:?}", get(&c)),
        }
    }
}

impl<C> KnobSpec<C> {
    /// A short description of the values this knob accepts.
    pub fn accepts(&self) -> String {
        match &self.kind {
            Kind::Bool(_) => "bool (or 0/1)".into(),
            Kind::U32 { min, max, unit, .. } => match unit {
                IntUnit::Count => format!("integer {min}..={max}"),
                IntUnit::Micros => format!("integer µs {min}..={max}, or a time like \"200ms\""),
                IntUnit::Bytes => format!("integer bytes {min}..={max}, or a size like \"64KB\""),
                IntUnit::OneOf(v) => {
                    format!("one of {}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
                }
            },
            Kind::U8 { min, max, .. } => format!("integer {min}..={max}"),
            Kind::Triple(_) => "[min, default, max] bytes (integers or sizes like \"4MB\")".into(),
            Kind::Choice { names, .. } => {
                format!("one of {}", names.iter().map(|n| format!("{n:?}")).collect::<Vec<_>>().join(", "))
            }
        }
    }

    /// Checks an integer for a [`Kind::U32`] or [`Kind::U8`] knob: a
    /// listed value ([`IntUnit::OneOf`]) within `[min, max]`.
    pub fn check_int(&self, v: u64) -> Result<u64, String> {
        let (min, max, unit) = match &self.kind {
            Kind::U32 { min, max, unit, .. } => (u64::from(*min), u64::from(*max), *unit),
            Kind::U8 { min, max, .. } => (u64::from(*min), u64::from(*max), IntUnit::Count),
            _ => return Err(format!("expected {}", self.accepts())),
        };
        // A knob of listed values says which (HZ: the values Linux offers).
        if let IntUnit::OneOf(allowed) = unit {
            if !allowed.iter().any(|a| u64::from(*a) == v) {
                return Err(format!("must be {}, found {v}", self.accepts()));
            }
        }
        if v < min || v > max {
            return Err(format!("must be between {min} and {max}, found {v}"));
        }
        Ok(v)
    }

    /// Sets the knob from the text Linux takes for it (`sysctl -w`,
    /// `echo V > /proc/sys/...` or `/sys/module/.../parameters/...`):
    /// integers (decimal or `0x` hex), `1`/`0` for booleans, three
    /// whitespace-separated integers for a triple, a name for a choice.
    /// The value must be in the knob's range, as in a scenario. The error
    /// says what is wrong with `text`; the caller names the setting.
    pub fn set_text(&self, cfg: &mut C, text: &str) -> Result<(), String> {
        let text = text.trim();
        let bad = || format!("bad value `{text}`");
        match &self.kind {
            Kind::Bool(acc) => {
                *acc(cfg) = match parse_int(text).ok_or_else(bad)? {
                    0 => false,
                    1 => true,
                    v => return Err(format!("must be 0 or 1, found {v}")),
                }
            }
            Kind::U32 { acc, .. } => {
                let v = u64::try_from(parse_int(text).ok_or_else(bad)?).map_err(|_| bad())?;
                *acc(cfg) = self.check_int(v)? as u32;
            }
            Kind::U8 { acc, .. } => {
                let v = u64::try_from(parse_int(text).ok_or_else(bad)?).map_err(|_| bad())?;
                *acc(cfg) = self.check_int(v)? as u8;
            }
            Kind::Triple(acc) => {
                let parts: Vec<&str> = text.split_whitespace().collect();
                if parts.len() != 3 {
                    return Err(format!("expected three numbers, got `{text}`"));
                }
                let mut out = [0u32; 3];
                for (o, p) in out.iter_mut().zip(parts) {
                    let v = parse_int(p).and_then(|v| u64::try_from(v).ok()).ok_or_else(bad)?;
                    *o = triple_element(v)?;
                }
                triple_order(out)?;
                *acc(cfg) = out;
            }
            Kind::Choice { set, .. } => set(cfg, text).map_err(|e| e.to_string())?,
        }
        Ok(())
    }
}

/// One element of a [`Kind::Triple`]: a byte size the kernel keeps in an
/// `int`.
pub fn triple_element(v: u64) -> Result<u32, String> {
    u32::try_from(v)
        .ok()
        .filter(|v| *v <= i32::MAX as u32)
        .ok_or_else(|| format!("{v} bytes is too large (at most {})", i32::MAX))
}

/// The order rule of a [`Kind::Triple`]: `min <= default <= max`.
pub fn triple_order(v: [u32; 3]) -> Result<(), String> {
    if v[0] > v[1] || v[1] > v[2] {
        return Err(format!("values must not decrease: [min, default, max], found {v:?}"));
    }
    Ok(())
}

/// An integer as the kernel's `kstrto*` reads it: decimal, or hex with `0x`.
fn parse_int(v: &str) -> Option<i64> {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else {
        v.parse().ok()
    }
}

/// Sets an enum knob from its name (the core enum's `FromStr`).
fn set_name<E: std::str::FromStr<Err = UnknownName>>(slot: &mut E, name: &str) -> Result<(), UnknownName> {
    *slot = name.parse()?;
    Ok(())
}

/// A key of a knob table that is not a [`KnobSpec`]: it picks what the
/// knobs start from (the preset, the congestion-control module) instead
/// of setting one field.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TableKey {
    pub name: &'static str,
    pub models: Models,
    pub doc: &'static str,
}

/// `preset`: the kernel era every other knob starts from
/// ([`TcpConfig::preset`]).
pub const PRESET: TableKey = TableKey { name: "preset", models: Models::TcplabOnly, doc: "kernel era to start from" };

/// `congestion_control`: the module ([`CcConfig::NAMES`]), in the preset's
/// era ([`TcpConfig::congestion_control_named`]). The kernel backend sets
/// it per socket (`TCP_CONGESTION`), so it is not a sysctl there.
pub const CONGESTION_CONTROL: TableKey = TableKey {
    name: "congestion_control",
    models: Models::Sysctl("net.ipv4.tcp_congestion_control"),
    doc: "net.ipv4.tcp_congestion_control",
};

/// Every [`TableKey`], in the order a knob table lists them.
pub const TABLE_KEYS: &[TableKey] = &[PRESET, CONGESTION_CONTROL];

/// A Linux sysctl the model has no knob for (packetdrill's corpus sets a
/// few), and what a run that sets it gets.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Unmodelled {
    /// The full name (`net.ipv4.tcp_mtu_probing`).
    pub sysctl: &'static str,
    pub treatment: Absent,
}

/// How the model stands to a setting it does not have.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Absent {
    /// Cannot change what a run without the feature observes (e.g.
    /// `tcp_fastopen` when no packet carries a Fast Open option): any
    /// value is accepted, with this note.
    Inert(&'static str),
    /// The model behaves as this value (first); setting it is accepted,
    /// any other value is refused for the reason given (second).
    Fixed(&'static str, &'static str),
}

impl Absent {
    /// Whether `value` (Linux text) is the fixed value, compared as
    /// integers when both are (`0x0` is `0`).
    pub fn accepts(&self, value: &str) -> bool {
        match self {
            Absent::Inert(_) => true,
            Absent::Fixed(model, _) => match (parse_int(value), parse_int(model)) {
                (Some(a), Some(b)) => a == b,
                _ => value.trim() == *model,
            },
        }
    }
}

mod tables;
pub use tables::{BBR, CUBIC, DCTCP, RENO, TCP, UNMODELLED};

/// What the model does about sysctl `full` if it has no knob for it.
pub fn unmodelled(full: &str) -> Option<&'static Unmodelled> {
    UNMODELLED.iter().find(|u| u.sysctl == full)
}

/// Looks a socket knob ([`TCP`]) up by its scenario name.
pub fn find(name: &str) -> Option<&'static KnobSpec> {
    TCP.iter().find(|k| k.name == name)
}

/// The socket knob that models sysctl `full` (`net.ipv4.tcp_fack`).
pub fn by_sysctl(full: &str) -> Option<&'static KnobSpec> {
    TCP.iter().find(|k| matches!(k.models, Models::Sysctl(s) if s == full))
}

/// The knob of `table` that models module parameter `full`
/// (`tcp_cubic.beta`).
pub fn by_param<C>(table: &'static [KnobSpec<C>], full: &str) -> Option<&'static KnobSpec<C>> {
    table.iter().find(|k| matches!(k.models, Models::Param(p) if p == full))
}

fn diff_table<C: Clone>(prefix: &str, table: &[KnobSpec<C>], a: &C, b: &C, out: &mut Vec<(String, String, String)>) {
    for k in table {
        let (va, vb) = (k.get(a), k.get(b));
        if va != vb {
            out.push((format!("{prefix}{}", k.name), va, vb));
        }
    }
}

/// The knobs whose values differ between two configurations, as
/// `(name, value in a, value in b)`, module parameters as `cubic.beta`:
/// what `tcplab presets` prints for each preset against linux-current.
pub fn diff(a: &TcpConfig, b: &TcpConfig) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let (ca, cb) = (a.congestion_control.name(), b.congestion_control.name());
    if ca != cb {
        out.push((CONGESTION_CONTROL.name.to_string(), format!("{ca:?}"), format!("{cb:?}")));
    }
    let prefix = format!("{ca}.");
    match (&a.congestion_control, &b.congestion_control) {
        (CcConfig::Cubic(pa), CcConfig::Cubic(pb)) => diff_table(&prefix, CUBIC, pa, pb, &mut out),
        (CcConfig::Dctcp(pa), CcConfig::Dctcp(pb)) => diff_table(&prefix, DCTCP, pa, pb, &mut out),
        (CcConfig::Reno(pa), CcConfig::Reno(pb)) => diff_table(&prefix, RENO, pa, pb, &mut out),
        (CcConfig::Bbr(pa), CcConfig::Bbr(pb)) => diff_table(&prefix, BBR, pa, pb, &mut out),
        _ => {}
    }
    diff_table("", TCP, a, b, &mut out);
    out
}

#[cfg(test)]
mod tests;
