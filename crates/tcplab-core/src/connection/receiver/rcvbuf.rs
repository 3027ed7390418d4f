//! The receive buffer: `sk_rcvbuf`, the memory charged against it
//! (`sk_rmem_alloc`), the payload share of that memory a window may
//! promise (`tp->scaling_ratio`, include/net/tcp.h `__tcp_win_from_space`),
//! and its autotuning from what the application reads per RTT (dynamic
//! right-sizing, tcp_input.c `tcp_rcv_space_adjust`).
//!
//! Payload is virtual, so memory is modelled: each segment costs its
//! [`truesize`], and collapsing copies data into page-sized skbs
//! ([`collapsed_truesize`]).

use crate::config::{RcvTruesize, TcpConfig};
use crate::time::Instant;
use tcplab_wire::SeqNum;

/// `TCP_RMEM_TO_WIN_SCALE` (include/net/tcp.h): `scaling_ratio` is in 1/256.
const TCP_RMEM_TO_WIN_SCALE: u32 = 8;
/// `TCP_DEFAULT_SCALING_RATIO`: "Assume a 50% default for
/// skb->len/skb->truesize ratio."
const TCP_DEFAULT_SCALING_RATIO: u8 = 1 << (TCP_RMEM_TO_WIN_SCALE - 1);
/// `SOCK_MIN_RCVBUF` = 2 · `TCP_SKB_MIN_TRUESIZE` (2048 + 256), bytes.
pub(super) const SOCK_MIN_RCVBUF: u32 = 4608;
/// `net.core.rmem_max` default (`SK_RMEM_MAX`), bytes: caps `SO_RCVBUF` and
/// takes part in the window-scale choice.
pub(super) const SYSCTL_RMEM_MAX: u32 = 212_992;
/// Per-skb memory overhead of the GRO truesize model, bytes (see [`truesize`]).
const TRUESIZE_SKB_OVERHEAD: u64 = 64;
/// Memory of one skb beyond its payload when each segment travels in its
/// own skb: the `sk_buff`, its shared info and the sender's header room
/// (`SKB_TRUESIZE` of the head `tcp_stream_alloc_skb` allocates; veth
/// hands the sender's skb to the receiver as it is). 896 bytes in the
/// kernel backend's 6.12 build, inferred from its receive-window-limited
/// goodput (docs/linux-differences.md): ratio 1448/2344 ≈ 0.62.
const PER_SEGMENT_SKB_OVERHEAD: u64 = 896;
/// `SKB_MAX_ORDER(0, 0)`: payload of one collapsed skb, bytes.
const COLLAPSE_CHUNK: u64 = 4096 - 320;

/// Modelled `skb->truesize` of a received segment with `len` payload bytes.
///
/// Linux charges each skb's real memory (`truesize`) against `sk_rcvbuf`
/// and advertises only the payload share of it (`scaling_ratio`, measured
/// as `len/truesize` in `tcp_measure_rcv_mss`). The model has no skbs.
/// With [`RcvTruesize::Gro`] it charges payload + 1/16 + 64 bytes, which
/// is what a GRO receive path achieves (ratio ≈ 0.90 for 1448-byte
/// segments, so `tcp_rmem[2]` = 6 MB advertises ≈ 5.4 MB) while small
/// segments still cost relatively more, as they do in Linux; with
/// [`RcvTruesize::PerSegment`], payload + [`PER_SEGMENT_SKB_OVERHEAD`].
#[inline]
pub(super) fn truesize(model: RcvTruesize, len: u32) -> u64 {
    match model {
        RcvTruesize::Gro => len as u64 + (len as u64 >> 4) + TRUESIZE_SKB_OVERHEAD,
        RcvTruesize::PerSegment => len as u64 + PER_SEGMENT_SKB_OVERHEAD,
    }
}

/// Truesize of `bytes` after `tcp_collapse` copied them into page-sized skbs.
#[inline]
pub(super) fn collapsed_truesize(bytes: u64) -> u64 {
    bytes + (bytes >> 4) + TRUESIZE_SKB_OVERHEAD * bytes.div_ceil(COLLAPSE_CHUNK).max(1)
}

