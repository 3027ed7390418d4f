//! Runs a parsed script against a TCP endpoint in virtual time, the way
//! packetdrill's `run.c` runs it against a kernel.
//!
//! # Time
//!
//! Virtual time starts at 0 with the first event. Between events the
//! endpoint's timers run ([`Endpoint::poll_timeout`] /
//! [`Endpoint::handle_timeout`]); every segment it sends is queued with
//! its send time, like the packets packetdrill sniffs on the tun device.
//!
//! - A relative time (`+.1`) counts from the time the previous event
//!   finished, except that consecutive inbound packets are anchored to the
//!   previous packet's script time (`adjust_relative_event_times`).
//! - Inbound packets, system calls, commands and `%{ }%` blocks wait for
//!   their time; if the previous event already ran past it by more than
//!   the tolerance, that is a timing error.
//! - An outbound packet does not wait: the queue is consumed (running
//!   the endpoint forward as needed) and the packet's send time checked.
//!   A segment the script did not expect is therefore reported at the
//!   next expected outbound packet, as a field or timing mismatch, as in
//!   packetdrill; segments sent after the last expected one are not
//!   checked (a note counts them). A missing packet fails 2 s after its
//!   expected time ("Timed out waiting for packet").
//! - Tolerance: the larger of `--tolerance_usecs` (4 ms) and 12.5 % of the
//!   gap between this event's and the previous event's script times.
//! - A blocking call (`+.1...0.2 write(...)`) starts at its time and lets
//!   the following events run while it blocks; its return time is
//!   checked when the next system call starts or at the end.
//!
//! # Sockets
//!
//! One connection is under test. `socket`/`bind`/`listen` make a
//! listener; the first inbound packet creates the passive endpoint
//! (local port 8080, remote port [`REMOTE_PORT`]); `accept` hands it out
//! once established. `connect` creates an active endpoint. The local ISN
//! is [`LOCAL_ISN`] and the remote side's numbers are the script's plus
//! [`REMOTE_ISN_OFFSET`]; the matcher maps both back.
//!
//! `setsockopt(SO_SNDBUF)` is folded into the connection's configuration
//! when no data was written before it (the model's `TcpConfig::so_sndbuf`
//! fixes `sk_sndbuf` at 2× the value, as the kernel does on the call);
//! later calls need a core setter, and the plan skips such scripts.

use crate::ast::*;
use crate::endpoint::{Endpoint, EndpointFactory};
use crate::harness::{Harness, Qdisc};
use crate::matcher::{self, Actual, MatchConfig, SeqMap};
use crate::plan::Plan;
use crate::python::{Interpreter, PyError, Value};
use crate::symbols::{eval_int, MSG_EOR, O_NONBLOCK, O_RDWR};
use std::collections::VecDeque;
use tcplab_core::wire::{Ecn, SegmentRepr, SeqNum, TcpFlags};
use tcplab_core::{CaState, Instant, TcpConfig, TcpError, TcpInfo, TcpState};

/// The local port of a listening socket and the remote port of `connect`.
pub const LOCAL_PORT: u16 = 8080;
/// The remote port of a passive connection (packetdrill picks an ephemeral one).
pub const REMOTE_PORT: u16 = 48_123;
/// The local port of an active connection.
pub const CLIENT_PORT: u16 = 40_001;
/// ISN of the endpoint under test.
pub const LOCAL_ISN: u32 = 0x9e37_79b9;
/// Added to the script's remote sequence numbers before injection.
pub const REMOTE_ISN_OFFSET: u32 = 0x2545_f491;
/// How long past its expected time an outbound packet may be missing.
const MISSING_PACKET_US: i64 = 2_000_000;

/// errno name → (number, strerror text).
fn errno_info(name: &str) -> Option<(i64, &'static str)> {
    Some(match name {
        "EPERM" => (1, "Operation not permitted"),
        "EBADF" => (9, "Bad file descriptor"),
        "EAGAIN" | "EWOULDBLOCK" => (11, "Resource temporarily unavailable"),
        "EINVAL" => (22, "Invalid argument"),
        "EPIPE" => (32, "Broken pipe"),
        "ENOPROTOOPT" => (92, "Protocol not available"),
        "ECONNRESET" => (104, "Connection reset by peer"),
        "EISCONN" => (106, "Transport endpoint is already connected"),
        "ENOTCONN" => (107, "Transport endpoint is not connected"),
        "ETIMEDOUT" => (110, "Connection timed out"),
        "ECONNREFUSED" => (111, "Connection refused"),
        "EALREADY" => (114, "Operation already in progress"),
        "EINPROGRESS" => (115, "Operation now in progress"),
        _ => return None,
    })
}

/// Why a run stopped early.
#[derive(Clone, Debug, PartialEq)]
pub enum Stop {
    Fail { line: u32, message: String },
    Skip(String),
}

fn fail<T>(line: u32, message: impl Into<String>) -> Result<T, Stop> {
    Err(Stop::Fail { line, message: message.into() })
}

