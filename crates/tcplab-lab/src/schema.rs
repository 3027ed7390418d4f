//! The scenario schema: validation of the value tree ([`crate::tree`])
//! into a [`SimConfig`].
//!
//! Every check names the field by its dotted path (`flow[0].cc`) and the
//! place the value came from. Validation never panics: every lookup is
//! checked, every number range-checked, every unit parsed by a total
//! parser. docs/scenarios.md is the user-facing reference for this file;
//! keep the two in step.

use crate::error::{did_you_mean, Error, Result};
use crate::field::{join, F, T};
use crate::tree::{Node, Origin, Source, Tree, Value};
use crate::units;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tcplab_core::cc::CcConfig;
use tcplab_core::config::PRESETS;
use tcplab_core::knobs::{self, IntUnit, Kind, KnobSpec};
use tcplab_core::time::Duration;
use tcplab_core::TcpConfig;
use tcplab_sim::config::{
    AppConfig, Blackout, DelayModel, DirectionConfig, FlowConfig, FqConfig, FqPacing, Limit, LinkConfig, LossModel,
    Multipath, NodeConfig, NodeKind, Police, Qdisc, QueueConfig, Repeat, RpcConfig, SimConfig,
};
use tcplab_sim::{Reachability, FQ_MAX_QUANTUM, MAX_APP_TIME, MAX_CONNECTIONS_PER_HOST, MAX_DELAY, MAX_FLOWS};

/// Default drop-tail limit of a queue: Linux's default `txqueuelen`.
pub const DEFAULT_QUEUE_LIMIT: Limit = Limit::Packets(1000);

/// Default slot of the `on-off` delay model.
pub const DEFAULT_ON_OFF_SLOT: Duration = Duration::from_millis(1);

/// Most RPC latencies a flow may keep as raw samples (`app.samples`).
pub const MAX_RPC_SAMPLES: u64 = 10_000_000;

/// Default sampling interval of traces when tracing is needed but
/// `run.trace_interval` is not given.
pub const DEFAULT_TRACE_INTERVAL: Duration = Duration::from_millis(10);

/// A validated scenario.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// The file name as given.
    pub name: String,
    /// `description`, if any.
    pub description: Option<String>,
    /// What the simulator runs. `trace_interval` is `run.trace_interval`
    /// (None if not given); the runner turns tracing on when it needs it.
    pub sim: SimConfig,
    /// `run.goodput_window`: report per-flow goodput and Jain's fairness
    /// index over the last this-long of the run.
    pub goodput_window: Option<Duration>,
}

impl Scenario {
    /// The sampling interval to use when traces are needed.
    pub fn trace_interval_or_default(&self) -> Duration {
        self.sim.trace_interval.unwrap_or(DEFAULT_TRACE_INTERVAL)
    }
}

/// Parses `text`, applies each `--set` (a plain dotted path; wildcards are
/// [`crate::overrides`]'s, which calls this) and validates it; `name` is
/// used in messages. [`crate::load`] reads a file.
pub fn load_str(name: &str, text: &str, sets: &[String], seed: Option<u64>) -> Result<Scenario> {
    let mut tree = Tree::parse(Source::new(name, text))?;
    for s in sets {
        tree.apply_set(s)?;
    }
    let mut sc = validate(&tree)?;
    if let Some(seed) = seed {
        sc.sim.seed = seed;
    }
    Ok(sc)
}

// ---------------------------------------------------------------------------
// The schema.
// ---------------------------------------------------------------------------

/// A name usable as a node/link name or flow id (also a trace file name).
fn check_name(f: F<'_>) -> Result<String> {
    let s = f.str("a name string")?;
    let ok = !s.is_empty()
        && s.len() <= 64
        && !s.starts_with('.')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.');
    if !ok {
        return Err(f.err(format!("{s:?} is not a valid name (use 1-64 of A-Z a-z 0-9 _ - ., not starting with '.')")));
    }
    Ok(s.to_string())
}

