//! HyStart++ (RFC 9406, "HyStart++: Modified Slow Start for TCP"), an
//! optional slow-start exit for [`super::cubic`] and [`super::reno`].
//!
//! **Linux does not ship HyStart++.** tcp_cubic.c has only HyStart
//! ([`super::hystart`]) and tcp_cong.c's Reno has no early exit at all; this
//! module is a tcplab-only model of the RFC, so there are no kernel vectors
//! for it and its counters carry `Tcplab*` names, never `TcpExt*` ones.
//! Windows has shipped it as its default since about 2021 (RFC 9406 §5,
//! "with pacing disabled and an actual L = 8").
//!
//! HyStart++ keeps slow start but watches the minimum RTT of each round
//! (one window of data). When a round's minimum has risen by `RttThresh`
//! over the last round's, it leaves slow start for Conservative Slow Start
//! (CSS), which grows cwnd a quarter as fast. If the RTT falls back below
//! the CSS baseline the exit was spurious and slow start resumes; if it
//! stays up for [`CSS_ROUNDS`] rounds, `ssthresh = cwnd` and congestion
//! avoidance begins.
//!
//! # Model contract
//!
//! * **Units.** cwnd and `L` in packets, like the kernel (`N` newly acked
//!   bytes and `L·SMSS` become acked packets and `L` packets); RTTs in µs,
//!   `u32::MAX` standing for "infinity".
//! * **Rounds** follow Linux HyStart's (6.13 `hystart_update`): a round
//!   ends when `snd_una` passes `window_end` (`after()`), checked at the
//!   top of `pkts_acked` before the ACK's sample is taken, so the ACK that
//!   ends a round counts toward the next one; the next round ends at the
//!   `snd_nxt` of that moment.
//! * **Samples** are `AckSample::rtt_us` (the kernel's `ca_rtt`, most
//!   recently sent packet newly (S)ACKed); an ACK without one (negative)
//!   advances rounds but adds no sample.
//! * **Initial slow start only** (RFC 9406 §4.3 SHOULD): HyStart++ runs
//!   while `ssthresh` is still `TCP_INFINITE_SSTHRESH` and no congestion
//!   event has happened. The first `ssthresh` hook call (loss, RTO, ECN/CWR)
//!   or the end of CSS turns it off for the life of the connection; later
//!   slow starts are the era's standard one (`tcp_slow_start`, L = ∞).
//! * **Loss or ECN in slow start or CSS** gets the algorithm's normal
//!   reaction (CUBIC's β, Reno's halving, via the core's loss recovery),
//!   not the RFC's `ssthresh = cwnd`; see the exception at
//!   [`HystartPlusPlus::on_congestion`].
//! * **Growth.** `cwnd += min(acked, L)` in slow start and
//!   `cwnd += min(acked, L) / CSS_GROWTH_DIVISOR` in CSS, the remainder of
//!   the division carried to the next ACK so that no acked packet is lost
//!   to rounding. Acked packets above `L` are not credited (nor passed to
//!   congestion avoidance). The increment then goes through the era's
//!   `tcp_slow_start`, which caps at ssthresh and returns what is left for
//!   congestion avoidance.
//!
//! All arithmetic saturates or wraps as documented; no input panics.

use super::{tcp_in_slow_start, tcp_slow_start_era, CaCtx, CcEra, PacingStatus, TCP_INFINITE_SSTHRESH};
use crate::counters::Mib;
use tcplab_wire::SeqNum;

/// `MIN_RTT_THRESH` (RFC 9406 §4.3): 4 ms, in µs. Lower clamp of `RttThresh`.
pub const MIN_RTT_THRESH_US: u32 = 4_000;
/// `MAX_RTT_THRESH` (RFC 9406 §4.3): 16 ms, in µs. Upper clamp of `RttThresh`.
pub const MAX_RTT_THRESH_US: u32 = 16_000;
/// `MIN_RTT_DIVISOR` (RFC 9406 §4.3): `RttThresh = lastRoundMinRTT / 8`
/// before clamping (12.5 %).
pub const MIN_RTT_DIVISOR: u32 = 8;
/// `N_RTT_SAMPLE` (RFC 9406 §4.3): RTT samples per round before a round's
/// minimum is trusted.
pub const N_RTT_SAMPLE: u32 = 8;
/// `CSS_GROWTH_DIVISOR` (RFC 9406 §4.3): CSS grows cwnd by a quarter of
/// what slow start would.
pub const CSS_GROWTH_DIVISOR: u32 = 4;
/// `CSS_ROUNDS` (RFC 9406 §4.3): at most this many rounds in CSS.
pub const CSS_ROUNDS: u32 = 5;
/// `L` for a non-paced sender (RFC 9406 §4.3), packets per ACK.
pub const L_NON_PACED: u32 = 8;
/// `L = infinity` (paced sender).
pub const L_INFINITY: u32 = u32::MAX;
/// "infinity" for the RTT variables (µs).
pub const RTT_INFINITY: u32 = u32::MAX;

