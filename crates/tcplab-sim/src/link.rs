//! One direction of a point-to-point link: output queue, serializer and
//! propagation (htsim's `Queue` + `Pipe`, `sim/queue.cpp`, `sim/pipe.cpp`).
//!
//! The serializer sends one packet at a time at the line rate. It is
//! scheduled only when it goes from idle to busy and when it finishes a
//! packet, never polled. A finished packet enters the delay model; with a
//! FIFO model it joins the `pipe` ring and only the ring's head has an
//! event in the event list.
//!
//! Serialization time is `ceil(wire_len · 8 · 10⁹ / rate_bps)` integer
//! nanoseconds: exact (no drift, no float) and rounded up so that a link
//! never exceeds its rate; the excess is under 1 ns per packet. For rates
//! that divide 8·10¹² (every "round" rate: 1 Mbit/s … 100 Gbit/s) the
//! picoseconds per byte are precomputed and the division is by a constant;
//! both paths give the same value.

use crate::config::{DirectionConfig, NodeId};
use crate::delay::DelaySampler;
use crate::fq::FqQdisc;
use crate::loss::LossSampler;
use crate::packet::PacketId;
use crate::police::Policer;
use crate::queue::DropTailQueue;
use crate::ready::ReadyQueue;
use crate::rng::{Component, Pcg32};
use crate::slot::SlotGate;
use std::collections::VecDeque;
use tcplab_core::time::Instant;

/// Line-rate serialization time.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Serializer {
    rate_bps: u64,
    /// `8·10¹² / rate_bps` when exact.
    ps_per_byte: Option<u64>,
}

impl Serializer {
    /// `rate_bps` must be positive (validated).
    pub fn new(rate_bps: u64) -> Self {
        let rate_bps = rate_bps.max(1);
        const PS_PER_BIT_AT_1BPS: u64 = 1_000_000_000_000;
        let q = 8 * PS_PER_BIT_AT_1BPS / rate_bps;
        let ps_per_byte = if q * rate_bps == 8 * PS_PER_BIT_AT_1BPS { Some(q) } else { None };
        Serializer { rate_bps, ps_per_byte }
    }

    /// Nanoseconds to put `wire_len` bytes on the wire.
    #[inline]
    pub fn tx_time_ns(&self, wire_len: u32) -> u64 {
        if let Some(ps) = self.ps_per_byte {
            if let Some(p) = (wire_len as u64).checked_mul(ps) {
                return p.div_ceil(1000);
            }
        }
        let bits_ns = wire_len as u128 * 8_000_000_000u128;
        bits_ns.div_ceil(self.rate_bps as u128) as u64
    }
}

/// Runtime state of one link direction.
#[derive(Debug)]
pub(crate) struct LinkDir {
    pub from: NodeId,
    pub to: NodeId,
    /// `from` is a host: this is that host's NIC queue, subject to
    /// transmit backpressure (see [`crate::host`]).
    pub host_nic: bool,
    /// `to` is a host: a packet arriving there has reached the end of
    /// its route (set by the simulator after `new`).
    pub to_host: bool,
    /// `to` is a host with GRO on (`gro.rs`).
    pub to_gro: bool,
    pub queue: DropTailQueue,
    /// The host's fq qdisc on this NIC, replacing `queue` (see `fq.rs`).
    pub fq: Option<Box<FqQdisc>>,
    /// Time of the earliest pending fq watchdog event (`u64::MAX`: none).
    pub watchdog_at: u64,
    pub ser: Serializer,
    /// The packet being serialized and when it started.
    pub in_service: Option<(PacketId, u32)>,
    pub tx_start: Instant,
    pub delay: DelaySampler,
    pub rng: Pcg32,
    pub loss: LossSampler,
    /// The policer in front of the queue, if any.
    pub police: Option<Policer>,
    /// FIFO pipe: `(arrival time ns, packet)`, arrival times non-decreasing.
    pub pipe: VecDeque<(u64, PacketId)>,
    /// netem's `slot` at the pipe's end, if any (`slot.rs`).
    pub slot: Option<SlotGate>,
    /// Connections waiting for room in this (host NIC) queue, served in
    /// FIFO order (`ready.rs`).
    pub ready: ReadyQueue,
    // Statistics.
    pub busy_ns: u64,
    pub tx_packets: u64,
    pub tx_bytes: u64,
    /// Packets the loss model dropped after serialization.
    pub loss_drops: u64,
}

