//! The `FLAG_*` bits that `tcp_ack()` accumulates while it processes one
//! ACK, and the composites built from them.
//!
//! `//= linux:v6.13:net/ipv4/tcp_input.c#FLAG_DATA` (the `#define` block at
//! the top of the file).
//!
//! Linux threads a single `int flag` through `tcp_ack`, `tcp_sacktag_write_queue`,
//! `tcp_clean_rtx_queue`, `tcp_fastretrans_alert`, `tcp_cwnd_reduction` and
//! `tcp_cong_control`; each stage ORs in what it saw and later stages test
//! the bits. tcplab keeps the same `u32` bit set with the kernel's values so
//! that a kernel condition such as
//! `(flag & FLAG_RETRANS_DATA_ACKED) && !(flag & FLAG_LOST_RETRANS)` reads
//! the same in Rust, and so that the conformance vectors (which print the raw
//! bitmask) compare directly.
//!
//! The constants keep their kernel names, so `use crate::flag::*` lets
//! ported conditions read exactly like tcp_input.c. The values of the bits
//! that exist in older trees are unchanged since v3.x;
//! bits that appeared later are marked with the first release that has them,
//! as far as the trees listed in linux-tcp-model.md §0.1 show.

/// Incoming segment carried payload (slow path only).
pub const FLAG_DATA: u32 = 0x01;
/// `tcp_ack_update_window()` accepted a window update. Always set on the
/// fast path.
pub const FLAG_WIN_UPDATE: u32 = 0x02;
/// `tcp_clean_rtx_queue()` removed at least one non-SYN segment: this ACK
/// acknowledged new data.
pub const FLAG_DATA_ACKED: u32 = 0x04;
/// Some of the cumulatively acknowledged data had been retransmitted
/// (Karn: the sequence RTT sample is invalid).
pub const FLAG_RETRANS_DATA_ACKED: u32 = 0x08;
/// This ACK acknowledged our SYN.
pub const FLAG_SYN_ACKED: u32 = 0x10;
/// `tcp_sacktag_one()` newly tagged something SACKed.
pub const FLAG_DATA_SACKED: u32 = 0x20;
/// ECE in this ACK (not a SYN, ECN negotiated). Slow path only.
pub const FLAG_ECE: u32 = 0x40;
/// This ACK marked some retransmission lost (RACK). [≥ v4.x]
pub const FLAG_LOST_RETRANS: u32 = 0x80;
/// Caller is the slow path: do not skip the RFC checks for a window update.
pub const FLAG_SLOWPATH: u32 = 0x100;
/// Never-retransmitted data at or below `high_seq` was (S)ACKed (F-RTO
/// evidence).
pub const FLAG_ORIG_SACK_ACKED: u32 = 0x200;
/// `snd_una` moved (distinct from [`FLAG_DATA_ACKED`]: a FIN or SYN alone also
/// moves it).
pub const FLAG_SND_UNA_ADVANCED: u32 = 0x400;
/// The SACK blocks contained valid D-SACK information.
pub const FLAG_DSACKING_ACK: u32 = 0x800;
/// Re-arm the TLP or RTO timer after processing. [≥ v4.x]
pub const FLAG_SET_XMIT_TIMER: u32 = 0x1000;
/// `snd_una` advanced into a sequence we had SACK-tagged (reneging).
pub const FLAG_SACK_RENEGING: u32 = 0x2000;
/// Update `ts_recent` once the segment is known to be in window
/// (`tcp_replace_ts_recent()`).
pub const FLAG_UPDATE_TS_RECENT: u32 = 0x4000;
/// Do not answer with a challenge ACK. [≥ v4.x]
pub const FLAG_NO_CHALLENGE_ACK: u32 = 0x8000;
/// A lone runt segment was acked: the ACK was likely delayed, so its RTT
/// sample is not trusted to lower min_rtt. [present in v4.17]
pub const FLAG_ACK_MAYBE_DELAYED: u32 = 0x10000;
/// The D-SACK exactly covers the tail loss probe. [≥ v5.x]
pub const FLAG_DSACK_TLP: u32 = 0x20000;

/// `FLAG_ACKED`: new data or our SYN was acknowledged.
pub const FLAG_ACKED: u32 = FLAG_DATA_ACKED | FLAG_SYN_ACKED;
/// `FLAG_NOT_DUP`: anything that makes an ACK not a duplicate ACK.
pub const FLAG_NOT_DUP: u32 = FLAG_DATA | FLAG_WIN_UPDATE | FLAG_ACKED;
/// `FLAG_FORWARD_PROGRESS`: cumulative or selective delivery progress.
pub const FLAG_FORWARD_PROGRESS: u32 = FLAG_ACKED | FLAG_DATA_SACKED;
/// `FLAG_CA_ALERT` as in v4.17 and v6.13: an ACK with any of these bits is
/// "dubious" and goes through `tcp_fastretrans_alert()`.
pub const FLAG_CA_ALERT: u32 = FLAG_DATA_SACKED | FLAG_ECE | FLAG_DSACKING_ACK;
/// `FLAG_CA_ALERT` up to v3.19, before `FLAG_DSACKING_ACK` joined it
/// (linux-tcp-model.md §1.1).
pub const FLAG_CA_ALERT_V3: u32 = FLAG_DATA_SACKED | FLAG_ECE;

