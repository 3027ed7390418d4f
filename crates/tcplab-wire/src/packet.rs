//! IPv4 + TCP packets on the wire: emit the headers of a [`SegmentRepr`]
//! sent between two IPv4 addresses, and parse them back.
//!
//! This is what a pcap writer needs: real headers that tcpdump, tshark and
//! Wireshark decode, from the simulator's virtual segments. The payload is
//! virtual (a length), so the bytes after the headers are taken to be zero:
//! [`PacketRepr::emit_headers`] computes the TCP checksum over a zero-filled
//! payload of `seg.payload_len` bytes, and a capture may either append those
//! zeros or cut the packet after the headers (a snap length), as tcpdump
//! `-s` does; the IP total length always counts the whole payload.
//!
//! # Layout
//!
//! - IPv4: version 4, IHL 5 (no IP options), DSCP 0 with the segment's ECN
//!   codepoint in the low two bits of the TOS byte, total length, the
//!   identification [`PacketRepr::ident`], DF set (Linux sets DF on TCP
//!   when path-MTU discovery is on, the default), TTL [`PacketRepr::ttl`],
//!   protocol 6, header checksum.
//! - TCP: ports, seq, ack, data offset, the eight flag bits (CWR and ECE
//!   included), the raw window field, checksum, urgent pointer 0, then
//!   the options in the order and padding of Linux's `tcp_options_write`
//!   (net/ipv4/tcp_output.c): MSS; SACK-permitted + timestamps (or NOP,
//!   NOP + timestamps; or NOP, NOP + SACK-permitted); NOP + window scale;
//!   NOP, NOP + SACK blocks. Their length is [`TcpOptions::wire_len`].
//!
//! # Contract
//!
//! Neither function panics on any input. [`PacketRepr::parse`] checks every
//! length before reading (smoltcp's `new_checked` discipline, src/wire/mod.rs)
//! and returns a [`ParseError`] for anything that is not a well-formed,
//! unfragmented IPv4 packet carrying a TCP header. It accepts a capture cut
//! after the headers (the payload length then comes from the IP total
//! length, and the TCP checksum is reported as unverifiable).
//! [`PacketRepr::emit_headers`] returns an [`EmitError`] when the options
//! do not fit in the 40 bytes TCP allows (Linux never sends more than three
//! SACK blocks with timestamps; see [`trim_sack_blocks`]), when the packet
//! would exceed 65535 bytes, or when the buffer is too short.
//!
//! Round trip: for a segment whose unused SACK slots are zero (as
//! [`TcpOptions::push_sack`] leaves them), `parse(emit(p)) == p`.

use crate::segment::{Ecn, SackBlock, SegmentRepr, TcpFlags, TcpOptions, MAX_SACK_BLOCKS};
use crate::seq::SeqNum;
use core::fmt;

/// Bytes of an IPv4 header without options.
pub const IPV4_HEADER_LEN: usize = 20;
/// Bytes of a TCP header without options.
pub const TCP_HEADER_LEN: usize = 20;
/// Most option bytes a TCP header can carry (data offset ≤ 15 words).
pub const MAX_TCP_OPTIONS_LEN: usize = 40;
/// IP protocol number of TCP.
pub const IPPROTO_TCP: u8 = 6;
/// Linux `sysctl_ip_default_ttl` (`IPDEFTTL`).
pub const IPDEFTTL: u8 = 64;
/// Largest IPv4 packet (the 16-bit total length).
pub const MAX_IPV4_PACKET: usize = 65535;

// TCP option kinds (include/net/tcp.h TCPOPT_*).
const TCPOPT_EOL: u8 = 0;
const TCPOPT_NOP: u8 = 1;
const TCPOPT_MSS: u8 = 2;
const TCPOPT_WINDOW: u8 = 3;
const TCPOPT_SACK_PERM: u8 = 4;
const TCPOPT_SACK: u8 = 5;
const TCPOPT_TIMESTAMP: u8 = 8;
// Their lengths (TCPOLEN_*).
const TCPOLEN_MSS: u8 = 4;
const TCPOLEN_WINDOW: u8 = 3;
const TCPOLEN_SACK_PERM: u8 = 2;
const TCPOLEN_TIMESTAMP: u8 = 10;
const TCPOLEN_SACK_BASE: u8 = 2;
const TCPOLEN_SACK_PERBLOCK: u8 = 8;

