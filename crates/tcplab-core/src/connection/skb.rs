//! Linux skb boundaries on the send path: which wire segment carries PSH.
//!
//! The model puts one MSS on the wire per segment (no TSO/GSO packets), but
//! Linux decides PSH per *skb*, so the model keeps the skb structure that
//! decides it, and nothing more:
//!
//! - **The write queue** (`sk_write_queue`): unsent data as skbs with their
//!   `TCPHDR_PSH`/`FIN` flags and `eor` mark ([`WriteQueue`]). Application
//!   writes become skbs as `tcp_sendmsg_locked` builds them: the tail skb
//!   grows up to `size_goal` (`tcp_xmit_size_goal`); `tcp_mark_push` sets
//!   PSH on the tail at the end of a write (`tcp_push`), when it blocks
//!   (`wait_for_space`) and when more than half the peer's largest window
//!   was written since the last push (`forced_push`); a write's first bytes
//!   clear PSH on the skb they join. A full skb at the head is pushed at
//!   once (`tcp_push_one`), which may split it before the write goes on.
//!   Writes are queued by [`Connection::write`] and turned into skbs by the
//!   next `poll_transmit(now)` (same instant; it needs the time).
//! - **Transmission units**: `tcp_write_xmit` sends the head skb, or the
//!   front part `tso_fragment` splits off at the cwnd/window/TSO-autosize
//!   limit (`tcp_mss_split_point`); the front part loses PSH and FIN, the
//!   rest keeps them. `__tcp_transmit_skb` forces PSH on every skb of more
//!   than one segment ("to expedite GRO flush at receiver"), and GSO
//!   (`tcp_gso_segment`) leaves PSH/FIN only on the last wire segment. So a
//!   unit of n segments goes out as n MSS segments, the last one with PSH if
//!   n > 1 or the skb carried PSH. packetdrill joins consecutive segments and
//!   shows the last one's flags, so the model's segments match its view of a
//!   Linux TSO packet.
//! - **The retransmit queue** keeps one entry per MSS; [`SKB_END`] and
//!   [`SKB_PSH`] record where Linux's rtx skbs end and which carry PSH.
//!   A retransmission (`tcp_retransmit_skb`) sends up to `segs` segments of
//!   one skb; if it stops inside the skb, `tcp_fragment` splits it there (a
//!   new `skb_end` without PSH). The same PSH rule as for new data applies.
//!
//! Deliberately not modelled: `tcp_retrans_try_collapse` (merging sub-MSS
//! skbs on retransmission: the model's entries never merge), SACK-driven
//! merging of skbs (`tcp_shift_skb_data`; only SACKed skbs merge, which are
//! never retransmitted), page-fragment and `sk_wmem_schedule` limits inside
//! `tcp_sendmsg_locked`, TSQ (`tcp_small_queue_check`).
//!
//! [`SKB_END`]: super::rtx_queue::SKB_END
//! [`SKB_PSH`]: super::rtx_queue::SKB_PSH

use super::inline_deque::InlineDeque;
use super::receiver::TCP_MSS_DEFAULT;
use super::Connection;
use crate::rate::AppLimitedInput;
use crate::time::Instant;
use tcplab_wire::SeqNum;

/// `TCP_NAGLE_OFF` (include/net/tcp.h): `TCP_NODELAY`.
pub(super) const TCP_NAGLE_OFF: u8 = 1;
/// `TCP_NAGLE_CORK`.
pub(super) const TCP_NAGLE_CORK: u8 = 2;
/// `TCP_NAGLE_PUSH`: force out this time.
pub(super) const TCP_NAGLE_PUSH: u8 = 4;

/// `sk->sk_gso_max_size` for an IPv4 route over a device with the default
/// `gso_max_size` (`GSO_LEGACY_MAX_SIZE` = 65536): `sk_dst_gso_max_size`
/// subtracts `MAX_TCP_HEADER + 1` (x86-64: 320 + 1).
pub(super) const SK_GSO_MAX_SIZE: u32 = 65536 - (320 + 1);
/// `sk->sk_gso_max_segs` (`GSO_MAX_SEGS`).
pub(super) const SK_GSO_MAX_SEGS: u32 = 65535;
/// `SK_DEFAULT_PACING_SHIFT` (include/net/sock.h): TSO autosizing aims at
/// about 1 ms of data (`sk_pacing_rate >> 10`).
const SK_PACING_SHIFT: u32 = 10;

