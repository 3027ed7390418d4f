//! A link direction's netem over time: an on-off delay's chain and the
//! direction's blackouts, turned into the `tc qdisc change` arguments the
//! guest agent replays ([`NetemChange`]).
//!
//! The on-off chain is the model's own realization
//! ([`tcplab_sim::on_off::OnOffSchedule`], seeded by the run's seed and the
//! direction), so a kernel run has the noise of the model run of the same
//! seed.

use tcplab_agent::job::NetemChange;
use tcplab_core::time::Duration;
use tcplab_sim::config::Blackout;
use tcplab_sim::on_off::OnOffSchedule;

/// An on-off chain's parameters.
#[derive(Clone, Copy, Debug)]
pub struct OnOff {
    pub slot: Duration,
    pub mean_on: Duration,
    pub mean_off: Duration,
    pub seed: u64,
}

impl OnOff {
    /// The state at 0 and the times (ns) of every change before `end_ns`.
    pub fn schedule(&self, end_ns: u64) -> (bool, Vec<u64>) {
        let mut c =
            OnOffSchedule::new(self.slot.as_nanos(), self.mean_on.as_nanos(), self.mean_off.as_nanos(), self.seed);
        let (start_on, mut changes) = (c.is_on(), Vec::new());
        while c.next_change() < end_ns {
            changes.push(c.next_change());
            c.advance();
        }
        (start_on, changes)
    }
}

/// The changes of one direction's netem over `[0, end_ns)`: `args(on,
/// blacked_out)` gives its arguments in each state, `created` the
/// arguments it was created with. A change at 0 is the initial state when
/// it differs from `created`; later changes come only where the
/// arguments change.
pub fn changes(
    on_off: Option<OnOff>,
    blackouts: &[Blackout],
    end_ns: u64,
    created: &[String],
    args: impl Fn(bool, bool) -> Vec<String>,
) -> Vec<NetemChange> {
    let (start_on, flips) = on_off.map_or((false, Vec::new()), |c| c.schedule(end_ns));
    #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Flip,
        Dark,
        Light,
    }
    let mut events: Vec<(u64, Ev)> = flips.iter().map(|&t| (t, Ev::Flip)).collect();
    for b in blackouts {
        events.push((b.start.as_nanos(), Ev::Dark));
        events.push((b.end.as_nanos(), Ev::Light));
    }
    events.sort_unstable();
    let (mut on, mut dark, mut i) = (start_on, false, 0);
    // Applies every event at time `t`.
    let apply = |t: u64, i: &mut usize, on: &mut bool, dark: &mut bool| {
        while *i < events.len() && events[*i].0 == t {
            match events[*i].1 {
                Ev::Flip => *on = !*on,
                Ev::Dark => *dark = true,
                Ev::Light => *dark = false,
            }
            *i += 1;
        }
    };
    apply(0, &mut i, &mut on, &mut dark);
    let mut out = Vec::new();
    let mut last = args(on, dark);
    if last != created {
        out.push(NetemChange { at_ns: 0, args: last.clone() });
    }
    while i < events.len() && events[i].0 < end_ns {
        let t = events[i].0;
        apply(t, &mut i, &mut on, &mut dark);
        let now = args(on, dark);
        if now != last {
            out.push(NetemChange { at_ns: t, args: now.clone() });
            last = now;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chain(mean_on_ms: u64, mean_off_ms: u64, seed: u64) -> OnOff {
        OnOff {
            slot: Duration::from_millis(1),
            mean_on: Duration::from_millis(mean_on_ms),
            mean_off: Duration::from_millis(mean_off_ms),
            seed,
        }
    }

    #[test]
    fn changes_are_whole_slots_increasing_and_seeded() {
        let (a, ca) = chain(100, 400, 7).schedule(10_000_000_000);
        let (b, cb) = chain(100, 400, 7).schedule(10_000_000_000);
        assert_eq!((a, &ca), (b, &cb), "same seed, same schedule");
        assert!(ca.windows(2).all(|w| w[0] < w[1]));
        assert!(ca.iter().all(|t| t % 1_000_000 == 0));
        assert_ne!(ca, chain(100, 400, 8).schedule(10_000_000_000).1);
    }

    fn label(on: bool, dark: bool) -> Vec<String> {
        vec![format!("{}{}", if on { "on" } else { "off" }, if dark { "+dark" } else { "" })]
    }

    #[test]
    fn blackouts_switch_loss_in_and_out_at_their_edges() {
        let ms = Duration::from_millis;
        let w = [Blackout { start: ms(0), end: ms(5) }, Blackout { start: ms(20), end: ms(23) }];
        let c = changes(None, &w, 100_000_000, &label(false, false), label);
        let got: Vec<(u64, &str)> = c.iter().map(|c| (c.at_ns / 1_000_000, c.args[0].as_str())).collect();
        assert_eq!(got, [(0, "off+dark"), (5, "off"), (20, "off+dark"), (23, "off")]);
        // A blackout beyond the run changes nothing.
        let late = [Blackout { start: ms(200), end: ms(300) }];
        assert!(changes(None, &late, 100_000_000, &label(false, false), label).is_empty());
    }

    #[test]
    fn on_off_and_blackouts_merge_into_one_timeline() {
        let c = chain(10, 10, 3);
        let (start_on, flips) = c.schedule(1_000_000_000);
        let w = [Blackout { start: Duration::from_millis(500), end: Duration::from_millis(600) }];
        let out = changes(Some(c), &w, 1_000_000_000, &label(false, false), label);
        // Replaying the changes from the created state gives, at every
        // moment, the state the two sources say.
        let state_at = |t: u64| {
            let on = start_on ^ (flips.iter().filter(|&&f| f <= t).count() % 2 == 1);
            label(on, (500_000_000..600_000_000).contains(&t))
        };
        let mut cur = label(false, false);
        let mut k = 0;
        for t in (0..1_000_000_000).step_by(250_000) {
            while k < out.len() && out[k].at_ns <= t {
                cur = out[k].args.clone();
                k += 1;
            }
            assert_eq!(cur, state_at(t), "at {t} ns");
        }
    }
}
