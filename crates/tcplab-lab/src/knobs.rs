//! The TCP knobs a scenario may set, under their Linux sysctl names, and
//! the congestion-control modules' parameters under their
//! `/sys/module/tcp_*/parameters/` names.
//!
//! One table per target ([`KNOBS`] for [`TcpConfig`], [`CUBIC_PARAMS`],
//! [`DCTCP_PARAMS`]) defines each knob once: its name, what values it
//! takes, its documentation and how it reads and writes the field.
//! Scenario validation, `tcplab knobs`, `tcplab presets` and
//! docs/scenarios.md all come from them. Adding a knob to the core means
//! adding one entry here.

use tcplab_core::cc::bbr::BbrParams;
use tcplab_core::cc::cubic::{CubicParams, CubicVersion};
use tcplab_core::cc::dctcp::{DctcpParams, DctcpVersion};
use tcplab_core::cc::hystart::HystartVersion;
use tcplab_core::cc::reno::RenoParams;
use tcplab_core::cc::{CcConfig, CcEra};
use tcplab_core::config::{AckEra, AckedCount, CwndGrowthRule, CwndLimitedRule};
use tcplab_core::names::UnknownName;
use tcplab_core::prr::PrrRule;
use tcplab_core::TcpConfig;

/// What a knob accepts. Each variant carries the accessor of its field in
/// the configuration type `C`.
pub enum Kind<C> {
    /// `true`/`false` or Linux's `1`/`0`.
    Bool(fn(&mut C) -> &mut bool),
    /// An integer in `[min, max]`. With [`IntUnit::Micros`] a time string
    /// such as `"200ms"` is accepted too; with [`IntUnit::Bytes`] a size
    /// string such as `"4MB"`.
    U32 { acc: fn(&mut C) -> &mut u32, min: u32, max: u32, unit: IntUnit },
    /// A small integer in `[min, max]` (sysctl modes like `tcp_ecn`).
    U8 { acc: fn(&mut C) -> &mut u8, min: u8, max: u8 },
    /// Three byte sizes `[min, default, max]`, like `tcp_rmem`.
    Triple(fn(&mut C) -> &mut [u32; 3]),
    /// One of a fixed set of names: a core enum's `NAMES`, `as_str` and
    /// `FromStr` (tcplab_core::names). `set` fails on a name not in
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

pub struct Knob<C: 'static = TcpConfig> {
    pub name: &'static str,
    pub kind: Kind<C>,
    pub doc: &'static str,
}

