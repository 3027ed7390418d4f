//! The receiver's memory and window: `sk_rmem_alloc` against the receive
//! buffer, pruning, and the advertised window (`__tcp_select_window`,
//! `tcp_select_window`). Split from receiver.rs; same `Receiver`.

use super::*;

impl Receiver {
    // ------------------------------------------------------------------
    // Receive memory
    // ------------------------------------------------------------------

    /// `sk_rmem_alloc`: truesize of everything queued, bytes.
    pub(super) fn rmem_alloc(&self) -> u64 {
        self.buf.rmem_alloc(self.ofo.truesize())
    }

    /// `tcp_try_rmem_schedule`: is there room to queue `size` more bytes of
    /// truesize? Over `sk_rcvbuf`, `tcp_prune_queue` first.
    pub(super) fn try_rmem_schedule(&mut self, in_seq: SeqNum, size: u64, mib: &mut Counters) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_try_rmem_schedule
        let _ = size;
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        self.prune_queue(in_seq, mib)
    }

    /// `tcp_prune_queue`: raise the buffer if autotuning may
    /// (`tcp_clamp_window`), collapse the queues, then drop out-of-order
    /// data from the top. Returns whether memory is within `sk_rcvbuf`.
    pub(super) fn prune_queue(&mut self, in_seq: SeqNum, mib: &mut Counters) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_prune_queue
        mib_add(mib, self.extra_mib.prune_called, 1);
        if self.rmem_alloc() >= self.buf.rcvbuf as u64 {
            self.clamp_window();
        }
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        // tcp_collapse_ofo_queue + tcp_collapse of the receive queue.
        self.ofo.collapse();
        self.buf.collapse(self.unread);
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        self.prune_ofo_queue(in_seq, mib);
        if self.rmem_alloc() <= self.buf.rcvbuf as u64 {
            return true;
        }
        mib_add(mib, self.extra_mib.rcv_pruned, 1);
        false
    }

    /// `tcp_clamp_window`: "Recalculate window clamp after socket hit its
    /// memory bounds."
    pub(super) fn clamp_window(&mut self) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_clamp_window
        self.delack.quick = 0;
        let rmem = self.rmem_alloc().min(u32::MAX as u64) as u32;
        self.buf.clamp(rmem);
        if rmem > self.buf.rcvbuf {
            self.rcv_ssthresh = self.window_clamp.min(2 * self.advmss);
        }
    }

    /// `tcp_prune_ofo_queue`: drop out-of-order ranges from the highest,
    /// stopping where the incoming segment would land last, and forget the
    /// SACK state.
    pub(super) fn prune_ofo_queue(&mut self, in_seq: SeqNum, mib: &mut Counters) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_prune_ofo_queue
        let pruned = self.ofo.prune(in_seq, self.buf.rcvbuf, self.buf.rcvq_truesize);
        if pruned {
            mib_add(mib, self.extra_mib.ofo_pruned, 1);
            if self.sack.ok {
                self.sack.reset();
            }
        }
    }

    // ------------------------------------------------------------------
    // Window selection
    // ------------------------------------------------------------------

    /// `tcp_receive_window`: what is left of the window last advertised.
    pub(super) fn receive_window(&self) -> u32 {
        //= linux:v6.13:include/net/tcp.h#tcp_receive_window
        let win = (self.rcv_wup + self.rcv_wnd).diff(self.rcv_nxt);
        win.max(0) as u32
    }

    /// `__tcp_select_window`: the window the buffer allows now, bytes.
    /// Near-full buffers advertise zero rather than a sliver ("try to move
    /// to zero-window"), growth is held to `rcv_ssthresh`, and without
    /// window scaling the window is kept a multiple of the MSS.
    pub(super) fn select_window_raw(&mut self) -> u32 {
        //= linux:v6.13:net/ipv4/tcp_output.c#__tcp_select_window
        let mut mss = self.rcv_mss as i64;
        let mut free_space = self.buf.tcp_space(self.ofo.truesize());
        let allowed_space = self.buf.full_space();
        let full_space = (self.window_clamp as i64).min(allowed_space);
        let wscale = self.rcv_wscale.min(TCP_MAX_WSCALE) as u32;
        if mss > full_space {
            mss = full_space;
            if mss <= 0 {
                return 0;
            }
        }
        if free_space < (full_space >> 1) {
            self.delack.quick = 0;
            // "free_space might become our new window, make sure we don't
            // increase it due to wscale."
            free_space &= !((1i64 << wscale) - 1);
            if free_space < (allowed_space >> 4) || free_space < mss {
                return 0;
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
        window.clamp(0, u32::MAX as i64) as u32
    }

    /// `tcp_select_window`: choose the window for an outgoing segment,
    /// never shrinking the one already offered, record it as
    /// `rcv_wnd`/`rcv_wup`, and scale it for the header.
    pub(super) fn select_window(&mut self) -> u16 {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_select_window
        let cur_win = self.receive_window() as u64;
        let mut new_win = self.select_window_raw() as u64;
        let wscale = self.rcv_wscale.min(TCP_MAX_WSCALE) as u32;
        if new_win < cur_win {
            // "Never shrink the offered window"
            let unit = 1u64 << wscale;
            new_win = (cur_win + unit - 1) & !(unit - 1);
        }
        self.rcv_wnd = new_win.min(u32::MAX as u64) as u32;
        self.rcv_wup = self.rcv_nxt;
        let new_win = new_win.min((u16::MAX as u64) << wscale);
        (new_win >> wscale) as u16
    }
}
