//! Proportional Rate Reduction: how Linux lowers cwnd, ACK by ACK, while
//! it is in CWR or Recovery (`tcp_cwnd_reduction`, net/ipv4/tcp_input.c),
//! plus the entry and exit steps of a reduction (`tcp_init_cwnd_reduction`,
//! `tcp_end_cwnd_reduction`).
//!
//! `//= linux:v6.13:net/ipv4/tcp_input.c#tcp_cwnd_reduction`
//!
//! `//= https://www.rfc-editor.org/rfc/rfc6937#section-3`
//! `//# sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out`
//!
//! # Model
//!
//! Everything here is a pure function of a small copy of the socket
//! fields ([`PrrState`]) and the per-ACK arguments; the connection copies
//! the results back. Units are packets (Linux counts cwnd, ssthresh,
//! `prr_delivered`, `prr_out` and in-flight in MSS-sized packets), and
//! `RecoverFS` of RFC 6937 is `prior_cwnd` (cwnd when the reduction
//! started).
//!
//! On each ACK while in CWR/Recovery, with `in_flight` the
//! `tcp_packets_in_flight()` *after* the ACK was processed:
//! - **proportional part** (`in_flight > ssthresh`): release
//!   `ceil(ssthresh · prr_delivered / prior_cwnd) − prr_out`, spreading the
//!   reduction over one round trip;
//! - **reduction bound** (`in_flight ≤ ssthresh`): an era-dependent rule,
//!   see [`PrrRule`]: send as much as was delivered (PRR-CRB, packet
//!   conservation), or one more (PRR-SSRB, slow start back up to
//!   ssthresh), never past ssthresh;
//! - **epilogue**: force one transmission on the first ACK of the
//!   reduction (the fast retransmit), then `cwnd = in_flight + sndcnt`,
//!   optionally floored ([`PrrConfig::cwnd_floor`]).
//!
//! # Arithmetic contract
//!
//! The kernel mixes `u32` fields with `int` locals: `delta` is the `u32`
//! difference `ssthresh − in_flight` read as `int`, the proportional
//! quotient is `u64`, truncated to `int` after subtracting `prr_out`, and
//! `cwnd` is the `u32` sum `in_flight + sndcnt`. All of that is reproduced
//! with wrapping operations, so arbitrary ("fuzz") inputs give the
//! kernel's results, and nothing here panics. The one kernel crash that
//! cannot be reproduced, the v3.x division by a zero `prior_cwnd`, returns
//! early with a warning instead (see [`tcp_cwnd_reduction`]).
//!
//! Checked against every row of
//! shared/conformance/linux-vectors/prr_cwnd_reduction.csv, v6.13.7 and
//! v4.17.0 (tests/vectors_rtt_prr.rs).

use crate::cc::TCP_INFINITE_SSTHRESH;
use crate::flag;
use tcplab_wire::SeqNum;

/// Which kernel era's `tcp_cwnd_reduction` to run: the releases differ in
/// the reduction bound used once `in_flight ≤ ssthresh`, in their guards,
/// and in how the first ACK forces the fast retransmit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum PrrRule {
    /// v3.12–v3.19 (PRR since v3.2): always PRR-SSRB,
    /// `min(delta, max(prr_delivered − prr_out, newly_acked_sacked) + 1)`.
    /// No early return (a non-positive `newly_acked_sacked` is applied as
    /// is); the proportional test is the unsigned `in_flight > ssthresh`;
    /// the epilogue is `max(sndcnt, fast_rexmit ? 1 : 0)`, with
    /// `fast_rexmit` passed by `tcp_fastretrans_alert` on the ACK that
    /// enters recovery.
    V3_12,
    /// v4.x–v5.10 (verified v4.17, v5.10): PRR-SSRB only when the ACK
    /// acknowledged retransmitted data and no retransmission was found
    /// lost (`RETRANS_DATA_ACKED && !LOST_RETRANS`), else PRR-CRB
    /// `min(delta, newly_acked_sacked)`. Returns early when
    /// `newly_acked_sacked ≤ 0` or `prior_cwnd == 0`; epilogue
    /// `max(sndcnt, prr_out ? 0 : 1)`.
    V4_17,
    /// v6.13: `s = max(prr_delivered − prr_out, newly_acked_sacked)`, plus
    /// one when `snd_una` advanced and this ACK found no new loss; then
    /// `min(delta, s)`. Guards and epilogue as [`V4_17`](Self::V4_17);
    /// the cwnd store warns when the new cwnd is ≤ 0 as an `int`.
    #[default]
    Current,
}