/// Where HyStart++ is.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum HystartPlusPlusPhase {
    /// Standard slow start, watching for a delay increase.
    #[default]
    SlowStart,
    /// Conservative Slow Start.
    Css,
    /// Off for the rest of the connection: CSS ended in congestion
    /// avoidance, or a congestion event ended slow start.
    Done,
}

/// What one `pkts_acked` call changed (for tracing and tests; the
/// `Tcplab*` counters say the same in aggregate).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum HystartPlusPlusEvent {
    /// No phase change.
    #[default]
    None,
    /// Slow start → CSS (`TcplabHystartPlusPlusCssEntries`).
    CssEntered,
    /// CSS → slow start: the exit was spurious
    /// (`TcplabHystartPlusPlusCssResumes`).
    SlowStartResumed,
    /// CSS_ROUNDS rounds done: `ssthresh = cwnd`, congestion avoidance
    /// (`TcplabHystartPlusPlusExits`).
    Exited,
}

/// HyStart++ state (RFC 9406 §4.2 variables), per flow.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct HystartPlusPlus {
    /// The `L` parameter, packets per ACK; 0 = the RFC 9406 §4.3 rule
    /// (infinity when paced, [`L_NON_PACED`] otherwise).
    pub l: u32,
    pub phase: HystartPlusPlusPhase,
    /// `windowEnd`: the round ends when an ACK passes it.
    pub window_end: SeqNum,
    /// `lastRoundMinRTT` (µs; [`RTT_INFINITY`] = infinity).
    pub last_round_min_rtt: u32,
    /// `currentRoundMinRTT` (µs; [`RTT_INFINITY`] = infinity).
    pub current_round_min_rtt: u32,
    /// `rttSampleCount`: samples in this round.
    pub rtt_sample_count: u32,
    /// `cssBaselineMinRtt` (µs; [`RTT_INFINITY`] = infinity).
    pub css_baseline_min_rtt: u32,
    /// Rounds completed in CSS (the partial entry round included).
    pub css_rounds: u32,
    /// Acked packets credited in CSS but not yet turned into cwnd
    /// (`< CSS_GROWTH_DIVISOR`).
    pub css_carry: u32,
    /// Rounds started since `init` (tracing only).
    pub rounds: u32,
}

impl Default for HystartPlusPlus {
    fn default() -> Self {
        HystartPlusPlus::new(0)
    }
}

/// `RttThresh = max(MIN_RTT_THRESH, min(lastRoundMinRTT / MIN_RTT_DIVISOR,
/// MAX_RTT_THRESH))`, µs.
#[inline]
pub fn rtt_thresh(last_round_min_rtt: u32) -> u32 {
    (last_round_min_rtt / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_US, MAX_RTT_THRESH_US)
}

impl HystartPlusPlus {
    /// HyStart++ with the given `L` (packets; 0 = RFC rule). Call
    /// [`Self::init`] when the connection is established.
    pub fn new(l: u32) -> HystartPlusPlus {
        HystartPlusPlus {
            l,
            phase: HystartPlusPlusPhase::SlowStart,
            window_end: SeqNum(0),
            last_round_min_rtt: RTT_INFINITY,
            current_round_min_rtt: RTT_INFINITY,
            rtt_sample_count: 0,
            css_baseline_min_rtt: RTT_INFINITY,
            css_rounds: 0,
            css_carry: 0,
            rounds: 0,
        }
    }

    /// Starts HyStart++ afresh at connection establishment (the owner's
    /// `init` hook).
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //# lastRoundMinRTT and currentRoundMinRTT are initialized to infinity at
    //# the initialization time.  currRTT is the RTT sampled from the latest
    //# incoming ACK and initialized to infinity.
    //#
    //# lastRoundMinRTT = infinity
    //# currentRoundMinRTT = infinity
    //# currRTT = infinity
    //#
    //# HyStart++ measures rounds using sequence numbers, as follows:
    //#
    //# *  Define windowEnd as a sequence number initialized to SND.NXT.
    pub fn init(&mut self, tp: &CaCtx) {
        *self = HystartPlusPlus::new(self.l);
        self.window_end = tp.snd_nxt;
    }

