//! DCTCP (net/ipv4/tcp_dctcp.c, RFC 8257): cut cwnd in proportion to the
//! fraction of CE-marked traffic, `ssthresh = cwnd·(1 − α/2)`, where α is
//! an EWMA (gain g = 2^-`shift_g`) of the marked fraction per window.
//!
//! Eras ([`DctcpVersion`]):
//!
//! * `V4_17` — Linux 4.17.0: α from **bytes** (`snd_una` advance per ACK,
//!   a dupack counted as `rcv_mss` unless it was a window update, ECN bytes
//!   from ACKs with ECE); loss uses the α-based ssthresh; optional
//!   `dctcp_clamp_alpha_on_loss`.
//! * `Current` — Linux 6.13.7 (≥ 5.x): α from **packets**, the deltas of
//!   `tp.delivered` / `tp.delivered_ce`; on Recovery and on an RTO
//!   (`CA_EVENT_LOSS`) `dctcp_react_to_loss` halves like Reno
//!   (`max(cwnd/2, 2)`, RFC 8257 §3.5). PLB is off (its default) and not
//!   modelled.
//!
//! The receiver's CE state machine (`dctcp_ece_ack_update`, ACK_NOW on a
//! CE change, the pre-4.18 delayed-ACK dance) belongs to the core. This
//! module only records what DCTCP's `cwnd_event` stores: [`DctcpState::ce_state`]
//! (CE mark of the last data segment, set on `EcnIsCe`/`EcnNoCe`). The core
//! reads `ce_state` **before** raising the event to know whether the state
//! changed. 4.17's `delayed_ack_reserved` (set and cleared by the
//! `CA_EVENT_DELAYED_ACK` / `CA_EVENT_NON_DELAYED_ACK` events that 4.18
//! removed) is kept by the receiver, where those events are raised.
//!
//! If ECN was not negotiated, `init` falls back to "dctcp-reno" (Reno
//! hooks, no ECT), as the kernel switches `icsk_ca_ops`.
//!
//! CaCtx fields read: `snd_cwnd`, `snd_una`, `snd_nxt`, `delivered`,
//! `delivered_ce` (Current), `rcv_mss` (4.17), `ca_state` (`set_state`),
//! `ecn_ok` (`init`), plus those of Reno for `cong_avoid` (`snd_ssthresh`,
//! `snd_cwnd_cnt`, `snd_cwnd_clamp`, `is_cwnd_limited`,
//! `max_packets_out`). Written: `snd_cwnd`, `snd_cwnd_cnt`, `snd_ssthresh`
//! (react to loss).
//!
//! Arithmetic is the kernel's, wrapping; no input panics (a `shift_g` above
//! 10, which the 6.13 parameter rejects, gives a zero CE term instead of
//! the kernel's undefined shift).

use super::{
    ca_ack, tcp_reno_cong_avoid_era, tcp_reno_ssthresh, tcp_reno_undo_cwnd, CaCtx, CaEvent, CaState, CcEra, CcInfo,
    CongestionOps,
};
use tcplab_wire::SeqNum;

/// `DCTCP_MAX_ALPHA`: α is a fraction scaled to 1024.
pub const DCTCP_MAX_ALPHA: u32 = 1024;

/// Which kernel's DCTCP to model.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum DctcpVersion {
    /// Linux 4.17.0: byte-based α, no Reno-style loss reaction.
    V4_17,
    /// Linux 6.13.7: packet-based α, `dctcp_react_to_loss`.
    #[default]
    Current,
}

crate::names::named_enum!(DctcpVersion { V4_17 => "v4.17", Current => "current" });

/// DCTCP module parameters (`/sys/module/tcp_dctcp/parameters/*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DctcpParams {
    pub version: DctcpVersion,
    /// `dctcp_shift_g`: "parameter g for updating dctcp_alpha" (4, g =
    /// 1/16; 6.13 accepts 0..=10).
    pub shift_g: u32,
    /// `dctcp_alpha_on_init`: "parameter for initial alpha value" (1024,
    /// so the first reduction halves; clamped to 1024).
    pub alpha_on_init: u32,
    /// `dctcp_clamp_alpha_on_loss` (≤ 4.x): "parameter for clamping alpha
    /// on loss" (off). Ignored by `Current`.
    pub clamp_alpha_on_loss: bool,
}