/// One unsent skb of the write queue. It starts where the previous one
/// ends (the head: at `snd_nxt`) and ends at `end_seq` (payload only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct WSkb {
    pub end_seq: SeqNum,
    /// `TCPHDR_PSH` in `TCP_SKB_CB(skb)->tcp_flags`.
    pub psh: bool,
    /// `TCP_SKB_CB(skb)->eor` (`MSG_EOR`): nothing may be appended or
    /// collapsed into it.
    pub eor: bool,
    /// `TCPHDR_FIN` (`tcp_send_fin` put the FIN on this skb).
    pub fin: bool,
}

/// A `send()` whose bytes are counted in `write_seq` but not yet in skbs.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SendCall {
    /// `write_seq` once this call's bytes are in skbs.
    pub end: SeqNum,
    /// `MSG_EOR`, and every byte of the call fitted.
    pub eor: bool,
    /// `MSG_MORE`: the final `tcp_push` neither marks PSH (unless
    /// `forced_push`) nor sends a partial segment (`TCP_NAGLE_CORK`).
    pub more: bool,
    /// The call found the send buffer full and returned short: Linux's
    /// `sendmsg` would push with `TCP_NAGLE_PUSH` and sleep (`wait_for_space`).
    pub partial: bool,
    /// Continues a call that returned short with bytes copied: its first
    /// bytes do not clear PSH (`copied` is not 0 in the kernel's loop).
    pub cont: bool,
}

/// `tp->chrono_type` values (`enum tcp_chrono`, include/linux/tcp.h).
pub(super) const TCP_CHRONO_UNSPEC: u8 = 0;
pub(super) const TCP_CHRONO_BUSY: u8 = 1;
pub(super) const TCP_CHRONO_RWND_LIMITED: u8 = 2;
pub(super) const TCP_CHRONO_SNDBUF_LIMITED: u8 = 3;

/// The send-side chrono stats behind `tcpi_busy_time`, `tcpi_rwnd_limited`
/// and `tcpi_sndbuf_limited` (tcp_output.c `tcp_chrono_start/stop`): the
/// time, in jiffies, spent in each state, one state at a time, a higher
/// one overriding a lower one.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Chrono {
    /// `tp->chrono_type`.
    pub ty: u8,
    /// `tp->chrono_start`, jiffies.
    pub start: u32,
    /// `tp->chrono_stat[type - 1]`, jiffies.
    pub stat: [u32; 3],
}

impl Chrono {
    /// `tcp_chrono_set`.
    fn set(&mut self, now: u32, ty: u8) {
        if self.ty > TCP_CHRONO_UNSPEC {
            let i = (self.ty - 1) as usize;
            self.stat[i] = self.stat[i].wrapping_add(now.wrapping_sub(self.start));
        }
        self.start = now;
        self.ty = ty;
    }

    /// `tcp_chrono_start`: a higher-priority state takes over.
    pub fn start(&mut self, now: u32, ty: u8) {
        if ty > self.ty {
            self.set(now, ty);
        }
    }

    /// `tcp_chrono_stop`: back to idle when both queues are empty, else
    /// from `ty` back to busy.
    pub fn stop(&mut self, now: u32, ty: u8, queues_empty: bool) {
        if queues_empty {
            self.set(now, TCP_CHRONO_UNSPEC);
        } else if ty == self.ty {
            self.set(now, TCP_CHRONO_BUSY);
        }
    }

    /// `tcp_get_info_chrono_stats`: (busy, rwnd-limited, sndbuf-limited)
    /// in µs; busy is the total of all three.
    pub fn info_us(&self, now: u32, hz: u32) -> (u64, u64, u64) {
        let mut s = [0u64; 3];
        let mut total = 0;
        for (i, v) in s.iter_mut().enumerate() {
            let mut j = self.stat[i] as u64;
            if self.ty as usize == i + 1 {
                j += now.wrapping_sub(self.start) as u64;
            }
            *v = j * (1_000_000 / hz.max(1) as u64);
            total += *v;
        }
        (total, s[1], s[2])
    }
}

