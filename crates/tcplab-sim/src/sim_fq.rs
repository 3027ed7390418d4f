//! The simulator's side of fq hosts: polling paced connections, handing
//! their packets to the qdisc, serving the NIC from it, and waking
//! connections and the qdisc on time. The qdisc itself is `fq.rs`; the
//! model is described in docs/sim-fq.md.
//!
//! **EDT pacing** ([`FqPacing::Edt`](crate::config::FqPacing), Linux ≥
//! 4.20). Linux TCP keeps `tcp_wstamp_ns` per socket. `__tcp_transmit_skb`
//! stamps each skb with `max(tcp_wstamp_ns, now)` (its earliest
//! departure time, also its `skb_mstamp_ns`, from which RTT samples are
//! taken), and `tcp_update_skb_after_send` then advances the stamp by
//! `skb->len·10⁹/sk_pacing_rate` ns, less up to half of the jump the
//! stamp made to catch up with `now` ("OS jitter"), once the socket has
//! sent 10 data segments ("original sch_fq does not pace first 10 MSS")
//! and only if a pacing rate is set. fq holds each skb until its stamp;
//! GSO then sends its segments back to back. The core keeps that stamp
//! per skb ([`Connection::tcp_wstamp_ns`](tcplab_core::Connection::tcp_wstamp_ns)).
//!
//! The simulator cannot hold a polled segment back in the core, so it
//! holds the *connection* instead: it polls a connection only when the
//! stamp is due, or while segments of an skb already stamped are still to
//! come out ([`Connection::skb_segments_pending`](tcplab_core::Connection::skb_segments_pending)),
//! and otherwise arms a [`Event::PaceWake`] at the stamp. The packets
//! reach fq at their departure time (`time_to_send = now`), which is what
//! fq would have released at that time, and the core's send time equals
//! Linux's `skb_mstamp_ns`. The difference: in Linux the skb sits in fq
//! (and in `packets_out`) while it waits, here it is not yet sent.
//! (Until 2026-12-02 the simulator stamped each *segment*, spacing an
//! skb's segments by `mss/rate`; see docs/linux-differences.md.)
//!
//! **Backpressure.** A connection is polled only while the qdisc has room
//! for it ([`FqQdisc::room`](crate::fq::FqQdisc::room): `limit`,
//! `flow_limit`, and TCP Small Queues). When its flow is full it waits
//! for a packet of that flow to leave; when the qdisc is full it joins the
//! NIC's ready queue like a pfifo NIC (`ready.rs`). TCP segments are never
//! dropped locally.

use crate::fq::{Dequeued, FqQdisc, Room, NONE};
use crate::packet::{Packet, PacketEventKind, PacketId};
use crate::sim::{Drained, Event, Sim};
use tcplab_core::time::Instant;
use tcplab_core::Connection;
use tcplab_wire::Ecn;

/// A connection whose NIC has fq: sch_fq sets `SK_PACING_FQ` on the
/// socket's first packet (`fq_classify`; HyStart's ACK-train test depends
/// on it), and under EDT the connection holds skbs until their stamp (see
/// the module doc).
pub(crate) fn attach(tcp: &mut Connection, fq: Option<&FqQdisc>) {
    if let Some(q) = fq {
        tcp.set_pacing_fq(q.edt);
    }
}

