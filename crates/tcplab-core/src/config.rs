//! Knobs: Linux sysctls (under their `net.ipv4.*` names), the
//! congestion-control module and its parameters, and the behaviours that
//! kernel patches changed, each as a named setting rather than a code fork.
//!
//! Every default is current Linux. A kernel era is a [`preset`](TcpConfig::preset):
//! a bundle of knob values that can still be overridden one by one.

use crate::cc::cubic::{CubicParams, CubicVersion};
use crate::cc::dctcp::{DctcpParams, DctcpVersion};
use crate::cc::CcConfig;
use crate::prr::PrrRule;
pub use crate::timer_wheel::TimerWheel;

/// How congestion control decides that cwnd, not the application or the
/// pacing, limits the sender (`tcp_is_cwnd_limited`, include/net/tcp.h):
/// cwnd only grows while it does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CwndLimitedRule {
    /// Before 3.16: the ACK's prior in-flight fills cwnd, or leaves less
    /// than a TSO frame (`tcp_tso_win_divisor`) or `tcp_max_burst`
    /// (= reordering) of room.
    InFlight,
    /// 3.16 and since ("tcp: fix cwnd limited checking to improve
    /// congestion control"): the flag `tcp_cwnd_validate` latches per
    /// window, and in slow start cwnd < 2 x max_packets_out.
    #[default]
    Latched,
}

crate::names::named_enum!(CwndLimitedRule { InFlight => "in-flight", Latched => "latched" });

/// Which ACKs may grow cwnd (`tcp_may_raise_cwnd`, tcp_input.c), the knob of
/// "tcp: increase throughput when reordering is high" (v3.12).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum CwndGrowthRule {
    /// v3.11: only on `FLAG_DATA_ACKED`, not while ECE and cwnd ≥ ssthresh,
    /// and `tcp_try_to_open` moderates cwnd in Disorder.
    V3_11,
    /// The rule as posted: as merged, plus growth only in Open state when
    /// reordering is low.
    Posted,
    /// v3.12 and since: no growth in CWR/Recovery; `FLAG_FORWARD_PROGRESS`
    /// when `reordering > tcp_reordering`, else `FLAG_DATA_ACKED`.
    #[default]
    V3_12,
    /// Today's kernel with the seed patch's rule reverted: no growth in
    /// CWR/Recovery, and only on `FLAG_DATA_ACKED` whatever the
    /// reordering. The kernel backend's switch
    /// `tcp_input.forward_progress_growth=0` (kernel/patches/0001).
    DataAcked,
}

crate::names::named_enum!(CwndGrowthRule { V3_11 => "v3.11", Posted => "posted", V3_12 => "v3.12", DataAcked => "data-acked" });

/// Which kernel's `tcp_ack` / `tcp_fastretrans_alert` structure runs.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum AckEra {
    /// v3.x: `tcp_cong_avoid` before `tcp_fastretrans_alert`, PRR inside
    /// the state machine with the 3.x `newly_acked_sacked`, FACK and
    /// packet-counted reordering (`tcp_update_reordering`), dupthresh on
    /// `fackets_out`, the 3.x partial undo.
    V3_12,
    /// v4.9 and since (modelled on 6.13): `tcp_fastretrans_alert` first,
    /// then `tcp_cong_control`; reordering in sequence space
    /// (`tcp_check_sack_reordering`).
    #[default]
    Current,
}

crate::names::named_enum!(AckEra { V3_12 => "v3.12", Current => "current" });

/// The clock of the TSval a segment carries (`tcp_time_stamp`): jiffies
/// until "tcp: switch TCP TS option (RFC 7323) to 1ms clock" (4.13), then
/// milliseconds whatever HZ is. At HZ 250 the jiffies clock ticks every
/// 4 ms, so PAWS (`TCP_PAWS_WINDOW`, one tick) lets a segment through
/// up to 4 ms older than `ts_recent` instead of 1 ms, and the
/// timestamp-based RTT samples and the undo test (`tcp_packet_delayed`)
/// see the coarser clock.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum TsClock {
    /// ≤ 4.12: `tcp_time_stamp` = jiffies.
    Jiffies,
    /// 4.13 and since: `tcp_clock_ms` (`tcp_time_stamp_ms`).
    #[default]
    Ms,
}

crate::names::named_enum!(TsClock { Jiffies => "jiffies", Ms => "ms" });