impl Default for DctcpParams {
    fn default() -> Self {
        DctcpParams {
            version: DctcpVersion::Current,
            shift_g: 4,
            alpha_on_init: DCTCP_MAX_ALPHA,
            clamp_alpha_on_loss: false,
        }
    }
}

impl DctcpParams {
    /// Defaults of the given kernel.
    pub fn for_version(version: DctcpVersion) -> DctcpParams {
        DctcpParams { version, ..DctcpParams::default() }
    }

    /// What the 6.13 parameter setter rejects (`shift_g` outside 0..=10).
    pub fn validate(&self) -> Result<(), &'static str> {
        if self.shift_g > 10 {
            return Err("dctcp: shift_g must be in 0..=10");
        }
        Ok(())
    }
}

/// `struct dctcp` of both eras.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct DctcpState {
    /// `dctcp_alpha`, 0..=1024.
    pub dctcp_alpha: u32,
    /// `next_seq`: the window ends when `snd_una` reaches it.
    pub next_seq: SeqNum,
    /// `loss_cwnd`: cwnd at the last reduction, for undo.
    pub loss_cwnd: u32,
    /// `ce_state`: 1 if the last data segment received was CE-marked.
    pub ce_state: u32,
    /// Current: `tp.delivered` at the window start (packets).
    pub old_delivered: u32,
    /// Current: `tp.delivered_ce` at the window start (packets).
    pub old_delivered_ce: u32,
    /// 4.17: `prior_snd_una`, to measure bytes acked per ACK.
    pub prior_snd_una: SeqNum,
    /// 4.17: bytes acked in this window.
    pub acked_bytes_total: u32,
    /// 4.17: bytes acked by ECE ACKs in this window.
    pub acked_bytes_ecn: u32,
}

/// DCTCP (`struct tcp_congestion_ops dctcp`, flags `TCP_CONG_NEEDS_ECN`).
///
/// Per ACK the core calls `in_ack_event` (α update) before
/// `tcp_clean_rtx_queue`, as `tcp_ack` does, then `cong_avoid` (Reno).
#[derive(Clone, Debug)]
pub struct Dctcp {
    params: DctcpParams,
    /// Not ECN-capable at `init`: behave as "dctcp-reno".
    reno_fallback: bool,
    /// The `struct dctcp` state.
    pub ca: DctcpState,
}

/// `min_not_zero(x, y)`.
#[inline]
fn min_not_zero(x: u32, y: u32) -> u32 {
    if x == 0 {
        y
    } else if y == 0 {
        x
    } else {
        x.min(y)
    }
}

impl Dctcp {
    pub fn new(params: DctcpParams) -> Dctcp {
        Dctcp { params, reno_fallback: false, ca: DctcpState::default() }
    }

    pub fn params(&self) -> &DctcpParams {
        &self.params
    }

    /// α scaled to 1024.
    pub fn alpha(&self) -> u32 {
        self.ca.dctcp_alpha
    }

    /// True after `init` found no ECN and fell back to "dctcp-reno".
    pub fn is_reno_fallback(&self) -> bool {
        self.reno_fallback
    }

    /// `dctcp_reset()`: start a new observation window at `snd_nxt`.
    #[doc(alias = "dctcp_reset")]
    fn reset_window(&mut self, tp: &CaCtx) {
        self.ca.next_seq = tp.snd_nxt;
        match self.params.version {
            DctcpVersion::Current => {
                self.ca.old_delivered = tp.delivered;
                self.ca.old_delivered_ce = tp.delivered_ce;
            }
            DctcpVersion::V4_17 => {
                self.ca.acked_bytes_ecn = 0;
                self.ca.acked_bytes_total = 0;
            }
        }
    }

    /// The (1 − g)·α decay: subtract `min_not_zero(α, α >> g)`, so α
    /// reaches exactly 0 once `α >> g` is 0.
    fn decay(&self, alpha: u32) -> u32 {
        let g = self.params.shift_g;
        alpha - min_not_zero(alpha, alpha.checked_shr(g).unwrap_or(0))
    }

