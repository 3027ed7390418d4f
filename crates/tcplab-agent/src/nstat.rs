//! SNMP and extended counters of a namespace, named as `nstat` names them.
//!
//! `/proc/net/netstat` and `/proc/net/snmp` hold pairs of lines, a header
//! and its values, both starting with the same group tag:
//!
//! ```text
//! TcpExt: SyncookiesSent SyncookiesRecv ...
//! TcpExt: 0 0 ...
//! ```
//!
//! `nstat` names a counter by the tag without its colon followed by the
//! field: `TcpExtSyncookiesSent`, `TcpActiveOpens`, `IpExtInOctets`. The
//! files are read through `/proc/<tid>/net/`, which shows the namespace of
//! the reading thread (`/proc/net` is `/proc/self/net`, the main
//! thread's; `/proc/<tid>` names the thread itself). `/proc/thread-self`
//! would say the same, but it came in 3.17 (fs/proc/thread_self.c), and
//! the 3.12 guest has no `/proc/self/task/<tid>/net` either (3.18 has).

use crate::netns;

/// Whether counter `name` is one the lab keeps: the IP, TCP and UDP
/// groups (`Ip*`, `IpExt*`, `Tcp*`, `TcpExt*`, `Udp*`, `UdpLite*`), not
/// ICMP or MPTCP.
pub fn wanted(name: &str) -> bool {
    ["Ip", "Tcp", "Udp"].iter().any(|p| name.starts_with(p))
}

/// Parses one file's header/value line pairs into `(name, value)`,
/// appending to `out`. Negative values (`TcpMaxConn` is -1: no limit) and
/// values that are not numbers are skipped; a value line that does not
/// follow a header with the same tag is an error.
pub fn parse(text: &str, out: &mut Vec<(String, u64)>) -> Result<(), String> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    while let Some(header) = lines.next() {
        let Some(values) = lines.next() else {
            return Err(format!("header line without values: {header:?}"));
        };
        let (tag, names) = split_tag(header)?;
        let (vtag, vals) = split_tag(values)?;
        if tag != vtag {
            return Err(format!("header {tag:?} followed by values of {vtag:?}"));
        }
        let names: Vec<&str> = names.split_whitespace().collect();
        let vals: Vec<&str> = vals.split_whitespace().collect();
        if names.len() != vals.len() {
            return Err(format!("{tag}: {} names but {} values", names.len(), vals.len()));
        }
        for (n, v) in names.iter().zip(vals) {
            let name = format!("{tag}{n}");
            if !wanted(&name) {
                continue;
            }
            if let Ok(v) = v.parse::<u64>() {
                out.push((name, v));
            }
        }
    }
    Ok(())
}

fn split_tag(line: &str) -> Result<(&str, &str), String> {
    line.split_once(':').ok_or_else(|| format!("line without a group tag: {line:?}"))
}

/// The calling thread's `netstat` and `snmp` files.
fn thread_net_files() -> [String; 2] {
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    ["netstat", "snmp"].map(|f| format!("/proc/{tid}/net/{f}"))
}

/// Every wanted counter of namespace `ns`, netstat's first then snmp's.
pub fn read(ns: &str) -> Result<Vec<(String, u64)>, String> {
    netns::run_in(Some(ns), || {
        let mut out = Vec::new();
        for file in thread_net_files() {
            let file = file.as_str();
            let text = std::fs::read_to_string(file).map_err(|e| format!("namespace {ns}: read {file}: {e}"))?;
            parse(&text, &mut out).map_err(|e| format!("namespace {ns}: {file}: {e}"))?;
        }
        Ok(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NETSTAT: &str = "\
TcpExt: SyncookiesSent SyncookiesRecv TCPSACKReorder TCPDSACKRecv
TcpExt: 0 0 17 3
IpExt: InNoRoutes InOctets OutOctets
IpExt: 0 123456789012 42
MPTcpExt: MPCapableSYNRX
MPTcpExt: 5
";

    const SNMP: &str = "\
Ip: Forwarding DefaultTTL InReceives
Ip: 1 64 1000
Icmp: InMsgs InErrors
Icmp: 4 0
Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens
Tcp: 1 200 120000 -1 2
Udp: InDatagrams NoPorts
Udp: 7 1
UdpLite: InDatagrams
UdpLite: 0
";

    #[test]
    fn names_as_nstat_prints_them() {
        let mut out = Vec::new();
        parse(NETSTAT, &mut out).unwrap();
        parse(SNMP, &mut out).unwrap();
        let get = |n: &str| out.iter().find(|(k, _)| k == n).map(|(_, v)| *v);
        assert_eq!(get("TcpExtTCPSACKReorder"), Some(17));
        assert_eq!(get("TcpExtTCPDSACKRecv"), Some(3));
        assert_eq!(get("IpExtInOctets"), Some(123456789012));
        assert_eq!(get("IpForwarding"), Some(1));
        assert_eq!(get("TcpActiveOpens"), Some(2));
        assert_eq!(get("UdpNoPorts"), Some(1));
        assert_eq!(get("UdpLiteInDatagrams"), Some(0));
        // Negative: skipped; other groups: not kept.
        assert_eq!(get("TcpMaxConn"), None);
        assert_eq!(get("IcmpInMsgs"), None);
        assert_eq!(get("MPTcpExtMPCapableSYNRX"), None);
        // File order is kept.
        assert_eq!(out[0].0, "TcpExtSyncookiesSent");
    }

    #[test]
    fn malformed_text_is_an_error() {
        let mut out = Vec::new();
        assert!(parse("TcpExt: A B\n", &mut out).is_err());
        assert!(parse("TcpExt: A B\nIpExt: 1 2\n", &mut out).is_err());
        assert!(parse("TcpExt: A B\nTcpExt: 1\n", &mut out).is_err());
        assert!(parse("no tag here\nTcpExt: 1\n", &mut out).is_err());
    }

    #[test]
    fn reads_the_callers_own_files() {
        // The host's own counters parse (no namespace needed for this).
        let mut out = Vec::new();
        let files = super::thread_net_files();
        assert!(files[0].starts_with("/proc/") && files[0].ends_with("/net/netstat"));
        for f in files {
            let t = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{f}: {e}"));
            parse(&t, &mut out).unwrap();
        }
        assert!(out.iter().any(|(n, _)| n == "TcpActiveOpens"), "{out:?}");
    }
}
