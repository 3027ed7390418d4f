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
use crate::matcher::SeqMap;
use crate::plan::Plan;
use blocking::Blocking;
use code::Snapshot;
use std::collections::VecDeque;
use tcplab_core::wire::SegmentRepr;
use tcplab_core::{Instant, TcpConfig, TcpInfo, TcpState};

mod blocking;
mod code;
mod packets;
mod syscalls;
mod time;

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
    /// `TCP_CORK` set on the socket (before or after it connected).
    cork: bool,
    /// `TCP_NOTSENT_LOWAT` as set (`tp->notsent_lowat`, 0 = unset).
    notsent_lowat: u32,
    /// `TCP_MAXSEG` as set before the connection (`user_mss`, 0 = unset).
    user_mss: u32,
    /// fq holds the connection's next skb until this time, ns.
    pace_wake: Option<u64>,
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
            cork: false,
            notsent_lowat: 0,
            user_mss: 0,
            pace_wake: None,
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
        c.user_mss = self.user_mss;
        c
    }

    /// The larger of `--tolerance_usecs` and `--tolerance_percent` of the
    /// gap since the previous event's script time.
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
                // The plan skips every script with one (plan.rs).
                Action::Icmp(_) => return fail(ev.line, "ICMP messages are not modelled"),
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
                    self.syscall(ev, idx, s, end_us)?;
                }
                Action::Command(c) => {
                    self.wait_for(ev, start, "command")?;
                    self.command(ev, c)?;
                }
                Action::Code(_) => {
                    self.wait_for(ev, start, "data collection for code")?;
                    let (info, state, advmss, notsent_bytes) = match &self.conn {
                        Some(c) => (c.info_at(Instant::from_nanos(self.now)), c.state(), c.advmss(), c.outq_not_sent()),
                        None if self.sockets.iter().any(|s| s.kind == SockKind::Listener) => {
                            (TcpInfo::default(), TcpState::Listen, 0, 0)
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
                    self.snapshots.push(Snapshot { event: idx, line: ev.line, info, state, advmss, notsent_bytes });
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
            self.notes.push(format!("line {}: qdisc fq set mid-script; the connection is not paced", ev.line));
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
}

fn established(s: TcpState) -> bool {
    !matches!(s, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
}

#[cfg(test)]
mod tests;