/// Validates a whole tree.
pub fn validate(tree: &Tree) -> Result<Scenario> {
    // [topology] and [traffic] stand for [[node]], [[link]] and [[flow]]
    // tables, validated below like any others.
    let expanded = crate::generate::expand(tree)?;
    let tree = expanded.as_ref().unwrap_or(tree);
    let src = &tree.source;
    let root = F { src, node: &tree.root, path: "" }.table("a table")?;
    root.only(&["description", "run", "tcp", "node", "link", "flow"])?;
    let description = root.get("description", |f| f.str("a string").map(str::to_string))?;

    // [run]
    let Some(run_entry) = root.table.get("run") else {
        return Err(src.error(
            &tree.root.origin,
            "run",
            "missing required table [run] (with at least duration = \"...\")",
        ));
    };
    let run = F { src, node: &run_entry.node, path: "run" }.table("a table [run]")?;
    run.only(&["duration", "seed", "trace_interval", "goodput_window", "ecmp"])?;
    let duration = run.req("duration", |f| f.positive_time())?;
    let seed = run.get("seed", |f| f.u64())?.unwrap_or(1);
    let trace_interval = run.get("trace_interval", |f| f.positive_time())?;
    let run_ecmp = run.get("ecmp", ecmp_policy)?.unwrap_or(Multipath::Off);
    let goodput_window = run.get("goodput_window", |f| {
        let w = f.positive_time()?;
        if w > duration {
            return Err(f.err(format!("is longer than run.duration ({})", units::format_time(duration))));
        }
        Ok(w)
    })?;

    // [tcp]
    let tcp_defaults = match root.table.get("tcp") {
        Some(e) => Some(F { src, node: &e.node, path: "tcp" }.table("a table [tcp] of TCP knobs")?),
        None => None,
    };
    if let Some(t) = &tcp_defaults {
        check_knob_table(t)?;
    }

    // [[node]]
    let nodes = array_of_tables(&root, "node")?;
    let mut node_cfgs: Vec<NodeConfig> = Vec::with_capacity(nodes.len());
    // Node index by name: the lookups of links and flows are O(1).
    let mut by_name: HashMap<String, usize> = HashMap::with_capacity(nodes.len());
    // Where each node's `kind` was given, so that a conflict it causes
    // (a flow from a node made a switch) is reported where it was given.
    let mut kind_origins: Vec<Option<Origin>> = Vec::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        let path = format!("node[{i}]");
        let t = F { src, node: n, path: &path }.table("a table")?;
        t.only(&["name", "kind", "qdisc", "offloads", "gro", "ecmp"])?;
        let name = t.req("name", check_name)?;
        if by_name.contains_key(&name) {
            return Err(t.err_at("name", format!("duplicate node name {name:?}")));
        }
        let kind = t
            .get("kind", |f| match f.str("\"host\" or \"switch\"")? {
                "host" => Ok(NodeKind::Host),
                "switch" => Ok(NodeKind::Switch),
                other => Err(f.err(format!("unknown node kind {other:?} (known: host, switch)"))),
            })?
            .unwrap_or(NodeKind::Host);
        let qdisc = t
            .get("qdisc", |f| {
                if kind == NodeKind::Switch {
                    return Err(f.err(
                        "a qdisc applies to hosts; a switch's queues are its links' `queue` settings (remove qdisc, or make the node a host)",
                    ));
                }
                qdisc_config(f)
            })?
            .unwrap_or_default();
        let offloads = t.get("offloads", |f| f.bool01())?.unwrap_or(false);
        let gro = t
            .get("gro", |f| {
                if kind == NodeKind::Switch {
                    return Err(f.err("gro applies to hosts: it merges what a host receives before its TCP sees it"));
                }
                f.bool01()
            })?
            .unwrap_or(false);
        let multipath = t.get("ecmp", |f| {
            if kind == NodeKind::Host {
                return Err(f.err(
                    "ecmp applies to switches; a host does not forward (remove ecmp, or make the node a switch)",
                ));
            }
            ecmp_policy(f)
        })?;
        let multipath = match (multipath, &kind) {
            (Some(m), _) => m,
            (None, NodeKind::Switch) => run_ecmp,
            (None, NodeKind::Host) => Multipath::Off,
        };
        by_name.insert(name.clone(), node_cfgs.len());
        node_cfgs.push(NodeConfig { name, kind, qdisc, offloads, gro, multipath });
        kind_origins.push(t.table.get("kind").map(|e| e.node.origin.clone()));
    }
    if node_cfgs.is_empty() {
        return Err(src.error(
            &tree.root.origin,
            "node",
            "no nodes: add at least two [[node]] tables (hosts) and a [[link]]",
        ));
    }

    // [[link]]
    let names = Names { nodes: &node_cfgs, by_name: &by_name };
    let links = array_of_tables(&root, "link")?;
    let mut link_cfgs: Vec<LinkConfig> = Vec::with_capacity(links.len());
    let mut link_names: HashSet<String> = HashSet::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        let path = format!("link[{i}]");
        let link = link_config(F { src, node: l, path: &path }, names)?;
        if !link_names.insert(link.name.clone()) {
            let t = F { src, node: l, path: &path }.table("a table")?;
            return Err(t.err_at("name", format!("duplicate link name {:?}", link.name)));
        }
        link_cfgs.push(link);
    }
    let reach = Reachability::new(&node_cfgs, &link_cfgs);

    // [[flow]]
    let flows = array_of_tables(&root, "flow")?;
    if flows.len() > MAX_FLOWS {
        return Err(src.error(&flows[MAX_FLOWS].origin, "flow", format!("at most {MAX_FLOWS} flows fit one run")));
    }
    let mut flow_cfgs: Vec<FlowConfig> = Vec::with_capacity(flows.len());
    let mut flow_ids: HashSet<String> = HashSet::with_capacity(flows.len());
    let (mut connections, mut per_host) = (0u64, vec![0u64; node_cfgs.len()]);
    let hosts = Hosts { names, kind_origins: &kind_origins, reach: &reach };
    for (i, fl) in flows.iter().enumerate() {
        let path = format!("flow[{i}]");
        let f = F { src, node: fl, path: &path };
        let mut flow = flow_config(f, duration, hosts, tcp_defaults.as_ref())?;
        if !flow_ids.insert(flow.id.clone()) {
            return Err(f.table("a table")?.err_at("id", format!("duplicate flow id {:?}", flow.id)));
        }
        connections += u64::from(flow.repeat.runs);
        per_host[flow.from] += u64::from(flow.repeat.runs);
        if connections > MAX_FLOWS as u64 {
            return Err(f.table("a table")?.err_at(
                "repeat",
                format!("the flows need {connections} connections (each run is one); at most {MAX_FLOWS} fit one run"),
            ));
        }
        if per_host[flow.from] > MAX_CONNECTIONS_PER_HOST as u64 {
            let host = &names.nodes[flow.from].name;
            return Err(f.table("a table")?.err_at(
                "repeat",
                format!(
                    "host {host:?} opens {} client connections (each run is one); at most {MAX_CONNECTIONS_PER_HOST} fit its port range",
                    per_host[flow.from]
                ),
            ));
        }
        flow.share_tcp(flow_cfgs.last());
        flow_cfgs.push(flow);
    }

    let sim = SimConfig { duration, seed, nodes: node_cfgs, links: link_cfgs, flows: flow_cfgs, trace_interval };
    // The checks above are meant to cover the simulator's own; this is a
    // backstop so that nothing the simulator rejects gets to a run.
    sim.validate().map_err(|m| Error::at(src.name.clone(), format!("invalid scenario: {m}")))?;
    Ok(Scenario { name: src.name.clone(), description, sim, goodput_window })
}

/// The nodes and their index by name.
#[derive(Clone, Copy)]
struct Names<'a> {
    nodes: &'a [NodeConfig],
    by_name: &'a HashMap<String, usize>,
}

/// A node name that exists, as its index.
fn find_node(f: F<'_>, names: Names<'_>) -> Result<usize> {
    let s = f.str("a node name")?;
    names.by_name.get(s).copied().ok_or_else(|| {
        let names = names.nodes.iter().map(|n| n.name.as_str());
        let hint = match did_you_mean(s, names.clone()) {
            Some(k) => format!("; did you mean {k:?}?"),
            None => format!(" (known: {})", names.collect::<Vec<_>>().join(", ")),
        };
        f.err(format!("unknown node {s:?}{hint}"))
    })
}

