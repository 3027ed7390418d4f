//! Outbound packet matching, as packetdrill's `run_packet.c` does it.
//!
//! - Sequence numbers are compared in script space: the local ISN of the
//!   script (the seq of its SYN or SYN-ACK line, normally 0) stands for
//!   the model's ISN; ACK and SACK numbers are mapped back by the offset
//!   used when injecting the remote side ([`SeqMap`]).
//! - Unless `--strict_segments`, consecutive live segments are joined
//!   until their payload reaches the script packet's (TSO/GSO bursts):
//!   each further fragment must carry the same header fields as the
//!   previous one (options length, SYN, RST, ACK, URG, ECE, ack, window),
//!   continue its sequence numbers, and all but the last have the same
//!   size ([`check_fragment`]). The joined packet has the last fragment's
//!   header with the first fragment's seq and CWR, and the last
//!   fragment's time ([`aggregate`]).
//! - Then, in packetdrill's order ([`verify`]): IPv4 total length, the
//!   ECN/TOS bits when written, TCP header fields (FIN, SYN, RST, PSH,
//!   ACK, URG, ECE, CWR, seq, ack, window when written), then options
//!   unless `<...>`: same kinds in the same order, equal values, the TS
//!   value only with `--tcp_ts_tick_usecs` (packetdrill never compares
//!   the TS echo reply of an outbound packet).
//! - Error text is packetdrill's (`live packet field tcp_seq: expected:
//!   1001 (0x3e9) vs actual: 1 (0x1)`).

use crate::ast::{IpCheck, PacketFlag, PacketFlags, PacketSpec, TcpOpt};
use tcplab_core::wire::{Ecn, SackBlock, SegmentRepr, SeqNum, TcpFlags, TcpOptions};

/// Live ↔ script sequence-number mapping of one connection.
#[derive(Clone, Debug, Default)]
pub struct SeqMap {
    /// The model's ISN.
    pub local_live_isn: u32,
    /// The ISN the script writes for the local side (from its SYN/SYN-ACK).
    pub local_script_isn: u32,
    /// `live = script + remote_offset` for the remote side's numbers.
    pub remote_offset: u32,
    /// First outbound TS val seen in the script and live (packetdrill's
    /// TS val mapping baseline).
    pub ts_base: Option<(u32, u32)>,
    /// Exact script→live TS val pairs seen on matched outbound packets.
    pub ts_pairs: Vec<(u32, u32)>,
}

impl SeqMap {
    pub fn local_to_script(&self, live: u32) -> u32 {
        live.wrapping_sub(self.local_live_isn).wrapping_add(self.local_script_isn)
    }
    pub fn local_to_live(&self, script: u32) -> u32 {
        script.wrapping_sub(self.local_script_isn).wrapping_add(self.local_live_isn)
    }
    pub fn remote_to_script(&self, live: u32) -> u32 {
        live.wrapping_sub(self.remote_offset)
    }
    pub fn remote_to_live(&self, script: u32) -> u32 {
        script.wrapping_add(self.remote_offset)
    }
    /// Live TS ecr for a script ecr (`map_inbound_packet`).
    pub fn ts_ecr_to_live(&self, script_ecr: u32) -> Result<u32, String> {
        if let Some(&(_, live)) = self.ts_pairs.iter().rev().find(|(s, _)| *s == script_ecr) {
            return Ok(live);
        }
        match self.ts_base {
            Some((s, l)) => Ok(script_ecr.wrapping_sub(s).wrapping_add(l)),
            None => Err(format!(
                "unable to infer live TS ecr for script TS ecr {script_ecr};  no matching or preceding outbound TS val"
            )),
        }
    }
}

/// A live outbound segment mapped into script space.
#[derive(Clone, Debug, PartialEq)]
pub struct Actual {
    /// When the model sent it, µs.
    pub time_us: i64,
    pub flags: TcpFlags,
    pub seq: u32,
    /// Script-space ack when ACK is set, else the raw field.
    pub ack: u32,
    pub window: u16,
    pub payload: u32,
    pub ecn: Ecn,
    /// Options in wire order (Linux layout), SACK blocks in script space.
    /// The TS val stays live until [`map_ts_val`] maps it.
    pub options: Vec<TcpOpt>,
}

