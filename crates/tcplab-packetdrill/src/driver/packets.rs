//! Packets: injecting inbound ones, and matching what the endpoint sent
//! against outbound ones.

use super::{
    fail, ns, secs, us, Driver, SockKind, Stop, CLIENT_PORT, LOCAL_ISN, LOCAL_PORT, MISSING_PACKET_US, REMOTE_PORT,
};
use crate::ast::{Event, EventTime, IpCheck, PacketFlag, PacketSpec};
use crate::harness::Qdisc;
use crate::matcher::{self, Actual, MatchConfig};
use tcplab_core::wire::{Ecn, SegmentRepr, SeqNum};
use tcplab_core::Instant;

impl Driver<'_> {
    pub(super) fn inbound(&mut self, ev: &Event, p: &PacketSpec) -> Result<(), Stop> {
        if self.conn.is_none() {
            let listening = self.sockets.iter().any(|s| s.kind == SockKind::Listener);
            if !listening {
                return fail(ev.line, "error handling packet: no matching socket for script packet");
            }
            let cfg = self.conn_config();
            let mut c = self.factory.server(&cfg, LOCAL_PORT, REMOTE_PORT, SeqNum(LOCAL_ISN));
            c.set_nodelay(self.nodelay);
            if self.cork {
                c.set_cork(true);
            }
            c.set_notsent_lowat(self.effective_notsent_lowat());
            if self.harness.qdisc == Qdisc::Fq {
                c.set_pacing_fq();
            }
            c.set_user_timeout(self.user_timeout);
            c.set_xmit_blocked(self.harness.qdisc == Qdisc::Blackhole);
            self.conn = Some(c);
            self.passive = true;
        }
        let (sport, dport) = if self.passive { (REMOTE_PORT, LOCAL_PORT) } else { (LOCAL_PORT, CLIENT_PORT) };
        let flags = matcher::script_flags(&p.flags);
        let ack_field = p.ack.unwrap_or(0);
        let ack = if flags.ack() { self.map.local_to_live(ack_field) } else { ack_field };
        let options = matcher::inbound_options(p.options.as_deref().unwrap_or(&[]), &self.map, flags.ack())
            .map_err(|e| Stop::Fail { line: ev.line, message: format!("error handling packet: {e}") })?;
        let ecn = match p.ip {
            Some(IpCheck::Ecn(v)) | Some(IpCheck::Tos(v)) => match v & 3 {
                1 => Ecn::Ect1,
                2 => Ecn::Ect0,
                3 => Ecn::Ce,
                _ => Ecn::NotEct,
            },
            _ => Ecn::NotEct,
        };
        let base = SegmentRepr {
            src_port: sport,
            dst_port: dport,
            seq: SeqNum(self.map.remote_to_live(p.seq)),
            ack: SeqNum(ack),
            flags,
            window: p.win.unwrap_or(0),
            options,
            ecn,
            payload_len: p.payload,
        };
        // --mss: packetdrill writes the payload to the tun device as one
        // GSO skb (`virtio_net_hdr` with `gso_size` = mss, netdev.c), which
        // reaches TCP whole: one skb, answered once, its MSS measured by
        // `gso_size` (`tcp_measure_rcv_mss`).
        let gso = match self.plan.gso_mss {
            Some(mss) if base.payload_len > mss && !flags.syn() => mss,
            _ => 0,
        };
        let tr = format!("inbound injected: {}", matcher::fmt_script(p, us(self.now)));
        self.trace(tr);
        if let Some(c) = self.conn.as_mut() {
            let now = Instant::from_nanos(self.now);
            if gso > 0 {
                c.handle_gro_segment(now, &base, gso);
            } else {
                c.handle_segment(now, &base);
            }
        }
        self.after_input()?;
        Ok(())
    }

    pub(super) fn outbound(
        &mut self,
        ev: &Event,
        p: &PacketSpec,
        start: i64,
        end: i64,
        offset: i64,
    ) -> Result<(), Stop> {
        if p.flags.has(PacketFlag::Syn) {
            self.map.local_script_isn = p.seq;
        }
        let err = |m: String| Stop::Fail { line: ev.line, message: format!("error handling packet: {m}") };
        let deadline = ns(end.max(us(self.now)) + MISSING_PACKET_US);
        let mut frags: Vec<Actual> = Vec::new();
        let mut sniffed = 0u32;
        loop {
            let Some((t, seg)) = self.next_outbound(deadline)? else {
                let mut m = "Timed out waiting for packet".to_string();
                m.push_str(&format!("\nscript packet: {}", matcher::fmt_script(p, start)));
                for f in &frags {
                    m.push_str(&format!("\nsniffed fragment: {}", matcher::fmt_actual(f)));
                }
                m.push_str(&format!("\n(nothing sent by {} sec)", secs(us(self.now))));
                return Err(err(m));
            };
            let a = matcher::to_actual(&seg, us(t), &self.map);
            let tr = format!("{} outbound sniffed: {}", secs(us(t)), matcher::fmt_actual(&a));
            self.trace(tr);
            if let Some(prev) = frags.last() {
                if let Err(e) = matcher::check_fragment(prev, &a, sniffed, p.payload) {
                    return Err(err(format!(
                        "{e}\nscript packet: {}\nprevious fragment: {}\nactual packet: {}",
                        matcher::fmt_script(p, start),
                        matcher::fmt_actual(prev),
                        matcher::fmt_actual(&a)
                    )));
                }
            }
            sniffed += a.payload;
            frags.push(a);
            if sniffed >= p.payload || self.plan.strict_segments {
                break;
            }
        }
        if sniffed != p.payload {
            let last = frags.last().map(matcher::fmt_actual).unwrap_or_default();
            return Err(err(format!(
                "live packet payload: expected {} bytes vs actual {} bytes\nscript packet: {}\nactual packet: {}",
                p.payload,
                sniffed,
                matcher::fmt_script(p, start),
                last
            )));
        }
        let mut a = matcher::aggregate(&frags);
        matcher::map_ts_val(p, &mut a, &mut self.map);
        // The TS val tolerance grows with the time since the script start
        // (get_tolerance_usecs), not since the previous event.
        let ts_tol = self.plan.tolerance_usecs.max((self.plan.tolerance_percent / 100.0 * start as f64) as i64);
        let mc = MatchConfig {
            ts_tick_usecs: self.plan.ts_tick_usecs,
            tolerance_usecs: ts_tol,
            ignore_fields: self.ignore_fields.clone(),
        };
        let dumps = |a: &Actual| {
            format!("\nscript packet: {}\nactual packet: {}", matcher::fmt_script(p, start), matcher::fmt_actual(a))
        };
        if let Err(e) = matcher::verify(p, &a, &mc) {
            return Err(err(format!("{e}{}", dumps(&a))));
        }
        // verify_time
        let tol = self.tolerance(start);
        let t = a.time_us;
        match ev.time {
            EventTime::Any => {}
            EventTime::AbsoluteRange(..) | EventTime::RelativeRange(..) => {
                if t < start - tol || t > end + tol {
                    let m = if matches!(ev.time, EventTime::AbsoluteRange(..)) {
                        format!(
                            "timing error: expected outbound packet in time range {}~{} sec but happened at {} sec",
                            secs(start),
                            secs(end),
                            secs(t)
                        )
                    } else {
                        format!(
                            "timing error: expected outbound packet in relative time range +{}~+{} sec but happened at {:+.6} sec",
                            secs(start - offset),
                            secs(end - offset),
                            (t - offset) as f64 / 1e6
                        )
                    };
                    return Err(err(format!("{m}{}", dumps(&a))));
                }
            }
            _ => {
                if t < start - tol || t > start + tol {
                    return Err(err(format!(
                        "timing error: expected outbound packet at {} sec but happened at {} sec; tolerance {} sec{}",
                        secs(start),
                        secs(t),
                        secs(tol),
                        dumps(&a)
                    )));
                }
            }
        }
        Ok(())
    }
}
