//! GRO at a receiving host (net/core/gro.c `dev_gro_receive`,
//! net/ipv4/tcp_offload.c `tcp_gro_receive`): within one NAPI poll,
//! consecutive full-sized segments of a flow with identical headers are
//! merged into one skb, so TCP sees one segment of many MSS and answers
//! it with one ACK (a stretch ACK).
//!
//! A poll here is what a link direction releases at one instant: a slot
//! of its delay (`slot.rs`), at most [`NAPI_POLL_WEIGHT`] packets, after
//! which everything held is flushed (`napi_complete_done`, and
//! `__napi_poll` with HZ < 1000). A packet that arrives on its own is its
//! own poll, so without a slot nothing merges, as on the kernel backend's
//! veths, where each packet netem releases is its own softirq.
//!
//! Not modelled: the bound of 8 held skbs per hash bucket
//! (`MAX_GRO_SKBS`), which matters only with more flows than that in one
//! poll, and the IP ID check (one sender's IDs increase by one).

use crate::packet::PacketId;
use tcplab_wire::{SegmentRepr, TcpFlags};

/// `NAPI_POLL_WEIGHT`: packets one poll takes before it flushes GRO.
pub(crate) const NAPI_POLL_WEIGHT: usize = 64;

/// `GRO_LEGACY_MAX_SIZE` (the default `gro_max_size`): a merged skb stays
/// below 64 KiB, IP and TCP headers included.
const GRO_MAX_SIZE: u32 = 65_536;

/// A flow's skb held for merging (`napi->gro_hash`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Held {
    /// The flow's direction: the sending connection, ports.
    pub key: (u32, u16, u16),
    /// The first packet; its segment grows as others merge into it.
    pub id: PacketId,
    /// `gso_size`: the first segment's payload.
    pub gso_size: u32,
    /// `NAPI_GRO_CB(p)->count`.
    pub count: u32,
}

impl Held {
    /// `gso_size` as TCP sees it: `napi_gro_complete` clears it on an skb
    /// that nothing merged into.
    pub fn delivered_gso_size(&self) -> u32 {
        if self.count > 1 {
            self.gso_size
        } else {
            0
        }
    }
}

/// `tcp_gro_receive`'s test of a segment against the held skb `held`
/// (whose first segment set `gso_size`): headers alike, contiguous, no
/// longer than `gso_size`, and room left below [`GRO_MAX_SIZE`]
/// (`skb_gro_receive`). The window field is not compared.
pub(crate) fn can_merge(held: &SegmentRepr, gso_size: u32, seg: &SegmentRepr) -> bool {
    const IGNORED: u8 = TcpFlags::CWR.0 | TcpFlags::FIN.0 | TcpFlags::PSH.0;
    let o = (&held.options, &seg.options);
    !seg.flags.cwr()
        && (seg.flags.0 ^ held.flags.0) & !IGNORED == 0
        && seg.ack == held.ack
        // The option words: timestamps (TSval too), SACK blocks.
        && o.0.timestamp == o.1.timestamp
        && o.0.sack_blocks() == o.1.sack_blocks()
        && (o.0.mss, o.0.wscale, o.0.sack_permitted) == (o.1.mss, o.1.wscale, o.1.sack_permitted)
        // inet_gro_receive: the TOS byte, ECN bits included.
        && seg.ecn == held.ecn
        && seg.payload_len.wrapping_sub(1) < gso_size
        && held.seq + held.payload_len == seg.seq
        && held.header_len() + held.payload_len + seg.payload_len < GRO_MAX_SIZE
}

/// `out_check_final`: a segment shorter than `mss` (1 when nothing is
/// held, so only an empty one), or one with PSH, URG, RST, SYN or FIN,
/// ends its flow's skb at once.
pub(crate) fn ends_skb(seg: &SegmentRepr, mss: u32) -> bool {
    const FINAL: u8 = TcpFlags::URG.0 | TcpFlags::PSH.0 | TcpFlags::RST.0 | TcpFlags::SYN.0 | TcpFlags::FIN.0;
    seg.payload_len < mss || seg.flags.0 & FINAL != 0
}

/// Merges `seg` into the held segment (`skb_gro_receive`; "tcp_flag_word(th2)
/// |= flags & (TCP_FLAG_FIN | TCP_FLAG_PSH)").
pub(crate) fn merge(held: &mut SegmentRepr, seg: &SegmentRepr) {
    held.payload_len += seg.payload_len;
    held.flags.insert(TcpFlags(seg.flags.0 & (TcpFlags::FIN.0 | TcpFlags::PSH.0)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use tcplab_wire::{Ecn, SeqNum};

    fn data(seq: u32, len: u32) -> SegmentRepr {
        let mut s = SegmentRepr {
            seq: SeqNum(seq),
            ack: SeqNum(1),
            flags: TcpFlags::ACK,
            payload_len: len,
            ecn: Ecn::Ect0,
            ..Default::default()
        };
        s.options.timestamp = Some((100, 50));
        s
    }

    #[test]
    fn test_contiguous_full_segments_with_equal_headers_merge() {
        let mut held = data(1000, 1448);
        assert!(can_merge(&held, 1448, &data(2448, 1448)));
        merge(&mut held, &data(2448, 1448));
        assert_eq!(held.payload_len, 2896);
        assert!(can_merge(&held, 1448, &data(3896, 1448)));
        // A shorter segment merges and then ends the skb.
        assert!(can_merge(&held, 1448, &data(3896, 500)));
        assert!(ends_skb(&data(3896, 500), 1448));
        assert!(!ends_skb(&data(3896, 1448), 1448));
    }

    #[test]
    fn test_any_header_difference_or_gap_flushes() {
        let held = data(1000, 1448);
        let next = || data(2448, 1448);
        let mut s = next();
        s.options.timestamp = Some((101, 50));
        assert!(!can_merge(&held, 1448, &s), "a new TSval");
        let mut s = next();
        s.ack = SeqNum(2);
        assert!(!can_merge(&held, 1448, &s), "a new ACK number");
        let mut s = next();
        s.ecn = Ecn::Ce;
        assert!(!can_merge(&held, 1448, &s), "a CE mark");
        let mut s = next();
        s.flags.insert(TcpFlags::CWR);
        assert!(!can_merge(&held, 1448, &s), "CWR");
        assert!(!can_merge(&held, 1448, &data(2449, 1448)), "a gap");
        assert!(!can_merge(&held, 1448, &data(2448, 1449)), "longer than gso_size");
        assert!(!can_merge(&held, 1448, &data(2448, 0)), "a pure ACK");
        let mut s = next();
        s.window = 7;
        assert!(can_merge(&held, 1448, &s), "the window is not compared");
        let mut s = next();
        s.flags.insert(TcpFlags::PSH);
        assert!(can_merge(&held, 1448, &s) && ends_skb(&s, 1448), "PSH merges and ends the skb");
    }

    #[test]
    fn test_a_merged_skb_stays_below_64_kib() {
        // 52 header bytes (20 IP, 32 TCP with timestamps): 45 segments of
        // 1448 make 65,212 bytes, a 46th would make 66,660.
        let mut held = data(0, 1448);
        let mut n = 1;
        while can_merge(&held, 1448, &data(held.payload_len, 1448)) {
            let s = data(held.payload_len, 1448);
            merge(&mut held, &s);
            n += 1;
        }
        assert_eq!(n, 45);
    }
}