/// The nodes, with where each one's `kind` was given, and which hosts
/// can reach which.
#[derive(Clone, Copy)]
struct Hosts<'a> {
    names: Names<'a>,
    kind_origins: &'a [Option<Origin>],
    reach: &'a Reachability,
}

/// A host name that exists in `nodes`, as its index. When a `--set` made
/// the node a switch, the error is located at that `--set`.
fn find_host(f: F<'_>, hosts: Hosts<'_>) -> Result<usize> {
    let nodes = hosts.names.nodes;
    let n = find_node(f, hosts.names)?;
    if nodes[n].kind != NodeKind::Host {
        let msg = format!("node {:?} is a switch; flows run between hosts", nodes[n].name);
        if let Some(o @ Origin::Set(_)) = hosts.kind_origins.get(n).and_then(Option::as_ref) {
            return Err(f.src.error(o, f.path, format!("{msg} (this --set made node[{n}] a switch)")));
        }
        return Err(f.err(msg));
    }
    Ok(n)
}

/// One `[[link]]` (without the uniqueness of its name).
fn link_config(f: F<'_>, names: Names<'_>) -> Result<LinkConfig> {
    let nodes = names.nodes;
    let t = f.table("a table")?;
    if t.has("police") {
        return Err(t.err_at(
            "police",
            "a policer is per direction: write it in ab or ba, e.g. ab = { police = { rate = \"20Mbit\", burst = \"60KB\" } }",
        ));
    }
    t.only(&["name", "a", "b", "rate", "delay", "queue", "loss", "blackout", "slot", "ab", "ba"])?;
    let name = t.req("name", check_name)?;
    let a = t.req("a", |f| find_node(f, names))?;
    let b = t.req("b", |f| {
        let b = find_node(f, names)?;
        if b == a {
            return Err(f.err(format!("link connects node {:?} to itself", nodes[a].name)));
        }
        Ok(b)
    })?;
    let rate_bps = t.req("rate", |f| f.rate())?;
    let delay = t.get("delay", delay_model)?.unwrap_or(DelayModel::Fixed(Duration::ZERO));
    let queue = t.get("queue", queue_spec)?.unwrap_or_default();
    let loss = t.get("loss", loss_model)?.unwrap_or_default();
    let blackouts = t.get("blackout", blackouts)?.unwrap_or_default();
    let slot = t.get("slot", self::slot)?;
    // `ab`/`ba` override the link-wide delay, loss and slot, and its queue
    // field by field.
    let dir = |key: &str| -> Result<DirectionConfig> {
        let over = t.get(key, |f| {
            let d = f.table("a table with delay, queue, loss, blackout, slot and/or police")?;
            d.only(&["delay", "queue", "loss", "blackout", "slot", "police"])?;
            Ok((
                d.get("delay", delay_model)?,
                d.get("queue", queue_spec)?,
                d.get("loss", loss_model)?,
                d.get("blackout", self::blackouts)?,
                d.get("police", self::police)?,
                d.get("slot", self::slot)?,
            ))
        })?;
        let (d, q, l, b, p, s) = over.unwrap_or((None, None, None, None, None, None));
        let uniform = matches!(d.as_ref().unwrap_or(&delay), DelayModel::Uniform { .. });
        if uniform && (s.is_some() || slot.is_some()) {
            // Where the slot was given: this direction's table, or the link's.
            let at = if s.is_some() { key } else { "slot" };
            return Err(t.err_at(
                at,
                "netem's slot is modelled over a delay that keeps packets in order; the uniform delay reorders them \
                 (use ordered-jitter, or no slot)",
            ));
        }
        let q = match q {
            Some(q) => queue.merge(&q),
            None => queue.clone(),
        };
        Ok(DirectionConfig {
            delay: d.unwrap_or_else(|| delay.clone()),
            queue: q.build(),
            loss: l.unwrap_or(loss),
            blackouts: b.unwrap_or_else(|| blackouts.clone()),
            police: p,
            slot: s.or(slot),
        })
    };
    Ok(LinkConfig { name, a, b, rate_bps, ab: dir("ab")?, ba: dir("ba")? })
}

