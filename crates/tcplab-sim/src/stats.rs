//! Turning a simulation's state into a [`RunResult`].
//!
//! - Flow goodput: bytes read by the receiving application, in bits per
//!   second over the flow's active time, from its `start` to its completion
//!   (or to now, if it has not completed). Zero before the flow starts.
//! - Retransmits: the sender's `TcpRetransSegs`.
//! - Counters: the flow's sender and receiver merged; the run's counters
//!   are the sum over flows.
//! - Link utilization: serializer busy time over elapsed time, the packet
//!   in service counted up to now.

use crate::result::{FlowResult, LinkResult, RunResult};
use crate::sim::Sim;
use tcplab_core::time::Duration;
use tcplab_core::{Counters, Mib, TcpInfo};

impl Sim {
    /// The results so far (at [`Sim::now`]). Can be called at any time,
    /// any number of times.
    pub fn result(&self) -> RunResult {
        let now = self.now;
        let elapsed = now.as_nanos();
        let mut total = Counters::default();
        let mut flows = Vec::with_capacity(self.flows.len());
        for (f, flow) in self.flows.iter().enumerate() {
            let client = self.conns[2 * f].tcp.as_ref();
            let server = self.conns[2 * f + 1].tcp.as_ref();
            let mut counters = Counters::default();
            for c in [client, server].into_iter().flatten() {
                counters.merge(c.counters());
            }
            total.merge(&counters);
            let end = flow.completed_at.unwrap_or(now);
            let active = (end - flow.start).as_nanos();
            let delivered = flow.sink.delivered;
            let goodput_bps = if active > 0 { delivered as f64 * 8.0 * 1e9 / active as f64 } else { 0.0 };
            flows.push(FlowResult {
                id: self.flow_ids[f].clone(),
                cc: flow.client_cfg.congestion_control.name().to_string(),
                bytes_delivered: delivered,
                goodput_bps,
                retransmits: client.map_or(0, |c| c.counters().get(Mib::TcpRetransSegs)),
                sender_info: client.map_or_else(TcpInfo::default, |c| c.info()),
                counters,
                completed_at: flow.completed_at.map(|t| Duration::from_nanos(t.as_nanos())),
                trace: flow.trace.as_ref().map_or_else(Vec::new, |t| t.rows.clone()),
            });
        }
        let links = self
            .dirs
            .iter()
            .enumerate()
            .map(|(d, dir)| LinkResult {
                id: format!("{}:{}->{}", self.link_names[d / 2], self.node_names[dir.from], self.node_names[dir.to]),
                utilization: if elapsed > 0 { dir.busy_until(now) as f64 / elapsed as f64 } else { 0.0 },
                tx_packets: dir.tx_packets,
                tx_bytes: dir.tx_bytes,
                drops: dir.queue.drops,
                ce_marks: dir.queue.ce_marks,
                peak_queue_packets: dir.queue.peak_packets,
            })
            .collect();
        RunResult {
            sim_time: Duration::from_nanos(elapsed),
            events: self.processed,
            flows,
            links,
            counters: total,
            data_segments: self.data_segments,
        }
    }
}
