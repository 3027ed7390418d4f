//! MIB counters under their nstat names (include/uapi/linux/snmp.h).
//!
//! One fixed array indexed by [`Mib`], so incrementing is a store, and a
//! run's counters sum across flows by adding arrays. Only counters that the
//! model actually increments are listed; adding one means adding the variant
//! and its name here and the increment at the kernel's call site.

macro_rules! mibs {
    ($($name:ident),* $(,)?) => {
        /// A counter, named as `nstat` prints it.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        #[allow(non_camel_case_types)]
        pub enum Mib { $($name),* }

        impl Mib {
            pub const ALL: &'static [Mib] = &[$(Mib::$name),*];
            pub const COUNT: usize = Self::ALL.len();
            /// The nstat name, e.g. `TcpExtTCPFastRetrans`.
            pub fn name(self) -> &'static str {
                match self { $(Mib::$name => stringify!($name)),* }
            }
            /// Looks a counter up by its nstat name.
            pub fn from_name(name: &str) -> Option<Mib> {
                Self::ALL.iter().copied().find(|m| m.name() == name)
            }
        }
    };
}

mibs! {
    TcpActiveOpens,
    TcpPassiveOpens,
    TcpOutSegs,
    TcpInSegs,
    TcpRetransSegs,
    TcpOutRsts,
    TcpExtTCPFastRetrans,
    TcpExtTCPSlowStartRetrans,
    TcpExtTCPLostRetransmit,
    TcpExtTCPTimeouts,
    TcpExtTCPSackRecovery,
    TcpExtTCPRenoRecovery,
    TcpExtTCPSACKReorder,
    TcpExtTCPRenoReorder,
    TcpExtTCPTSReorder,
    TcpExtTCPFACKReorder,
    TcpExtTCPDSACKRecv,
    TcpExtTCPDSACKOfoRecv,
    TcpExtTCPDSACKOldSent,
    TcpExtTCPDSACKOfoSent,
    TcpExtTCPDSACKUndo,
    TcpExtTCPFullUndo,
    TcpExtTCPPartialUndo,
    TcpExtTCPLossUndo,
    TcpExtTCPSpuriousRTOs,
    TcpExtTCPSACKReneging,
    TcpExtTCPSackFailures,
    TcpExtTCPLossFailures,
    TcpExtTCPSackRecoveryFail,
    TcpExtDelayedACKs,
    TcpExtDelayedACKLost,
    TcpExtTCPHystartTrainDetect,
    TcpExtTCPHystartTrainCwnd,
    TcpExtTCPHystartDelayDetect,
    TcpExtTCPHystartDelayCwnd,
    TcpExtTCPLossProbes,
    TcpExtTCPLossProbeRecovery,
    TcpExtTCPDelivered,
    TcpExtTCPDeliveredCE,
    TcpExtTCPPureAcks,
    TcpExtTCPHPAcks,
    TcpExtTCPOFOQueue,
    TcpExtTCPOFODrop,
    TcpExtTCPOFOMerge,
    TcpExtTCPRcvQDrop,
    TcpExtTCPZeroWindowDrop,
    TcpExtPruneCalled,
    TcpExtRcvPruned,
    TcpExtOfoPruned,
    TcpExtTCPAckCompressed,
    TcpExtTCPACKSkippedSeq,
    TcpExtTCPSynRetrans,
    TcpExtTCPWinProbe,
    TcpExtPAWSEstab,
    // tcplab-only, not in Linux (which has no HyStart++): RFC 9406
    // HyStart++ (cc/hystart_plus.rs) for CUBIC and Reno. CSS entries
    // (slow start -> CSS), CSS resumes (CSS -> slow start: the exit was
    // spurious), exits (CSS_ROUNDS done: ssthresh = cwnd) and the sum of
    // cwnd at those exits, as TCPHystartDelayCwnd sums Linux's.
    TcplabHystartPlusPlusCssEntries,
    TcplabHystartPlusPlusCssResumes,
    TcplabHystartPlusPlusExits,
    TcplabHystartPlusPlusExitCwnd,
}

/// A set of counters, one per [`Mib`].
///
/// Linux keeps them 64-bit. Here each keeps its low 16 bits inline and
/// the rest, once it has any, in a table allocated on the first carry:
/// an idle connection's counters take 124 bytes where 64-bit ones take
/// 464 (issue 15's memory per connection), a busy one pays one
/// table (a bulk flow's segment counts carry after 65,536), counting
/// costs one add and one seldom-taken branch, and a count wraps only
/// where Linux's would, at 2^64.
#[derive(Clone, Debug)]
pub struct Counters {
    low: [u16; Mib::COUNT],
    high: Option<Box<[u64; Mib::COUNT]>>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters { low: [0; Mib::COUNT], high: None }
    }
}

