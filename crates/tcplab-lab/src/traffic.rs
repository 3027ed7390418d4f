//! `[traffic]`: the standard datacenter traffic patterns, generated as
//! `[[flow]]` tables between the scenario's hosts (written by hand or by
//! `[topology]`), in the order the hosts are declared.
//!
//! ```toml
//! [traffic]
//! pattern = "permutation"     # or "all-to-all", "incast", "poisson"
//! seed = 1                    # draws the pattern (not the run's seed)
//! parallel = 1                # connections per pair (iperf -P)
//! flow = { cc = "dctcp", app = { kind = "bulk", bytes = "1MB" } }
//! ```
//!
//! - `permutation`: every host sends to one other host and receives from
//!   one (a random cyclic permutation, Sattolo's algorithm), so no host is
//!   paired with itself and every pair crosses the fabric when hosts are
//!   many.
//! - `all-to-all`: every ordered pair of distinct hosts.
//! - `incast`: `senders` hosts (default: all others, else a random
//!   choice) to one `receiver` (default: the first host), the partition–
//!   aggregate pattern of the DCTCP paper; `flow.repeat`/`gap` make rounds.
//! - `poisson`: each host starts flows at the times of a Poisson process
//!   to a uniformly random other host, sizes drawn from `sizes` (a CDF
//!   file, [`crate::flow_sizes`], relative to the scenario file), at a
//!   rate giving each host's link `load` (0..1] of its rate on average:
//!   `λ = load · rate / (8 · mean size)`, HPCC's `traffic_gen.py` rule.
//!   Arrivals fall in `[start, stop)` (default: the whole run).
//!
//! Flow ids are `FROM-TO` (`FROM-TO.K` for parallel connections and for
//! Poisson arrivals, K counting from 0), so `goodput.h3-*` or
//! `fct.*.p99` select them. The pattern is drawn from `traffic.seed`,
//! not `run.seed`: every seed of a `compare` runs the same flows, and a
//! sweep over `traffic.seed` varies the pattern.

use crate::error::Result;
use crate::field::{F, T};
use crate::flow_sizes::{unit, FlowSizes};
use crate::generate::{append, take, template, view, TableBuilder};
use crate::tree::{Origin, Table, Tree, Value};
use crate::units;
use std::path::Path;
use tcplab_core::time::Duration;
use tcplab_sim::rng::{splitmix64, Pcg32};

/// Most flows a pattern may generate (the simulator's own limits, such as
/// ports per host, are checked on the result).
pub const MAX_GENERATED_FLOWS: u64 = 1_000_000;

/// PCG stream of the traffic generator ("traffic" in ASCII).
const STREAM: u64 = 0x0074_7261_6666_6963;

/// Replaces `[traffic]` by the `[[flow]]` tables it describes.
pub(crate) fn expand(tree: &mut Tree) -> Result<()> {
    let Some(entry) = take(tree, "traffic") else { return Ok(()) };
    let flows = {
        let t = view(tree, &entry, "a table [traffic] with a pattern")?;
        let hosts = host_names(tree);
        let seed = t.get("seed", |f| f.u64())?.unwrap_or(1);
        let mut rng = Pcg32::new(splitmix64(seed), STREAM);
        let gen = Gen { origin: t.origin.clone(), hosts: &hosts };
        let pattern = t.req("pattern", |f| f.str("a pattern name").map(str::to_string))?;
        if hosts.len() < 2 {
            return Err(t.err_at("pattern", format!("needs at least two hosts, the scenario has {}", hosts.len())));
        }
        let parallel = |t: &T<'_>| t.get("parallel", |f| f.int_in(1, MAX_GENERATED_FLOWS)).map(|p| p.unwrap_or(1));
        match pattern.as_str() {
            "permutation" | "all-to-all" => {
                t.only(&["pattern", "seed", "parallel", "flow"])?;
                let tpl = template(&t, "flow", &["id", "from", "to"])?;
                let pairs: Vec<(usize, usize)> = if pattern == "permutation" {
                    permutation(hosts.len(), &mut rng).into_iter().enumerate().collect()
                } else {
                    let n = hosts.len();
                    (0..n).flat_map(|a| (0..n).filter(move |&b| b != a).map(move |b| (a, b))).collect()
                };
                gen.pairs(&t, &pairs, parallel(&t)?, tpl)?
            }
            "incast" => {
                t.only(&["pattern", "seed", "parallel", "flow", "receiver", "senders"])?;
                let tpl = template(&t, "flow", &["id", "from", "to"])?;
                let receiver = t.get("receiver", |f| gen.host(f))?.unwrap_or(0);
                let others: Vec<usize> = (0..hosts.len()).filter(|&h| h != receiver).collect();
                let n = t.get("senders", |f| f.int_in(1, others.len() as u64))?.unwrap_or(others.len() as u64);
                let mut senders = choose(others, n as usize, &mut rng);
                senders.sort_unstable();
                let pairs: Vec<(usize, usize)> = senders.into_iter().map(|s| (s, receiver)).collect();
                gen.pairs(&t, &pairs, parallel(&t)?, tpl)?
            }
            "poisson" => {
                t.only(&["pattern", "seed", "flow", "sizes", "load", "start", "stop"])?;
                let tpl = template(&t, "flow", &["id", "from", "to", "start", "app"])?;
                gen.poisson(tree, &t, tpl, &mut rng)?
            }
            other => {
                return Err(t.err_at(
                    "pattern",
                    format!("unknown pattern {other:?} (known: permutation, all-to-all, incast, poisson)"),
                ))
            }
        }
    };
    append(tree, "flow", &entry.node.origin, flows);
    Ok(())
}

