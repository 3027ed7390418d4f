//! Deterministic random numbers: PCG32 with one stream per component.
//!
//! PCG-XSH-RR 64/32 from M. E. O'Neill, "PCG: A Family of Simple Fast
//! Space-Efficient Statistically Good Algorithms for Random Number
//! Generation", HMC-CS-2014-0905 (2014), as in the reference `pcg32_random_r`
//! and `pcg32_srandom_r` of pcg-c-basic. 64-bit LCG state, 32-bit output.
//!
//! Every random component of a run (a link direction's delay model, a flow's
//! initial sequence numbers) owns its own generator, seeded from the master
//! seed and a *stable component key* ([`Component`]). A component's sequence
//! therefore depends only on the master seed and its own key: adding a flow
//! or appending a link leaves every other component's randomness unchanged
//! (smoltcp `tests/netsim.rs` seeds one RNG per link likewise).

/// The LCG multiplier of PCG32 (`PCG_DEFAULT_MULTIPLIER_64`, O'Neill 2014;
/// Knuth's MMIX multiplier).
pub const PCG_DEFAULT_MULTIPLIER_64: u64 = 6_364_136_223_846_793_005;
/// The default increment of PCG32 (`PCG_DEFAULT_INCREMENT_64`).
pub const PCG_DEFAULT_INCREMENT_64: u64 = 1_442_695_040_888_963_407;

/// A PCG32 generator (PCG-XSH-RR 64/32). Plain data, no global state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pcg32 {
    state: u64,
    /// Stream selector; always odd.
    inc: u64,
}

impl Default for Pcg32 {
    fn default() -> Self {
        // pcg-c-basic's PCG32_INITIALIZER.
        Pcg32 { state: 0x853c_49e6_748f_ea9b, inc: PCG_DEFAULT_INCREMENT_64 | 1 }
    }
}

impl Pcg32 {
    /// `pcg32_srandom_r(initstate, initseq)`: `initseq` selects the stream.
    pub fn new(initstate: u64, initseq: u64) -> Pcg32 {
        let mut rng = Pcg32 { state: 0, inc: (initseq << 1) | 1 };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(initstate);
        rng.next_u32();
        rng
    }

    /// The generator of one component of a run. The component key both
    /// selects the PCG stream and is mixed (SplitMix64) into the initial
    /// state, so that components differ even where PCG streams of the same
    /// state would be correlated.
    pub fn for_component(master_seed: u64, component: Component) -> Pcg32 {
        let key = component.key();
        Pcg32::new(splitmix64(master_seed ^ splitmix64(key)), key)
    }

    /// `pcg32_random_r`.
    #[inline]
    pub fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(PCG_DEFAULT_MULTIPLIER_64).wrapping_add(self.inc);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        let rot = (old >> 59) as u32;
        xorshifted.rotate_right(rot)
    }

    /// Two outputs, high word first.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let hi = self.next_u32() as u64;
        let lo = self.next_u32() as u64;
        (hi << 32) | lo
    }

    /// Uniform in `[0, n)`, unbiased (Lemire's multiply-shift with
    /// rejection, "Fast Random Integer Generation in an Interval", 2019).
    /// Returns 0 when `n == 0`.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        let mut m = self.next_u64() as u128 * n as u128;
        if (m as u64) < n {
            let threshold = n.wrapping_neg() % n;
            while (m as u64) < threshold {
                m = self.next_u64() as u128 * n as u128;
            }
        }
        (m >> 64) as u64
    }

    /// Uniform in `[0, max]` (inclusive).
    #[inline]
    pub fn up_to(&mut self, max: u64) -> u64 {
        if max == u64::MAX {
            self.next_u64()
        } else {
            self.below(max + 1)
        }
    }
}

/// A random component of a run, identified by its stable index in the
/// [`SimConfig`](crate::config::SimConfig).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Component {
    /// One direction of link `link` (`reverse` = b → a).
    LinkDirection { link: usize, reverse: bool },
    /// Flow `flow` (initial sequence numbers).
    Flow { flow: usize },
    /// The loss model of one link direction: its own stream, so that
    /// adding loss leaves the direction's delay draws unchanged.
    LinkLoss { link: usize, reverse: bool },
    /// Node `node`'s multipath hash key (`fib_multipath_hash_seed`).
    Multipath { node: usize },
}

impl Component {
    /// A 64-bit key unique per component: kind in the top byte, index and
    /// direction below.
    fn key(self) -> u64 {
        match self {
            Component::LinkDirection { link, reverse } => (1u64 << 56) | ((link as u64) << 1) | reverse as u64,
            Component::Flow { flow } => (2u64 << 56) | flow as u64,
            Component::LinkLoss { link, reverse } => (3u64 << 56) | ((link as u64) << 1) | reverse as u64,
            Component::Multipath { node } => (4u64 << 56) | node as u64,
        }
    }
}

/// SplitMix64 finalizer (Steele, Lea, Flood, "Fast Splittable Pseudorandom
/// Number Generators", OOPSLA 2014), used only to spread seeds.
#[inline]
pub fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_pcg32_matches_reference_demo_output() {
        // pcg32-demo (pcg-c-basic) with `pcg32_srandom_r(&rng, 42u, 54u)`.
        let mut rng = Pcg32::new(42, 54);
        let got: Vec<u32> = (0..6).map(|_| rng.next_u32()).collect();
        assert_eq!(got, [0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e]);
    }

    #[test]
    fn test_components_have_distinct_streams() {
        let a: Vec<u32> = {
            let mut r = Pcg32::for_component(1, Component::LinkDirection { link: 0, reverse: false });
            (0..8).map(|_| r.next_u32()).collect()
        };
        let b: Vec<u32> = {
            let mut r = Pcg32::for_component(1, Component::LinkDirection { link: 0, reverse: true });
            (0..8).map(|_| r.next_u32()).collect()
        };
        let c: Vec<u32> = {
            let mut r = Pcg32::for_component(1, Component::Flow { flow: 0 });
            (0..8).map(|_| r.next_u32()).collect()
        };
        let a2: Vec<u32> = {
            let mut r = Pcg32::for_component(2, Component::LinkDirection { link: 0, reverse: false });
            (0..8).map(|_| r.next_u32()).collect()
        };
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, a2);
    }

    #[test]
    fn test_below_stays_in_range_and_covers_it() {
        let mut rng = Pcg32::new(7, 7);
        let mut seen = [false; 5];
        for _ in 0..1000 {
            let x = rng.below(5);
            assert!(x < 5);
            seen[x as usize] = true;
        }
        assert!(seen.iter().all(|s| *s));
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.up_to(0), 0);
        let _ = rng.up_to(u64::MAX);
    }
}