/// The send-path state of `struct tcp_sock` / `struct sock` that the skb
/// model needs.
#[derive(Clone, Debug)]
pub(super) struct SendQueue {
    /// `sk_write_queue`: unsent skbs covering `snd_nxt .. built_seq`.
    pub wq: InlineDeque<WSkb>,
    /// Writes not yet turned into skbs.
    pub calls: InlineDeque<SendCall>,
    /// End of the data in skbs (the kernel's `write_seq` while `calls`
    /// is empty).
    pub built_seq: SeqNum,
    /// `tp->pushed_seq`: `write_seq` at the last `tcp_mark_push`.
    pub pushed_seq: SeqNum,
    /// `tp->gso_segs`: `tcp_xmit_size_goal`'s cached segments per skb.
    pub gso_segs: u32,
    /// A FIN is in the write queue (or was sent).
    pub fin_entailed: bool,
    /// The previous write returned short after copying something.
    pub partial: bool,
    /// Id of the first retransmit-queue entry committed to the wire (by
    /// `tcp_write_xmit`) but not yet handed out by `poll_transmit`; the
    /// entries from here to the queue's end go out in order.
    pub emit_next: u64,
    /// The segment `poll_transmit` last handed out is not the last of its
    /// (new-data) skb: GSO sends the rest right behind it.
    pub unit_continues: bool,
    /// Segments left of the retransmission (one skb) in progress, its
    /// size, and the id of its next entry.
    pub rtx_left: u32,
    pub rtx_len: u32,
    pub rtx_next_id: u64,
    /// `tp->tcp_wstamp_ns`: the last transmission of any segment.
    pub wstamp: Instant,
    /// An input happened since the last `tcp_write_xmit`: Linux pushes
    /// pending frames after every incoming segment, timer and write
    /// (`tcp_data_snd_check`), not on every `poll_transmit`.
    pub xmit_owed: bool,
    /// The call being built came from `send_msg_at`: `sendmsg` tests the
    /// send buffer at each new skb (stream_memory.rs).
    pub stream_memory_checked: bool,
    pub chrono: Chrono,
}

impl SendQueue {
    pub fn new(iss: SeqNum) -> SendQueue {
        SendQueue {
            wq: InlineDeque::Empty,
            calls: InlineDeque::Empty,
            built_seq: iss + 1,
            pushed_seq: iss + 1,
            gso_segs: 0,
            fin_entailed: false,
            partial: false,
            emit_next: 0,
            unit_continues: false,
            rtx_left: 0,
            rtx_len: 0,
            rtx_next_id: 0,
            wstamp: Instant::ZERO,
            xmit_owed: false,
            stream_memory_checked: false,
            chrono: Chrono::default(),
        }
    }

    /// Nothing unsent: the write queue is empty and no write is pending.
    #[inline]
    pub fn write_queue_empty(&self) -> bool {
        self.wq.is_empty() && self.calls.is_empty()
    }
}

/// `tcp_bound_to_half_wnd`: an skb never exceeds half the peer's largest
/// window ("making sure there are enough packets in the pipe for fast
/// recovery"), unless that window is tiny.
pub(super) fn bound_to_half_wnd(max_window: u32, pktsize: u32, tcp_header_len: u32) -> u32 {
    let cutoff = if max_window > TCP_MSS_DEFAULT { max_window >> 1 } else { max_window };
    if cutoff > 0 && pktsize > cutoff {
        cutoff.max(68u32.saturating_sub(tcp_header_len))
    } else {
        pktsize
    }
}

/// `tcp_tso_autosize`: segments per skb for about 1 ms of data at the
/// pacing rate (`sk_pacing_rate >> sk_pacing_shift`), plus a bonus for
/// tiny RTTs (`sk_gso_max_size >> (min_rtt_us >> tcp_tso_rtt_log)`), at
/// most `sk_gso_max_size`, at least `min_tso_segs`.
pub(super) fn tso_autosize(pacing_rate: u64, min_rtt_us: u32, mss: u32, min_tso_segs: u32, rtt_log: u32) -> u32 {
    let mut bytes = pacing_rate >> SK_PACING_SHIFT;
    let r = min_rtt_us.checked_shr(rtt_log).unwrap_or(u32::MAX);
    if r < 32 {
        bytes += (SK_GSO_MAX_SIZE >> r) as u64;
    }
    let bytes = bytes.min(SK_GSO_MAX_SIZE as u64);
    ((bytes / mss.max(1) as u64) as u32).max(min_tso_segs)
}

