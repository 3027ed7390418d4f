//! Checks made before a script runs: header options, the init and cleanup
//! commands, and every event the model cannot honour. Each problem
//! becomes a skip reason naming the construct (and the core API that
//! would lift it, where there is one), so a skipped script never runs
//! half-way.

use crate::ast::*;
use crate::harness::{Harness, Qdisc};
use crate::python::{self, Program, PyError};
use crate::syscall::{PlannedSocket, Syscall};
use std::collections::BTreeSet;

/// `tcpi_*` names the model's `TcpInfo` (plus `state()`) provides.
pub const TCPI_FIELDS: &[&str] = &[
    "tcpi_state",
    "tcpi_ca_state",
    "tcpi_backoff",
    "tcpi_rto",
    "tcpi_snd_mss",
    "tcpi_rcv_mss",
    "tcpi_unacked",
    "tcpi_sacked",
    "tcpi_lost",
    "tcpi_retrans",
    "tcpi_rtt",
    "tcpi_rttvar",
    "tcpi_snd_ssthresh",
    "tcpi_snd_cwnd",
    "tcpi_reordering",
    "tcpi_total_retrans",
    "tcpi_pacing_rate",
    "tcpi_min_rtt",
    "tcpi_data_segs_out",
    "tcpi_delivered",
    "tcpi_delivered_ce",
    "tcpi_bytes_acked",
    "tcpi_bytes_received",
    "tcpi_reord_seen",
    "tcpi_snd_wnd",
    "tcpi_rcv_wnd",
    "tcpi_busy_time",
    "tcpi_rwnd_limited",
    "tcpi_sndbuf_limited",
    "tcpi_last_data_recv",
    "tcpi_probes",
    "tcpi_advmss",
    "tcpi_notsent_bytes",
];

/// Everything decided before the run.
#[derive(Debug, Default)]
pub struct Plan {
    pub tolerance_usecs: i64,
    /// Percent of the gap since the previous event added to the tolerance.
    pub tolerance_percent: f64,
    pub strict_segments: bool,
    pub ts_tick_usecs: u32,
    /// `--mss`: inbound payloads larger than this are split as GSO would.
    pub gso_mss: Option<u32>,
    /// `SO_SNDBUF` folded into the connection's configuration (set before
    /// any data was written on it; see the driver docs).
    pub so_sndbuf: Option<u32>,
    /// `SO_RCVBUF` set before the connection existed.
    pub so_rcvbuf: Option<u32>,
    /// Decoded system calls by event index (`None` for other events);
    /// the driver runs these.
    pub syscalls: Vec<Option<Syscall>>,
    /// Parsed `%{ }%` blocks by event index (a syntax error is kept and
    /// raised when the block would run, as Python would).
    pub programs: Vec<Option<Result<Program, PyError>>>,
    pub skips: Vec<String>,
    pub notes: Vec<String>,
}

impl Plan {
    /// Records a skip reason once per construct: a reason repeated on
    /// several lines is kept with its first line only.
    fn skip(&mut self, r: String) {
        fn body(s: &str) -> &str {
            match s.strip_prefix("line ") {
                Some(rest) => rest.split_once(": ").map(|(_, b)| b).unwrap_or(s),
                None => s,
            }
        }
        if !self.skips.iter().any(|s| body(s) == body(&r)) {
            self.skips.push(r);
        }
    }
}

fn header_options(script: &Script, plan: &mut Plan) {
    for o in &script.options {
        let v = o.value.as_deref().unwrap_or("");
        let int = || v.parse::<i64>().ok();
        match o.name.as_str() {
            "tolerance_usecs" => match int() {
                Some(t) if t >= 0 => plan.tolerance_usecs = t,
                _ => plan.skip(format!("bad option --tolerance_usecs={v}")),
            },
            "tolerance_percent" => match v.parse::<f64>() {
                Ok(p) if p >= 0.0 => plan.tolerance_percent = p,
                _ => plan.skip(format!("bad option --tolerance_percent={v}")),
            },
            "strict_segments" => plan.strict_segments = true,
            "tcp_ts_tick_usecs" => match int() {
                Some(t) if t >= 0 => plan.ts_tick_usecs = t as u32,
                _ => plan.skip(format!("bad option --tcp_ts_tick_usecs={v}")),
            },
            "mss" => match int() {
                Some(m) if m > 0 => plan.gso_mss = Some(m as u32),
                _ => plan.skip(format!("bad option --mss={v}")),
            },
            "ip_version" => {
                if v != "ipv4" {
                    plan.skip(format!("option --ip_version={v}: only IPv4 is modelled"));
                }
            }
            // Addresses and ports are implicit in the model.
            "local_ip" | "remote_ip" | "gateway_ip" | "netmask_ip" | "bind_port" | "connect_port" => {
                if v.contains(':') {
                    plan.skip(format!("option --{}={v}: IPv6 addresses are not modelled", o.name));
                }
            }
            "verbose" | "non_fatal" => {}
            "mtu" => plan.skip(format!("option --mtu={v}: set the MTU with `ip route ... mtu` instead")),
            other => plan.skip(format!("unsupported option --{other}")),
        }
    }
}