/// One `[[flow]]` (without the uniqueness of its id).
fn flow_config(f: F<'_>, duration: Duration, hosts: Hosts<'_>, tcp_defaults: Option<&T<'_>>) -> Result<FlowConfig> {
    let nodes = hosts.names.nodes;
    let (src, path) = (f.src, f.path);
    let t = f.table("a table")?;
    t.only(&[
        "id",
        "from",
        "to",
        "start",
        "cc",
        "app",
        "tcp",
        "tcp_receiver",
        "nodelay",
        "repeat",
        "gap",
        "duration_each",
    ])?;
    let id = t.req("id", check_name)?;
    let from = t.req("from", |f| find_host(f, hosts))?;
    let to = t.req("to", |f| {
        let to = find_host(f, hosts)?;
        if to == from {
            return Err(f.err(format!("flow goes from node {:?} to itself", nodes[to].name)));
        }
        if !hosts.reach.connected(from, to) {
            return Err(f.err(format!(
                "no path from {:?} to {:?} over the links (flows cross switches, not other hosts)",
                nodes[from].name, nodes[to].name
            )));
        }
        Ok(to)
    })?;
    let start = t
        .get("start", |f| {
            let s = f.time()?;
            if s >= duration {
                return Err(
                    f.err(format!("flow starts at or after the end of the run ({})", units::format_time(duration)))
                );
            }
            Ok(s)
        })?
        .unwrap_or(Duration::ZERO);
    let cc_path = join(path, "cc");
    let cc = match t.table.get("cc") {
        Some(e) => {
            let f = F { src, node: &e.node, path: &cc_path };
            cc_name(f)?;
            Some(f)
        }
        None => None,
    };
    let app = t.get("app", |f| app_config(f, start))?.unwrap_or(AppConfig::Bulk { bytes: None, stop: None });
    let nodelay = t.get("nodelay", |f| f.bool01())?.unwrap_or(false);
    let runs = t.get("repeat", |f| f.int_in(1, MAX_CONNECTIONS_PER_HOST as u64).map(|n| n as u32))?.unwrap_or(1);
    let app_time = |f: F<'_>| -> Result<Duration> {
        let d = f.time()?;
        if d > MAX_APP_TIME {
            return Err(f.err(format!("must be at most {}", units::format_time(MAX_APP_TIME))));
        }
        Ok(d)
    };
    let gap = t.get("gap", app_time)?.unwrap_or(Duration::ZERO);
    let duration_each = t.get("duration_each", |f| {
        let d = app_time(f)?;
        if d == Duration::ZERO {
            return Err(f.err("must be greater than zero"));
        }
        Ok(d)
    })?;
    if runs > 1 {
        let (stop, finite, unit) = match &app {
            AppConfig::Bulk { bytes, stop } => (*stop, bytes.is_some(), "app.bytes"),
            AppConfig::Rpc(r) => (r.stop, r.count.is_some(), "app.count"),
        };
        if stop.is_some() {
            let app_path = join(path, "app");
            if let Some(e) = t.table.get("app") {
                let app_t = F { src, node: &e.node, path: &app_path }.table("a table")?;
                return Err(app_t.err_at(
                    "stop",
                    format!(
                        "stop is a time since the start of the simulation and cannot end each of {runs} runs; use {path}.duration_each"
                    ),
                ));
            }
        }
        if !finite && duration_each.is_none() {
            return Err(t.err_at(
                "repeat",
                format!(
                    "with {runs} runs each run must end: set duration_each, or {unit} so that the application finishes"
                ),
            ));
        }
    }
    let repeat = Repeat { runs, gap, duration_each };
    let tcp_path = join(path, "tcp");
    let rcv_path = join(path, "tcp_receiver");
    let tcp_t = match t.table.get("tcp") {
        Some(e) => Some(F { src, node: &e.node, path: &tcp_path }.table("a table of TCP knobs")?),
        None => None,
    };
    let rcv_t = match t.table.get("tcp_receiver") {
        Some(e) => Some(F { src, node: &e.node, path: &rcv_path }.table("a table of TCP knobs")?),
        None => None,
    };
    for k in tcp_t.iter().chain(rcv_t.iter()) {
        check_knob_table(k)?;
    }
    if let (Some(c), Some(k)) = (&cc, &tcp_t) {
        if k.has("congestion_control") {
            return Err(c.err(format!("both {path}.cc and {path}.tcp.congestion_control are set; keep one")));
        }
    }
    let tcp = build_tcp(tcp_defaults, tcp_t.as_ref(), cc.as_ref())?;
    let tcp_receiver = build_tcp(tcp_defaults, rcv_t.as_ref(), cc.as_ref())?;
    let (tcp, tcp_receiver) = (Arc::new(tcp), Arc::new(tcp_receiver));
    Ok(FlowConfig { id, from, to, start, tcp, tcp_receiver, app, nodelay, repeat })
}

/// `[[key]]` elements, or none. A plain `[key]` table is an error that
/// says to double the brackets.
fn array_of_tables<'a>(root: &T<'a>, key: &'a str) -> Result<&'a [Node]> {
    match root.table.get(key) {
        None => Ok(&[]),
        Some(e) => F { src: root.src, node: &e.node, path: key }
            .array(&format!("an array of tables: write [[{key}]] for each element")),
    }
}

/// `delay = "10ms"` or `{ model = "uniform", min = "20ms", max = "30ms" }`
/// or `{ model = "ordered-jitter", base = "10ms", jitter = "2ms" }`
/// or `{ model = "fixed", delay = "10ms" }`.
/// `police = { rate = "20Mbit", burst = "60KB" }`: a token bucket in
/// front of the direction's queue (tc's `police` action).
fn police(f: F<'_>) -> Result<Police> {
    let t = f.table("a table { rate = \"20Mbit\", burst = \"60KB\" }")?;
    t.only(&["rate", "burst"])?;
    let rate_bps = t.req("rate", |f| f.rate())?;
    let burst_bytes = t.req("burst", |f| {
        let b = f.bytes()?;
        if b == 0 {
            return Err(f.err("a policer's burst must be positive (at least one full-sized packet)"));
        }
        Ok(b)
    })?;
    Ok(Police { rate_bps, burst_bytes })
}

/// `slot = "500us"`: netem's `slot` (minimum and maximum equal), the
/// interval at which the direction's delay releases what has come due.
fn slot(f: F<'_>) -> Result<Duration> {
    let d = f.positive_time()?;
    if d > tcplab_sim::MAX_SLOT {
        return Err(f.err("a slot longer than 1s holds packets past any retransmission timer; give at most \"1s\""));
    }
    Ok(d)
}

/// `blackout = [{ start = "2s", duration = "3s" }, ...]`: windows in
/// time order in which the direction loses everything it sends.
fn blackouts(f: F<'_>) -> Result<Vec<Blackout>> {
    let mut out: Vec<Blackout> = Vec::new();
    for (i, item) in f.array("an array of { start, duration } tables")?.iter().enumerate() {
        let path = format!("{}[{i}]", f.path);
        let t = F { src: f.src, node: item, path: &path }.table("a table { start = \"2s\", duration = \"3s\" }")?;
        t.only(&["start", "duration"])?;
        let start = t.req("start", |f| f.time())?;
        let duration = t.req("duration", |f| f.positive_time())?;
        if let Some(prev) = out.last() {
            if start < prev.end {
                return Err(t.err_at(
                    "start",
                    format!("blackout {i} starts before the one before it ends; give them in time order"),
                ));
            }
        }
        out.push(Blackout { start, end: start + duration });
    }
    Ok(out)
}

