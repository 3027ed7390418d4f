//! One job from set-up to result: set-up steps, the flows' threads (each
//! in its namespace, servers listening), `t0`, the sampler, then the
//! end-of-scenario snapshot.
//!
//! Threads still blocked in a `send()` or `recv()` at the end are left
//! behind: the process exits (or the guest powers off) right after the
//! result is written, and the snapshot is taken under each flow's lock, so
//! nothing they do afterwards can reach the result.

use crate::apps;
use crate::clock::{self, Epoch};
use crate::flows::{lock, Errors, Flow, Scenario};
use crate::job::{GuestResult, Job};
use crate::links::LinkProber;
use crate::modulator;
use crate::netns;
use crate::nstat;
use crate::sampler;
use crate::setup;
use std::ffi::CStr;
use std::net::IpAddr;
use std::sync::{mpsc, Arc, Mutex};

/// Runs `job` and returns its result; failures are in `result.error`
/// (several run-time failures joined with "; "), never a panic.
pub fn run(job: &Job) -> GuestResult {
    let mut res = GuestResult { kernel_release: kernel_release(), ..GuestResult::default() };
    let errors = execute(job, &mut res);
    if !errors.is_empty() {
        res.error = Some(errors.join("; "));
    }
    res
}

/// `uname -r`.
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain data; all-zero is a valid value.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: `u` is a writable utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::new();
    }
    // SAFETY: uname() NUL-terminates every field.
    unsafe { CStr::from_ptr(u.release.as_ptr()) }.to_string_lossy().into_owned()
}

/// What can be checked before touching the system.
pub fn validate(job: &Job) -> Result<(), String> {
    if job.trace_interval_ns == Some(0) {
        return Err("trace_interval_ns must be greater than 0".into());
    }
    for f in &job.flows {
        for (what, a) in [("client_addr", &f.client_addr), ("server_addr", &f.server_addr)] {
            a.parse::<IpAddr>().map_err(|e| format!("flow {}: {what} {a:?}: {e}", f.id))?;
        }
    }
    Ok(())
}

/// Virtual time between the end of the set-up and `t0`. The set-up's
/// last changes to a link's middle namespace take effect a few
/// milliseconds of virtual time later (measured, not traced inside the
/// kernel): without this wait, a packet crossing such a link in the first
/// ~3.2 ms of the scenario waited until then, so the handshake's RTT
/// sample, the first of every flow, read 23.2 ms on a 20 ms path (20.07 ms
/// with the wait) and inflated the early `srtt`. 20 ms is two jiffies at
/// HZ 100, the coarsest tick an image is built with.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(20);

