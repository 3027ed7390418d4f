//! RTT estimation and the retransmission timeout, as Linux 6.13 computes
//! them: `tcp_rtt_estimator`, `tcp_set_rto` (`__tcp_set_rto`,
//! `tcp_bound_rto`) in net/ipv4/tcp_input.c and include/net/tcp.h, the RTO
//! backoff of `tcp_retransmit_timer` (net/ipv4/tcp_timer.c), and the jiffies
//! conversions of include/linux/jiffies.h.
//!
//! `//= linux:v6.13:net/ipv4/tcp_input.c#tcp_rtt_estimator`
//!
//! # Fixed point and units
//!
//! Like `struct tcp_sock`, [`RttEstimator`] stores `srtt_us` as 8× the
//! smoothed RTT and `mdev_us`, `mdev_max_us`, `rttvar_us` as 4× the mean
//! deviation, all in µs, in `u32` fields. The RTO itself (`icsk_rto`) and
//! its floor (`icsk_rto_min`) are in jiffies of a configurable `HZ`, because
//! that is where Linux rounds: `usecs_to_jiffies` rounds up, so at HZ=250 a
//! 1 ms `tcp_rto_min_us` becomes one 4 ms jiffy, and the RTO is always a
//! whole number of jiffies.
//!
//! # What differs from RFC 6298
//!
//! Linux does not compute `RTO = max(RTO_min, SRTT + 4·RTTVAR)`. Its
//! `rttvar_us` is floored at `tcp_rto_min_us()` when it is (re)started, so
//! `RTO = srtt + rttvar ≥ srtt + rto_min` (200 ms by default). A falling
//! RTT grows `mdev` with gain 1/32 instead of 1/4, and `rttvar` is allowed
//! to decay only once per round trip (when `snd_una` passes `rtt_seq`),
//! by a quarter of its distance to the largest `mdev` of that round.
//!
//! # Arithmetic contract
//!
//! Every operation reproduces the kernel's C integer semantics on LP64
//! with `-fno-strict-overflow`: `long` (i64) sample arithmetic, `u32`
//! fields that wrap on store, wrapping sequence comparisons. For example
//! `(srtt_us >> 3) + rttvar_us` is a `u32` sum in `__tcp_set_rto` and
//! wraps for absurd inputs exactly as the kernel's does. Nothing here
//! panics on any input; `hz = 0` is treated as 1.
//!
//! Checked against every row of
//! shared/conformance/linux-vectors/rtt_rto_v6.13.7.csv (tests/vectors_rtt_prr.rs).

use crate::time::Duration;
use tcplab_wire::SeqNum;

/// Microseconds per second (`USEC_PER_SEC`).
const USEC_PER_SEC: u64 = 1_000_000;

/// `TCP_RTO_MAX` in seconds: the RTO never exceeds 120 s.
pub const TCP_RTO_MAX_SECS: u32 = 120;
/// `TCP_TIMEOUT_INIT` in seconds: the RTO before any RTT sample (RFC 6298).
pub const TCP_TIMEOUT_INIT_SECS: u32 = 1;
/// `TCP_TIMEOUT_FALLBACK` in seconds: the RTO when the handshake gave no
/// valid RTT sample (RFC 6298 §5.7).
pub const TCP_TIMEOUT_FALLBACK_SECS: u32 = 3;
/// Default of `net.ipv4.tcp_rto_min_us`: `TCP_RTO_MIN` = HZ/5 = 200 ms.
pub const TCP_RTO_MIN_US_DEFAULT: u32 = 200_000;

/// `TCP_RTO_MAX` (include/net/tcp.h) in jiffies: `120·HZ`.
#[doc(alias = "TCP_RTO_MAX")]
#[inline]
pub const fn tcp_rto_max(hz: u32) -> u32 {
    TCP_RTO_MAX_SECS.saturating_mul(hz)
}

/// `TCP_TIMEOUT_INIT` (include/net/tcp.h) in jiffies: `1·HZ`.
#[doc(alias = "TCP_TIMEOUT_INIT")]
#[inline]
pub const fn tcp_timeout_init(hz: u32) -> u32 {
    TCP_TIMEOUT_INIT_SECS.saturating_mul(hz)
}