/// `loss = "1%"`, `{ model = "random", p = "1%" }` or `{ model =
/// "gemodel", p, r, bad_loss, good_loss }` (netem's `loss gemodel p r 1-h
/// 1-k`, with its defaults r = 100 %, 1-h = 100 %, 1-k = 0 %).
fn loss_model(f: F<'_>) -> Result<LossModel> {
    let percent = |f: F<'_>| -> Result<u32> {
        let s = f.str("a percentage such as \"1%\"")?;
        let v = s
            .strip_suffix('%')
            .and_then(|n| n.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && (0.0..=100.0).contains(v))
            .ok_or_else(|| f.err(format!("{s:?} is not a percentage from \"0%\" to \"100%\"")))?;
        Ok(tcplab_sim::loss::probability(v))
    };
    if let Value::String(_) = f.node.value {
        let p = percent(f)?;
        return Ok(if p == 0 { LossModel::None } else { LossModel::Random { p } });
    }
    let t = f.table("a percentage such as \"1%\" or a table { model = \"random\" | \"gemodel\", ... }")?;
    let model = t.req("model", |m| m.str("a loss model name").map(str::to_string))?;
    match model.as_str() {
        "random" => {
            t.only(&["model", "p"])?;
            Ok(LossModel::Random { p: t.req("p", percent)? })
        }
        "gemodel" => {
            t.only(&["model", "p", "r", "bad_loss", "good_loss"])?;
            Ok(LossModel::GilbertElliott {
                p: t.req("p", percent)?,
                r: t.get("r", percent)?.unwrap_or(u32::MAX),
                bad_loss: t.get("bad_loss", percent)?.unwrap_or(u32::MAX),
                good_loss: t.get("good_loss", percent)?.unwrap_or(0),
            })
        }
        other => Err(t.err_at("model", format!("unknown loss model {other:?} (known: random, gemodel)"))),
    }
}

fn delay_model(f: F<'_>) -> Result<DelayModel> {
    if let Value::String(_) = f.node.value {
        return f.delay().map(DelayModel::Fixed);
    }
    let t = f.table("a time such as \"10ms\" or a table { model = \"uniform\", min = ..., max = ... }")?;
    let model = t.req("model", |m| m.str("a delay model name such as \"fixed\"").map(str::to_string))?;
    match model.as_str() {
        "fixed" => {
            t.only(&["model", "delay"])?;
            Ok(DelayModel::Fixed(t.req("delay", |f| f.delay())?))
        }
        "uniform" => {
            t.only(&["model", "min", "max"])?;
            let min = t.req("min", |f| f.delay())?;
            let max = t.req("max", |f| {
                let max = f.delay()?;
                if max < min {
                    return Err(f.err(format!("max is less than min ({})", units::format_time(min))));
                }
                Ok(max)
            })?;
            Ok(DelayModel::Uniform { min, max })
        }
        "ordered-jitter" => {
            t.only(&["model", "base", "jitter"])?;
            Ok(DelayModel::OrderedJitter {
                base: t.req("base", |f| f.delay())?,
                jitter: t.req("jitter", |f| f.delay())?,
            })
        }
        "random-walk" => {
            t.only(&["model", "base", "amplitude", "step", "interval"])?;
            Ok(DelayModel::RandomWalk {
                base: t.req("base", |f| f.delay())?,
                amplitude: t.req("amplitude", |f| f.delay())?,
                step: t.req("step", |f| f.delay())?,
                interval: t.get("interval", |f| {
                    let d = f.positive_time()?;
                    if d > MAX_DELAY {
                        return Err(f.err(format!("must be at most {}", units::format_time(MAX_DELAY))));
                    }
                    Ok(d)
                })?,
            })
        }
        "on-off" => {
            t.only(&["model", "base", "delay", "mean_on", "mean_off", "slot"])?;
            let slot = t
                .get("slot", |f| {
                    let d = f.positive_time()?;
                    if d > MAX_DELAY {
                        return Err(f.err(format!("must be at most {}", units::format_time(MAX_DELAY))));
                    }
                    Ok(d)
                })?
                .unwrap_or(DEFAULT_ON_OFF_SLOT);
            let mean = |f: F<'_>| -> Result<Duration> {
                let d = f.delay()?;
                if d < slot {
                    return Err(f.err(format!(
                        "must be at least one slot ({}): the chain switches at most once per slot",
                        units::format_time(slot)
                    )));
                }
                Ok(d)
            };
            Ok(DelayModel::OnOff {
                base: t.req("base", |f| f.delay())?,
                delay: t.req("delay", |f| f.delay())?,
                mean_on: t.req("mean_on", mean)?,
                mean_off: t.req("mean_off", mean)?,
                slot,
            })
        }
        other => Err(t.err_at(
            "model",
            format!("unknown delay model {other:?} (known: fixed, uniform, ordered-jitter, random-walk, on-off)"),
        )),
    }
}

/// Queue settings as written; direction tables override link-wide ones
/// field by field.
#[derive(Clone, Debug, Default)]
struct QueueSpec {
    limit: Option<Limit>,
    /// `Some(None)`: explicitly off.
    ecn_threshold: Option<Option<Limit>>,
}

impl QueueSpec {
    fn merge(&self, over: &QueueSpec) -> QueueSpec {
        QueueSpec { limit: over.limit.or(self.limit), ecn_threshold: over.ecn_threshold.or(self.ecn_threshold) }
    }

    fn build(&self) -> QueueConfig {
        QueueConfig { limit: self.limit.unwrap_or(DEFAULT_QUEUE_LIMIT), ecn_threshold: self.ecn_threshold.flatten() }
    }
}

/// `queue = "100p"` or `queue = { limit = "100p" | packets = N | bytes = N, ecn_threshold = "20p" }`.
fn queue_spec(f: F<'_>) -> Result<QueueSpec> {
    let positive = |f: F<'_>, l: Limit| -> Result<Limit> {
        match l {
            Limit::Packets(0) | Limit::Bytes(0) => Err(f.err("a queue limit must be positive")),
            l => Ok(l),
        }
    };
    if let Value::String(_) = f.node.value {
        let l = f.limit()?;
        return Ok(QueueSpec { limit: Some(positive(f, l)?), ecn_threshold: None });
    }
    let t = f.table("a queue length such as \"100p\" or a table { limit = \"100p\", ecn_threshold = \"20p\" }")?;
    t.only(&["limit", "packets", "bytes", "ecn_threshold"])?;
    let given: Vec<&str> = ["limit", "packets", "bytes"].into_iter().filter(|k| t.has(k)).collect();
    if given.len() > 1 {
        let second = given[1];
        return Err(t.err_at(second, format!("give only one of limit, packets, bytes (found {})", given.join(" and "))));
    }
    let limit = match given.first().copied() {
        Some("limit") => t.get("limit", |g| g.limit().and_then(|l| positive(g, l)))?,
        Some("packets") => t.get("packets", |g| positive(g, Limit::Packets(g.u64()?)))?,
        Some("bytes") => t.get("bytes", |g| positive(g, Limit::Bytes(g.bytes()?)))?,
        _ => None,
    };
    let ecn_threshold = t.get("ecn_threshold", |g| match &g.node.value {
        Value::String(s) if s == "off" || s == "none" => Ok(None),
        Value::Boolean(false) => Ok(None),
        _ => g.limit().map(Some),
    })?;
    Ok(QueueSpec { limit, ecn_threshold })
}