/// The option list Linux writes for `o` (`tcp_options_write`): MSS;
/// then SACK-permitted+TS, or NOP NOP TS, or NOP NOP SACK-permitted; NOP
/// window scale; NOP NOP SACK blocks.
pub fn linux_option_layout(o: &TcpOptions) -> Vec<TcpOpt> {
    let mut v = Vec::new();
    if let Some(m) = o.mss {
        v.push(TcpOpt::Mss(m));
    }
    if let Some((val, ecr)) = o.timestamp {
        if o.sack_permitted {
            v.push(TcpOpt::SackOk);
        } else {
            v.push(TcpOpt::Nop);
            v.push(TcpOpt::Nop);
        }
        v.push(TcpOpt::Timestamp { val, ecr });
    } else if o.sack_permitted {
        v.push(TcpOpt::Nop);
        v.push(TcpOpt::Nop);
        v.push(TcpOpt::SackOk);
    }
    if let Some(ws) = o.wscale {
        v.push(TcpOpt::Nop);
        v.push(TcpOpt::Wscale(ws));
    }
    if !o.sack_blocks().is_empty() {
        v.push(TcpOpt::Nop);
        v.push(TcpOpt::Nop);
        v.push(TcpOpt::Sack(o.sack_blocks().iter().map(|b| (b.start.0, b.end.0)).collect()));
    }
    v
}

/// Script options → the model's options for an inbound segment (NOP and
/// EOL dropped), with SACK blocks and the TS ecr mapped to live values.
pub fn inbound_options(opts: &[TcpOpt], map: &SeqMap, ack_present: bool) -> Result<TcpOptions, String> {
    let mut o = TcpOptions::default();
    for opt in opts {
        match opt {
            TcpOpt::Nop | TcpOpt::Eol => {}
            TcpOpt::Mss(m) => o.mss = Some(*m),
            TcpOpt::Wscale(w) => o.wscale = Some(*w),
            TcpOpt::SackOk => o.sack_permitted = true,
            TcpOpt::Sack(blocks) => {
                for &(l, r) in blocks {
                    let b = SackBlock { start: SeqNum(map.local_to_live(l)), end: SeqNum(map.local_to_live(r)) };
                    if !o.push_sack(b) {
                        return Err("more SACK blocks than fit in a TCP option".into());
                    }
                }
            }
            TcpOpt::Timestamp { val, ecr } => {
                let ecr = if ack_present { map.ts_ecr_to_live(*ecr)? } else { *ecr };
                o.timestamp = Some((*val, ecr));
            }
            TcpOpt::Other(t) => return Err(format!("TCP option `{t}` is not supported by the model")),
        }
    }
    Ok(o)
}

/// Maps a live segment into script space.
pub fn to_actual(seg: &SegmentRepr, time_us: i64, map: &SeqMap) -> Actual {
    let ack = if seg.flags.ack() { map.remote_to_script(seg.ack.0) } else { seg.ack.0 };
    let mut options = linux_option_layout(&seg.options);
    for o in &mut options {
        if let TcpOpt::Sack(blocks) = o {
            for b in blocks.iter_mut() {
                *b = (map.remote_to_script(b.0), map.remote_to_script(b.1));
            }
        }
    }
    Actual {
        time_us,
        flags: seg.flags,
        seq: map.local_to_script(seg.seq.0),
        ack,
        window: seg.window,
        payload: seg.payload_len,
        ecn: seg.ecn,
        options,
    }
}

/// `map_outbound_live_packet`'s TS handling: when both the script line
/// and the live packet carry a timestamp, remember the script→live pair
/// (the first pair is the baseline), then express the live TS val in
/// script space.
pub fn map_ts_val(spec: &PacketSpec, a: &mut Actual, map: &mut SeqMap) {
    let script_val = spec.options.as_ref().and_then(|o| {
        o.iter().find_map(|x| match x {
            TcpOpt::Timestamp { val, .. } => Some(*val),
            _ => None,
        })
    });
    for o in &mut a.options {
        if let TcpOpt::Timestamp { val, .. } = o {
            if let Some(sv) = script_val {
                map.ts_pairs.push((sv, *val));
                if map.ts_base.is_none() {
                    map.ts_base = Some((sv, *val));
                }
            }
            if let Some((s, l)) = map.ts_base {
                *val = val.wrapping_sub(l).wrapping_add(s);
            }
        }
    }
}

fn options_len(opts: &[TcpOpt]) -> u32 {
    opts.iter().map(|o| o.wire_len() as u32).sum()
}

fn field(name: &str, expected: u32, actual: u32) -> Result<(), String> {
    if expected != actual {
        return Err(format!(
            "live packet field {name}: expected: {expected} ({expected:#x}) vs actual: {actual} ({actual:#x})"
        ));
    }
    Ok(())
}