/// `TCP_DELACK_MAX` (include/net/tcp.h) in jiffies: `HZ/5` (200 ms), at
/// least one.
#[doc(alias = "TCP_DELACK_MAX")]
#[inline]
pub const fn tcp_delack_max(hz: u32) -> u32 {
    if hz >= 5 {
        hz / 5
    } else {
        1
    }
}

/// `TCP_TIMEOUT_FALLBACK` (include/net/tcp.h) in jiffies: `3·HZ`.
#[doc(alias = "TCP_TIMEOUT_FALLBACK")]
#[inline]
pub const fn tcp_timeout_fallback(hz: u32) -> u32 {
    TCP_TIMEOUT_FALLBACK_SECS.saturating_mul(hz)
}

#[inline]
const fn sane_hz(hz: u32) -> u64 {
    if hz == 0 {
        1
    } else {
        hz as u64
    }
}

/// `MAX_JIFFY_OFFSET` (include/linux/jiffies.h) on a 64-bit kernel:
/// `((LONG_MAX >> 1) - 1)`, what the conversions return for a time too
/// long to be a jiffies offset.
pub const MAX_JIFFY_OFFSET: u64 = ((i64::MAX >> 1) - 1) as u64;

/// `usecs_to_jiffies(u)` (include/linux/jiffies.h; for a run-time `u` it
/// is `__usecs_to_jiffies`, kernel/time/time.c): rounds **up**, and gives
/// [`MAX_JIFFY_OFFSET`] for `u > jiffies_to_usecs(MAX_JIFFY_OFFSET)`. That
/// bound is a u32-truncated product, just below 2^32 µs (4294965296 at
/// HZ=1000), so only inputs near `u32::MAX` are clamped.
///
/// The one conversion of the model (CUBIC, the RTO, RACK-TLP, the
/// receiver). Call sites where the clamp would change what the model did
/// use [`usecs_to_jiffies_unclamped`] and say why.
///
/// For an `HZ` that does not divide 10^6 (300) no clamp is applied: the
/// kernel's bound there comes from `HZ_TO_USEC_NUM/DEN` arithmetic that
/// the model does not reproduce.
//= linux:v6.13:kernel/time/time.c#__usecs_to_jiffies
pub const fn usecs_to_jiffies(u: u32, hz: u32) -> u64 {
    let h = sane_hz(hz);
    // `!(USEC_PER_SEC % HZ)`: the kernel's branch for an HZ dividing 10^6.
    let divides = (USEC_PER_SEC / h) * h == USEC_PER_SEC;
    if divides && u > jiffies_to_usecs(MAX_JIFFY_OFFSET, hz) {
        return MAX_JIFFY_OFFSET;
    }
    usecs_to_jiffies_unclamped(u, hz)
}

/// `_usecs_to_jiffies(u)` (include/linux/jiffies.h): the rounding of
/// [`usecs_to_jiffies`] without its `MAX_JIFFY_OFFSET` clamp.
///
/// For an `HZ` that divides 10^6 (1000, 250, 100, …) the kernel computes
/// `(u + USEC_PER_SEC/HZ - 1) / (USEC_PER_SEC/HZ)` in `unsigned long`; this
/// does the same in u64. For other `HZ` (e.g. 300) the kernel uses a
/// multiply-and-shift whose constants are generated to give the same
/// ceiling; here it is computed exactly.
#[doc(alias = "_usecs_to_jiffies")]
pub const fn usecs_to_jiffies_unclamped(u: u32, hz: u32) -> u64 {
    let hz = sane_hz(hz);
    let per = USEC_PER_SEC / hz;
    if per * hz == USEC_PER_SEC {
        // `(u + USEC_PER_SEC/HZ - 1) / (USEC_PER_SEC/HZ)`
        (u as u64).div_ceil(per)
    } else {
        (u as u64 * hz).div_ceil(USEC_PER_SEC)
    }
}

/// `msecs_to_jiffies(m)` (include/linux/jiffies.h, `__msecs_to_jiffies` in
/// kernel/time/time.c; the same in 3.x and 6.x): rounds up; an `m` that
/// is negative as an `int` gives [`MAX_JIFFY_OFFSET`].
//= linux:v6.13:kernel/time/time.c#__msecs_to_jiffies
pub const fn msecs_to_jiffies(m: u32, hz: u32) -> u64 {
    if (m as i32) < 0 {
        return MAX_JIFFY_OFFSET;
    }
    let hz = sane_hz(hz);
    if hz <= 1000 && 1000 % hz == 0 {
        // `(m + MSEC_PER_SEC/HZ - 1) / (MSEC_PER_SEC/HZ)`
        (m as u64).div_ceil(1000 / hz)
    } else {
        (m as u64 * hz).div_ceil(1000)
    }
}