/// A link direction's randomness, each part from the run's seed and the
/// direction's own key, so that adding a link changes no other link's
/// draws.
pub(crate) struct DirRandom {
    /// Delay draws (uniform, jitter, random walk).
    pub rng: Pcg32,
    /// Random and Gilbert-Elliott loss.
    pub loss_rng: Pcg32,
    /// The on-off chain's realization, shared with the kernel backend.
    pub on_off_seed: u64,
}

impl DirRandom {
    pub fn new(run_seed: u64, link: usize, reverse: bool) -> Self {
        DirRandom {
            rng: Pcg32::for_component(run_seed, Component::LinkDirection { link, reverse }),
            loss_rng: Pcg32::for_component(run_seed, Component::LinkLoss { link, reverse }),
            on_off_seed: crate::on_off::on_off_seed(run_seed, 2 * link + reverse as usize),
        }
    }
}

impl LinkDir {
    pub fn new(from: NodeId, to: NodeId, host_nic: bool, rate_bps: u64, cfg: &DirectionConfig, r: DirRandom) -> Self {
        LinkDir {
            from,
            to,
            host_nic,
            to_host: false,
            to_gro: false,
            queue: DropTailQueue::new(&cfg.queue),
            fq: None,
            watchdog_at: u64::MAX,
            ser: Serializer::new(rate_bps),
            in_service: None,
            tx_start: Instant::ZERO,
            delay: DelaySampler::new(&cfg.delay, r.on_off_seed),
            rng: r.rng,
            loss: LossSampler::new(cfg.loss, &cfg.blackouts, r.loss_rng),
            police: cfg.police.as_ref().map(Policer::new),
            pipe: VecDeque::with_capacity(64),
            slot: cfg.slot.map(|s| SlotGate::new(s.as_nanos())),
            ready: ReadyQueue::default(),
            busy_ns: 0,
            tx_packets: 0,
            tx_bytes: 0,
            loss_drops: 0,
        }
    }

    /// Packets and bytes waiting (not the packet being serialized), and
    /// the drops so far: of the fq qdisc on a host NIC with fq, else of
    /// the drop-tail queue.
    pub fn waiting(&self) -> (usize, u64, u64) {
        match self.fq.as_deref() {
            Some(q) => (q.len(), q.bytes(), q.drops),
            None => (self.queue.len(), self.queue.bytes(), self.queue.drops),
        }
    }

    /// Busy time up to `now`, counting the part of a packet in service.
    pub fn busy_until(&self, now: Instant) -> u64 {
        match self.in_service {
            Some(_) => self.busy_ns + (now - self.tx_start).as_nanos(),
            None => self.busy_ns,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_serialization_time_exact_and_rounded_up() {
        // 1500 B at 1 Gbit/s = 12 µs; at 10 Gbit/s = 1.2 µs.
        assert_eq!(Serializer::new(1_000_000_000).tx_time_ns(1500), 12_000);
        assert_eq!(Serializer::new(10_000_000_000).tx_time_ns(1500), 1_200);
        // 3 Gbit/s: 4000 ns exactly (no fixed-point overshoot).
        assert_eq!(Serializer::new(3_000_000_000).tx_time_ns(1500), 4_000);
        // 7 Gbit/s: 1500·8/7 = 1714.28… ns → 1715.
        assert_eq!(Serializer::new(7_000_000_000).tx_time_ns(1500), 1_715);
        // 52-byte ACK at 100 Gbit/s: 4.16 ns → 5.
        assert_eq!(Serializer::new(100_000_000_000).tx_time_ns(52), 5);
        // 1 bit/s, huge packet: no overflow.
        assert_eq!(Serializer::new(1).tx_time_ns(10_000_000), 80_000_000_000_000_000);
        assert_eq!(Serializer::new(3).tx_time_ns(10_000_000), 26_666_666_666_666_667);
    }
}
