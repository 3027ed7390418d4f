//! Flows as sequences of runs: starting and stopping a run's connection
//! and application, completion, and the hosts' metrics caches.
//!
//! **Runs.** Run 0 connects at the flow's `start`. When a run's client
//! connection finishes (TIME-WAIT, or CLOSED after being established) the
//! next run, if any, connects `repeat.gap` later: a new client connection
//! (the next client port, two new ISNs from the flow's random stream) and
//! a new server connection, running a fresh copy of the application. A
//! run's application stops `repeat.duration_each` after it connects, if
//! set; run 0 also honours the application's absolute `stop`.
//!
//! **Metrics cache** (net/ipv4/tcp_metrics.c). Each host keeps one
//! [`TcpMetrics`] per destination host. A connection that finishes after
//! being established folds what it learned into its host's entry for the
//! peer with [`Connection::update_metrics`] (the core honours
//! `tcp_no_metrics_save`); Linux does this on entering TIME-WAIT
//! (`tcp_time_wait`) and on the final ACK in LAST-ACK. Every client
//! connects with its host's entry for the destination
//! ([`Connection::client_with_metrics`], applied by the core at the end of
//! the handshake as `tcp_init_metrics` does). The cache is per host pair,
//! so it is shared by all flows between the same hosts, as Linux shares it
//! by destination address.
//!
//! **Release.** Once both connections of a run have finished, their
//! counters and the client's `tcp_info` are kept in the run and the
//! connections are dropped: late segments for them are discarded.

use crate::app::{ClientApp, ServerApp};
use crate::config::NodeId;
use crate::host::SERVER_PORT;
use crate::sim::{Event, RunRt, Sim};
use std::sync::Arc;
use tcplab_core::{Connection, Counters, TcpMetrics, TcpState};
use tcplab_wire::SeqNum;