/// `sk_rcvbuf` and the receive queue's memory, with the DRS state
/// (`tp->rcvq_space`). The out-of-order queue's memory is
/// [`OfoQueue`](super::ofo_queue::OfoQueue)'s; methods that need all of
/// `sk_rmem_alloc` take its share.
#[derive(Clone, Debug)]
pub(super) struct RcvBuf {
    /// What each received segment costs ([`truesize`]).
    truesize_model: RcvTruesize,
    /// ≥ v6.5: `tcp_win_from_space` uses the measured `scaling_ratio`;
    /// before, the fixed `tcp_adv_win_scale = 1` (half the buffer).
    measured_scaling_ratio: bool,
    /// `net.ipv4.tcp_rmem`.
    rmem: [u32; 3],
    /// `SOCK_RCVBUF_LOCK`: the application set `SO_RCVBUF`.
    locked: bool,
    /// `sk_rcvbuf`, bytes.
    pub(super) rcvbuf: u32,
    /// `tp->scaling_ratio`: payload share of truesize, in 1/256.
    scaling_ratio: u8,
    /// Truesize of the unread in-order data, bytes.
    pub(super) rcvq_truesize: u64,
    /// `rcvq_space.space`, bytes.
    space: u32,
    /// `rcvq_space.seq`.
    space_seq: SeqNum,
    /// `rcvq_space.time`.
    space_time: Instant,
}

impl RcvBuf {
    /// The buffer `cfg` gives a new socket: `tcp_rmem[1]`, or
    /// `setsockopt(SO_RCVBUF)` doubled, capped by `rmem_max` and locked.
    pub(super) fn new(cfg: &TcpConfig, measured_scaling_ratio: bool) -> RcvBuf {
        let rmem = [cfg.tcp_rmem[0], cfg.tcp_rmem[1].max(1), cfg.tcp_rmem[2].max(cfg.tcp_rmem[1]).max(1)];
        //= linux:v6.13:net/core/sock.c#__sock_set_rcvbuf
        let (rcvbuf, locked) = if cfg.so_rcvbuf > 0 {
            (cfg.so_rcvbuf.min(SYSCTL_RMEM_MAX).saturating_mul(2).max(SOCK_MIN_RCVBUF), true)
        } else {
            (rmem[1], false)
        };
        RcvBuf {
            truesize_model: cfg.rcv_truesize,
            measured_scaling_ratio,
            rmem,
            locked,
            rcvbuf,
            scaling_ratio: TCP_DEFAULT_SCALING_RATIO,
            rcvq_truesize: 0,
            space: 0,
            space_seq: SeqNum(0),
            space_time: Instant::ZERO,
        }
    }

    /// `SOCK_RCVBUF_LOCK`.
    pub(super) fn locked(&self) -> bool {
        self.locked
    }

    /// `tcp_rmem[2]`: the most autotuning may grow the buffer to.
    pub(super) fn rmem_max(&self) -> u32 {
        self.rmem[2]
    }

    /// `sk_rmem_alloc`: truesize of everything queued, given the
    /// out-of-order queue's share, bytes.
    pub(super) fn rmem_alloc(&self, ofo_truesize: u64) -> u64 {
        self.rcvq_truesize + ofo_truesize
    }

    /// `__tcp_win_from_space`: the payload share of `space` bytes of
    /// buffer (`tcp_adv_win_scale = 1` before v6.5).
    pub(super) fn win_from_space(&self, space: i64) -> i64 {
        //= linux:v6.13:include/net/tcp.h#__tcp_win_from_space
        if self.measured_scaling_ratio {
            (space * self.scaling_ratio as i64) >> TCP_RMEM_TO_WIN_SCALE
        } else {
            space - (space >> 1)
        }
    }

    /// `__tcp_space_from_win`: the buffer that holds a `win`-byte window.
    fn space_from_win(&self, win: u64) -> u64 {
        //= linux:v6.13:include/net/tcp.h#__tcp_space_from_win
        if self.measured_scaling_ratio {
            (win << TCP_RMEM_TO_WIN_SCALE) / (self.scaling_ratio.max(1) as u64)
        } else {
            win.saturating_mul(2)
        }
    }

    /// `tcp_space`: window the free buffer could hold (may be negative).
    pub(super) fn tcp_space(&self, ofo_truesize: u64) -> i64 {
        //= linux:v6.13:include/net/tcp.h#tcp_space
        let free = self.rcvbuf as i64 - self.rmem_alloc(ofo_truesize).min(i64::MAX as u64 / 2) as i64;
        self.win_from_space(free)
    }

    /// `skb->truesize` of a received segment of `len` bytes, as this
    /// receive path charges it.
    #[inline]
    pub(super) fn truesize(&self, len: u32) -> u64 {
        truesize(self.truesize_model, len)
    }

    /// `tcp_full_space`: window an empty buffer holds.
    pub(super) fn full_space(&self) -> i64 {
        //= linux:v6.13:include/net/tcp.h#tcp_full_space
        self.win_from_space(self.rcvbuf as i64)
    }

