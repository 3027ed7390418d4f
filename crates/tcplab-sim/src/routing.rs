//! Static routes: shortest paths by hop count.
//!
//! Only switches forward; a host is never an intermediate hop. For a
//! destination host `to`, a breadth-first search from `to` over switches
//! gives every switch its hop distance to `to`. A node's *next hops* to
//! `to` are its links, in link order, to neighbours one hop closer that
//! may carry the packet on (a switch, or `to` itself): several when paths
//! of equal length part there (equal-cost multipath, ECMP). A route walks
//! from the source taking one next hop at each node:
//!
//! - the *lowest-index link*, at hosts and at switches with
//!   [`Multipath::Off`] (the default): deterministic, and reproducible
//!   across machines (adjacency lists are in link order);
//! - at a switch with [`Multipath::L3`] or [`Multipath::L4`], the next
//!   hop Linux's `fib_select_multipath` would pick for the flow's packets:
//!   the hash of the flow's addresses (L3) or 5-tuple (L4), computed as
//!   `fib_multipath_hash` does (the fields made direction-independent by
//!   `__flow_hash_consistentify`, 31 bits), against equal-weight upper
//!   bounds (`fib_rebalance`: next hop `i` of `n` takes the hashes up to
//!   `round((i + 1)·2³¹/n) − 1`). The hash is keyed per switch from the
//!   run's seed (as `net.ipv4.fib_multipath_hash_seed` keys a namespace),
//!   so switches do not all split alike, and a different seed gives a
//!   different spread. The hash function itself is not Linux's siphash
//!   (whose key is random per boot anyway): SplitMix64 rounds.
//!
//! Every packet of a connection hashes alike, so a connection keeps its
//! path; with L4 each run of a flow (`repeat`, a new client port) may take
//! another. Hosts have the addresses the kernel backend gives them
//! ([`host_ip`]), client ports are [`crate::client_ports`] and the server
//! port [`crate::SERVER_PORT`].
//!
//! A route is the list of link-direction indices a packet traverses
//! (`2·link` for a → b, `2·link + 1` for b → a); a packet carries its flow
//! and hop number and looks the next direction up, as htsim's packets carry
//! their route (`sim/network.h`). Forward and reverse routes are computed
//! separately and need not be mirror images.
//!
//! **Cost.** [`Router`] builds the adjacency once (compressed rows, in link
//! order) with a second, switch-only adjacency for the searches, so a
//! search from `to` costs O(switches + switch-to-switch links) whatever the
//! number of hosts, and its distance array is reset entry by entry, not
//! cleared. [`Router::routes`] groups route requests by destination and
//! searches once per destination. Whether two hosts are connected at all
//! ([`Reachability`], what validation asks) needs no search per flow: the
//! switches' connected components, computed once, answer it in
//! O(links of the two hosts).

use crate::config::{LinkConfig, Multipath, NodeConfig, NodeId, NodeKind};
use crate::rng::{splitmix64, Component, Pcg32};
use std::collections::VecDeque;

const UNSEEN: u32 = u32::MAX;

/// `IPPROTO_TCP`.
const IPPROTO_TCP: u64 = 6;

/// Host `node`'s IPv4 address as the kernel backend assigns it:
/// 198.18.0.0/16 from 198.18.0.1, in node order.
pub fn host_ip(node: NodeId) -> u32 {
    0xC612_0000u32.wrapping_add(node as u32).wrapping_add(1)
}

/// What a switch's multipath hash reads of a packet: its addresses and
/// TCP ports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FlowKey {
    pub src: u32,
    pub dst: u32,
    pub sport: u16,
    pub dport: u16,
}

/// `fib_multipath_hash` under `policy` with the node's `key`: 31 bits.
fn multipath_hash(policy: Multipath, key: u64, k: &FlowKey) -> u32 {
    //= linux:v6.12:net/core/flow_dissector.c#__flow_hash_consistentify
    // Addresses and ports each in ascending order: both directions of a
    // connection hash alike.
    let addrs = ((k.src.min(k.dst) as u64) << 32) | k.src.max(k.dst) as u64;
    let l4 = match policy {
        Multipath::L4 => ((k.sport.min(k.dport) as u64) << 32) | ((k.sport.max(k.dport) as u64) << 16) | IPPROTO_TCP,
        _ => 0,
    };
    //= linux:v6.12:net/ipv4/route.c#fib_multipath_hash
    //# return mhash >> 1;
    (splitmix64(splitmix64(key ^ addrs) ^ l4) >> 33) as u32
}