fn syscalls(script: &Script, plan: &mut Plan) {
    let mut sock = PlannedSocket::default();
    plan.syscalls = vec![None; script.events.len()];
    for (i, ev) in script.events.iter().enumerate() {
        match &ev.action {
            Action::Packet(p) => {
                if p.direction == Direction::Inbound {
                    sock.connection_started = true;
                }
                if p.flags.has_accecn() {
                    plan.skip(format!("line {}: AccECN flags (AE, ACE field) are not modelled", ev.line));
                }
                if let Some(IpCheck::Tos(t)) = p.ip {
                    if t & 0xfc != 0 {
                        plan.skip(format!("line {}: TOS byte checks beyond the ECN bits are not modelled", ev.line));
                    }
                }
                if let Some(opts) = &p.options {
                    if let Some(TcpOpt::Other(t)) = opts.iter().find(|o| matches!(o, TcpOpt::Other(_))) {
                        plan.skip(format!("line {}: TCP option `{t}` is not modelled", ev.line));
                    }
                }
            }
            Action::Syscall(s) => {
                let Some(call) = Syscall::decode(s) else {
                    plan.skip(format!("line {}: unsupported system call {}()", ev.line, s.name));
                    continue;
                };
                if let Err(reason) = call.check(ev.line, &mut sock) {
                    plan.skip(reason);
                }
                plan.syscalls[i] = Some(call);
            }
            Action::Icmp(m) => plan.skip(format!(
                "line {}: ICMP messages are not modelled (icmp {}: tcp_v4_err, PMTU discovery)",
                ev.line, m.icmp_type
            )),
            Action::Command(_) | Action::Code(_) => {}
        }
    }
    plan.so_sndbuf = sock.so_sndbuf;
    plan.so_rcvbuf = sock.so_rcvbuf;
}

fn code_blocks(script: &Script, plan: &mut Plan) {
    let mut assigned: BTreeSet<String> = BTreeSet::new();
    let mut missing: BTreeSet<String> = BTreeSet::new();
    plan.programs = vec![None; script.events.len()];
    for (i, ev) in script.events.iter().enumerate() {
        let Action::Code(c) = &ev.action else { continue };
        let parsed = python::parse_program(c.text.trim());
        match &parsed {
            Err(PyError::Unsupported(m)) => {
                plan.skip(format!("line {}: unsupported Python construct in %{{ }}%: {m}", ev.line));
            }
            Err(_) => {}
            Ok(p) => {
                for n in p.names_read() {
                    if n.starts_with("tcpi_") && !TCPI_FIELDS.contains(&n.as_str()) && !assigned.contains(n) {
                        missing.insert(n.clone());
                    }
                }
                // Names a block assigns are its own variables afterwards.
                for line in c.text.split(['\n', ';']) {
                    if let Some((lhs, _)) = line.split_once('=') {
                        let lhs = lhs.trim().trim_end_matches(['+', '-', '*', '/', '%', '&', '|', '^']).trim();
                        if lhs.chars().all(|ch| ch.is_alphanumeric() || ch == '_') && !lhs.is_empty() {
                            assigned.insert(lhs.to_string());
                        }
                    }
                }
            }
        }
        plan.programs[i] = Some(parsed);
    }
    for m in missing {
        plan.skip(format!("tcp_info field {m} is not in the model's TcpInfo"));
    }
}

/// Builds the plan; the init and cleanup commands are run on `harness`
/// (the cleanup on a copy, for its skip reasons only).
pub fn make_plan(script: &Script, harness: &mut Harness) -> Plan {
    let mut plan = Plan { tolerance_usecs: 4000, tolerance_percent: 12.5, ..Plan::default() };
    header_options(script, &mut plan);
    if let Some(c) = &script.init_command {
        if let Err(e) = harness.run(&c.text) {
            plan.skip(e);
        }
    }
    if let Some(c) = &script.cleanup_command {
        if let Err(e) = harness.clone().run(&c.text) {
            plan.skip(e);
        }
    }
    syscalls(script, &mut plan);
    code_blocks(script, &mut plan);
    // Pacing: fq from the init command paces the connection from its
    // first packet (sch_fq's EDT holding, Connection::set_pacing_fq); fq
    // set by a later command would start mid-flow, which is not run.
    let mut fq_from: Option<u32> = None;
    for ev in &script.events {
        match &ev.action {
            Action::Command(c) => {
                let mut h = harness.clone();
                match h.run(&c.text) {
                    Err(e) => plan.skip(format!("line {}: {e}", ev.line)),
                    Ok(()) if h.qdisc == Qdisc::Fq && harness.qdisc != Qdisc::Fq && fq_from.is_none() => {
                        fq_from = Some(ev.line)
                    }
                    Ok(()) => {}
                }
            }
            Action::Packet(p) if p.direction == Direction::Outbound && p.payload > 0 && fq_from.is_some() => {
                plan.skip(format!(
                    "qdisc fq set by a command at line {} and line {} expects an outbound data segment: \
                     pacing that starts mid-connection is not run",
                    fq_from.unwrap_or(0),
                    ev.line
                ));
                break;
            }
            _ => {}
        }
    }
    plan
}
