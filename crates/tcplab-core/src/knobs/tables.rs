//! The tables of the knob registry: [`TCP`] (socket knobs, fields of
//! [`TcpConfig`]) and one module-parameter table per congestion control
//! ([`CUBIC`], [`DCTCP`], [`RENO`]), each in documentation order (the
//! order of `tcplab knobs`); and [`UNMODELLED`], the Linux sysctls the
//! model has no knob for.
//!
//! Adding a knob to the core means adding one entry here; scenarios,
//! `tcplab knobs`, packetdrill (if it models a sysctl or module parameter)
//! and the kernel backend then all have it.

use super::{set_name, Absent, IntUnit, Kernel, Kind, KnobSpec, Models, Side, Unmodelled};
use super::{
    AckEra, AckedCount, CwndGrowthRule, CwndLimitedRule, PrrRule, RcvTruesize, TimerWheel, TlpRule, TsClock, HZ_VALUES,
    MIN_MTU,
};
use super::{CcEra, CubicParams, CubicVersion, DctcpParams, DctcpVersion, HystartVersion, RenoParams};
use crate::cc::bbr::BbrParams;
use crate::names::UnknownName;

/// A [`Kind::Choice`] on field `$f` of a named enum `$t`: the getter and
/// the setter cannot name different fields.
macro_rules! choice {
    ($t:ty, $f:ident) => {
        Kind::Choice { names: <$t>::NAMES, get: |c| c.$f.as_str(), set: |c, n| set_name(&mut c.$f, n) }
    };
}

/// `cwnd_growth` on a patched kernel: `forward_progress_growth=1` is
/// v3.12's rule (mainline), `0` the rule reverted (kernel/patches/0001).
/// The other rules have no kernel counterpart.
const CWND_GROWTH_SWITCH: &[(&str, &str)] =
    &[(CwndGrowthRule::V3_12.as_str(), "1"), (CwndGrowthRule::DataAcked.as_str(), "0")];

/// `prr_rule` on a patched kernel (kernel/patches/0010); v3.12's rule has
/// no kernel counterpart.
const PRR_RULE_SWITCH: &[(&str, &str)] = &[(PrrRule::V4_17.as_str(), "1"), (PrrRule::Current.as_str(), "0")];
/// `ts_clock` on a patched kernel (kernel/patches/0008).
const TS_CLOCK_SWITCH: &[(&str, &str)] = &[(TsClock::Jiffies.as_str(), "1"), (TsClock::Ms.as_str(), "0")];

/// A knob with no [`Kernel::Switch`] values.
const fn switch(param: &'static str) -> Kernel {
    Kernel::Switch { param, values: &[] }
}