impl TsClock {
    /// A span of `ticks` of this clock in µs.
    #[inline]
    pub fn ticks_to_us(self, ticks: u32, hz: u32) -> u64 {
        match self {
            TsClock::Ms => ticks as u64 * 1000,
            TsClock::Jiffies => crate::rtt::jiffies_to_usecs(ticks as u64, hz) as u64,
        }
    }
}

/// The form of the tail loss probe (`tcp_schedule_loss_probe`,
/// `tcp_send_loss_probe`, tcp_output.c; `tcp_process_tlp_ack`,
/// tcp_input.c).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum TlpRule {
    /// 3.10 to 4.9: scheduled only in Open, only when the RTO is the
    /// pending timer and cwnd or the application limits the sender; the
    /// probe timeout is 2·srtt (with one packet out at least 1.5·srtt +
    /// `TCP_DELACK_MAX`), at least 10 ms; a probe of new data does not
    /// count as the episode's probe; any D-SACK on the ACK that ends the
    /// episode spares the cwnd reduction.
    V3_10,
    /// 4.13 and since (modelled on 6.13): in Open or CWR; 2·srtt plus
    /// `TCP_TIMEOUT_MIN_US` (`rto_min` with one packet out); one probe of
    /// either kind per episode, and only a D-SACK of the probe itself
    /// (`FLAG_DSACK_TLP`) shows it was not needed.
    #[default]
    Current,
}

crate::names::named_enum!(TlpRule { V3_10 => "v3.10", Current => "current" });

/// The memory (`skb->truesize`) a received segment is charged against the
/// receive buffer, which sets the payload share a window may promise
/// (`tp->scaling_ratio`, `tcp_measure_rcv_mss`). It depends on the
/// receiving interface, not on TCP: a NIC that coalesces with GRO charges
/// little beyond the payload, a path that hands TCP one skb per segment
/// (veth without GRO, as in the kernel backend's guest) charges each
/// segment its own `sk_buff`, shared info and header room.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum RcvTruesize {
    /// GRO-coalesced: payload + 1/16 + 64 bytes (ratio ≈ 0.90 for 1,448
    /// bytes).
    #[default]
    Gro,
    /// One skb per segment: payload + 896 bytes (ratio ≈ 0.62 for 1,448
    /// bytes), the kernel backend's veth receive path.
    PerSegment,
}

crate::names::named_enum!(RcvTruesize { Gro => "gro", PerSegment => "per-segment" });

/// What the `acked` argument of `cong_avoid` counts (`tcp_cong_avoid`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum AckedCount {
    /// ≤ v3.12: every call is one ACK (slow start +1 per ACK).
    PerAck,
    /// v3.13–v4.8: packets cumulatively acknowledged by this ACK.
    Cumulative,
    /// ≥ v4.9: `tp->delivered` delta (cumulative + SACKed).
    #[default]
    Delivered,
}

crate::names::named_enum!(AckedCount { PerAck => "per-ack", Cumulative => "cumulative", Delivered => "delivered" });