crate::names::named_enum!(PrrRule { V3_12 => "v3.12", V4_17 => "v4.17", Current => "current" });

/// The knobs of [`tcp_cwnd_reduction`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PrrConfig {
    /// Kernel era of the reduction bound.
    pub rule: PrrRule,
    /// Lowest cwnd the reduction may leave. 0 or 1: mainline Linux, which
    /// applies no floor at all (`cwnd = in_flight + sndcnt`; since `sndcnt`
    /// is at least 1 on the first ACK of a reduction this is usually ≥ 1).
    /// 2: Lawrence Brakmo's "tcp: force cwnd at least 2 in
    /// tcp_cwnd_reduction" (2018, not merged), which stores
    /// `max((int)in_flight + sndcnt, 2)`, so that after an ECN-triggered
    /// CWR with nothing in flight the next request leaves in two segments
    /// and is ACKed at once instead of waiting for a delayed ACK
    /// (linux-tcp-model.md §4.2, §7.6). Larger values floor likewise.
    pub cwnd_floor: u32,
}

impl Default for PrrConfig {
    fn default() -> Self {
        PrrConfig { rule: PrrRule::Current, cwnd_floor: 1 }
    }
}

/// The `tcp_sock` fields `tcp_cwnd_reduction` reads, copied in by the
/// caller. All in packets.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct PrrState {
    /// `snd_ssthresh`: the target cwnd of the reduction.
    pub ssthresh: u32,
    /// `prior_cwnd`: cwnd when the reduction started (RFC 6937 RecoverFS).
    pub prior_cwnd: u32,
    /// `prr_delivered`: packets delivered (cumulatively or by SACK) since
    /// the reduction started, before this ACK.
    pub prr_delivered: u32,
    /// `prr_out`: packets sent since the reduction started.
    pub prr_out: u32,
    /// `tcp_packets_in_flight()` after this ACK's SACK and cumulative
    /// processing and loss marking (see [`tcp_packets_in_flight`]).
    pub in_flight: u32,
    /// `snd_cwnd` before the call.
    pub cwnd: u32,
}

/// What one [`tcp_cwnd_reduction`] call does to the socket.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PrrOutcome {
    /// New `prr_delivered`.
    pub prr_delivered: u32,
    /// New `snd_cwnd`.
    pub cwnd: u32,
    /// The kernel's local `sndcnt` after the epilogue (before any
    /// [`PrrConfig::cwnd_floor`]): how many packets this ACK may send
    /// beyond what is in flight. `None` when the function returned early
    /// and changed nothing.
    pub sndcnt: Option<i32>,
    /// Number of kernel `WARN_ON_ONCE` conditions hit: `prior_cwnd == 0`
    /// (v4.17, v6.13; for v3.x the division by zero it would crash on), and
    /// in v6.13 a new cwnd that is ≤ 0 as an `int` (`tcp_snd_cwnd_set`).
    pub warn: u32,
}

impl PrrOutcome {
    /// True when the call returned before changing anything.
    #[inline]
    pub fn returned_early(&self) -> bool {
        self.sndcnt.is_none()
    }
}

impl PrrState {
    /// Writes an outcome back: `prr_delivered` and `cwnd`.
    #[inline]
    pub fn apply(&mut self, out: &PrrOutcome) {
        self.prr_delivered = out.prr_delivered;
        self.cwnd = out.cwnd;
    }
}

/// `tcp_packets_in_flight()` (include/net/tcp.h):
/// `packets_out − (sacked_out + lost_out) + retrans_out`, in `u32`
/// arithmetic (it wraps for inconsistent counters, as the kernel's does).
#[inline]
pub const fn tcp_packets_in_flight(packets_out: u32, sacked_out: u32, lost_out: u32, retrans_out: u32) -> u32 {
    packets_out.wrapping_sub(sacked_out.wrapping_add(lost_out)).wrapping_add(retrans_out)
}

