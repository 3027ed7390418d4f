//! Static routes: shortest paths by hop count, computed once per flow.
//!
//! Only switches forward; a host is never an intermediate hop. For a pair
//! (from, to), a breadth-first search from `to` gives every node's hop
//! distance to `to`; the route then walks from `from`, taking at each node
//! the *lowest-index link* to a neighbour one hop closer. This breaks ties
//! between equal-length paths deterministically (and reproducibly across
//! machines: adjacency lists are in link order, nothing is hashed).
//!
//! A route is the list of link-direction indices a packet traverses
//! (`2·link` for a → b, `2·link + 1` for b → a); a packet carries its flow
//! and hop number and looks the next direction up, as htsim's packets carry
//! their route (`sim/network.h`). Forward and reverse routes are computed
//! separately and need not be mirror images.

use crate::config::{LinkConfig, NodeConfig, NodeId, NodeKind};
use std::collections::VecDeque;

/// Per-node adjacency: `(link index, neighbour)` in increasing link order.
#[derive(Debug, Clone)]
pub(crate) struct Adjacency {
    adj: Vec<Vec<(usize, NodeId)>>,
}

impl Adjacency {
    /// Links must reference existing nodes (validated); others are skipped.
    pub fn new(n_nodes: usize, links: &[LinkConfig]) -> Self {
        let mut adj = vec![Vec::new(); n_nodes];
        for (i, l) in links.iter().enumerate() {
            if l.a < n_nodes && l.b < n_nodes && l.a != l.b {
                adj[l.a].push((i, l.b));
                adj[l.b].push((i, l.a));
            }
        }
        Adjacency { adj }
    }
}

/// Link-direction index of `link` traversed from `node`.
#[inline]
pub fn dir_index(links: &[LinkConfig], link: usize, from_node: NodeId) -> usize {
    2 * link + (links[link].a != from_node) as usize
}

/// Hop distances of every node to host `to` (`u32::MAX`: no path).
/// Hosts get a distance (they can be sources) but do not forward, so the
/// search does not continue through them.
fn distances(nodes: &[NodeConfig], adj: &Adjacency, to: NodeId) -> Vec<u32> {
    let mut dist = vec![UNSEEN; nodes.len()];
    let mut frontier = VecDeque::new();
    dist[to] = 0;
    frontier.push_back(to);
    while let Some(u) = frontier.pop_front() {
        for &(_, v) in &adj.adj[u] {
            if dist[v] == UNSEEN {
                dist[v] = dist[u] + 1;
                if nodes[v].kind == NodeKind::Switch {
                    frontier.push_back(v);
                }
            }
        }
    }
    dist
}

const UNSEEN: u32 = u32::MAX;

/// The next hop from `u` towards `to`: the lowest-index link to a
/// neighbour one hop closer that may carry the packet on (a switch, or
/// `to` itself).
fn next_hop(nodes: &[NodeConfig], adj: &Adjacency, dist: &[u32], u: NodeId, to: NodeId) -> Option<(usize, NodeId)> {
    adj.adj[u]
        .iter()
        .find(|&&(_, v)| dist[v] != UNSEEN && dist[v] + 1 == dist[u] && (v == to || nodes[v].kind == NodeKind::Switch))
        .copied()
}

/// The route from host `from` to host `to` as link-direction indices, or
/// `None` when no path through switches exists.
pub(crate) fn route(
    nodes: &[NodeConfig],
    links: &[LinkConfig],
    adj: &Adjacency,
    from: NodeId,
    to: NodeId,
) -> Option<Vec<u32>> {
    let n = nodes.len();
    if from >= n || to >= n || from == to {
        return None;
    }
    let dist = distances(nodes, adj, to);
    if dist[from] == UNSEEN {
        return None;
    }
    let mut path = Vec::with_capacity(dist[from] as usize);
    let mut u = from;
    while u != to {
        let (link, v) = next_hop(nodes, adj, &dist, u, to)?;
        path.push(dir_index(links, link, u) as u32);
        u = v;
    }
    Some(path)
}

/// Every node's next hop towards host `to`, as `(link index, neighbour)`,
/// the choice [`route`] makes at that node: the routing table entry for
/// `to` that another driver (the kernel backend) installs. `None` for `to`
/// itself and for nodes with no path.
pub fn next_hops_to(nodes: &[NodeConfig], links: &[LinkConfig], to: NodeId) -> Vec<Option<(usize, NodeId)>> {
    if to >= nodes.len() {
        return vec![None; nodes.len()];
    }
    let adj = Adjacency::new(nodes.len(), links);
    let dist = distances(nodes, &adj, to);
    (0..nodes.len()).map(|u| if u == to { None } else { next_hop(nodes, &adj, &dist, u, to) }).collect()
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

    #[test]
    fn test_route_prefers_fewest_hops_then_lowest_link() {
        use NodeKind::*;
        // h0 - s1 - s2 - h3, plus a direct s1 - h3 (link 3) and a parallel
        // s1 - h3 (link 4): shortest is h0 s1 h3 via the lower link 3.
        let nodes = vec![node(Host), node(Switch), node(Switch), node(Host)];
        let links = vec![link(0, 1), link(1, 2), link(2, 3), link(3, 1), link(1, 3)];
        let adj = Adjacency::new(4, &links);
        assert_eq!(route(&nodes, &links, &adj, 0, 3), Some(vec![0, 7]));
        assert_eq!(route(&nodes, &links, &adj, 3, 0), Some(vec![6, 1]));
    }

    #[test]
    fn test_route_never_transits_a_host() {
        use NodeKind::*;
        // h0 - h1 - h2: h1 does not forward.
        let nodes = vec![node(Host), node(Host), node(Host)];
        let links = vec![link(0, 1), link(1, 2)];
        let adj = Adjacency::new(3, &links);
        assert_eq!(route(&nodes, &links, &adj, 0, 2), None);
        assert_eq!(route(&nodes, &links, &adj, 0, 1), Some(vec![0]));
        assert_eq!(route(&nodes, &links, &adj, 2, 1), Some(vec![3]));
    }

    #[test]
    fn test_route_equal_cost_paths_pick_lowest_link_at_each_hop() {
        use NodeKind::*;
        // h0 - s1 - h3 and h0 - s2 - h3; link to s2 has the lower index.
        let nodes = vec![node(Host), node(Switch), node(Switch), node(Host)];
        let links = vec![link(0, 2), link(0, 1), link(1, 3), link(2, 3)];
        let adj = Adjacency::new(4, &links);
        assert_eq!(route(&nodes, &links, &adj, 0, 3), Some(vec![0, 6]));
    }
}