/// Socket-level TCP settings of one endpoint.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpConfig {
    /// Name of the preset this configuration started from.
    pub preset: &'static str,
    /// `net.ipv4.tcp_congestion_control` and the module's parameters.
    pub congestion_control: CcConfig,
    /// `net.ipv4.tcp_reordering`: initial `tp->reordering` (dupthresh).
    pub tcp_reordering: u32,
    /// `net.ipv4.tcp_max_reordering` (300; compile-time 127 before v3.19).
    pub tcp_max_reordering: u32,
    /// `net.ipv4.tcp_sack`.
    pub tcp_sack: bool,
    /// `net.ipv4.tcp_dsack`.
    pub tcp_dsack: bool,
    /// `net.ipv4.tcp_timestamps`.
    pub tcp_timestamps: bool,
    /// `net.ipv4.tcp_window_scaling`.
    pub tcp_window_scaling: bool,
    /// `net.ipv4.tcp_ecn`: 0 off, 1 request and accept, 2 accept only.
    pub tcp_ecn: u8,
    /// `net.ipv4.tcp_recovery` bit 0x1: RACK loss detection.
    pub tcp_recovery: u32,
    /// `net.ipv4.tcp_frto`.
    pub tcp_frto: u8,
    /// `net.ipv4.tcp_early_retrans`: 3 today, the tail loss probe (3 or
    /// 4). With [`AckEra::V3_12`] also RFC 5827 early retransmit as 3.6–4.10
    /// had it: 1 at once, 2 and 3 after max(srtt/4, 2 ms); 4 is TLP only.
    pub tcp_early_retrans: u8,
    /// `net.ipv4.tcp_slow_start_after_idle`.
    pub tcp_slow_start_after_idle: bool,
    /// `net.ipv4.tcp_rmem` (min, default, max), bytes.
    pub tcp_rmem: [u32; 3],
    /// `net.ipv4.tcp_wmem` (min, default, max), bytes.
    pub tcp_wmem: [u32; 3],
    /// `net.ipv4.tcp_rto_min_us`.
    pub tcp_rto_min_us: u32,
    /// `net.ipv4.tcp_pacing_ss_ratio`, percent.
    pub tcp_pacing_ss_ratio: u32,
    /// `net.ipv4.tcp_pacing_ca_ratio`, percent.
    pub tcp_pacing_ca_ratio: u32,
    /// `net.ipv4.tcp_min_rtt_wlen`, seconds.
    pub tcp_min_rtt_wlen: u32,
    /// `net.ipv4.tcp_no_metrics_save`.
    pub tcp_no_metrics_save: bool,
    /// `net.ipv4.tcp_no_ssthresh_metrics_save` (v5.x+, default 1).
    pub tcp_no_ssthresh_metrics_save: bool,
    /// `net.ipv4.tcp_min_tso_segs`: least segments per TSO skb
    /// (`tcp_tso_autosize`). Decides which wire segments carry PSH.
    pub tcp_min_tso_segs: u32,
    /// `net.ipv4.tcp_tso_win_divisor`: `tcp_tso_should_defer` sends at once
    /// when at least 1/divisor of the window is available (0: at most
    /// three MSS may be deferred).
    pub tcp_tso_win_divisor: u32,
    /// `net.ipv4.tcp_tso_rtt_log` (v5.18+, default 9): tiny-RTT bonus of
    /// `tcp_tso_autosize`.
    pub tcp_tso_rtt_log: u32,
    /// Route `initcwnd` (`TCP_INIT_CWND` = 10).
    pub initcwnd: u32,
    /// Interface MTU, bytes; advmss = MTU − 40.
    pub mtu: u32,
    /// `HZ` of the modelled kernel (jiffies, CUBIC's clock): one of
    /// [`HZ_VALUES`].
    pub hz: u32,
    /// `SO_SNDBUF` as set by the application (0 = autotuned from tcp_wmem).
    pub so_sndbuf: u32,
    /// `SO_RCVBUF` as set by the application (0 = autotuned from tcp_rmem).
    pub so_rcvbuf: u32,
    /// `TCP_MAXSEG` as set by the application before the connection
    /// (`tp->rx_opt.user_mss`; 0 = none): caps the MSS we announce
    /// (`tcp_mss_clamp`) and the one we send with (`tcp_parse_options`).
    pub user_mss: u32,
    /// Which ACKs may grow cwnd (patch "increase throughput when
    /// reordering is high").
    pub cwnd_growth: CwndGrowthRule,
    /// How `tcp_is_cwnd_limited` decides whether cwnd limits the sender.
    pub cwnd_limited_rule: CwndLimitedRule,
    /// The era of the ACK-processing structure.
    pub ack_era: AckEra,
    /// The receive path's memory per segment (a property of the receiving
    /// interface, see [`RcvTruesize`]).
    pub rcv_truesize: RcvTruesize,
    /// What `cong_avoid`'s `acked` counts.
    pub acked_count: AckedCount,
    /// v4.17: `tcp_time_to_recover` also fires on dupthresh
    /// (`sacked_out + 1 > reordering`) with RACK on; v4.18 ("tcp: disable
    /// RFC6675 loss detection") made RACK the only rule.
    pub rack_with_dupthresh: bool,
    /// `tcp_enter_loss` sets cwnd to 1 (≤ v4.17) instead of
    /// `packets_in_flight + 1` (≥ v4.18, what RACK leaves in flight).
    pub loss_cwnd_one: bool,
    /// `net.ipv4.tcp_fack` (≤ v4.14; on by default then, switched off per
    /// socket once reordering is seen). Only read by [`AckEra::V3_12`].
    pub tcp_fack: bool,
    /// `tcp_cwnd_reduction`'s slow-start-reduction-bound rule by era.
    pub prr_rule: PrrRule,
    /// The tail loss probe's form by era.
    pub tlp_rule: TlpRule,
    /// The TSval clock by era.
    pub ts_clock: TsClock,
    /// The timer wheel that runs the `timer_list` timers, by era.
    pub timer_wheel: TimerWheel,
    /// Floor of `tcp_cwnd_reduction`: 1 in mainline, 2 with Brakmo's
    /// "tcp: force cwnd at least 2 in tcp_cwnd_reduction".
    pub cwnd_reduction_floor: u32,
    /// `tcp_ack` calls the congestion control's `in_ack_event` after
    /// `tcp_clean_rtx_queue`, when the ACK's newly delivered packets are
    /// counted ("tcp: reorganize tcp_in_ack_event() and
    /// tcp_count_delivered()", for Accurate ECN; in 6.12.118, the kernel
    /// backend's source). Off: before it, in the fast or slow branch, as
    /// kernels before the change did (mainline up to 6.13). Only DCTCP's
    /// alpha update (`dctcp_update_alpha`) sees the difference.
    pub in_ack_event_after_clean: bool,
    /// `tcp_ecn_accept_cwr` ACKs at once when a data segment carries CWR
    /// ("tcp: ack immediately when a cwr packet arrives", ≥ v4.18).
    pub ack_on_cwr: bool,
    /// DCTCP receiver: a change of CE state also ACKs the current segment
    /// at once (`dctcp_ece_ack_update` sets ICSK_ACK_NOW, ≥ v4.18). Off:
    /// the v4.17 `dctcp_ce_state_0_to_1` / `_1_to_0`, which only flush a
    /// pending delayed ACK for the prior state.
    pub dctcp_ack_on_ce_change: bool,
    /// DCTCP's ACK for the data before a CE-state change leaves the pending
    /// ACK alone, and is owed when the delayed-ACK timer is armed (≥ v4.18,
    /// "tcp: do not cancel delay-AcK on DCTCP special ACK", "tcp: remove
    /// DELAYED ACK events in DCTCP"). Off: ≤ v4.17, where it cancelled the
    /// ACK the new segment had scheduled and was owed by
    /// `delayed_ack_reserved` (see `RcvKnobs`).
    pub special_ack_keeps_delack: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self::linux_current()
    }
}

