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
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Counters([u64; Mib::COUNT]);

impl Default for Counters {
    fn default() -> Self {
        Counters([0; Mib::COUNT])
    }
}

impl Counters {
    /// `NET_INC_STATS`.
    #[inline]
    pub fn inc(&mut self, m: Mib) {
        self.0[m as usize] += 1;
    }
    /// `NET_ADD_STATS`.
    #[inline]
    pub fn add(&mut self, m: Mib, v: u64) {
        self.0[m as usize] += v;
    }
    #[inline]
    pub fn get(&self, m: Mib) -> u64 {
        self.0[m as usize]
    }
    /// Adds every counter of `other` into `self`.
    pub fn merge(&mut self, other: &Counters) {
        for (a, b) in self.0.iter_mut().zip(other.0.iter()) {
            *a += *b;
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
}