    /// The `scaling_ratio` part of `tcp_measure_rcv_mss` (≥ v6.5): a
    /// full-sized segment of `len` bytes measures `len/truesize`. Returns
    /// whether the ratio changed (then the window clamp follows).
    pub(super) fn measure_scaling_ratio(&mut self, len: u32) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_measure_rcv_mss
        if !self.measured_scaling_ratio {
            return false;
        }
        let val = ((len as u64) << TCP_RMEM_TO_WIN_SCALE) / self.truesize(len).max(1);
        let old = self.scaling_ratio;
        self.scaling_ratio = val.clamp(1, u8::MAX as u64) as u8;
        old != self.scaling_ratio
    }

    /// The DRS baseline never exceeds the window clamp (`tcp_measure_rcv_mss`).
    pub(super) fn cap_space(&mut self, window_clamp: u32) {
        if window_clamp < self.space {
            self.space = window_clamp;
        }
    }

    /// The handshake fixed the first sequence number the application reads.
    pub(super) fn on_syn(&mut self, copied_seq: SeqNum) {
        self.space_seq = copied_seq;
    }

    /// `tcp_init_buffer_space`: the first DRS round starts now, from
    /// `space` bytes.
    pub(super) fn init_space(&mut self, now: Instant, copied_seq: SeqNum, space: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_init_buffer_space
        self.space_time = now;
        self.space_seq = copied_seq;
        self.space = space;
    }

    /// The application read, leaving `unread` of `before` bytes: release
    /// memory, whole skbs when drained, else pro rata.
    pub(super) fn on_read(&mut self, before: u64, unread: u64) {
        self.rcvq_truesize =
            if unread == 0 { 0 } else { (self.rcvq_truesize as u128 * unread as u128 / before as u128) as u64 };
    }

    /// The receive-queue half of `tcp_collapse`: `unread` bytes copied into
    /// page-sized skbs.
    pub(super) fn collapse(&mut self, unread: u64) {
        if unread > 0 {
            self.rcvq_truesize = self.rcvq_truesize.min(collapsed_truesize(unread));
        }
    }

    /// The buffer half of `tcp_clamp_window`: with `rmem` bytes allocated,
    /// grow `sk_rcvbuf` towards it, up to `tcp_rmem[2]`, unless locked.
    pub(super) fn clamp(&mut self, rmem: u32) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_clamp_window
        if self.rcvbuf < self.rmem[2] && !self.locked {
            self.rcvbuf = rmem.min(self.rmem[2]).max(self.rcvbuf);
        }
    }

    /// `tcp_rcv_space_adjust` (DRS): once per receiver RTT (`rcv_rtt8`, µs
    /// << 3; 0 = unknown), size `sk_rcvbuf` for twice what the application
    /// read in the last RTT plus slow-start growth, up to `tcp_rmem[2]`:
    /// "To cope with packet losses, we need a 2x factor. To cope with slow
    /// start ... we need a 4x factor". Returns the new window clamp when
    /// the buffer grew ("Make the window clamp follow along").
    pub(super) fn space_adjust(&mut self, now: Instant, copied_seq: SeqNum, rcv_rtt8: u32, advmss: u32) -> Option<u32> {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_rcv_space_adjust
        let time_us = now.saturating_since(self.space_time).as_micros();
        if rcv_rtt8 == 0 || time_us < (rcv_rtt8 >> 3) as u64 {
            return None;
        }
        let mut clamp = None;
        let copied = copied_seq - self.space_seq;
        if copied > self.space {
            if !self.locked {
                let space = self.space.max(1) as u128;
                let mut rcvwin = ((copied as u128) << 1) + 16 * advmss as u128;
                let grow = rcvwin * (copied as u128 - space) / space;
                rcvwin += grow << 1;
                let rcvwin = rcvwin.min(u64::MAX as u128 >> 16) as u64;
                let rcvbuf = self.space_from_win(rcvwin).min(self.rmem[2] as u64) as u32;
                if rcvbuf > self.rcvbuf {
                    self.rcvbuf = rcvbuf;
                    clamp = Some(self.win_from_space(rcvbuf as i64).max(0) as u32);
                }
            }
            self.space = copied;
        }
        self.space_seq = copied_seq;
        self.space_time = now;
        clamp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_scaling_ratio_follows_the_receive_paths_truesize() {
        // tcp_measure_rcv_mss on a 1,448-byte segment: (1448 << 8) / truesize.
        for (model, truesize, ratio) in [(RcvTruesize::Gro, 1448 + 90 + 64, 231), (RcvTruesize::PerSegment, 2344, 158)]
        {
            let cfg = TcpConfig { rcv_truesize: model, ..TcpConfig::default() };
            let mut buf = RcvBuf::new(&cfg, true);
            assert_eq!(buf.truesize(1448), truesize);
            assert!(buf.measure_scaling_ratio(1448));
            assert_eq!(buf.scaling_ratio, ratio, "{model:?}");
            // A window from a 128 KB buffer: the payload share of it.
            assert_eq!(buf.win_from_space(131_072), (131_072 * ratio as i64) >> 8);
        }
    }
}