    /// `dctcp_update_alpha()` (the `in_ack_event` hook).
    /// Eq. α ← (1 − g)·α + g·F, F the CE fraction of the last window.
    #[doc(alias = "dctcp_update_alpha")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_update_alpha
    //= linux:v4.17:net/ipv4/tcp_dctcp.c#dctcp_update_alpha
    pub fn update_alpha(&mut self, tp: &CaCtx, flags: u32) {
        let g = self.params.shift_g;
        match self.params.version {
            DctcpVersion::Current => {
                // Expired RTT.
                if !tp.snd_una.before(self.ca.next_seq) {
                    let delivered = tp.delivered.wrapping_sub(self.ca.old_delivered);
                    let mut delivered_ce = tp.delivered_ce.wrapping_sub(self.ca.old_delivered_ce);
                    let mut alpha = self.decay(self.ca.dctcp_alpha);
                    if delivered_ce != 0 {
                        // Scaled by 2^(10 − g) in u32, which may drop high bits.
                        delivered_ce = 10u32.checked_sub(g).map_or(0, |s| delivered_ce.wrapping_shl(s));
                        delivered_ce /= delivered.max(1);
                        alpha = alpha.wrapping_add(delivered_ce).min(DCTCP_MAX_ALPHA);
                    }
                    self.ca.dctcp_alpha = alpha;
                    self.reset_window(tp);
                }
            }
            DctcpVersion::V4_17 => {
                let mut acked_bytes = tp.snd_una.0.wrapping_sub(self.ca.prior_snd_una.0);
                // A dupack counts as one rcv_mss; a pure window update not
                // at all.
                if acked_bytes == 0 && flags & ca_ack::WIN_UPDATE == 0 {
                    acked_bytes = tp.rcv_mss;
                }
                if acked_bytes != 0 {
                    self.ca.acked_bytes_total = self.ca.acked_bytes_total.wrapping_add(acked_bytes);
                    self.ca.prior_snd_una = tp.snd_una;
                    if flags & ca_ack::ECE != 0 {
                        self.ca.acked_bytes_ecn = self.ca.acked_bytes_ecn.wrapping_add(acked_bytes);
                    }
                }
                if !tp.snd_una.before(self.ca.next_seq) {
                    let mut bytes_ecn = self.ca.acked_bytes_ecn as u64;
                    let mut alpha = self.decay(self.ca.dctcp_alpha);
                    if bytes_ecn != 0 {
                        bytes_ecn = 10u32.checked_sub(g).map_or(0, |s| bytes_ecn << s);
                        bytes_ecn /= self.ca.acked_bytes_total.max(1) as u64;
                        alpha = alpha.wrapping_add(bytes_ecn as u32).min(DCTCP_MAX_ALPHA);
                    }
                    self.ca.dctcp_alpha = alpha;
                    self.reset_window(tp);
                }
            }
        }
    }

    /// `dctcp_react_to_loss()` (≥ 5.x): Reno's halving on loss.
    #[doc(alias = "dctcp_react_to_loss")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_react_to_loss
    fn react_to_loss(&mut self, tp: &mut CaCtx) {
        self.ca.loss_cwnd = tp.snd_cwnd;
        tp.snd_ssthresh = (tp.snd_cwnd >> 1).max(2);
    }
}

