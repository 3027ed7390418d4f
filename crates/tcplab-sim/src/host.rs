//! End hosts: port assignment, the TCP demultiplexer, and NIC backpressure.
//!
//! **Ports.** Flow `i` (its index in `SimConfig::flows`) connects from
//! client port [`client_port`]`(i) = 32768 + i` (the start of Linux's
//! ephemeral range) to server port [`SERVER_PORT`] (5001, iperf's). A flow
//! with several runs (`repeat`) uses a new client port for each later run:
//! runs 1, 2, … of all flows take the ports after every flow's first one,
//! in flow order (flow 0's later runs first). Ports depend only on the
//! configuration, so they are the same every time, and every connection
//! has a distinct 4-tuple even between the same pair of hosts. At most
//! [`MAX_FLOWS`] connections (flows times runs) fit the port space; the
//! demultiplexer knows every connection's 4-tuple from the start.
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
/// Most flows a run can have: client ports `32768..=65535`.
pub const MAX_FLOWS: usize = (u16::MAX - FIRST_CLIENT_PORT) as usize + 1;

/// Client port of flow `flow` (< [`MAX_FLOWS`]).
#[inline]
pub fn client_port(flow: usize) -> u16 {
    FIRST_CLIENT_PORT.wrapping_add(flow as u16)
}

/// The client port of every run of every flow: run 0 of flow `f` uses
/// [`client_port`]`(f)`, later runs take the next free ports after all
/// flows' first ones, flow by flow.
pub fn client_ports(flows: &[crate::config::FlowConfig]) -> Vec<Vec<u16>> {
    let mut next = FIRST_CLIENT_PORT as u32 + flows.len() as u32;
    flows
        .iter()
        .enumerate()
        .map(|(f, fc)| {
            let runs = fc.repeat.runs.max(1);
            let base = next as u16;
            next += runs - 1;
            (0..runs).map(|k| if k == 0 { client_port(f) } else { base.wrapping_add(k as u16 - 1) }).collect()
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
        assert_eq!(client_port(MAX_FLOWS - 1), u16::MAX);
    }
}
