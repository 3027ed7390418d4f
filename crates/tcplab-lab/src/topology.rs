//! `[topology]`: datacenter fabrics written as a few numbers instead of
//! hundreds of `[[node]]` and `[[link]]` tables.
//!
//! ```toml
//! [topology]
//! kind = "leaf-spine"        # or "fat-tree" with k = 4, 6, ...
//! leaves = 8
//! spines = 4
//! hosts_per_leaf = 16
//! host_link = { rate = "10Gbit", delay = "1us", queue = "200p" }
//! fabric_link = { rate = "40Gbit", delay = "1us" }
//! host = { qdisc = "fq" }    # keys of every generated host's [[node]]
//! switch = { ecmp = "l4" }   # keys of every generated switch's [[node]]
//! ```
//!
//! Names (what `--set`, flows and link counters use):
//! - leaf-spine: hosts `h0`, `h1`, … (leaf `i` holds hosts
//!   `i * hosts_per_leaf` …), leaves `l0` …, spines `s0` …; host links are
//!   named after their host (`h5`, from the host to its leaf: the `ab`
//!   direction is the host's NIC), fabric links `l<i>-s<j>`.
//! - fat-tree (Al-Fares et al., SIGCOMM 2008): `k` pods of `k/2` edge
//!   switches `e<pod>.<i>` and `k/2` aggregation switches `a<pod>.<i>`,
//!   `(k/2)²` core switches `c<n>`; each edge switch holds `k/2` hosts, so
//!   `k³/4` hosts `h0` … in pod order. Edge–aggregation links
//!   `e<p>.<i>-a<p>.<j>` (every pair within a pod), aggregation–core links
//!   `a<p>.<i>-c<n>` (aggregation switch `i` of every pod links to cores
//!   `i·k/2` … `i·k/2 + k/2 − 1`). `fabric_link` sets both switch tiers;
//!   `core_link` overrides it for the aggregation–core links.
//!
//! Generated nodes and links are appended after any written in the file,
//! so a scenario can add, e.g., a host on a slow link by hand. Switches
//! take `run.ecmp` unless `switch.ecmp` says otherwise; with equal-cost
//! paths and `ecmp = "off"` every flow takes the lowest-index link.

use crate::error::Result;
use crate::field::T;
use crate::generate::{append, take, template, view, TableBuilder};
use crate::tree::{Origin, Table, Tree};

/// Most hosts a generated fabric may have (a fat-tree of k = 64 has
/// 65,536); the simulator's memory, not its logic, is the limit.
pub const MAX_HOSTS: u64 = 65_536;
/// Most switches of one tier (leaves, spines).
pub const MAX_TIER: u64 = 4096;
/// Largest fat-tree arity.
pub const MAX_K: u64 = 64;

/// Replaces `[topology]` by the `[[node]]` and `[[link]]` tables it
/// describes.
pub(crate) fn expand(tree: &mut Tree) -> Result<()> {
    let Some(entry) = take(tree, "topology") else { return Ok(()) };
    let (nodes, links) = {
        let t = view(tree, &entry, "a table [topology] with kind = \"leaf-spine\" or \"fat-tree\"")?;
        match t.req("kind", |f| f.str("\"leaf-spine\" or \"fat-tree\"").map(str::to_string))?.as_str() {
            "leaf-spine" => {
                t.only(&["kind", "leaves", "spines", "hosts_per_leaf", "host_link", "fabric_link", "host", "switch"])?;
                let parts = Parts::read(&t)?;
                let leaves = t.req("leaves", |f| f.int_in(1, MAX_TIER))?;
                let spines = t.req("spines", |f| f.int_in(1, MAX_TIER))?;
                let per_leaf = t.req("hosts_per_leaf", |f| f.int_in(1, MAX_HOSTS))?;
                if leaves * per_leaf > MAX_HOSTS {
                    return Err(
                        t.err_at("hosts_per_leaf", format!("leaves × hosts_per_leaf is over {MAX_HOSTS} hosts"))
                    );
                }
                leaf_spine(&parts, leaves, spines, per_leaf)
            }
            "fat-tree" => {
                t.only(&["kind", "k", "host_link", "fabric_link", "core_link", "host", "switch"])?;
                let parts = Parts::read(&t)?;
                let k = t.req("k", |f| {
                    let k = f.int_in(2, MAX_K)?;
                    if k % 2 != 0 {
                        return Err(f.err(format!("a fat-tree's k must be even, found {k}")));
                    }
                    Ok(k)
                })?;
                fat_tree(&parts, k)
            }
            other => return Err(t.err_at("kind", format!("unknown topology {other:?} (known: leaf-spine, fat-tree)"))),
        }
    };
    append(tree, "node", &entry.node.origin, nodes);
    append(tree, "link", &entry.node.origin, links);
    Ok(())
}