impl Sim<'_> {
    /// Starts flow `f`'s next run (its first at the flow's start).
    pub(crate) fn start_run(&mut self, f: usize) {
        let now = self.now;
        let fc = &self.cfg.flows[f];
        let flow = &mut self.flows[f];
        let k = flow.runs.len();
        if k >= fc.repeat.count() as usize {
            return;
        }
        let (c, s) = (flow.conn_base as usize + 2 * k, flow.conn_base as usize + 2 * k + 1);
        let port = flow.port(k);
        let iss = if k == 0 {
            flow.client_iss
        } else {
            let client_iss = SeqNum(flow.rng.next_u32());
            let server_iss = SeqNum(flow.rng.next_u32());
            let mut server = Connection::server(Arc::clone(&fc.tcp_receiver), SERVER_PORT, port, server_iss);
            server.set_nodelay(fc.nodelay);
            crate::sim_fq::attach(&mut server, self.dirs[self.conns[s].nic as usize].fq.as_deref());
            self.conns[s].tcp = Some(Box::new(server));
            client_iss
        };
        let cached = self.metrics.get(&(flow.from, flow.to)).copied();
        let mut client =
            Connection::client_with_metrics(Arc::clone(&fc.tcp), port, SERVER_PORT, iss, now, cached.as_ref());
        client.set_nodelay(fc.nodelay);
        crate::sim_fq::attach(&mut client, self.dirs[self.conns[c].nic as usize].fq.as_deref());
        self.conns[c].tcp = Some(Box::new(client));
        flow.runs.push(RunRt {
            start: now,
            client: ClientApp::new(&fc.app),
            server: ServerApp::new(&fc.app),
            completed_at: None,
            closed_at: None,
            cached: cached.map(Box::new),
            rpcs: 0,
            released: None,
        });
        if let Some(each) = fc.repeat.duration_each {
            self.events.push_conn(now + each, Event::AppStop { flow: f as u32, run: k as u32 });
        }
        if k > 0 {
            self.update_timer(s);
        }
        self.after_conn_event(c, false);
    }

    /// Run `r` of flow `f` stops writing (bulk) or issuing requests (RPC).
    pub(crate) fn stop_run(&mut self, f: usize, r: usize) {
        let c = self.flows[f].conn_base as usize + 2 * r;
        let Some(run) = self.flows[f].runs.get_mut(r) else { return };
        let Some(tcp) = self.conns[c].tcp.as_mut() else { return };
        match &mut run.client {
            ClientApp::Bulk(s) => s.stop(tcp),
            ClientApp::Rpc(rc) => rc.stop(),
        }
        self.after_conn_event(c, false);
        self.check_completion(f, r);
    }

    /// An RPC client's think time ended; returns whether it did anything.
    pub(crate) fn wake_app(&mut self, f: usize, r: usize) -> bool {
        let c = self.flows[f].conn_base as usize + 2 * r;
        if self.conns[c].tcp.is_none() {
            return false;
        }
        self.after_conn_event(c, false);
        true
    }

    /// A run is complete once its client application has stopped and the
    /// server application has read every byte written (bulk), or once the
    /// RPC client has closed after its last response.
    pub(crate) fn check_completion(&mut self, f: usize, r: usize) {
        let now = self.now;
        let last = r + 1 == self.cfg.flows[f].repeat.count() as usize;
        let flow = &mut self.flows[f];
        let run = &mut flow.runs[r];
        if run.completed_at.is_some() {
            return;
        }
        let done = match (&run.client, &run.server) {
            (ClientApp::Bulk(s), server) => s.closed && server.delivered() >= s.written,
            (ClientApp::Rpc(c), _) => c.closed,
        };
        if done {
            run.completed_at = Some(now);
            if last {
                flow.completed_at = Some(now);
            }
        }
    }

    /// Handles connection `c` finishing: metrics into the host's cache,
    /// the next run, and releasing a run whose both ends are done.
    pub(crate) fn check_closed(&mut self, c: usize) {
        let conn = &mut self.conns[c];
        let Some(tcp) = conn.tcp.as_ref() else { return };
        let state = tcp.state();
        if !conn.established
            && !matches!(state, TcpState::Closed | TcpState::Listen | TcpState::SynSent | TcpState::SynReceived)
        {
            conn.established = true;
        }
        // A client closed before its handshake completed also ends its
        // run (without metrics: Linux saves none for it either).
        let finished = tcp.is_closed() && (conn.established || (conn.client && state == TcpState::Closed));
        if !finished {
            return;
        }
        conn.done = true;
        let (f, r, client) = (conn.flow as usize, conn.run as usize, conn.client);
        if conn.established {
            let flow = &self.flows[f];
            let key: (NodeId, NodeId) = if client { (flow.from, flow.to) } else { (flow.to, flow.from) };
            let old = self.metrics.get(&key).copied();
            let mut m = old.unwrap_or_default();
            tcp.update_metrics(&mut m);
            if old.is_some() || m != TcpMetrics::default() {
                self.metrics.insert(key, m);
            }
        }
        let now = self.now;
        let repeat = &self.cfg.flows[f].repeat;
        let flow = &mut self.flows[f];
        if client {
            flow.runs[r].closed_at = Some(now);
            if r + 1 < repeat.count() as usize && flow.runs.len() == r + 1 {
                let at = now + repeat.gap;
                self.events.push_conn(at, Event::FlowStart(f as u32));
            }
        }
        let base = flow.conn_base as usize + 2 * r;
        if self.conns[base].done && self.conns[base + 1].done {
            self.release_run(f, r);
        }
    }

    /// Keeps run `r`'s counters and final `tcp_info`, and drops its
    /// connections.
    fn release_run(&mut self, f: usize, r: usize) {
        let base = self.flows[f].conn_base as usize + 2 * r;
        let (a, b) = (self.conns[base].tcp.take(), self.conns[base + 1].tcp.take());
        let mut counters = Counters::default();
        for t in [&a, &b].into_iter().flatten() {
            counters.merge(t.counters());
        }
        let info = a.as_ref().map(|t| t.info()).unwrap_or_default();
        let retrans = a.as_ref().map_or(0, |t| t.counters().get(tcplab_core::Mib::TcpRetransSegs));
        self.flows[f].runs[r].released = Some(Box::new((counters, info, retrans)));
    }
}