fn execute(job: &Job, res: &mut GuestResult) -> Vec<String> {
    if let Err(e) = clock::precise_timers().and_then(|()| validate(job)).and_then(|()| setup::run(&job.setup)) {
        return vec![e];
    }
    let prober = match LinkProber::open(&job.link_probes) {
        Ok(p) => Arc::new(Mutex::new(p)),
        Err(e) => return vec![e],
    };
    let mut loss_prober = match LinkProber::open(&job.loss_probes) {
        Ok(p) => p,
        Err(e) => return vec![e],
    };
    let capture = match crate::capture::start(job) {
        Ok(c) => c,
        Err(e) => return vec![e],
    };

    // Every thread is started, has entered its namespace and made its
    // listener before t0, so that none of that (thread creation, setns)
    // costs scenario time; they then wait for the scenario.
    let (ready_tx, ready_rx) = mpsc::channel();
    let mut go = Vec::new();
    for (f, fj) in job.flows.iter().enumerate() {
        let (sj, id) = (fj.clone(), fj.id.clone());
        let listen = move || {
            netns::enter(&sj.server_ns).and_then(|()| apps::listen(&sj)).map_err(|e| format!("flow {id}: server: {e}"))
        };
        let server = start(format!("server {}", fj.id), &ready_tx, listen, move |sc, l| apps::server(sc, f, l));
        let (ns, id) = (fj.client_ns.clone(), fj.id.clone());
        let enter = move || netns::enter(&ns).map_err(|e| format!("flow {id}: client: {e}"));
        let client = start(format!("client {}", fj.id), &ready_tx, enter, move |sc, ()| apps::client(sc, f));
        match server.and_then(|s| Ok((s, client?))) {
            Ok((s, c)) => go.extend([s, c]),
            Err(e) => return vec![e],
        }
    }
    if let Some(interval) = job.trace_interval_ns {
        let (p, end) = (Arc::clone(&prober), job.duration_ns);
        match start("sampler".into(), &ready_tx, || Ok(()), move |sc, ()| sampler::run(sc, &p, interval, end)) {
            Ok(s) => go.push(s),
            Err(e) => return vec![e],
        }
    }
    for t in &job.netem_timelines {
        let (prep, body) = (t.clone(), t.clone());
        let started = start(
            format!("netem {}", t.what),
            &ready_tx,
            move || modulator::prepare(&prep),
            move |sc, ()| modulator::run(sc, &body),
        );
        match started {
            Ok(s) => go.push(s),
            Err(e) => return vec![e],
        }
    }
    drop(ready_tx);
    for _ in 0..go.len() {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return vec![e],
            Err(_) => return vec!["a thread ended before it was ready".into()],
        }
    }

    // Let the set-up settle before t0 (see SETTLE), then start on the
    // tick where the model's run starts on the timer wheel's grid.
    let settled = clock::now_ns().saturating_add(SETTLE.as_nanos() as u64);
    let epoch = if job.hz == 0 {
        clock::sleep_until(settled);
        Epoch::start()
    } else {
        match clock::aligned_tick(settled, job.hz) {
            Ok(t0) => Epoch::start_at(t0),
            Err(e) => return vec![e],
        }
    };
    let sc = Arc::new(Scenario {
        epoch,
        flows: job.flows.iter().cloned().map(Flow::new).collect(),
        errors: Errors::default(),
    });
    for g in go {
        // A thread that is gone has nothing to run.
        let _ = g.send(Arc::clone(&sc));
    }

    sc.epoch.sleep_until(job.duration_ns);

    res.flows = sc.flows.iter().map(Flow::snapshot).collect();
    let mut errors = sc.errors.take();
    errors.extend(capture.finish(sc.epoch.t0).err());
    for ns in &job.counter_namespaces {
        match nstat::read(ns) {
            Ok(c) => res.counters.push((ns.clone(), c)),
            Err(e) => errors.push(format!("counters: {e}")),
        }
    }
    let (links, link_errors) = lock(&prober).finish();
    res.links = links;
    errors.extend(link_errors);
    let (losses, loss_errors) = loss_prober.finish();
    res.losses = losses;
    errors.extend(loss_errors);
    errors
}

/// Starts a thread that runs `prepare`, reports its outcome on `ready`,
/// then waits for the scenario (sent on the returned channel at `t0`) and
/// runs `body` with what `prepare` made. If the scenario never comes (the
/// sender is dropped), the thread just ends.
fn start<P: 'static>(
    name: String,
    ready: &mpsc::Sender<Result<(), String>>,
    prepare: impl FnOnce() -> Result<P, String> + Send + 'static,
    body: impl FnOnce(&Scenario, P) + Send + 'static,
) -> Result<mpsc::Sender<Arc<Scenario>>, String> {
    let (tx, rx) = mpsc::channel::<Arc<Scenario>>();
    let ready = ready.clone();
    let thread = move || {
        let made = prepare();
        let ok = made.as_ref().map(drop).map_err(Clone::clone);
        let _ = ready.send(ok);
        drop(ready);
        if let (Ok(p), Ok(sc)) = (made, rx.recv()) {
            body(&sc, p);
        }
    };
    std::thread::Builder::new()
        .name(name.clone())
        .spawn(thread)
        .map_err(|e| format!("{name}: cannot start a thread: {e}"))?;
    Ok(tx)
}