/// Which of `n` equal-weight next hops takes `hash` (31 bits): the first
/// whose upper bound is at least the hash.
fn select_next_hop(hash: u32, n: usize) -> usize {
    //= linux:v6.12:net/ipv4/fib_semantics.c#fib_rebalance
    //# upper_bound = DIV_ROUND_CLOSEST_ULL((u64)w << 31, total) - 1;
    //= linux:v6.12:net/ipv4/fib_semantics.c#fib_select_multipath
    //# if (hash > atomic_read(&nexthop_nh->fib_nh_upper_bound))
    //#     continue;
    let n64 = n as u64;
    (0..n)
        .find(|&i| {
            let w = (i as u64 + 1) << 31;
            let upper_bound = (w + n64 / 2) / n64 - 1;
            hash as u64 <= upper_bound
        })
        .unwrap_or(n.saturating_sub(1))
}

/// Adjacency lists in compressed rows: node `u`'s neighbours are
/// `edges[start[u]..start[u + 1]]`, as `(link index, neighbour)` in
/// increasing link order.
#[derive(Debug, Clone, Default)]
struct Csr {
    start: Vec<u32>,
    edges: Vec<(u32, u32)>,
}

impl Csr {
    /// Links for which `keep` holds, both directions.
    fn new(n: usize, links: &[LinkConfig], keep: impl Fn(&LinkConfig) -> bool) -> Self {
        let usable = |l: &LinkConfig| l.a < n && l.b < n && l.a != l.b && keep(l);
        let mut start = vec![0u32; n + 1];
        for l in links.iter().filter(|l| usable(l)) {
            start[l.a + 1] += 1;
            start[l.b + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut edges = vec![(0u32, 0u32); start[n] as usize];
        for (i, l) in links.iter().enumerate().filter(|(_, l)| usable(l)) {
            for (u, v) in [(l.a, l.b), (l.b, l.a)] {
                edges[fill[u] as usize] = (i as u32, v as u32);
                fill[u] += 1;
            }
        }
        Csr { start, edges }
    }

    #[inline]
    fn of(&self, u: NodeId) -> &[(u32, u32)] {
        &self.edges[self.start[u] as usize..self.start[u + 1] as usize]
    }
}

/// Shortest-path routing over one topology. Links must reference
/// existing nodes (validated); others are skipped.
#[derive(Debug, Clone)]
pub(crate) struct Router<'a> {
    nodes: &'a [NodeConfig],
    links: &'a [LinkConfig],
    /// Every link.
    adj: Csr,
    /// Switch-to-switch links only.
    fabric: Csr,
    /// Hop distance of each switch (and of the destination) to the
    /// current destination; `UNSEEN` elsewhere.
    dist: Vec<u32>,
    /// Entries of `dist` set by the current search, to reset.
    touched: Vec<u32>,
    /// The destination `dist` is for.
    to: Option<NodeId>,
    /// Per node, its multipath hash key when it is a switch with ECMP on.
    ecmp: Vec<Option<(Multipath, u64)>>,
}

impl<'a> Router<'a> {
    /// `seed`: the run's master seed, from which each ECMP switch's hash
    /// key derives.
    pub fn new(nodes: &'a [NodeConfig], links: &'a [LinkConfig], seed: u64) -> Self {
        let n = nodes.len();
        let is_switch = |x: NodeId| nodes[x].kind == NodeKind::Switch;
        let ecmp = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| match (node.kind == NodeKind::Switch, node.multipath) {
                (true, p @ (Multipath::L3 | Multipath::L4)) => {
                    Some((p, Pcg32::for_component(seed, Component::Multipath { node: i }).next_u64()))
                }
                _ => None,
            })
            .collect();
        Router {
            nodes,
            links,
            adj: Csr::new(n, links, |_| true),
            fabric: Csr::new(n, links, |l| is_switch(l.a) && is_switch(l.b)),
            dist: vec![UNSEEN; n],
            touched: Vec::new(),
            to: None,
            ecmp,
        }
    }

    /// Does any switch choose among equal-cost next hops?
    pub fn has_ecmp(&self) -> bool {
        self.ecmp.iter().any(Option::is_some)
    }

