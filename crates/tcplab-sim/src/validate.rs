//! [`SimConfig::validate`]: the checks that make a configuration safe to
//! run. A configuration that passes never makes the simulator panic.
//!
//! Messages name the offending field as a path (`links[1].ab.queue.limit`)
//! and say what would be accepted.

use crate::config::{
    AppConfig, DelayModel, DirectionConfig, FqConfig, Limit, Multipath, NodeId, NodeKind, Qdisc, SimConfig,
};
use crate::host::{MAX_CONNECTIONS_PER_HOST, MAX_FLOWS};
use crate::routing::Reachability;
use core::fmt;
use std::collections::{HashMap, HashSet};
use tcplab_core::time::Duration;
use tcplab_core::TcpConfig;

/// Longest propagation delay or jitter accepted (one hour).
pub const MAX_DELAY: Duration = Duration::from_secs(3600);
/// Longest netem slot accepted: longer holds packets past any
/// retransmission timer.
pub const MAX_SLOT: Duration = Duration::from_secs(1);
/// Longest think time, gap between runs or per-run duration accepted
/// (10⁶ s, about 11.6 days).
pub const MAX_APP_TIME: Duration = Duration::from_secs(1_000_000);
/// Largest fq `quantum` (sch_fq.c `fq_change`: `quantum <= (1 << 20)`).
pub const FQ_MAX_QUANTUM: u32 = 1 << 20;

/// The smallest interface MTU a flow may use (the core's, which the `mtu`
/// knob also takes as its minimum).
pub use tcplab_core::config::MIN_MTU;

/// Why a [`SimConfig`] cannot be run.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid simulation config: {}", self.0)
    }
}

impl std::error::Error for ConfigError {}

impl From<String> for ConfigError {
    fn from(s: String) -> Self {
        ConfigError(s)
    }
}