    /// Whether HyStart++ governs this ACK: not `Done`, in slow start (the
    /// era's test), and still the initial slow start (`ssthresh` never set).
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.3
    //# An implementation SHOULD use HyStart++ only for the initial slow
    //# start (when the ssthresh is at its initial value of arbitrarily high
    //# per [RFC5681]) and fall back to using standard slow start for the
    //# remainder of the connection lifetime.
    #[inline]
    pub fn is_active(&self, tp: &CaCtx, era: CcEra) -> bool {
        self.phase != HystartPlusPlusPhase::Done
            && tp.snd_ssthresh >= TCP_INFINITE_SSTHRESH
            && tcp_in_slow_start(tp, era)
    }

    /// The effective `L` for this ACK, packets.
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.3
    //# L = infinity if paced, L = 8 if non-paced
    //
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.3
    //# A paced TCP implementation SHOULD use L =
    //# infinity.
    #[inline]
    pub fn limit(&self, tp: &CaCtx) -> u32 {
        match self.l {
            0 if tp.pacing_status == PacingStatus::None => L_NON_PACED,
            0 => L_INFINITY,
            l => l,
        }
    }

    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //# *  When windowEnd is ACKed, the current round ends and windowEnd is
    //#    set to SND.NXT.
    //#
    //# At the start of each round during standard slow start [RFC5681] and
    //# CSS, initialize the variables used to compute the last round's and
    //# current round's minimum RTT:
    //#
    //# lastRoundMinRTT = currentRoundMinRTT
    //# currentRoundMinRTT = infinity
    //# rttSampleCount = 0
    fn start_round(&mut self, tp: &CaCtx) {
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = RTT_INFINITY;
        self.rtt_sample_count = 0;
        self.window_end = tp.snd_nxt;
        self.rounds = self.rounds.saturating_add(1);
    }

    /// The `pkts_acked` part: round tracking, the RTT sample, and the phase
    /// changes (slow start → CSS, CSS → slow start, CSS → congestion
    /// avoidance). `rtt_us < 0` means the ACK carried no RTT sample. May set
    /// `tp.snd_ssthresh = tp.snd_cwnd` and bump the `Tcplab*` counters.
    pub fn pkts_acked(&mut self, tp: &mut CaCtx, rtt_us: i64, era: CcEra) -> HystartPlusPlusEvent {
        if !self.is_active(tp, era) {
            return HystartPlusPlusEvent::None;
        }
        if tp.snd_una.after(self.window_end) {
            if self.phase == HystartPlusPlusPhase::Css {
                self.css_rounds = self.css_rounds.saturating_add(1);
                //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
                //# CSS lasts at most CSS_ROUNDS rounds.  If the transition into CSS
                //# happens in the middle of a round, that partial round counts towards
                //# the limit.
                //#
                //# If CSS_ROUNDS rounds are complete, enter congestion avoidance by
                //# setting the ssthresh to the current cwnd.
                //#
                //# ssthresh = cwnd
                if self.css_rounds >= CSS_ROUNDS {
                    tp.snd_ssthresh = tp.snd_cwnd;
                    self.phase = HystartPlusPlusPhase::Done;
                    tp.mib.inc(Mib::TcplabHystartPlusPlusExits);
                    tp.mib.add(Mib::TcplabHystartPlusPlusExitCwnd, tp.snd_cwnd as u64);
                    return HystartPlusPlusEvent::Exited;
                }
            }
            self.start_round(tp);
        }
        if rtt_us < 0 {
            return HystartPlusPlusEvent::None;
        }
        // Finite samples stay below the "infinity" marker.
        let rtt = rtt_us.min((RTT_INFINITY - 1) as i64) as u32;

        //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
        //# Keep track of the minimum observed RTT:
        //#
        //# currentRoundMinRTT = min(currentRoundMinRTT, currRTT)
        //# rttSampleCount += 1
        self.current_round_min_rtt = self.current_round_min_rtt.min(rtt);
        self.rtt_sample_count = self.rtt_sample_count.saturating_add(1);

        match self.phase {
            HystartPlusPlusPhase::SlowStart => {
                //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
                //# For rounds where at least N_RTT_SAMPLE RTT samples have been obtained
                //# and currentRoundMinRTT and lastRoundMinRTT are valid, check to see if
                //# delay increase triggers slow start exit:
                //#
                //# if ((rttSampleCount >= N_RTT_SAMPLE) AND
                //#     (currentRoundMinRTT != infinity) AND
                //#     (lastRoundMinRTT != infinity))
                //#   RttThresh = max(MIN_RTT_THRESH,
                //#     min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))
                //#   if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh))
                //#     cssBaselineMinRtt = currentRoundMinRTT
                //#     exit slow start and enter CSS
                if self.rtt_sample_count >= N_RTT_SAMPLE
                    && self.current_round_min_rtt != RTT_INFINITY
                    && self.last_round_min_rtt != RTT_INFINITY
                {
                    let thresh = rtt_thresh(self.last_round_min_rtt);
                    if self.current_round_min_rtt as u64 >= self.last_round_min_rtt as u64 + thresh as u64 {
                        self.css_baseline_min_rtt = self.current_round_min_rtt;
                        self.phase = HystartPlusPlusPhase::Css;
                        self.css_rounds = 0;
                        self.css_carry = 0;
                        tp.mib.inc(Mib::TcplabHystartPlusPlusCssEntries);
                        return HystartPlusPlusEvent::CssEntered;
                    }
                }
            }
            HystartPlusPlusPhase::Css => {
                //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
                //# For CSS rounds where at least N_RTT_SAMPLE RTT samples have been
                //# obtained, check to see if the current round's minRTT drops below
                //# baseline (cssBaselineMinRtt) indicating that slow start exit was
                //# spurious:
                //#
                //# if (currentRoundMinRTT < cssBaselineMinRtt)
                //#   cssBaselineMinRtt = infinity
                //#   resume slow start including HyStart++
                if self.rtt_sample_count >= N_RTT_SAMPLE && self.current_round_min_rtt < self.css_baseline_min_rtt {
                    self.css_baseline_min_rtt = RTT_INFINITY;
                    self.phase = HystartPlusPlusPhase::SlowStart;
                    self.css_rounds = 0;
                    self.css_carry = 0;
                    tp.mib.inc(Mib::TcplabHystartPlusPlusCssResumes);
                    return HystartPlusPlusEvent::SlowStartResumed;
                }
            }
            HystartPlusPlusPhase::Done => {}
        }
        HystartPlusPlusEvent::None
    }