    /// Hop distances to host `to`: `to` 0, the switches that reach it
    /// through switches 1 or more.
    fn search(&mut self, to: NodeId) {
        if self.to == Some(to) {
            return;
        }
        for &u in &self.touched {
            self.dist[u as usize] = UNSEEN;
        }
        self.touched.clear();
        self.to = Some(to);
        self.dist[to] = 0;
        self.touched.push(to as u32);
        let mut frontier = VecDeque::new();
        for &(_, v) in self.adj.of(to) {
            let v = v as usize;
            if self.nodes[v].kind == NodeKind::Switch && self.dist[v] == UNSEEN {
                self.dist[v] = 1;
                self.touched.push(v as u32);
                frontier.push_back(v);
            }
        }
        while let Some(u) = frontier.pop_front() {
            let d = self.dist[u] + 1;
            for &(_, v) in self.fabric.of(u) {
                let v = v as usize;
                if self.dist[v] == UNSEEN {
                    self.dist[v] = d;
                    self.touched.push(v as u32);
                    frontier.push_back(v);
                }
            }
        }
    }

    /// Hop distance of `u` to the searched destination `to`: a switch's
    /// from the search, a host's one more than its best neighbour's.
    fn distance(&self, u: NodeId, to: NodeId) -> u32 {
        if u == to || self.nodes[u].kind == NodeKind::Switch {
            return self.dist[u];
        }
        self.adj
            .of(u)
            .iter()
            .map(|&(_, v)| v as usize)
            .filter(|&v| v == to || self.nodes[v].kind == NodeKind::Switch)
            .map(|v| self.dist[v])
            .min()
            .map_or(UNSEEN, |d| d.saturating_add(1))
    }

    /// The next hops from `u` (at distance `du` from the searched `to`):
    /// every link to a neighbour one hop closer that may carry the packet
    /// on, in link order.
    fn candidates(&self, u: NodeId, du: u32, to: NodeId) -> impl Iterator<Item = (usize, NodeId)> + '_ {
        // From a switch two or more hops away only switches are closer;
        // one hop away only `to`: the fabric's rows suffice for the first.
        let row = if du >= 2 && self.nodes[u].kind == NodeKind::Switch { self.fabric.of(u) } else { self.adj.of(u) };
        row.iter()
            .map(|&(l, v)| (l as usize, v as usize))
            .filter(move |&(_, v)| self.dist[v] != UNSEEN && self.dist[v] + 1 == du)
            .filter(move |&(_, v)| v == to || self.nodes[v].kind == NodeKind::Switch)
    }

    /// The next hop from `u` for a packet of `flow`: the lowest-index one,
    /// or at an ECMP switch the one its hash selects.
    fn next_hop(&self, u: NodeId, du: u32, to: NodeId, flow: Option<&FlowKey>) -> Option<(usize, NodeId)> {
        if let (Some((policy, key)), Some(flow)) = (self.ecmp[u], flow) {
            let n = self.candidates(u, du, to).count();
            if n > 1 {
                let i = select_next_hop(multipath_hash(policy, key, flow), n);
                return self.candidates(u, du, to).nth(i);
            }
        }
        self.candidates(u, du, to).next()
    }

    /// The route from host `from` to host `to` as link-direction indices
    /// appended to `out`; its length, or `None` (and `out` unchanged) when
    /// no path through switches exists. ECMP switches choose by `flow`'s
    /// hash (without one, they take the lowest-index link).
    pub fn route_into(&mut self, from: NodeId, to: NodeId, flow: Option<&FlowKey>, out: &mut Vec<u32>) -> Option<u32> {
        let n = self.nodes.len();
        if from >= n || to >= n || from == to {
            return None;
        }
        self.search(to);
        let mut du = self.distance(from, to);
        if du == UNSEEN {
            return None;
        }
        let mark = out.len();
        let mut u = from;
        while u != to {
            let Some((link, v)) = self.next_hop(u, du, to, flow) else {
                out.truncate(mark);
                return None;
            };
            out.push(dir_index(self.links, link, u) as u32);
            u = v;
            du -= 1;
        }
        Some((out.len() - mark) as u32)
    }

    /// Routes for many `(from, to, flow)` requests, one search per
    /// distinct destination: `(offset, length)` of each route in `out`, in
    /// the order of `requests`, or `None` for one without a path.
    pub fn routes(
        &mut self,
        requests: &[(NodeId, NodeId, Option<FlowKey>)],
        out: &mut Vec<u32>,
    ) -> Vec<Option<(u32, u32)>> {
        let mut order: Vec<u32> = (0..requests.len() as u32).collect();
        order.sort_by_key(|&i| (requests[i as usize].1, i));
        let mut found = vec![None; requests.len()];
        for i in order {
            let (a, b, flow) = &requests[i as usize];
            let off = out.len() as u32;
            found[i as usize] = self.route_into(*a, *b, flow.as_ref(), out).map(|len| (off, len));
        }
        found
    }

    /// The first switch with ECMP on that has two or more next hops to
    /// some host it can reach: `(switch, host, next hops)`.
    fn first_multipath(&mut self) -> Option<(NodeId, NodeId, usize)> {
        if !self.has_ecmp() {
            return None;
        }
        let hosts: Vec<NodeId> = (0..self.nodes.len()).filter(|&h| self.nodes[h].kind == NodeKind::Host).collect();
        for to in hosts {
            self.search(to);
            for u in 0..self.nodes.len() {
                if self.ecmp[u].is_none() || self.dist[u] == UNSEEN {
                    continue;
                }
                let n = self.candidates(u, self.dist[u], to).count();
                if n > 1 {
                    return Some((u, to, n));
                }
            }
        }
        None
    }

    /// Every node's next hop towards host `to` (see [`next_hops_to`]).
    fn next_hops(&mut self, to: NodeId) -> Vec<Option<(usize, NodeId)>> {
        let n = self.nodes.len();
        if to >= n {
            return vec![None; n];
        }
        self.search(to);
        (0..n)
            .map(|u| {
                if u == to {
                    return None;
                }
                let du = self.distance(u, to);
                if du == UNSEEN {
                    return None;
                }
                self.candidates(u, du, to).next()
            })
            .collect()
    }
}