/// `jiffies_to_usecs(j)` (kernel/time/time.c). Returns `unsigned int` like
/// the kernel, so the product is truncated to 32 bits.
pub const fn jiffies_to_usecs(j: u64, hz: u32) -> u32 {
    let hz = sane_hz(hz);
    let per = USEC_PER_SEC / hz;
    if per * hz == USEC_PER_SEC {
        per.wrapping_mul(j) as u32
    } else {
        (j.wrapping_mul(USEC_PER_SEC) / hz) as u32
    }
}

/// An exact virtual-time span of `j` jiffies.
pub fn jiffies_to_duration(j: u64, hz: u32) -> Duration {
    // On every ACK (the RTO and loss-probe timers).
    Duration::from_nanos(crate::time::mul_div(j, 1_000_000_000, sane_hz(hz), false))
}

/// The sender's RTT estimator and RTO: the `tcp_sock` fields `srtt_us`,
/// `mdev_us`, `mdev_max_us`, `rttvar_us`, `rtt_seq` and the
/// `inet_connection_sock` fields `icsk_rto`, `icsk_rto_min`,
/// `icsk_backoff`.
///
/// Calling protocol (what `tcp_ack_update_rtt` and the timers do):
/// - on an ACK with a valid sequence (or SACK, or timestamp) RTT sample,
///   call [`update`](Self::update) with `snd_una` and `snd_nxt` *after*
///   the ACK was applied; it runs the estimator, recomputes the RTO and
///   clears the backoff;
/// - arm the retransmission timer with [`rto`](Self::rto) (or, after
///   backoff, [`rto_backoff`](Self::rto_backoff) for the probe timer);
/// - when the RTO fires and the head was retransmitted, call
///   [`retransmit_timer_backoff`](Self::retransmit_timer_backoff).
///
/// The min-RTT filter is separate: [`crate::minmax::MinRttFilter`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct RttEstimator {
    /// Smoothed RTT ×8, µs (`tp->srtt_us`); 0 until the first sample.
    pub srtt_us: u32,
    /// Medium deviation ×4, µs (`tp->mdev_us`).
    pub mdev_us: u32,
    /// Maximal `mdev_us` of the last round trip, ×4 µs (`tp->mdev_max_us`).
    pub mdev_max_us: u32,
    /// Smoothed `mdev_max`, ×4 µs (`tp->rttvar_us`); the RTO adds it to srtt.
    pub rttvar_us: u32,
    /// `snd_nxt` when the current round trip of `rttvar` decay started
    /// (`tp->rtt_seq`).
    pub rtt_seq: SeqNum,
    /// Retransmission timeout, jiffies (`icsk->icsk_rto`).
    pub icsk_rto: u32,
    /// RTO floor, jiffies (`icsk->icsk_rto_min`):
    /// `usecs_to_jiffies(net.ipv4.tcp_rto_min_us)`.
    pub icsk_rto_min: u32,
    /// Number of unanswered RTO backoffs (`icsk->icsk_backoff`, `u8`).
    pub icsk_backoff: u8,
    hz: u32,
}

impl RttEstimator {
    /// The state `tcp_init_sock` sets up: no sample yet, RTO =
    /// `TCP_TIMEOUT_INIT` (1 s), `mdev_us` = 1 s in µs, `icsk_rto_min` =
    /// `usecs_to_jiffies(rto_min_us)`. `rto_min_us` is the sysctl
    /// `net.ipv4.tcp_rto_min_us` ([`TCP_RTO_MIN_US_DEFAULT`]). A route
    /// `rto_min` lock is not modelled.
    pub const fn new(hz: u32, rto_min_us: u32) -> RttEstimator {
        let hz = sane_hz(hz) as u32;
        RttEstimator {
            srtt_us: 0,
            mdev_us: jiffies_to_usecs(tcp_timeout_init(hz) as u64, hz),
            mdev_max_us: 0,
            rttvar_us: 0,
            rtt_seq: SeqNum(0),
            icsk_rto: tcp_timeout_init(hz),
            // `icsk_rto_min` is a u32 field holding an unsigned long.
            // Unclamped: the kernel's sysctl stops at INT_MAX µs, far below
            // the clamp, and the model keeps its result for larger values
            // (packetdrill's `tcp_rto_min_us` takes any u32).
            icsk_rto_min: usecs_to_jiffies_unclamped(rto_min_us, hz) as u32,
            icsk_backoff: 0,
            hz,
        }
    }