/// `app = "bulk"` or `{ kind = "bulk", bytes = "10MB", stop = "20s" }`;
/// `app = "rpc"` or `{ kind = "rpc", request = "1KB", response = "1MB",
/// think = "1ms", count = 1000, stop = "20s", samples = 10000 }`.
fn app_config(f: F<'_>, start: Duration) -> Result<AppConfig> {
    if let Value::String(s) = &f.node.value {
        return match s.as_str() {
            "bulk" => Ok(AppConfig::Bulk { bytes: None, stop: None }),
            "rpc" => Ok(AppConfig::Rpc(RpcConfig::new(1, 1))),
            other => Err(f.err(format!("unknown application {other:?} (known: bulk, rpc)"))),
        };
    }
    let t = f.table("\"bulk\", \"rpc\" or a table { kind = \"bulk\", ... }")?;
    let kind = t.req("kind", |k| k.str("an application kind such as \"bulk\"").map(str::to_string))?;
    let stop_after_start = |s: F<'_>| -> Result<Duration> {
        let d = s.time()?;
        if d <= start {
            return Err(s.err(format!("stops at or before the flow starts ({})", units::format_time(start))));
        }
        Ok(d)
    };
    let positive_bytes = |b: F<'_>| -> Result<u64> {
        let n = b.bytes()?;
        if n == 0 {
            return Err(b.err("must be greater than zero"));
        }
        Ok(n)
    };
    match kind.as_str() {
        "bulk" => {
            t.only(&["kind", "bytes", "stop"])?;
            let bytes = t.get("bytes", |b| {
                let n = b.bytes()?;
                if n == 0 {
                    return Err(b.err("must be greater than zero (leave it out for an unlimited transfer)"));
                }
                Ok(n)
            })?;
            let stop = t.get("stop", stop_after_start)?;
            Ok(AppConfig::Bulk { bytes, stop })
        }
        "rpc" => {
            t.only(&["kind", "request", "response", "think", "count", "stop", "samples"])?;
            let mut r = RpcConfig::new(
                t.get("request", positive_bytes)?.unwrap_or(1),
                t.get("response", positive_bytes)?.unwrap_or(1),
            );
            r.think = t
                .get("think", |f| {
                    let d = f.time()?;
                    if d > MAX_APP_TIME {
                        return Err(f.err(format!("must be at most {}", units::format_time(MAX_APP_TIME))));
                    }
                    Ok(d)
                })?
                .unwrap_or(Duration::ZERO);
            r.count = t.get("count", |f| f.int_in(1, u64::MAX >> 1))?;
            r.stop = t.get("stop", stop_after_start)?;
            r.samples = t.get("samples", |f| f.int_in(0, MAX_RPC_SAMPLES).map(|n| n as u32))?.unwrap_or(0);
            Ok(AppConfig::Rpc(r))
        }
        other => Err(t.err_at("kind", format!("unknown application {other:?} (known: bulk, rpc)"))),
    }
}

/// `ecmp = "off" | "l3" | "l4"`: what a switch does with equal-cost next
/// hops (Linux's `fib_multipath_hash_policy` 0 and 1 for l3 and l4).
fn ecmp_policy(f: F<'_>) -> Result<Multipath> {
    match f.str("\"off\", \"l3\" or \"l4\"")? {
        "off" => Ok(Multipath::Off),
        "l3" => Ok(Multipath::L3),
        "l4" => Ok(Multipath::L4),
        other => Err(f.err(format!(
            "unknown ecmp policy {other:?} (known: off; l3 = fib_multipath_hash_policy 0, the addresses; \
             l4 = fib_multipath_hash_policy 1, the 5-tuple)"
        ))),
    }
}