impl CongestionOps for Dctcp {
    fn name(&self) -> &'static str {
        if self.reno_fallback {
            "dctcp-reno"
        } else {
            "dctcp"
        }
    }

    /// `dctcp_init`: with ECN, α = `alpha_on_init` (≤ 1024) and a new
    /// window; without, fall back to Reno.
    #[doc(alias = "dctcp_init")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_init
    fn init(&mut self, tp: &mut CaCtx) {
        if !tp.ecn_ok {
            self.reno_fallback = true;
            return;
        }
        self.reno_fallback = false;
        self.ca = DctcpState {
            dctcp_alpha: self.params.alpha_on_init.min(DCTCP_MAX_ALPHA),
            prior_snd_una: tp.snd_una,
            ..DctcpState::default()
        };
        self.reset_window(tp);
    }

    /// `dctcp_ssthresh`: `max(cwnd − (cwnd·α >> 11), 2)`, i.e.
    /// cwnd·(1 − α/2); the u32 product wraps as the kernel's.
    #[doc(alias = "dctcp_ssthresh")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_ssthresh
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        if self.reno_fallback {
            return tcp_reno_ssthresh(tp);
        }
        let cwnd = tp.snd_cwnd;
        self.ca.loss_cwnd = cwnd;
        cwnd.wrapping_sub(cwnd.wrapping_mul(self.ca.dctcp_alpha) >> 11).max(2)
    }

    /// `tcp_reno_cong_avoid` of the era.
    fn cong_avoid(&mut self, tp: &mut CaCtx, _ack: SeqNum, acked: u32) {
        let era = match self.params.version {
            DctcpVersion::V4_17 => CcEra::V4_17,
            DctcpVersion::Current => CcEra::Current,
        };
        tcp_reno_cong_avoid_era(tp, acked, era);
    }

    /// `dctcp_state`: Current halves on entering Recovery (the RTO case is
    /// `CA_EVENT_LOSS`); 4.17 optionally clamps α to 1 on Loss.
    #[doc(alias = "dctcp_state")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_state
    //= linux:v4.17:net/ipv4/tcp_dctcp.c#dctcp_state
    fn set_state(&mut self, tp: &mut CaCtx, new_state: CaState) {
        if self.reno_fallback {
            return;
        }
        match self.params.version {
            DctcpVersion::Current => {
                if new_state == CaState::Recovery && new_state != tp.ca_state {
                    self.react_to_loss(tp);
                }
            }
            DctcpVersion::V4_17 => {
                if self.params.clamp_alpha_on_loss && new_state == CaState::Loss {
                    self.ca.dctcp_alpha = DCTCP_MAX_ALPHA;
                }
            }
        }
    }

    /// `dctcp_cwnd_event`: records the receiver's CE state (the core sends
    /// the ACKs) and, in Current, reacts to an RTO.
    #[doc(alias = "dctcp_cwnd_event")]
    //= linux:v6.13:net/ipv4/tcp_dctcp.c#dctcp_cwnd_event
    fn cwnd_event(&mut self, tp: &mut CaCtx, ev: CaEvent) {
        if self.reno_fallback {
            return;
        }
        match ev {
            CaEvent::EcnIsCe => self.ca.ce_state = 1,
            CaEvent::EcnNoCe => self.ca.ce_state = 0,
            CaEvent::Loss if self.params.version == DctcpVersion::Current => self.react_to_loss(tp),
            _ => {}
        }
    }

    /// `dctcp_update_alpha`.
    fn in_ack_event(&mut self, tp: &mut CaCtx, flags: u32) {
        if !self.reno_fallback {
            self.update_alpha(tp, flags);
        }
    }

    /// `dctcp_cwnd_undo`: `max(cwnd, loss_cwnd)`.
    #[doc(alias = "dctcp_cwnd_undo")]
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        if self.reno_fallback {
            return tcp_reno_undo_cwnd(tp);
        }
        tp.snd_cwnd.max(self.ca.loss_cwnd)
    }

    fn needs_ecn(&self) -> bool {
        !self.reno_fallback
    }

    /// `dctcp_get_info`: the Reno fallback (`dctcp_reno`) reports nothing.
    fn get_info(&self) -> Option<CcInfo> {
        (!self.reno_fallback).then_some(CcInfo::Dctcp { ce_state: self.ca.ce_state as u16, alpha: self.ca.dctcp_alpha })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> CaCtx {
        CaCtx {
            ecn_ok: true,
            snd_cwnd: 100,
            snd_una: SeqNum(1000),
            snd_nxt: SeqNum(1000 + 10 * 1448),
            ..CaCtx::default()
        }
    }

    #[test]
    fn test_first_reduction_halves_then_alpha_decays() {
        let mut d = Dctcp::new(DctcpParams::default());
        let mut tp = ctx();
        d.init(&mut tp);
        assert!(d.needs_ecn());
        assert_eq!(d.alpha(), 1024);
        assert_eq!(d.ssthresh(&mut tp), 50, "alpha 1: cwnd·(1 − 1/2)");
        assert_eq!(d.ca.loss_cwnd, 100);
        // A window without marks: alpha = 1024 − 1024/16 = 960.
        tp.delivered = 10;
        tp.snd_una = tp.snd_nxt;
        tp.snd_nxt = tp.snd_una + 10 * 1448;
        d.in_ack_event(&mut tp, 0);
        assert_eq!(d.alpha(), 960);
        assert_eq!(d.ssthresh(&mut tp), 100 - ((100 * 960) >> 11));
    }

    #[test]
    fn test_all_marked_window_raises_alpha_to_one() {
        let mut d = Dctcp::new(DctcpParams { alpha_on_init: 0, ..DctcpParams::default() });
        let mut tp = ctx();
        d.init(&mut tp);
        for _ in 0..200 {
            tp.delivered += 10;
            tp.delivered_ce += 10;
            tp.snd_una = tp.snd_nxt;
            tp.snd_nxt = tp.snd_una + 10 * 1448;
            d.in_ack_event(&mut tp, 0);
        }
        // α ← α − α/16 + 64 has its fixed point at 1024 − 15 (integer).
        assert!(d.alpha() >= 1000, "{}", d.alpha());
        assert_eq!(d.ssthresh(&mut tp), 100 - ((100 * d.alpha()) >> 11));
    }

    #[test]
    fn test_loss_reaction_by_era() {
        // 6.13: Recovery halves like Reno (once, on entry); RTO too.
        let mut d = Dctcp::new(DctcpParams::default());
        let mut tp = ctx();
        d.init(&mut tp);
        d.ca.dctcp_alpha = 0;
        tp.snd_ssthresh = d.ssthresh(&mut tp);
        assert_eq!(tp.snd_ssthresh, 100);
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 50);
        tp.snd_ssthresh = 77;
        tp.ca_state = CaState::Recovery;
        d.set_state(&mut tp, CaState::Recovery);
        assert_eq!(tp.snd_ssthresh, 77, "already in Recovery");
        d.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 50);
        // 4.17: no Reno reaction; the α-based ssthresh stands.
        let mut d = Dctcp::new(DctcpParams::for_version(DctcpVersion::V4_17));
        let mut tp = ctx();
        d.init(&mut tp);
        tp.snd_ssthresh = 77;
        tp.ca_state = CaState::Open;
        d.set_state(&mut tp, CaState::Recovery);
        d.cwnd_event(&mut tp, CaEvent::Loss);
        assert_eq!(tp.snd_ssthresh, 77);
    }

    #[test]
    fn test_undo_and_ce_state_and_fallback() {
        let mut d = Dctcp::new(DctcpParams::default());
        let mut tp = ctx();
        d.init(&mut tp);
        tp.snd_cwnd = 80;
        let _ = d.ssthresh(&mut tp);
        tp.snd_cwnd = 40;
        assert_eq!(d.undo_cwnd(&mut tp), 80);
        d.cwnd_event(&mut tp, CaEvent::EcnIsCe);
        assert_eq!(d.ca.ce_state, 1);
        d.cwnd_event(&mut tp, CaEvent::EcnNoCe);
        assert_eq!(d.ca.ce_state, 0);
        // No ECN negotiated: "dctcp-reno".
        let mut d = Dctcp::new(DctcpParams::default());
        let mut tp = CaCtx { ecn_ok: false, ..ctx() };
        d.init(&mut tp);
        assert!(d.is_reno_fallback());
        assert!(!d.needs_ecn());
        assert_eq!(d.name(), "dctcp-reno");
        assert_eq!(d.ssthresh(&mut tp), 50);
    }

    #[test]
    fn test_no_panic_on_extremes() {
        let vals = [0u32, 1, 2, 1024, 4_194_304, 0x7fff_ffff, u32::MAX];
        for version in [DctcpVersion::V4_17, DctcpVersion::Current] {
            for g in [0u32, 4, 10, 11, 31, 32, u32::MAX] {
                let mut d = Dctcp::new(DctcpParams {
                    shift_g: g,
                    alpha_on_init: u32::MAX,
                    ..DctcpParams::for_version(version)
                });
                let mut tp = ctx();
                d.init(&mut tp);
                for &a in &vals {
                    for &b in &vals {
                        tp.snd_cwnd = a;
                        tp.delivered = b;
                        tp.delivered_ce = a;
                        tp.snd_una = SeqNum(b);
                        tp.rcv_mss = a;
                        d.ca.dctcp_alpha = b;
                        d.in_ack_event(&mut tp, a);
                        let _ = d.ssthresh(&mut tp);
                        let _ = d.undo_cwnd(&mut tp);
                        d.cong_avoid(&mut tp, SeqNum(0), b);
                    }
                }
            }
        }
    }
}
