//! Static routes: shortest paths by hop count.
//!
//! Only switches forward; a host is never an intermediate hop. For a
//! destination host `to`, a breadth-first search from `to` over switches
//! gives every switch its hop distance to `to`; a route then walks from
//! the source, taking at each node the *lowest-index link* to a neighbour
//! one hop closer that may carry the packet on (a switch, or `to` itself).
//! This breaks ties between equal-length paths deterministically (and
//! reproducibly across machines: adjacency lists are in link order,
//! nothing is hashed).
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

use crate::config::{LinkConfig, NodeConfig, NodeId, NodeKind};
use std::collections::VecDeque;

const UNSEEN: u32 = u32::MAX;

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
}

impl<'a> Router<'a> {
    pub fn new(nodes: &'a [NodeConfig], links: &'a [LinkConfig]) -> Self {
        let n = nodes.len();
        let is_switch = |x: NodeId| nodes[x].kind == NodeKind::Switch;
        Router {
            nodes,
            links,
            adj: Csr::new(n, links, |_| true),
            fabric: Csr::new(n, links, |l| is_switch(l.a) && is_switch(l.b)),
            dist: vec![UNSEEN; n],
            touched: Vec::new(),
            to: None,
        }
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

    /// The route from host `from` to host `to` as link-direction indices
    /// appended to `out`; its length, or `None` (and `out` unchanged) when
    /// no path through switches exists.
    pub fn route_into(&mut self, from: NodeId, to: NodeId, out: &mut Vec<u32>) -> Option<u32> {
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
            let Some((link, v)) = self.candidates(u, du, to).next() else {
                out.truncate(mark);
                return None;
            };
            out.push(dir_index(self.links, link, u) as u32);
            u = v;
            du -= 1;
        }
        Some((out.len() - mark) as u32)
    }

    /// Routes for many `(from, to)` pairs, one search per distinct
    /// destination: `(offset, length)` of each pair's route in `out`, in
    /// the order of `pairs`, or `None` for a pair without a path.
    pub fn routes(&mut self, pairs: &[(NodeId, NodeId)], out: &mut Vec<u32>) -> Vec<Option<(u32, u32)>> {
        let mut order: Vec<u32> = (0..pairs.len() as u32).collect();
        order.sort_by_key(|&i| (pairs[i as usize].1, i));
        let mut found = vec![None; pairs.len()];
        for i in order {
            let (a, b) = pairs[i as usize];
            let off = out.len() as u32;
            found[i as usize] = self.route_into(a, b, out).map(|len| (off, len));
        }
        found
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
    Router::new(nodes, links).next_hops(to)
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
        NodeConfig { name: String::new(), kind, qdisc: Default::default(), offloads: false }
    }
    fn link(a: NodeId, b: NodeId) -> LinkConfig {
        let d = DirectionConfig {
            delay: DelayModel::Fixed(Duration::ZERO),
            queue: QueueConfig { limit: Limit::Packets(10), ecn_threshold: None },
            loss: Default::default(),
            blackouts: Vec::new(),
        };
        LinkConfig { name: String::new(), a, b, rate_bps: 1, ab: d.clone(), ba: d }
    }
    fn route(nodes: &[NodeConfig], links: &[LinkConfig], from: NodeId, to: NodeId) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        Router::new(nodes, links).route_into(from, to, &mut out).map(|_| out)
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
    fn test_routes_and_reachability_match_a_full_search_on_random_graphs() {
        // Random graphs of hosts and switches, with parallel links and
        // direct host-host links: every pair's route equals the old
        // full-search route, `routes` (grouped by destination) equals
        // `route_into` pair by pair, and `connected` says whether a route
        // exists.
        let mut rng = crate::rng::Pcg32::new(3, 5);
        for _ in 0..300 {
            let n = 2 + (rng.next_u32() % 12) as usize;
            let nodes: Vec<NodeConfig> = (0..n)
                .map(|_| node(if rng.next_u32() % 2 == 0 { NodeKind::Host } else { NodeKind::Switch }))
                .collect();
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
            let found = Router::new(&nodes, &links).routes(&pairs, &mut out);
            for (&(a, b), r) in pairs.iter().zip(found) {
                let got = r.map(|(off, len)| out[off as usize..(off + len) as usize].to_vec());
                assert_eq!(got, route_by_full_search(&nodes, &links, a, b));
            }
        }
    }
}
