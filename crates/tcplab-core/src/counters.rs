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

/// How many non-zero counters a set keeps inline before it spills to a
/// full-width table. An established connection that has only exchanged a
/// request and a response has fewer than ten non-zero.
const INLINE: usize = 16;

const _: () = assert!(Mib::COUNT <= 64, "`Counters::present` has one bit per counter");

/// A set of counters, one per [`Mib`].
///
/// Linux keeps them 64-bit, per network namespace. The model keeps them per
/// connection, so their size is paid once per connection end (issue 15:
/// memory per idle connection): the few non-zero counters of a quiet
/// connection sit inline, 16 bits each, in `Mib` order, and a bitmask says
/// which. The first counter to pass 16 bits, or the seventeenth to become
/// non-zero, moves the set to a 64-bit table (allocated once; a bulk
/// flow's segment counts get there after 65,536 segments). 48 bytes
/// inline where 64-bit counters take 464; counting costs a mask test, a
/// population count and an add; a count wraps only where Linux's would,
/// at 2^64.
#[derive(Clone, Debug)]
pub struct Counters {
    /// Bit `i` set: counter `i` has an inline slot. Zero once `full`.
    present: u64,
    /// The present counters' values, in `Mib` order: counter `i`'s slot is
    /// the number of present counters before it.
    inline: [u16; INLINE],
    /// Every counter, once the inline slots no longer suffice.
    full: Option<Box<[u64; Mib::COUNT]>>,
}

impl Default for Counters {
    fn default() -> Self {
        Counters { present: 0, inline: [0; INLINE], full: None }
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
        if let Some(full) = self.full.as_deref_mut() {
            full[i] = full[i].wrapping_add(v);
            return;
        }
        let bit = 1u64 << i;
        let slot = (self.present & (bit - 1)).count_ones() as usize;
        if self.present & bit != 0 {
            if let Some(sum) = u16::try_from(v).ok().and_then(|v| self.inline[slot].checked_add(v)) {
                self.inline[slot] = sum;
                return;
            }
        } else if v == 0 {
            return;
        } else if v <= u64::from(u16::MAX) && (self.present.count_ones() as usize) < INLINE {
            let used = self.present.count_ones() as usize;
            self.inline.copy_within(slot..used, slot + 1);
            self.inline[slot] = v as u16;
            self.present |= bit;
            return;
        }
        let full = self.spill();
        full[i] = full[i].wrapping_add(v);
    }
    #[inline]
    pub fn get(&self, m: Mib) -> u64 {
        let i = m as usize;
        if let Some(full) = self.full.as_deref() {
            return full[i];
        }
        let bit = 1u64 << i;
        if self.present & bit == 0 {
            return 0;
        }
        u64::from(self.inline[(self.present & (bit - 1)).count_ones() as usize])
    }
    /// Moves the inline counters to a full-width table.
    #[cold]
    fn spill(&mut self) -> &mut [u64; Mib::COUNT] {
        let mut full = Box::new([0; Mib::COUNT]);
        let mut present = self.present;
        let mut slot = 0;
        while present != 0 {
            full[present.trailing_zeros() as usize] = u64::from(self.inline[slot]);
            present &= present - 1;
            slot += 1;
        }
        self.present = 0;
        self.inline = [0; INLINE];
        self.full.insert(full)
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
    fn test_a_counter_past_16_bits_moves_the_set_to_full_width() {
        let mut a = Counters::default();
        a.inc(Mib::TcpInSegs);
        for _ in 0..u16::MAX {
            a.inc(Mib::TcpOutSegs);
        }
        assert_eq!(a.get(Mib::TcpOutSegs), 65_535);
        assert!(a.full.is_none(), "no table before the first carry");
        a.inc(Mib::TcpOutSegs);
        assert!(a.full.is_some());
        assert_eq!(a.get(Mib::TcpOutSegs), 65_536);
        assert_eq!(a.get(Mib::TcpInSegs), 1, "the other inline counters move with it");
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

    #[test]
    fn test_sixteen_counters_stay_inline_and_the_seventeenth_spills() {
        let mut a = Counters::default();
        // Every other counter, backwards, so that each lands before the others.
        let picked: Vec<Mib> = Mib::ALL.iter().copied().step_by(2).take(INLINE + 1).collect();
        for (n, m) in picked.iter().take(INLINE).enumerate().rev() {
            a.add(*m, n as u64 + 1);
        }
        a.add(Mib::TcpOutRsts, 0);
        assert!(a.full.is_none());
        assert_eq!(a.present.count_ones() as usize, INLINE, "adding 0 takes no slot");
        a.add(picked[INLINE], INLINE as u64 + 1);
        assert!(a.full.is_some());
        for (n, m) in picked.iter().enumerate() {
            assert_eq!(a.get(*m), n as u64 + 1, "{}", m.name());
        }
        assert_eq!(a.nonzero().count(), INLINE + 1);
    }

    proptest::proptest! {
        /// Whatever is added, in whatever order, each counter reads back as
        /// a plain 64-bit counter (wrapping) would.
        #[test]
        fn prop_counters_read_as_64_bit_counters(
            ops in proptest::collection::vec((0..Mib::COUNT, proptest::prop_oneof![0..4u64, 60_000..70_000u64, proptest::num::u64::ANY]), 0..200)
        ) {
            let mut a = Counters::default();
            let mut want = [0u64; Mib::COUNT];
            for (i, v) in ops {
                a.add(Mib::ALL[i], v);
                want[i] = want[i].wrapping_add(v);
                proptest::prop_assert_eq!(a.get(Mib::ALL[i]), want[i]);
            }
            for (i, m) in Mib::ALL.iter().enumerate() {
                proptest::prop_assert_eq!(a.get(*m), want[i]);
            }
        }
    }
}