/// The names of the scenario's hosts, in declaration order. Malformed
/// node tables are skipped here; validation reports them.
fn host_names(tree: &Tree) -> Vec<String> {
    let Value::Table(root) = &tree.root.value else { return Vec::new() };
    let Some(Value::Array(nodes)) = root.get("node").map(|e| &e.node.value) else { return Vec::new() };
    nodes
        .iter()
        .filter_map(|n| match &n.value {
            Value::Table(t) => {
                let is_switch = matches!(t.get("kind").map(|e| &e.node.value), Some(Value::String(k)) if k == "switch");
                match t.get("name").map(|e| &e.node.value) {
                    Some(Value::String(name)) if !is_switch => Some(name.clone()),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// A random cyclic permutation of `0..n` (Sattolo): `p[i] != i` for all i.
fn permutation(n: usize, rng: &mut Pcg32) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i as u64) as usize;
        p.swap(i, j);
    }
    p
}

/// `n` of `items` chosen at random (a partial Fisher–Yates shuffle); all
/// of them, in order, when `n` is their number.
fn choose(mut items: Vec<usize>, n: usize, rng: &mut Pcg32) -> Vec<usize> {
    if n < items.len() {
        for i in 0..n {
            let j = i + rng.below((items.len() - i) as u64) as usize;
            items.swap(i, j);
        }
    }
    items.truncate(n);
    items
}

struct Gen<'a> {
    origin: Origin,
    hosts: &'a [String],
}

impl Gen<'_> {
    fn host(&self, f: F<'_>) -> Result<usize> {
        let name = f.str("a host name")?;
        self.hosts.iter().position(|h| h == name).ok_or_else(|| f.err(format!("no host named {name:?}")))
    }

    fn flow(&self, tpl: Option<&Table>, from: usize, to: usize, id: String) -> TableBuilder {
        TableBuilder::from(tpl).str("id", id, &self.origin).str("from", self.hosts[from].clone(), &self.origin).str(
            "to",
            self.hosts[to].clone(),
            &self.origin,
        )
    }

    fn pairs(&self, t: &T<'_>, pairs: &[(usize, usize)], parallel: u64, tpl: Option<&Table>) -> Result<Vec<Table>> {
        let total = pairs.len() as u64 * parallel;
        if total > MAX_GENERATED_FLOWS {
            return Err(t.err_at("pattern", format!("would generate {total} flows; at most {MAX_GENERATED_FLOWS}")));
        }
        let mut flows = Vec::with_capacity(total as usize);
        for &(a, b) in pairs {
            let pair = format!("{}-{}", self.hosts[a], self.hosts[b]);
            for k in 0..parallel {
                let id = if parallel == 1 { pair.clone() } else { format!("{pair}.{k}") };
                flows.push(self.flow(tpl, a, b, id).build());
            }
        }
        Ok(flows)
    }

    fn poisson(&self, tree: &Tree, t: &T<'_>, tpl: Option<&Table>, rng: &mut Pcg32) -> Result<Vec<Table>> {
        let sizes = t.req("sizes", |f| {
            let rel = f.str("the path of a flow-size CDF file")?;
            let dir = Path::new(&tree.source.name).parent().unwrap_or(Path::new(""));
            FlowSizes::read(&dir.join(rel)).map_err(|e| f.err(e.to_string()))
        })?;
        let load = t.req("load", |f| match f.node.value {
            Value::Float(x) if x > 0.0 && x <= 1.0 => Ok(x),
            Value::Integer(1) => Ok(1.0),
            _ => Err(f.wrong("a load between 0 (exclusive) and 1")),
        })?;
        let start = t.get("start", |f| f.time())?.unwrap_or(Duration::ZERO);
        let stop = match t.get("stop", |f| f.positive_time())? {
            Some(s) => s,
            None => run_duration(tree).ok_or_else(|| t.err_at("stop", "give stop, or run.duration"))?,
        };
        if stop <= start {
            return Err(t.err_at("stop", format!("is not after start ({})", units::format_time(start))));
        }
        let mean = sizes.mean();
        let rates = host_rates(tree, self.hosts);
        let mut arrivals: Vec<(u64, usize, usize, u64)> = Vec::new();
        for (h, rate) in rates.iter().enumerate() {
            let Some(rate) = rate else {
                return Err(t.err_at("load", format!("host {:?} has no link with a rate to load", self.hosts[h])));
            };
            let per_ns = load * *rate as f64 / (8.0 * mean) / 1e9;
            let mut at = start.as_nanos() as f64;
            loop {
                at += -(1.0 - unit(rng)).ln() / per_ns;
                if at >= stop.as_nanos() as f64 {
                    break;
                }
                let mut to = rng.below(self.hosts.len() as u64 - 1) as usize;
                if to >= h {
                    to += 1;
                }
                arrivals.push((at as u64, h, to, sizes.sample(rng)));
                if arrivals.len() as u64 > MAX_GENERATED_FLOWS {
                    return Err(t.err_at(
                        "load",
                        format!("would generate over {MAX_GENERATED_FLOWS} flows; lower load or shorten the window"),
                    ));
                }
            }
        }
        arrivals.sort_unstable();
        Ok(arrivals
            .iter()
            .enumerate()
            .map(|(k, &(at, from, to, bytes))| {
                let app = TableBuilder::from(None)
                    .str("kind", "bulk", &self.origin)
                    .set("bytes", Value::Integer(bytes as i64), &self.origin)
                    .build();
                let id = format!("{}-{}.{k}", self.hosts[from], self.hosts[to]);
                self.flow(tpl, from, to, id)
                    .str("start", format!("{at}ns"), &self.origin)
                    .set("app", Value::Table(app), &self.origin)
                    .build()
            })
            .collect())
    }
}