/// A script flag's wire bit; the AccECN flags have none in the model.
fn wire_flag(f: PacketFlag) -> TcpFlags {
    match f {
        PacketFlag::Fin => TcpFlags::FIN,
        PacketFlag::Syn => TcpFlags::SYN,
        PacketFlag::Rst => TcpFlags::RST,
        PacketFlag::Psh => TcpFlags::PSH,
        PacketFlag::Ack => TcpFlags::ACK,
        PacketFlag::Urg => TcpFlags::URG,
        PacketFlag::Ece => TcpFlags::ECE,
        PacketFlag::Cwr => TcpFlags::CWR,
        PacketFlag::Ae | PacketFlag::Ace(_) => TcpFlags::default(),
    }
}

/// Script flags as wire flags.
pub fn script_flags(flags: &PacketFlags) -> TcpFlags {
    let mut f = TcpFlags::default();
    for &flag in &flags.0 {
        f.insert(wire_flag(flag));
    }
    f
}

/// `verify_packet_fragments`: `cur` may be joined after `prev`.
pub fn check_fragment(prev: &Actual, cur: &Actual, sniffed_before: u32, expected_total: u32) -> Result<(), String> {
    let b = |f: TcpFlags, x: TcpFlags| f.contains(x) as u32;
    field("tcp_data_offset", (20 + options_len(&prev.options)) / 4, (20 + options_len(&cur.options)) / 4)?;
    field("tcp_syn", b(prev.flags, TcpFlags::SYN), b(cur.flags, TcpFlags::SYN))?;
    field("tcp_rst", b(prev.flags, TcpFlags::RST), b(cur.flags, TcpFlags::RST))?;
    field("tcp_ack", b(prev.flags, TcpFlags::ACK), b(cur.flags, TcpFlags::ACK))?;
    field("tcp_urg", b(prev.flags, TcpFlags::URG), b(cur.flags, TcpFlags::URG))?;
    field("tcp_ece", b(prev.flags, TcpFlags::ECE), b(cur.flags, TcpFlags::ECE))?;
    field("tcp_seq", prev.seq.wrapping_add(prev.payload), cur.seq)?;
    field("tcp_ack_seq", prev.ack, cur.ack)?;
    field("tcp_window", prev.window as u32, cur.window as u32)?;
    let remaining = expected_total.saturating_sub(sniffed_before);
    if cur.payload < remaining && cur.payload != prev.payload {
        return Err(format!(
            "fragment payload: expected {} bytes vs actual {} bytes; total payload: expected {} bytes vs actual {} bytes",
            prev.payload,
            cur.payload,
            expected_total,
            cur.payload + sniffed_before
        ));
    }
    Ok(())
}

/// `aggregate_packets`: the last fragment's header with the first one's
/// seq and CWR, the summed payload and the last fragment's time.
pub fn aggregate(frags: &[Actual]) -> Actual {
    let first = &frags[0];
    let mut a = frags[frags.len() - 1].clone();
    a.seq = first.seq;
    a.flags.remove(TcpFlags::CWR);
    if first.flags.cwr() {
        a.flags.insert(TcpFlags::CWR);
    }
    a.payload = frags.iter().map(|f| f.payload).sum();
    a
}

/// Settings of the comparison.
#[derive(Clone, Debug, Default)]
pub struct MatchConfig {
    /// `--tcp_ts_tick_usecs` (0: TS val not checked).
    pub ts_tick_usecs: u32,
    /// Tolerance of the TS val check, µs: the larger of
    /// `--tolerance_usecs` and 12.5 % of the time since the script start.
    pub tolerance_usecs: i64,
    /// Field names (`tcp_psh`, `tcp_window`, ...) not to compare: a
    /// diagnostic outside packetdrill's semantics (see `RunOptions`).
    pub ignore_fields: Vec<String>,
}