    /// The `HZ` the jiffies fields are counted in.
    #[inline]
    pub const fn hz(&self) -> u32 {
        self.hz
    }

    /// `tcp_rto_min(sk)`: the RTO floor in jiffies.
    #[doc(alias = "tcp_rto_min")]
    #[inline]
    pub const fn rto_min(&self) -> u32 {
        self.icsk_rto_min
    }

    /// `tcp_rto_min_us(sk)` = `jiffies_to_usecs(tcp_rto_min(sk))`: the floor
    /// of `rttvar_us`, rounded to whole jiffies (4000 µs for a 1 ms setting
    /// at HZ=250).
    #[doc(alias = "tcp_rto_min_us")]
    #[inline]
    pub const fn rto_min_us(&self) -> u32 {
        jiffies_to_usecs(self.icsk_rto_min as u64, self.hz)
    }

    /// `tcp_rtt_estimator(sk, mrtt_us)`: fold one RTT sample (µs, `long`)
    /// into `srtt_us`/`mdev_us`/`mdev_max_us`/`rttvar_us`. `snd_una` and
    /// `snd_nxt` are the sender's values at the call; they decide when a
    /// round trip of `rttvar` tracking ends (`after(snd_una, rtt_seq)`).
    ///
    /// This is only the estimator; [`update`](Self::update) is what an ACK
    /// runs. The kernel does not check the sign of `mrtt_us` here (its
    /// caller does); neither does this, and a negative sample is processed
    /// with the same wrapping arithmetic.
    #[doc(alias = "tcp_rtt_estimator")]
    pub fn rtt_estimator(&mut self, mrtt_us: i64, snd_una: SeqNum, snd_nxt: SeqNum) {
        // `long m = mrtt_us; u32 srtt = tp->srtt_us;`
        let mut m: i64 = mrtt_us;
        let mut srtt: u32 = self.srtt_us;

        if srtt != 0 {
            // Jacobson's estimator (SIGCOMM '88), in the kernel's form: m
            // becomes the error of the sample against srtt/8, and srtt
            // absorbs 1/8 of it (srtt is kept ×8).
            m = m.wrapping_sub((srtt >> 3) as i64);
            srtt = (srtt as i64).wrapping_add(m) as u32;
            if m < 0 {
                // RTT fell: |err| − mdev/4, and if that is positive take
                // only 1/8 of it. A falling RTT thus moves mdev with gain
                // 1/32 rather than 1/4 (an Eifel-like damping: the RTO does
                // not grow because the RTT dropped, nor collapse quickly).
                m = m.wrapping_neg();
                m = m.wrapping_sub((self.mdev_us >> 2) as i64);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m = m.wrapping_sub((self.mdev_us >> 2) as i64);
            }
            // mdev = 3/4 mdev + 1/4 |err| (u32 field, wraps on store).
            self.mdev_us = (self.mdev_us as i64).wrapping_add(m) as u32;
            if self.mdev_us > self.mdev_max_us {
                self.mdev_max_us = self.mdev_us;
                // rttvar rises at once ...
                if self.mdev_max_us > self.rttvar_us {
                    self.rttvar_us = self.mdev_max_us;
                }
            }
            // ... but decays only once per round trip, by a quarter of the
            // way to this round's largest mdev; then a new round starts at
            // the floor.
            if snd_una.after(self.rtt_seq) {
                if self.mdev_max_us < self.rttvar_us {
                    self.rttvar_us = self.rttvar_us.wrapping_sub((self.rttvar_us - self.mdev_max_us) >> 2);
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max_us = self.rto_min_us();
            }
        } else {
            // First sample: srtt = m, mdev = m/2 (×4 → m<<1), so that the
            // first RTO is about 3·RTT; rttvar starts at the floor.
            srtt = m.wrapping_shl(3) as u32;
            self.mdev_us = m.wrapping_shl(1) as u32;
            self.rttvar_us = self.mdev_us.max(self.rto_min_us());
            self.mdev_max_us = self.rttvar_us;
            self.rtt_seq = snd_nxt;
        }
        // srtt_us == 0 means "no sample"; a 0 µs RTT is stored as 1.
        self.srtt_us = srtt.max(1);
    }

    /// `__tcp_set_rto(tp)`: `usecs_to_jiffies(srtt/8 + rttvar)`, the RTO in
    /// jiffies before `tcp_bound_rto`. The sum is a `u32` sum, as in the
    /// kernel; a sum past the clamp gives `MAX_JIFFY_OFFSET`, which every
    /// caller bounds to `TCP_RTO_MAX` as it did the unclamped value.
    #[doc(alias = "__tcp_set_rto")]
    pub const fn compute_rto(&self) -> u64 {
        usecs_to_jiffies((self.srtt_us >> 3).wrapping_add(self.rttvar_us), self.hz)
    }

    /// `tcp_set_rto(sk)`: `icsk_rto = __tcp_set_rto(tp)`, then
    /// `tcp_bound_rto` caps it at `TCP_RTO_MAX`.
    ///
    /// RFC 6298 makes the RTO srtt + 4·rttvar with a floor of 1 s; Linux
    /// uses srtt + rttvar where rttvar (already ×4) never starts below
    /// `tcp_rto_min_us`, so no separate floor is applied here.
    #[doc(alias = "tcp_set_rto")]
    pub fn set_rto(&mut self) {
        // `icsk_rto` is u32; the unsigned long result is truncated on store
        // (it cannot exceed 2^32 µs in jiffies anyway).
        self.icsk_rto = self.compute_rto() as u32;
        self.bound_rto();
    }

    /// `tcp_bound_rto(sk)`: cap `icsk_rto` at `TCP_RTO_MAX`.
    #[doc(alias = "tcp_bound_rto")]
    #[inline]
    pub fn bound_rto(&mut self) {
        let max = tcp_rto_max(self.hz);
        if self.icsk_rto > max {
            self.icsk_rto = max;
        }
    }

    /// What `tcp_ack_update_rtt` does with a sequence RTT sample `mrtt_us`
    /// (v6.13): a negative sample means "none" and changes nothing (returns
    /// `false`); otherwise run [`rtt_estimator`](Self::rtt_estimator), then
    /// [`set_rto`](Self::set_rto), and clear `icsk_backoff` (RFC 6298: only
    /// a valid RTT measurement resets the backoff). Returns `true`.
    ///
    /// The caller updates the min-RTT filter with the ca RTT just before
    /// this, as the kernel does.
    #[doc(alias = "tcp_ack_update_rtt")]
    pub fn update(&mut self, mrtt_us: i64, snd_una: SeqNum, snd_nxt: SeqNum) -> bool {
        if mrtt_us < 0 {
            return false;
        }
        self.rtt_estimator(mrtt_us, snd_una, snd_nxt);
        self.set_rto();
        self.icsk_backoff = 0;
        true
    }

    /// [`rtt_estimator`](Self::rtt_estimator) then [`set_rto`](Self::set_rto),
    /// for a caller that keeps `icsk_backoff` itself and has already
    /// rejected negative samples (the middle of `tcp_ack_update_rtt`).
    pub fn estimate(&mut self, mrtt_us: i64, snd_una: SeqNum, snd_nxt: SeqNum) {
        self.rtt_estimator(mrtt_us, snd_una, snd_nxt);
        self.set_rto();
    }

    /// `tp->srtt_us` (8× smoothed RTT, µs; 0 = no sample yet).
    #[inline]
    pub const fn srtt_us(&self) -> u32 {
        self.srtt_us
    }

    /// `tp->mdev_us` (4× mean deviation, µs).
    #[inline]
    pub const fn mdev_us(&self) -> u32 {
        self.mdev_us
    }

    /// `inet_csk_rto_backoff(icsk, TCP_RTO_MAX)` with an explicit backoff
    /// count (for a caller that keeps `icsk_backoff` itself), as a span:
    /// `min(icsk_rto << backoff, TCP_RTO_MAX)` jiffies.
    pub fn rto_backed_off(&self, backoff: u8) -> Duration {
        let when = (self.icsk_rto as u64).wrapping_shl(backoff as u32);
        jiffies_to_duration(when.min(tcp_rto_max(self.hz) as u64), self.hz)
    }

    /// The no-sample branch of `tcp_init_metrics`: RTO =
    /// `TCP_TIMEOUT_FALLBACK` (3 s), `rttvar = mdev = mdev_max` = 3 s in µs.
    /// Does nothing once an RTT sample exists. Same as
    /// [`init_metrics(0)`](Self::init_metrics).
    pub fn set_fallback_rto(&mut self) {
        self.init_metrics(0);
    }

    /// `tcp_init_metrics` tail (net/ipv4/tcp_metrics.c) at the end of the
    /// handshake. `cached_srtt_us` is the destination cache's RTT in the
    /// `srtt_us` format (×8 µs), 0 when there is none (metrics off).
    ///
    /// - A cached RTT above the handshake's seeds only the first RTO:
    ///   `crtt + max(2·crtt, rto_min)` in jiffies; the estimator is kept.
    /// - With no handshake sample either (`srtt_us == 0`, e.g. the SYN was
    ///   retransmitted), RTO = `TCP_TIMEOUT_FALLBACK` (3 s) and
    ///   `rttvar = mdev = mdev_max` = 3 s in µs (RFC 6298 §5.7).
    #[doc(alias = "tcp_init_metrics")]
    pub fn init_metrics(&mut self, cached_srtt_us: u32) {
        if cached_srtt_us > self.srtt_us {
            // `crtt /= 8 * USEC_PER_SEC / HZ`: ×8 µs to jiffies.
            let per = (8 * USEC_PER_SEC / sane_hz(self.hz)).max(1) as u32;
            let crtt = cached_srtt_us / per;
            self.icsk_rto = crtt.wrapping_add(crtt.wrapping_mul(2).max(self.rto_min()));
        } else if self.srtt_us == 0 {
            self.rttvar_us = jiffies_to_usecs(tcp_timeout_fallback(self.hz) as u64, self.hz);
            self.mdev_us = self.rttvar_us;
            self.mdev_max_us = self.rttvar_us;
            self.icsk_rto = tcp_timeout_fallback(self.hz);
        }
    }

    /// The exponential backoff of `tcp_retransmit_timer` (net/ipv4/tcp_timer.c,
    /// v6.13) after the head was retransmitted: `icsk_backoff++` (a `u8`,
    /// wrapping) and `icsk_rto = min(icsk_rto << 1, TCP_RTO_MAX)`.
    ///
    /// The kernel skips both when the retransmission failed locally, and
    /// doubles nothing in two cases the caller must handle itself: thin
    /// streams with `tcp_thin_linear_timeouts` (backoff reset, RTO
    /// recomputed and clamped to `[rto_min, RTO_MAX]`) and `SYN_SENT` while
    /// `total_rto <= tcp_syn_linear_timeouts` [≥ v6.5] (RTO kept).
    /// See [`retransmit_timer_linear`](Self::retransmit_timer_linear).
    #[doc(alias = "tcp_retransmit_timer")]
    pub fn retransmit_timer_backoff(&mut self) {
        self.icsk_backoff = self.icsk_backoff.wrapping_add(1);
        self.backoff();
    }

    /// Only the RTO doubling of [`retransmit_timer_backoff`](Self::retransmit_timer_backoff)
    /// (`icsk_rto = min(icsk_rto << 1, TCP_RTO_MAX)`), for a caller that
    /// keeps its own `icsk_backoff` count.
    pub fn backoff(&mut self) {
        // `icsk_rto << 1` is a u32 shift: it drops the top bit.
        self.icsk_rto = (self.icsk_rto << 1).min(tcp_rto_max(self.hz));
    }

    /// The thin-stream linear timeout of `tcp_retransmit_timer`: backoff
    /// cleared and `icsk_rto = clamp(__tcp_set_rto(tp), tcp_rto_min,
    /// TCP_RTO_MAX)`.
    pub fn retransmit_timer_linear(&mut self) {
        self.icsk_backoff = 0;
        let rto = self.compute_rto() as u32;
        self.icsk_rto = rto.max(self.rto_min()).min(tcp_rto_max(self.hz));
    }

    /// `inet_csk_rto_backoff(icsk, max_when)` (include/net/inet_connection_sock.h):
    /// `min((u64)icsk_rto << icsk_backoff, max_when)`, the interval of the
    /// zero-window probe timer. Bits shifted out of the u64 are lost as in
    /// C; a shift count of 64 or more (undefined in C) is masked to 6 bits,
    /// which is what x86-64's `shl` does with the compiled kernel.
    #[doc(alias = "inet_csk_rto_backoff")]
    pub fn rto_backoff(&self, max_when: u32) -> u32 {
        let when = (self.icsk_rto as u64).wrapping_shl(self.icsk_backoff as u32);
        when.min(max_when as u64) as u32
    }

    /// Clears `icsk_backoff` (e.g. a valid RTT sample arrived by another
    /// path).
    #[inline]
    pub fn reset_backoff(&mut self) {
        self.icsk_backoff = 0;
    }

    /// The RTO in jiffies (`icsk_rto`).
    #[inline]
    pub const fn rto_jiffies(&self) -> u32 {
        self.icsk_rto
    }

    /// The RTO in µs as `tcp_info.tcpi_rto` reports it:
    /// `jiffies_to_usecs(icsk_rto)`.
    #[inline]
    pub const fn rto_us(&self) -> u32 {
        jiffies_to_usecs(self.icsk_rto as u64, self.hz)
    }

    /// The RTO as an exact virtual-time span (whole jiffies).
    #[inline]
    pub fn rto(&self) -> Duration {
        jiffies_to_duration(self.icsk_rto as u64, self.hz)
    }

    /// The smoothed RTT in µs, unscaled (`srtt_us >> 3`, `tcpi_rtt`); 0
    /// before the first sample.
    #[inline]
    pub const fn srtt_unscaled_us(&self) -> u32 {
        self.srtt_us >> 3
    }

    /// The smoothed RTT as a span (µs resolution).
    #[inline]
    pub fn srtt(&self) -> Duration {
        Duration::from_micros((self.srtt_us >> 3) as u64)
    }

    /// The mean deviation in µs, unscaled (`mdev_us >> 2`, `tcpi_rttvar`).
    #[inline]
    pub const fn rttvar_unscaled_us(&self) -> u32 {
        self.mdev_us >> 2
    }

    /// True once an RTT sample was taken (`srtt_us != 0`).
    #[inline]
    pub const fn has_sample(&self) -> bool {
        self.srtt_us != 0
    }
}

impl Default for RttEstimator {
    /// HZ=1000 and the default 200 ms `tcp_rto_min_us`.
    fn default() -> Self {
        RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // ---- Conversions ------------------------------------------------------

    #[test]
    fn test_jiffies_conversions_round_up_like_the_kernel() {
        assert_eq!(usecs_to_jiffies(200_000, 1000), 200);
        assert_eq!(usecs_to_jiffies(200_001, 1000), 201);
        assert_eq!(usecs_to_jiffies(1_000, 250), 1);
        assert_eq!(usecs_to_jiffies(0, 250), 0);
        // Past jiffies_to_usecs(MAX_JIFFY_OFFSET) the kernel clamps;
        // `_usecs_to_jiffies` alone does not.
        assert_eq!(usecs_to_jiffies_unclamped(u32::MAX, 1000), 4_294_968);
        assert_eq!(usecs_to_jiffies(4_294_965_296, 1000), 4_294_966);
        assert_eq!(usecs_to_jiffies(4_294_965_297, 1000), MAX_JIFFY_OFFSET);
        assert_eq!(usecs_to_jiffies(u32::MAX, 250), MAX_JIFFY_OFFSET);
        assert_eq!(usecs_to_jiffies(u32::MAX, 300), 1_288_491); // no clamp at HZ=300
        assert_eq!(msecs_to_jiffies(500, 250), 125);
        assert_eq!(msecs_to_jiffies(1, 250), 1);
        assert_eq!(msecs_to_jiffies(1, 300), 1);
        assert_eq!(msecs_to_jiffies(0x8000_0000, 1000), MAX_JIFFY_OFFSET);
        assert_eq!(usecs_to_jiffies(3_334, 300), 2);
        assert_eq!(jiffies_to_usecs(1, 250), 4_000);
        assert_eq!(jiffies_to_usecs(1, 300), 3_333);
        assert_eq!(usecs_to_jiffies(1, 0), 1);
        assert_eq!(jiffies_to_duration(3, 250), Duration::from_millis(12));
    }

    // ---- Initial state -----------------------------------------------------

    #[test]
    fn test_init_rto_is_one_second_and_rto_min_rounds_to_jiffies() {
        let e = RttEstimator::new(250, 1_000);
        assert_eq!(e.icsk_rto, 250);
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(e.rto_us(), 1_000_000);
        assert_eq!(e.icsk_rto_min, 1);
        assert_eq!(e.rto_min_us(), 4_000);
        assert_eq!(e.mdev_us, 1_000_000);
        assert!(!e.has_sample());
    }

    #[test]
    fn test_first_sample_sets_rto_to_srtt_plus_rto_min() {
        let mut e = RttEstimator::default();
        assert!(e.update(100_000, SeqNum(1000), SeqNum(15480)));
        assert_eq!(e.srtt_us, 800_000);
        assert_eq!(e.mdev_us, 200_000);
        assert_eq!(e.rttvar_us, 200_000);
        assert_eq!(e.rtt_seq, SeqNum(15480));
        assert_eq!(e.icsk_rto, 300);
        assert!(!e.update(-1, SeqNum(1000), SeqNum(15480)));
    }

    #[test]
    fn test_init_metrics_fallback_without_handshake_sample() {
        let mut e = RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT);
        e.init_metrics(0);
        assert_eq!(e.icsk_rto, 3000);
        assert_eq!(e.rttvar_us, 3_000_000);
        let mut e = RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT);
        e.init_metrics(8 * 50_000); // cached 50 ms
        assert_eq!(e.icsk_rto, 50 + 200);
    }

