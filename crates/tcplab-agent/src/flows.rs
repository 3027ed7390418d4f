//! Per-flow state shared by the flow's client and server threads, the
//! sampler and the end-of-scenario snapshot.
//!
//! Byte and transaction counts are atomics, updated on every read without
//! a lock, so that the snapshot sees partial counts of runs still going.
//! Everything else sits behind one mutex per flow (not a hot path).
//!
//! **The client socket and fd reuse.** The sampler and the snapshot read
//! `TCP_INFO` of the current client socket by its descriptor number. If
//! the client closed the socket and any thread opened another one, the
//! number could name a different socket. So the client publishes the
//! number under the lock when the run starts and closes the socket *while
//! holding the lock*, clearing the number at the same time
//! ([`Flow::end_run`]): a reader holding the lock always sees either the
//! live socket or nothing.

use crate::clock::Epoch;
use crate::job::{FlowJob, FlowOut, RunOut, TcpInfoOut};
use crate::tcp_info;
use std::net::TcpStream;
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// Locks `m`, ignoring poisoning: a thread that panicked while holding a
/// lock leaves plain data behind, still worth reporting.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What a run's threads report through the lock.
#[derive(Debug, Default)]
struct State {
    /// One per run of the job; the first `started` have connected.
    runs: Vec<RunOut>,
    started: usize,
    /// The current run's client socket, while it is open.
    client_fd: Option<RawFd>,
    rpc_latencies_ns: Vec<u64>,
    trace: Vec<crate::job::TraceOut>,
}

/// A flow's job and its shared state.
#[derive(Debug)]
pub struct Flow {
    pub job: FlowJob,
    /// Per run: bytes read by the applications (see `RunOut::bytes_delivered`).
    bytes: Vec<AtomicU64>,
    /// Per run: transactions completed.
    rpcs: Vec<AtomicU64>,
    state: Mutex<State>,
}

impl Flow {
    pub fn new(job: FlowJob) -> Flow {
        let n = job.client_ports.len();
        Flow {
            bytes: (0..n).map(|_| AtomicU64::new(0)).collect(),
            rpcs: (0..n).map(|_| AtomicU64::new(0)).collect(),
            state: Mutex::new(State { runs: vec![RunOut::default(); n], ..State::default() }),
            job,
        }
    }

    pub fn runs(&self) -> usize {
        self.job.client_ports.len()
    }

    pub fn add_bytes(&self, run: usize, n: u64) {
        if let Some(b) = self.bytes.get(run) {
            b.fetch_add(n, Ordering::Relaxed);
        }
    }

    /// A transaction of `run` completed with `latency_ns`.
    pub fn add_rpc(&self, run: usize, latency_ns: u64) {
        if let Some(r) = self.rpcs.get(run) {
            r.fetch_add(1, Ordering::Relaxed);
        }
        lock(&self.state).rpc_latencies_ns.push(latency_ns);
    }

    /// Run `run` is about to `connect()` at scenario time `start_ns` with
    /// socket `fd`.
    pub fn begin_run(&self, run: usize, start_ns: u64, fd: RawFd) {
        let mut s = lock(&self.state);
        if let Some(r) = s.runs.get_mut(run) {
            r.start_ns = start_ns;
        }
        s.started = s.started.max(run + 1);
        s.client_fd = Some(fd);
    }

    pub fn set_completed(&self, run: usize, at_ns: u64) {
        if let Some(r) = lock(&self.state).runs.get_mut(run) {
            r.completed_ns = Some(at_ns);
        }
    }

    /// Closes run `run`'s client socket under the lock (see the module
    /// doc), recording when it saw the server's FIN (`closed_ns`, `None`
    /// if the run failed) and its final `TCP_INFO`.
    pub fn end_run(&self, run: usize, stream: TcpStream, closed_ns: Option<u64>, info: Option<TcpInfoOut>) {
        let mut s = lock(&self.state);
        if let Some(r) = s.runs.get_mut(run) {
            r.closed_ns = closed_ns;
            if let Some(i) = info {
                r.info = i;
            }
        }
        s.client_fd = None;
        drop(stream);
    }

    /// Appends a trace row from the current client socket, if it has a
    /// connection: not while the handshake is going (no RTT yet, pacing
    /// rate "unlimited") nor once closed.
    pub fn sample(&self, epoch: &Epoch) {
        let mut s = lock(&self.state);
        if let Some(fd) = s.client_fd {
            if let Ok(i) = tcp_info::read(fd) {
                if !matches!(i.tcpi_state, tcp_info::TCP_SYN_SENT | tcp_info::TCP_CLOSE) {
                    let t = epoch.elapsed();
                    s.trace.push(i.to_trace(t, tcp_info::read_dctcp_alpha(fd)));
                }
            }
        }
    }

    /// The flow's result now: the runs that have started, the one still
    /// going with a fresh `TCP_INFO`.
    pub fn snapshot(&self) -> FlowOut {
        let s = lock(&self.state);
        let mut runs: Vec<RunOut> = s.runs[..s.started.min(s.runs.len())].to_vec();
        for (k, r) in runs.iter_mut().enumerate() {
            r.bytes_delivered = self.bytes[k].load(Ordering::Relaxed);
            r.rpcs = self.rpcs[k].load(Ordering::Relaxed);
        }
        if let (Some(fd), Some(last)) = (s.client_fd, runs.last_mut()) {
            if let Ok(i) = tcp_info::read(fd) {
                last.info = i.to_out();
            }
        }
        FlowOut { id: self.job.id.clone(), runs, rpc_latencies_ns: s.rpc_latencies_ns.clone(), trace: s.trace.clone() }
    }
}

/// Run-time failures of the flows' threads, reported in `result.error`.
#[derive(Debug, Default)]
pub struct Errors(Mutex<Vec<String>>);

impl Errors {
    pub fn push(&self, e: String) {
        lock(&self.0).push(e);
    }

    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *lock(&self.0))
    }
}

/// Everything the flows' threads and the sampler share.
#[derive(Debug)]
pub struct Scenario {
    pub epoch: Epoch,
    pub flows: Vec<Flow>,
    pub errors: Errors,
}