    /// The slow-start step of `cong_avoid` while [`Self::is_active`]: grows
    /// cwnd by `min(acked, L)`, divided by [`CSS_GROWTH_DIVISOR`] in CSS
    /// (remainder carried), through the era's `tcp_slow_start`. Returns what
    /// that leaves for congestion avoidance on this ACK (always 0 in 3.18).
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //# The following pseudocode uses a limit, L, to control the
    //# aggressiveness of the cwnd increase during both standard slow start
    //# and CSS.  While an arriving ACK may newly acknowledge an arbitrary
    //# number of bytes, the HyStart++ algorithm limits the number of those
    //# bytes applied to increase the cwnd to L*SMSS bytes.
    //
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //# For each arriving ACK in slow start, where N is the number of
    //# previously unacknowledged bytes acknowledged in the arriving ACK:
    //#
    //# Update the cwnd:
    //#
    //#   cwnd = cwnd + min(N, L * SMSS)
    //
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //# For each arriving ACK in CSS, where N is the number of previously
    //# unacknowledged bytes acknowledged in the arriving ACK:
    //#
    //# Update the cwnd:
    //#
    //# cwnd = cwnd + (min(N, L * SMSS) / CSS_GROWTH_DIVISOR)
    pub fn slow_start(&mut self, tp: &mut CaCtx, acked: u32, era: CcEra) -> u32 {
        let n = acked.min(self.limit(tp));
        let inc = if self.phase == HystartPlusPlusPhase::Css {
            // Carry the remainder: four 1-packet ACKs grow cwnd by one,
            // exactly as one 4-packet ACK does.
            let credit = n as u64 + self.css_carry as u64;
            self.css_carry = (credit % CSS_GROWTH_DIVISOR as u64) as u32;
            (credit / CSS_GROWTH_DIVISOR as u64) as u32
        } else {
            n
        };
        tcp_slow_start_era(tp, inc, era)
    }

    /// The owner's `ssthresh` hook ran (loss, RTO, ECN/CWR): HyStart++ is
    /// over for this connection. The new ssthresh is the algorithm's own.
    //= https://www.rfc-editor.org/rfc/rfc9406#section-4.2
    //= type=exception
    //= reason=The core's loss recovery (tcp_input.c model) reacts to loss and ECN exactly as it does without HyStart++: it sets ssthresh from the algorithm's ssthresh hook (CUBIC beta, Reno halving) and runs PRR. This leaves slow start as the RFC asks, but with the normal multiplicative decrease rather than ssthresh = cwnd, so that HyStart++ changes only the slow-start exit being compared.
    //# If loss or Explicit Congestion Notification (ECN) marking is observed
    //# at any time during standard slow start or CSS, enter congestion
    //# avoidance by setting the ssthresh to the current cwnd.
    //#
    //# ssthresh = cwnd
    #[inline]
    pub fn on_congestion(&mut self) {
        self.phase = HystartPlusPlusPhase::Done;
        self.css_baseline_min_rtt = RTT_INFINITY;
        self.css_carry = 0;
    }
}

#[cfg(test)]
mod tests;