impl Connection {
    /// Length of write-queue skb `i` (payload bytes).
    pub(super) fn wq_len(&self, i: usize) -> u32 {
        let start = if i == 0 { self.snd_nxt } else { self.sq.wq[i - 1].end_seq };
        self.sq.wq.get(i).map_or(0, |s| s.end_seq - start)
    }

    /// `tcp_header_len`: 20 bytes plus the timestamp option.
    fn tcp_header_len(&self) -> u32 {
        20 + self.negotiated.options_len()
    }

    /// `tcp_xmit_size_goal`: how big `sendmsg` builds an skb: half the
    /// peer's largest window, at most `sk_gso_max_size`, in whole MSS. The
    /// segment count is cached in `tp->gso_segs` and only recomputed when
    /// the goal moved by an MSS or more ("we try hard to avoid divides").
    //= linux:v6.18:net/ipv4/tcp.c#tcp_xmit_size_goal
    pub(super) fn size_goal(&mut self, mss: u32) -> u32 {
        let new_goal = bound_to_half_wnd(self.max_window, SK_GSO_MAX_SIZE, self.tcp_header_len());
        let mut goal = self.sq.gso_segs * mss;
        if new_goal < goal || new_goal >= goal + mss {
            self.sq.gso_segs = (new_goal / mss.max(1)).min(SK_GSO_MAX_SEGS);
            goal = self.sq.gso_segs * mss;
        }
        goal.max(mss)
    }

    /// `tcp_tso_segs`: the TSO autosize limit of one transmission.
    //= linux:v6.18:net/ipv4/tcp_output.c#tcp_tso_segs
    pub(super) fn tso_segs(&self, mss: u32) -> u32 {
        let min_rtt = self.min_rtt.get();
        // ca_ops->min_tso_segs (BBR's), else sysctl_tcp_min_tso_segs.
        let min_tso = self.cc.min_tso_segs(self.tp.pacing_rate).unwrap_or(self.cfg.tcp_min_tso_segs.max(1));
        tso_autosize(self.tp.pacing_rate, min_rtt, mss, min_tso, self.cfg.tcp_tso_rtt_log).min(SK_GSO_MAX_SEGS)
    }

    /// Queues a `send()` of `n` bytes (already counted against the send
    /// buffer); `poll_transmit` turns it into skbs.
    pub(super) fn queue_send(&mut self, n: u32, requested: u64, flags: super::MsgFlags) {
        let partial = (n as u64) < requested;
        let cont = std::mem::replace(&mut self.sq.partial, partial && n > 0);
        self.write_seq += n;
        let eor = flags.eor && !partial;
        self.sq.calls.push_back(SendCall { end: self.write_seq, eor, more: flags.more, partial, cont });
    }

    /// `forced_push`: more than half the peer's largest window was written
    /// since the last PSH.
    fn forced_push(&self) -> bool {
        self.sq.built_seq.after(self.sq.pushed_seq + (self.max_window >> 1))
    }

    /// `tcp_mark_push`: PSH on the tail skb.
    pub(super) fn mark_push_tail(&mut self) {
        self.mark_push();
    }

    /// `tcp_mark_push`: PSH on the tail skb.
    fn mark_push(&mut self) {
        if let Some(t) = self.sq.wq.back_mut() {
            t.psh = true;
        }
        self.sq.pushed_seq = self.sq.built_seq;
    }

    /// `tcp_skb_entail` (with `tcp_add_write_queue_tail`): a new empty skb
    /// at the tail; the first one starts the busy chrono, and each one is
    /// a chance to restart an idle window.
    fn entail(&mut self) {
        if self.sq.wq.is_empty() {
            let j = self.tp.jiffies;
            self.sq.chrono.start(j, TCP_CHRONO_BUSY);
        }
        self.sq.wq.push_back(WSkb { end_seq: self.sq.built_seq, psh: false, eor: false, fin: false });
        // "if (tp->nonagle & TCP_NAGLE_PUSH) tp->nonagle &= ~TCP_NAGLE_PUSH"
        self.nonagle &= !TCP_NAGLE_PUSH;
        self.slow_start_after_idle_check();
    }