impl Sim<'_> {
    /// `Sim::poll_segments` for a connection whose NIC has fq.
    pub(crate) fn drain_fq(&mut self, c: usize) -> Drained {
        let now = self.now;
        let now_ns = now.as_nanos();
        let mut sent = false;
        loop {
            let conn = &mut self.conns[c];
            let nic = conn.nic as usize;
            let Some(tcp) = conn.tcp.as_mut() else { return Drained::Done };
            let dir = &mut self.dirs[nic];
            let Some(q) = dir.fq.as_deref_mut() else { return Drained::Done };
            let f = conn.fq_flow;
            // The limits and TSQ are checked per skb; the rest of an skb
            // under way follows it.
            match if tcp.skb_continues() { Room::Yes } else { q.room(f, conn.mtu.into(), tcp.pacing_rate()) } {
                Room::Yes => {}
                Room::Flow => {
                    q.flows[f as usize].waiting = true;
                    return Drained::Done;
                }
                Room::Qdisc => return Drained::NoRoom { sent },
            }
            // EDT: the core stamps each skb (`tcp_update_skb_after_send`);
            // the next one may not leave before `tcp_wstamp_ns`, while the
            // rest of an skb already sent goes out with it, as GSO's
            // segments do.
            let wstamp = tcp.tcp_wstamp_ns();
            if q.edt && wstamp > now_ns && !tcp.skb_segments_pending() {
                if !conn.pace_armed {
                    conn.pace_armed = true;
                    self.events.push_conn(Instant::from_nanos(wstamp), Event::PaceWake(c as u32));
                }
                return Drained::Done;
            }
            let Some(seg) = tcp.poll_transmit(now) else { return Drained::Done };
            let more = tcp.skb_continues();
            sent = true;
            // skb_is_tcp_pure_ack: an ACK without data or SYN/FIN/RST.
            let pure_ack = seg.payload_len == 0 && !seg.flags.syn() && !seg.flags.fin() && !seg.flags.rst();
            let next = conn.route + 1;
            let pkt = Packet { seg, wire_len: seg.wire_len(), conn: c as u32, raw: false, next };
            let id = self.packets.alloc(pkt);
            self.tap_send(id);
            self.enqueue_fq(nic, f, id, !pure_ack, more);
        }
    }

    /// Hands packet `id` of fq flow `f` to the qdisc of direction `d`, due
    /// now, and starts the NIC if it is idle — once the skb is complete
    /// (`more`: another of its segments follows).
    pub(crate) fn enqueue_fq(&mut self, d: usize, f: u32, id: PacketId, paced: bool, more: bool) {
        let now = self.now.as_nanos();
        let len = self.packets.get(id).wire_len;
        let passed = self.police(d, id);
        let from = self.dirs[d].from;
        if let Some(q) = self.dirs[d].fq.as_deref_mut() {
            if !passed {
                if !more {
                    q.end_skb(f);
                }
            } else if q.enqueue_segment(now, f, id, len, paced, now, more) {
                self.tap(PacketEventKind::Enqueue, from, Some(d), id);
            } else {
                self.tap(PacketEventKind::Drop, from, Some(d), id);
                self.packets.free(id);
            }
        }
        if !more && self.dirs[d].in_service.is_none() {
            self.fq_kick(d);
        }
    }

    /// The NIC of direction `d` is idle: start its next packet from the
    /// qdisc, wake connections waiting for room, or arm the watchdog.
    pub(crate) fn fq_kick(&mut self, d: usize) {
        let now = self.now.as_nanos();
        let conns = &self.conns;
        let dir = &mut self.dirs[d];
        let Some(q) = dir.fq.as_deref_mut() else { return };
        let out = q.dequeue(now, |c| {
            if c == NONE {
                return 0;
            }
            conns[c as usize].tcp.as_ref().map_or(0, |t| t.pacing_rate())
        });
        let Some(Dequeued { id, len, flow, ce }) = out else {
            let t = q.time_next_delayed_flow;
            if t != u64::MAX && t < dir.watchdog_at {
                dir.watchdog_at = t;
                self.events.push_link(Instant::from_nanos(t), Event::Watchdog(d as u32));
            }
            return;
        };
        let waiter = {
            let fl = &mut q.flows[flow as usize];
            let w = fl.waiting.then_some(fl.conn);
            fl.waiting = false;
            w
        };
        if ce {
            let p = self.packets.get_mut(id);
            if matches!(p.seg.ecn, Ecn::Ect0 | Ecn::Ect1) {
                p.seg.ecn = Ecn::Ce;
                q.count_ce();
            }
        }
        let serve = !dir.ready.is_empty();
        self.start_tx(d, id, len);
        if let Some(c) = waiter {
            if c != NONE {
                let c = c as usize;
                self.drain_transmit(c);
                self.update_timer(c);
            }
        }
        if serve {
            self.serve_ready(d);
        }
    }

    /// A paced connection's departure time has come.
    pub(crate) fn on_pace_wake(&mut self, c: usize) {
        self.conns[c].pace_armed = false;
        if self.conns[c].tcp.is_none() {
            return;
        }
        self.drain_transmit(c);
        self.update_timer(c);
    }

    /// The watchdog of direction `d`'s qdisc fired at `t`; returns whether
    /// it did anything.
    pub(crate) fn on_watchdog(&mut self, d: usize, t: Instant) -> bool {
        let dir = &mut self.dirs[d];
        if dir.watchdog_at == t.as_nanos() {
            dir.watchdog_at = u64::MAX;
        }
        if dir.in_service.is_some() {
            // The NIC's own completion will dequeue.
            return false;
        }
        self.fq_kick(d);
        true
    }
}
