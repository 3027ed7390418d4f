//! The receive-side behaviours that kernel releases changed, as one set of
//! era knobs: the model runs current Linux (v6.13) unless the preset names
//! an older kernel, and each knob names the change that introduced the
//! current behaviour.

use super::delack::TCP_MAX_QUICKACKS;
use crate::config::TcpConfig;

/// `net.ipv4.tcp_comp_sack_nr` default: most ACKs one compressed ACK stands for.
const TCP_COMP_SACK_NR: u32 = 44;
/// `net.ipv4.tcp_comp_sack_delay_ns` default (1 ms).
const TCP_COMP_SACK_DELAY_NS: u64 = 1_000_000;

/// Receive-side behaviours that kernel releases changed. The model runs
/// current Linux unless told otherwise; [`RcvKnobs::for_config`] picks the
/// era from the preset name until `TcpConfig` grows explicit knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RcvKnobs {
    /// `net.ipv4.tcp_comp_sack_nr`: SACK compression (≥ v4.18); 0 disables
    /// it, so every dup-ACK leaves at once (≤ v4.17).
    pub comp_sack_nr: u32,
    /// `net.ipv4.tcp_comp_sack_delay_ns`.
    pub comp_sack_delay_ns: u64,
    /// Quick-ACK budget granted on ECN events: 2 since "tcp: do not
    /// aggressively quick ack after ECN events" (v4.18), the full
    /// `TCP_MAX_QUICKACKS` before.
    pub ecn_quickacks: u8,
    /// ≥ v4.18: filling the last hole sets `ICSK_ACK_NOW`; ≤ v4.17 it only
    /// leaves pingpong mode.
    pub hole_fill_ack_now: bool,
    /// ≥ v6.6 ("tcp: fix quick-ack counting to count actual ACKs of new
    /// data"): an ACK spends one quick ACK if one was scheduled; before, it
    /// spent the outgoing skb's `pcount`.
    pub quickack_per_ack: bool,
    /// ≥ v6.5: `tcp_win_from_space` uses the measured `scaling_ratio`;
    /// before, the fixed `tcp_adv_win_scale = 1` (half the buffer).
    pub measured_scaling_ratio: bool,
    /// ≤ v5.3: the initial window is capped at `tcp_default_init_rwnd`
    /// (20 segments) by `tcp_select_initial_window`; 0 = no cap.
    pub init_rwnd_segs: u32,
    /// ≥ v5.x `tcp_grow_window`: grow by `max(2·advmss, 2·len)` bounded by
    /// the room left; before, by `2·advmss` up to `window_clamp`.
    pub grow_window_room: bool,
    /// ≥ v5.10: the delayed-ACK timeout is capped by `icsk_delack_max`.
    pub delack_max_cap: bool,
    /// ≥ v4.18 ("tcp: do not cancel delay-AcK on DCTCP special ACK", "tcp:
    /// remove DELAYED ACK events in DCTCP"): DCTCP's special ACK below
    /// `rcv_nxt` leaves the pending ACK alone, and it is sent when the
    /// delayed-ACK timer is armed. Before, `tcp_event_ack_sent` cancelled
    /// the pending ACK on every ACK sent (`ICSK_ACK_SCHED` included, so the
    /// segment that changed the CE state got no ACK of its own in
    /// `tcp_ack_snd_check`), and DCTCP went by `delayed_ack_reserved`,
    /// which an ACK riding on data never clears. Taken from
    /// `TcpConfig::special_ack_keeps_delack`, whatever the era.
    pub special_ack_keeps_delack: bool,
}

impl RcvKnobs {
    /// Current Linux (v6.13).
    pub const CURRENT: RcvKnobs = RcvKnobs {
        comp_sack_nr: TCP_COMP_SACK_NR,
        comp_sack_delay_ns: TCP_COMP_SACK_DELAY_NS,
        ecn_quickacks: 2,
        hole_fill_ack_now: true,
        quickack_per_ack: true,
        measured_scaling_ratio: true,
        init_rwnd_segs: 0,
        grow_window_room: true,
        delack_max_cap: true,
        special_ack_keeps_delack: true,
    };

    /// v3.11 … v4.17.
    pub const LEGACY: RcvKnobs = RcvKnobs {
        comp_sack_nr: 0,
        comp_sack_delay_ns: TCP_COMP_SACK_DELAY_NS,
        ecn_quickacks: TCP_MAX_QUICKACKS,
        hole_fill_ack_now: false,
        quickack_per_ack: false,
        measured_scaling_ratio: false,
        init_rwnd_segs: 20,
        grow_window_room: false,
        delack_max_cap: false,
        special_ack_keeps_delack: false,
    };

    /// The knobs of `cfg`'s kernel era (by preset name).
    pub fn for_config(cfg: &TcpConfig) -> RcvKnobs {
        let era = if cfg.preset.starts_with("v3.") || cfg.preset.starts_with("v4.") {
            RcvKnobs::LEGACY
        } else {
            RcvKnobs::CURRENT
        };
        RcvKnobs { special_ack_keeps_delack: cfg.special_ack_keeps_delack, ..era }
    }
}