const IP_DF: u16 = 0x4000;
const IP_MF: u16 = 0x2000;
const IP_OFFSET_MASK: u16 = 0x1fff;

/// One IPv4 packet carrying one TCP segment (payload virtual).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct PacketRepr {
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// IP time to live.
    pub ttl: u8,
    /// IP identification field.
    pub ident: u16,
    /// The segment; its `ecn` is the IP header's ECN codepoint.
    pub seg: SegmentRepr,
}

/// Why a packet could not be emitted.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum EmitError {
    /// The options need this many bytes, more than [`MAX_TCP_OPTIONS_LEN`].
    OptionsTooLong(usize),
    /// The IP packet would be this many bytes, more than [`MAX_IPV4_PACKET`].
    PacketTooLong(u64),
    /// The buffer holds fewer bytes than the headers need.
    BufferTooShort { need: usize, have: usize },
}

impl fmt::Display for EmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EmitError::OptionsTooLong(n) => write!(f, "TCP options need {n} bytes (at most {MAX_TCP_OPTIONS_LEN})"),
            EmitError::PacketTooLong(n) => write!(f, "IP packet of {n} bytes (at most {MAX_IPV4_PACKET})"),
            EmitError::BufferTooShort { need, have } => write!(f, "buffer of {have} bytes, headers need {need}"),
        }
    }
}

impl std::error::Error for EmitError {}

/// Why bytes are not a packet [`PacketRepr::parse`] understands.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParseError {
    /// Fewer bytes than the headers that the packet announces.
    Truncated,
    /// IP version other than 4.
    NotIpv4,
    /// Protocol other than TCP (the number).
    NotTcp(u8),
    /// A fragment (MF set or a non-zero offset).
    Fragment,
    /// A length field that contradicts another (IHL, total length, data offset).
    BadLength,
    /// A TCP option whose length is impossible for its kind, or runs past the header.
    BadOption { kind: u8 },
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Truncated => f.write_str("truncated headers"),
            ParseError::NotIpv4 => f.write_str("not an IPv4 packet"),
            ParseError::NotTcp(p) => write!(f, "IP protocol {p}, not TCP"),
            ParseError::Fragment => f.write_str("IP fragment"),
            ParseError::BadLength => f.write_str("inconsistent length fields"),
            ParseError::BadOption { kind } => write!(f, "malformed TCP option of kind {kind}"),
        }
    }
}

impl std::error::Error for ParseError {}

/// A parsed packet and what its checksums say.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Parsed {
    pub packet: PacketRepr,
    /// The IP header checksum is correct.
    pub ip_checksum_ok: bool,
    /// The TCP checksum is correct; `None` when the bytes end before the
    /// packet does (a snap-length cut), so it cannot be checked.
    pub tcp_checksum_ok: Option<bool>,
    /// DF was set.
    pub dont_fragment: bool,
}

/// Drops SACK blocks from the end until the options fit in
/// [`MAX_TCP_OPTIONS_LEN`] bytes, as Linux's `tcp_established_options`
/// limits them to the space left (three with timestamps, four without).
/// Returns how many blocks were dropped.
pub fn trim_sack_blocks(opts: &mut TcpOptions) -> u8 {
    let mut dropped = 0;
    opts.sack_len = opts.sack_len.min(MAX_SACK_BLOCKS as u8);
    while opts.wire_len() > MAX_TCP_OPTIONS_LEN && opts.sack_len > 0 {
        opts.sack_len -= 1;
        opts.sack[opts.sack_len as usize] = SackBlock::default();
        dropped += 1;
    }
    dropped
}

impl PacketRepr {
    /// A packet with TTL [`IPDEFTTL`] and identification 0.
    pub fn new(src: [u8; 4], dst: [u8; 4], seg: SegmentRepr) -> PacketRepr {
        PacketRepr { src, dst, ttl: IPDEFTTL, ident: 0, seg }
    }

