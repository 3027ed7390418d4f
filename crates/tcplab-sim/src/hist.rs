//! A log-linear latency histogram (HdrHistogram's bucket layout, integer
//! only, deterministic).
//!
//! Values are integer nanoseconds. Values below 2048 have a bucket each
//! (exact). Above, every power-of-two range `[2^(e+10), 2^(e+11))` is cut
//! into 1024 equal buckets of width `2^e`, so a bucket's lowest value is
//! within `1/1024 < 0.098 %` of every value in it. A quantile is reported
//! as the lowest value of the bucket holding the sample of that rank,
//! clamped to the exact recorded `[min, max]`: never above the true
//! sample and less than 0.1 % below it. The first and last ranks are the
//! exact minimum and maximum, so when every sample is the same all
//! quantiles are exact.
//!
//! Quantiles use the nearest-rank definition: the value at quantile `q`
//! is the smallest recorded value `v` such that at least `ceil(q·n)` (and
//! at least one) of the `n` samples are `≤ v` (HdrHistogram's
//! `getValueAtPercentile`). `q` is given as an exact fraction.
//!
//! Memory: only non-empty buckets are stored, as `(bucket, count)` pairs
//! in bucket order, 16 bytes each: a histogram costs what its samples
//! spread over, not what its range spans. (A dense array up to the largest
//! value took about 50 KB per RPC flow at 50 µs and 180 KB at 1 s, which
//! made 100,000 RPC flows need 15 GB.) Recording into a bucket already
//! seen allocates nothing; a new bucket is a binary search and an insert.

/// log2 of the buckets per power-of-two range.
const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;
/// Values below this have one bucket each.
const EXACT: u64 = 2 * SUB;

/// Bucket index of `v`.
#[inline]
fn index(v: u64) -> usize {
    if v < EXACT {
        return v as usize;
    }
    // v in [2^(e+10), 2^(e+11)), e >= 1.
    let e = 63 - v.leading_zeros() - SUB_BITS;
    (EXACT + (e as u64 - 1) * SUB + ((v >> e) - SUB)) as usize
}

/// Lowest value that falls into bucket `i`.
#[inline]
fn lowest(i: usize) -> u64 {
    let i = i as u64;
    if i < EXACT {
        return i;
    }
    let k = i - EXACT;
    let e = k / SUB + 1;
    (k % SUB + SUB) << e
}

/// Integer-nanosecond latency histogram; see the module docs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct LatencyHistogram {
    /// `(bucket index, count > 0)`, sorted by bucket.
    counts: Vec<(u32, u64)>,
    total: u64,
    min: u64,
    max: u64,
    /// Sum of all values (saturating), for the mean.
    sum: u128,
}