/// `tcp_cwnd_reduction(sk, newly_acked_sacked, newly_lost, flag)`: the PRR
/// step of one ACK in CWR or Recovery.
///
/// - `newly_acked_sacked`: packets this ACK newly delivered, cumulatively
///   or by SACK (RFC 6937 DeliveredData). v4.9+ pass the `tp->delivered`
///   delta; v3.x passed the change in un-SACKed outstanding packets, which
///   can be ≤ 0.
/// - `newly_lost`: packets this ACK newly marked lost (read by
///   [`PrrRule::Current`] only; v4.17 has no such argument).
/// - `flag`: the ACK's [`flag`] bits. Read: [`flag::FLAG_SND_UNA_ADVANCED`]
///   (Current), [`flag::FLAG_RETRANS_DATA_ACKED`] and [`flag::FLAG_LOST_RETRANS`]
///   (V4_17).
/// - `fast_rexmit`: [`PrrRule::V3_12`] only: this ACK triggered the fast
///   retransmit (v3.x `tcp_fastretrans_alert` passed it through); later
///   eras force the retransmit when `prr_out == 0` instead.
///
/// When the v3.x proportional branch would divide by `prior_cwnd == 0` (a
/// kernel oops), this returns early with `warn = 1` and changes nothing.
pub fn tcp_cwnd_reduction(
    st: &PrrState,
    newly_acked_sacked: i32,
    newly_lost: i32,
    flag: u32,
    fast_rexmit: bool,
    cfg: &PrrConfig,
) -> PrrOutcome {
    let unchanged = |warn: u32| PrrOutcome { prr_delivered: st.prr_delivered, cwnd: st.cwnd, sndcnt: None, warn };

    // `int delta = tp->snd_ssthresh - tcp_packets_in_flight(tp);` (u32
    // difference, read as int)
    let delta = st.ssthresh.wrapping_sub(st.in_flight) as i32;

    let mut warn = 0;
    if cfg.rule != PrrRule::V3_12 {
        // [≥ v4.3] "tcp: fix zero cwnd in tcp_cwnd_reduction": nothing
        // was delivered, or the reduction was never initialised.
        if newly_acked_sacked <= 0 {
            return unchanged(0);
        }
        if st.prior_cwnd == 0 {
            return unchanged(1);
        }
    }

    // `tp->prr_delivered += newly_acked_sacked;` (u32 += int)
    let prr_delivered = st.prr_delivered.wrapping_add(newly_acked_sacked as u32);
    // `tp->prr_delivered - tp->prr_out` as an int: the banked sends.
    let banked = prr_delivered.wrapping_sub(st.prr_out) as i32;

    let proportional = match cfg.rule {
        PrrRule::V3_12 => st.in_flight > st.ssthresh,
        PrrRule::V4_17 | PrrRule::Current => delta < 0,
    };

    let mut sndcnt: i32 = if proportional {
        if st.prior_cwnd == 0 {
            // Only reachable with V3_12: the kernel would divide by zero.
            return unchanged(1);
        }
        // RFC 6937 §3: ceil(prr_delivered · ssthresh / RecoverFS) − prr_out,
        // with a u64 dividend; the u64 result minus prr_out is stored in
        // an int (truncated to 32 bits).
        let dividend =
            (st.ssthresh as u64).wrapping_mul(prr_delivered as u64).wrapping_add(st.prior_cwnd as u64).wrapping_sub(1);
        (dividend / st.prior_cwnd as u64).wrapping_sub(st.prr_out as u64) as i32
    } else {
        match cfg.rule {
            PrrRule::V3_12 => delta.min(banked.max(newly_acked_sacked).wrapping_add(1)),
            PrrRule::V4_17 => {
                if flag & flag::FLAG_RETRANS_DATA_ACKED != 0 && flag & flag::FLAG_LOST_RETRANS == 0 {
                    // PRR-SSRB: retransmissions are getting through.
                    delta.min(banked.max(newly_acked_sacked).wrapping_add(1))
                } else {
                    // PRR-CRB: strict packet conservation.
                    delta.min(newly_acked_sacked)
                }
            }
            PrrRule::Current => {
                let mut s = banked.max(newly_acked_sacked);
                // Slow start back towards ssthresh only while snd_una
                // moves and nothing new was lost on this ACK.
                if flag & flag::FLAG_SND_UNA_ADVANCED != 0 && newly_lost == 0 {
                    s = s.wrapping_add(1);
                }
                delta.min(s)
            }
        }
    };

    // Force a fast retransmit on the first ACK of the reduction.
    sndcnt = match cfg.rule {
        PrrRule::V3_12 => sndcnt.max(fast_rexmit as i32),
        PrrRule::V4_17 | PrrRule::Current => sndcnt.max(if st.prr_out != 0 { 0 } else { 1 }),
    };

    let cwnd = if cfg.cwnd_floor >= 2 {
        // Brakmo's patch: a signed max with the floor.
        let floor = i32::try_from(cfg.cwnd_floor).unwrap_or(i32::MAX);
        (st.in_flight as i32).wrapping_add(sndcnt).max(floor) as u32
    } else {
        st.in_flight.wrapping_add(sndcnt as u32)
    };
    if cfg.rule == PrrRule::Current && (cwnd as i32) <= 0 {
        // `tcp_snd_cwnd_set` warns; the value is stored anyway.
        warn += 1;
    }

    PrrOutcome { prr_delivered, cwnd, sndcnt: Some(sndcnt), warn }
}