impl<C: Clone> Knob<C> {
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

/// A short description of the values a knob accepts.
pub fn type_desc<C>(k: &Knob<C>) -> String {
    match &k.kind {
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

/// Sets an enum knob from its name (the core enum's `FromStr`).
fn set_name<E: std::str::FromStr<Err = UnknownName>>(slot: &mut E, name: &str) -> Result<(), UnknownName> {
    *slot = name.parse()?;
    Ok(())
}

/// Every socket knob, in documentation order.
pub static KNOBS: &[Knob] = &[
    Knob {
        name: "tcp_reordering",
        kind: Kind::U32 { acc: |c| &mut c.tcp_reordering, min: 1, max: 100_000, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_reordering: initial reordering degree (dupthresh).",
    },
    Knob {
        name: "tcp_max_reordering",
        kind: Kind::U32 { acc: |c| &mut c.tcp_max_reordering, min: 1, max: 100_000, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_max_reordering: cap on the measured reordering degree.",
    },
    Knob { name: "tcp_sack", kind: Kind::Bool(|c| &mut c.tcp_sack), doc: "net.ipv4.tcp_sack: use selective ACKs." },
    Knob {
        name: "tcp_dsack",
        kind: Kind::Bool(|c| &mut c.tcp_dsack),
        doc: "net.ipv4.tcp_dsack: send and use D-SACKs.",
    },
    Knob {
        name: "tcp_timestamps",
        kind: Kind::Bool(|c| &mut c.tcp_timestamps),
        doc: "net.ipv4.tcp_timestamps: RFC 7323 timestamps.",
    },
    Knob {
        name: "tcp_window_scaling",
        kind: Kind::Bool(|c| &mut c.tcp_window_scaling),
        doc: "net.ipv4.tcp_window_scaling: RFC 7323 window scaling.",
    },
    Knob {
        name: "tcp_ecn",
        kind: Kind::U8 { acc: |c| &mut c.tcp_ecn, min: 0, max: 2 },
        doc: "net.ipv4.tcp_ecn: 0 off, 1 request and accept ECN, 2 accept only.",
    },
    Knob {
        name: "tcp_recovery",
        kind: Kind::U32 { acc: |c| &mut c.tcp_recovery, min: 0, max: 7, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_recovery: bit 0x1 enables RACK loss detection.",
    },
    Knob {
        name: "tcp_frto",
        kind: Kind::U8 { acc: |c| &mut c.tcp_frto, min: 0, max: 2 },
        doc: "net.ipv4.tcp_frto: F-RTO spurious-RTO detection (0 off, 1 basic, 2 SACK-enhanced).",
    },
    Knob {
        name: "tcp_early_retrans",
        kind: Kind::U8 { acc: |c| &mut c.tcp_early_retrans, min: 0, max: 4 },
        doc: "net.ipv4.tcp_early_retrans: early retransmit / tail loss probe mode.",
    },
    Knob {
        name: "tcp_slow_start_after_idle",
        kind: Kind::Bool(|c| &mut c.tcp_slow_start_after_idle),
        doc: "net.ipv4.tcp_slow_start_after_idle: restart cwnd after an idle period.",
    },
    Knob {
        name: "tcp_rmem",
        kind: Kind::Triple(|c| &mut c.tcp_rmem),
        doc: "net.ipv4.tcp_rmem: receive buffer min, default, max (bytes).",
    },
    Knob {
        name: "tcp_wmem",
        kind: Kind::Triple(|c| &mut c.tcp_wmem),
        doc: "net.ipv4.tcp_wmem: send buffer min, default, max (bytes).",
    },
    Knob {
        name: "tcp_rto_min_us",
        kind: Kind::U32 { acc: |c| &mut c.tcp_rto_min_us, min: 1, max: 120_000_000, unit: IntUnit::Micros },
        doc: "net.ipv4.tcp_rto_min_us: lower bound of the RTO.",
    },
    Knob {
        name: "tcp_pacing_ss_ratio",
        kind: Kind::U32 { acc: |c| &mut c.tcp_pacing_ss_ratio, min: 0, max: 1000, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_pacing_ss_ratio: pacing rate in slow start, percent of cwnd/srtt.",
    },
    Knob {
        name: "tcp_pacing_ca_ratio",
        kind: Kind::U32 { acc: |c| &mut c.tcp_pacing_ca_ratio, min: 0, max: 1000, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_pacing_ca_ratio: pacing rate in congestion avoidance, percent of cwnd/srtt.",
    },
    Knob {
        name: "tcp_min_rtt_wlen",
        kind: Kind::U32 { acc: |c| &mut c.tcp_min_rtt_wlen, min: 0, max: 86_400, unit: IntUnit::Count },
        doc: "net.ipv4.tcp_min_rtt_wlen: min-RTT filter window (seconds).",
    },
    Knob {
        name: "tcp_no_metrics_save",
        kind: Kind::Bool(|c| &mut c.tcp_no_metrics_save),
        doc: "net.ipv4.tcp_no_metrics_save: do not cache metrics of closed connections.",
    },
    Knob {
        name: "tcp_no_ssthresh_metrics_save",
        kind: Kind::Bool(|c| &mut c.tcp_no_ssthresh_metrics_save),
        doc: "net.ipv4.tcp_no_ssthresh_metrics_save: do not cache ssthresh.",
    },
    Knob {
        name: "initcwnd",
        kind: Kind::U32 { acc: |c| &mut c.initcwnd, min: 1, max: 65_535, unit: IntUnit::Count },
        doc: "Route initcwnd: initial congestion window (packets).",
    },
    Knob {
        name: "mtu",
        kind: Kind::U32 { acc: |c| &mut c.mtu, min: tcplab_sim::MIN_MTU, max: 65_535, unit: IntUnit::Count },
        doc: "Interface MTU (bytes); advmss = MTU - 40.",
    },
    Knob {
        name: "hz",
        kind: Kind::U32 { acc: |c| &mut c.hz, min: 100, max: 1000, unit: IntUnit::OneOf(tcplab_core::config::HZ_VALUES) },
        doc: "CONFIG_HZ of the modelled kernel (jiffies; CUBIC's clock).",
    },
    Knob {
        name: "so_sndbuf",
        kind: Kind::U32 { acc: |c| &mut c.so_sndbuf, min: 0, max: i32::MAX as u32, unit: IntUnit::Bytes },
        doc: "SO_SNDBUF set by the application (0 = autotuned from tcp_wmem).",
    },
    Knob {
        name: "so_rcvbuf",
        kind: Kind::U32 { acc: |c| &mut c.so_rcvbuf, min: 0, max: i32::MAX as u32, unit: IntUnit::Bytes },
        doc: "SO_RCVBUF set by the application (0 = autotuned from tcp_rmem).",
    },
    Knob {
        name: "cwnd_growth",
        kind: Kind::Choice {
            names: CwndGrowthRule::NAMES,
            get: |c| c.cwnd_growth.as_str(),
            set: |c, n| set_name(&mut c.cwnd_growth, n),
        },
        doc: "Which ACKs may grow cwnd (patch \"tcp: increase throughput when reordering is high\").",
    },
    Knob {
        name: "cwnd_limited_rule",
        kind: Kind::Choice {
            names: CwndLimitedRule::NAMES,
            get: |c| c.cwnd_limited_rule.as_str(),
            set: |c, n| set_name(&mut c.cwnd_limited_rule, n),
        },
        doc: "tcp_is_cwnd_limited: in-flight (before 3.16: the ACK's prior in-flight against cwnd, tcp_max_burst and TSO room) or latched (3.16+: tcp_cwnd_validate's flag).",
    },
    Knob {
        name: "ack_era",
        kind: Kind::Choice { names: AckEra::NAMES, get: |c| c.ack_era.as_str(), set: |c, n| set_name(&mut c.ack_era, n) },
        doc: "tcp_ack structure: v3.12 (cong_avoid before fastretrans_alert, FACK, PRR inside) or current (>= 4.9).",
    },
    Knob {
        name: "acked_count",
        kind: Kind::Choice {
            names: AckedCount::NAMES,
            get: |c| c.acked_count.as_str(),
            set: |c, n| set_name(&mut c.acked_count, n),
        },
        doc: "What cong_avoid's acked counts: per-ack (<= 3.12), cumulative (3.13-4.8), delivered (>= 4.9).",
    },
    Knob {
        name: "tcp_fack",
        kind: Kind::Bool(|c| &mut c.tcp_fack),
        doc: "net.ipv4.tcp_fack (<= 4.14; read only with ack_era = v3.12).",
    },
    Knob {
        name: "rack_with_dupthresh",
        kind: Kind::Bool(|c| &mut c.rack_with_dupthresh),
        doc: "v4.17: dupthresh and RFC 6675 marking still apply with RACK on.",
    },
    Knob {
        name: "loss_cwnd_one",
        kind: Kind::Bool(|c| &mut c.loss_cwnd_one),
        doc: "tcp_enter_loss sets cwnd to 1 (<= 4.17) instead of packets_in_flight + 1.",
    },
    Knob {
        name: "prr_rule",
        kind: Kind::Choice { names: PrrRule::NAMES, get: |c| c.prr_rule.as_str(), set: |c, n| set_name(&mut c.prr_rule, n) },
        doc: "tcp_cwnd_reduction's slow-start reduction bound, by kernel era.",
    },
    Knob {
        name: "cwnd_reduction_floor",
        kind: Kind::U32 { acc: |c| &mut c.cwnd_reduction_floor, min: 1, max: 2, unit: IntUnit::Count },
        doc: "Floor of tcp_cwnd_reduction: 1 in mainline, 2 with \"tcp: force cwnd at least 2\".",
    },
    Knob {
        name: "ack_on_cwr",
        kind: Kind::Bool(|c| &mut c.ack_on_cwr),
        doc: "ACK at once when a data segment carries CWR (\"tcp: ack immediately when a cwr packet arrives\").",
    },
    Knob {
        name: "dctcp_ack_on_ce_change",
        kind: Kind::Bool(|c| &mut c.dctcp_ack_on_ce_change),
        doc: "DCTCP receiver ACKs at once when the CE state changes (v4.18+); off = the v4.17 receiver.",
    },
];

/// Looks a knob up by name.
pub fn find(name: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.name == name)
}

/// Setting `version` selects that kernel's CUBIC and its HyStart and
/// delay-threshold divisor (like `CubicParams::for_version`), keeping
/// the numeric module parameters. It is applied before the other
/// parameters of the same table, whatever the order in the file.
fn set_cubic_version(p: &mut CubicParams, n: &str) -> Result<(), UnknownName> {
    let v: CubicVersion = n.parse()?;
    let fresh = CubicParams::for_version(v);
    p.version = v;
    p.hystart_version = fresh.hystart_version;
    p.hystart_delay_thresh_shift = fresh.hystart_delay_thresh_shift;
    Ok(())
}

/// `tcp_cubic` module parameters (`[tcp.cubic]`).
pub static CUBIC_PARAMS: &[Knob<CubicParams>] = &[
    Knob {
        name: "version",
        kind: Kind::Choice { names: CubicVersion::NAMES, get: |p| p.version.as_str(), set: set_cubic_version },
        doc: "Which kernel's tcp_cubic.c to model (also selects its HyStart).",
    },
    Knob {
        name: "beta",
        kind: Kind::U32 { acc: |p| &mut p.beta, min: 1, max: 1023, unit: IntUnit::Count },
        doc: "beta for multiplicative decrease, per 1024 (717 = 0.7).",
    },
    Knob {
        name: "bic_scale",
        kind: Kind::U32 { acc: |p| &mut p.bic_scale, min: 1, max: 429_496_729, unit: IntUnit::Count },
        doc: "scale (scaled by 1024) value for bic function (41 gives C = 0.4).",
    },
    Knob {
        name: "fast_convergence",
        kind: Kind::Bool(|p| &mut p.fast_convergence),
        doc: "turn on/off fast convergence.",
    },
    Knob {
        name: "tcp_friendliness",
        kind: Kind::Bool(|p| &mut p.tcp_friendliness),
        doc: "turn on/off tcp friendliness.",
    },
    Knob {
        name: "initial_ssthresh",
        kind: Kind::U32 { acc: |p| &mut p.initial_ssthresh, min: 0, max: u32::MAX, unit: IntUnit::Count },
        doc: "initial value of slow start threshold (0 = none).",
    },
    Knob { name: "hystart", kind: Kind::Bool(|p| &mut p.hystart), doc: "turn on/off hybrid slow start algorithm." },
    Knob {
        name: "hystart_detect",
        kind: Kind::U8 { acc: |p| &mut p.hystart_detect, min: 0, max: 3 },
        doc: "hybrid slow start detection mechanisms 1: packet-train 2: delay 3: both.",
    },
    Knob {
        name: "hystart_low_window",
        kind: Kind::U32 { acc: |p| &mut p.hystart_low_window, min: 0, max: u32::MAX, unit: IntUnit::Count },
        doc: "lower bound cwnd for hybrid slow start (packets).",
    },
    Knob {
        name: "hystart_ack_delta_us",
        kind: Kind::U32 { acc: |p| &mut p.hystart_ack_delta_us, min: 0, max: 1_000_000, unit: IntUnit::Micros },
        doc: "spacing between ack's indicating train (usecs).",
    },
    Knob {
        name: "hystart_version",
        kind: Kind::Choice {
            names: HystartVersion::NAMES,
            get: |p| p.hystart_version.as_str(),
            set: |p, n| set_name(&mut p.hystart_version, n),
        },
        doc: "Which kernel's HyStart (normally follows version; must match its clock).",
    },
    Knob {
        name: "hystart_delay_thresh_shift",
        kind: Kind::U32 { acc: |p| &mut p.hystart_delay_thresh_shift, min: 0, max: 31, unit: IntUnit::Count },
        doc: "HyStart delay threshold is delay_min >> this (4 before v3.19, 3 since).",
    },
    Knob {
        name: "hystart_plus_plus",
        kind: Kind::Bool(|p| &mut p.hystart_plus_plus),
        doc: "tcplab-only, not in Linux: leave slow start by HyStart++ (RFC 9406) instead of HyStart.",
    },
    Knob {
        name: "hystart_plus_plus_l",
        kind: Kind::U32 { acc: |p| &mut p.hystart_plus_plus_l, min: 0, max: u32::MAX, unit: IntUnit::Count },
        doc: "tcplab-only: HyStart++ L, packets of growth per ACK (0 = RFC: infinity if paced, else 8).",
    },
];

/// tcplab-only options of Reno (`[tcp.reno]`; Linux's `tcp_reno` has no
/// module parameters). Same names as the HyStart++ keys of [`CUBIC_PARAMS`].
pub static RENO_PARAMS: &[Knob<RenoParams>] = &[
    Knob {
        name: "version",
        kind: Kind::Choice { names: CcEra::NAMES, get: |p| p.era.as_str(), set: |p, n| set_name(&mut p.era, n) },
        doc: "Which kernel's tcp_reno_cong_avoid and tcp_cong.c helpers: v3.18 (3.13-3.18: one step per ACK, slow start to ssthresh + 1), v3.19 (4.0-4.2: stretch-ACK aware), v4.17 (4.3-5.18), current.",
    },
    Knob {
        name: "hystart_plus_plus",
        kind: Kind::Bool(|p| &mut p.hystart_plus_plus),
        doc: "tcplab-only, not in Linux: leave slow start by HyStart++ (RFC 9406); off = Linux's Reno.",
    },
    Knob {
        name: "hystart_plus_plus_l",
        kind: Kind::U32 { acc: |p| &mut p.hystart_plus_plus_l, min: 0, max: u32::MAX, unit: IntUnit::Count },
        doc: "tcplab-only: HyStart++ L, packets of growth per ACK (0 = RFC: infinity if paced, else 8).",
    },
];

/// `tcp_dctcp` module parameters (`[tcp.dctcp]`).
pub static DCTCP_PARAMS: &[Knob<DctcpParams>] = &[
    Knob {
        name: "version",
        kind: Kind::Choice {
            names: DctcpVersion::NAMES,
            get: |p| p.version.as_str(),
            set: |p, n| set_name(&mut p.version, n),
        },
        doc: "Which kernel's tcp_dctcp.c to model.",
    },
    Knob {
        name: "dctcp_shift_g",
        kind: Kind::U32 { acc: |p| &mut p.shift_g, min: 0, max: 10, unit: IntUnit::Count },
        doc: "parameter g for updating dctcp_alpha (g = 1/2^shift_g).",
    },
    Knob {
        name: "dctcp_alpha_on_init",
        kind: Kind::U32 { acc: |p| &mut p.alpha_on_init, min: 0, max: 1024, unit: IntUnit::Count },
        doc: "parameter for initial alpha value (1024 = 1.0).",
    },
    Knob {
        name: "dctcp_clamp_alpha_on_loss",
        kind: Kind::Bool(|p| &mut p.clamp_alpha_on_loss),
        doc: "parameter for clamping alpha on loss (v4.17 only).",
    },
];

/// `[tcp.bbr]`: none. Linux's `tcp_bbr` has no module parameters (its
/// tunables are `static const`), so the table takes no key.
pub static BBR_PARAMS: &[Knob<BbrParams>] = &[];

/// Module-parameter tables inside a knob table (`[tcp.cubic]`), in the
/// order a knob table lists its keys: one per congestion control of
/// [`CcConfig::NAMES`] ([`CUBIC_PARAMS`], [`DCTCP_PARAMS`], [`RENO_PARAMS`],
/// [`BBR_PARAMS`]).
pub const MODULE_TABLES: &[&str] = &["cubic", "dctcp", "reno", "bbr"];

fn diff_table<C: Clone>(prefix: &str, table: &[Knob<C>], a: &C, b: &C, out: &mut Vec<(String, String, String)>) {
    for k in table {
        let (va, vb) = (k.get(a), k.get(b));
        if va != vb {
            out.push((format!("{prefix}{}", k.name), va, vb));
        }
    }
}

/// The knobs whose values differ between two configurations, as
/// `(name, value in a, value in b)`, module parameters as `cubic.beta`.
pub fn diff(a: &TcpConfig, b: &TcpConfig) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let (ca, cb) = (a.congestion_control.name(), b.congestion_control.name());
    if ca != cb {
        out.push(("congestion_control".to_string(), format!("{ca:?}"), format!("{cb:?}")));
    }
    match (&a.congestion_control, &b.congestion_control) {
        (CcConfig::Cubic(pa), CcConfig::Cubic(pb)) => diff_table("cubic.", CUBIC_PARAMS, pa, pb, &mut out),
        (CcConfig::Dctcp(pa), CcConfig::Dctcp(pb)) => diff_table("dctcp.", DCTCP_PARAMS, pa, pb, &mut out),
        (CcConfig::Reno(pa), CcConfig::Reno(pb)) => diff_table("reno.", RENO_PARAMS, pa, pb, &mut out),
        _ => {}
    }
    diff_table("", KNOBS, a, b, &mut out);
    out
}

fn render_table<C: Clone>(
    prefix: &str,
    table: &[Knob<C>],
    cfg: &C,
    default: &C,
    out: &mut Vec<tcplab_kernel::KnobSetting>,
) {
    for k in table {
        out.push(tcplab_kernel::KnobSetting::new(format!("{prefix}{}", k.name), k.get(cfg), k.get(default)));
    }
}

/// Every knob of `cfg` with its value and its `linux-current` value (for
/// the same congestion control), for the kernel backend's translation,
/// which decides per knob what the kernel does with it
/// (tcplab-kernel's `knobs.rs`).
pub fn render(cfg: &TcpConfig) -> Vec<tcplab_kernel::KnobSetting> {
    let mut default = TcpConfig::linux_current();
    if let Some(cc) = CcConfig::from_name(cfg.congestion_control.name()) {
        default.congestion_control = cc;
    }
    let mut out = vec![tcplab_kernel::KnobSetting::new("preset", format!("{:?}", cfg.preset), "\"linux-current\"")];
    match (&cfg.congestion_control, &default.congestion_control) {
        (CcConfig::Cubic(p), CcConfig::Cubic(d)) => render_table("cubic.", CUBIC_PARAMS, p, d, &mut out),
        (CcConfig::Dctcp(p), CcConfig::Dctcp(d)) => render_table("dctcp.", DCTCP_PARAMS, p, d, &mut out),
        (CcConfig::Reno(p), CcConfig::Reno(d)) => render_table("reno.", RENO_PARAMS, p, d, &mut out),
        _ => {}
    }
    render_table("", KNOBS, cfg, &default, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every name knob of `table`: each listed name sets a value that reads
    /// back as that name, and an unknown name is an error listing the
    /// names, with the configuration left as it was.
    fn check_choices<C: Clone + PartialEq + std::fmt::Debug>(table: &[Knob<C>], base: &C) -> usize {
        let mut n = 0;
        for k in table {
            let Kind::Choice { names, get, set } = &k.kind else { continue };
            n += 1;
            for name in *names {
                let mut c = base.clone();
                set(&mut c, name).unwrap_or_else(|e| panic!("{}: {e}", k.name));
                assert_eq!(get(&c), *name, "{}", k.name);
            }
            let mut c = base.clone();
            let e = set(&mut c, "nope").unwrap_err();
            assert_eq!(e.valid, *names, "{}", k.name);
            assert_eq!(c, *base, "{}: a failed set changed the value", k.name);
        }
        n
    }

    #[test]
    fn test_every_congestion_control_has_its_module_table() {
        let mut tables = MODULE_TABLES.to_vec();
        let mut names = CcConfig::NAMES.to_vec();
        tables.sort_unstable();
        names.sort_unstable();
        assert_eq!(tables, names);
    }

    #[test]
    fn test_choice_knobs_round_trip_and_reject_unknown_names() {
        assert_eq!(check_choices(KNOBS, &TcpConfig::default()), 5);
        assert_eq!(check_choices(CUBIC_PARAMS, &CubicParams::default()), 2);
        assert_eq!(check_choices(DCTCP_PARAMS, &DctcpParams::default()), 1);
        assert_eq!(check_choices(RENO_PARAMS, &RenoParams::default()), 1);
    }
}