/// What a run produced.
#[derive(Debug)]
pub struct RunOutput {
    pub result: Result<(), Stop>,
    /// Virtual time at the end, µs.
    pub end_us: i64,
    pub notes: Vec<String>,
    /// `print()` output and, when verbose, the event trace.
    pub output: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SockKind {
    New,
    Listener,
    /// The connection under test.
    Conn,
}

#[derive(Clone, Debug)]
struct Socket {
    fd: i64,
    kind: SockKind,
    nonblocking: bool,
}

#[derive(Clone, Copy, Debug)]
enum BlockKind {
    /// `eor`: `send(..., MSG_EOR)`.
    Write {
        remaining: u64,
        eor: bool,
    },
    Connect,
    Accept {
        fd: i64,
    },
    Read {
        max: u64,
    },
}

#[derive(Clone, Debug)]
struct Blocking {
    line: u32,
    name: String,
    kind: BlockKind,
    /// Expected return time, µs.
    end_us: i64,
    expected: i64,
    /// Return value once done.
    ret: i64,
    done_ns: Option<u64>,
}

struct Snapshot {
    event: usize,
    line: u32,
    info: TcpInfo,
    state: TcpState,
}

/// One script run.
pub struct Driver<'a> {
    script: &'a Script,
    plan: &'a Plan,
    harness: Harness,
    factory: &'a mut dyn EndpointFactory,
    verbose: bool,
    hz: Option<u32>,
    ignore_fields: Vec<String>,
    /// Virtual time, ns.
    now: u64,
    conn: Option<Box<dyn Endpoint>>,
    conn_fd: Option<i64>,
    passive: bool,
    nodelay: bool,
    /// `TCP_USER_TIMEOUT`, ms (0 = off).
    user_timeout: u32,
    sockets: Vec<Socket>,
    outq: VecDeque<(u64, SegmentRepr)>,
    map: SeqMap,
    last_event_us: Option<i64>,
    last_event_inbound: bool,
    last_absolute_us: Option<i64>,
    blocking: Option<Blocking>,
    snapshots: Vec<Snapshot>,
    notes: Vec<String>,
    output: Vec<String>,
    /// Line of the event being run (for model errors found meanwhile).
    cur_line: u32,
}

/// The latest event time a script may name: one day of virtual time.
/// Linux's scripts span seconds; a mistyped `+42949672950` would
/// otherwise keep the interpreter busy for minutes running timers.
const MAX_SCRIPT_TIME_US: i64 = 86_400_000_000;

/// Fails a script whose `what` (an event or a blocking call's end) is
/// past [`MAX_SCRIPT_TIME_US`].
fn time_within_limit(line: u32, what: &str, t_us: i64) -> Result<(), Stop> {
    if t_us > MAX_SCRIPT_TIME_US {
        return fail(
            line,
            format!(
                "{what} {} s is past tcplab's limit of {} s of virtual time (packetdrill would wait that long)",
                secs(t_us),
                secs(MAX_SCRIPT_TIME_US)
            ),
        );
    }
    Ok(())
}

fn us(ns: u64) -> i64 {
    (ns / 1000) as i64
}
fn ns(us: i64) -> u64 {
    us.max(0) as u64 * 1000
}
fn secs(us: i64) -> String {
    format!("{:.6}", us as f64 / 1e6)
}

