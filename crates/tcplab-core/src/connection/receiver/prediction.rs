//! Header prediction (net/ipv4/tcp_input.c `tcp_rcv_established`, Van
//! Jacobson's "30 instruction TCP receive"): `tp->pred_flags` holds the
//! header an in-order segment of a quiet connection is expected to carry,
//! and a segment that matches it skips the slow path's checks.
//!
//! The model takes the fast path for pure ACKs only. Linux takes it for
//! in-order data too, but only while the socket's forward allocation
//! (`sk_forward_alloc`) covers the skb's truesize; a reader that drains
//! the queue as data arrives hands back every page (`sk_mem_reclaim`), so
//! each data segment goes to `step5`: `tcp_ack` with `FLAG_SLOWPATH`, as
//! the slow path runs it (the kernel backend counts `TCPHPHits` 0 on the
//! bulk dumbbell, docs/linux-differences.md). The model does not track
//! `sk_forward_alloc` and always runs data segments as `step5` does.

use tcplab_wire::{SegmentRepr, TcpFlags};

/// `TCP_HP_BITS`'s flag part: every flag but PSH (the reserved bits are
/// not modelled).
const HP_FLAGS: u8 = !TcpFlags::PSH.0;

/// `tp->pred_flags`: 0 (off), or the data offset, flags and window field
/// of the expected segment, laid out as `tcp_flag_word` is (offset in the
/// top 4 bits, flags in bits 16–23, window in the low 16).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct HeaderPrediction {
    pred_flags: u32,
}

impl HeaderPrediction {
    /// `__tcp_fast_path_on`: expect ACK-only segments with our usual
    /// header (`tcp_header_len`: 20 bytes, 32 with timestamps) and the
    /// window field `snd_wnd_field` (`snd_wnd >> snd_wscale`).
    pub(crate) fn on(&mut self, tstamp_ok: bool, snd_wnd_field: u16) {
        self.pred_flags = word(header_len(tstamp_ok), TcpFlags::ACK.0, snd_wnd_field);
    }

    /// `tp->pred_flags = 0`: every segment takes the slow path.
    pub(crate) fn off(&mut self) {
        self.pred_flags = 0;
    }

    /// `(tcp_flag_word(th) & TCP_HP_BITS) == tp->pred_flags`: the segment's
    /// header is the predicted one (so it carries no SACK blocks, and the
    /// timestamp option if and only if timestamps were negotiated).
    #[inline]
    pub(crate) fn matches(&self, seg: &SegmentRepr) -> bool {
        let len = 20 + seg.options.wire_len() as u32;
        self.pred_flags != 0 && word(len, seg.flags.0 & HP_FLAGS, seg.window) == self.pred_flags
    }
}

/// `tp->tcp_header_len`: the header of every segment after the handshake.
fn header_len(tstamp_ok: bool) -> u32 {
    20 + if tstamp_ok { 12 } else { 0 }
}

fn word(header_len: u32, flags: u8, window: u16) -> u32 {
    (header_len / 4) << 28 | (flags as u32) << 16 | window as u32
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_wire::{SeqNum, TcpOptions};

    fn ack(window: u16, ts: bool) -> SegmentRepr {
        SegmentRepr {
            seq: SeqNum(1),
            ack: SeqNum(1001),
            flags: TcpFlags::ACK,
            window,
            options: TcpOptions { timestamp: ts.then_some((7, 5)), ..Default::default() },
            ..Default::default()
        }
    }

    #[test]
    fn test_prediction_matches_the_expected_ack_only() {
        let mut p = HeaderPrediction::default();
        assert!(!p.matches(&ack(100, true)), "off until turned on");
        p.on(true, 100);
        assert!(p.matches(&ack(100, true)));
        // PSH is ignored; any other flag, another window, a missing
        // timestamp or SACK blocks miss.
        let psh = SegmentRepr { flags: TcpFlags::ACK | TcpFlags::PSH, ..ack(100, true) };
        assert!(p.matches(&psh));
        let ece = SegmentRepr { flags: TcpFlags::ACK | TcpFlags::ECE, ..ack(100, true) };
        assert!(!p.matches(&ece));
        assert!(!p.matches(&ack(101, true)));
        assert!(!p.matches(&ack(100, false)));
        let mut sack = ack(100, true);
        sack.options.sack_len = 1;
        assert!(!p.matches(&sack));
        p.off();
        assert!(!p.matches(&ack(100, true)));
        p.on(false, 100);
        assert!(p.matches(&ack(100, false)) && !p.matches(&ack(100, true)));
    }
}
