//! A scenario, as the simulator would run it ([`SimConfig`]), turned into
//! the guest's set-up and applications ([`Job`]) and the kernel's module
//! parameters.
//!
//! **Nodes** become network namespaces `t-<name>`. A host has one
//! identity address `198.18.x.y/32` on its loopback (x.y = node index + 1),
//! which its flows bind to; switches forward (`ip_forward = 1`). Every
//! node gets a `/32` route to every host it can reach, through the link the
//! simulator's routing picks ([`tcplab_sim::next_hops_to`]: fewest hops,
//! then the lowest link index), so packets follow the model's paths. ECMP
//! (a switch with `ecmp` on and a choice of next hops,
//! [`tcplab_sim::first_multipath`]) is refused, naming `node[i].ecmp`.
//!
//! **Links** become veth pairs `l<index>` with addresses from
//! `198.19.0.0/16` (a `/30` per link) and static neighbour entries (no ARP
//! on the wire). Each direction's sender side has `htb` at the link rate
//! (burst of one byte, so that a packet leaves only when the previous one
//! has been "serialized") over the direction's queue: `pfifo`/`bfifo` at
//! its limit, or a step-marking RED ([`Action::RedStep`]) when it has an
//! ECN threshold, or `fq` on a host with `qdisc = "fq"`. A size table
//! (`stab overhead -14`) makes every qdisc count IP bytes, as the model
//! does, not Ethernet frames; except under fq, which counts frames in the
//! model as on a NIC: there the shaper's (and a policer's) rate is scaled
//! to frames instead. A direction with a policer (`police = {
//! rate, burst }`) gets a `matchall` filter on that htb with `action
//! police rate R burst B mtu 65535 drop` (act_police, which the image
//! builds in): it runs when htb classifies the packet, before any queue,
//! as the model's policer does; its drops are the root's drops less the
//! queue's.
//!
//! A link with a delay gets a middle namespace `w-<link>` between its
//! ends: each end's veth peer lives there, a `matchall` filter redirects
//! what arrives from one side to the other side's egress, and that egress
//! has the direction's `netem`:
//!
//! | model | netem | arrival |
//! |---|---|---|
//! | fixed `d` | `delay d rate R` | `max(s + d, A(prev)) + tx` = end of serialization + `d` |
//! | uniform `[a, b]` | `delay (a+b)/2 + tx(MTU) (b−a)/2` | start of serialization + U, shifted by one MTU's serialization: exact for full-sized packets |
//! | ordered-jitter `base, j` | `delay base+j/2 j/2 rate R` | `max(s + base + U[0, j], A(prev)) + tx` |
//! | on-off `base, d` | `delay base rate R`, changed to `delay base+d rate R` while on | `max(s + base + (on ? d : 0), A(prev)) + tx` |
//!
//! (`s`: when htb releases the packet, the start of its serialization;
//! `tx`: its serialization time at the link rate `R`, which netem's `rate`
//! adds and which also keeps order.) A link whose two directions have no
//! delay at all is one veth pair without a middle namespace; its packets
//! arrive at the start of their serialization rather than at its end
//! (12 µs earlier for 1500 bytes at 1 Gbit/s). An on-off delay and
//! blackouts become a [`NetemTimeline`] ([`crate::timeline`]): the guest
//! agent changes the netem's delay, or switches in 100 % loss, at each
//! change; the on-off chain is the model's (same slot and mean sojourns)
//! but not its draws. Random-walk delays, which change every slot, have no
//! counterpart and are refused.
//!
//! A direction with netem's `slot` gets `slot S S` on that netem (a slot
//! alone gives a delay-free link its middle namespace): what has come due
//! leaves in batches, as the model's `slot.rs` releases it.
//!
//! **Offloads**: TSO, GSO and GRO off on every veth, so that segments are
//! MSS-sized on the wire as in the model; a node with `offloads = true`
//! has them on for its own veths (the model refuses such a node), one with
//! `gro = true` GRO alone, which merges what one slot releases (the
//! model's `gro.rs`).
//!
//! **Knobs**: see [`crate::knobs`]. Sysctls are per namespace, so the
//! flow ends on one host must agree; module parameters and switches are
//! global and go on the kernel command line: a value one flow end sets
//! holds for every socket in the guest (two different values are an
//! error).
//!
//! **Series** ([`crate::series`]): what differs between kernel series
//! comes from its table, read here and nowhere else: the congestion
//! controls built in, `matchall` or `u32` filters, which sysctls are per
//! namespace (3.x: only `tcp_ecn`, the rest are global) and which exist,
//! the module parameters, sch_fq's pacing and options. On an era kernel
//! (3.12, 3.18, 4.17) a knob the kernel has no switch for must have the
//! value of the era's preset (`v3.18`, ...), which is what that kernel
//! does; anything else is refused, naming the field and the era. Every
//! switch an era image has is set on its command line, since their
//! defaults are the era's.

use crate::error::{KernelError, Result};
use crate::knobs::{self, convert, KnobSetting, Target};
use crate::series::Series;
use crate::switches;
use crate::timeline::{self, OnOff};
use std::collections::BTreeMap;
use tcplab_agent::job::{Action, App, FlowJob, Job, LinkProbe, NetemTimeline, SockOpts, Step, JOB_VERSION};
use tcplab_core::cc::CcConfig;
use tcplab_sim::config::{
    AppConfig, DelayModel, DirectionConfig, FqPacing, Limit, LossModel, Multipath, NodeKind, Qdisc, QueueConfig,
    SimConfig,
};

/// The knobs of one flow's two ends, rendered by the lab.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FlowKnobs {
    pub sender: Vec<KnobSetting>,
    pub receiver: Vec<KnobSetting>,
}

/// What translation needs to know about the kernel image.
#[derive(Clone, Copy, Debug)]
pub struct ImageFacts<'a> {
    pub hz: u32,
    /// Run-time switches the image has ([`crate::switches`]).
    pub switches: &'a [String],
    /// The image's kernel series and what it can do.
    pub series: &'static Series,
}

/// A translated scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub job: Job,
    /// Module parameters for the kernel command line (`tcp_cubic.beta=800`).
    pub cmdline: Vec<String>,
}