/// The PRR-related fields `tcp_init_cwnd_reduction` sets when CWR or
/// Recovery starts.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CwndReductionStart {
    /// `high_seq = snd_nxt`: the reduction ends when `snd_una` passes it.
    pub high_seq: SeqNum,
    /// `prior_cwnd = snd_cwnd`.
    pub prior_cwnd: u32,
    /// `prr_delivered = 0`.
    pub prr_delivered: u32,
    /// `prr_out = 0`.
    pub prr_out: u32,
    /// `snd_cwnd_cnt = 0`.
    pub snd_cwnd_cnt: u32,
    /// `snd_ssthresh = ca_ops->ssthresh(sk)`, as passed in.
    pub snd_ssthresh: u32,
}

/// `tcp_init_cwnd_reduction(sk)` [v4.x–v6.13] as a pure function: the
/// caller passes the current `snd_cwnd`, `snd_nxt` and the value the
/// congestion control's `ssthresh` hook returned (the hook has side
/// effects, so the caller runs it), and stores the result. The kernel also
/// clears `tlp_high_seq` (no TLP episode survives into a reduction) and
/// queues CWR on the next data segment when ECN is on (`tcp_ecn_queue_cwr`);
/// those belong to the caller. [v3.12–v3.19] took a `set_ssthresh`
/// argument; passing the old ssthresh models `set_ssthresh = false`.
pub const fn tcp_init_cwnd_reduction(snd_cwnd: u32, snd_nxt: SeqNum, ssthresh_from_ca: u32) -> CwndReductionStart {
    CwndReductionStart {
        high_seq: snd_nxt,
        prior_cwnd: snd_cwnd,
        prr_delivered: 0,
        prr_out: 0,
        snd_cwnd_cnt: 0,
        snd_ssthresh: ssthresh_from_ca,
    }
}

/// What `tcp_end_cwnd_reduction` does.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct CwndReductionEnd {
    /// `Some(ssthresh)`: set `snd_cwnd` to it and refresh `snd_cwnd_stamp`.
    pub set_cwnd: Option<u32>,
    /// Fire `CA_EVENT_COMPLETE_CWR` on the congestion control.
    pub complete_cwr_event: bool,
}