    /// Turns pending writes into skbs (`tcp_sendmsg_locked`), pushing as
    /// the kernel's loop does, then attaches a queued FIN (`tcp_send_fin`).
    pub(super) fn process_sends(&mut self, now: Instant) {
        while let Some(call) = self.sq.calls.pop_front() {
            self.sendmsg(now, call);
        }
        self.entail_fin(now);
    }

    /// `tcp_send_fin` for a queued FIN, once the data before it is in skbs.
    fn entail_fin(&mut self, now: Instant) {
        if self.fin_queued && !self.sq.fin_entailed && self.state.synchronized() {
            self.sq.fin_entailed = true;
            // tcp_send_fin: onto the unsent tail skb, else a new FIN-only
            // skb; then push with Nagle off.
            if self.sq.wq.is_empty() {
                self.entail();
            }
            if let Some(t) = self.sq.wq.back_mut() {
                t.fin = true;
            }
            self.write_xmit(now, 0, TCP_NAGLE_OFF);
        }
    }

    /// One call, run at once (notsent_lowat.rs); returns the bytes left
    /// uncopied.
    pub(super) fn sendmsg_now(&mut self, now: Instant, call: SendCall) -> u32 {
        self.sendmsg(now, call)
    }

    /// One `tcp_sendmsg_locked` call, from its first copied byte to the
    /// final `tcp_push`; returns the bytes left uncopied (a notsent limit,
    /// notsent_lowat.rs), else 0.
    //= linux:v6.18:net/ipv4/tcp.c#tcp_sendmsg_locked
    fn sendmsg(&mut self, now: Instant, call: SendCall) -> u32 {
        if !call.cont {
            // "is sending application-limited?", at the top of the call
            // (a continuation is the same call, resumed after waiting for
            // space). Nothing of the socket waits below TCP once every
            // committed segment was handed out: the model cannot see the
            // host's queue, so that stands for `sk_wmem_alloc`.
            let c = AppLimitedInput {
                write_seq: self.sq.built_seq,
                snd_nxt: self.snd_nxt,
                mss_cache: self.tp.mss_cache,
                host_queue_empty: self.sq.emit_next >= self.rtx.next_id(),
                packets_in_flight: self.packets_in_flight(),
                snd_cwnd: self.tp.snd_cwnd,
                lost_out: self.scoreboard.lost_out,
                retrans_out: self.scoreboard.retrans_out,
                delivered: self.tp.delivered,
            };
            self.rate.check_app_limited(&c);
        }
        let mss = self.tp.mss_cache.max(1);
        let size_goal = self.size_goal(mss);
        let mut copied = call.cont;
        while self.sq.built_seq.before(call.end) {
            let n = self.sq.wq.len();
            let mut copy = 0i64;
            if n > 0 {
                let tail = self.sq.wq[n - 1];
                if !tail.eor && !tail.fin {
                    copy = size_goal as i64 - self.wq_len(n - 1) as i64;
                }
            }
            if copy <= 0 {
                // new_segment: sk_stream_memory_free (stream_memory.rs).
                if !self.stream_memory_free() {
                    return self.sendmsg_wait_for_space(now, call, copied);
                }
                self.entail();
                copy = size_goal as i64;
            }
            let copy = (copy as u32).min(call.end - self.sq.built_seq);
            self.sq.built_seq += copy;
            let n = self.sq.wq.len();
            let tail = &mut self.sq.wq[n - 1];
            if !copied {
                // The first bytes of a write clear an old PSH mark.
                tail.psh = false;
            }
            tail.end_seq = self.sq.built_seq;
            copied = true;
            if self.sq.built_seq == call.end {
                if call.eor {
                    tail.eor = true;
                }
                break;
            }
            if self.wq_len(n - 1) < size_goal {
                continue;
            }
            if self.forced_push() {
                self.mark_push();
                self.write_xmit(now, 0, TCP_NAGLE_PUSH);
            } else if self.sq.wq.len() == 1 {
                // tcp_push_one: the full skb is the send head.
                self.write_xmit(now, 1, TCP_NAGLE_PUSH);
            }
        }
        // tcp_push: PSH on the tail unless MSG_MORE (and no forced push);
        // MSG_MORE pushes corked. A call that ran out of room pushes with
        // TCP_NAGLE_PUSH before it sleeps (`wait_for_space`, flags without
        // MSG_MORE).
        if !self.sq.wq.is_empty() && (call.partial || !call.more || self.forced_push()) {
            self.mark_push();
        }
        let nonagle = if call.partial {
            TCP_NAGLE_PUSH
        } else if call.more {
            TCP_NAGLE_CORK
        } else {
            self.nonagle()
        };
        self.write_xmit(now, 0, nonagle);
        0
    }