/// Every socket knob, in documentation order.
pub static TCP: &[KnobSpec] = &[
    KnobSpec {
        name: "tcp_reordering",
        kind: Kind::U32 { acc: |c| &mut c.tcp_reordering, min: 1, max: 100_000, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_reordering"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_reordering: initial reordering degree (dupthresh).",
    },
    KnobSpec {
        name: "tcp_max_reordering",
        kind: Kind::U32 { acc: |c| &mut c.tcp_max_reordering, min: 1, max: 100_000, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_max_reordering"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_max_reordering: cap on the measured reordering degree.",
    },
    KnobSpec {
        name: "tcp_sack",
        kind: Kind::Bool(|c| &mut c.tcp_sack),
        models: Models::Sysctl("net.ipv4.tcp_sack"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_sack: use selective ACKs.",
    },
    KnobSpec {
        name: "tcp_dsack",
        kind: Kind::Bool(|c| &mut c.tcp_dsack),
        models: Models::Sysctl("net.ipv4.tcp_dsack"),
        side: Side::Receiver,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_dsack: send and use D-SACKs.",
    },
    KnobSpec {
        name: "tcp_timestamps",
        kind: Kind::Bool(|c| &mut c.tcp_timestamps),
        models: Models::Sysctl("net.ipv4.tcp_timestamps"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_timestamps: RFC 7323 timestamps.",
    },
    KnobSpec {
        name: "tcp_window_scaling",
        kind: Kind::Bool(|c| &mut c.tcp_window_scaling),
        models: Models::Sysctl("net.ipv4.tcp_window_scaling"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_window_scaling: RFC 7323 window scaling.",
    },
    KnobSpec {
        name: "tcp_ecn",
        kind: Kind::U8 { acc: |c| &mut c.tcp_ecn, min: 0, max: 2 },
        models: Models::Sysctl("net.ipv4.tcp_ecn"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_ecn: 0 off, 1 request and accept ECN, 2 accept only.",
    },
    KnobSpec {
        name: "tcp_recovery",
        kind: Kind::U32 { acc: |c| &mut c.tcp_recovery, min: 0, max: 7, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_recovery"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_recovery: bit 0x1 enables RACK loss detection.",
    },
    KnobSpec {
        name: "tcp_frto",
        kind: Kind::U8 { acc: |c| &mut c.tcp_frto, min: 0, max: 2 },
        models: Models::Sysctl("net.ipv4.tcp_frto"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_frto: F-RTO spurious-RTO detection (0 off, 1 basic, 2 SACK-enhanced).",
    },
    KnobSpec {
        name: "tcp_early_retrans",
        kind: Kind::U8 { acc: |c| &mut c.tcp_early_retrans, min: 0, max: 4 },
        models: Models::Sysctl("net.ipv4.tcp_early_retrans"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_early_retrans: early retransmit / tail loss probe mode.",
    },
    KnobSpec {
        name: "tcp_slow_start_after_idle",
        kind: Kind::Bool(|c| &mut c.tcp_slow_start_after_idle),
        models: Models::Sysctl("net.ipv4.tcp_slow_start_after_idle"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_slow_start_after_idle: restart cwnd after an idle period.",
    },
    KnobSpec {
        name: "tcp_rmem",
        kind: Kind::Triple(|c| &mut c.tcp_rmem),
        models: Models::Sysctl("net.ipv4.tcp_rmem"),
        side: Side::Receiver,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_rmem: receive buffer min, default, max (bytes).",
    },
    KnobSpec {
        name: "tcp_wmem",
        kind: Kind::Triple(|c| &mut c.tcp_wmem),
        models: Models::Sysctl("net.ipv4.tcp_wmem"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_wmem: send buffer min, default, max (bytes).",
    },
    KnobSpec {
        name: "tcp_rto_min_us",
        kind: Kind::U32 { acc: |c| &mut c.tcp_rto_min_us, min: 1, max: 120_000_000, unit: IntUnit::Micros },
        models: Models::Sysctl("net.ipv4.tcp_rto_min_us"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_rto_min_us: lower bound of the RTO.",
    },
    KnobSpec {
        name: "tcp_pacing_ss_ratio",
        kind: Kind::U32 { acc: |c| &mut c.tcp_pacing_ss_ratio, min: 0, max: 1000, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_pacing_ss_ratio"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_pacing_ss_ratio: pacing rate in slow start, percent of cwnd/srtt.",
    },
    KnobSpec {
        name: "tcp_pacing_ca_ratio",
        kind: Kind::U32 { acc: |c| &mut c.tcp_pacing_ca_ratio, min: 0, max: 1000, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_pacing_ca_ratio"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_pacing_ca_ratio: pacing rate in congestion avoidance, percent of cwnd/srtt.",
    },
    KnobSpec {
        name: "tcp_min_rtt_wlen",
        kind: Kind::U32 { acc: |c| &mut c.tcp_min_rtt_wlen, min: 0, max: 86_400, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_min_rtt_wlen"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_min_rtt_wlen: min-RTT filter window (seconds).",
    },
    KnobSpec {
        name: "tcp_no_metrics_save",
        kind: Kind::Bool(|c| &mut c.tcp_no_metrics_save),
        models: Models::Sysctl("net.ipv4.tcp_no_metrics_save"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_no_metrics_save: do not cache metrics of closed connections.",
    },
    KnobSpec {
        name: "tcp_no_ssthresh_metrics_save",
        kind: Kind::Bool(|c| &mut c.tcp_no_ssthresh_metrics_save),
        models: Models::Sysctl("net.ipv4.tcp_no_ssthresh_metrics_save"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_no_ssthresh_metrics_save: do not cache ssthresh.",
    },
    // The TSO knobs decide the model's skb boundaries (TSO deferral and
    // autosizing), hence which wire segments carry PSH, though the model
    // sends MSS-sized segments. Linux keeps them in a u8.
    KnobSpec {
        name: "tcp_min_tso_segs",
        kind: Kind::U32 { acc: |c| &mut c.tcp_min_tso_segs, min: 1, max: 255, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_min_tso_segs"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_min_tso_segs: least segments per TSO skb (tcp_tso_autosize).",
    },
    KnobSpec {
        name: "tcp_tso_win_divisor",
        kind: Kind::U32 { acc: |c| &mut c.tcp_tso_win_divisor, min: 0, max: 255, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_tso_win_divisor"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_tso_win_divisor: TSO deferral sends once 1/divisor of the window is open (0: up to 3 MSS deferred).",
    },
    KnobSpec {
        name: "tcp_tso_rtt_log",
        kind: Kind::U32 { acc: |c| &mut c.tcp_tso_rtt_log, min: 0, max: 255, unit: IntUnit::Count },
        models: Models::Sysctl("net.ipv4.tcp_tso_rtt_log"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "net.ipv4.tcp_tso_rtt_log (v5.18+): tcp_tso_autosize's bonus segments for tiny RTTs (0 = none).",
    },
    KnobSpec {
        name: "initcwnd",
        kind: Kind::U32 { acc: |c| &mut c.initcwnd, min: 1, max: 65_535, unit: IntUnit::Count },
        models: Models::Route("initcwnd"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "Route initcwnd: initial congestion window (packets).",
    },
    KnobSpec {
        name: "mtu",
        kind: Kind::U32 { acc: |c| &mut c.mtu, min: MIN_MTU, max: 65_535, unit: IntUnit::Count },
        models: Models::Link("mtu"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "Interface MTU (bytes); advmss = MTU - 40.",
    },
    KnobSpec {
        name: "hz",
        kind: Kind::U32 { acc: |c| &mut c.hz, min: 100, max: 1000, unit: IntUnit::OneOf(HZ_VALUES) },
        models: Models::Build("CONFIG_HZ"),
        side: Side::Both,
        kernel: Kernel::Native,
        doc: "CONFIG_HZ of the modelled kernel (jiffies; CUBIC's clock).",
    },
    KnobSpec {
        name: "so_sndbuf",
        kind: Kind::U32 { acc: |c| &mut c.so_sndbuf, min: 0, max: i32::MAX as u32, unit: IntUnit::Bytes },
        models: Models::SockOpt("SO_SNDBUF"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "SO_SNDBUF set by the application (0 = autotuned from tcp_wmem).",
    },
    KnobSpec {
        name: "so_rcvbuf",
        kind: Kind::U32 { acc: |c| &mut c.so_rcvbuf, min: 0, max: i32::MAX as u32, unit: IntUnit::Bytes },
        models: Models::SockOpt("SO_RCVBUF"),
        side: Side::Receiver,
        kernel: Kernel::Native,
        doc: "SO_RCVBUF set by the application (0 = autotuned from tcp_rmem).",
    },
    KnobSpec {
        name: "cwnd_growth",
        kind: choice!(CwndGrowthRule, cwnd_growth),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::Switch { param: "tcp_input.forward_progress_growth", values: CWND_GROWTH_SWITCH },
        doc: "Which ACKs may grow cwnd (patch \"tcp: increase throughput when reordering is high\").",
    },
    KnobSpec {
        name: "cwnd_limited_rule",
        kind: choice!(CwndLimitedRule, cwnd_limited_rule),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcp_is_cwnd_limited: in-flight (before 3.16: the ACK's prior in-flight against cwnd, tcp_max_burst and TSO room) or latched (3.16+: tcp_cwnd_validate's flag).",
    },
    KnobSpec {
        name: "rcv_truesize",
        kind: choice!(RcvTruesize, rcv_truesize),
        models: Models::Link("gro"),
        side: Side::Receiver,
        kernel: Kernel::Inherent { form: "per-segment" },
        doc: "Memory charged per received segment (skb->truesize), which sets the window's payload share (scaling_ratio): gro (coalesced, payload + 1/16 + 64) or per-segment (one skb each, payload + 896: the kernel backend's veth, GRO off).",
    },
    KnobSpec {
        name: "ack_era",
        kind: choice!(AckEra, ack_era),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcp_ack structure: v3.12 (cong_avoid before fastretrans_alert, FACK, PRR inside) or current (>= 4.9).",
    },
    KnobSpec {
        name: "acked_count",
        kind: choice!(AckedCount, acked_count),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "What cong_avoid's acked counts: per-ack (<= 3.12), cumulative (3.13-4.8), delivered (>= 4.9).",
    },
    // Removed from Linux in 4.15 ("tcp: remove FACK loss recovery"), so
    // the 6.12 guest has no such sysctl: model only there; packetdrill's
    // corpus still writes it (`tcp_fack=0`).
    KnobSpec {
        name: "tcp_fack",
        kind: Kind::Bool(|c| &mut c.tcp_fack),
        models: Models::Sysctl("net.ipv4.tcp_fack"),
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "net.ipv4.tcp_fack (<= 4.14; read only with ack_era = v3.12).",
    },
    KnobSpec {
        name: "rack_with_dupthresh",
        kind: Kind::Bool(|c| &mut c.rack_with_dupthresh),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "v4.17: dupthresh and RFC 6675 marking still apply with RACK on.",
    },
    KnobSpec {
        name: "loss_cwnd_one",
        kind: Kind::Bool(|c| &mut c.loss_cwnd_one),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcp_enter_loss sets cwnd to 1 (<= 4.17) instead of packets_in_flight + 1.",
    },
    KnobSpec {
        name: "prr_rule",
        kind: choice!(PrrRule, prr_rule),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::Switch { param: "tcp_input.prr_rule_v417", values: PRR_RULE_SWITCH },
        doc: "tcp_cwnd_reduction's slow-start reduction bound, by kernel era.",
    },
    KnobSpec {
        name: "tlp_rule",
        kind: choice!(TlpRule, tlp_rule),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "The tail loss probe's form: v3.10 (to 4.9) or current.",
    },
    KnobSpec {
        name: "ts_clock",
        kind: choice!(TsClock, ts_clock),
        models: Models::Era,
        side: Side::Both,
        kernel: Kernel::Switch { param: "tcp_output.ts_jiffies", values: TS_CLOCK_SWITCH },
        doc: "The TSval clock: jiffies (<= 4.12) or ms (4.13 and since).",
    },
    KnobSpec {
        name: "timer_wheel",
        kind: choice!(TimerWheel, timer_wheel),
        models: Models::Era,
        side: Side::Both,
        kernel: Kernel::ModelOnly,
        doc: "The tick a timer_list (RTO, probes, delayed ACK) runs on: wheel (4.8 and since: rounded up past its level's granularity, at least one jiffy), cascade (<= 4.7: its expiry's tick, apply_slack beyond 256 jiffies) or exact (no wheel; not a kernel).",
    },
    KnobSpec {
        name: "cwnd_reduction_floor",
        kind: Kind::U32 { acc: |c| &mut c.cwnd_reduction_floor, min: 1, max: 2, unit: IntUnit::Count },
        models: Models::Era,
        side: Side::Sender,
        kernel: switch("tcp_input.cwnd_reduction_floor"),
        doc: "Floor of tcp_cwnd_reduction: 1 in mainline, 2 with \"tcp: force cwnd at least 2\".",
    },
    KnobSpec {
        name: "in_ack_event_after_clean",
        kind: Kind::Bool(|c| &mut c.in_ack_event_after_clean),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcp_ack calls in_ack_event after tcp_clean_rtx_queue (6.12.118, the kernel backend's) instead of before (<= 6.13).",
    },
    KnobSpec {
        name: "ack_on_cwr",
        kind: Kind::Bool(|c| &mut c.ack_on_cwr),
        models: Models::Era,
        side: Side::Receiver,
        kernel: switch("tcp_input.ack_on_cwr"),
        doc: "ACK at once when a data segment carries CWR (\"tcp: ack immediately when a cwr packet arrives\").",
    },
    KnobSpec {
        name: "dctcp_ack_on_ce_change",
        kind: Kind::Bool(|c| &mut c.dctcp_ack_on_ce_change),
        models: Models::Era,
        side: Side::Receiver,
        kernel: switch("tcp_dctcp.dctcp_ack_on_ce_change"),
        doc: "DCTCP receiver ACKs at once when the CE state changes (v4.18+); off = the v4.17 receiver.",
    },
    KnobSpec {
        name: "special_ack_keeps_delack",
        kind: Kind::Bool(|c| &mut c.special_ack_keeps_delack),
        models: Models::Era,
        side: Side::Receiver,
        kernel: switch("tcp_output.special_ack_keeps_delack"),
        doc: "DCTCP's ACK for the prior CE state leaves the delayed ACK alone (v4.18+); off = it cancels the \
              segment's own ACK and is owed by delayed_ack_reserved (<= v4.17).",
    },
];

/// Setting `version` selects that kernel's CUBIC and its HyStart and
/// delay-threshold divisor (like `CubicParams::for_version`), keeping
/// the numeric module parameters. A scenario applies it before the other
/// parameters of the same table, whatever the order in the file.
fn set_cubic_version(p: &mut CubicParams, n: &str) -> Result<(), UnknownName> {
    let v: CubicVersion = n.parse()?;
    let fresh = CubicParams::for_version(v);
    p.version = v;
    p.hystart_version = fresh.hystart_version;
    p.hystart_delay_thresh_shift = fresh.hystart_delay_thresh_shift;
    Ok(())
}

/// `tcp_cubic` module parameters (`[tcp.cubic]`), under their
/// `/sys/module/tcp_cubic/parameters/` names where Linux has them.
pub static CUBIC: &[KnobSpec<CubicParams>] = &[
    KnobSpec {
        name: "version",
        kind: Kind::Choice { names: CubicVersion::NAMES, get: |p| p.version.as_str(), set: set_cubic_version },
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "Which kernel's tcp_cubic.c to model (also selects its HyStart).",
    },
    KnobSpec {
        name: "beta",
        kind: Kind::U32 { acc: |p| &mut p.beta, min: 1, max: 1023, unit: IntUnit::Count },
        models: Models::Param("tcp_cubic.beta"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "beta for multiplicative decrease, per 1024 (717 = 0.7).",
    },
    KnobSpec {
        name: "bic_scale",
        kind: Kind::U32 { acc: |p| &mut p.bic_scale, min: 1, max: 429_496_729, unit: IntUnit::Count },
        models: Models::Param("tcp_cubic.bic_scale"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "scale (scaled by 1024) value for bic function (41 gives C = 0.4).",
    },
    KnobSpec {
        name: "fast_convergence",
        kind: Kind::Bool(|p| &mut p.fast_convergence),
        models: Models::Param("tcp_cubic.fast_convergence"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "turn on/off fast convergence.",
    },
    KnobSpec {
        name: "tcp_friendliness",
        kind: Kind::Bool(|p| &mut p.tcp_friendliness),
        models: Models::Param("tcp_cubic.tcp_friendliness"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "turn on/off tcp friendliness.",
    },
    KnobSpec {
        name: "initial_ssthresh",
        kind: Kind::U32 { acc: |p| &mut p.initial_ssthresh, min: 0, max: u32::MAX, unit: IntUnit::Count },
        models: Models::Param("tcp_cubic.initial_ssthresh"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "initial value of slow start threshold (0 = none).",
    },
    KnobSpec {
        name: "hystart",
        kind: Kind::Bool(|p| &mut p.hystart),
        models: Models::Param("tcp_cubic.hystart"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "turn on/off hybrid slow start algorithm.",
    },
    KnobSpec {
        name: "hystart_detect",
        kind: Kind::U8 { acc: |p| &mut p.hystart_detect, min: 0, max: 3 },
        models: Models::Param("tcp_cubic.hystart_detect"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "hybrid slow start detection mechanisms 1: packet-train 2: delay 3: both.",
    },
    KnobSpec {
        name: "hystart_low_window",
        kind: Kind::U32 { acc: |p| &mut p.hystart_low_window, min: 0, max: u32::MAX, unit: IntUnit::Count },
        models: Models::Param("tcp_cubic.hystart_low_window"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "lower bound cwnd for hybrid slow start (packets).",
    },
    // Before 5.7 the parameter was `hystart_ack_delta`, in ms; packetdrill
    // accepts that spelling too.
    KnobSpec {
        name: "hystart_ack_delta_us",
        kind: Kind::U32 { acc: |p| &mut p.hystart_ack_delta_us, min: 0, max: 1_000_000, unit: IntUnit::Micros },
        models: Models::Param("tcp_cubic.hystart_ack_delta_us"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "spacing between ack's indicating train (usecs).",
    },
    KnobSpec {
        name: "hystart_version",
        kind: choice!(HystartVersion, hystart_version),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "Which kernel's HyStart (normally follows version; must match its clock).",
    },
    KnobSpec {
        name: "hystart_delay_thresh_shift",
        kind: Kind::U32 { acc: |p| &mut p.hystart_delay_thresh_shift, min: 0, max: 31, unit: IntUnit::Count },
        models: Models::Era,
        side: Side::Sender,
        kernel: switch("tcp_cubic.hystart_delay_thresh_shift"),
        doc: "HyStart delay threshold is delay_min >> this (4 before v3.19, 3 since).",
    },
    KnobSpec {
        name: "hystart_train_half_rtt",
        kind: Kind::Bool(|p| &mut p.hystart_train_half_rtt),
        models: Models::Era,
        side: Side::Sender,
        kernel: switch("tcp_cubic.hystart_train_half_rtt"),
        doc: "Current HyStart's ACK train needs delay_min/2 even when paced, no ACK-delay allowance (before v5.7).",
    },
    KnobSpec {
        name: "hystart_plus_plus",
        kind: Kind::Bool(|p| &mut p.hystart_plus_plus),
        models: Models::TcplabOnly,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcplab-only, not in Linux: leave slow start by HyStart++ (RFC 9406) instead of HyStart.",
    },
    KnobSpec {
        name: "hystart_plus_plus_l",
        kind: Kind::U32 { acc: |p| &mut p.hystart_plus_plus_l, min: 0, max: u32::MAX, unit: IntUnit::Count },
        models: Models::TcplabOnly,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcplab-only: HyStart++ L, packets of growth per ACK (0 = RFC: infinity if paced, else 8).",
    },
];

/// `tcp_dctcp` module parameters (`[tcp.dctcp]`).
pub static DCTCP: &[KnobSpec<DctcpParams>] = &[
    KnobSpec {
        name: "version",
        kind: choice!(DctcpVersion, version),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "Which kernel's tcp_dctcp.c to model.",
    },
    KnobSpec {
        name: "dctcp_shift_g",
        kind: Kind::U32 { acc: |p| &mut p.shift_g, min: 0, max: 10, unit: IntUnit::Count },
        models: Models::Param("tcp_dctcp.dctcp_shift_g"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "parameter g for updating dctcp_alpha (g = 1/2^shift_g).",
    },
    KnobSpec {
        name: "dctcp_alpha_on_init",
        kind: Kind::U32 { acc: |p| &mut p.alpha_on_init, min: 0, max: 1024, unit: IntUnit::Count },
        models: Models::Param("tcp_dctcp.dctcp_alpha_on_init"),
        side: Side::Sender,
        kernel: Kernel::Native,
        doc: "parameter for initial alpha value (1024 = 1.0).",
    },
    // Removed from Linux ("tcp: dctcp: remove clamp_alpha_on_loss"); its
    // default (off) is what 6.12 does.
    KnobSpec {
        name: "dctcp_clamp_alpha_on_loss",
        kind: Kind::Bool(|p| &mut p.clamp_alpha_on_loss),
        models: Models::Param("tcp_dctcp.dctcp_clamp_alpha_on_loss"),
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "parameter for clamping alpha on loss (v4.17 only).",
    },
];

/// tcplab-only options of Reno (`[tcp.reno]`; Linux's `tcp_reno` has no
/// module parameters). Same names as the HyStart++ keys of [`CUBIC`].
pub static RENO: &[KnobSpec<RenoParams>] = &[
    KnobSpec {
        name: "version",
        kind: choice!(CcEra, era),
        models: Models::Era,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "Which kernel's tcp_reno_cong_avoid and tcp_cong.c helpers: v3.18 (3.13-3.18: one step per ACK, slow start to ssthresh + 1), v3.19 (4.0-4.2: stretch-ACK aware), v4.17 (4.3-5.18), current.",
    },
    KnobSpec {
        name: "hystart_plus_plus",
        kind: Kind::Bool(|p| &mut p.hystart_plus_plus),
        models: Models::TcplabOnly,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcplab-only, not in Linux: leave slow start by HyStart++ (RFC 9406); off = Linux's Reno.",
    },
    KnobSpec {
        name: "hystart_plus_plus_l",
        kind: Kind::U32 { acc: |p| &mut p.hystart_plus_plus_l, min: 0, max: u32::MAX, unit: IntUnit::Count },
        models: Models::TcplabOnly,
        side: Side::Sender,
        kernel: Kernel::ModelOnly,
        doc: "tcplab-only: HyStart++ L, packets of growth per ACK (0 = RFC: infinity if paced, else 8).",
    },
];

/// `[tcp.bbr]`: none. Linux's `tcp_bbr` has no module parameters (its
/// tunables are `static const`), so the table takes no key.
pub static BBR: &[KnobSpec<BbrParams>] = &[];

/// The `net.ipv4` sysctls that packetdrill's corpus sets and the model
/// has no knob for, each with why that is safe (or when it is not).
pub static UNMODELLED: &[Unmodelled] = &[
    Unmodelled {
        sysctl: "net.ipv4.tcp_notsent_lowat",
        treatment: Absent::Fixed(
            "4294967295",
            "a scenario's sockets have no notsent limit (the socket-level limit is \
             Connection::set_notsent_lowat, which packetdrill's harness applies)",
        ),
    },
    Unmodelled {
        sysctl: "net.ipv4.tcp_mtu_probing",
        treatment: Absent::Fixed("0", "MTU probing (tcp_mtu_probe) is not modelled"),
    },
    Unmodelled { sysctl: "net.ipv4.tcp_base_mss", treatment: Absent::Inert("used only by MTU probing, which is off") },
    Unmodelled {
        sysctl: "net.ipv4.tcp_syn_retries",
        treatment: Absent::Inert("no SYN retry limit in the model; matters only after that many SYN timeouts"),
    },
    Unmodelled {
        sysctl: "net.ipv4.tcp_synack_retries",
        treatment: Absent::Inert("no SYN-ACK retry limit in the model; matters only after that many timeouts"),
    },
    Unmodelled {
        sysctl: "net.ipv4.tcp_fastopen",
        treatment: Absent::Inert("Fast Open is not modelled; no script packet uses it"),
    },
    Unmodelled { sysctl: "net.ipv4.tcp_fastopen_key", treatment: Absent::Inert("Fast Open is not modelled") },
    Unmodelled {
        sysctl: "net.ipv4.tcp_syncookies",
        treatment: Absent::Inert("SYN cookies are sent only when the SYN queue overflows"),
    },
    Unmodelled {
        sysctl: "net.ipv4.tcp_ecn_option",
        treatment: Absent::Inert("AccECN option; used only when AccECN (tcp_ecn >= 3) is negotiated"),
    },
];