/// Every single bit above with its kernel name (without `FLAG_`), lowest
/// bit first.
pub const ALL: [(u32, &str); 18] = [
    (FLAG_DATA, "DATA"),
    (FLAG_WIN_UPDATE, "WIN_UPDATE"),
    (FLAG_DATA_ACKED, "DATA_ACKED"),
    (FLAG_RETRANS_DATA_ACKED, "RETRANS_DATA_ACKED"),
    (FLAG_SYN_ACKED, "SYN_ACKED"),
    (FLAG_DATA_SACKED, "DATA_SACKED"),
    (FLAG_ECE, "ECE"),
    (FLAG_LOST_RETRANS, "LOST_RETRANS"),
    (FLAG_SLOWPATH, "SLOWPATH"),
    (FLAG_ORIG_SACK_ACKED, "ORIG_SACK_ACKED"),
    (FLAG_SND_UNA_ADVANCED, "SND_UNA_ADVANCED"),
    (FLAG_DSACKING_ACK, "DSACKING_ACK"),
    (FLAG_SET_XMIT_TIMER, "SET_XMIT_TIMER"),
    (FLAG_SACK_RENEGING, "SACK_RENEGING"),
    (FLAG_UPDATE_TS_RECENT, "UPDATE_TS_RECENT"),
    (FLAG_NO_CHALLENGE_ACK, "NO_CHALLENGE_ACK"),
    (FLAG_ACK_MAYBE_DELAYED, "ACK_MAYBE_DELAYED"),
    (FLAG_DSACK_TLP, "DSACK_TLP"),
];

/// The kernel name (without `FLAG_`) of a single bit, or `None` if `bit`
/// is not exactly one known flag.
pub fn name(bit: u32) -> Option<&'static str> {
    ALL.iter().find(|(b, _)| *b == bit).map(|(_, n)| *n)
}

/// The bit of a kernel flag name, with or without the `FLAG_` prefix.
/// Composite names are accepted too (`ACKED`, `NOT_DUP`,
/// `FORWARD_PROGRESS`, `CA_ALERT`). Also accepts a hexadecimal literal such
/// as `0x4`, the form traces use for bits they do not name.
pub fn from_name(s: &str) -> Option<u32> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u32::from_str_radix(hex, 16).ok();
    }
    let s = s.strip_prefix("FLAG_").unwrap_or(s);
    match s {
        "ACKED" => return Some(FLAG_ACKED),
        "NOT_DUP" => return Some(FLAG_NOT_DUP),
        "FORWARD_PROGRESS" => return Some(FLAG_FORWARD_PROGRESS),
        "CA_ALERT" => return Some(FLAG_CA_ALERT),
        _ => {}
    }
    ALL.iter().find(|(_, n)| *n == s).map(|(b, _)| *b)
}

/// Renders a flag set as `NAME|NAME|0x…`, lowest bit first; bits without
/// a name are collected into one trailing hexadecimal term. The empty set
/// renders as the empty string.
pub fn describe(flags: u32) -> String {
    let mut out = String::new();
    let mut rest = flags;
    for (bit, n) in ALL {
        if flags & bit != 0 {
            if !out.is_empty() {
                out.push('|');
            }
            out.push_str(n);
            rest &= !bit;
        }
    }
    if rest != 0 {
        if !out.is_empty() {
            out.push('|');
        }
        out.push_str(&format!("{rest:#x}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_flags_are_distinct_single_bits() {
        let mut seen = 0u32;
        for (bit, _) in ALL {
            assert_eq!(bit.count_ones(), 1);
            assert_eq!(seen & bit, 0);
            seen |= bit;
        }
    }

    #[test]
    fn test_composites_match_kernel_definitions() {
        assert_eq!(FLAG_ACKED, 0x14);
        assert_eq!(FLAG_NOT_DUP, 0x17);
        assert_eq!(FLAG_FORWARD_PROGRESS, 0x34);
        assert_eq!(FLAG_CA_ALERT, 0x860);
        assert_eq!(FLAG_CA_ALERT_V3, 0x60);
    }

    #[test]
    fn test_names_round_trip() {
        for (bit, n) in ALL {
            assert_eq!(name(bit), Some(n));
            assert_eq!(from_name(n), Some(bit));
            assert_eq!(from_name(&format!("FLAG_{n}")), Some(bit));
        }
        assert_eq!(from_name("0x4"), Some(FLAG_DATA_ACKED));
        assert_eq!(from_name("NOPE"), None);
        assert_eq!(from_name("0xzz"), None);
        assert_eq!(name(0x3), None);
        assert_eq!(
            describe(FLAG_SND_UNA_ADVANCED | FLAG_DATA_SACKED | 0x8000_0000),
            "DATA_SACKED|SND_UNA_ADVANCED|0x80000000"
        );
        assert_eq!(describe(0), "");
    }
}