/// The first port the servers listen on: flow `i` listens on
/// `SERVER_PORT + i` (the model uses 5001 for every flow; one listener
/// per flow keeps each flow's socket options its own).
pub const SERVER_PORT: u16 = tcplab_sim::SERVER_PORT;

/// How often queue lengths are sampled when the scenario asks for no
/// traces (for `peak_queue_packets`).
pub const QUEUE_SAMPLE_INTERVAL: tcplab_core::time::Duration = tcplab_core::time::Duration::from_millis(10);

/// The packets a netem delay line holds before it drops: far more than any
/// scenario has in flight, since the model's delay never drops.
const NETEM_LIMIT: u32 = 1_000_000;

/// Translates `cfg` (validated by the simulator's rules). `knobs[i]` are
/// flow `i`'s rendered knobs; `out_dir` is where the guest writes its result.
pub fn translate(cfg: &SimConfig, knobs: &[FlowKnobs], image: ImageFacts, out_dir: &str) -> Result<Plan> {
    if knobs.len() != cfg.flows.len() {
        return Err(KernelError::new("internal: one knob list per flow is needed"));
    }
    if cfg.nodes.len() >= 65_535 || cfg.links.len() >= 16_384 {
        return Err(KernelError::new(
            "the kernel backend addresses at most 65,534 nodes and 16,383 links (198.18.0.0/15)",
        ));
    }
    refuse_ecmp(cfg)?;
    let mut settings = Settings::collect(cfg, knobs, image)?;
    if let Some(start) = image.series.clock_start {
        // The guest's wall clock, and so its randomness, from the seed.
        let ns = start.saturating_add(cfg.seed.saturating_mul(1_000_000_000));
        settings.cmdline.push(format!("time-travel-start={ns}"));
    }
    if let Some(p) = fq_pacing_switch(cfg, image)? {
        settings.cmdline.push(p);
    }
    let mut t = Translator {
        cfg,
        series: image.series,
        steps: Vec::new(),
        probes: Vec::new(),
        loss_probes: Vec::new(),
        timelines: Vec::new(),
        mtu: settings.mtu,
    };

    // The model's algorithms, the only ones a scenario can name (bbr
    // among them; the image builds CONFIG_TCP_CONG_BBR), as far as the
    // series has them.
    let series = image.series;
    let allowed: Vec<&str> = CcConfig::NAMES.iter().copied().filter(|c| series.has_cc(c)).collect();
    t.sysctl(None, "net.ipv4.tcp_allowed_congestion_control", &allowed.join(" "), "congestion controls");
    // Sysctls that are global in this series: one value for the guest.
    for (key, value) in settings.sysctls.get(&GLOBAL).into_iter().flatten() {
        t.sysctl(None, key, &value.0, &value.1);
    }
    for (i, node) in cfg.nodes.iter().enumerate() {
        let ns = node_ns(&node.name);
        let what = format!("node {}", node.name);
        t.exec(&what, &["ip", "netns", "add", &ns]);
        let forward = if node.kind == NodeKind::Switch { "1" } else { "0" };
        t.sysctl(Some(&ns), "net.ipv4.ip_forward", forward, &what);
        t.exec(&what, &["ip", "-n", &ns, "link", "set", "lo", "up"]);
        if node.kind == NodeKind::Host {
            t.exec(&what, &["ip", "-n", &ns, "addr", "add", &format!("{}/32", host_addr(i)), "dev", "lo"]);
            for (key, value) in settings.sysctls.get(&i).into_iter().flatten() {
                t.sysctl(Some(&ns), key, &value.0, &value.1);
            }
        }
    }
    for l in 0..cfg.links.len() {
        t.link(l)?;
    }
    t.routes(&settings);

    let ports = tcplab_sim::client_ports(&cfg.flows);
    let mut flows = Vec::with_capacity(cfg.flows.len());
    for (i, f) in cfg.flows.iter().enumerate() {
        let cc = f.tcp.congestion_control.name();
        let rcc = f.tcp_receiver.congestion_control.name();
        if !series.has_cc(cc) {
            return Err(KernelError::field(
                format!("flow[{i}].tcp.congestion_control"),
                format!(
                    "{cc}: {} has no such congestion control (it has {})",
                    series.title(),
                    series.congestion_controls.join(", ")
                ),
            ));
        }
        if cc != rcc {
            return Err(KernelError::field(
                format!("flow[{i}]"),
                format!("the sender runs {cc} and the receiver {rcc}: the kernel backend runs one congestion control per flow"),
            ));
        }
        flows.push(FlowJob {
            id: f.id.clone(),
            client_ns: node_ns(&cfg.nodes[f.from].name),
            client_addr: host_addr(f.from),
            server_ns: node_ns(&cfg.nodes[f.to].name),
            server_addr: host_addr(f.to),
            server_port: SERVER_PORT.wrapping_add(i as u16),
            client_ports: ports[i].clone(),
            start_ns: f.start.as_nanos(),
            gap_ns: f.repeat.gap.as_nanos(),
            duration_each_ns: f.repeat.duration_each.map(|d| d.as_nanos()),
            cc: cc.to_string(),
            nodelay: f.nodelay,
            client_sock: SockOpts { sndbuf: f.tcp.so_sndbuf, rcvbuf: f.tcp.so_rcvbuf },
            server_sock: SockOpts { sndbuf: f.tcp_receiver.so_sndbuf, rcvbuf: f.tcp_receiver.so_rcvbuf },
            app: match &f.app {
                AppConfig::Bulk { bytes, stop } => App::Bulk { bytes: *bytes, stop_ns: stop.map(|s| s.as_nanos()) },
                AppConfig::Rpc(r) => App::Rpc {
                    request: r.request,
                    response: r.response,
                    think_ns: r.think.as_nanos(),
                    count: r.count,
                    stop_ns: r.stop.map(|s| s.as_nanos()),
                },
            },
        });
    }
    let hosts = cfg.nodes.iter().filter(|n| n.kind == NodeKind::Host).map(|n| node_ns(&n.name)).collect();
    let job = Job {
        version: JOB_VERSION,
        setup: t.steps,
        duration_ns: cfg.duration.as_nanos(),
        // The sampler also measures the queues' peak lengths, so it runs
        // even when no trace is wanted (collect drops the rows then).
        trace_interval_ns: Some(cfg.trace_interval.unwrap_or(QUEUE_SAMPLE_INTERVAL).as_nanos()),
        flows,
        counter_namespaces: hosts,
        link_probes: t.probes,
        loss_probes: t.loss_probes,
        netem_timelines: t.timelines,
        hz: image.hz,
        capture: None,
        out_dir: out_dir.to_string(),
    };
    Ok(Plan { job, cmdline: settings.cmdline })
}