/// `verify_outbound_live_headers` + `verify_outbound_live_tcp_options`
/// (strict mode) of the joined packet against the script line.
pub fn verify(spec: &PacketSpec, a: &Actual, cfg: &MatchConfig) -> Result<(), String> {
    // --ignore-field: a diagnostic that skips named field checks.
    let chk = |name: &str, e: u32, a: u32| {
        if cfg.ignore_fields.iter().any(|f| f == name) {
            Ok(())
        } else {
            field(name, e, a)
        }
    };
    let script_opts_len = spec.options.as_ref().map(|o| options_len(o)).unwrap_or(0);
    let actual_opts_len = options_len(&a.options);
    let allowance = if spec.options.is_none() { actual_opts_len } else { 0 };
    chk("ipv4_total_length", 40 + script_opts_len + allowance + spec.payload, 40 + actual_opts_len + a.payload)?;
    let ecn_bits = a.ecn as u32;
    match spec.ip {
        None => {}
        Some(IpCheck::Ecn(v)) => chk("ip_ecn", v as u32, ecn_bits)?,
        Some(IpCheck::Ect01) if ecn_bits != 1 && ecn_bits != 2 => {
            return Err(format!("live packet field ip_ecn: expected: 0x1 or 0x2 vs actual: {ecn_bits:#x}"));
        }
        Some(IpCheck::Ect01) => {}
        // The model has no TOS byte besides ECN.
        Some(IpCheck::Tos(v)) => chk("tos", v as u32, ecn_bits)?,
    }
    let b = |x: TcpFlags| a.flags.contains(x) as u32;
    let f = &spec.flags;
    chk("tcp_data_offset", (20 + script_opts_len + allowance).div_ceil(4), (20 + actual_opts_len).div_ceil(4))?;
    let s = |x: PacketFlag| f.has(x) as u32;
    chk("tcp_fin", s(PacketFlag::Fin), b(TcpFlags::FIN))?;
    chk("tcp_syn", s(PacketFlag::Syn), b(TcpFlags::SYN))?;
    chk("tcp_rst", s(PacketFlag::Rst), b(TcpFlags::RST))?;
    chk("tcp_psh", s(PacketFlag::Psh), b(TcpFlags::PSH))?;
    chk("tcp_ack", s(PacketFlag::Ack), b(TcpFlags::ACK))?;
    chk("tcp_urg", s(PacketFlag::Urg), b(TcpFlags::URG))?;
    chk("tcp_ece", s(PacketFlag::Ece), b(TcpFlags::ECE))?;
    chk("tcp_cwr", s(PacketFlag::Cwr), b(TcpFlags::CWR))?;
    chk("tcp_seq", spec.seq, a.seq)?;
    chk("tcp_ack_seq", spec.ack.unwrap_or(0), a.ack)?;
    if let Some(w) = spec.win {
        chk("tcp_window", w as u32, a.window as u32)?;
    }
    chk("tcp_urg_ptr", spec.urg.unwrap_or(0) as u32, 0)?;
    if let Some(script_opts) = &spec.options {
        verify_options(script_opts, &a.options, cfg)?;
    }
    Ok(())
}

fn verify_options(script: &[TcpOpt], actual: &[TcpOpt], cfg: &MatchConfig) -> Result<(), String> {
    let mut si = script.iter();
    let mut ai = actual.iter();
    loop {
        match (si.next(), ai.next()) {
            (None, None) => return Ok(()),
            (Some(s), Some(a)) if s.kind() == a.kind() => match (s, a) {
                (TcpOpt::Nop, _) | (TcpOpt::Eol, _) => {}
                (TcpOpt::Timestamp { val: sv, .. }, TcpOpt::Timestamp { val: av, .. }) => {
                    if cfg.ts_tick_usecs > 0 {
                        let diff = (av.wrapping_sub(*sv) as i32).unsigned_abs() as i64;
                        if diff * cfg.ts_tick_usecs as i64 > cfg.tolerance_usecs {
                            return Err(format!(
                                "bad outbound TCP timestamp value, tolerance {}: expected: {} actual: {}",
                                cfg.tolerance_usecs,
                                fmt_opt(s),
                                fmt_opt(a)
                            ));
                        }
                    }
                }
                _ => {
                    if s.wire_len() != a.wire_len() {
                        return Err(format!(
                            "bad length in outbound TCP option (kind={}): expected: {} actual: {}",
                            s.kind(),
                            fmt_opt(s),
                            fmt_opt(a)
                        ));
                    }
                    if s != a {
                        return Err(format!(
                            "bad value in outbound TCP option (kind={}): expected: {} actual: {}",
                            s.kind(),
                            fmt_opt(s),
                            fmt_opt(a)
                        ));
                    }
                }
            },
            _ => {
                return Err(format!(
                    "bad outbound TCP options: expected: <{}> actual: <{}>",
                    fmt_opts(script),
                    fmt_opts(actual)
                ))
            }
        }
    }
}

/// One option as packetdrill prints it.
pub fn fmt_opt(o: &TcpOpt) -> String {
    match o {
        TcpOpt::Nop => "nop".into(),
        TcpOpt::Eol => "eol".into(),
        TcpOpt::Mss(m) => format!("mss {m}"),
        TcpOpt::Wscale(w) => format!("wscale {w}"),
        TcpOpt::SackOk => "sackOK".into(),
        TcpOpt::Sack(b) => {
            let v: Vec<String> = b.iter().map(|(l, r)| format!("{l}:{r}")).collect();
            format!("sack {}", v.join(" "))
        }
        TcpOpt::Timestamp { val, ecr } => format!("TS val {val} ecr {ecr}"),
        TcpOpt::Other(t) => t.clone(),
    }
}