    /// Bytes of the IPv4 and TCP headers.
    pub fn header_len(&self) -> Result<usize, EmitError> {
        let opts = self.seg.options.wire_len();
        if opts > MAX_TCP_OPTIONS_LEN || self.seg.options.sack_len as usize > MAX_SACK_BLOCKS {
            return Err(EmitError::OptionsTooLong(opts));
        }
        Ok(IPV4_HEADER_LEN + TCP_HEADER_LEN + opts)
    }

    /// The IP total length: headers plus payload.
    pub fn total_len(&self) -> Result<usize, EmitError> {
        let total = self.header_len()? as u64 + u64::from(self.seg.payload_len);
        if total > MAX_IPV4_PACKET as u64 {
            return Err(EmitError::PacketTooLong(total));
        }
        Ok(total as usize)
    }

    /// Writes the IPv4 and TCP headers to the start of `buf` and returns
    /// their length. Both checksums are filled in; the TCP checksum covers a
    /// payload of `seg.payload_len` zero bytes (zeros do not change the sum,
    /// only the length in the pseudo-header). Bytes of `buf` after the
    /// headers are not touched.
    pub fn emit_headers(&self, buf: &mut [u8]) -> Result<usize, EmitError> {
        let hlen = self.header_len()?;
        let total = self.total_len()?;
        if buf.len() < hlen {
            return Err(EmitError::BufferTooShort { need: hlen, have: buf.len() });
        }
        let buf = &mut buf[..hlen];
        // IPv4 header.
        let ip = &mut buf[..IPV4_HEADER_LEN];
        ip[0] = 0x45;
        ip[1] = self.seg.ecn as u8;
        ip[2..4].copy_from_slice(&(total as u16).to_be_bytes());
        ip[4..6].copy_from_slice(&self.ident.to_be_bytes());
        ip[6..8].copy_from_slice(&IP_DF.to_be_bytes());
        ip[8] = self.ttl;
        ip[9] = IPPROTO_TCP;
        ip[10..12].copy_from_slice(&[0, 0]);
        ip[12..16].copy_from_slice(&self.src);
        ip[16..20].copy_from_slice(&self.dst);
        let sum = fold(sum_words(ip, 0));
        ip[10..12].copy_from_slice(&(!sum).to_be_bytes());
        // TCP header.
        let s = &self.seg;
        let tcp = &mut buf[IPV4_HEADER_LEN..];
        let tcp_hlen = tcp.len();
        tcp[0..2].copy_from_slice(&s.src_port.to_be_bytes());
        tcp[2..4].copy_from_slice(&s.dst_port.to_be_bytes());
        tcp[4..8].copy_from_slice(&s.seq.0.to_be_bytes());
        tcp[8..12].copy_from_slice(&s.ack.0.to_be_bytes());
        tcp[12] = ((tcp_hlen / 4) as u8) << 4;
        tcp[13] = s.flags.0;
        tcp[14..16].copy_from_slice(&s.window.to_be_bytes());
        tcp[16..18].copy_from_slice(&[0, 0]);
        tcp[18..20].copy_from_slice(&[0, 0]);
        write_options(&s.options, &mut tcp[TCP_HEADER_LEN..]);
        let tcp_len = (total - IPV4_HEADER_LEN) as u32;
        let sum = fold(sum_words(tcp, pseudo_header_sum(&self.src, &self.dst, tcp_len)));
        tcp[16..18].copy_from_slice(&(!sum).to_be_bytes());
        Ok(hlen)
    }

