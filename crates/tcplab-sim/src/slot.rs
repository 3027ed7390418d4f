//! netem's `slot` on a link direction's delay (net/sched/sch_netem.c
//! `get_slot_next`, `netem_dequeue`; `tc qdisc ... netem ... slot S`):
//! packets whose delay has ended wait for the next slot to open and then
//! leave together. Interrupt moderation hands a receiver its packets the
//! same way, in batches, which is what gives GRO something to merge
//! (`gro.rs`).
//!
//! The state is netem's: one `slot_next`. Every `netem_dequeue` call
//! looks at the head of the delay line (the packet due first) and, when
//! the slot opens before that packet is due, draws the next slot from
//! *now* (`get_slot_next`: `slot_next = now + S`, minimum and maximum
//! equal here, no packet or byte budget). The head leaves once it is due
//! and the slot is open; the same call then looks at the next head.
//! netem dequeues when a packet is enqueued (the link's shaper releases
//! it: the start of its serialization, see the kernel backend's
//! translation) and when its watchdog fires at `max(due, slot_next)`.
//! Which of those calls comes first decides which slot a packet leaves
//! in, so the simulator makes the same calls at the same instants
//! (`Sim::start_tx`, `Sim::propagate`, `Sim::slot_release`).

/// One direction's slot state.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlotGate {
    /// `S`, ns.
    period: u64,
    /// `q->slot.slot_next`, ns. `get_slot` sets it to the time the qdisc
    /// is configured, before the run: 0 here.
    slot_next: u64,
    /// The enqueue of the packet being serialized, when the delay line was
    /// empty then: its dequeue call needs that packet's due time, known
    /// only when it enters the delay (nothing can leave in between).
    pub pending_call: Option<u64>,
    /// A `PipeHead` event for this direction is in the event list (the
    /// watchdog). Calls only ever move `slot_next` later, so one pending
    /// wake-up suffices: an early one finds the head not ready and re-arms.
    pub armed: bool,
}

impl SlotGate {
    pub fn new(period_ns: u64) -> Self {
        SlotGate { period: period_ns, slot_next: 0, pending_call: None, armed: false }
    }

    /// A `netem_dequeue` call at `now` that finds a head due at `due`:
    /// "if (q->slot.slot_next && q->slot.slot_next < time_to_send)
    /// get_slot_next(q, now)".
    #[inline]
    pub fn call(&mut self, now: u64, due: u64) {
        if self.slot_next < due {
            self.slot_next = now + self.period;
        }
    }

    /// After [`Self::call`]: the head leaves now.
    #[inline]
    pub fn open(&self, now: u64, due: u64) -> bool {
        due <= now && self.slot_next <= now
    }

    /// When the watchdog fires for a head due at `due` that cannot leave
    /// yet (`qdisc_watchdog_schedule_ns(max(time_to_send, slot_next))`).
    #[inline]
    pub fn wake_at(&self, due: u64) -> u64 {
        due.max(self.slot_next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The calls netem makes for three packets due at 10, 11 and 30 (µs)
    /// with a 4 µs slot, their enqueues at 0, 1 and 2, the line idle
    /// before: the first two leave together at 14, the third at 34.
    #[test]
    fn test_slot_batches_what_comes_due_and_redraws_from_the_call() {
        let mut g = SlotGate::new(4);
        // Enqueue of the first packet (the head): the slot is redrawn from now.
        g.call(0, 10);
        assert_eq!(g.wake_at(10), 10);
        // The second enqueue at 1 finds slot 4 < 10: redrawn to 5.
        g.call(1, 10);
        // The third at 2: 6.
        g.call(2, 10);
        assert_eq!(g.wake_at(10), 10);
        // Watchdog at 10: 6 < 10, redrawn to 14; not open.
        g.call(10, 10);
        assert!(!g.open(10, 10));
        assert_eq!(g.wake_at(10), 14);
        // At 14 the head and the packet due at 11 leave.
        g.call(14, 10);
        assert!(g.open(14, 10));
        g.call(14, 11);
        assert!(g.open(14, 11));
        // The head due at 30: 14 < 30, redrawn to 18; the watchdog at 30
        // redraws to 34, when it leaves.
        g.call(14, 30);
        assert!(!g.open(14, 30));
        assert_eq!(g.wake_at(30), 30);
        g.call(30, 30);
        assert_eq!(g.wake_at(30), 34);
        g.call(34, 30);
        assert!(g.open(34, 30));
    }
}