impl<'a> Driver<'a> {
    pub fn new(
        script: &'a Script,
        plan: &'a Plan,
        harness: Harness,
        factory: &'a mut dyn EndpointFactory,
        opts: &crate::RunOptions,
    ) -> Driver<'a> {
        let mut notes: Vec<String> = harness.notes.iter().chain(plan.notes.iter()).cloned().collect();
        if !opts.ignore_fields.is_empty() {
            notes.push(format!(
                "diagnostic run: outbound field(s) {} not compared; not a packetdrill-conformant result",
                opts.ignore_fields.join(", ")
            ));
        }
        Driver {
            script,
            plan,
            harness,
            factory,
            verbose: opts.verbose,
            hz: opts.hz,
            ignore_fields: opts.ignore_fields.clone(),
            now: 0,
            conn: None,
            conn_fd: None,
            passive: false,
            nodelay: false,
            user_timeout: 0,
            sockets: Vec::new(),
            outq: VecDeque::new(),
            map: SeqMap {
                local_live_isn: LOCAL_ISN,
                local_script_isn: 0,
                remote_offset: REMOTE_ISN_OFFSET,
                ..SeqMap::default()
            },
            last_event_us: None,
            last_event_inbound: false,
            last_absolute_us: None,
            blocking: None,
            snapshots: Vec::new(),
            notes,
            output: Vec::new(),
            cur_line: 0,
        }
    }

    /// Runs the script to its end (events, then the Python blocks).
    pub fn run(mut self) -> RunOutput {
        let result = self.run_events().and_then(|_| self.run_code());
        if !self.outq.is_empty() && result.is_ok() {
            self.notes.push(format!(
                "{} outbound segment(s) sent after the last expected packet were not checked (packetdrill does not check them either)",
                self.outq.len()
            ));
        }
        RunOutput { result, end_us: us(self.now), notes: self.notes, output: self.output }
    }

    fn trace(&mut self, s: String) {
        if self.verbose {
            self.output.push(s);
        }
    }

    fn conn_config(&self) -> TcpConfig {
        let mut c = self.harness.tcp_config();
        if let Some(b) = self.plan.so_sndbuf {
            c.so_sndbuf = b;
        }
        if let Some(b) = self.plan.so_rcvbuf {
            c.so_rcvbuf = b;
        }
        if let Some(hz) = self.hz {
            c.hz = hz;
        }
        c
    }

    // ------------------------------------------------------------------
    // Virtual time
    // ------------------------------------------------------------------

    /// Sends what the endpoint has to send now; finishes a blocking call
    /// that became possible.
    fn after_input(&mut self) -> Result<(), Stop> {
        let now = Instant::from_nanos(self.now);
        for round in 0.. {
            let Some(conn) = self.conn.as_mut() else { return Ok(()) };
            let mut n = 0;
            while let Some(seg) = conn.poll_transmit(now) {
                self.outq.push_back((self.now, seg));
                n += 1;
                if n > 100_000 {
                    return fail(
                        self.cur_line,
                        format!("model error: poll_transmit never returned None at {} sec", secs(us(self.now))),
                    );
                }
            }
            if round > 0 || !self.progress_blocking() {
                break;
            }
        }
        Ok(())
    }

    /// Advances a pending blocking call; `true` if the endpoint was called.
    fn progress_blocking(&mut self) -> bool {
        let Some(b) = self.blocking.as_mut() else { return false };
        if b.done_ns.is_some() {
            return false;
        }
        let Some(conn) = self.conn.as_mut() else { return false };
        match &mut b.kind {
            BlockKind::Write { remaining, eor } => {
                if *remaining > 0 {
                    let n = if *eor { conn.write_eor(*remaining) } else { conn.write(*remaining) };
                    *remaining -= n;
                    if *remaining == 0 {
                        b.done_ns = Some(self.now);
                    }
                    return n > 0;
                }
                false
            }
            BlockKind::Connect => {
                if conn.state() != TcpState::SynSent && conn.state() != TcpState::SynReceived {
                    b.done_ns = Some(self.now);
                    b.ret = if conn.state() == TcpState::Closed { -1 } else { 0 };
                }
                false
            }
            BlockKind::Accept { fd } => {
                if established(conn.state()) {
                    b.done_ns = Some(self.now);
                    b.ret = *fd;
                    self.conn_fd = Some(*fd);
                }
                false
            }
            BlockKind::Read { max } => {
                let n = conn.read(*max);
                if n > 0 || conn.state() == TcpState::Closed {
                    b.done_ns = Some(self.now);
                    b.ret = n as i64;
                }
                n > 0
            }
        }
    }

    /// Runs the endpoint's timers up to `target` ns.
    fn advance_to(&mut self, target: u64) -> Result<(), Stop> {
        let mut storms = 0u32;
        let mut last = u64::MAX;
        while let Some(conn) = self.conn.as_mut() {
            match conn.poll_timeout() {
                Some(d) if d.as_nanos() <= target => {
                    let at = d.as_nanos().max(self.now);
                    if at == last {
                        storms += 1;
                        if storms > 10_000 {
                            return fail(
                                self.cur_line,
                                format!(
                                    "model error: poll_timeout() keeps returning {} sec after handle_timeout (timer not re-armed or cleared)",
                                    secs(us(d.as_nanos()))
                                ),
                            );
                        }
                    } else {
                        storms = 0;
                        last = at;
                    }
                    self.now = at;
                    conn.handle_timeout(Instant::from_nanos(at));
                    self.after_input()?;
                }
                _ => break,
            }
        }
        self.now = self.now.max(target);
        Ok(())
    }

    /// The next segment the endpoint sends, running it forward to at most
    /// `deadline` ns.
    fn next_outbound(&mut self, deadline: u64) -> Result<Option<(u64, SegmentRepr)>, Stop> {
        loop {
            if let Some((t, seg)) = self.outq.pop_front() {
                self.now = self.now.max(t);
                return Ok(Some((t, seg)));
            }
            let next = self.conn.as_ref().and_then(|c| c.poll_timeout()).map(|d| d.as_nanos().max(self.now));
            match next {
                Some(d) if d <= deadline => self.advance_to(d)?,
                _ => {
                    self.now = self.now.max(deadline);
                    return Ok(None);
                }
            }
        }
    }

    // ------------------------------------------------------------------
    // Events
    // ------------------------------------------------------------------

    fn tolerance(&self, script_us: i64) -> i64 {
        let mut tol = self.plan.tolerance_usecs;
        if let Some(last) = self.last_event_us {
            let dynamic = (self.plan.tolerance_percent / 100.0 * (script_us - last) as f64) as i64;
            tol = tol.max(dynamic);
        }
        tol
    }

    fn run_events(&mut self) -> Result<(), Stop> {
        let script = self.script;
        for (idx, ev) in script.events.iter().enumerate() {
            let inbound = matches!(&ev.action, Action::Packet(p) if p.direction == Direction::Inbound);
            self.cur_line = ev.line;
            if idx == 0 {
                let t0 = match ev.time {
                    EventTime::Absolute(t)
                    | EventTime::AbsoluteRange(t, _)
                    | EventTime::Relative(t)
                    | EventTime::RelativeRange(t, _) => t,
                    EventTime::Any => 0,
                };
                if t0 != 0 {
                    return fail(ev.line, "first event should be at time 0");
                }
            }
            // adjust_relative_event_times
            let offset =
                if self.last_event_inbound && inbound { self.last_event_us.unwrap_or(0) } else { us(self.now) };
            let (start, end) = match ev.time {
                EventTime::Absolute(t) => (t, t),
                EventTime::AbsoluteRange(a, b) => (a, b),
                EventTime::Relative(t) => (offset.saturating_add(t), offset.saturating_add(t)),
                EventTime::RelativeRange(a, b) => (offset.saturating_add(a), offset.saturating_add(b)),
                EventTime::Any => (us(self.now), us(self.now)),
            };
            time_within_limit(ev.line, "event time", start.max(end))?;
            if ev.time.is_absolute() {
                if let Some(last) = self.last_absolute_us {
                    if start < last {
                        return fail(ev.line, format!("time goes backward in script from {last} usec to {start} usec"));
                    }
                }
            }
            match &ev.action {
                Action::Packet(p) if p.direction == Direction::Outbound => self.outbound(ev, p, start, end, offset)?,
                Action::Packet(p) => {
                    self.wait_for(ev, start, "inbound packet")?;
                    self.inbound(ev, p)?;
                }
                Action::Syscall(s) => {
                    self.finish_blocking()?;
                    self.wait_for(ev, start, "system call start")?;
                    let end_us = s.end_usecs.map(|e| {
                        if matches!(ev.time, EventTime::Relative(_)) {
                            e.saturating_add(offset)
                        } else {
                            e
                        }
                    });
                    if let Some(e) = end_us {
                        time_within_limit(ev.line, "system call end time", e)?;
                    }
                    self.syscall(ev, s, end_us)?;
                }
                Action::Command(c) => {
                    self.wait_for(ev, start, "command")?;
                    self.command(ev, c)?;
                }
                Action::Code(_) => {
                    self.wait_for(ev, start, "data collection for code")?;
                    let (info, state) = match &self.conn {
                        Some(c) => (c.info_at(Instant::from_nanos(self.now)), c.state()),
                        None if self.sockets.iter().any(|s| s.kind == SockKind::Listener) => {
                            (TcpInfo::default(), TcpState::Listen)
                        }
                        None => return fail(ev.line, "runtime error in code: no socket to use for code"),
                    };
                    self.trace(format!(
                        "{} code snapshot (line {}): cwnd {} ssthresh {} ca_state {:?}",
                        secs(start),
                        ev.line,
                        info.snd_cwnd,
                        info.snd_ssthresh,
                        info.ca_state
                    ));
                    self.snapshots.push(Snapshot { event: idx, line: ev.line, info, state });
                }
            }
            self.last_event_us = Some(start);
            self.last_event_inbound = inbound;
            if ev.time.is_absolute() {
                self.last_absolute_us = Some(start);
            }
        }
        self.finish_blocking()?;
        Ok(())
    }

    /// `wait_for_event` + `check_event_time`.
    fn wait_for(&mut self, ev: &Event, t_us: i64, what: &str) -> Result<(), Stop> {
        if ns(t_us) > self.now {
            self.advance_to(ns(t_us))?;
        }
        let actual = us(self.now);
        let tol = self.tolerance(t_us);
        if actual > t_us + tol {
            return fail(
                ev.line,
                format!(
                    "timing error: expected {what} at {} sec but happened at {} sec; tolerance {} sec",
                    secs(t_us),
                    secs(actual),
                    secs(tol)
                ),
            );
        }
        Ok(())
    }

    fn command(&mut self, ev: &Event, c: &Command) -> Result<(), Stop> {
        let before = self.harness.tcp_config();
        let mut h = self.harness.clone();
        h.run(&c.text).map_err(Stop::Skip)?;
        if self.conn.is_some() && h.tcp_config() != before {
            return Err(Stop::Skip(format!(
                "line {}: `{}` changes the TCP configuration of an open connection (the core reads its \
                 TcpConfig at creation only)",
                ev.line,
                c.text.trim()
            )));
        }
        if h.qdisc == Qdisc::Fq && self.harness.qdisc != Qdisc::Fq {
            self.notes.push(format!("line {}: qdisc fq set; pacing is not modelled", ev.line));
        }
        let blackhole = h.qdisc == Qdisc::Blackhole;
        if blackhole != (self.harness.qdisc == Qdisc::Blackhole) {
            if let Some(c) = self.conn.as_mut() {
                c.set_xmit_blocked(blackhole);
            }
        }
        self.harness = h;
        if self.conn.is_some() {
            self.after_input()?;
        }
        Ok(())
    }

    // ------------------------------------------------------------------
    // Packets
    // ------------------------------------------------------------------

    fn inbound(&mut self, ev: &Event, p: &PacketSpec) -> Result<(), Stop> {
        if self.conn.is_none() {
            let listening = self.sockets.iter().any(|s| s.kind == SockKind::Listener);
            if !listening {
                return fail(ev.line, "error handling packet: no matching socket for script packet");
            }
            let cfg = self.conn_config();
            let mut c = self.factory.server(&cfg, LOCAL_PORT, REMOTE_PORT, SeqNum(LOCAL_ISN));
            c.set_nodelay(self.nodelay);
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
        // --mss: the tun device segments a large inbound payload (GSO):
        // PSH and FIN on the last piece, CWR on the first.
        let mut segs = Vec::new();
        match self.plan.gso_mss {
            Some(mss) if p.payload > mss && !flags.syn() => {
                let mut off = 0;
                while off < p.payload {
                    let len = mss.min(p.payload - off);
                    let mut s = base;
                    s.seq = base.seq + off;
                    s.payload_len = len;
                    if off + len < p.payload {
                        s.flags.remove(TcpFlags::PSH | TcpFlags::FIN);
                    }
                    if off > 0 {
                        s.flags.remove(TcpFlags::CWR);
                    }
                    segs.push(s);
                    off += len;
                }
            }
            _ => segs.push(base),
        }
        let tr = format!("inbound injected: {}", matcher::fmt_script(p, us(self.now)));
        self.trace(tr);
        for s in segs {
            if let Some(c) = self.conn.as_mut() {
                c.handle_segment(Instant::from_nanos(self.now), &s);
            }
            self.after_input()?;
        }
        Ok(())
    }

    fn outbound(&mut self, ev: &Event, p: &PacketSpec, start: i64, end: i64, offset: i64) -> Result<(), Stop> {
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

    // ------------------------------------------------------------------
    // System calls
    // ------------------------------------------------------------------

    fn socket_mut(&mut self, fd: i64) -> Option<&mut Socket> {
        self.sockets.iter_mut().find(|s| s.fd == fd)
    }

    fn arg_int(&self, s: &SyscallSpec, i: usize, line: u32) -> Result<i64, Stop> {
        let e = s.args.get(i).ok_or(Stop::Fail {
            line,
            message: format!("runtime error in {} call: Argument list too short", s.name),
        })?;
        eval_int(e).ok_or_else(|| Stop::Fail {
            line,
            message: format!("runtime error in {} call: bad integer argument {e}", s.name),
        })
    }

    fn finish_blocking(&mut self) -> Result<(), Stop> {
        let Some(b) = self.blocking.clone() else { return Ok(()) };
        if b.done_ns.is_none() {
            // The call is still blocked: nothing but timers can free it now.
            let limit = ns(b.end_us.max(us(self.now)) + MISSING_PACKET_US);
            while self.blocking.as_ref().is_some_and(|x| x.done_ns.is_none()) {
                let next = self.conn.as_ref().and_then(|c| c.poll_timeout()).map(|d| d.as_nanos().max(self.now));
                match next {
                    Some(d) if d <= limit => self.advance_to(d)?,
                    _ => break,
                }
                self.progress_blocking();
            }
        }
        let b = self.blocking.take().unwrap_or(b);
        let Some(done) = b.done_ns else {
            return fail(
                b.line,
                format!(
                    "timing error: expected system call return at {} sec but the {}() call was still blocked at {} sec",
                    secs(b.end_us),
                    b.name,
                    secs(us(self.now))
                ),
            );
        };
        let t = us(done);
        let tol = self.plan.tolerance_usecs;
        if t < b.end_us - tol || t > b.end_us + tol {
            return fail(
                b.line,
                format!(
                    "timing error: expected system call return at {} sec but happened at {} sec; tolerance {} sec",
                    secs(b.end_us),
                    secs(t),
                    secs(tol)
                ),
            );
        }
        if b.ret != b.expected {
            return fail(
                b.line,
                format!("runtime error in {} call: Expected result {} but got {}", b.name, b.expected, b.ret),
            );
        }
        Ok(())
    }

    fn syscall(&mut self, ev: &Event, s: &SyscallSpec, end_us: Option<i64>) -> Result<(), Stop> {
        let line = ev.line;
        let name = s.name.as_str();
        let rt = |m: String| Stop::Fail { line, message: format!("runtime error in {name} call: {m}") };
        let expected = eval_int(&s.result).ok_or_else(|| rt(format!("bad expected result {}", s.result)))?;
        let fd = if name == "socket" { -1 } else { self.arg_int(s, 0, line)? };
        let sock = self.sockets.iter().find(|x| x.fd == fd).cloned();
        if name != "socket" && sock.is_none() {
            return Err(rt(format!("unable to find socket with script fd {fd}")));
        }
        let nonblocking = sock.as_ref().is_some_and(|x| x.nonblocking);
        let is_conn = sock.as_ref().is_some_and(|x| x.kind == SockKind::Conn);
        let now_s = secs(us(self.now));
        let would_block = |what: &str| {
            rt(format!("{what} would block at {now_s} sec (the script does not mark the call as blocking with `...`)"))
        };
        let trace = format!(
            "{} syscall: {name}({}) expecting {}",
            secs(us(self.now)),
            s.args.iter().map(|a| a.to_string()).collect::<Vec<_>>().join(", "),
            s.result
        );
        self.trace(trace);
        // (return value, errno name)
        let (ret, errno): (i64, Option<&str>) = match name {
            "socket" => {
                if self.sockets.iter().any(|x| x.fd == expected) {
                    return Err(rt(format!("duplicate socket fd {expected} in script")));
                }
                if expected < 0 {
                    return Err(rt(format!("invalid socket fd {expected} in script")));
                }
                self.sockets.push(Socket { fd: expected, kind: SockKind::New, nonblocking: false });
                (expected, None)
            }
            "bind" => (0, None),
            "listen" => {
                let so = self.socket_mut(fd).ok_or_else(|| rt("no socket".into()))?;
                if so.kind != SockKind::New {
                    return Err(rt(format!("bad listen(); script fd {fd} in state {:?}", so.kind)));
                }
                so.kind = SockKind::Listener;
                (0, None)
            }
            "accept" => {
                if sock.as_ref().map(|x| x.kind) != Some(SockKind::Listener) {
                    return Err(rt(format!("accept() on script fd {fd}, which is not listening")));
                }
                let ready = self.conn.as_ref().is_some_and(|c| established(c.state())) && self.conn_fd.is_none();
                if ready {
                    self.sockets.push(Socket { fd: expected, kind: SockKind::Conn, nonblocking: false });
                    self.conn_fd = Some(expected);
                    (expected, None)
                } else if let Some(end) = end_us {
                    self.sockets.push(Socket { fd: expected, kind: SockKind::Conn, nonblocking: false });
                    self.start_blocking(line, name, BlockKind::Accept { fd: expected }, end, expected, expected);
                    return Ok(());
                } else if nonblocking {
                    (-1, Some("EAGAIN"))
                } else {
                    return Err(would_block("accept()"));
                }
            }
            "connect" => {
                if self.conn.is_some() {
                    return Err(rt("only one connection per script is modelled".into()));
                }
                let cfg = self.conn_config();
                let mut c = self.factory.client(
                    &cfg,
                    CLIENT_PORT,
                    LOCAL_PORT,
                    SeqNum(LOCAL_ISN),
                    Instant::from_nanos(self.now),
                );
                c.set_nodelay(self.nodelay);
                c.set_user_timeout(self.user_timeout);
                c.set_xmit_blocked(self.harness.qdisc == Qdisc::Blackhole);
                self.conn = Some(c);
                self.passive = false;
                self.conn_fd = Some(fd);
                if let Some(so) = self.socket_mut(fd) {
                    so.kind = SockKind::Conn;
                }
                self.after_input()?;
                if let Some(end) = end_us {
                    self.start_blocking(line, name, BlockKind::Connect, end, expected, 0);
                    return Ok(());
                }
                if nonblocking {
                    (-1, Some("EINPROGRESS"))
                } else {
                    return Err(would_block("connect()"));
                }
            }
            "write" | "send" => {
                let n = self.arg_int(s, 2, line)?.max(0) as u64;
                if !is_conn || self.conn.is_none() {
                    return Err(rt(format!("{name}() on script fd {fd}, which has no connection")));
                }
                let state = self.conn.as_ref().map(|c| c.state()).unwrap_or(TcpState::Closed);
                // sk_err first (sock_error in sk_stream_error), then EPIPE.
                let err = self.conn.as_mut().and_then(|c| c.take_error());
                if let Some(TcpError::TimedOut) = err {
                    (-1, Some("ETIMEDOUT"))
                } else if matches!(state, TcpState::Closed | TcpState::TimeWait | TcpState::Listen) {
                    (-1, Some("EPIPE"))
                } else {
                    let conn = self.conn.as_mut().ok_or_else(|| rt("no connection".into()))?;
                    let eor = name == "send" && s.args.get(3).and_then(eval_int).unwrap_or(0) & MSG_EOR != 0;
                    let done = if matches!(state, TcpState::SynSent | TcpState::SynReceived) {
                        0
                    } else if eor {
                        conn.write_eor(n)
                    } else {
                        conn.write(n)
                    };
                    self.after_input()?;
                    if done == n {
                        (n as i64, None)
                    } else if let Some(end) = end_us {
                        self.start_blocking(
                            line,
                            name,
                            BlockKind::Write { remaining: n - done, eor },
                            end,
                            expected,
                            n as i64,
                        );
                        self.after_input()?;
                        return Ok(());
                    } else if nonblocking {
                        if done > 0 {
                            (done as i64, None)
                        } else {
                            (-1, Some("EAGAIN"))
                        }
                    } else {
                        return Err(would_block(&format!("{name}() of {n} bytes ({done} accepted)")));
                    }
                }
            }
            "read" | "recv" => {
                let max = self.arg_int(s, 2, line)?.max(0) as u64;
                let conn = self
                    .conn
                    .as_mut()
                    .filter(|_| is_conn)
                    .ok_or_else(|| rt(format!("{name}() on script fd {fd}, which has no connection")))?;
                let n = conn.read(max);
                self.after_input()?;
                let closed = self.conn.as_ref().is_some_and(|c| {
                    matches!(
                        c.state(),
                        TcpState::CloseWait
                            | TcpState::Closed
                            | TcpState::LastAck
                            | TcpState::TimeWait
                            | TcpState::Closing
                    )
                });
                if n > 0 || closed {
                    (n as i64, None)
                } else if let Some(end) = end_us {
                    self.start_blocking(line, name, BlockKind::Read { max }, end, expected, 0);
                    return Ok(());
                } else if nonblocking {
                    (-1, Some("EAGAIN"))
                } else {
                    return Err(would_block(&format!("{name}()")));
                }
            }
            "close" | "shutdown" => {
                if is_conn {
                    if let Some(c) = self.conn.as_mut() {
                        if name == "close" {
                            // tcp_close: sk_shutdown = SHUTDOWN_MASK.
                            c.shutdown_read();
                        }
                        c.close();
                    }
                    self.after_input()?;
                }
                if name == "close" {
                    self.sockets.retain(|x| x.fd != fd);
                }
                (0, None)
            }
            "fcntl" => {
                let cmd = self.arg_int(s, 1, line)?;
                match cmd {
                    3 => (O_RDWR | if nonblocking { O_NONBLOCK } else { 0 }, None),
                    4 => {
                        let flags = self.arg_int(s, 2, line)?;
                        if let Some(so) = self.socket_mut(fd) {
                            so.nonblocking = flags & O_NONBLOCK != 0;
                        }
                        (0, None)
                    }
                    other => return Err(Stop::Skip(format!("line {line}: fcntl command {other} is not modelled"))),
                }
            }
            "setsockopt" => {
                let opt = s.args.get(2).and_then(|e| e.as_word()).unwrap_or("");
                let val = s.args.get(3).and_then(|e| e.bracketed()).and_then(eval_int);
                match opt {
                    "TCP_NODELAY" => {
                        let on = val.unwrap_or(0) != 0;
                        self.nodelay = on;
                        if let Some(c) = self.conn.as_mut() {
                            c.set_nodelay(on);
                        }
                    }
                    "TCP_USER_TIMEOUT" => {
                        self.user_timeout = val.unwrap_or(0).clamp(0, u32::MAX as i64) as u32;
                        if let Some(c) = self.conn.as_mut() {
                            c.set_user_timeout(self.user_timeout);
                        }
                    }
                    "TCP_CONGESTION" => {
                        let name = s.args.get(3).map(|e| match e.bracketed().unwrap_or(e) {
                            Expr::Str(s) | Expr::Word(s) => s.clone(),
                            other => other.to_string(),
                        });
                        let cc = name.as_deref().and_then(|n| {
                            if n == "cubic" {
                                Some(tcplab_core::cc::CcConfig::Cubic(self.harness.cubic.clone()))
                            } else {
                                tcplab_core::cc::CcConfig::from_name(n)
                            }
                        });
                        match cc {
                            Some(cc) => self.harness.cfg.congestion_control = cc,
                            None => {
                                return Err(Stop::Skip(format!(
                                    "line {line}: congestion control {name:?} is not in the model"
                                )))
                            }
                        }
                    }
                    // Folded into the configuration by the plan; the plan
                    // skipped the script where that is not equivalent.
                    "SO_SNDBUF" | "SO_RCVBUF" | "SO_REUSEADDR" | "IP_MTU_DISCOVER" | "IP_TOS" => {}
                    other => return Err(Stop::Skip(format!("line {line}: unsupported socket option {other}"))),
                }
                (0, None)
            }
            "getsockopt" => {
                let opt = s.args.get(2).and_then(|e| e.as_word()).unwrap_or("");
                let want = s.args.get(3).and_then(|e| e.bracketed()).and_then(eval_int);
                let got = match opt {
                    "SO_ERROR" => {
                        let refused = self.conn.as_ref().is_some_and(|c| c.state() == TcpState::Closed);
                        if refused {
                            111
                        } else {
                            0
                        }
                    }
                    "SO_SNDBUF" => match self.plan.so_sndbuf {
                        Some(v) => (v as i64) * 2,
                        None => {
                            return Err(Stop::Skip(format!(
                                "line {line}: getsockopt(SO_SNDBUF) without a prior setsockopt needs Connection::sndbuf() (sk_sndbuf)"
                            )))
                        }
                    },
                    other => return Err(Stop::Skip(format!("line {line}: unsupported socket option getsockopt({other})"))),
                };
                if let Some(w) = want {
                    if w != got {
                        return Err(rt(format!("Bad getsockopt optval: expected: {w} actual: {got}")));
                    }
                }
                (0, None)
            }
            other => return Err(Stop::Skip(format!("line {line}: unsupported system call {other}()"))),
        };
        if let Some(end) = end_us {
            // A call marked blocking that returned at once.
            self.blocking = Some(Blocking {
                line,
                name: name.to_string(),
                kind: BlockKind::Connect,
                end_us: end,
                expected,
                ret,
                done_ns: Some(self.now),
            });
            return Ok(());
        }
        check_result(name, expected, ret, errno, s.errno.as_deref()).map_err(rt)
    }

    #[allow(clippy::too_many_arguments)]
    fn start_blocking(&mut self, line: u32, name: &str, kind: BlockKind, end_us: i64, expected: i64, ret: i64) {
        self.trace(format!("{} blocking {name}() started, expected to return at {}", secs(us(self.now)), secs(end_us)));
        self.blocking = Some(Blocking { line, name: name.to_string(), kind, end_us, expected, ret, done_ns: None });
        self.progress_blocking();
    }

    // ------------------------------------------------------------------
    // Python
    // ------------------------------------------------------------------

    fn run_code(&mut self) -> Result<(), Stop> {
        if self.snapshots.is_empty() {
            return Ok(());
        }
        let mut py = Interpreter::new();
        for (name, v) in [
            ("TCP_ESTABLISHED", 1),
            ("TCP_SYN_SENT", 2),
            ("TCP_SYN_RECV", 3),
            ("TCP_FIN_WAIT1", 4),
            ("TCP_FIN_WAIT2", 5),
            ("TCP_TIME_WAIT", 6),
            ("TCP_CLOSE", 7),
            ("TCP_CLOSE_WAIT", 8),
            ("TCP_LAST_ACK", 9),
            ("TCP_LISTEN", 10),
            ("TCP_CLOSING", 11),
            ("TCP_CA_Open", CaState::Open as i128),
            ("TCP_CA_Disorder", CaState::Disorder as i128),
            ("TCP_CA_CWR", CaState::Cwr as i128),
            ("TCP_CA_Recovery", CaState::Recovery as i128),
            ("TCP_CA_Loss", CaState::Loss as i128),
            ("TCPI_OPT_TIMESTAMPS", 1),
            ("TCPI_OPT_SACK", 2),
            ("TCPI_OPT_WSCALE", 4),
            ("TCPI_OPT_ECN", 8),
            ("TCPI_OPT_ECN_SEEN", 16),
            ("TCPI_OPT_SYN_DATA", 32),
        ] {
            py.set(name, Value::Int(v));
        }
        let snaps = std::mem::take(&mut self.snapshots);
        for snap in &snaps {
            for (name, v) in tcpi_values(&snap.info, snap.state) {
                py.set(name, Value::Int(v));
            }
            let program = match self.plan.programs.get(snap.event).and_then(|p| p.as_ref()) {
                Some(Ok(p)) => p,
                Some(Err(e)) => return fail(snap.line, format!("error in Python code\n{e}")),
                None => continue,
            };
            let r = py.run(program);
            self.output.append(&mut py.output);
            match r {
                Ok(()) => {}
                Err(e @ PyError::Exception { .. }) => return fail(snap.line, format!("error in Python code\n{e}")),
                Err(PyError::Unsupported(m)) => {
                    return Err(Stop::Skip(format!("line {}: unsupported Python construct: {m}", snap.line)))
                }
            }
        }
        Ok(())
    }
}

fn established(s: TcpState) -> bool {
    !matches!(s, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
}

/// `end_syscall`'s checks of the return value and errno.
fn check_result(
    name: &str,
    expected: i64,
    ret: i64,
    errno: Option<&str>,
    want_errno: Option<&str>,
) -> Result<(), String> {
    let _ = name;
    if ret != expected {
        return Err(match errno.and_then(errno_info) {
            Some((n, text)) if ret < 0 => format!("Expected result {expected} but got {ret} with errno {n} ({text})"),
            _ => format!("Expected result {expected} but got {ret}"),
        });
    }
    if let Some(w) = want_errno {
        let (wn, wt) = errno_info(w).ok_or_else(|| format!("unknown errno name {w}"))?;
        let (an, at) = errno.and_then(errno_info).unwrap_or((0, "Success"));
        if wn != an {
            return Err(format!("Expected errno {wn} ({wt}) but got {an} ({at})"));
        }
    }
    Ok(())
}

/// The `tcpi_*` assignments packetdrill writes for a snapshot.
fn tcpi_values(i: &TcpInfo, state: TcpState) -> Vec<(&'static str, i128)> {
    let st = match state {
        TcpState::Established => 1,
        TcpState::SynSent => 2,
        TcpState::SynReceived => 3,
        TcpState::FinWait1 => 4,
        TcpState::FinWait2 => 5,
        TcpState::TimeWait => 6,
        TcpState::Closed => 7,
        TcpState::CloseWait => 8,
        TcpState::LastAck => 9,
        TcpState::Listen => 10,
        TcpState::Closing => 11,
    };
    vec![
        ("tcpi_state", st),
        ("tcpi_ca_state", i.ca_state as i128),
        ("tcpi_backoff", i.backoff as i128),
        ("tcpi_rto", i.rto_us as i128),
        ("tcpi_snd_mss", i.snd_mss as i128),
        ("tcpi_rcv_mss", i.rcv_mss as i128),
        ("tcpi_unacked", i.unacked as i128),
        ("tcpi_sacked", i.sacked as i128),
        ("tcpi_lost", i.lost as i128),
        ("tcpi_retrans", i.retrans as i128),
        ("tcpi_rtt", i.rtt_us as i128),
        ("tcpi_rttvar", i.rttvar_us as i128),
        ("tcpi_snd_ssthresh", i.snd_ssthresh as i128),
        ("tcpi_snd_cwnd", i.snd_cwnd as i128),
        ("tcpi_reordering", i.reordering as i128),
        ("tcpi_total_retrans", i.total_retrans as i128),
        ("tcpi_pacing_rate", i.pacing_rate as i128),
        ("tcpi_min_rtt", i.min_rtt_us as i128),
        ("tcpi_data_segs_out", i.data_segs_out as i128),
        ("tcpi_delivered", i.delivered as i128),
        ("tcpi_delivered_ce", i.delivered_ce as i128),
        ("tcpi_bytes_acked", i.bytes_acked as i128),
        ("tcpi_bytes_received", i.bytes_received as i128),
        ("tcpi_reord_seen", i.reord_seen as i128),
        ("tcpi_snd_wnd", i.snd_wnd as i128),
        ("tcpi_rcv_wnd", i.rcv_wnd as i128),
        ("tcpi_busy_time", i.busy_time_us as i128),
        ("tcpi_rwnd_limited", i.rwnd_limited_us as i128),
        ("tcpi_sndbuf_limited", i.sndbuf_limited_us as i128),
        ("tcpi_last_data_recv", i.last_data_recv_ms as i128),
        ("tcpi_probes", i.probes as i128),
    ]
}

#[cfg(test)]
#[path = "driver_tests.rs"]
mod tests;
