//! SACK and D-SACK generation on the receive side (`tcp_dsack_set`,
//! `tcp_sack_new_ofo_skb`, `tcp_sack_maybe_coalesce`, `tcp_sack_remove`).
//! Split from receiver.rs; same `Receiver`.

use super::*;

impl Receiver {
    // ------------------------------------------------------------------
    // SACK and D-SACK generation
    // ------------------------------------------------------------------

    /// `tcp_dsack_set`: report duplicate data `[seq, end)` in the next ACK
    /// (RFC 2883), counting `TCPDSACKOldSent` (below `rcv_nxt`) or
    /// `TCPDSACKOfoSent`.
    pub(super) fn dsack_set(&mut self, seq: SeqNum, end: SeqNum, mib: &mut Counters) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_dsack_set
        if self.sack_ok && self.cfg_dsack {
            if seq.before(self.rcv_nxt) {
                mib.inc(Mib::TcpExtTCPDSACKOldSent);
            } else {
                mib.inc(Mib::TcpExtTCPDSACKOfoSent);
            }
            self.duplicate_sack = Some(SackBlock { start: seq, end });
            self.dsack_this_seg = true;
        }
    }

    /// `tcp_dsack_extend`: widen the pending D-SACK if it touches
    /// `[seq, end)`, or set one if none is pending.
    pub(super) fn dsack_extend(&mut self, seq: SeqNum, end: SeqNum, mib: &mut Counters) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_dsack_extend
        match self.duplicate_sack.as_mut() {
            None => self.dsack_set(seq, end, mib),
            Some(d) => {
                sack_extend(d, seq, end);
            }
        }
    }

    /// `tcp_sack_new_ofo_skb`: record `[seq, end)` as the most recent SACK
    /// block, merging it into a block it touches (moved to the front) or
    /// pushing a new block in front and forgetting the oldest of four.
    pub(super) fn sack_new_ofo_skb(
        &mut self,
        seq: SeqNum,
        end: SeqNum,
        timers: &mut TimerTable,
        mib: &mut Counters,
        out: &mut RcvOutcome,
    ) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_sack_new_ofo_skb
        let cur = (self.num_sacks as usize).min(TCP_NUM_SACKS);
        if cur == 0 {
            self.selective_acks[0] = SackBlock { start: seq, end };
            self.num_sacks = 1;
            return;
        }
        for i in 0..cur {
            if sack_extend(&mut self.selective_acks[i], seq, end) {
                if i >= TCP_SACK_BLOCKS_EXPECTED {
                    self.sack_compress_send_ack(timers, mib, out);
                }
                // "Rotate this_sack to the first one."
                self.selective_acks[..=i].rotate_right(1);
                if cur > 1 {
                    self.sack_maybe_coalesce();
                }
                return;
            }
        }
        if cur >= TCP_SACK_BLOCKS_EXPECTED {
            self.sack_compress_send_ack(timers, mib, out);
        }
        // "If the sack array is full, forget about the last one."
        let keep = cur.min(TCP_NUM_SACKS - 1);
        self.selective_acks.copy_within(0..keep, 1);
        self.selective_acks[0] = SackBlock { start: seq, end };
        self.num_sacks = (keep + 1) as u8;
    }

    /// `tcp_sack_maybe_coalesce`: "See if the recent change to the first
    /// SACK eats into or hits the sequence space of other SACK blocks".
    pub(super) fn sack_maybe_coalesce(&mut self) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_sack_maybe_coalesce
        let mut n = (self.num_sacks as usize).min(TCP_NUM_SACKS);
        let mut i = 1;
        while i < n {
            let b = self.selective_acks[i];
            if sack_extend(&mut self.selective_acks[0], b.start, b.end) {
                self.selective_acks.copy_within(i + 1..n, i);
                n -= 1;
                continue;
            }
            i += 1;
        }
        self.num_sacks = n as u8;
    }

    /// `tcp_sack_remove`: "RCV.NXT advances, some SACKs should be eaten."
    pub(super) fn sack_remove(&mut self) {
        //= linux:v6.13:net/ipv4/tcp_input.c#tcp_sack_remove
        if self.ofo.is_empty() {
            self.num_sacks = 0;
            return;
        }
        let mut n = (self.num_sacks as usize).min(TCP_NUM_SACKS);
        let mut i = 0;
        while i < n {
            if !self.rcv_nxt.before(self.selective_acks[i].start) {
                self.selective_acks.copy_within(i + 1..n, i);
                n -= 1;
                continue;
            }
            i += 1;
        }
        self.num_sacks = n as u8;
    }

    /// `tcp_sack_reset`.
    pub(super) fn sack_reset(&mut self) {
        //= linux:v6.13:include/net/tcp.h#tcp_sack_reset
        self.duplicate_sack = None;
        self.num_sacks = 0;
    }
}
