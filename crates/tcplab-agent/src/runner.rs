//! One job from set-up to result: set-up steps, listeners, `t0`, the
//! flows' threads and the sampler, then the end-of-scenario snapshot.
//!
//! Threads still blocked in a `send()` or `recv()` at the end are left
//! behind: the process exits (or the guest powers off) right after the
//! result is written, and the snapshot is taken under each flow's lock, so
//! nothing they do afterwards can reach the result.

use crate::apps;
use crate::clock::Epoch;
use crate::flows::{lock, Errors, Flow, Scenario};
use crate::job::{GuestResult, Job};
use crate::links::LinkProber;
use crate::netns;
use crate::nstat;
use crate::sampler;
use crate::setup;
use std::ffi::CStr;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

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

fn execute(job: &Job, res: &mut GuestResult) -> Vec<String> {
    if let Err(e) = validate(job).and_then(|()| setup::run(&job.setup)) {
        return vec![e];
    }
    // Listeners before t0, so that a client starting at 0 finds its server.
    let mut listeners = Vec::with_capacity(job.flows.len());
    for f in &job.flows {
        match netns::run_in(Some(&f.server_ns), || apps::listen(f)) {
            Ok(l) => listeners.push(l),
            Err(e) => return vec![format!("flow {}: server: {e}", f.id)],
        }
    }
    let prober = match LinkProber::open(&job.link_probes) {
        Ok(p) => Arc::new(Mutex::new(p)),
        Err(e) => return vec![e],
    };

    let sc = Arc::new(Scenario {
        epoch: Epoch::start(),
        flows: job.flows.iter().cloned().map(Flow::new).collect(),
        errors: Errors::default(),
    });
    for (f, listener) in listeners.into_iter().enumerate() {
        let id = &job.flows[f].id;
        let s = Arc::clone(&sc);
        spawn(&sc, format!("server {id}"), move || apps::server(&s, f, listener));
        let s = Arc::clone(&sc);
        spawn(&sc, format!("client {id}"), move || apps::client(&s, f));
    }
    if let Some(interval) = job.trace_interval_ns {
        let (s, p, end) = (Arc::clone(&sc), Arc::clone(&prober), job.duration_ns);
        spawn(&sc, "sampler".into(), move || sampler::run(&s, &p, interval, end));
    }

    sc.epoch.sleep_until(job.duration_ns);

    res.flows = sc.flows.iter().map(Flow::snapshot).collect();
    let mut errors = sc.errors.take();
    for ns in &job.counter_namespaces {
        match nstat::read(ns) {
            Ok(c) => res.counters.push((ns.clone(), c)),
            Err(e) => errors.push(format!("counters: {e}")),
        }
    }
    let (links, link_errors) = lock(&prober).finish();
    res.links = links;
    errors.extend(link_errors);
    errors
}

/// Starts a detached thread; failing to is a run error.
fn spawn(sc: &Scenario, name: String, f: impl FnOnce() + Send + 'static) {
    if let Err(e) = std::thread::Builder::new().name(name.clone()).spawn(f) {
        sc.errors.push(format!("{name}: cannot start a thread: {e}"));
    }
}
