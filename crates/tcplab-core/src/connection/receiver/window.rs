//! The receive window: what we offer the peer and how it opens up
//! (tcp_output.c `tcp_select_initial_window`, `__tcp_select_window`,
//! `tcp_select_window`; tcp_input.c `tcp_grow_window`,
//! `tcp_init_buffer_space`; tcp.c `tcp_set_window_clamp`).
//!
//! The window promises buffer space, so Linux sizes it from the free
//! buffer ([`RcvBuf`]), holds its growth to `rcv_ssthresh` until segments
//! prove to use memory efficiently, caps it at `window_clamp`, and never
//! shrinks an offered window.

use super::rcvbuf::{RcvBuf, SYSCTL_RMEM_MAX};
use crate::connection::negotiated::TCP_MAX_WSCALE;
use tcplab_wire::SeqNum;

/// `sysctl_tcp_app_win` default: part of the buffer kept for the application.
const TCP_APP_WIN: u32 = 31;
/// `TCP_INIT_CWND`: `tcp_init_buffer_space` sizes the first DRS round to it.
const TCP_INIT_CWND: u32 = 10;

/// The window state of `struct tcp_sock` (`rcv_wnd`, `rcv_wup`,
/// `window_clamp`, `rcv_ssthresh`) and the window-scale choice
/// (`rx_opt.rcv_wscale`, `rx_opt.wscale_ok`).
#[derive(Clone, Debug)]
pub(super) struct RcvWindow {
    /// Window last advertised, bytes (unscaled).
    pub(super) rcv_wnd: u32,
    /// `rcv_nxt` when the window was last advertised.
    pub(super) rcv_wup: SeqNum,
    /// Largest window we will advertise, bytes.
    pub(super) window_clamp: u32,
    /// Window growth limit while the flow ramps up (`tcp_grow_window`), bytes.
    pub(super) rcv_ssthresh: u32,
    /// Our window-scale shift (`rx_opt.rcv_wscale`).
    pub(super) rcv_wscale: u8,
    /// We scale our window (`rx_opt.wscale_ok`).
    pub(super) wscale_ok: bool,
}

impl RcvWindow {
    pub(super) fn new(wscale_ok: bool) -> RcvWindow {
        RcvWindow { rcv_wnd: 0, rcv_wup: SeqNum(0), window_clamp: 0, rcv_ssthresh: 0, rcv_wscale: 0, wscale_ok }
    }

    /// `tcp_select_initial_window`: the window and window-scale shift to
    /// offer in the SYN or SYN-ACK, from the buffer `space` (bytes), the
    /// MSS the peer will use, and the clamp (0 = none).
    ///
    /// Current kernels offer `space` rounded down to a whole number of MSS,
    /// at most 65535 (the SYN's window field is never scaled), and pick the
    /// shift from the largest buffer autotuning could reach
    /// (max(`tcp_rmem[2]`, `rmem_max`)). ≤ v5.3 the window is also capped
    /// at `init_rwnd_segs` segments (`tcp_default_init_rwnd`; 0 = no cap).
    pub(super) fn select_initial(
        &mut self,
        space: u32,
        mss: u32,
        clamp: u32,
        wscale_ok: bool,
        rmem_max: u32,
        init_rwnd_segs: u32,
    ) {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_select_initial_window
        let mss = mss.max(1);
        let mut clamp = if clamp == 0 { (u16::MAX as u32) << TCP_MAX_WSCALE } else { clamp };
        let mut space = space.min(clamp);
        if space > mss {
            space = space / mss * mss;
        }
        let mut rcv_wnd = space.min(u16::MAX as u32);
        // ≤ v5.3: tcp_default_init_rwnd (2·TCP_INIT_CWND, fewer above 1460).
        if init_rwnd_segs > 0 {
            let mut segs = init_rwnd_segs;
            if mss > 1460 {
                segs = (1460 * segs / mss).max(2);
            }
            rcv_wnd = rcv_wnd.min(segs.saturating_mul(mss));
        }
        let mut wscale = 0u8;
        if wscale_ok {
            let s = space.max(rmem_max).max(SYSCTL_RMEM_MAX).min(clamp);
            let log2 = if s == 0 { 0 } else { 31 - s.leading_zeros() };
            wscale = log2.saturating_sub(15).min(TCP_MAX_WSCALE as u32) as u8;
        }
        clamp = clamp.min((u16::MAX as u32) << wscale);
        self.rcv_wnd = rcv_wnd;
        self.rcv_ssthresh = rcv_wnd;
        self.window_clamp = clamp;
        self.rcv_wscale = wscale;
        self.wscale_ok = wscale_ok;
    }

