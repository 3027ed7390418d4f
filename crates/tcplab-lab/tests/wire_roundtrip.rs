//! tcplab-wire's IPv4 + TCP encoder against its own decoder, on
//! randomized segments (proptest), and the decoder on arbitrary bytes.

use proptest::prelude::*;
use tcplab_wire::packet::{trim_sack_blocks, EmitError, PacketRepr};
use tcplab_wire::{Ecn, SackBlock, SegmentRepr, SeqNum, TcpFlags, TcpOptions};

fn ecn() -> impl Strategy<Value = Ecn> {
    prop_oneof![Just(Ecn::NotEct), Just(Ecn::Ect1), Just(Ecn::Ect0), Just(Ecn::Ce)]
}

fn options() -> impl Strategy<Value = TcpOptions> {
    (
        proptest::option::of(any::<u16>()),
        proptest::option::of(0u8..=14),
        any::<bool>(),
        proptest::option::of((any::<u32>(), any::<u32>())),
        proptest::collection::vec((any::<u32>(), any::<u32>()), 0..=4),
    )
        .prop_map(|(mss, wscale, sack_permitted, timestamp, blocks)| {
            let mut o = TcpOptions { mss, wscale, sack_permitted, timestamp, ..Default::default() };
            for (s, e) in blocks {
                o.push_sack(SackBlock { start: SeqNum(s), end: SeqNum(e) });
            }
            o
        })
}

fn packet() -> impl Strategy<Value = PacketRepr> {
    (
        (any::<[u8; 4]>(), any::<[u8; 4]>(), any::<u8>(), any::<u16>()),
        (any::<u16>(), any::<u16>(), any::<u32>(), any::<u32>(), any::<u8>(), any::<u16>()),
        options(),
        ecn(),
        0u32..=65_535,
    )
        .prop_map(|((src, dst, ttl, ident), (sp, dp, seq, ack, flags, window), options, ecn, payload_len)| {
            PacketRepr {
                src,
                dst,
                ttl,
                ident,
                seg: SegmentRepr {
                    src_port: sp,
                    dst_port: dp,
                    seq: SeqNum(seq),
                    ack: SeqNum(ack),
                    flags: TcpFlags(flags),
                    window,
                    options,
                    ecn,
                    payload_len,
                },
            }
        })
}

proptest! {
    // Fixed seed for CI; PROPTEST_RNG_SEED / PROPTEST_CASES search further.
    #![proptest_config(ProptestConfig {
        cases: 2000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x3a1e),
        ..ProptestConfig::default()
    })]

    /// What the encoder writes, the decoder reads back, checksums valid;
    /// what does not fit is refused, never truncated silently.
    #[test]
    fn test_emit_parse_round_trip(mut p in packet()) {
        match p.to_bytes() {
            Ok(bytes) => {
                let parsed = PacketRepr::parse(&bytes).unwrap();
                prop_assert_eq!(parsed.packet, p);
                prop_assert!(parsed.ip_checksum_ok);
                prop_assert_eq!(parsed.tcp_checksum_ok, Some(true));
                prop_assert!(parsed.dont_fragment);
                // A capture cut after the headers still decodes to the same
                // packet; its checksum can be checked only if nothing was cut.
                let hl = p.header_len().unwrap();
                let cut = PacketRepr::parse(&bytes[..hl]).unwrap();
                prop_assert_eq!(cut.packet, p);
                prop_assert_eq!(cut.tcp_checksum_ok, if p.seg.payload_len == 0 { Some(true) } else { None });
            }
            Err(EmitError::OptionsTooLong(_)) => {
                prop_assert!(p.seg.options.wire_len() > 40);
                prop_assert!(trim_sack_blocks(&mut p.seg.options) > 0);
                prop_assert!(p.header_len().is_ok());
            }
            Err(EmitError::PacketTooLong(n)) => prop_assert!(n > 65_535),
            Err(e) => prop_assert!(false, "unexpected {e}"),
        }
    }

    /// The decoder never panics, on any bytes.
    #[test]
    fn test_parse_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = PacketRepr::parse(&bytes);
    }

    /// Nor on a valid packet with one byte changed and any length.
    #[test]
    fn test_parse_mutated_packets(p in packet(), at in any::<usize>(), v in any::<u8>(), len in any::<usize>()) {
        let mut p = p;
        trim_sack_blocks(&mut p.seg.options);
        p.seg.payload_len %= 1000;
        let mut b = p.to_bytes().unwrap();
        let i = at % b.len();
        b[i] = v;
        let n = len % (b.len() + 1);
        let _ = PacketRepr::parse(&b[..n]);
    }
}