/// `qdisc = "pfifo"`, `"fq"` or `{ kind = "fq", pacing = "edt", ... }`.
fn qdisc_config(f: F<'_>) -> Result<Qdisc> {
    if let Value::String(s) = &f.node.value {
        return match s.as_str() {
            "pfifo" | "pfifo_fast" => Ok(Qdisc::Pfifo),
            "fq" => Ok(Qdisc::Fq(FqConfig::default())),
            other => Err(f.err(format!("unknown qdisc {other:?} (known: pfifo, fq)"))),
        };
    }
    let t = f.table("\"pfifo\", \"fq\" or a table { kind = \"fq\", ... }")?;
    let kind = t.req("kind", |k| k.str("a qdisc name such as \"fq\"").map(str::to_string))?;
    match kind.as_str() {
        "pfifo" | "pfifo_fast" => {
            t.only(&["kind"])?;
            Ok(Qdisc::Pfifo)
        }
        "fq" => {
            t.only(&[
                "kind",
                "pacing",
                "limit",
                "flow_limit",
                "quantum",
                "initial_quantum",
                "flow_refill_delay",
                "low_rate_threshold",
                "ce_threshold",
            ])?;
            let mut q = FqConfig::default();
            if let Some(p) = t.get("pacing", |f| match f.str("\"edt\" or \"credit\"")? {
                "edt" => Ok(FqPacing::Edt),
                "credit" => Ok(FqPacing::Credit),
                other => Err(
                    f.err(format!("unknown pacing {other:?} (known: edt (Linux >= 4.20), credit (Linux 3.12-4.19))"))
                ),
            })? {
                q.pacing = p;
            }
            let packets = |f: F<'_>| -> Result<u32> {
                match &f.node.value {
                    Value::String(s) => match units::parse_limit(s).map_err(|m| f.err(m))? {
                        Limit::Packets(n) if n >= 1 && n <= u64::from(u32::MAX) => Ok(n as u32),
                        Limit::Packets(n) => {
                            Err(f.err(format!("must be between 1 and {} packets, found {n}", u32::MAX)))
                        }
                        Limit::Bytes(_) => Err(f.err("fq limits count packets: write e.g. \"100p\" or 100")),
                    },
                    _ => f.int_in(1, u64::from(u32::MAX)).map(|n| n as u32),
                }
            };
            if let Some(n) = t.get("limit", packets)? {
                q.limit = n;
            }
            if let Some(n) = t.get("flow_limit", packets)? {
                q.flow_limit = n;
            }
            if let Some(n) = t.get("quantum", |f| {
                let n = f.bytes()?;
                if n == 0 || n > u64::from(FQ_MAX_QUANTUM) {
                    return Err(f.err(format!("must be between 1 and {FQ_MAX_QUANTUM} bytes, found {n}")));
                }
                Ok(n as u32)
            })? {
                q.quantum = n;
            }
            if let Some(n) = t.get("initial_quantum", |f| {
                let n = f.bytes()?;
                if n > i32::MAX as u64 {
                    return Err(f.err(format!("must be at most {} bytes, found {n}", i32::MAX)));
                }
                Ok(n as u32)
            })? {
                q.initial_quantum = n;
            }
            if let Some(d) = t.get("flow_refill_delay", |f| f.delay())? {
                q.flow_refill_delay = d;
            }
            if let Some(r) = t.get("low_rate_threshold", |f| match &f.node.value {
                Value::String(s) => units::parse_rate(s).map(|bps| bps / 8).map_err(|m| f.err(m)),
                Value::Integer(0) => Ok(0),
                _ => Err(f.wrong("a rate such as \"550Kbit\" (\"0bit\" turns it off)")),
            })? {
                q.low_rate_threshold = r;
            }
            if let Some(c) = t.get("ce_threshold", |g| match &g.node.value {
                Value::String(s) if s == "off" || s == "none" => Ok(None),
                Value::Boolean(false) => Ok(None),
                _ => g.delay().map(Some),
            })? {
                q.ce_threshold = c;
            }
            Ok(Qdisc::Fq(q))
        }
        other => Err(t.err_at("kind", format!("unknown qdisc {other:?} (known: pfifo, fq)"))),
    }
}

/// A known congestion-control name.
fn cc_name<'a>(f: F<'a>) -> Result<&'a str> {
    let s = f.str("a congestion control name such as \"cubic\"")?;
    if CcConfig::from_name(s).is_some() {
        return Ok(s);
    }
    Err(f.err(format!("unknown congestion control {s:?} (known: {})", CcConfig::NAMES.join(", "))))
}

fn preset_name<'a>(f: F<'a>) -> Result<&'a str> {
    let s = f.str("a preset name such as \"linux-current\"")?;
    if PRESETS.contains(&s) && TcpConfig::preset(s).is_some() {
        return Ok(s);
    }
    let hint = match did_you_mean(s, PRESETS.iter().copied()) {
        Some(k) => format!("; did you mean {k:?}?"),
        None => String::new(),
    };
    Err(f.err(format!("unknown preset {s:?}{hint} (known: {})", PRESETS.join(", "))))
}

/// Checks every key and value of a knob table, so errors surface even in
/// tables whose values end up overridden or unused. Its keys: the table
/// keys (`preset`, `congestion_control`), one module-parameter table per
/// congestion control (named as in [`CcConfig::NAMES`], listed
/// alphabetically), and the socket knobs.
fn check_knob_table(t: &T<'_>) -> Result<()> {
    let mut modules = CcConfig::NAMES.to_vec();
    modules.sort_unstable();
    let known: Vec<&str> = knobs::TABLE_KEYS
        .iter()
        .map(|k| k.name)
        .chain(modules.iter().copied())
        .chain(knobs::TCP.iter().map(|k| k.name))
        .collect();
    t.only(&known)?;
    t.get(knobs::PRESET.name, |f| preset_name(f).map(|_| ()))?;
    t.get(knobs::CONGESTION_CONTROL.name, |f| cc_name(f).map(|_| ()))?;
    let mut scratch = TcpConfig::default();
    apply_knobs(t, &mut scratch)?;
    // Values only: the module's own consistency check (`validate`) runs
    // in `build_tcp`, on the parameters of the preset's era.
    for name in modules {
        match CcConfig::from_name(name) {
            Some(CcConfig::Cubic(mut p)) => apply_params(t, name, knobs::CUBIC, &mut p)?,
            Some(CcConfig::Dctcp(mut p)) => apply_params(t, name, knobs::DCTCP, &mut p)?,
            Some(CcConfig::Reno(mut p)) => apply_params(t, name, knobs::RENO, &mut p)?,
            Some(CcConfig::Bbr(mut p)) => apply_params(t, name, knobs::BBR, &mut p)?,
            None => None,
        };
    }
    Ok(())
}

/// Turns a module's own parameter check into an error at its table.
fn check_params(t: &T<'_>, key: &str, origin: &Origin, r: std::result::Result<(), &'static str>) -> Result<()> {
    r.map_err(|m| t.src.error(origin, &join(t.path, key), m))
}

/// Applies every socket knob of `t` (not preset, congestion_control or
/// module tables) to `cfg`.
fn apply_knobs(t: &T<'_>, cfg: &mut TcpConfig) -> Result<()> {
    for e in &t.table.entries {
        let Some(knob) = knobs::find(&e.key) else { continue };
        let path = join(t.path, &e.key);
        let f = F { src: t.src, node: &e.node, path: &path };
        set_knob(f, knob, cfg)?;
    }
    Ok(())
}

