//! TCP Reno, the kernel's built-in `tcp_reno` (net/ipv4/tcp_cong.c):
//! slow start, additive increase of one packet per cwnd of acked packets,
//! and halving on loss. All of it is the shared helpers in [`super`]; this
//! file only binds them to the [`CongestionOps`] hooks.
//!
//! CaCtx fields read: `snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`,
//! `snd_cwnd_clamp`, `is_cwnd_limited`, `max_packets_out`, `prior_cwnd`.
//! Written: `snd_cwnd`, `snd_cwnd_cnt`.
//!
//! Linux's Reno has no early slow-start exit. [`RenoParams`] can add one
//! that Linux does not have: HyStart++ (RFC 9406, [`super::hystart_plus`]),
//! which also reads `snd_una`, `snd_nxt`, `pacing_status` and writes
//! `snd_ssthresh` and `mib`. Off by default.

use super::hystart_plus::HystartPlusPlus;
use super::{
    tcp_cong_avoid_ai_era, tcp_is_cwnd_limited, tcp_reno_cong_avoid_era, tcp_reno_ssthresh, tcp_reno_undo_cwnd,
    AckSample, CaCtx, CaState, CcEra, CongestionOps,
};
use tcplab_wire::SeqNum;

/// Reno's settings: which kernel's `tcp_cong.c` helpers it runs, and
/// tcplab-only options (the kernel's `tcp_reno` has no module
/// parameters). The default is current Linux's Reno.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct RenoParams {
    /// The era of `tcp_reno_cong_avoid` and its helpers (see [`CcEra`]).
    pub era: CcEra,
    /// Leave the initial slow start by HyStart++ (RFC 9406). Default false:
    /// plain slow start until loss, as Linux.
    pub hystart_plus_plus: bool,
    /// HyStart++'s `L`, packets of cwnd growth per ACK; 0 (default) = the
    /// RFC 9406 §4.3 rule: infinity when paced, 8 when not.
    pub hystart_plus_plus_l: u32,
}

/// `struct tcp_congestion_ops tcp_reno`. Stateless apart from its settings
/// (the era of the helpers it calls) and, when selected, HyStart++'s state.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Reno {
    params: RenoParams,
    hspp: HystartPlusPlus,
}

impl Reno {
    /// Current (≥ 4.13) Reno.
    pub fn new() -> Reno {
        Reno::with_era(CcEra::Current)
    }

    /// Reno with the `tcp_cong.c` helpers of `era` (see [`CcEra`]).
    pub fn with_era(era: CcEra) -> Reno {
        Reno::with_params(RenoParams { era, ..RenoParams::default() })
    }

    /// Reno with `params` (era and tcplab-only options).
    pub fn with_params(params: RenoParams) -> Reno {
        Reno { params, hspp: HystartPlusPlus::new(params.hystart_plus_plus_l) }
    }

    /// The era of the helpers.
    pub fn era(&self) -> CcEra {
        self.params.era
    }

    /// The tcplab-only options.
    pub fn params(&self) -> &RenoParams {
        &self.params
    }

    /// The HyStart++ state, if HyStart++ is selected.
    pub fn hystart_plus_plus(&self) -> Option<&HystartPlusPlus> {
        self.params.hystart_plus_plus.then_some(&self.hspp)
    }

    /// Mutable HyStart++ state, if selected (tests seed situations).
    pub fn hystart_plus_plus_mut(&mut self) -> Option<&mut HystartPlusPlus> {
        self.params.hystart_plus_plus.then_some(&mut self.hspp)
    }
}