    /// The whole packet, payload zero-filled.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EmitError> {
        let mut v = vec![0; self.total_len()?];
        self.emit_headers(&mut v)?;
        Ok(v)
    }

    /// Parses an IPv4 packet carrying TCP. `bytes` may end anywhere after
    /// the TCP header (a snap-length cut); bytes past the IP total length
    /// (link-layer padding) are ignored. Unknown TCP options are skipped.
    pub fn parse(bytes: &[u8]) -> Result<Parsed, ParseError> {
        let ip = bytes.get(..IPV4_HEADER_LEN).ok_or(ParseError::Truncated)?;
        if ip[0] >> 4 != 4 {
            return Err(ParseError::NotIpv4);
        }
        let ihl = usize::from(ip[0] & 0x0f) * 4;
        if ihl < IPV4_HEADER_LEN {
            return Err(ParseError::BadLength);
        }
        let ip = bytes.get(..ihl).ok_or(ParseError::Truncated)?;
        let ecn = match ip[1] & 0x03 {
            0 => Ecn::NotEct,
            1 => Ecn::Ect1,
            2 => Ecn::Ect0,
            _ => Ecn::Ce,
        };
        let total = usize::from(u16::from_be_bytes([ip[2], ip[3]]));
        let ident = u16::from_be_bytes([ip[4], ip[5]]);
        let frag = u16::from_be_bytes([ip[6], ip[7]]);
        if frag & IP_MF != 0 || frag & IP_OFFSET_MASK != 0 {
            return Err(ParseError::Fragment);
        }
        let ttl = ip[8];
        if ip[9] != IPPROTO_TCP {
            return Err(ParseError::NotTcp(ip[9]));
        }
        let ip_checksum_ok = fold(sum_words(ip, 0)) == 0xffff;
        let src = [ip[12], ip[13], ip[14], ip[15]];
        let dst = [ip[16], ip[17], ip[18], ip[19]];
        if total < ihl + TCP_HEADER_LEN {
            return Err(ParseError::BadLength);
        }
        let tcp = bytes.get(ihl..ihl + TCP_HEADER_LEN).ok_or(ParseError::Truncated)?;
        let doff = usize::from(tcp[12] >> 4) * 4;
        if doff < TCP_HEADER_LEN || ihl + doff > total {
            return Err(ParseError::BadLength);
        }
        let tcp_hdr = bytes.get(ihl..ihl + doff).ok_or(ParseError::Truncated)?;
        let options = parse_options(&tcp_hdr[TCP_HEADER_LEN..])?;
        let seg = SegmentRepr {
            src_port: u16::from_be_bytes([tcp[0], tcp[1]]),
            dst_port: u16::from_be_bytes([tcp[2], tcp[3]]),
            seq: SeqNum(u32::from_be_bytes([tcp[4], tcp[5], tcp[6], tcp[7]])),
            ack: SeqNum(u32::from_be_bytes([tcp[8], tcp[9], tcp[10], tcp[11]])),
            flags: TcpFlags(tcp[13]),
            window: u16::from_be_bytes([tcp[14], tcp[15]]),
            options,
            ecn,
            payload_len: (total - ihl - doff) as u32,
        };
        let tcp_checksum_ok = bytes
            .get(ihl..total)
            .map(|segment| fold(sum_words(segment, pseudo_header_sum(&src, &dst, (total - ihl) as u32))) == 0xffff);
        Ok(Parsed {
            packet: PacketRepr { src, dst, ttl, ident, seg },
            ip_checksum_ok,
            tcp_checksum_ok,
            dont_fragment: frag & IP_DF != 0,
        })
    }
}

/// Options in `tcp_options_write` order; `out` is exactly `opts.wire_len()`
/// bytes (checked by the caller through `header_len`).
fn write_options(o: &TcpOptions, out: &mut [u8]) {
    let mut w = Writer { out, at: 0 };
    if let Some(mss) = o.mss {
        let m = mss.to_be_bytes();
        w.put(&[TCPOPT_MSS, TCPOLEN_MSS, m[0], m[1]]);
    }
    if let Some((tsval, tsecr)) = o.timestamp {
        if o.sack_permitted {
            w.put(&[TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP]);
        } else {
            w.put(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_TIMESTAMP, TCPOLEN_TIMESTAMP]);
        }
        w.put(&tsval.to_be_bytes());
        w.put(&tsecr.to_be_bytes());
    } else if o.sack_permitted {
        w.put(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK_PERM, TCPOLEN_SACK_PERM]);
    }
    if let Some(shift) = o.wscale {
        w.put(&[TCPOPT_NOP, TCPOPT_WINDOW, TCPOLEN_WINDOW, shift]);
    }
    let blocks = o.sack_blocks();
    if !blocks.is_empty() {
        let len = TCPOLEN_SACK_BASE + TCPOLEN_SACK_PERBLOCK * blocks.len() as u8;
        w.put(&[TCPOPT_NOP, TCPOPT_NOP, TCPOPT_SACK, len]);
        for b in blocks {
            w.put(&b.start.0.to_be_bytes());
            w.put(&b.end.0.to_be_bytes());
        }
    }
}