/// Applies the module-parameter table `t.<key>` (if any) to `params`,
/// `version` first. Returns the table's origin if it was present.
fn apply_params<'a, C: Clone>(
    t: &T<'a>,
    key: &str,
    table: &'static [KnobSpec<C>],
    params: &mut C,
) -> Result<Option<&'a Origin>> {
    let Some(e) = t.table.get(key) else { return Ok(None) };
    let path = join(t.path, key);
    let mt = F { src: t.src, node: &e.node, path: &path }.table(&format!("a table of {key} module parameters"))?;
    let names: Vec<&str> = table.iter().map(|k| k.name).collect();
    mt.only(&names)?;
    let ordered = mt
        .table
        .entries
        .iter()
        .filter(|e| e.key == "version")
        .chain(mt.table.entries.iter().filter(|e| e.key != "version"));
    for pe in ordered {
        let Some(knob) = table.iter().find(|k| k.name == pe.key) else { continue };
        let p = join(&path, &pe.key);
        set_knob(F { src: t.src, node: &pe.node, path: &p }, knob, params)?;
    }
    Ok(Some(&e.node.origin))
}

/// Sets `knob` from a TOML value: the registry's kind says which values,
/// and its checks (`check_int`, the triple's rules) decide the range, as
/// for packetdrill's sysctl text.
fn set_knob<C>(f: F<'_>, knob: &KnobSpec<C>, cfg: &mut C) -> Result<()> {
    match &knob.kind {
        Kind::Bool(acc) => *acc(cfg) = f.bool01()?,
        Kind::U8 { acc, min, max } => *acc(cfg) = f.int_in(u64::from(*min), u64::from(*max))? as u8,
        Kind::U32 { acc, min, max, unit } => {
            let v = match (&f.node.value, unit) {
                (Value::String(s), IntUnit::Micros) => units::parse_time(s).map_err(|m| f.err(m))?.as_micros(),
                (Value::String(s), IntUnit::Bytes) => units::parse_size(s).map_err(|m| f.err(m))?,
                (Value::Integer(i), _) => {
                    u64::try_from(*i).map_err(|_| f.err(format!("must be between {min} and {max}, found {i}")))?
                }
                _ => return Err(f.wrong(&knob.accepts())),
            };
            *acc(cfg) = knob.check_int(v).map_err(|m| f.err(m))? as u32;
        }
        Kind::Triple(acc) => {
            let a = f.array("an array [min, default, max] of byte sizes")?;
            if a.len() != 3 {
                return Err(f.err(format!("expected 3 values [min, default, max], found {}", a.len())));
            }
            let mut out = [0u32; 3];
            for (i, n) in a.iter().enumerate() {
                let p = format!("{}[{i}]", f.path);
                let e = F { src: f.src, node: n, path: &p };
                out[i] = knobs::triple_element(e.bytes()?).map_err(|m| e.err(m))?;
            }
            knobs::triple_order(out).map_err(|m| f.err(m))?;
            *acc(cfg) = out;
        }
        // The core enum's `FromStr` decides; its error names the valid
        // values, and `f` adds the knob's path and place.
        Kind::Choice { set, .. } => set(cfg, f.str(&knob.accepts())?).map_err(|e| f.err(e.to_string()))?,
    }
    Ok(())
}

/// Builds one endpoint's [`TcpConfig`]: preset (the end's table, else
/// `[tcp]`, else linux-current), then congestion control (the end's
/// table, else the flow's `cc`, else `[tcp]`, else the preset's; in the
/// preset's era), then the chosen module's parameters from `[tcp]` and
/// the end's table, then the knobs of `[tcp]`, then those of the end's
/// table.
fn build_tcp(defaults: Option<&T<'_>>, end: Option<&T<'_>>, flow_cc: Option<&F<'_>>) -> Result<TcpConfig> {
    let preset_of = |t: Option<&T<'_>>| -> Result<Option<String>> {
        match t {
            Some(t) => t.get(knobs::PRESET.name, |f| preset_name(f).map(str::to_string)),
            None => Ok(None),
        }
    };
    let cc_of = |t: Option<&T<'_>>| -> Result<Option<String>> {
        match t {
            Some(t) => t.get(knobs::CONGESTION_CONTROL.name, |f| cc_name(f).map(str::to_string)),
            None => Ok(None),
        }
    };
    let preset = match preset_of(end)? {
        Some(p) => Some(p),
        None => preset_of(defaults)?,
    };
    let mut cfg = match preset {
        Some(p) => TcpConfig::preset(&p).unwrap_or_default(),
        None => TcpConfig::default(),
    };
    let flow_cc = match flow_cc {
        Some(f) => Some(cc_name(*f)?.to_string()),
        None => None,
    };
    let cc = match cc_of(end)? {
        Some(c) => Some(c),
        None => match flow_cc {
            Some(c) => Some(c),
            None => cc_of(defaults)?,
        },
    };
    if let Some(cc) = cc {
        // In the preset's era (e.g. v3.18's CUBIC and HyStart for "v3.12").
        if let Some(c) = cfg.congestion_control_named(&cc) {
            cfg.congestion_control = c;
        }
    }
    let tables: Vec<&T<'_>> = defaults.into_iter().chain(end).collect();
    let mut origin = None;
    // The module's table is the one named after it (`[tcp.cubic]`).
    let key = cfg.congestion_control.name();
    match &mut cfg.congestion_control {
        CcConfig::Cubic(p) => {
            for t in &tables {
                if let Some(o) = apply_params(t, key, knobs::CUBIC, p)? {
                    origin = Some((*t, key, o));
                }
            }
            if let Some((t, k, o)) = origin {
                check_params(t, k, o, p.validate())?;
            }
        }
        CcConfig::Dctcp(p) => {
            for t in &tables {
                if let Some(o) = apply_params(t, key, knobs::DCTCP, p)? {
                    origin = Some((*t, key, o));
                }
            }
            if let Some((t, k, o)) = origin {
                check_params(t, k, o, p.validate())?;
            }
        }
        CcConfig::Reno(p) => {
            for t in &tables {
                apply_params(t, key, knobs::RENO, p)?;
            }
        }
        CcConfig::Bbr(p) => {
            for t in &tables {
                apply_params(t, key, knobs::BBR, p)?;
            }
        }
    }
    for t in &tables {
        apply_knobs(t, &mut cfg)?;
    }
    Ok(cfg)
}