/// `tcp_end_cwnd_reduction(sk)`, called when CWR or Recovery ends (and by
/// TLP recovery), as a pure function.
///
/// - `has_cong_control`: the module has `.cong_control` (BBR) [≥ v4.9]; it
///   then owns cwnd and nothing happens.
/// - `ca_state_cwr`: `icsk_ca_state == TCP_CA_CWR`.
/// - `undo_marker_set`: `tp->undo_marker != 0`, i.e. the reduction was not
///   undone.
///
/// Unless the reduction was undone (or ssthresh is still
/// `TCP_INFINITE_SSTHRESH`), cwnd lands exactly on ssthresh, so PRR's
/// final proportional step and any banked sends do not carry over.
/// [v3.x] tested `CWR || (undo_marker && ssthresh < INFINITE)`, so in CWR
/// it set cwnd even to an infinite ssthresh, and had no `cong_control`.
pub fn tcp_end_cwnd_reduction(
    rule: PrrRule,
    has_cong_control: bool,
    ca_state_cwr: bool,
    undo_marker_set: bool,
    ssthresh: u32,
) -> CwndReductionEnd {
    let finite = ssthresh < TCP_INFINITE_SSTHRESH;
    match rule {
        PrrRule::V3_12 => {
            let set = ca_state_cwr || (undo_marker_set && finite);
            CwndReductionEnd { set_cwnd: set.then_some(ssthresh), complete_cwr_event: true }
        }
        PrrRule::V4_17 | PrrRule::Current => {
            if has_cong_control {
                return CwndReductionEnd { set_cwnd: None, complete_cwr_event: false };
            }
            let set = finite && (ca_state_cwr || undo_marker_set);
            CwndReductionEnd { set_cwnd: set.then_some(ssthresh), complete_cwr_event: true }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CRB: PrrConfig = PrrConfig { rule: PrrRule::V4_17, cwnd_floor: 1 };
    const SSRB: PrrConfig = PrrConfig { rule: PrrRule::V3_12, cwnd_floor: 1 };
    const CURRENT: PrrConfig = PrrConfig { rule: PrrRule::Current, cwnd_floor: 1 };

    /// One returning ACK of an RFC 6937 §3.1 figure: its number, the pipe
    /// after the ACK was processed (before sending), and the packets PRR
    /// releases on it ("sent").
    struct Row {
        ack: u32,
        pipe: u32,
        sent: i32,
    }

    /// Runs a figure through `tcp_cwnd_reduction`: every ACK delivers one
    /// packet, the sender is never application-limited (it sends exactly
    /// sndcnt), and the first ACK is the one that enters recovery.
    #[track_caller]
    fn run_figure(cfg: &PrrConfig, rows: &[Row]) {
        let mut st = PrrState { ssthresh: 10, prior_cwnd: 20, prr_delivered: 0, prr_out: 0, in_flight: 0, cwnd: 20 };
        for (i, r) in rows.iter().enumerate() {
            st.in_flight = r.pipe;
            let out = tcp_cwnd_reduction(&st, 1, 0, flag::FLAG_DATA_SACKED, i == 0, cfg);
            let sndcnt = out.sndcnt.expect("PRR ran");
            assert_eq!(sndcnt, r.sent, "ack {} ({:?})", r.ack, cfg.rule);
            assert_eq!(out.cwnd, r.pipe + r.sent as u32, "ack {}", r.ack);
            assert_eq!(out.warn, 0);
            st.apply(&out);
            st.prr_out += sndcnt as u32;
        }
    }

    // ---- RFC 6937 §3.1 examples ---------------------------------------------
    //
    // cwnd = FlightSize = pipe = 20 at the loss, ssthresh = 10 (AIMD),
    // limited transmit sends 2 new segments on the first two dupacks, so 22
    // are outstanding when the third dupack starts recovery.

    //= https://www.rfc-editor.org/rfc/rfc6937#section-3.1
    //= type=test
    //# PRR-CRB
    //# ack#   X  X  X  X  X  X  X  X  X  X  X  X  X  X  X 15 16 17 18 19
    //# pipe:                                              19 19  4  4  4
    //# sent:                                               N  N  R  R  R
    //# RB:                                                       b  b  b
    #[test]
    fn test_recovery_burst15_crb_matches_rfc6937_figure() {
        // Segments 0..14 lost. ACK 17 (third dupack): 22 out, 3 SACKed,
        // 15 lost: pipe 4. Each R refills what the ACK drained.
        let rows =
            [Row { ack: 17, pipe: 4, sent: 1 }, Row { ack: 18, pipe: 4, sent: 1 }, Row { ack: 19, pipe: 4, sent: 1 }];
        // v4.17 on dupacks (no RETRANS_DATA_ACKED): CRB.
        run_figure(&CRB, &rows);
        // v6.13 on dupacks (snd_una does not advance): no +1, same result.
        run_figure(&CURRENT, &rows);
    }

    //= https://www.rfc-editor.org/rfc/rfc6937#section-3.1
    //= type=test
    //# PRR-SSRB
    //# ack#   X  X  X  X  X  X  X  X  X  X  X  X  X  X  X 15 16 17 18 19
    //# pipe:                                              19 19  4  5  6
    //# sent:                                               N  N 2R 2R 2R
    //# RB:                                                      bd  d  d
    #[test]
    fn test_recovery_burst15_ssrb_matches_rfc6937_figure() {
        // ack 17: max(1 - 0, 1) + 1 = 2; ack 18: max(2 - 2, 1) + 1 = 2;
        // ack 19: max(3 - 4, 1) + 1 = 2. Pipe grows by one per ACK.
        let rows =
            [Row { ack: 17, pipe: 4, sent: 2 }, Row { ack: 18, pipe: 5, sent: 2 }, Row { ack: 19, pipe: 6, sent: 2 }];
        run_figure(&SSRB, &rows);
    }

    //= https://www.rfc-editor.org/rfc/rfc6937#section-3.1
    //= type=test
    //# PRR
    //# ack#   X  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19
    //# pipe:    19 19 18 18 18 17 17 16 16 15 15 14 14 13 13 12 12 11 10
    //# sent:     N  N  R     N     N     N     N     N     N        N  N
    //# RB:                                                          s  s
    //= type=exception
    //= reason=The figure contradicts its own formula from ack 17 on. At ack
    //= 17, prr_delivered = 15 and prr_out = 7 (R + 6 N), so
    //= ceil(15 * 10 / 20) - 7 = 1 whatever the pipe (12 > ssthresh), yet the
    //= figure sends nothing; its pipe row also repeats 18 at ack 5 although
    //= nothing was sent at ack 4 (the Rate-Halving figure above it has 17).
    //= The table below keeps the figure up to ack 16 and continues with the
    //= formula and exact pipe accounting; the kernel vectors
    //= (rfc6937_single_loss_cwnd20_reno in prr_cwnd_reduction.csv) agree.
    #[test]
    fn test_recovery_single_loss_matches_rfc6937_figure() {
        // Hand-computed: sndcnt = ceil(10 * (ack - 2) / 20) - prr_out while
        // pipe > 10; pipe = previous pipe + sent - 1.
        let rows = [
            Row { ack: 3, pipe: 18, sent: 1 }, // R: ceil(0.5) - 0
            Row { ack: 4, pipe: 18, sent: 0 }, // ceil(1.0) - 1
            Row { ack: 5, pipe: 17, sent: 1 }, // ceil(1.5) - 1
            Row { ack: 6, pipe: 17, sent: 0 },
            Row { ack: 7, pipe: 16, sent: 1 },
            Row { ack: 8, pipe: 16, sent: 0 },
            Row { ack: 9, pipe: 15, sent: 1 },
            Row { ack: 10, pipe: 15, sent: 0 },
            Row { ack: 11, pipe: 14, sent: 1 },
            Row { ack: 12, pipe: 14, sent: 0 },
            Row { ack: 13, pipe: 13, sent: 1 },
            Row { ack: 14, pipe: 13, sent: 0 },
            Row { ack: 15, pipe: 12, sent: 1 },
            Row { ack: 16, pipe: 12, sent: 0 },
            Row { ack: 17, pipe: 11, sent: 1 }, // ceil(7.5) - 7
            Row { ack: 18, pipe: 11, sent: 0 }, // ceil(8.0) - 8
            Row { ack: 19, pipe: 10, sent: 0 }, // pipe = ssthresh: delta 0
        ];
        // A single loss: both reduction bounds behave the same.
        run_figure(&SSRB, &rows);
        run_figure(&CRB, &rows);
        run_figure(&CURRENT, &rows);
    }

    // ---- Reduction with nothing in flight -----------------------------------

    /// linux-tcp-model.md §4.2: the ACK that leaves nothing in flight gets
    /// `delta = ssthresh`, and with the CRB bound releases exactly what it
    /// delivered, 1 packet; the forced retransmit is also 1. Mainline ends
    /// with cwnd 1, Brakmo's floor with 2.
    #[test]
    fn test_cwr_nothing_in_flight_leaves_cwnd_floor() {
        // The application-limited row of prr_cwnd_reduction.csv: cwnd 10,
        // ssthresh 5, 7 of 10 lost, 3 SACKed, nothing in flight.
        let st = PrrState { ssthresh: 5, prior_cwnd: 10, prr_delivered: 0, prr_out: 0, in_flight: 0, cwnd: 10 };
        for rule in [PrrRule::V4_17, PrrRule::Current] {
            let out = tcp_cwnd_reduction(&st, 1, 7, flag::FLAG_DATA_SACKED, false, &PrrConfig { rule, cwnd_floor: 1 });
            assert_eq!((out.cwnd, out.sndcnt, out.prr_delivered), (1, Some(1), 1), "{rule:?}");
            let out = tcp_cwnd_reduction(&st, 1, 7, flag::FLAG_DATA_SACKED, false, &PrrConfig { rule, cwnd_floor: 2 });
            assert_eq!((out.cwnd, out.sndcnt), (2, Some(1)), "{rule:?}");
        }
        // The ECN case of §4.2 (v4.17): the last ACK of an RPC carries ECE
        // and cumulatively acks one segment; no retransmission involved.
        let st = PrrState { ssthresh: 7, prior_cwnd: 10, prr_delivered: 0, prr_out: 0, in_flight: 0, cwnd: 10 };
        let fl = flag::FLAG_DATA_ACKED | flag::FLAG_SND_UNA_ADVANCED | flag::FLAG_ECE;
        assert_eq!(tcp_cwnd_reduction(&st, 1, 0, fl, false, &CRB).cwnd, 1);
        assert_eq!(tcp_cwnd_reduction(&st, 1, 0, fl, false, &PrrConfig { cwnd_floor: 2, ..CRB }).cwnd, 2);
        // v6.13 slow-starts by one when snd_una advanced without new loss.
        assert_eq!(tcp_cwnd_reduction(&st, 1, 0, fl, false, &CURRENT).cwnd, 2);
    }

    #[test]
    fn test_cwr_floor_does_not_raise_larger_windows() {
        let st = PrrState { ssthresh: 10, prior_cwnd: 20, prr_delivered: 4, prr_out: 2, in_flight: 15, cwnd: 16 };
        let a = tcp_cwnd_reduction(&st, 1, 0, 0, false, &CURRENT);
        let b = tcp_cwnd_reduction(&st, 1, 0, 0, false, &PrrConfig { cwnd_floor: 2, ..CURRENT });
        assert_eq!(a, b);
    }

    // ---- Guards and odd inputs ------------------------------------------------

    #[test]
    fn test_recovery_early_returns_and_warnings() {
        let st = PrrState { ssthresh: 10, prior_cwnd: 0, prr_delivered: 3, prr_out: 1, in_flight: 12, cwnd: 13 };
        for cfg in [CRB, CURRENT] {
            let out = tcp_cwnd_reduction(&st, 1, 0, 0, false, &cfg);
            assert!(out.returned_early());
            assert_eq!((out.cwnd, out.prr_delivered, out.warn), (13, 3, 1));
            let out = tcp_cwnd_reduction(&PrrState { prior_cwnd: 20, ..st }, 0, 0, 0, false, &cfg);
            assert!(out.returned_early());
            assert_eq!(out.warn, 0);
        }
        // v3.x has no guard: a negative delivery count is applied...
        let out = tcp_cwnd_reduction(&PrrState { prior_cwnd: 20, ..st }, -1, 0, 0, false, &SSRB);
        assert_eq!(out.prr_delivered, 2);
        // ...and a zero prior_cwnd in the proportional branch would oops.
        let out = tcp_cwnd_reduction(&st, 1, 0, 0, false, &SSRB);
        assert!(out.returned_early());
        assert_eq!(out.warn, 1);
    }

    #[test]
    fn test_recovery_v4_17_ssrb_only_when_retransmits_get_through() {
        let st = PrrState { ssthresh: 10, prior_cwnd: 20, prr_delivered: 10, prr_out: 4, in_flight: 5, cwnd: 8 };
        let crb = tcp_cwnd_reduction(&st, 2, 0, flag::FLAG_DATA_SACKED, false, &CRB);
        assert_eq!(crb.sndcnt, Some(2));
        let ssrb = tcp_cwnd_reduction(&st, 2, 0, flag::FLAG_RETRANS_DATA_ACKED, false, &CRB);
        assert_eq!(ssrb.sndcnt, Some(5)); // min(5, max(12 - 4, 2) + 1)
        let lost = tcp_cwnd_reduction(&st, 2, 0, flag::FLAG_RETRANS_DATA_ACKED | flag::FLAG_LOST_RETRANS, false, &CRB);
        assert_eq!(lost.sndcnt, Some(2));
    }

    #[test]
    fn test_recovery_extreme_inputs_do_not_panic() {
        let vals = [0u32, 1, 2, 0x7fff_ffff, 0x8000_0000, u32::MAX];
        let ints = [i32::MIN, -1, 0, 1, i32::MAX];
        for rule in [PrrRule::V3_12, PrrRule::V4_17, PrrRule::Current] {
            for floor in [0, 1, 2, u32::MAX] {
                let cfg = PrrConfig { rule, cwnd_floor: floor };
                for &a in &vals {
                    for &b in &vals {
                        for &n in &ints {
                            let st = PrrState {
                                ssthresh: a,
                                prior_cwnd: b,
                                prr_delivered: a,
                                prr_out: b,
                                in_flight: b,
                                cwnd: a,
                            };
                            let _ = tcp_cwnd_reduction(&st, n, n, u32::MAX, true, &cfg);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn test_packets_in_flight_wraps_like_u32() {
        assert_eq!(tcp_packets_in_flight(22, 3, 15, 0), 4);
        assert_eq!(tcp_packets_in_flight(0, 1, 0, 0), u32::MAX);
    }

    // ---- Entering and leaving a reduction -------------------------------------

    #[test]
    fn test_init_cwnd_reduction_snapshots_cwnd() {
        let s = tcp_init_cwnd_reduction(20, SeqNum(5000), 10);
        assert_eq!(
            s,
            CwndReductionStart {
                high_seq: SeqNum(5000),
                prior_cwnd: 20,
                prr_delivered: 0,
                prr_out: 0,
                snd_cwnd_cnt: 0,
                snd_ssthresh: 10
            }
        );
    }

    #[test]
    fn test_end_cwnd_reduction_sets_cwnd_to_ssthresh_unless_undone() {
        for rule in [PrrRule::V4_17, PrrRule::Current] {
            assert_eq!(tcp_end_cwnd_reduction(rule, false, false, true, 10).set_cwnd, Some(10));
            assert_eq!(tcp_end_cwnd_reduction(rule, false, true, false, 10).set_cwnd, Some(10));
            assert_eq!(tcp_end_cwnd_reduction(rule, false, false, false, 10).set_cwnd, None);
            assert_eq!(tcp_end_cwnd_reduction(rule, false, true, true, TCP_INFINITE_SSTHRESH).set_cwnd, None);
            let bbr = tcp_end_cwnd_reduction(rule, true, true, true, 10);
            assert_eq!((bbr.set_cwnd, bbr.complete_cwr_event), (None, false));
        }
        let v3 = tcp_end_cwnd_reduction(PrrRule::V3_12, true, true, false, TCP_INFINITE_SSTHRESH);
        assert_eq!((v3.set_cwnd, v3.complete_cwr_event), (Some(TCP_INFINITE_SSTHRESH), true));
        assert_eq!(tcp_end_cwnd_reduction(PrrRule::V3_12, false, false, true, TCP_INFINITE_SSTHRESH).set_cwnd, None);
    }
}