/// Link-direction index of `link` traversed from `node`.
#[inline]
pub fn dir_index(links: &[LinkConfig], link: usize, from_node: NodeId) -> usize {
    2 * link + (links[link].a != from_node) as usize
}

/// Every node's next hop towards host `to`, as `(link index, neighbour)`,
/// the choice the simulator's routes make at that node: the routing table
/// entry for `to` that another driver (the kernel backend) installs.
/// `None` for `to` itself and for nodes with no path.
pub fn next_hops_to(nodes: &[NodeConfig], links: &[LinkConfig], to: NodeId) -> Vec<Option<(usize, NodeId)>> {
    Router::new(nodes, links, 0).next_hops(to)
}

/// Where ECMP changes a route: the first switch with
/// [`NodeConfig::multipath`] on that has two or more equal-cost next hops
/// to some host, as `(switch, host, next hops)`; `None` when every node's
/// next hop is the one [`next_hops_to`] gives (no switch with ECMP on has
/// a choice). Another driver that installs one next hop per destination
/// (the kernel backend) refuses a configuration where this is `Some`.
pub fn first_multipath(nodes: &[NodeConfig], links: &[LinkConfig]) -> Option<(NodeId, NodeId, usize)> {
    Router::new(nodes, links, 0).first_multipath()
}

/// Which hosts can reach which: the connected components of the switches
/// (joined by switch-to-switch links), computed once. Two hosts are
/// connected when a link joins them or when each has a link to a switch
/// of the same component; that is exactly when [`Router::route_into`]
/// finds a route.
#[derive(Debug, Clone)]
pub struct Reachability {
    /// Per host, the sorted components of the switches it links to.
    comps: Vec<Vec<u32>>,
    /// Per host, the sorted hosts it links to directly.
    direct: Vec<Vec<u32>>,
}

