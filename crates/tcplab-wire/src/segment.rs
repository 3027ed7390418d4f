//! Typed TCP segment, as the TCP core sees it: header fields, options, the IP
//! ECN codepoint and a payload length. `Copy` and fixed-size, so a segment
//! travels through the simulator without allocation.

use crate::seq::SeqNum;
use core::fmt;

/// Most SACK blocks an option can carry (40 option bytes: 2 + 4·8 = 34).
/// Linux `TCP_NUM_SACKS`.
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP header flags, bit values as on the wire.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct TcpFlags(pub u8);

impl TcpFlags {
    pub const FIN: TcpFlags = TcpFlags(0x01);
    pub const SYN: TcpFlags = TcpFlags(0x02);
    pub const RST: TcpFlags = TcpFlags(0x04);
    pub const PSH: TcpFlags = TcpFlags(0x08);
    pub const ACK: TcpFlags = TcpFlags(0x10);
    pub const URG: TcpFlags = TcpFlags(0x20);
    pub const ECE: TcpFlags = TcpFlags(0x40);
    pub const CWR: TcpFlags = TcpFlags(0x80);

    #[inline]
    pub fn contains(self, other: TcpFlags) -> bool {
        self.0 & other.0 == other.0
    }
    #[inline]
    pub fn insert(&mut self, other: TcpFlags) {
        self.0 |= other.0;
    }
    #[inline]
    pub fn remove(&mut self, other: TcpFlags) {
        self.0 &= !other.0;
    }
    #[inline]
    pub fn syn(self) -> bool {
        self.contains(Self::SYN)
    }
    #[inline]
    pub fn fin(self) -> bool {
        self.contains(Self::FIN)
    }
    #[inline]
    pub fn rst(self) -> bool {
        self.contains(Self::RST)
    }
    #[inline]
    pub fn ack(self) -> bool {
        self.contains(Self::ACK)
    }
    #[inline]
    pub fn ece(self) -> bool {
        self.contains(Self::ECE)
    }
    #[inline]
    pub fn cwr(self) -> bool {
        self.contains(Self::CWR)
    }
}

impl core::ops::BitOr for TcpFlags {
    type Output = TcpFlags;
    fn bitor(self, rhs: TcpFlags) -> TcpFlags {
        TcpFlags(self.0 | rhs.0)
    }
}

impl fmt::Debug for TcpFlags {
    /// packetdrill / tcpdump letters: `S.` for SYN-ACK, `P.` for PSH-ACK.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const LETTERS: [(TcpFlags, char); 7] = [
            (TcpFlags::SYN, 'S'),
            (TcpFlags::FIN, 'F'),
            (TcpFlags::RST, 'R'),
            (TcpFlags::PSH, 'P'),
            (TcpFlags::URG, 'U'),
            (TcpFlags::ECE, 'E'),
            (TcpFlags::CWR, 'W'),
        ];
        for (flag, c) in LETTERS {
            if self.contains(flag) {
                write!(f, "{c}")?;
            }
        }
        if self.ack() {
            write!(f, ".")?;
        }
        Ok(())
    }
}

/// The two ECN bits of the IP header (RFC 3168).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum Ecn {
    #[default]
    NotEct = 0,
    Ect1 = 1,
    Ect0 = 2,
    Ce = 3,
}

impl Ecn {
    /// ECN-capable transport (ECT(0), ECT(1) or already CE).
    #[inline]
    pub fn is_ect(self) -> bool {
        self != Ecn::NotEct
    }
}

/// One SACK block `[start, end)`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct SackBlock {
    pub start: SeqNum,
    pub end: SeqNum,
}

/// TCP options that Linux's congestion control and loss recovery care about.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct TcpOptions {
    /// MSS option (SYN only).
    pub mss: Option<u16>,
    /// Window-scale shift (SYN only).
    pub wscale: Option<u8>,
    /// SACK-permitted (SYN only).
    pub sack_permitted: bool,
    /// Timestamps: (TSval, TSecr).
    pub timestamp: Option<(u32, u32)>,
    /// SACK blocks; only the first `sack_len` are meaningful.
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
    pub sack_len: u8,
}

