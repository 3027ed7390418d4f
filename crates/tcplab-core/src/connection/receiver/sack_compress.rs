//! SACK compression (≥ v4.18, "tcp: add SACK compression"): while data
//! keeps arriving beyond a hole, the dup-ACKs after the first
//! `TCP_FASTRETRANS_THRESH` per `rcv_nxt` are held for min(1 ms, 5 % of
//! the RTT) and leave as one ACK, so a receiver does not answer a burst of
//! out-of-order segments with a burst of ACKs (tcp_input.c the end of
//! `__tcp_ack_snd_check`, `tcp_sack_compress_send_ack`; tcp_timer.c
//! `tcp_compressed_ack_kick`; tcp_output.c `tcp_event_ack_sent`).
//!
//! The hrtimer's deadline lives in the connection's [`TimerTable`]
//! (`Timer::CompressedAck`); it is armed only while ACKs are held.

use super::sack::{SackSnapshot, SackState};
use super::{mib_add, AckDecision, RcvKnobs};
use crate::connection::timer::{Timer, TimerTable};
use crate::counters::{Counters, Mib};
use crate::time::{Duration, Instant};
use tcplab_wire::{SegmentRepr, SeqNum};

/// `TCP_FASTRETRANS_THRESH`: dup-ACKs sent before SACK compression starts.
const TCP_FASTRETRANS_THRESH: u32 = 3;

/// `tp->compressed_ack` and its companions (`tp->compressed_ack_rcv_nxt`,
/// `tp->dup_ack_counter`), plus the SACK option of an ACK flushed from
/// the middle of segment processing.
#[derive(Clone, Debug)]
pub(super) struct SackCompress {
    /// `tp->compressed_ack`: ACKs held back.
    compressed_ack: u32,
    /// `tp->compressed_ack_rcv_nxt`: `rcv_nxt` the dup-ACK count is for.
    compressed_ack_rcv_nxt: SeqNum,
    /// `tp->dup_ack_counter`.
    dup_ack_counter: u32,
    /// SACK option of an ACK owed from mid-processing.
    preflush: Option<SackSnapshot>,
}

impl SackCompress {
    pub(super) fn new() -> SackCompress {
        SackCompress { compressed_ack: 0, compressed_ack_rcv_nxt: SeqNum(0), dup_ack_counter: 0, preflush: None }
    }

    /// The out-of-order branch of `__tcp_ack_snd_check` on a SACK
    /// connection: the first three dup-ACKs per `rcv_nxt` go at once, later
    /// ones wait for the compression timer — "compress ack timer : 5 % of
    /// rtt, but no more than tcp_comp_sack_delay_ns". `rcv_rtt8` is the
    /// receiver's RTT estimate (µs << 3), `srtt_us` the sender's (unscaled);
    /// the smaller known one counts.
    pub(super) fn ack_snd_check(
        &mut self,
        now: Instant,
        rcv_nxt: SeqNum,
        rcv_rtt8: u32,
        srtt_us: u32,
        knobs: &RcvKnobs,
        timers: &mut TimerTable,
    ) -> AckDecision {
        //= linux:v6.13:net/ipv4/tcp_input.c#__tcp_ack_snd_check
        if knobs.comp_sack_nr == 0 || self.compressed_ack >= knobs.comp_sack_nr {
            return AckDecision::Now;
        }
        if self.compressed_ack_rcv_nxt != rcv_nxt {
            self.compressed_ack_rcv_nxt = rcv_nxt;
            self.dup_ack_counter = 0;
        }
        if self.dup_ack_counter < TCP_FASTRETRANS_THRESH {
            self.dup_ack_counter += 1;
            return AckDecision::Now;
        }
        self.compressed_ack += 1;
        if timers.is_set(Timer::CompressedAck) {
            return AckDecision::Delayed;
        }
        let mut rtt8 = rcv_rtt8 as u64;
        let srtt8 = (srtt_us as u64) << 3;
        if srtt8 != 0 && srtt8 < rtt8 {
            rtt8 = srtt8;
        }
        let delay_ns = knobs.comp_sack_delay_ns.min(rtt8 * (1000 >> 3) / 20);
        timers.set(Timer::CompressedAck, now + Duration::from_nanos(delay_ns));
        AckDecision::Delayed
    }

    /// `tcp_compressed_ack_kick`: the compression delay is over; send one
    /// ACK standing for the held ones. `true` = send now.
    pub(super) fn on_timer(&mut self, now: Instant, timers: &mut TimerTable) -> bool {
        //= linux:v6.13:net/ipv4/tcp_timer.c#tcp_compressed_ack_kick
        match timers.get(Timer::CompressedAck) {
            Some(d) if d <= now => {}
            _ => return false,
        }
        timers.stop(Timer::CompressedAck);
        if self.compressed_ack > 0 {
            // "Since we have to send one ack finally, subtract one from
            // tp->compressed_ack to keep LINUX_MIB_TCPACKCOMPRESSED accurate."
            self.compressed_ack -= 1;
            return true;
        }
        false
    }

    /// `tcp_sack_compress_send_ack`, called where a SACK block is about to
    /// move past the first two: flush the held ACKs now, with the SACK
    /// option as it stands (`sack`, whose D-SACK this consumes). `true` =
    /// send an ACK now.
    pub(super) fn send_ack(
        &mut self,
        sack: &mut SackState,
        timers: &mut TimerTable,
        mib: &mut Counters,
        ack_compressed: Option<Mib>,
    ) -> bool {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_sack_compress_send_ack
        if self.compressed_ack == 0 {
            return false;
        }
        timers.stop(Timer::CompressedAck);
        mib_add(mib, ack_compressed, (self.compressed_ack - 1) as u64);
        self.compressed_ack = 0;
        self.preflush = Some(SackSnapshot::take(sack));
        true
    }

    /// The first half of `tcp_event_ack_sent`: an ACK left, so the held
    /// ones are accounted (`TCPAckCompressed`) and the timer cancelled.
    pub(super) fn on_ack_sent(&mut self, timers: &mut TimerTable, mib: &mut Counters, ack_compressed: Option<Mib>) {
        //= linux:v6.13:net/ipv4/tcp_output.c#tcp_event_ack_sent
        if self.compressed_ack > 0 {
            mib_add(mib, ack_compressed, self.compressed_ack as u64);
            self.compressed_ack = 0;
            timers.stop(Timer::CompressedAck);
        }
    }

    /// Writes the SACK option frozen by [`send_ack`](Self::send_ack) into
    /// the ACK it owes, if there is one; `false` = none was frozen.
    pub(super) fn write_preflush(&mut self, seg: &mut SegmentRepr, room: usize) -> bool {
        match self.preflush.take() {
            Some(snap) => {
                snap.write_option(seg, room);
                true
            }
            None => false,
        }
    }
}