/// The templates of a fabric, with where each was given.
struct Parts {
    origin: Origin,
    host_link: Option<Table>,
    fabric_link: Option<Table>,
    core_link: Option<Table>,
    host: Option<Table>,
    switch: Option<Table>,
}

impl Parts {
    fn read(t: &T<'_>) -> Result<Parts> {
        const LINK: &[&str] = &["name", "a", "b"];
        const NODE: &[&str] = &["name", "kind"];
        let fabric_link = template(t, "fabric_link", LINK)?.cloned();
        if !t.has("host_link") {
            return Err(t.err_at("host_link", "missing required key (the hosts' links: { rate = \"10Gbit\", ... })"));
        }
        if fabric_link.is_none() {
            return Err(
                t.err_at("fabric_link", "missing required key (the switches' links: { rate = \"40Gbit\", ... })")
            );
        }
        Ok(Parts {
            origin: t.origin.clone(),
            host_link: template(t, "host_link", LINK)?.cloned(),
            core_link: template(t, "core_link", LINK)?.cloned(),
            fabric_link,
            host: template(t, "host", NODE)?.cloned(),
            switch: template(t, "switch", NODE)?.cloned(),
        })
    }

    fn node(&self, name: String, switch: bool) -> Table {
        let (tpl, kind) = if switch { (&self.switch, "switch") } else { (&self.host, "host") };
        TableBuilder::from(tpl.as_ref()).str("name", name, &self.origin).str("kind", kind, &self.origin).build()
    }

    fn link(&self, tpl: &Option<Table>, name: String, a: &str, b: &str) -> Table {
        TableBuilder::from(tpl.as_ref())
            .str("name", name, &self.origin)
            .str("a", a, &self.origin)
            .str("b", b, &self.origin)
            .build()
    }
}

/// Two tiers: every leaf links to every spine.
fn leaf_spine(p: &Parts, leaves: u64, spines: u64, per_leaf: u64) -> (Vec<Table>, Vec<Table>) {
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    nodes.extend((0..spines).map(|s| p.node(format!("s{s}"), true)));
    nodes.extend((0..leaves).map(|l| p.node(format!("l{l}"), true)));
    for l in 0..leaves {
        for s in 0..spines {
            links.push(p.link(&p.fabric_link, format!("l{l}-s{s}"), &format!("l{l}"), &format!("s{s}")));
        }
    }
    for h in 0..leaves * per_leaf {
        nodes.push(p.node(format!("h{h}"), false));
        let name = format!("h{h}");
        links.push(p.link(&p.host_link, name.clone(), &name, &format!("l{}", h / per_leaf)));
    }
    (nodes, links)
}

/// Three tiers, k pods (Al-Fares et al.).
fn fat_tree(p: &Parts, k: u64) -> (Vec<Table>, Vec<Table>) {
    let half = k / 2;
    let mut nodes = Vec::new();
    let mut links = Vec::new();
    let core_tpl = if p.core_link.is_some() { &p.core_link } else { &p.fabric_link };
    nodes.extend((0..half * half).map(|c| p.node(format!("c{c}"), true)));
    for pod in 0..k {
        nodes.extend((0..half).map(|i| p.node(format!("a{pod}.{i}"), true)));
        nodes.extend((0..half).map(|i| p.node(format!("e{pod}.{i}"), true)));
        for a in 0..half {
            for j in 0..half {
                let core = a * half + j;
                links.push(p.link(
                    core_tpl,
                    format!("a{pod}.{a}-c{core}"),
                    &format!("a{pod}.{a}"),
                    &format!("c{core}"),
                ));
            }
        }
        for e in 0..half {
            for a in 0..half {
                let (en, an) = (format!("e{pod}.{e}"), format!("a{pod}.{a}"));
                links.push(p.link(&p.fabric_link, format!("{en}-{an}"), &en, &an));
            }
        }
    }
    for h in 0..k * half * half {
        let name = format!("h{h}");
        nodes.push(p.node(name.clone(), false));
        let (pod, edge) = (h / (half * half), (h / half) % half);
        links.push(p.link(&p.host_link, name.clone(), &name, &format!("e{pod}.{edge}")));
    }
    (nodes, links)
}
