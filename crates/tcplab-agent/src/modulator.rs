//! Netem qdiscs whose parameters change during a run ([`NetemTimeline`]:
//! an on-off delay, blackouts), replayed change by change.
//!
//! The host computes every change ahead; here a thread sleeps to each
//! change's absolute time and runs `tc qdisc change`. A program run costs
//! the guest CPU time only, which under `time-travel=inf-cpu` is no
//! virtual time.

use crate::flows::Scenario;
use crate::job::NetemTimeline;
use crate::setup;

fn command(t: &NetemTimeline, args: &[String]) -> Vec<String> {
    let mut argv = t.change_argv.clone();
    argv.extend(args.iter().cloned());
    argv
}

/// Before `t0`: makes the changes due at time 0.
pub fn prepare(t: &NetemTimeline) -> Result<(), String> {
    for c in t.changes.iter().filter(|c| c.at_ns == 0) {
        setup::exec(&command(t, &c.args)).map_err(|e| format!("{}: {e}", t.what))?;
    }
    Ok(())
}

/// From `t0`: every later change at its time. The first failure is
/// reported and ends the timeline.
pub fn run(sc: &Scenario, t: &NetemTimeline) {
    for c in t.changes.iter().filter(|c| c.at_ns > 0) {
        sc.epoch.sleep_until(c.at_ns);
        if let Err(e) = setup::exec(&command(t, &c.args)) {
            sc.errors.push(format!("{} at {} ns: {e}", t.what, c.at_ns));
            return;
        }
    }
}