/// `run.duration` if it is given and valid (validation reports it if not).
fn run_duration(tree: &Tree) -> Option<Duration> {
    let Value::Table(root) = &tree.root.value else { return None };
    let Value::Table(run) = &root.get("run")?.node.value else { return None };
    match &run.get("duration")?.node.value {
        Value::String(s) => units::parse_time(s).ok(),
        _ => None,
    }
}

/// Each host's link rate (the first link naming it), in bit/s.
fn host_rates(tree: &Tree, hosts: &[String]) -> Vec<Option<u64>> {
    let mut rates = vec![None; hosts.len()];
    let Value::Table(root) = &tree.root.value else { return rates };
    let Some(Value::Array(links)) = root.get("link").map(|e| &e.node.value) else { return rates };
    let index: std::collections::HashMap<&str, usize> =
        hosts.iter().enumerate().map(|(i, h)| (h.as_str(), i)).collect();
    for l in links {
        let Value::Table(t) = &l.value else { continue };
        let Some(Value::String(rate)) = t.get("rate").map(|e| &e.node.value) else { continue };
        let Ok(rate) = units::parse_rate(rate) else { continue };
        for end in ["a", "b"] {
            if let Some(Value::String(n)) = t.get(end).map(|e| &e.node.value) {
                if let Some(&h) = index.get(n.as_str()) {
                    rates[h].get_or_insert(rate);
                }
            }
        }
    }
    rates
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_permutation_is_a_derangement_and_a_bijection() {
        for n in 2..40 {
            let mut rng = Pcg32::new(n as u64, 7);
            let p = permutation(n, &mut rng);
            let mut seen = vec![false; n];
            for (i, &j) in p.iter().enumerate() {
                assert_ne!(i, j);
                assert!(!seen[j]);
                seen[j] = true;
            }
        }
    }

    #[test]
    fn test_choose_picks_distinct_items() {
        let mut rng = Pcg32::new(1, 1);
        let c = choose((0..100).collect(), 10, &mut rng);
        assert_eq!(c.len(), 10);
        let mut d = c.clone();
        d.sort_unstable();
        d.dedup();
        assert_eq!(d.len(), 10);
        assert_eq!(choose((0..5).collect(), 5, &mut rng), vec![0, 1, 2, 3, 4]);
    }
}