/// A bounds-checked cursor: writes past the end are dropped (never happens
/// when the caller sized `out` with `wire_len`, and never panics if it did).
struct Writer<'a> {
    out: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if let Some(slot) = self.out.get_mut(self.at) {
                *slot = b;
            }
            self.at += 1;
        }
    }
}

fn parse_options(mut b: &[u8]) -> Result<TcpOptions, ParseError> {
    let mut o = TcpOptions::default();
    while let Some((&kind, rest)) = b.split_first() {
        match kind {
            TCPOPT_EOL => break,
            TCPOPT_NOP => {
                b = rest;
                continue;
            }
            _ => {}
        }
        let len = usize::from(*rest.first().ok_or(ParseError::BadOption { kind })?);
        if len < 2 || len > b.len() {
            return Err(ParseError::BadOption { kind });
        }
        let body = &b[2..len];
        let bad = ParseError::BadOption { kind };
        match kind {
            TCPOPT_MSS => {
                let [h, l] = <[u8; 2]>::try_from(body).map_err(|_| bad)?;
                o.mss = Some(u16::from_be_bytes([h, l]));
            }
            TCPOPT_WINDOW => {
                let [s] = <[u8; 1]>::try_from(body).map_err(|_| bad)?;
                o.wscale = Some(s);
            }
            TCPOPT_SACK_PERM => {
                if !body.is_empty() {
                    return Err(bad);
                }
                o.sack_permitted = true;
            }
            TCPOPT_TIMESTAMP => {
                let t = <[u8; 8]>::try_from(body).map_err(|_| bad)?;
                o.timestamp =
                    Some((u32::from_be_bytes([t[0], t[1], t[2], t[3]]), u32::from_be_bytes([t[4], t[5], t[6], t[7]])));
            }
            TCPOPT_SACK => {
                let n = body.len() / 8;
                if n == 0 || n * 8 != body.len() || n > MAX_SACK_BLOCKS {
                    return Err(bad);
                }
                o.sack = [SackBlock::default(); MAX_SACK_BLOCKS];
                o.sack_len = 0;
                for c in body.chunks_exact(8) {
                    let start = SeqNum(u32::from_be_bytes([c[0], c[1], c[2], c[3]]));
                    let end = SeqNum(u32::from_be_bytes([c[4], c[5], c[6], c[7]]));
                    o.push_sack(SackBlock { start, end });
                }
            }
            _ => {}
        }
        b = &b[len..];
    }
    Ok(o)
}

/// Sum of the TCP pseudo-header (RFC 793): addresses, protocol, TCP length.
fn pseudo_header_sum(src: &[u8; 4], dst: &[u8; 4], tcp_len: u32) -> u32 {
    let mut sum = sum_words(src, 0);
    sum = sum_words(dst, sum);
    sum + u32::from(IPPROTO_TCP) + tcp_len
}

/// One's-complement sum of 16-bit big-endian words (RFC 1071), an odd
/// last byte padded with zero, added to `acc` (not yet folded).
fn sum_words(data: &[u8], mut acc: u32) -> u32 {
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        acc = fold_once(acc + u32::from(u16::from_be_bytes([c[0], c[1]])));
    }
    if let [last] = chunks.remainder() {
        acc = fold_once(acc + (u32::from(*last) << 8));
    }
    acc
}

#[inline]
fn fold_once(x: u32) -> u32 {
    (x & 0xffff) + (x >> 16)
}

