//! End hosts: port assignment, demultiplexing, and NIC backpressure.
//!
//! **Ports.** Each sending host hands out client ports from 32768 (the
//! start of Linux's ephemeral range), as its own `connect()`s would: its
//! `i`-th flow (in `SimConfig::flows` order, counting only the flows from
//! that host) connects from port `32768 + i` to server port
//! [`SERVER_PORT`] (5001, iperf's). A flow with several runs (`repeat`)
//! uses a new client port for each later run: runs 1, 2, … of the host's
//! flows take the ports after all its flows' first ones, in flow order.
//! Ports depend only on the configuration, so they are the same every
//! time, and every connection has a distinct 4-tuple even between the
//! same pair of hosts. At most [`MAX_CONNECTIONS_PER_HOST`] connections
//! (flows times runs) start at one host, and [`MAX_FLOWS`] flows fit one
//! run.
//!
//! **Demultiplexing.** Because every 4-tuple is distinct and fixed by the
//! configuration, the socket that Linux's lookup on arrival
//! (`__inet_lookup_established`) would find for a segment is always the
//! sending connection's peer: a packet carries its sender's connection
//! index and the receiving host hands it to the other one of the pair
//! (`Packet::conn`), with no table to search. (A binary search of a
//! per-host table did this before; at 100,000 connections its cache
//! misses were 5 % of the run, docs/PERFORMANCE.md.)
//!
//! **Backpressure.** A host's NIC queue is the host-side queue of its link,
//! the same drop-tail machinery as any link. Linux does not lose a fresh
//! segment to its own full qdisc: `tcp_transmit_skb` fails, the segment
//! stays in the write queue and is sent later, and TSQ keeps a socket from
//! filling the qdisc in the first place. The sans-IO core cannot take a
//! segment back once polled, so the simulator polls a connection for
//! segments only while its NIC queue has room for a full-sized packet; a
//! connection that finds no room waits in the NIC's ready queue
//! (`ready.rs`), which is served in FIFO order, round-robin, as soon as
//! the queue drains by one packet. Host NIC queues therefore never
//! drop a connection's segments; switch queues do. A host with the fq
//! qdisc applies the same principle per fq flow (flow limit and TCP Small
//! Queues) and per qdisc (`limit`); see `sim_fq.rs`.

use crate::config::NodeId;

/// Server (receiver) port of every flow.
pub const SERVER_PORT: u16 = 5001;
/// First client port (Linux `ip_local_port_range` starts at 32768).
pub const FIRST_CLIENT_PORT: u16 = 32768;
/// Most connections (flows times runs) one host may open: client ports
/// `32768..=65535`.
pub const MAX_CONNECTIONS_PER_HOST: usize = (u16::MAX - FIRST_CLIENT_PORT) as usize + 1;

/// Most flows (and connections) one run may have: a bound on memory
/// (about 14 KB per connection pair), not on the model.
pub const MAX_FLOWS: usize = 1 << 20;

/// The `i`-th client port a host hands out (`i` <
/// [`MAX_CONNECTIONS_PER_HOST`]).
#[inline]
pub fn client_port(i: usize) -> u16 {
    FIRST_CLIENT_PORT.wrapping_add(i as u16)
}

/// The client port of every run of every flow: run 0 of the `i`-th flow
/// from a host uses [`client_port`]`(i)`, later runs take the host's next
/// free ports after all its flows' first ones, flow by flow.
pub fn client_ports(flows: &[crate::config::FlowConfig]) -> Vec<Vec<u16>> {
    let mut firsts: std::collections::HashMap<NodeId, usize> = std::collections::HashMap::new();
    for fc in flows {
        *firsts.entry(fc.from).or_default() += 1;
    }
    // Per host: the next first port, and the next port for later runs.
    let mut next: std::collections::HashMap<NodeId, (usize, usize)> =
        firsts.into_iter().map(|(host, n)| (host, (0, n))).collect();
    flows
        .iter()
        .map(|fc| {
            let (first, later) = next.get_mut(&fc.from).expect("every flow's host was counted");
            let runs = fc.repeat.count() as usize;
            let (f, l) = (*first, *later);
            *first += 1;
            *later += runs - 1;
            std::iter::once(client_port(f)).chain((0..runs - 1).map(|k| client_port(l + k))).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_client_ports_end_at_the_top_of_the_range() {
        assert_eq!(client_port(0), FIRST_CLIENT_PORT);
        assert_eq!(client_port(MAX_CONNECTIONS_PER_HOST - 1), u16::MAX);
    }
}