/// fq's pacing mode. 6.12's sch_fq still paces a socket's skbs from
/// `sk_pacing_rate` at dequeue (its credit path) when they come without a
/// departure time, which TCP gives every data skb since v4.20; the switch
/// [`switches::EDT`] (kernel/patches/0007) leaves them unstamped and keeps
/// them off fq's fast path. It holds for every socket of the guest, so all
/// fq hosts must agree.
fn fq_pacing_switch(cfg: &SimConfig, image: ImageFacts) -> Result<Option<String>> {
    let fq_hosts = cfg.nodes.iter().enumerate().filter_map(|(i, n)| match &n.qdisc {
        Qdisc::Fq(fq) if n.kind == NodeKind::Host => Some((i, fq.pacing)),
        _ => None,
    });
    let mut first: Option<(usize, FqPacing)> = None;
    for (i, pacing) in fq_hosts {
        match first {
            None => first = Some((i, pacing)),
            Some((j, p)) if p != pacing => {
                return Err(KernelError::field(
                    format!("node[{i}].qdisc.pacing"),
                    format!(
                        "node {:?} has fq pacing = \"{}\" and node {:?} \"{}\": on the kernel one switch \
                         ({}) decides for every socket of the guest",
                        cfg.nodes[i].name,
                        pacing_name(pacing),
                        cfg.nodes[j].name,
                        pacing_name(p),
                        switches::EDT
                    ),
                ))
            }
            Some(_) => {}
        }
    }
    if let (Some(native), Some((i, pacing))) = (image.series.fq_pacing, first) {
        // An era's fq paces one way, with no switch.
        if pacing_name(pacing) != native {
            return Err(KernelError::field(
                format!("node[{i}].qdisc.pacing"),
                format!(
                    "pacing = \"{}\": {}'s sch_fq paces \"{native}\" only (EDT came in 4.20)",
                    pacing_name(pacing),
                    image.series.title()
                ),
            ));
        }
        return Ok(None);
    }
    match first {
        Some((i, FqPacing::Credit)) => {
            if !image.switches.iter().any(|s| s == switches::EDT) {
                let what = "pacing = \"credit\" (sch_fq of Linux 3.12-4.19)";
                return Err(needs_switch(format!("node[{i}].qdisc.pacing"), what, switches::EDT));
            }
            Ok(Some(format!("{}=0", switches::EDT)))
        }
        _ => Ok(None),
    }
}

/// What an era kernel does with each knob: its preset's values, rendered
/// as the lab renders a scenario's (`tcp_reordering`, `cubic.beta`) for
/// the flow's congestion control; `None` on mainline, where knobs are
/// compared with their `linux-current` defaults instead.
pub fn era_reference(series: &Series, cc: &str) -> Option<BTreeMap<String, String>> {
    use tcplab_core::knobs as reg;
    if !series.is_era() {
        return None;
    }
    let mut c = tcplab_core::TcpConfig::preset(series.preset)?;
    if let Some(named) = c.congestion_control_named(cc) {
        c.congestion_control = named;
    }
    let mut out = BTreeMap::new();
    for k in reg::TCP {
        out.insert(k.name.to_string(), k.get(&c));
    }
    match &c.congestion_control {
        CcConfig::Cubic(p) => reg::CUBIC.iter().for_each(|k| drop(out.insert(format!("cubic.{}", k.name), k.get(p)))),
        CcConfig::Dctcp(p) => reg::DCTCP.iter().for_each(|k| drop(out.insert(format!("dctcp.{}", k.name), k.get(p)))),
        CcConfig::Reno(p) => reg::RENO.iter().for_each(|k| drop(out.insert(format!("reno.{}", k.name), k.get(p)))),
        CcConfig::Bbr(p) => reg::BBR.iter().for_each(|k| drop(out.insert(format!("bbr.{}", k.name), k.get(p)))),
    }
    Some(out)
}

/// `what` asks for a run-time switch of tcplab's kernel patches that the
/// image was built without.
fn needs_switch(path: String, what: &str, switch: &str) -> KernelError {
    KernelError::field(
        path,
        format!(
            "{what} needs the run-time switch {switch} from tcplab's kernel patches (kernel/patches), which this \
             kernel image lacks: build with `tcplab kernel build --patches kernel/patches`"
        ),
    )
}

fn pacing_name(p: FqPacing) -> &'static str {
    match p {
        FqPacing::Edt => "edt",
        FqPacing::Credit => "credit",
    }
}

/// ECMP is not translated: a switch with `ecmp` on that has a choice of
/// next hops is refused (docs/KERNEL.md, "Routes"). One without a choice
/// routes as with `ecmp = "off"` and is translated as such.
fn refuse_ecmp(cfg: &SimConfig) -> Result<()> {
    let Some((u, h, n)) = tcplab_sim::first_multipath(&cfg.nodes, &cfg.links) else { return Ok(()) };
    let policy = match cfg.nodes[u].multipath {
        Multipath::L3 => "l3",
        Multipath::L4 => "l4",
        Multipath::Off => "off",
    };
    Err(KernelError::field(
        format!("node[{u}].ecmp"),
        format!(
            "switch {:?} has ECMP on ({policy}) and {n} equal-cost next hops to {:?}; ECMP is not translated \
             (one next hop per destination is installed): Linux's multipath hash, with its own function and key \
             or the sending socket's txhash, would put flows on other paths than the model's. Set ecmp = \"off\" \
             on the node or in [run], or run the scenario on the model",
            cfg.nodes[u].name, cfg.nodes[h].name
        ),
    ))
}

/// The namespace of node `name`.
pub fn node_ns(name: &str) -> String {
    format!("t-{name}")
}

fn link_ns(name: &str) -> String {
    format!("w-{name}")
}