    /// `tp->nonagle`.
    pub(super) fn nonagle(&self) -> u8 {
        self.nonagle
    }

    /// `tcp_grow_skb`: before sending a head skb smaller than the quota,
    /// pull bytes from the next skb (unless the head is an end of record);
    /// an emptied next skb is eaten, flags included.
    //= linux:v6.18:net/ipv4/tcp_output.c#tcp_grow_skb
    pub(super) fn grow_skb(&mut self, amount: u32) {
        if self.sq.wq.len() < 2 || self.sq.wq[0].eor {
            return;
        }
        let next_len = self.wq_len(1);
        let nlen = amount.min(next_len);
        if nlen == 0 {
            return;
        }
        if nlen == next_len {
            let next = self.sq.wq.remove(1).expect("two skbs");
            let head = &mut self.sq.wq[0];
            head.end_seq = next.end_seq;
            head.eor = next.eor;
            head.psh |= next.psh;
            head.fin |= next.fin;
        } else {
            self.sq.wq[0].end_seq += nlen;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_bound_to_half_wnd_caps_at_half_the_largest_window() {
        // 257 << 7 = 32896: 16448 bytes, i.e. 16 segments of 1000.
        assert_eq!(bound_to_half_wnd(32896, SK_GSO_MAX_SIZE, 20), 16448);
        // A tiny window is not halved.
        assert_eq!(bound_to_half_wnd(500, SK_GSO_MAX_SIZE, 20), 500);
        // A big window leaves the GSO limit.
        assert_eq!(bound_to_half_wnd(1 << 20, SK_GSO_MAX_SIZE, 20), SK_GSO_MAX_SIZE);
    }

    #[test]
    fn test_tso_autosize_is_one_ms_of_pacing_at_least_min_tso_segs() {
        // 200 KB/s (IW10, mss 1000, srtt 100 ms, 200 %): 195 B per ms.
        assert_eq!(tso_autosize(200_000, 100_000, 1000, 2, 9), 2);
        assert_eq!(tso_autosize(200_000, 100_000, 1000, 10, 9), 10);
        // 40 MB/s: 39062 B per ms = 39 segments.
        assert_eq!(tso_autosize(40_000_000, 100_000, 1000, 2, 9), 39);
        // min_rtt 100 µs: r = 0, the whole GSO size is added.
        assert_eq!(tso_autosize(0, 100, 1000, 2, 9), SK_GSO_MAX_SIZE / 1000);
        // No RTT sample yet (~0): no bonus.
        assert_eq!(tso_autosize(0, u32::MAX, 1000, 2, 9), 2);
    }

    #[test]
    fn test_chrono_higher_state_overrides_and_busy_is_the_total() {
        let mut c = Chrono::default();
        c.start(0, TCP_CHRONO_BUSY);
        c.start(10, TCP_CHRONO_RWND_LIMITED);
        // A lower state does not take over.
        c.start(20, TCP_CHRONO_BUSY);
        c.stop(110, TCP_CHRONO_RWND_LIMITED, false);
        c.stop(140, TCP_CHRONO_BUSY, true);
        // HZ 1000: busy 10 + 30 jiffies, rwnd-limited 100.
        assert_eq!(c.info_us(200, 1000), (140_000, 100_000, 0));
        // The running state counts up to now.
        c.start(200, TCP_CHRONO_BUSY);
        c.start(200, TCP_CHRONO_SNDBUF_LIMITED);
        assert_eq!(c.info_us(250, 1000), (190_000, 100_000, 50_000));
    }
}