impl Reachability {
    /// Links must reference existing nodes (validated); others are skipped.
    pub fn new(nodes: &[NodeConfig], links: &[LinkConfig]) -> Self {
        let n = nodes.len();
        let is_switch = |x: NodeId| nodes[x].kind == NodeKind::Switch;
        // Union-find over switch-to-switch links.
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut x: u32) -> u32 {
            while parent[x as usize] != x {
                let p = parent[x as usize];
                parent[x as usize] = parent[p as usize];
                x = p;
            }
            x
        }
        let usable = |l: &LinkConfig| l.a < n && l.b < n && l.a != l.b;
        for l in links.iter().filter(|l| usable(l) && is_switch(l.a) && is_switch(l.b)) {
            let (ra, rb) = (root(&mut parent, l.a as u32), root(&mut parent, l.b as u32));
            if ra != rb {
                parent[ra.max(rb) as usize] = ra.min(rb);
            }
        }
        let mut comps = vec![Vec::new(); n];
        let mut direct = vec![Vec::new(); n];
        for l in links.iter().filter(|l| usable(l)) {
            for (h, o) in [(l.a, l.b), (l.b, l.a)] {
                if is_switch(h) {
                    continue;
                }
                if is_switch(o) {
                    let r = root(&mut parent, o as u32);
                    comps[h].push(r);
                } else {
                    direct[h].push(o as u32);
                }
            }
        }
        for v in comps.iter_mut().chain(direct.iter_mut()) {
            v.sort_unstable();
            v.dedup();
        }
        Reachability { comps, direct }
    }

    /// Is there a path from host `a` to host `b` through switches only?
    pub fn connected(&self, a: NodeId, b: NodeId) -> bool {
        if a == b || a >= self.comps.len() || b >= self.comps.len() {
            return false;
        }
        if self.direct[a].binary_search(&(b as u32)).is_ok() {
            return true;
        }
        let (x, y) = (&self.comps[a], &self.comps[b]);
        let (mut i, mut j) = (0, 0);
        while i < x.len() && j < y.len() {
            match x[i].cmp(&y[j]) {
                std::cmp::Ordering::Equal => return true,
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{DelayModel, DirectionConfig, Limit, QueueConfig};
    use tcplab_core::time::Duration;

    fn node(kind: NodeKind) -> NodeConfig {
        NodeConfig {
            name: String::new(),
            kind,
            qdisc: Default::default(),
            offloads: false,
            gro: false,
            multipath: Multipath::Off,
        }
    }
    fn link(a: NodeId, b: NodeId) -> LinkConfig {
        let d = DirectionConfig {
            delay: DelayModel::Fixed(Duration::ZERO),
            queue: QueueConfig { limit: Limit::Packets(10), ecn_threshold: None },
            loss: Default::default(),
            blackouts: Vec::new(),
            police: None,
            slot: None,
        };
        LinkConfig { name: String::new(), a, b, rate_bps: 1, ab: d.clone(), ba: d }
    }
    fn route(nodes: &[NodeConfig], links: &[LinkConfig], from: NodeId, to: NodeId) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        Router::new(nodes, links, 1).route_into(from, to, None, &mut out).map(|_| out)
    }

    /// The route as the simulator computed it before [`Router`]: a
    /// breadth-first search over every node per route. The oracle.
    fn route_by_full_search(nodes: &[NodeConfig], links: &[LinkConfig], from: NodeId, to: NodeId) -> Option<Vec<u32>> {
        let n = nodes.len();
        if from >= n || to >= n || from == to {
            return None;
        }
        let mut adj = vec![Vec::new(); n];
        for (i, l) in links.iter().enumerate() {
            adj[l.a].push((i, l.b));
            adj[l.b].push((i, l.a));
        }
        let mut dist = vec![UNSEEN; n];
        let mut q = VecDeque::from([to]);
        dist[to] = 0;
        while let Some(u) = q.pop_front() {
            for &(_, v) in &adj[u] {
                if dist[v] == UNSEEN {
                    dist[v] = dist[u] + 1;
                    if nodes[v].kind == NodeKind::Switch {
                        q.push_back(v);
                    }
                }
            }
        }
        if dist[from] == UNSEEN {
            return None;
        }
        let mut path = Vec::new();
        let mut u = from;
        while u != to {
            let &(l, v) = adj[u].iter().find(|&&(_, v)| {
                dist[v] != UNSEEN && dist[v] + 1 == dist[u] && (v == to || nodes[v].kind == NodeKind::Switch)
            })?;
            path.push(dir_index(links, l, u) as u32);
            u = v;
        }
        Some(path)
    }

    #[test]
    fn test_route_prefers_fewest_hops_then_lowest_link() {
        use NodeKind::*;
        // h0 - s1 - s2 - h3, plus a direct s1 - h3 (link 3) and a parallel
        // s1 - h3 (link 4): shortest is h0 s1 h3 via the lower link 3.
        let nodes = vec![node(Host), node(Switch), node(Switch), node(Host)];
        let links = vec![link(0, 1), link(1, 2), link(2, 3), link(3, 1), link(1, 3)];
        assert_eq!(route(&nodes, &links, 0, 3), Some(vec![0, 7]));
        assert_eq!(route(&nodes, &links, 3, 0), Some(vec![6, 1]));
    }

    #[test]
    fn test_route_never_transits_a_host() {
        use NodeKind::*;
        // h0 - h1 - h2: h1 does not forward.
        let nodes = vec![node(Host), node(Host), node(Host)];
        let links = vec![link(0, 1), link(1, 2)];
        assert_eq!(route(&nodes, &links, 0, 2), None);
        assert_eq!(route(&nodes, &links, 0, 1), Some(vec![0]));
        assert_eq!(route(&nodes, &links, 2, 1), Some(vec![3]));
        let reach = Reachability::new(&nodes, &links);
        assert!(!reach.connected(0, 2));
        assert!(reach.connected(0, 1) && reach.connected(2, 1));
    }

    #[test]
    fn test_route_equal_cost_paths_pick_lowest_link_at_each_hop() {
        use NodeKind::*;
        // h0 - s1 - h3 and h0 - s2 - h3; link to s2 has the lower index.
        let nodes = vec![node(Host), node(Switch), node(Switch), node(Host)];
        let links = vec![link(0, 2), link(0, 1), link(1, 3), link(2, 3)];
        assert_eq!(route(&nodes, &links, 0, 3), Some(vec![0, 6]));
    }

    #[test]
    fn test_select_next_hop_uses_fib_rebalance_upper_bounds() {
        // Two next hops: 0..=2^30-1 and 2^30..=2^31-1.
        assert_eq!(select_next_hop(0, 2), 0);
        assert_eq!(select_next_hop((1 << 30) - 1, 2), 0);
        assert_eq!(select_next_hop(1 << 30, 2), 1);
        assert_eq!(select_next_hop(u32::MAX >> 1, 2), 1);
        // Three: DIV_ROUND_CLOSEST(w << 31, 3) - 1 = 715827882, 1431655764, 2147483647.
        assert_eq!(select_next_hop(715_827_882, 3), 0);
        assert_eq!(select_next_hop(715_827_883, 3), 1);
        assert_eq!(select_next_hop(1_431_655_764, 3), 1);
        assert_eq!(select_next_hop(1_431_655_765, 3), 2);
        assert_eq!(select_next_hop(u32::MAX >> 1, 3), 2);
        assert_eq!(select_next_hop(12345, 1), 0);
    }

    #[test]
    fn test_multipath_hash_is_symmetric_and_reads_the_policys_fields() {
        let k = FlowKey { src: host_ip(3), dst: host_ip(9), sport: 40000, dport: 5001 };
        let back = FlowKey { src: k.dst, dst: k.src, sport: k.dport, dport: k.sport };
        for policy in [Multipath::L3, Multipath::L4] {
            let h = multipath_hash(policy, 77, &k);
            assert!(h <= u32::MAX >> 1, "31 bits");
            assert_eq!(h, multipath_hash(policy, 77, &back), "both directions alike");
            assert_ne!(h, multipath_hash(policy, 78, &k), "keyed");
        }
        let other_port = FlowKey { sport: 40001, ..k };
        assert_eq!(multipath_hash(Multipath::L3, 77, &k), multipath_hash(Multipath::L3, 77, &other_port));
        assert_ne!(multipath_hash(Multipath::L4, 77, &k), multipath_hash(Multipath::L4, 77, &other_port));
    }

    #[test]
    fn test_multipath_hash_spreads_evenly() {
        // 30,000 client ports between two hosts over 2, 3 and 4 next hops:
        // each within 3 % of an even share.
        for n in 2..=4usize {
            let mut count = vec![0u32; n];
            for port in 0..30_000u32 {
                let k = FlowKey { src: host_ip(1), dst: host_ip(2), sport: 32768 + port as u16, dport: 5001 };
                count[select_next_hop(multipath_hash(Multipath::L4, 0xfeed, &k), n)] += 1;
            }
            let even = 30_000.0 / n as f64;
            for c in &count {
                assert!((*c as f64 - even).abs() < 0.03 * even, "{n} next hops: {count:?}");
            }
        }
    }

    /// h0 - l0 = {s0, s1} = l1 - h1 (two spines; links: h0-l0, h1-l1,
    /// l0-s0, l0-s1, l1-s0, l1-s1).
    fn two_spines(ecmp: Multipath) -> (Vec<NodeConfig>, Vec<LinkConfig>) {
        use NodeKind::*;
        let mut nodes = vec![node(Host), node(Host), node(Switch), node(Switch), node(Switch), node(Switch)];
        for n in &mut nodes[2..] {
            n.multipath = ecmp;
        }
        // Nodes: 0 h0, 1 h1, 2 l0, 3 l1, 4 s0, 5 s1.
        let links = vec![link(0, 2), link(1, 3), link(2, 4), link(2, 5), link(3, 4), link(3, 5)];
        (nodes, links)
    }

    #[test]
    fn test_ecmp_switch_picks_a_spine_per_flow_and_keeps_it() {
        let (nodes, links) = two_spines(Multipath::L4);
        let mut router = Router::new(&nodes, &links, 1);
        assert!(router.has_ecmp());
        let mut spines = [0u32; 2];
        for port in 0..200u16 {
            let key = FlowKey { src: host_ip(0), dst: host_ip(1), sport: 32768 + port, dport: 5001 };
            let mut a = Vec::new();
            router.route_into(0, 1, Some(&key), &mut a).unwrap();
            // h0->l0, l0->s?, s?->l1, l1->h1.
            assert_eq!(a.len(), 4);
            assert!(a[1] == 4 || a[1] == 6, "{a:?}");
            spines[(a[1] == 6) as usize] += 1;
            let mut again = Vec::new();
            router.route_into(0, 1, Some(&key), &mut again).unwrap();
            assert_eq!(a, again);
        }
        assert!(spines[0] > 70 && spines[1] > 70, "{spines:?}");
        // Off: always the lowest link, to s0; and without a flow key too.
        let (nodes, links) = two_spines(Multipath::Off);
        let mut off = Router::new(&nodes, &links, 1);
        let key = FlowKey { src: host_ip(0), dst: host_ip(1), sport: 40000, dport: 5001 };
        let mut a = Vec::new();
        off.route_into(0, 1, Some(&key), &mut a).unwrap();
        assert_eq!(a, vec![0, 4, 9, 3]);
        assert_eq!(first_multipath(&nodes, &links), None);
        let (nodes, links) = two_spines(Multipath::L3);
        assert_eq!(first_multipath(&nodes, &links), Some((3, 0, 2)));
        // next_hops_to (the kernel's table) is the lowest link either way.
        assert_eq!(next_hops_to(&nodes, &links, 1)[2], Some((2, 4)));
    }

    #[test]
    fn test_routes_and_reachability_match_a_full_search_on_random_graphs() {
        // Random graphs of hosts and switches, with parallel links and
        // direct host-host links: every pair's route equals the old
        // full-search route, `routes` (grouped by destination) equals
        // `route_into` pair by pair, and `connected` says whether a route
        // exists.
        let mut rng = crate::rng::Pcg32::new(3, 5);
        for _ in 0..300 {
            let n = 2 + (rng.next_u32() % 12) as usize;
            let nodes: Vec<NodeConfig> =
                (0..n).map(|_| node(if rng.next_u32() % 2 == 0 { NodeKind::Host } else { NodeKind::Switch })).collect();
            let m = rng.next_u32() % (2 * n as u32 + 1);
            let links: Vec<LinkConfig> = (0..m)
                .filter_map(|_| {
                    let (a, b) = ((rng.next_u32() as usize) % n, (rng.next_u32() as usize) % n);
                    (a != b).then(|| link(a, b))
                })
                .collect();
            let reach = Reachability::new(&nodes, &links);
            let hosts: Vec<NodeId> = (0..n).filter(|&i| nodes[i].kind == NodeKind::Host).collect();
            let mut pairs = Vec::new();
            for &a in &hosts {
                for &b in &hosts {
                    let want = route_by_full_search(&nodes, &links, a, b);
                    assert_eq!(route(&nodes, &links, a, b), want, "{a} -> {b} in {links:?}");
                    assert_eq!(reach.connected(a, b), want.is_some(), "{a} -> {b}");
                    pairs.push((a, b));
                }
            }
            let mut out = Vec::new();
            let requests: Vec<_> = pairs.iter().map(|&(a, b)| (a, b, None)).collect();
            let found = Router::new(&nodes, &links, 1).routes(&requests, &mut out);
            for (&(a, b), r) in pairs.iter().zip(found) {
                let got = r.map(|(off, len)| out[off as usize..(off + len) as usize].to_vec());
                assert_eq!(got, route_by_full_search(&nodes, &links, a, b));
            }
        }
    }
}