/// Folds carries into 16 bits.
fn fold(mut x: u32) -> u16 {
    while x > 0xffff {
        x = fold_once(x);
    }
    x as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    const SRC: [u8; 4] = [10, 0, 0, 1];
    const DST: [u8; 4] = [10, 0, 0, 3];

    fn syn() -> SegmentRepr {
        SegmentRepr {
            src_port: 32768,
            dst_port: 5001,
            seq: SeqNum(0x1234_5678),
            flags: TcpFlags::SYN | TcpFlags::ECE | TcpFlags::CWR,
            window: 64240,
            options: TcpOptions {
                mss: Some(1460),
                wscale: Some(7),
                sack_permitted: true,
                timestamp: Some((1000, 0)),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    // ---- emit --------------------------------------------------------------

    #[test]
    fn test_syn_emit_linux_option_layout() {
        let p = PacketRepr::new(SRC, DST, syn());
        let b = p.to_bytes().unwrap();
        assert_eq!(b.len(), 60);
        assert_eq!(&b[..4], &[0x45, 0, 0, 60]);
        assert_eq!(b[6] & 0x40, 0x40, "DF");
        assert_eq!(b[16..20], [10, 0, 0, 3]);
        // data offset 10 words, flags S + ECE + CWR
        assert_eq!(b[32], 10 << 4);
        assert_eq!(b[33], 0xc2);
        // mss, sackOK + TS, nop + wscale: as tcp_options_write lays them out
        assert_eq!(&b[40..60], &[2, 4, 0x05, 0xb4, 4, 2, 8, 10, 0, 0, 0x03, 0xe8, 0, 0, 0, 0, 1, 3, 3, 7],);
    }

    #[test]
    fn test_checksums_verify_with_zero_payload() {
        let mut s = syn();
        s.flags = TcpFlags::ACK | TcpFlags::PSH;
        s.options = TcpOptions { timestamp: Some((5, 6)), ..Default::default() };
        s.payload_len = 1447; // odd length
        s.ecn = Ecn::Ce;
        let b = PacketRepr::new(SRC, DST, s).to_bytes().unwrap();
        let parsed = PacketRepr::parse(&b).unwrap();
        assert!(parsed.ip_checksum_ok);
        assert_eq!(parsed.tcp_checksum_ok, Some(true));
        assert_eq!(parsed.packet.seg, s);
        assert_eq!(b[1] & 3, 3, "CE in the TOS byte");
        // A flipped payload bit breaks the TCP checksum only.
        let mut bad = b.clone();
        bad[100] ^= 1;
        let parsed = PacketRepr::parse(&bad).unwrap();
        assert!(parsed.ip_checksum_ok);
        assert_eq!(parsed.tcp_checksum_ok, Some(false));
    }

    #[test]
    fn test_known_checksum_vector() {
        // The IPv4 header example of RFC 1071 section 3 style: a header whose
        // checksum field, once filled in, makes the folded sum 0xffff.
        let mut h = [0x45u8, 0, 0, 0x73, 0, 0, 0x40, 0, 0x40, 0x11, 0, 0, 0xc0, 0xa8, 0, 1, 0xc0, 0xa8, 0, 0xc7];
        let c = !fold(sum_words(&h, 0));
        assert_eq!(c, 0xb861);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        assert_eq!(fold(sum_words(&h, 0)), 0xffff);
    }

    #[test]
    fn test_sack_blocks_round_trip_and_trim() {
        let mut s = SegmentRepr { flags: TcpFlags::ACK, ..Default::default() };
        s.options.timestamp = Some((1, 2));
        for i in 0..4u32 {
            s.options.push_sack(SackBlock { start: SeqNum(i * 100), end: SeqNum(i * 100 + 50) });
        }
        let p = PacketRepr::new(SRC, DST, s);
        assert_eq!(p.header_len(), Err(EmitError::OptionsTooLong(48)));
        let mut t = s;
        assert_eq!(trim_sack_blocks(&mut t.options), 1);
        assert_eq!(t.options.sack_len, 3);
        let b = PacketRepr::new(SRC, DST, t).to_bytes().unwrap();
        assert_eq!(PacketRepr::parse(&b).unwrap().packet.seg, t);
        // Without timestamps four blocks fit.
        let mut u = s;
        u.options.timestamp = None;
        assert_eq!(trim_sack_blocks(&mut u.options), 0);
        let b = PacketRepr::new(SRC, DST, u).to_bytes().unwrap();
        assert_eq!(PacketRepr::parse(&b).unwrap().packet.seg.options.sack_len, 4);
    }

    #[test]
    fn test_emit_errors() {
        let mut s = syn();
        s.payload_len = 70_000;
        assert_eq!(PacketRepr::new(SRC, DST, s).to_bytes(), Err(EmitError::PacketTooLong(70_060)));
        let mut short = [0u8; 30];
        let e = PacketRepr::new(SRC, DST, syn()).emit_headers(&mut short);
        assert_eq!(e, Err(EmitError::BufferTooShort { need: 60, have: 30 }));
    }

    // ---- parse -------------------------------------------------------------

    #[test]
    fn test_parse_snap_length_cut() {
        let mut s = syn();
        s.flags = TcpFlags::ACK;
        s.payload_len = 1000;
        let b = PacketRepr::new(SRC, DST, s).to_bytes().unwrap();
        let hl = PacketRepr::new(SRC, DST, s).header_len().unwrap();
        let p = PacketRepr::parse(&b[..hl + 10]).unwrap();
        assert_eq!(p.packet.seg.payload_len, 1000);
        assert_eq!(p.tcp_checksum_ok, None);
        assert_eq!(PacketRepr::parse(&b[..hl - 1]), Err(ParseError::Truncated));
    }

    #[test]
    fn test_parse_rejects_garbage_without_panicking() {
        let good = PacketRepr::new(SRC, DST, syn()).to_bytes().unwrap();
        assert_eq!(PacketRepr::parse(&[]), Err(ParseError::Truncated));
        let mut v6 = good.clone();
        v6[0] = 0x65;
        assert_eq!(PacketRepr::parse(&v6), Err(ParseError::NotIpv4));
        let mut udp = good.clone();
        udp[9] = 17;
        assert_eq!(PacketRepr::parse(&udp), Err(ParseError::NotTcp(17)));
        let mut frag = good.clone();
        frag[6] |= 0x20;
        assert_eq!(PacketRepr::parse(&frag), Err(ParseError::Fragment));
        let mut doff = good.clone();
        doff[32] = 0x20;
        assert_eq!(PacketRepr::parse(&doff), Err(ParseError::BadLength));
        let mut opt = good.clone();
        opt[41] = 0; // MSS option length 0
        assert_eq!(PacketRepr::parse(&opt), Err(ParseError::BadOption { kind: 2 }));
        let mut opt = good.clone();
        opt[41] = 200; // runs past the header
        assert_eq!(PacketRepr::parse(&opt), Err(ParseError::BadOption { kind: 2 }));
        // Every prefix and every single-byte corruption parses or errors.
        for n in 0..good.len() {
            let _ = PacketRepr::parse(&good[..n]);
        }
        for i in 0..good.len() {
            for v in [0u8, 1, 2, 5, 8, 0x0f, 0x40, 0xff] {
                let mut c = good.clone();
                c[i] = v;
                let _ = PacketRepr::parse(&c);
            }
        }
    }

    #[test]
    fn test_parse_skips_unknown_options_and_eol() {
        let mut s = SegmentRepr { flags: TcpFlags::ACK, ..Default::default() };
        s.options.timestamp = Some((7, 8));
        let mut b = PacketRepr::new(SRC, DST, s).to_bytes().unwrap();
        // Replace the two leading NOPs with an unknown 2-byte option (kind 30).
        b[40] = 30;
        b[41] = 2;
        let p = PacketRepr::parse(&b).unwrap();
        assert_eq!(p.packet.seg.options.timestamp, Some((7, 8)));
        b[40] = TCPOPT_EOL;
        let p = PacketRepr::parse(&b).unwrap();
        assert_eq!(p.packet.seg.options.timestamp, None);
    }
}