/// Host identity address of node `i`: 198.18.0.0/16, from 198.18.0.1.
pub fn host_addr(i: usize) -> String {
    let h = i + 1;
    format!("198.18.{}.{}", h >> 8, h & 0xff)
}

/// Address of side `side` (1 = `a`, 2 = `b`) of link `l`: a /30 in
/// 198.19.0.0/16.
fn link_addr(l: usize, side: usize) -> String {
    let base = l * 4 + side;
    format!("198.19.{}.{}", base >> 8, base & 0xff)
}

/// A fixed MAC per link end, so that neighbours can be entered statically.
/// `end`: 0 = node a's veth, 1 = node b's, 2 = the middle facing a, 3 = the
/// middle facing b.
fn mac(l: usize, end: u8) -> String {
    format!("02:00:{:02x}:{:02x}:{:02x}:00", (l >> 8) & 0xff, l & 0xff, end)
}

/// Sysctls per host, module parameters, MTU and per-route initcwnd,
/// checked for conflicts between the flow ends that share them.
/// The [`Settings::sysctls`] key of the sysctls that are global in the
/// image's series (3.x's TCP sysctls).
const GLOBAL: usize = usize::MAX;

struct Settings {
    /// host node (or [`GLOBAL`]) → sysctl key → (value, which knob set it).
    sysctls: BTreeMap<usize, BTreeMap<&'static str, (String, String)>>,
    /// (host, peer host) → initcwnd.
    initcwnd: BTreeMap<(usize, usize), String>,
    mtu: u32,
    cmdline: Vec<String>,
}

impl Settings {
    fn collect(cfg: &SimConfig, knobs: &[FlowKnobs], image: ImageFacts) -> Result<Settings> {
        let mut sysctls: BTreeMap<usize, BTreeMap<&'static str, (String, String)>> = BTreeMap::new();
        let mut params: BTreeMap<&'static str, (String, String, String)> = BTreeMap::new();
        let mut initcwnd: BTreeMap<(usize, usize), (String, String)> = BTreeMap::new();
        let mut mtu: Option<(String, String)> = None;
        let series = image.series;
        // Switch parameters, set explicitly on an era image.
        let mut switch_params: Vec<&'static str> = Vec::new();
        for (i, (f, k)) in cfg.flows.iter().zip(knobs).enumerate() {
            let era = era_reference(series, f.tcp.congestion_control.name());
            for (end, host, peer, list) in
                [("tcp", f.from, f.to, &k.sender), ("tcp_receiver", f.to, f.from, &k.receiver)]
            {
                let preset = list.iter().find(|s| s.name == "preset").map(|s| s.value.trim_matches('"').to_string());
                for s in list {
                    let path = format!("flow[{i}].{end}.{}", s.name);
                    let Some((target, conv)) = knobs::lookup(&s.name) else {
                        if s.is_default() {
                            continue;
                        }
                        return Err(KernelError::field(
                            path,
                            format!("knob {} = {} is not translated for the kernel backend", s.name, s.value),
                        ));
                    };
                    let conv = match (conv, series.switch_names(&s.name)) {
                        (knobs::Conv::Names(_), Some(names)) => knobs::Conv::Names(names),
                        (c, _) => c,
                    };
                    let value = || {
                        convert(conv, &s.value).ok_or_else(|| {
                            let offered = match conv {
                                knobs::Conv::Names(n) => {
                                    format!(
                                        " (the kernel offers: {})",
                                        n.iter().map(|(a, _)| *a).collect::<Vec<_>>().join(", ")
                                    )
                                }
                                _ => String::new(),
                            };
                            KernelError::field(
                                &path,
                                format!("{} = {} has no kernel counterpart{offered}", s.name, s.value),
                            )
                        })
                    };
                    // What the era kernel does with this knob (its
                    // preset's value); `None` on mainline.
                    let era_value = era.as_ref().map(|m| m.get(&s.name).cloned().unwrap_or_default());
                    let refuse_era = |why: &str| -> Result<()> {
                        match &era_value {
                            Some(v) if *v != s.value => Err(KernelError::field(
                                &path,
                                format!(
                                    "{} = {}: {} {why}; it behaves as {} = {v} (preset \"{}\"). Run this on the model \
                                     backend, or use --set tcp.preset={}",
                                    s.name,
                                    s.value,
                                    series.title(),
                                    s.name,
                                    series.preset,
                                    series.preset
                                ),
                            )),
                            _ => Ok(()),
                        }
                    };
                    match target {
                        Target::Label | Target::Inherent => {}
                        Target::ModelOnly if era_value.is_some() => refuse_era("has no switch for this mechanism")?,
                        Target::Switch(p) if era_value.is_some() && !image.switches.iter().any(|x| x == p) => {
                            refuse_era("has no switch for this mechanism")?
                        }
                        Target::Param(p) if series.lacks_params.contains(&p) => {
                            refuse_era(&format!("has no module parameter {p}"))?
                        }
                        Target::Sysctl(key) if series.lacks_sysctls.contains(&key) => {
                            refuse_era(&format!("has no sysctl {key}"))?
                        }
                        Target::ModelOnly => {
                            if !s.is_default() {
                                let from = match &preset {
                                    Some(p) if p != "linux-current" => format!(" (set by preset \"{p}\")"),
                                    _ => String::new(),
                                };
                                return Err(KernelError::field(
                                    path,
                                    format!(
                                        "{} = {}{from}: only the model has this mechanism; Linux 6.12 behaves as {} = {}. \
                                         Run this on the model backend, or choose the kernel's behaviour",
                                        s.name, s.value, s.name, s.default
                                    ),
                                ));
                            }
                        }
                        Target::Sysctl(key) => {
                            let v = value()?;
                            let per_ns = series.sysctl_per_netns(key);
                            let host_map = sysctls.entry(if per_ns { host } else { GLOBAL }).or_default();
                            match host_map.get(key) {
                                Some((old, by)) if *old != v && per_ns => {
                                    return Err(KernelError::field(
                                        path,
                                        format!(
                                            "{} = {} conflicts with {by} on host {}: the kernel sets {key} per host (network namespace)",
                                            s.name, s.value, cfg.nodes[host].name
                                        ),
                                    ))
                                }
                                Some((old, by)) if *old != v => {
                                    return Err(KernelError::field(
                                        path,
                                        format!(
                                            "{} = {} conflicts with {by}: {} has one {key} for the whole guest (not per network namespace)",
                                            s.name,
                                            s.value,
                                            series.title()
                                        ),
                                    ))
                                }
                                Some(_) => {}
                                None => {
                                    host_map.insert(key, (v, path));
                                }
                            }
                        }
                        Target::Param(p) | Target::Switch(p) => {
                            let v = value()?;
                            if let Target::Switch(_) = target {
                                if !s.is_default() && !image.switches.iter().any(|x| x == p) {
                                    return Err(needs_switch(path, &format!("{} = {}", s.name, s.value), p));
                                }
                                if series.switch_defaults_are_era && !switch_params.contains(&p) {
                                    switch_params.push(p);
                                }
                            }
                            // A module parameter holds for every socket in the
                            // guest: a value that one end sets applies to all,
                            // two different values are a conflict.
                            let default = convert(conv, &s.default).unwrap_or_default();
                            if v == default {
                                params.entry(p).or_insert((v, default, path));
                                continue;
                            }
                            match params.get(p) {
                                Some((old, d, _)) if old == d => {
                                    params.insert(p, (v, default, path));
                                }
                                Some((old, _, by)) if *old != v => {
                                    return Err(KernelError::field(
                                        path,
                                        format!(
                                            "{} = {} conflicts with {by}: {p} is a kernel module parameter, one value for every flow",
                                            s.name, s.value
                                        ),
                                    ))
                                }
                                Some(_) => {}
                                None => {
                                    params.insert(p, (v, default, path));
                                }
                            }
                        }
                        Target::SndBuf | Target::RcvBuf => {}
                        Target::RouteInitcwnd => {
                            let v = value()?;
                            match initcwnd.get(&(host, peer)) {
                                Some((old, by)) if *old != v => {
                                    return Err(KernelError::field(
                                        path,
                                        format!(
                                            "initcwnd = {} conflicts with {by}: the kernel sets it per route, {} to {}",
                                            s.value, cfg.nodes[host].name, cfg.nodes[peer].name
                                        ),
                                    ))
                                }
                                Some(_) => {}
                                None => {
                                    initcwnd.insert((host, peer), (v, path));
                                }
                            }
                        }
                        Target::Mtu => {
                            let v = value()?;
                            match &mtu {
                                Some((old, by)) if *old != v => {
                                    return Err(KernelError::field(
                                        path,
                                        format!(
                                            "mtu = {} conflicts with {by}: the kernel backend gives every veth one MTU",
                                            s.value
                                        ),
                                    ))
                                }
                                Some(_) => {}
                                None => mtu = Some((v, path)),
                            }
                        }
                        Target::Hz => {
                            let v = value()?;
                            if v != image.hz.to_string() {
                                return Err(KernelError::field(
                                    path,
                                    format!(
                                        "hz = {}, but the kernel image runs at HZ={}: set tcp.hz = {} or build an image with `tcplab kernel build --hz {}`",
                                        s.value, image.hz, image.hz, v
                                    ),
                                ));
                            }
                        }
                    }
                }
            }
        }
        // A switch of an era image is always set: its default is the era's.
        let cmdline = params
            .into_iter()
            .filter(|(p, (v, default, _))| v != default || switch_params.contains(p))
            .map(|(p, (v, _, _))| format!("{p}={v}"))
            .collect();
        let mtu = match mtu {
            Some((v, path)) => v.parse().map_err(|_| KernelError::field(path, format!("mtu {v:?} is not a number")))?,
            None => 1500,
        };
        let initcwnd = initcwnd.into_iter().map(|(k, (v, _))| (k, v)).filter(|(_, v)| v != "10").collect();
        Ok(Settings { sysctls, initcwnd, mtu, cmdline })
    }
}

