//! Undo of spurious cwnd reductions (RFC 2883 D-SACK, RFC 3522 Eifel
//! detection by timestamps, RFC 5682 F-RTO): what a reduction must
//! remember so that `tcp_try_undo_*` (tcp_input.c) can tell it was
//! unnecessary and put cwnd and ssthresh back.
//!
//! The evidence is gathered on three paths: `tcp_retransmit_skb` counts
//! undoable retransmissions (output.rs), `tcp_sacktag_write_queue` takes
//! one back per D-SACKed retransmission (input.rs), and an ACK echoing a
//! timestamp from before the first retransmission proves the original
//! was only delayed. The decisions themselves stay in the state machine
//! (recovery.rs).

use tcplab_wire::SeqNum;

/// The undo fields of `struct tcp_sock` (include/linux/tcp.h).
#[derive(Clone, Debug, Default)]
pub(super) struct Undo {
    /// `tp->undo_marker`: `snd_una` when the reduction began; `None` where
    /// Linux has 0 (nothing to undo).
    pub undo_marker: Option<SeqNum>,
    /// `tp->undo_retrans`: retransmissions not yet shown spurious; −1
    /// "none yet", 0 "every one was D-SACKed" (undo now).
    pub undo_retrans: i32,
    /// `tp->prior_ssthresh`: ssthresh to restore; 0 forbids undo (ECE
    /// made the reduction mandatory).
    pub prior_ssthresh: u32,
    /// `tp->retrans_stamp`: TCP timestamp of the first retransmission of
    /// the episode; 0 = none. `TCP_USER_TIMEOUT` measures from it too.
    pub retrans_stamp: u32,
}

impl Undo {
    /// `tcp_init_undo`: the evidence starts at `snd_una`. Retransmissions
    /// still in flight, including a TLP retransmission, may be D-SACKed
    /// later; 0 would mean "can undo now", so none is −1.
    pub(super) fn init(&mut self, snd_una: SeqNum, retrans_out: u32, tlp_retrans_outstanding: bool) {
        self.undo_marker = Some(snd_una);
        self.undo_retrans = retrans_out as i32;
        if tlp_retrans_outstanding {
            self.undo_retrans += 1;
        }
        if self.undo_retrans == 0 {
            self.undo_retrans = -1;
        }
    }

    /// `tcp_retransmit_skb` (also when the transmission failed locally): the
    /// first retransmission stamps `retrans_stamp`; each one is undoable.
    pub(super) fn retransmitted(&mut self, ts_now: u32) {
        if self.retrans_stamp == 0 {
            self.retrans_stamp = ts_now;
        }
        if self.undo_retrans < 0 {
            self.undo_retrans = 0;
        }
        self.undo_retrans += 1;
    }

    /// `tcp_sacktag_one`: a D-SACK for a retransmitted segment ending at
    /// `end_seq` shows one retransmission was spurious.
    pub(super) fn dsack_retrans(&mut self, end_seq: SeqNum) {
        if let Some(undo) = self.undo_marker {
            if self.undo_retrans > 0 && end_seq.after(undo) {
                self.undo_retrans -= 1;
            }
        }
    }

    /// `tcp_check_dsack`: a D-SACK of `dup_segs` segments of data below
    /// `prior_snd_una` (and above `undo_marker`), ending at `end_seq`.
    pub(super) fn dsack_below_una(&mut self, end_seq: SeqNum, prior_snd_una: SeqNum, dup_segs: u32) {
        if let Some(undo) = self.undo_marker {
            if self.undo_retrans > 0 && end_seq.before_eq(prior_snd_una) && end_seq.after(undo) {
                self.undo_retrans = (self.undo_retrans - dup_segs as i32).max(0);
            }
        }
    }

    /// `tcp_packet_delayed`: the ACK echoes (`rcv_tsecr`) a timestamp from
    /// before the first retransmission, or nothing was retransmitted
    /// (except in SYN-SENT, where `retrans_stamp` was cleared by the
    /// SYN-ACK even if the SYN was retransmitted).
    pub(super) fn packet_delayed(&self, rcv_tsecr: Option<u32>, syn_sent: bool) -> bool {
        if self.retrans_stamp != 0 {
            if let Some(ecr) = rcv_tsecr.filter(|e| *e != 0) {
                if (ecr.wrapping_sub(self.retrans_stamp) as i32) < 0 {
                    return true;
                }
            }
            return false;
        }
        !syn_sent
    }

    /// `tcp_may_undo`: a reduction is in progress and either every
    /// retransmission was D-SACKed or the packet was only delayed.
    pub(super) fn may_undo(&self, rcv_tsecr: Option<u32>, syn_sent: bool) -> bool {
        self.undo_marker.is_some() && (self.undo_retrans == 0 || self.packet_delayed(rcv_tsecr, syn_sent))
    }
}