impl TcpOptions {
    /// The SACK blocks carried.
    #[inline]
    pub fn sack_blocks(&self) -> &[SackBlock] {
        &self.sack[..(self.sack_len as usize).min(MAX_SACK_BLOCKS)]
    }

    /// Appends a SACK block; returns `false` when the option is full.
    pub fn push_sack(&mut self, block: SackBlock) -> bool {
        let n = self.sack_len as usize;
        if n >= MAX_SACK_BLOCKS {
            return false;
        }
        self.sack[n] = block;
        self.sack_len += 1;
        true
    }

    /// Option bytes on the wire, with Linux's padding (NOPs before
    /// timestamps and SACK), as `tcp_options_write` lays them out.
    #[inline]
    pub fn wire_len(&self) -> usize {
        let mut len = 0;
        if self.mss.is_some() {
            len += 4;
        }
        if self.timestamp.is_some() {
            // SACK-permitted shares the timestamp's leading NOPs.
            len += 12;
        } else if self.sack_permitted {
            len += 4;
        }
        if self.wscale.is_some() {
            len += 4;
        }
        if self.sack_len > 0 {
            len += 4 + 8 * self.sack_blocks().len();
        }
        len
    }
}

/// One TCP segment as the TCP core produces and consumes it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct SegmentRepr {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: TcpFlags,
    /// The raw 16-bit window field (scaled by the peer's shift unless SYN).
    pub window: u16,
    pub options: TcpOptions,
    /// ECN codepoint of the IP header carrying this segment.
    pub ecn: Ecn,
    /// Payload bytes (virtual).
    pub payload_len: u32,
}

impl SegmentRepr {
    /// Sequence space consumed: payload plus one each for SYN and FIN.
    #[inline]
    pub fn seq_len(&self) -> u32 {
        self.payload_len + self.flags.syn() as u32 + self.flags.fin() as u32
    }

    /// `seq + seq_len()`.
    #[inline]
    pub fn end_seq(&self) -> SeqNum {
        self.seq + self.seq_len()
    }

    /// Bytes of IPv4 + TCP header for this segment (no IP options).
    #[inline]
    pub fn header_len(&self) -> u32 {
        20 + 20 + self.options.wire_len() as u32
    }

    /// Bytes of the whole IP packet.
    #[inline]
    pub fn wire_len(&self) -> u32 {
        self.header_len() + self.payload_len
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_flags_debug_like_packetdrill() {
        assert_eq!(format!("{:?}", TcpFlags::SYN | TcpFlags::ACK), "S.");
        assert_eq!(format!("{:?}", TcpFlags::PSH | TcpFlags::ACK), "P.");
        assert_eq!(format!("{:?}", TcpFlags::ACK), ".");
    }

    #[test]
    fn test_option_len_matches_linux_layout() {
        let mut o = TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            timestamp: Some((1, 0)),
            wscale: Some(7),
            ..Default::default()
        };
        // Linux SYN: mss(4) + sackOK,TS(12) + nop,wscale(4) = 20.
        assert_eq!(o.wire_len(), 20);
        o.mss = None;
        o.wscale = None;
        o.sack_permitted = false;
        o.push_sack(SackBlock { start: SeqNum(1), end: SeqNum(2) });
        assert_eq!(o.wire_len(), 12 + 12);
    }

    #[test]
    fn test_seq_len_counts_syn_and_fin() {
        let s =
            SegmentRepr { flags: TcpFlags::SYN | TcpFlags::FIN, payload_len: 10, seq: SeqNum(5), ..Default::default() };
        assert_eq!(s.seq_len(), 12);
        assert_eq!(s.end_seq(), SeqNum(17));
    }
}