impl CongestionOps for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    /// Linux's Reno has no `init`; with HyStart++ selected, HyStart++
    /// starts here.
    fn init(&mut self, tp: &mut CaCtx) {
        if self.params.hystart_plus_plus {
            self.hspp.init(tp);
        }
    }

    /// `tcp_reno_ssthresh`: `max(cwnd / 2, 2)`. Also ends HyStart++ (the
    /// normal reaction to loss and ECN applies).
    #[doc(alias = "tcp_reno_ssthresh")]
    fn ssthresh(&mut self, tp: &mut CaCtx) -> u32 {
        self.hspp.on_congestion();
        tcp_reno_ssthresh(tp)
    }

    /// `tcp_reno_cong_avoid` of the era; with HyStart++ active, its slow
    /// start replaces `tcp_slow_start` (AI on the leftover as usual).
    #[doc(alias = "tcp_reno_cong_avoid")]
    fn cong_avoid(&mut self, tp: &mut CaCtx, _ack: SeqNum, acked: u32) {
        let era = self.params.era;
        if !(self.params.hystart_plus_plus && self.hspp.is_active(tp, era)) {
            tcp_reno_cong_avoid_era(tp, acked, era);
            return;
        }
        if !tcp_is_cwnd_limited(tp, era) {
            return;
        }
        // is_active implies slow start; 3.18 leaves nothing for AI.
        let acked = self.hspp.slow_start(tp, acked, era);
        if acked == 0 {
            return;
        }
        let w = tp.snd_cwnd;
        tcp_cong_avoid_ai_era(tp, w, acked, era);
    }

    /// Linux's Reno has no `set_state`; an RTO ends HyStart++.
    fn set_state(&mut self, _tp: &mut CaCtx, new_state: CaState) {
        if new_state == CaState::Loss {
            self.hspp.on_congestion();
        }
    }

    /// Linux's Reno has no `pkts_acked`; HyStart++ takes its rounds and RTT
    /// samples here.
    fn pkts_acked(&mut self, tp: &mut CaCtx, sample: &AckSample) {
        if self.params.hystart_plus_plus {
            self.hspp.pkts_acked(tp, sample.rtt_us, self.params.era);
        }
    }

    /// ≥ 4.13 (`V4_17`, `Current`): `tcp_reno_undo_cwnd`, `max(cwnd, prior_cwnd)`. Before, Reno
    /// had no `undo_cwnd` and `tcp_undo_cwnd` (tcp_input.c) used
    /// `max(cwnd, ssthresh << 1)` with the reduced ssthresh, so the core
    /// must call this before it restores ssthresh, as the kernel does.
    #[doc(alias = "tcp_reno_undo_cwnd")]
    fn undo_cwnd(&mut self, tp: &mut CaCtx) -> u32 {
        match self.params.era {
            CcEra::V4_17 | CcEra::Current => tcp_reno_undo_cwnd(tp),
            CcEra::V3_18 | CcEra::V3_19 => tp.snd_cwnd.max(tp.snd_ssthresh.wrapping_shl(1)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::{tcp_cong_avoid_ai, tcp_slow_start, AnyCc, CcConfig, TCP_INFINITE_SSTHRESH};

    fn tp(cwnd: u32, ssthresh: u32) -> CaCtx {
        CaCtx {
            snd_cwnd: cwnd,
            snd_ssthresh: ssthresh,
            max_packets_out: cwnd,
            is_cwnd_limited: true,
            ..CaCtx::default()
        }
    }

    #[test]
    fn test_slow_start_stretch_ack_leftover_goes_to_ai() {
        // ≥ 4.3: 8 + 10 capped at ssthresh 12, 6 left for AI.
        let mut t = tp(8, 12);
        assert_eq!(tcp_slow_start(&mut t, 10), 6);
        assert_eq!(t.snd_cwnd, 12);
        let mut r = Reno::new();
        let mut t = tp(8, 12);
        r.cong_avoid(&mut t, SeqNum(0), 10);
        // AI with w = 12 credits the 6 leftover packets.
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (12, 6));
        r.cong_avoid(&mut t, SeqNum(0), 6);
        assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (13, 0));
    }

    #[test]
    fn test_era_slow_start_at_ssthresh() {
        // cwnd == ssthresh: slow start in 3.x (to ssthresh + 1), CA now.
        for (era, cwnd, cnt) in
            [(CcEra::V3_18, 11, 0), (CcEra::V3_19, 11, 4), (CcEra::V4_17, 10, 5), (CcEra::Current, 10, 5)]
        {
            let mut r = Reno::with_era(era);
            let mut t = tp(10, 10);
            r.cong_avoid(&mut t, SeqNum(0), 5);
            assert_eq!((t.snd_cwnd, t.snd_cwnd_cnt), (cwnd, cnt), "{era:?}");
        }
    }

    #[test]
    fn test_v3_18_ai_one_increment_per_ack_whatever_it_covered() {
        // 3.18: +1 per w + 1 ACKs even if each ACK covers 4 packets.
        let mut r = Reno::with_era(CcEra::V3_18);
        let mut t = tp(10, 5);
        for _ in 0..11 {
            r.cong_avoid(&mut t, SeqNum(0), 4);
        }
        assert_eq!(t.snd_cwnd, 11);
        // ≥ 3.19.8 tree: 44 packets at w = 10 → +4.
        let mut t = tp(10, 5);
        for _ in 0..11 {
            tcp_cong_avoid_ai(&mut t, 10, 4);
        }
        assert_eq!(t.snd_cwnd, 14);
    }

    #[test]
    fn test_not_cwnd_limited_does_not_grow() {
        let mut r = Reno::new();
        let mut t = tp(10, 5);
        t.is_cwnd_limited = false;
        r.cong_avoid(&mut t, SeqNum(0), 10);
        assert_eq!(t.snd_cwnd, 10);
        // In slow start, cwnd may still grow to twice what was sent.
        let mut t = tp(10, TCP_INFINITE_SSTHRESH);
        t.is_cwnd_limited = false;
        t.max_packets_out = 6;
        r.cong_avoid(&mut t, SeqNum(0), 2);
        assert_eq!(t.snd_cwnd, 12);
        r.cong_avoid(&mut t, SeqNum(0), 2);
        assert_eq!(t.snd_cwnd, 12);
    }

    #[test]
    fn test_cwnd_limited_latch_in_slow_start_by_era() {
        // cwnd already twice what was sent, but the flow was cwnd-limited
        // (e.g. TSO deferral): only current Linux lets slow start go on.
        for (era, grows) in [(CcEra::V3_18, false), (CcEra::V4_17, false), (CcEra::Current, true)] {
            let mut t = tp(20, TCP_INFINITE_SSTHRESH);
            t.max_packets_out = 10;
            t.is_cwnd_limited = true;
            Reno::with_era(era).cong_avoid(&mut t, SeqNum(0), 2);
            assert_eq!(t.snd_cwnd > 20, grows, "{era:?}");
        }
    }

    #[test]
    fn test_ssthresh_and_undo() {
        let mut r = Reno::new();
        let mut t = tp(3, 100);
        assert_eq!(r.ssthresh(&mut t), 2);
        t.snd_cwnd = 101;
        assert_eq!(r.ssthresh(&mut t), 50);
        t.prior_cwnd = 120;
        assert_eq!(r.undo_cwnd(&mut t), 120);
        // Before 4.13: max(cwnd, ssthresh << 1).
        let mut old = Reno::with_era(CcEra::V3_18);
        t.snd_ssthresh = 70;
        assert_eq!(old.undo_cwnd(&mut t), 140);
    }

    #[test]
    fn test_cc_config_names_round_trip() {
        for name in CcConfig::NAMES {
            let cfg = CcConfig::from_name(name).unwrap();
            assert_eq!(cfg.name(), *name);
            let cc = AnyCc::new(&cfg);
            assert_eq!(cc.name(), *name);
            assert_eq!(cfg.clone(), cfg);
        }
        assert_eq!(CcConfig::from_name("vegas"), None);
        assert_eq!(CcConfig::default().name(), "cubic");
    }

    #[test]
    fn test_helpers_never_panic_on_extremes() {
        let vals = [0u32, 1, 2, 3, 0x7fff_ffff, 0x8000_0000, u32::MAX - 1, u32::MAX];
        for &a in &vals {
            for &b in &vals {
                for &c in &vals {
                    for era in [CcEra::V3_18, CcEra::V3_19, CcEra::V4_17, CcEra::Current] {
                        let mut t = CaCtx {
                            snd_cwnd: a,
                            snd_ssthresh: b,
                            snd_cwnd_cnt: c,
                            snd_cwnd_clamp: b,
                            max_packets_out: c,
                            ..CaCtx::default()
                        };
                        crate::cc::tcp_slow_start_era(&mut t, c, era);
                        crate::cc::tcp_cong_avoid_ai_era(&mut t, a, c, era);
                        Reno::with_era(era).cong_avoid(&mut t, SeqNum(0), b);
                        let _ = Reno::with_era(era).undo_cwnd(&mut t);
                    }
                }
            }
        }
    }
}