impl PartialEq for Counters {
    fn eq(&self, other: &Self) -> bool {
        Mib::ALL.iter().all(|m| self.get(*m) == other.get(*m))
    }
}

impl Eq for Counters {}

impl Counters {
    /// `NET_INC_STATS`.
    #[inline]
    pub fn inc(&mut self, m: Mib) {
        self.add(m, 1);
    }
    /// `NET_ADD_STATS`.
    #[inline]
    pub fn add(&mut self, m: Mib, v: u64) {
        let i = m as usize;
        let (low, carried) = self.low[i].overflowing_add(v as u16);
        self.low[i] = low;
        let carry = (v >> 16) + carried as u64;
        if carry != 0 {
            self.carry(i, carry);
        }
    }
    #[inline]
    pub fn get(&self, m: Mib) -> u64 {
        let i = m as usize;
        let high = self.high.as_deref().map_or(0, |h| h[i]);
        (high << 16) | u64::from(self.low[i])
    }
    /// Adds `carry` units of 2^16 to counter `i`.
    #[cold]
    fn carry(&mut self, i: usize, carry: u64) {
        let high = self.high.get_or_insert_with(|| Box::new([0; Mib::COUNT]));
        high[i] = high[i].wrapping_add(carry);
    }
    /// Adds every counter of `other` into `self`.
    pub fn merge(&mut self, other: &Counters) {
        for m in Mib::ALL {
            let v = other.get(*m);
            if v != 0 {
                self.add(*m, v);
            }
        }
    }
    /// Non-zero counters with their nstat names, in declaration order.
    pub fn nonzero(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Mib::ALL.iter().filter(move |m| self.get(**m) != 0).map(move |m| (m.name(), self.get(*m)))
    }
    /// Every counter with its nstat name.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, u64)> + '_ {
        Mib::ALL.iter().map(move |m| (m.name(), self.get(*m)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_round_trip_and_merge() {
        assert_eq!(Mib::from_name("TcpExtTCPFastRetrans"), Some(Mib::TcpExtTCPFastRetrans));
        let mut a = Counters::default();
        let mut b = Counters::default();
        a.inc(Mib::TcpOutSegs);
        b.add(Mib::TcpOutSegs, 2);
        a.merge(&b);
        assert_eq!(a.get(Mib::TcpOutSegs), 3);
        assert_eq!(a.nonzero().collect::<Vec<_>>(), vec![("TcpOutSegs", 3)]);
    }

    #[test]
    fn test_a_counter_past_16_bits_carries_into_its_high_part() {
        let mut a = Counters::default();
        for _ in 0..u16::MAX {
            a.inc(Mib::TcpOutSegs);
        }
        assert_eq!(a.get(Mib::TcpOutSegs), 65_535);
        assert!(a.high.is_none(), "no table before the first carry");
        a.inc(Mib::TcpOutSegs);
        assert_eq!(a.get(Mib::TcpOutSegs), 65_536);
        a.add(Mib::TcpOutSegs, 65_535 * 3);
        assert_eq!(a.get(Mib::TcpOutSegs), 65_536 * 4 - 3);
        // Linux's counters are 64-bit: they wrap at 2^64, and only there.
        let mut w = Counters::default();
        w.add(Mib::TcpOutSegs, u64::MAX);
        assert_eq!(w.get(Mib::TcpOutSegs), u64::MAX);
        w.inc(Mib::TcpOutSegs);
        assert_eq!(w.get(Mib::TcpOutSegs), 0);
        let mut a = Counters::default();
        a.add(Mib::TcpInSegs, 7);
        a.add(Mib::TcpOutSegs, u32::MAX as u64);
        assert_eq!(a.get(Mib::TcpOutSegs), u32::MAX as u64);
        a.inc(Mib::TcpOutSegs);
        assert_eq!(a.get(Mib::TcpOutSegs), 1 << 32);
        assert_eq!(a.get(Mib::TcpInSegs), 7);
        a.add(Mib::TcpInSegs, 1 << 40);
        assert_eq!(a.get(Mib::TcpInSegs), (1 << 40) + 7);
        // Equality is by value, whatever the width.
        let mut b = Counters::default();
        b.add(Mib::TcpOutSegs, 1 << 32);
        b.add(Mib::TcpInSegs, (1 << 40) + 7);
        assert_eq!(a, b);
        let mut c = Counters::default();
        c.merge(&b);
        assert_eq!(c, a);
    }
}
