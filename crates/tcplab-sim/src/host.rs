//! End hosts: port assignment, the TCP demultiplexer, and NIC backpressure.
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
//! run; the demultiplexer knows every connection's 4-tuple from the
//! start.
//!
//! **Demultiplexing.** Each host holds a table sorted by the 4-tuple as
//! seen locally, `(remote host, local port, remote port)`, searched by
//! binary search: no hashing on the hot path. A segment that matches no
//! connection is dropped (Linux would answer with a RST; nothing in a
//! simulated run should produce one).
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

/// Per-host table from the local view of the 4-tuple to a connection index.
#[derive(Debug, Default, Clone)]
pub(crate) struct Demux {
    entries: Vec<(u64, u32)>,
}

#[inline]
fn key(remote: NodeId, local_port: u16, remote_port: u16) -> u64 {
    ((remote as u64) << 32) | ((local_port as u64) << 16) | remote_port as u64
}

impl Demux {
    /// Registers a connection; call [`Demux::seal`] after the last insert.
    pub fn insert(&mut self, remote: NodeId, local_port: u16, remote_port: u16, conn: u32) {
        self.entries.push((key(remote, local_port, remote_port), conn));
    }

    /// Sorts the table for lookups.
    pub fn seal(&mut self) {
        self.entries.sort_unstable();
    }

    /// The connection for a segment from `remote` with the given ports
    /// (`local_port` = the segment's destination port).
    #[inline]
    pub fn lookup(&self, remote: NodeId, local_port: u16, remote_port: u16) -> Option<u32> {
        let k = key(remote, local_port, remote_port);
        self.entries.binary_search_by_key(&k, |e| e.0).ok().map(|i| self.entries[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_demux_by_four_tuple() {
        let mut d = Demux::default();
        d.insert(3, SERVER_PORT, client_port(0), 1);
        d.insert(4, SERVER_PORT, client_port(1), 3);
        d.insert(3, SERVER_PORT, client_port(2), 5);
        d.seal();
        assert_eq!(d.lookup(3, SERVER_PORT, client_port(0)), Some(1));
        assert_eq!(d.lookup(4, SERVER_PORT, client_port(1)), Some(3));
        assert_eq!(d.lookup(3, SERVER_PORT, client_port(2)), Some(5));
        // Right ports, wrong remote host.
        assert_eq!(d.lookup(4, SERVER_PORT, client_port(0)), None);
        assert_eq!(client_port(MAX_CONNECTIONS_PER_HOST - 1), u16::MAX);
    }
}