impl LatencyHistogram {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records one value (ns).
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = index(v) as u32;
        match self.counts.binary_search_by_key(&i, |e| e.0) {
            Ok(k) => self.counts[k].1 += 1,
            Err(k) => {
                // The first bucket alone: a flow that completes one RPC
                // keeps 16 bytes here, not the 64 a first insert reserves.
                if self.counts.capacity() == 0 {
                    self.counts.reserve_exact(1);
                }
                self.counts.insert(k, (i, 1))
            }
        }
        if self.total == 0 || v < self.min {
            self.min = v;
        }
        self.max = self.max.max(v);
        self.total += 1;
        self.sum += v as u128;
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.total
    }

    /// Smallest value recorded (exact; 0 if none).
    pub fn min(&self) -> u64 {
        self.min
    }

    /// Largest value recorded (exact; 0 if none).
    pub fn max(&self) -> u64 {
        self.max
    }

    /// Mean, rounded down (exact; 0 if none).
    pub fn mean(&self) -> u64 {
        if self.total == 0 {
            0
        } else {
            (self.sum / self.total as u128) as u64
        }
    }

    /// The value at quantile `num/den` (e.g. `999/1000` for p99.9), see
    /// the module docs; 0 if nothing was recorded. `num ≤ den`, `den > 0`.
    pub fn value_at_quantile(&self, num: u64, den: u64) -> u64 {
        if self.total == 0 || den == 0 {
            return 0;
        }
        let num = num.min(den) as u128;
        let rank = ((num * self.total as u128).div_ceil(den as u128)).max(1) as u64;
        if rank == 1 {
            return self.min;
        }
        if rank >= self.total {
            return self.max;
        }
        let mut seen = 0u64;
        for &(i, c) in &self.counts {
            seen += c;
            if seen >= rank {
                return lowest(i as usize).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// The cumulative distribution: for every non-empty bucket in
    /// increasing order, `(value, fraction of samples ≤ value)`, where
    /// `value` is the bucket's lowest value clamped to `[min, max]` as for
    /// quantiles, and the exact maximum for the last bucket (fraction 1.0).
    /// For CDF plots.
    pub fn cdf(&self) -> impl Iterator<Item = (u64, f64)> + '_ {
        let total = self.total as f64;
        let mut seen = 0u64;
        self.counts.iter().map(move |&(i, c)| {
            seen += c;
            let v = if seen == self.total { self.max } else { lowest(i as usize).clamp(self.min, self.max) };
            (v, seen as f64 / total)
        })
    }

    /// Adds every sample of `other`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        if other.total == 0 {
            return;
        }
        // Merge two bucket-sorted lists.
        let (a, b) = (&self.counts, &other.counts);
        let mut merged = Vec::with_capacity(a.len() + b.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.0 == y.0 => {
                    merged.push((x.0, x.1 + y.1));
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.0 > y.0 => {
                    merged.push(*y);
                    j += 1;
                }
                (Some(x), _) => {
                    merged.push(*x);
                    i += 1;
                }
                (None, Some(y)) => {
                    merged.push(*y);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        self.counts = merged;
        self.min = if self.total == 0 { other.min } else { self.min.min(other.min) };
        self.max = self.max.max(other.max);
        self.total += other.total;
        self.sum += other.sum;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_buckets_tile_the_range_and_bound_relative_error() {
        // Consecutive buckets: lowest(i+1) > lowest(i), and every value maps
        // into the bucket whose range holds it.
        for i in 0..(EXACT as usize + 40 * SUB as usize) {
            assert!(lowest(i + 1) > lowest(i), "bucket {i}");
            assert_eq!(index(lowest(i)), i);
            assert_eq!(index(lowest(i + 1) - 1), i);
            let (lo, hi) = (lowest(i), lowest(i + 1) - 1);
            // (hi - lo) / hi < 1/1024.
            assert!((hi - lo) * 1024 < hi.max(1), "bucket {i}: [{lo}, {hi}]");
        }
        assert_eq!(index(2047), 2047);
        assert_eq!(index(2048), 2048);
        assert_eq!(lowest(index(u64::MAX)), u64::MAX - (u64::MAX >> 11));
    }

    #[test]
    fn test_quantiles_nearest_rank_within_tenth_of_a_percent() {
        let mut h = LatencyHistogram::new();
        // 1..=1000 µs in ns.
        for v in 1..=1000u64 {
            h.record(v * 1000 + 7);
        }
        assert_eq!(h.count(), 1000);
        assert_eq!(h.min(), 1007);
        assert_eq!(h.max(), 1_000_007);
        for (num, den, exact) in [(1, 2, 500_007u64), (9, 10, 900_007), (99, 100, 990_007), (999, 1000, 999_007)] {
            let got = h.value_at_quantile(num, den);
            assert!(got <= exact && (exact - got) * 1000 < exact, "q {num}/{den}: {got} vs {exact}");
        }
        assert_eq!(h.value_at_quantile(1, 1), 1_000_007);
        assert_eq!(h.value_at_quantile(0, 1), 1007);
        assert_eq!(h.mean(), 500_507);
    }

    #[test]
    fn test_identical_samples_are_reported_exactly() {
        let mut h = LatencyHistogram::new();
        for _ in 0..10 {
            h.record(123_456_789);
        }
        for (n, d) in [(1, 2), (9, 10), (99, 100), (999, 1000)] {
            assert_eq!(h.value_at_quantile(n, d), 123_456_789);
        }
        let cdf: Vec<(u64, f64)> = h.cdf().collect();
        assert_eq!(cdf, [(123_456_789, 1.0)]);
    }

    #[test]
    fn test_merge_equals_recording_both() {
        let (mut a, mut b, mut both) = (LatencyHistogram::new(), LatencyHistogram::new(), LatencyHistogram::new());
        for v in [5u64, 70_000, 3_000_000_000] {
            a.record(v);
            both.record(v);
        }
        for v in [9u64, 1_000_000, 70_001, 5] {
            b.record(v);
            both.record(v);
        }
        a.merge(&b);
        assert_eq!(a, both);
        assert_eq!(a.counts.len(), 5, "{:?}", a.counts);
    }

    #[test]
    fn test_memory_follows_the_samples_not_the_range() {
        // One sample at 1 s is one bucket, not the 56,000 below it.
        let mut h = LatencyHistogram::new();
        h.record(1_000_000_000);
        h.record(1_000_000_001);
        assert_eq!(h.counts.len(), 1);
        assert!(h.counts.capacity() <= 4);
        assert_eq!(h.value_at_quantile(1, 2), 1_000_000_000);
    }
}