    /// The window half of `tcp_init_buffer_space`: fix `window_clamp` below
    /// the buffer's window `maxwin`, keeping one segment and
    /// `1/2^tcp_app_win` for the application. Returns the first DRS round's
    /// size.
    pub(super) fn init_buffer_space(&mut self, maxwin: u32, advmss: u32) -> u32 {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_init_buffer_space
        if self.window_clamp >= maxwin {
            self.window_clamp = maxwin;
            if maxwin > 4 * advmss {
                self.window_clamp = (maxwin - (maxwin >> TCP_APP_WIN)).max(4 * advmss);
            }
        }
        // "Force reservation of one segment."
        if self.window_clamp > 2 * advmss && self.window_clamp.saturating_add(advmss) > maxwin {
            self.window_clamp = (2 * advmss).max(maxwin.saturating_sub(advmss));
        }
        self.rcv_ssthresh = self.rcv_ssthresh.min(self.window_clamp);
        self.rcv_ssthresh.min(self.rcv_wnd).min(TCP_INIT_CWND * advmss).max(1)
    }

    /// `tcp_grow_window` for a segment of `len` payload bytes and `ts`
    /// truesize: raise `rcv_ssthresh` while segments use the buffer
    /// efficiently ("Increase window, if skb with such overhead will fit to
    /// rcvbuf in future"). ≥ v5.x (`room_rule`) grow by
    /// max(2·advmss, 2·len) bounded by the room left; before, by 2·advmss up
    /// to `window_clamp`. Returns whether the window grew, which earns a
    /// quick ACK so that the peer hears of it at once.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn grow(
        &mut self,
        len: u32,
        ts: u64,
        buf: &RcvBuf,
        ofo_truesize: u64,
        advmss: u32,
        rcv_mss: u32,
        room_rule: bool,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_grow_window
        let tcp_space = buf.tcp_space(ofo_truesize);
        if room_rule {
            let room = (self.window_clamp as i64).min(tcp_space) - self.rcv_ssthresh as i64;
            if room <= 0 {
                return false;
            }
            let mut incr = if buf.win_from_space(ts as i64) <= len as i64 {
                2 * advmss as i64
            } else {
                self.grow_slow(len, ts, buf, rcv_mss)
            };
            if incr > 0 {
                incr = incr.max(2 * len as i64);
                self.rcv_ssthresh = (self.rcv_ssthresh as i64 + incr.min(room)).clamp(0, u32::MAX as i64) as u32;
                return true;
            }
        } else if self.rcv_ssthresh < self.window_clamp && (self.rcv_ssthresh as i64) < tcp_space {
            let incr = if buf.win_from_space(ts as i64) <= len as i64 {
                2 * advmss as i64
            } else {
                self.grow_slow(len, ts, buf, rcv_mss)
            };
            if incr > 0 {
                self.rcv_ssthresh = (self.rcv_ssthresh as i64 + incr).min(self.window_clamp as i64) as u32;
                return true;
            }
        }
        false
    }

    /// `__tcp_grow_window`, the slow part of check #2: a wasteful segment
    /// may still grow the window while `rcv_ssthresh` is small relative to
    /// `tcp_rmem[2]`.
    fn grow_slow(&self, len: u32, ts: u64, buf: &RcvBuf, rcv_mss: u32) -> i64 {
        //= linux:v6.13:net/ipv4/tcp_input.c#__tcp_grow_window
        let mut truesize = buf.win_from_space(ts as i64) >> 1;
        let mut window = buf.win_from_space(buf.rmem_max() as i64) >> 1;
        while self.rcv_ssthresh as i64 <= window {
            if truesize <= len as i64 {
                return 2 * rcv_mss as i64;
            }
            truesize >>= 1;
            window >>= 1;
        }
        0
    }

    /// `tcp_receive_window`: what is left of the window last advertised.
    pub(super) fn receive_window(&self, rcv_nxt: SeqNum) -> u32 {
        //= linux:v6.13:include/net/tcp.h#tcp_receive_window
        let win = (self.rcv_wup + self.rcv_wnd).diff(rcv_nxt);
        win.max(0) as u32
    }

    /// `__tcp_select_window`: the window the buffer allows now, bytes, from
    /// the free buffer's window `free_space` (`tcp_space`) and an empty
    /// one's `allowed_space` (`tcp_full_space`). Near-full buffers
    /// advertise zero rather than a sliver ("try to move to zero-window"),
    /// growth is held to `rcv_ssthresh`, and without window scaling the
    /// window is kept a multiple of the MSS. The flag says the buffer is
    /// under half free, where Linux also ends quick-ACK mode
    /// (`icsk_ack.quick = 0`).
    pub(super) fn select_raw(&self, rcv_mss: u32, mut free_space: i64, allowed_space: i64) -> (u32, bool) {
        //= linux:v6.13:net/ipv4/tcp_output.c#__tcp_select_window
        let mut mss = rcv_mss as i64;
        let full_space = (self.window_clamp as i64).min(allowed_space);
        let wscale = self.rcv_wscale.min(TCP_MAX_WSCALE) as u32;
        if mss > full_space {
            mss = full_space;
            if mss <= 0 {
                return (0, false);
            }
        }
        let short = free_space < (full_space >> 1);
        if short {
            // "free_space might become our new window, make sure we don't
            // increase it due to wscale."
            free_space &= !((1i64 << wscale) - 1);
            if free_space < (allowed_space >> 4) || free_space < mss {
                return (0, true);
            }
        }
        if free_space > self.rcv_ssthresh as i64 {
            free_space = self.rcv_ssthresh as i64;
        }
        let window = if wscale > 0 {
            // "Advertise enough space so that it won't get scaled away."
            let unit = 1i64 << wscale;
            (free_space + unit - 1) & !(unit - 1)
        } else {
            let mut window = self.rcv_wnd as i64;
            if window <= free_space - mss || window > free_space {
                window = if mss > 0 { free_space / mss * mss } else { free_space };
            } else if mss == full_space && free_space > window + (full_space >> 1) {
                window = free_space;
            }
            window
        };
        (window.clamp(0, u32::MAX as i64) as u32, short)
    }

    /// `tcp_select_window` given `__tcp_select_window`'s `new_win`: never
    /// shrink the window already offered ("Never shrink the offered
    /// window"), record it as `rcv_wnd`/`rcv_wup`, and scale it for the
    /// header.
    pub(super) fn select(&mut self, rcv_nxt: SeqNum, new_win: u32) -> u16 {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_select_window
        let cur_win = self.receive_window(rcv_nxt) as u64;
        let mut new_win = new_win as u64;
        let wscale = self.rcv_wscale.min(TCP_MAX_WSCALE) as u32;
        if new_win < cur_win {
            let unit = 1u64 << wscale;
            new_win = (cur_win + unit - 1) & !(unit - 1);
        }
        self.rcv_wnd = new_win.min(u32::MAX as u64) as u32;
        self.rcv_wup = rcv_nxt;
        let new_win = new_win.min((u16::MAX as u64) << wscale);
        (new_win >> wscale) as u16
    }
}