/// `TCP_MIN_MSS` (include/net/tcp.h) plus 40 bytes of IPv4 and TCP header:
/// the smallest interface MTU a flow may use (the `mtu` knob's minimum,
/// and the simulator's check).
pub const MIN_MTU: u32 = 88 + 40;

/// The `HZ` values Linux offers (`kernel/Kconfig.hz`): the one rule for
/// scenarios (`tcp.hz`), `tcplab packetdrill --hz` and kernel builds.
pub const HZ_VALUES: &[u32] = &[100, 250, 300, 1000];

/// What [`HZ_VALUES`] allows, for error messages: "Linux offers HZ 100,
/// 250, 300 or 1000".
pub fn hz_rule() -> String {
    let v: Vec<String> = HZ_VALUES.iter().map(u32::to_string).collect();
    let (last, rest) = v.split_last().map_or(("", &[][..]), |(l, r)| (l.as_str(), r));
    format!("Linux offers HZ {} or {last}", rest.join(", "))
}

/// Names accepted by [`TcpConfig::preset`].
pub const PRESETS: &[&str] = &["linux-current", "v3.11", "v3.12", "v3.18", "v3.19", "v4.17"];

impl TcpConfig {
    /// Current Linux (modelled on 6.13) defaults.
    pub fn linux_current() -> Self {
        TcpConfig {
            preset: "linux-current",
            congestion_control: CcConfig::from_name("cubic").expect("cubic is built in"),
            tcp_reordering: 3,
            tcp_max_reordering: 300,
            tcp_sack: true,
            tcp_dsack: true,
            tcp_timestamps: true,
            tcp_window_scaling: true,
            tcp_ecn: 2,
            tcp_recovery: 1,
            tcp_frto: 2,
            tcp_early_retrans: 3,
            tcp_slow_start_after_idle: true,
            tcp_rmem: [4096, 131072, 6291456],
            tcp_wmem: [4096, 16384, 4194304],
            tcp_rto_min_us: 200_000,
            tcp_pacing_ss_ratio: 200,
            tcp_pacing_ca_ratio: 120,
            tcp_min_rtt_wlen: 300,
            tcp_no_metrics_save: false,
            tcp_no_ssthresh_metrics_save: true,
            tcp_min_tso_segs: 2,
            tcp_tso_win_divisor: 3,
            tcp_tso_rtt_log: 9,
            initcwnd: 10,
            mtu: 1500,
            hz: 250,
            so_sndbuf: 0,
            so_rcvbuf: 0,
            user_mss: 0,
            cwnd_growth: CwndGrowthRule::V3_12,
            cwnd_limited_rule: CwndLimitedRule::Latched,
            ack_era: AckEra::Current,
            rcv_truesize: RcvTruesize::Gro,
            acked_count: AckedCount::Delivered,
            tcp_fack: false,
            rack_with_dupthresh: false,
            loss_cwnd_one: false,
            prr_rule: PrrRule::Current,
            tlp_rule: TlpRule::Current,
            ts_clock: TsClock::Ms,
            timer_wheel: TimerWheel::Wheel,
            cwnd_reduction_floor: 1,
            in_ack_event_after_clean: true,
            ack_on_cwr: true,
            dctcp_ack_on_ce_change: true,
            special_ack_keeps_delack: true,
        }
    }