impl SimConfig {
    /// Checks everything the simulator relies on: node references in
    /// range, hosts at the ends of flows and a path between them through
    /// switches, positive rates and limits, `min <= max` delays, distinct
    /// flow ids. The first problem found is returned.
    pub fn validate(&self) -> Result<(), String> {
        if self.duration == Duration::ZERO {
            return Err("duration must be positive".into());
        }
        if self.nodes.is_empty() {
            return Err("nodes: at least one node is needed".into());
        }
        if self.nodes.len() >= u32::MAX as usize || self.links.len() >= (u32::MAX / 2) as usize {
            return Err("too many nodes or links".into());
        }
        if self.trace_interval == Some(Duration::ZERO) {
            return Err("trace_interval must be positive (or absent to disable tracing)".into());
        }
        let n = self.nodes.len();
        for (i, node) in self.nodes.iter().enumerate() {
            let at = format!("nodes[{i}] ({:?})", node.name);
            if node.kind == NodeKind::Host && node.multipath != Multipath::Off {
                return Err(format!("{at}.multipath: a host does not forward; ECMP applies to switches"));
            }
            if node.kind == NodeKind::Switch && node.gro {
                return Err(format!("{at}.gro: GRO merges what a host receives for its TCP; a switch forwards"));
            }
            if let Qdisc::Fq(fq) = &node.qdisc {
                if node.kind != NodeKind::Host {
                    return Err(format!("{at}.qdisc: fq is a host qdisc; a switch's queues are its links' queues"));
                }
                check_fq(&format!("{at}.qdisc"), fq)?;
            }
        }
        for (i, l) in self.links.iter().enumerate() {
            let at = format!("links[{i}] ({:?})", l.name);
            if l.a >= n || l.b >= n {
                return Err(format!("{at}: endpoints {} and {} must be node indices below {n}", l.a, l.b));
            }
            if l.a == l.b {
                return Err(format!("{at}: a link must join two different nodes (both ends are node {})", l.a));
            }
            if l.rate_bps == 0 {
                return Err(format!("{at}.rate_bps must be positive"));
            }
            check_direction(&format!("{at}.ab"), &l.ab)?;
            check_direction(&format!("{at}.ba"), &l.ba)?;
        }
        let conns = self.connections();
        if conns > MAX_FLOWS as u64 {
            return Err(format!(
                "{conns} connections (flows times their repeat runs): at most {MAX_FLOWS} fit one run"
            ));
        }
        let mut per_host: HashMap<NodeId, u64> = HashMap::new();
        for f in &self.flows {
            let n = per_host.entry(f.from).or_default();
            *n += f.repeat.count() as u64;
            if *n > MAX_CONNECTIONS_PER_HOST as u64 {
                return Err(format!(
                    "node {} opens more than {MAX_CONNECTIONS_PER_HOST} client connections (flows times their repeat runs): its client port range is full",
                    f.from
                ));
            }
        }
        let reach = Reachability::new(&self.nodes, &self.links);
        let mut ids: HashSet<&str> = HashSet::with_capacity(self.flows.len());
        for (i, f) in self.flows.iter().enumerate() {
            let at = format!("flows[{i}] ({:?})", f.id);
            for (what, node) in [("from", f.from), ("to", f.to)] {
                if node >= n {
                    return Err(format!("{at}.{what} = {node} must be a node index below {n}"));
                }
                if self.nodes[node].kind != NodeKind::Host {
                    return Err(format!(
                        "{at}.{what} = {node} ({:?}) is a switch; flows run between hosts",
                        self.nodes[node].name
                    ));
                }
            }
            if f.from == f.to {
                return Err(format!("{at}: sender and receiver are the same host ({})", f.from));
            }
            for (a, b) in [(f.from, f.to), (f.to, f.from)] {
                if !reach.connected(a, b) {
                    return Err(format!(
                        "{at}: no path from {:?} to {:?} (hosts connect through switches, never through other hosts)",
                        self.nodes[a].name, self.nodes[b].name
                    ));
                }
            }
            check_tcp(&format!("{at}.tcp"), &f.tcp)?;
            check_tcp(&format!("{at}.tcp_receiver"), &f.tcp_receiver)?;
            let stop = match &f.app {
                AppConfig::Bulk { bytes, stop } => {
                    if *bytes == Some(0) {
                        return Err(format!("{at}.app.bytes must be positive (or absent for unlimited)"));
                    }
                    *stop
                }
                AppConfig::Rpc(r) => {
                    if r.request == 0 || r.response == 0 {
                        return Err(format!("{at}.app: request and response sizes must be positive"));
                    }
                    if r.count == Some(0) {
                        return Err(format!("{at}.app.count must be positive (or absent for no limit)"));
                    }
                    if r.think > MAX_APP_TIME {
                        return Err(format!("{at}.app.think must be at most {MAX_APP_TIME:?}"));
                    }
                    r.stop
                }
            };
            if let Some(stop) = stop {
                if stop <= f.start {
                    return Err(format!("{at}.app.stop ({stop:?}) must be after the flow's start ({:?})", f.start));
                }
            }
            let rep = &f.repeat;
            if rep.runs == 0 {
                return Err(format!("{at}.repeat.runs must be at least 1"));
            }
            if rep.gap > MAX_APP_TIME {
                return Err(format!("{at}.repeat.gap must be at most {MAX_APP_TIME:?}"));
            }
            match rep.duration_each {
                Some(d) if d == Duration::ZERO || d > MAX_APP_TIME => {
                    return Err(format!("{at}.repeat.duration_each must be positive and at most {MAX_APP_TIME:?}"));
                }
                _ => {}
            }
            if rep.runs > 1 {
                if stop.is_some() {
                    return Err(format!(
                        "{at}: app.stop is an absolute time and cannot end each of {} runs; use repeat.duration_each",
                        rep.runs
                    ));
                }
                let finite = rep.duration_each.is_some()
                    || match &f.app {
                        AppConfig::Bulk { bytes, .. } => bytes.is_some(),
                        AppConfig::Rpc(r) => r.count.is_some(),
                    };
                if !finite {
                    return Err(format!(
                        "{at}: with {} runs each run must end: set repeat.duration_each, or app.bytes (bulk) / app.count (rpc)",
                        rep.runs
                    ));
                }
            }
            if !ids.insert(&f.id) {
                return Err(format!("{at}: flow id {:?} is used twice", f.id));
            }
        }
        Ok(())
    }
}