pub fn fmt_opts(opts: &[TcpOpt]) -> String {
    opts.iter().map(fmt_opt).collect::<Vec<_>>().join(",")
}

fn fmt_ecn(e: Ecn) -> &'static str {
    match e {
        Ecn::NotEct => "",
        Ecn::Ect1 => "[ect1] ",
        Ecn::Ect0 => "[ect0] ",
        Ecn::Ce => "[ce] ",
    }
}

/// Flag letters in script order (`S`, `F`, `R`, `P`, `U`, `E`, `W`, then `.`).
pub fn fmt_flags(f: TcpFlags) -> String {
    let s = format!("{f:?}");
    if s.is_empty() {
        "-".into()
    } else {
        s
    }
}

/// `0.200000 P. 1:1001(1000) ack 1 win 257 <...>` for a live packet.
pub fn fmt_actual(a: &Actual) -> String {
    let mut s = format!(
        "{:9.6} {}{} {}:{}({})",
        a.time_us as f64 / 1e6,
        fmt_ecn(a.ecn),
        fmt_flags(a.flags),
        a.seq,
        a.seq.wrapping_add(a.payload),
        a.payload
    );
    if a.flags.ack() {
        s.push_str(&format!(" ack {}", a.ack));
    }
    s.push_str(&format!(" win {}", a.window));
    if !a.options.is_empty() {
        s.push_str(&format!(" <{}>", fmt_opts(&a.options)));
    }
    s
}

/// The script line's packet, as packetdrill prints it in error dumps.
pub fn fmt_script(spec: &PacketSpec, time_us: i64) -> String {
    let ecn = match spec.ip {
        Some(IpCheck::Ecn(0)) => "[noecn] ",
        Some(IpCheck::Ecn(1)) => "[ect1] ",
        Some(IpCheck::Ecn(2)) => "[ect0] ",
        Some(IpCheck::Ecn(_)) => "[ce] ",
        Some(IpCheck::Ect01) => "[ect01] ",
        Some(IpCheck::Tos(_)) | None => "",
    };
    let mut s =
        format!("{:9.6} {}{} {}:{}({})", time_us as f64 / 1e6, ecn, spec.flags, spec.seq, spec.end_seq, spec.payload);
    if let Some(a) = spec.ack {
        s.push_str(&format!(" ack {a}"));
    }
    if let Some(w) = spec.win {
        s.push_str(&format!(" win {w}"));
    }
    match &spec.options {
        None => s.push_str(" <...>"),
        Some(o) if !o.is_empty() => s.push_str(&format!(" <{}>", fmt_opts(o))),
        Some(_) => {}
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn actual(seq: u32, payload: u32, flags: TcpFlags) -> Actual {
        Actual { time_us: 0, flags, seq, ack: 1, window: 100, payload, ecn: Ecn::NotEct, options: vec![] }
    }

    #[test]
    fn test_linux_layout_synack_without_ts() {
        let o = TcpOptions { mss: Some(1460), sack_permitted: true, wscale: Some(8), ..Default::default() };
        assert_eq!(fmt_opts(&linux_option_layout(&o)), "mss 1460,nop,nop,sackOK,nop,wscale 8");
        let o = TcpOptions {
            mss: Some(1460),
            sack_permitted: true,
            wscale: Some(8),
            timestamp: Some((5, 0)),
            ..Default::default()
        };
        assert_eq!(fmt_opts(&linux_option_layout(&o)), "mss 1460,sackOK,TS val 5 ecr 0,nop,wscale 8");
    }

    #[test]
    fn test_fragment_rules() {
        let ack = TcpFlags::ACK;
        let a = actual(1, 1000, ack);
        assert!(check_fragment(&a, &actual(1001, 1000, ack), 1000, 3000).is_ok());
        let e = check_fragment(&a, &actual(1, 1000, ack), 1000, 3000).unwrap_err();
        assert_eq!(e, "live packet field tcp_seq: expected: 1001 (0x3e9) vs actual: 1 (0x1)");
        // A short fragment is allowed only last.
        assert!(check_fragment(&a, &actual(1001, 500, ack), 1000, 1500).is_ok());
        assert!(check_fragment(&a, &actual(1001, 500, ack), 1000, 3000).is_err());
        let j = aggregate(&[a, actual(1001, 500, TcpFlags::ACK | TcpFlags::PSH)]);
        assert_eq!((j.seq, j.payload, j.flags.contains(TcpFlags::PSH)), (1, 1500, true));
    }
}