    /// A kernel-era preset by name (see [`PRESETS`]). Only the knobs that
    /// the model implements differ between eras; the eras' documentation is
    /// in docs/presets.md.
    pub fn preset(name: &str) -> Option<TcpConfig> {
        let mut c = Self::linux_current();
        match name {
            "linux-current" => {}
            "v3.11" | "v3.12" | "v3.18" | "v3.19" => {
                c.preset = PRESETS.iter().copied().find(|p| *p == name)?;
                c.tcp_max_reordering = if name == "v3.19" { 300 } else { 127 };
                c.tcp_no_ssthresh_metrics_save = false;
                c.tcp_recovery = 0;
                c.prr_rule = PrrRule::V3_12;
                c.tlp_rule = TlpRule::V3_10;
                c.ts_clock = TsClock::Jiffies;
                c.timer_wheel = TimerWheel::Cascade;
                c.ack_on_cwr = false;
                c.in_ack_event_after_clean = false;
                c.dctcp_ack_on_ce_change = false;
                c.special_ack_keeps_delack = false;
                c.cwnd_growth = if name == "v3.11" { CwndGrowthRule::V3_11 } else { CwndGrowthRule::V3_12 };
                if matches!(name, "v3.11" | "v3.12") {
                    c.cwnd_limited_rule = CwndLimitedRule::InFlight;
                }
                c.ack_era = AckEra::V3_12;
                c.tcp_fack = true;
                // 3.12-3.19 paced at 200 % in every phase; the ss/ca split
                // came with "tcp: refine pacing rate determination" (4.x).
                c.tcp_pacing_ca_ratio = 200;
                c.loss_cwnd_one = true;
                c.acked_count =
                    if matches!(name, "v3.11" | "v3.12") { AckedCount::PerAck } else { AckedCount::Cumulative };
                c.congestion_control = c.congestion_control_named("cubic")?;
            }
            "v4.17" => {
                c.preset = "v4.17";
                c.tcp_no_ssthresh_metrics_save = false;
                c.prr_rule = PrrRule::V4_17;
                c.rack_with_dupthresh = true;
                c.loss_cwnd_one = true;
                c.ack_on_cwr = false;
                c.in_ack_event_after_clean = false;
                c.dctcp_ack_on_ce_change = false;
                c.special_ack_keeps_delack = false;
                c.congestion_control = c.congestion_control_named("cubic")?;
            }
            _ => return None,
        }
        Some(c)
    }

    /// The congestion control `name` in the form of this preset's kernel
    /// era (CUBIC's window update and HyStart, DCTCP's alpha), so that
    /// choosing an algorithm keeps the era of the preset.
    pub fn congestion_control_named(&self, name: &str) -> Option<CcConfig> {
        let cc = CcConfig::from_name(name)?;
        Some(match (cc, self.preset) {
            (CcConfig::Cubic(_), "v3.11" | "v3.12" | "v3.18") => {
                CcConfig::Cubic(CubicParams::for_version(CubicVersion::V3_18))
            }
            (CcConfig::Cubic(_), "v3.19") => CcConfig::Cubic(CubicParams::v3_19_as_released()),
            (CcConfig::Cubic(_), "v4.17") => CcConfig::Cubic(CubicParams::for_version(CubicVersion::V3_19)),
            (CcConfig::Dctcp(p), "v4.17") => CcConfig::Dctcp(DctcpParams { version: DctcpVersion::V4_17, ..p }),
            (cc, _) => cc,
        })
    }

    /// `advmss`: MTU minus IPv4 and TCP headers, capped by `TCP_MAXSEG`
    /// (include/net/tcp.h `tcp_mss_clamp`: `user_mss` if set and smaller).
    pub fn advmss(&self) -> u32 {
        let m = self.mtu.saturating_sub(40);
        if self.user_mss != 0 && self.user_mss < m {
            self.user_mss
        } else {
            m
        }
    }
}
