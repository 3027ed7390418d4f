//! Virtual time: running the endpoint's timers forward and queueing
//! what it sends, with its send time.

use super::{fail, secs, us, Driver, Stop};
use crate::harness::Qdisc;
use tcplab_core::wire::SegmentRepr;
use tcplab_core::Instant;

impl Driver<'_> {
    /// Sends what the endpoint has to send now; finishes a blocking call
    /// that became possible.
    pub(super) fn after_input(&mut self) -> Result<(), Stop> {
        let now = Instant::from_nanos(self.now);
        self.pace_wake = None;
        for round in 0.. {
            let Some(conn) = self.conn.as_mut() else { return Ok(()) };
            let mut n = 0;
            let fq = self.harness.qdisc == Qdisc::Fq;
            loop {
                // fq: the next skb waits for its departure time (EDT);
                // the driver polls again then (pace_wake).
                if fq {
                    if let Some(w) = conn.paced_until(self.now) {
                        self.pace_wake = Some(w);
                        break;
                    }
                }
                let Some(seg) = conn.poll_transmit(now) else { break };
                self.outq.push_back((self.now, seg));
                n += 1;
                if n > 100_000 {
                    return fail(
                        self.cur_line,
                        format!("model error: poll_transmit never returned None at {} sec", secs(us(self.now))),
                    );
                }
            }
            if round > 0 || !self.progress_blocking() {
                break;
            }
        }
        Ok(())
    }

    /// Runs the endpoint's timers (and fq's pacing wake-ups) up to
    /// `target` ns.
    pub(super) fn advance_to(&mut self, target: u64) -> Result<(), Stop> {
        let mut storms = 0u32;
        let mut last = u64::MAX;
        while let Some(conn) = self.conn.as_ref() {
            let timer = conn.poll_timeout();
            let Some(d) = next_deadline(timer, self.pace_wake).filter(|d| d.as_nanos() <= target) else { break };
            let at = d.as_nanos().max(self.now);
            if at == last {
                storms += 1;
                if storms > 10_000 {
                    return fail(
                        self.cur_line,
                        format!(
                            "model error: poll_timeout() keeps returning {} sec after handle_timeout (timer not re-armed or cleared)",
                            secs(us(d.as_nanos()))
                        ),
                    );
                }
            } else {
                storms = 0;
                last = at;
            }
            self.now = at;
            if self.pace_wake.is_some_and(|w| w <= at) {
                // fq releases the held skb: poll the endpoint again.
                self.pace_wake = None;
                self.after_input()?;
            }
            if timer.is_some_and(|t| t.as_nanos() <= at) {
                if let Some(conn) = self.conn.as_mut() {
                    conn.handle_timeout(Instant::from_nanos(at));
                }
                self.after_input()?;
            }
        }
        self.now = self.now.max(target);
        Ok(())
    }

    /// The next segment the endpoint sends, running it forward to at most
    /// `deadline` ns.
    pub(super) fn next_outbound(&mut self, deadline: u64) -> Result<Option<(u64, SegmentRepr)>, Stop> {
        loop {
            if let Some((t, seg)) = self.outq.pop_front() {
                self.now = self.now.max(t);
                return Ok(Some((t, seg)));
            }
            let next = self
                .conn
                .as_ref()
                .and_then(|c| next_deadline(c.poll_timeout(), self.pace_wake))
                .map(|d| d.as_nanos().max(self.now));
            match next {
                Some(d) if d <= deadline => self.advance_to(d)?,
                _ => {
                    self.now = self.now.max(deadline);
                    return Ok(None);
                }
            }
        }
    }
}

/// The earlier of the endpoint's next timer and the fq pacing wake-up.
pub(super) fn next_deadline(timer: Option<Instant>, pace_wake: Option<u64>) -> Option<Instant> {
    match (timer, pace_wake) {
        (Some(t), Some(w)) => Some(if w < t.as_nanos() { Instant::from_nanos(w) } else { t }),
        (Some(t), None) => Some(t),
        (None, Some(w)) => Some(Instant::from_nanos(w)),
        (None, None) => None,
    }
}