    // ---- RTO backoff -------------------------------------------------------

    #[test]
    fn test_rto_backoff_doubles_and_caps_at_rto_max() {
        let mut e = RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT);
        e.update(100_000, SeqNum(1000), SeqNum(2000)); // RTO 300 jiffies
        let mut expect = 300u32;
        for i in 1..=12u8 {
            e.retransmit_timer_backoff();
            expect = (expect * 2).min(120_000);
            assert_eq!(e.icsk_rto, expect, "after {i} backoffs");
            assert_eq!(e.icsk_backoff, i);
        }
        // 300 · 2^9 = 153600 > 120000: capped from the 9th backoff on.
        assert_eq!(e.icsk_rto, 120_000);
        assert_eq!(e.rto(), Duration::from_secs(120));
        // A valid sample resets the backoff and recomputes the RTO.
        e.update(100_000, SeqNum(1500), SeqNum(2500));
        assert_eq!(e.icsk_backoff, 0);
        assert!(e.icsk_rto < 1000);
    }

    #[test]
    fn test_rto_backoff_cap_at_hz250_and_probe_backoff() {
        let mut e = RttEstimator::new(250, TCP_RTO_MIN_US_DEFAULT);
        for _ in 0..20 {
            e.retransmit_timer_backoff();
        }
        assert_eq!(e.icsk_rto, 120 * 250);
        assert_eq!(e.icsk_backoff, 20);

        let mut e = RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT);
        e.icsk_backoff = 3;
        assert_eq!(e.rto_backoff(120_000), 8_000);
        e.icsk_backoff = 200; // undefined in C; x86 masks the count to 8
        assert_eq!(e.rto_backoff(120_000), 120_000);
        e.icsk_backoff = 255;
        e.retransmit_timer_backoff();
        assert_eq!(e.icsk_backoff, 0); // u8 wraps as in the kernel
    }

    #[test]
    fn test_thin_linear_timeout_clamps_to_rto_min() {
        let mut e = RttEstimator::new(1000, TCP_RTO_MIN_US_DEFAULT);
        e.srtt_us = 8;
        e.rttvar_us = 0;
        e.icsk_backoff = 4;
        e.retransmit_timer_linear();
        assert_eq!(e.icsk_rto, 200);
        assert_eq!(e.icsk_backoff, 0);
    }

    // ---- No panics ---------------------------------------------------------

    #[test]
    fn test_extreme_samples_do_not_panic() {
        let mut e = RttEstimator::new(0, u32::MAX);
        for m in [i64::MIN, -1, 0, 1, i64::MAX, u32::MAX as i64, 600_000_000] {
            e.rtt_estimator(m, SeqNum(u32::MAX), SeqNum(0));
            e.set_rto();
            assert!(e.icsk_rto <= tcp_rto_max(e.hz()));
            let _ = (e.rto(), e.rto_us(), e.srtt(), e.rto_backoff(u32::MAX));
        }
    }
}