fn check_direction(at: &str, d: &DirectionConfig) -> Result<(), String> {
    match d.delay {
        DelayModel::Fixed(x) if x > MAX_DELAY => Err(format!("{at}.delay {x:?} exceeds {MAX_DELAY:?}")),
        DelayModel::Uniform { min, max } if min > max => {
            Err(format!("{at}.delay: uniform min {min:?} must not exceed max {max:?}"))
        }
        DelayModel::Uniform { max, .. } if max > MAX_DELAY => {
            Err(format!("{at}.delay max {max:?} exceeds {MAX_DELAY:?}"))
        }
        DelayModel::OrderedJitter { base, jitter } if base > MAX_DELAY || jitter > MAX_DELAY => {
            Err(format!("{at}.delay base and jitter must each be at most {MAX_DELAY:?}"))
        }
        DelayModel::RandomWalk { base, amplitude, step, interval } => {
            if base > MAX_DELAY || amplitude > MAX_DELAY || step > MAX_DELAY {
                Err(format!("{at}.delay: random-walk base, amplitude and step must each be at most {MAX_DELAY:?}"))
            } else if interval.is_some_and(|i| i == Duration::ZERO || i > MAX_DELAY) {
                Err(format!("{at}.delay: random-walk interval must be positive and at most {MAX_DELAY:?}"))
            } else {
                Ok(())
            }
        }
        DelayModel::OnOff { base, delay, mean_on, mean_off, slot } => {
            if [base, delay, mean_on, mean_off, slot].iter().any(|d| *d > MAX_DELAY) {
                Err(format!("{at}.delay: on-off times must each be at most {MAX_DELAY:?}"))
            } else if slot == Duration::ZERO {
                Err(format!("{at}.delay: on-off slot must be positive"))
            } else if mean_on < slot || mean_off < slot {
                Err(format!(
                    "{at}.delay: on-off mean_on ({mean_on:?}) and mean_off ({mean_off:?}) must be at least one slot ({slot:?})"
                ))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }?;
    if matches!(d.queue.limit, Limit::Packets(0) | Limit::Bytes(0)) {
        return Err(format!("{at}.queue.limit must be positive"));
    }
    let mut prev_end = Duration::ZERO;
    for (i, b) in d.blackouts.iter().enumerate() {
        if b.end <= b.start {
            return Err(format!("{at}.blackout[{i}]: must last longer than zero"));
        }
        if i > 0 && b.start < prev_end {
            return Err(format!("{at}.blackout[{i}]: starts before blackout[{}] ends; give them in time order", i - 1));
        }
        prev_end = b.end;
    }
    if let Some(slot) = d.slot {
        if slot == Duration::ZERO || slot > MAX_SLOT {
            return Err(format!("{at}.slot must be positive and at most {MAX_SLOT:?}"));
        }
        if matches!(d.delay, DelayModel::Uniform { .. }) {
            return Err(format!(
                "{at}.slot: the uniform delay reorders packets, and a slot is modelled only over a delay that keeps \
                 their order (fixed, ordered-jitter, on-off, random-walk)"
            ));
        }
    }
    if let Some(p) = &d.police {
        if p.rate_bps == 0 {
            return Err(format!("{at}.police.rate must be positive"));
        }
        if p.burst_bytes == 0 {
            return Err(format!("{at}.police.burst must be positive"));
        }
    }
    Ok(())
}

fn check_tcp(at: &str, t: &TcpConfig) -> Result<(), String> {
    if t.mtu < MIN_MTU || t.mtu > u16::MAX as u32 {
        return Err(format!("{at}.mtu = {} must be in {MIN_MTU}..=65535", t.mtu));
    }
    Ok(())
}

fn check_fq(at: &str, q: &FqConfig) -> Result<(), String> {
    if q.limit == 0 || q.flow_limit == 0 {
        return Err(format!("{at}: limit and flow_limit must be positive"));
    }
    if q.quantum == 0 || q.quantum > FQ_MAX_QUANTUM {
        return Err(format!("{at}.quantum = {} must be in 1..={FQ_MAX_QUANTUM} bytes", q.quantum));
    }
    if q.initial_quantum > i32::MAX as u32 {
        return Err(format!("{at}.initial_quantum = {} must be at most {} bytes", q.initial_quantum, i32::MAX));
    }
    if q.flow_refill_delay > MAX_DELAY || q.ce_threshold.is_some_and(|c| c > MAX_DELAY) {
        return Err(format!("{at}: flow_refill_delay and ce_threshold must each be at most {MAX_DELAY:?}"));
    }
    Ok(())
}