struct Translator<'a> {
    cfg: &'a SimConfig,
    series: &'static Series,
    steps: Vec<Step>,
    probes: Vec<LinkProbe>,
    loss_probes: Vec<LinkProbe>,
    timelines: Vec<NetemTimeline>,
    mtu: u32,
}

impl Translator<'_> {
    fn exec(&mut self, what: &str, argv: &[&str]) {
        self.steps.push(Step {
            what: what.to_string(),
            action: Action::Exec { argv: argv.iter().map(|s| s.to_string()).collect() },
        });
    }

    /// Node `node`'s fq asks for option `opt`, which the series' sch_fq
    /// does not have.
    fn fq_lacks(&self, node: usize, opt: &str, off: &str) -> KernelError {
        KernelError::field(
            format!("node[{node}].qdisc.{opt}"),
            format!("{}'s sch_fq has no {opt}: set {opt} = \"{off}\" (its behaviour there)", self.series.title()),
        )
    }

    /// A filter that matches every packet: `matchall` (4.8), or on an
    /// older series `u32 match u32 0 0` (cls_u32: a zero mask matches all).
    fn match_all(&self) -> Vec<&'static str> {
        if self.series.matchall {
            vec!["matchall"]
        } else {
            vec!["u32", "match", "u32", "0", "0"]
        }
    }

    fn sysctl(&mut self, ns: Option<&str>, key: &str, value: &str, what: &str) {
        self.steps.push(Step {
            what: what.to_string(),
            action: Action::Sysctl { ns: ns.map(str::to_string), key: key.to_string(), value: value.to_string() },
        });
    }

    fn link(&mut self, l: usize) -> Result<()> {
        let cfg = self.cfg;
        let link = &cfg.links[l];
        let (a, b) = (&cfg.nodes[link.a], &cfg.nodes[link.b]);
        let (ns_a, ns_b) = (node_ns(&a.name), node_ns(&b.name));
        let dev = format!("l{l}");
        let what = format!("link {}", link.name);
        let plain = |d: &DirectionConfig| {
            d.delay == DelayModel::Fixed(tcplab_core::time::Duration::ZERO)
                && d.loss == LossModel::None
                && d.blackouts.is_empty()
                && d.slot.is_none()
        };
        let middle = !(plain(&link.ab) && plain(&link.ba));
        // The devices: (namespace, name) of node a's end, node b's end,
        // and the middle's two (if any).
        let mut devices = vec![(ns_a.clone(), dev.clone()), (ns_b.clone(), dev.clone())];
        if middle {
            let w = link_ns(&link.name);
            self.exec(&what, &["ip", "netns", "add", &w]);
            for (ns, end, peer, peer_end) in [(&ns_a, 0u8, "to-a", 2u8), (&ns_b, 1, "to-b", 3)] {
                self.veth(&what, (&dev, ns, &mac(l, end)), (peer, &w, &mac(l, peer_end)));
            }
            devices.push((w.clone(), "to-a".into()));
            devices.push((w.clone(), "to-b".into()));
            for (from, to) in [("to-a", "to-b"), ("to-b", "to-a")] {
                self.exec(&what, &["tc", "-n", &w, "qdisc", "add", "dev", from, "ingress"]);
                let mut argv = vec!["tc", "-n", &w, "filter", "add", "dev", from, "ingress"];
                argv.extend(self.match_all());
                argv.extend(["action", "mirred", "egress", "redirect", "dev", to]);
                self.exec(&what, &argv);
            }
        } else {
            self.veth(&what, (&dev, &ns_a, &mac(l, 0)), (&dev, &ns_b, &mac(l, 1)));
        }
        for (i, (ns, d)) in devices.iter().enumerate() {
            // Devices 0 and 1 are the nodes'; the middle's only forward,
            // with offloads off. A node with `gro` (and no other offload)
            // turns on GRO only, which also gives its veth a NAPI
            // context (veth.c `veth_set_features`).
            let node = [Some(a), Some(b)].get(i).copied().flatten();
            let tso = node.is_some_and(|n| n.offloads);
            let gro = node.is_some_and(|n| n.offloads || n.gro);
            let onoff = |on: bool| if on { "on" } else { "off" };
            self.exec(
                &what,
                &[
                    "ip",
                    "netns",
                    "exec",
                    ns,
                    "ethtool",
                    "-K",
                    d,
                    "tso",
                    onoff(tso),
                    "gso",
                    onoff(tso),
                    "gro",
                    onoff(gro),
                ],
            );
            self.exec(&what, &["ip", "-n", ns, "link", "set", d, "up"]);
        }
        for (ns, side, peer_side, peer_end) in [(&ns_a, 1, 2, 1u8), (&ns_b, 2, 1, 0u8)] {
            self.exec(&what, &["ip", "-n", ns, "addr", "add", &format!("{}/30", link_addr(l, side)), "dev", &dev]);
            self.exec(
                &what,
                &[
                    "ip",
                    "-n",
                    ns,
                    "neigh",
                    "add",
                    &link_addr(l, peer_side),
                    "lladdr",
                    &mac(l, peer_end),
                    "dev",
                    &dev,
                    "nud",
                    "permanent",
                ],
            );
        }
        for (dir, from, to, conf) in [("ab", link.a, link.b, &link.ab), ("ba", link.b, link.a, &link.ba)] {
            self.direction(l, dir, from, to, conf, middle)?;
        }
        Ok(())
    }

    /// The shaper and queue at the sending end of one direction, and its
    /// delay in the middle.
    fn direction(
        &mut self,
        l: usize,
        dir: &str,
        from: usize,
        to: usize,
        conf: &DirectionConfig,
        middle: bool,
    ) -> Result<()> {
        let cfg = self.cfg;
        let link = &cfg.links[l];
        let (sender, receiver) = (&cfg.nodes[from], &cfg.nodes[to]);
        let ns = node_ns(&sender.name);
        let dev = format!("l{l}");
        let id = format!("{}:{}->{}", link.name, sender.name, receiver.name);
        let what = format!("link {} {}->{}", link.name, sender.name, receiver.name);
        // fq under the shaper counts what a NIC's fq counts (`qdisc_pkt_len`:
        // the frame, and a GSO skb's every segment): a size table would give
        // it `skb->len - 14` for a whole GSO skb and change its credit
        // arithmetic (fq's pacing decisions). So a host with fq has no size
        // table and its shaper's rate counts frames instead: rate ×
        // (MTU + 14) / MTU is the link's rate in IP bytes for full-sized
        // packets (a small packet is charged 14 bytes more than in the model).
        let fq_host = matches!(sender.qdisc, Qdisc::Fq(_)) && sender.kind == NodeKind::Host;
        let (mtu, eth) = (u64::from(self.mtu), u64::from(tcplab_sim::ETH_HLEN));
        let counted =
            |x: u64| if fq_host { (u128::from(x) * u128::from(mtu + eth) / u128::from(mtu)) as u64 } else { x };
        let rate = format!("{}bit", counted(link.rate_bps));
        let root: &[&str] = if fq_host { &["htb"] } else { &["stab", "overhead", "-14", "htb"] };
        let mut argv = vec!["tc", "-n", &ns, "qdisc", "add", "dev", &dev, "root", "handle", "1:"];
        argv.extend_from_slice(root);
        argv.extend_from_slice(&["default", "1"]);
        self.exec(&what, &argv);
        self.exec(
            &what,
            &[
                "tc", "-n", &ns, "class", "add", "dev", &dev, "parent", "1:", "classid", "1:1", "htb", "rate", &rate,
                "ceil", &rate, "burst", "1", "cburst", "1", "quantum", "60000",
            ],
        );
        let leaf = ["parent", "1:1", "handle", "10:"];
        match (&sender.qdisc, sender.kind == NodeKind::Host) {
            (Qdisc::Fq(fq), true) => {
                let mut argv: Vec<String> = ["tc", "-n", &ns, "qdisc", "add", "dev", &dev]
                    .iter()
                    .chain(leaf.iter())
                    .map(|s| s.to_string())
                    .collect();
                argv.push("fq".into());
                for (k, v) in [
                    ("limit", fq.limit.to_string()),
                    ("flow_limit", fq.flow_limit.to_string()),
                    ("quantum", fq.quantum.to_string()),
                    ("initial_quantum", fq.initial_quantum.to_string()),
                    ("refill_delay", format!("{}us", fq.flow_refill_delay.as_nanos() / 1000)),
                    ("low_rate_threshold", format!("{}bit", fq.low_rate_threshold * 8)),
                ] {
                    // An option the series' fq lacks: its behaviour is the
                    // option's "off" (no low-rate pacing), nothing else.
                    if self.series.fq_lacks.contains(&k) {
                        if k == "low_rate_threshold" && fq.low_rate_threshold != 0 {
                            return Err(self.fq_lacks(from, k, "0bit"));
                        }
                        continue;
                    }
                    argv.push(k.into());
                    argv.push(v);
                }
                if fq.ce_threshold.is_some() && self.series.fq_lacks.contains(&"ce_threshold") {
                    return Err(self.fq_lacks(from, "ce_threshold", "none"));
                }
                if let Some(t) = fq.ce_threshold {
                    argv.push("ce_threshold".into());
                    argv.push(format!("{}us", t.as_nanos() / 1000));
                }
                self.steps.push(Step { what: what.clone(), action: Action::Exec { argv } });
            }
            _ => self.queue(&ns, &dev, &what, &conf.queue),
        }
        if let Some(p) = &conf.police {
            // A policer in front of the queue: act_police on a matchall
            // filter of the root htb, which runs when htb_classify
            // classifies the packet, before any queue; a packet it shoots
            // (TC_ACT_SHOT, `drop`) is counted in the root's drops. `mtu`
            // lifts act_police's default size limit (2040 bytes, from
            // iproute2's rate table) above any packet of the scenario.
            let (rate, burst) = (format!("{}bit", counted(p.rate_bps)), counted(p.burst_bytes).to_string());
            let mut argv =
                vec!["tc", "-n", &ns, "filter", "add", "dev", &dev, "parent", "1:", "protocol", "all", "prio", "1"];
            argv.extend(self.match_all());
            argv.extend(["classid", "1:1", "action", "police", "rate", &rate, "burst", &burst, "mtu", "65535", "drop"]);
            self.exec(&format!("{what} police"), &argv);
        }
        self.probes.push(LinkProbe {
            id: id.clone(),
            ns: ns.clone(),
            dev: dev.clone(),
            queue_handle: 0x10 << 16,
            root_handle: 1 << 16,
        });
        if middle {
            let w = link_ns(&link.name);
            let out = if to == link.b { "to-b" } else { "to-a" };
            // `change` must repeat the size table, or the qdisc loses it.
            let netem = |verb: &str| -> Vec<String> {
                ["tc", "-n", &w, "qdisc", verb, "dev", out, "root", "handle", "1:", "stab", "overhead", "-14", "netem"]
                    .iter()
                    .map(|s| s.to_string())
                    .chain(["limit".to_string(), NETEM_LIMIT.to_string()])
                    .collect()
            };
            let loss = netem_loss(&conf.loss);
            // The arguments in a state: the chain on or off (an on-off
            // delay), and in a blackout or not.
            let (base_delay, on_delay) = match &conf.delay {
                DelayModel::OnOff { base, delay, .. } => (
                    self.netem_delay(l, dir, &DelayModel::Fixed(*base))?,
                    self.netem_delay(l, dir, &DelayModel::Fixed(*base + *delay))?,
                ),
                d => {
                    let args = self.netem_delay(l, dir, d)?;
                    (args.clone(), args)
                }
            };
            // netem's `slot MIN MAX` (equal: a fixed interval).
            let slot: Vec<String> = match conf.slot {
                Some(s) => {
                    let s = netem_time(s.as_nanos());
                    vec!["slot".to_string(), s.clone(), s]
                }
                None => Vec::new(),
            };
            let args = |on: bool, dark: bool| -> Vec<String> {
                let mut v = if on { on_delay.clone() } else { base_delay.clone() };
                v.extend(slot.iter().cloned());
                if dark {
                    v.extend(["loss".to_string(), "random".to_string(), "100%".to_string()]);
                } else {
                    v.extend(loss.iter().cloned());
                }
                v
            };
            let created = args(false, false);
            let mut argv = netem("add");
            argv.extend(created.iter().cloned());
            if conf.loss != LossModel::None || !conf.blackouts.is_empty() {
                self.loss_probes.push(LinkProbe {
                    id: id.clone(),
                    ns: w.clone(),
                    dev: out.to_string(),
                    queue_handle: 1 << 16,
                    root_handle: 1 << 16,
                });
            }
            let on_off = match conf.delay {
                DelayModel::OnOff { mean_on, mean_off, slot, .. } => Some(OnOff {
                    slot,
                    mean_on,
                    mean_off,
                    seed: tcplab_sim::on_off::on_off_seed(cfg.seed, tcplab_sim::dir_index(&cfg.links, l, from)),
                }),
                _ => None,
            };
            let changes = timeline::changes(on_off, &conf.blackouts, cfg.duration.as_nanos(), &created, args);
            if !changes.is_empty() {
                self.timelines.push(NetemTimeline { what: what.clone(), change_argv: netem("change"), changes });
            }
            self.steps.push(Step { what, action: Action::Exec { argv } });
        }
        Ok(())
    }

    /// A veth pair, each end `(name, namespace, MAC)` created in its
    /// namespace with the scenario's MTU.
    fn veth(&mut self, what: &str, end: (&str, &str, &str), peer: (&str, &str, &str)) {
        let mtu = self.mtu.to_string();
        let argv = [
            "ip", "link", "add", end.0, "netns", end.1, "address", end.2, "mtu", &mtu, "type", "veth", "peer", "name",
            peer.0, "netns", peer.1, "address", peer.2, "mtu", &mtu,
        ];
        self.exec(what, &argv);
    }

    /// `pfifo`/`bfifo` at the limit, or step-marking RED.
    fn queue(&mut self, ns: &str, dev: &str, what: &str, q: &QueueConfig) {
        let base = ["tc", "-n", ns, "qdisc", "add", "dev", dev];
        match q.ecn_threshold {
            None => {
                let (kind, limit) = match q.limit {
                    Limit::Packets(n) => ("pfifo", n),
                    Limit::Bytes(n) => ("bfifo", n),
                };
                let limit = limit.to_string();
                let argv: Vec<&str> =
                    base.iter().copied().chain(["parent", "1:1", "handle", "10:", kind, "limit", &limit]).collect();
                self.exec(what, &argv);
            }
            Some(threshold) => {
                // The model marks when the queue exceeds the threshold;
                // RED marks when the backlog (IP bytes) reaches
                // `threshold_bytes`. A packet threshold becomes full-sized
                // packets' bytes.
                let threshold_bytes = match threshold {
                    Limit::Bytes(n) => n.saturating_add(1),
                    Limit::Packets(n) => n.saturating_mul(self.mtu as u64).saturating_add(1),
                };
                let limit_bytes = match q.limit {
                    Limit::Bytes(n) => n,
                    Limit::Packets(_) => 0,
                };
                self.steps.push(Step {
                    what: what.to_string(),
                    action: Action::RedStep {
                        ns: ns.to_string(),
                        dev: dev.to_string(),
                        parent: 0x0001_0001,
                        handle: 0x10 << 16,
                        limit_bytes: limit_bytes.min(u32::MAX as u64) as u32,
                        threshold_bytes: threshold_bytes.min(u32::MAX as u64 / 2) as u32,
                    },
                });
                if let Limit::Packets(n) = q.limit {
                    let n = n.to_string();
                    let argv: Vec<&str> =
                        base.iter().copied().chain(["parent", "10:1", "handle", "20:", "pfifo", "limit", &n]).collect();
                    self.exec(what, &argv);
                }
            }
        }
    }

    /// netem's arguments for one direction's delay (see the module doc).
    fn netem_delay(&self, l: usize, dir: &str, delay: &DelayModel) -> Result<Vec<String>> {
        let link = &self.cfg.links[l];
        let rate = format!("{}bit", link.rate_bps);
        Ok(match delay {
            DelayModel::Fixed(d) => vec!["delay".into(), netem_time(d.as_nanos()), "rate".into(), rate],
            DelayModel::Uniform { min, max } => {
                let (min, max) = (min.as_nanos(), max.as_nanos());
                // Serialization of a full-sized packet: netem adds the
                // jitter at the start of serialization, the model at its end.
                let tx = (self.mtu as u128 * 8_000_000_000).div_ceil(link.rate_bps.max(1) as u128) as u64;
                let mid = min + (max - min) / 2 + tx;
                let half = (max - min) / 2;
                let mut v = vec!["delay".to_string(), netem_time(mid)];
                if half > 0 {
                    v.push(netem_time(half));
                }
                v
            }
            DelayModel::OrderedJitter { base, jitter } => {
                let half = jitter.as_nanos() / 2;
                let mut v = vec!["delay".to_string(), netem_time(base.as_nanos() + half)];
                if half > 0 {
                    v.push(netem_time(half));
                }
                v.extend(["rate".to_string(), rate]);
                v
            }
            // The off state; the agent switches it (see `direction`).
            DelayModel::OnOff { base, .. } => vec!["delay".into(), netem_time(base.as_nanos()), "rate".into(), rate],
            DelayModel::RandomWalk { .. } => {
                return Err(KernelError::field(
                    format!("link[{l}].{dir}.delay"),
                    "the random-walk delay model has no netem counterpart: the kernel backend offers fixed, uniform, \
                     ordered-jitter and on-off delays",
                ));
            }
        })
    }

    /// A /32 route on every node to every host it can reach.
    fn routes(&mut self, settings: &Settings) {
        let cfg = self.cfg;
        for (h, host) in cfg.nodes.iter().enumerate() {
            if host.kind != NodeKind::Host {
                continue;
            }
            let hops = tcplab_sim::next_hops_to(&cfg.nodes, &cfg.links, h);
            for (u, hop) in hops.into_iter().enumerate() {
                let Some((l, v)) = hop else { continue };
                let link = &cfg.links[l];
                let via = link_addr(l, if v == link.a { 1 } else { 2 });
                let ns = node_ns(&cfg.nodes[u].name);
                let dst = format!("{}/32", host_addr(h));
                let dev = format!("l{l}");
                let what = format!("route {} -> {}", cfg.nodes[u].name, host.name);
                let mut argv = vec!["ip", "-n", &ns, "route", "add", &dst, "via", &via, "dev", &dev];
                let iw = settings.initcwnd.get(&(u, h));
                if let Some(iw) = iw {
                    argv.extend(["initcwnd", iw.as_str()]);
                }
                self.exec(&what, &argv);
            }
        }
    }
}

/// A netem time argument: tc takes no "ns" unit; microseconds with three
/// decimals are exact.
fn netem_time(ns: u64) -> String {
    format!("{}.{:03}us", ns / 1000, ns % 1000)
}

/// netem's loss arguments (`loss random P`, `loss gemodel p r 1-h 1-k`),
/// the percentages written so that iproute2's `get_percent` gives back the
/// model's 32-bit probabilities exactly.
fn netem_loss(loss: &LossModel) -> Vec<String> {
    let pct = |p: u32| format!("{:.10}%", p as f64 / u32::MAX as f64 * 100.0);
    match *loss {
        LossModel::None => Vec::new(),
        LossModel::Random { p } => vec!["loss".into(), "random".into(), pct(p)],
        LossModel::GilbertElliott { p, r, bad_loss, good_loss } => {
            vec!["loss".into(), "gemodel".into(), pct(p), pct(r), pct(bad_loss), pct(good_loss)]
        }
    }
}

/// The set-up as shell-like lines, for `--dry-run` and for tests.
pub fn describe(plan: &Plan) -> Vec<String> {
    let mut out = Vec::new();
    if !plan.cmdline.is_empty() {
        out.push(format!("# kernel command line: {}", plan.cmdline.join(" ")));
    }
    for s in &plan.job.setup {
        out.push(match &s.action {
            Action::Exec { argv } => argv.join(" "),
            Action::Sysctl { ns: Some(ns), key, value } => format!("ip netns exec {ns} sysctl -qw {key}=\"{value}\""),
            Action::Sysctl { ns: None, key, value } => format!("sysctl -qw {key}=\"{value}\""),
            Action::Write { path, value } => format!("echo {value} > {path}"),
            Action::RedStep { ns, dev, parent, handle, limit_bytes, threshold_bytes } => format!(
                "tc -n {ns} qdisc add dev {dev} parent {:x}:{:x} handle {:x}: red limit {limit_bytes} min {threshold_bytes} max {threshold_bytes} \
                 avpkt 1500 ecn nodrop # by netlink, Wlog 0: marks when the backlog reaches {threshold_bytes} bytes",
                parent >> 16,
                parent & 0xffff,
                handle >> 16
            ),
        });
    }
    out
}
