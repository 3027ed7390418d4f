//! Distributions over runs: min, median, mean, max, a bootstrap confidence
//! interval of the median, and a two-cluster test that makes bimodal
//! results visible (the HyStart patch's throughput jumps between 15 and
//! 250 Mbit/s from one run to the next; a mean of those hides it).
//!
//! Everything here is deterministic: the bootstrap draws from a PCG32
//! stream with a fixed seed ([`BOOTSTRAP_SEED`]), so the same values give
//! the same interval on every machine and every run. Values are sorted with
//! `f64::total_cmp`; the callers only pass finite numbers.

use serde::{Deserialize, Serialize};
use tcplab_sim::rng::Pcg32;

/// Seed of the bootstrap's PCG32 stream ("tcplab" in ASCII).
pub const BOOTSTRAP_SEED: u64 = 0x7463_706c_6162;
/// Resamples drawn for the confidence interval of the median.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;
/// Confidence level of [`Summary::ci95`].
pub const CI_LEVEL: f64 = 0.95;

/// The distribution of one metric over the runs of one arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// Number of runs.
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// 95 % confidence interval of the median: percentile bootstrap,
    /// [`BOOTSTRAP_RESAMPLES`] resamples, fixed seed.
    pub ci95: [f64; 2],
    /// Set when the runs fall into two separated groups (see [`two_groups`]).
    pub groups: Option<Groups>,
}

/// Two clusters of runs, split at the widest gap between sorted values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Groups {
    pub low: Group,
    pub high: Group,
    /// Distance between the largest low value and the smallest high value.
    pub gap: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub runs: usize,
    pub min: f64,
    pub max: f64,
}

/// Summarizes `values` (any order). None without values.
pub fn summarize(values: &[f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let mean = v.iter().sum::<f64>() / n as f64;
    Some(Summary {
        n,
        min: v[0],
        median: median_sorted(&v),
        mean,
        max: v[n - 1],
        ci95: bootstrap_median_ci(&v, CI_LEVEL, BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED),
        groups: two_groups(&v),
    })
}

/// Median of sorted values: the middle one, or the mean of the two middle
/// ones. `NaN` for no values.
pub fn median_sorted(v: &[f64]) -> f64 {
    let n = v.len();
    match n {
        0 => f64::NAN,
        _ if n % 2 == 1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Quantile `q` (0..=1) of sorted values, linear between order statistics
/// (Hyndman & Fan type 7, the default of R and numpy).
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Percentile bootstrap interval of the median of sorted `v`: draw
/// `resamples` samples of `v.len()` values with replacement from a PCG32
/// stream seeded with `seed`, take each one's median, and return the
/// `(1 - level)/2` and `(1 + level)/2` quantiles of those medians.
pub fn bootstrap_median_ci(v: &[f64], level: f64, resamples: usize, seed: u64) -> [f64; 2] {
    let n = v.len();
    if n == 0 {
        return [f64::NAN, f64::NAN];
    }
    if n == 1 || v[0] == v[n - 1] {
        return [v[0], v[n - 1]];
    }
    let mut rng = Pcg32::new(seed, 0);
    let mut sample = vec![0.0; n];
    let mut medians = Vec::with_capacity(resamples);
    for _ in 0..resamples.max(1) {
        for s in &mut sample {
            *s = v[rng.below(n as u64) as usize];
        }
        sample.sort_by(f64::total_cmp);
        medians.push(median_sorted(&sample));
    }
    medians.sort_by(f64::total_cmp);
    let a = (1.0 - level) / 2.0;
    [quantile_sorted(&medians, a), quantile_sorted(&medians, 1.0 - a)]
}

/// The two-cluster test: split sorted `v` at its widest gap between
/// neighbours; report the split when each side has at least two runs (one
/// odd run is an outlier, not a mode), the gap is more than twice the
/// spread (max − min) of either side, and it is more than 1 % of the
/// largest magnitude (so that rounding noise never counts).
pub fn two_groups(v: &[f64]) -> Option<Groups> {
    let n = v.len();
    if n < 4 {
        return None;
    }
    let (i, gap) = v.windows(2).enumerate().map(|(i, w)| (i, w[1] - w[0])).max_by(|a, b| a.1.total_cmp(&b.1))?;
    let (low, high) = v.split_at(i + 1);
    if low.len() < 2 || high.len() < 2 {
        return None;
    }
    let spread = |g: &[f64]| g[g.len() - 1] - g[0];
    let scale = v[0].abs().max(v[n - 1].abs());
    if gap <= 2.0 * spread(low).max(spread(high)) || gap <= 0.01 * scale {
        return None;
    }
    let group = |g: &[f64]| Group { runs: g.len(), min: g[0], max: g[g.len() - 1] };
    Some(Groups { low: group(low), high: group(high), gap })
}

/// A one-line histogram of `values` over `[lo, hi]` in `width` cells, one
/// block character per cell, its height the cell's count relative to the
/// fullest cell (blank = no run). With several arms drawn over the same
/// range, the strips line up.
pub fn strip(values: &[f64], lo: f64, hi: f64, width: usize) -> String {
    const BLOCKS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let width = width.max(1);
    let mut counts = vec![0usize; width];
    for &x in values {
        let cell = if hi > lo { ((x - lo) / (hi - lo) * (width - 1) as f64).round() } else { (width / 2) as f64 };
        let cell = (cell.max(0.0) as usize).min(width - 1);
        counts[cell] += 1;
    }
    let most = counts.iter().copied().max().unwrap_or(0).max(1);
    counts.iter().map(|&c| if c == 0 { ' ' } else { BLOCKS[((c * 8).div_ceil(most)).clamp(1, 8) - 1] }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_summary_basics() {
        let s = summarize(&[3.0, 1.0, 2.0, 10.0]).unwrap();
        assert_eq!((s.n, s.min, s.median, s.mean, s.max), (4, 1.0, 2.5, 4.0, 10.0));
        assert!(s.ci95[0] <= s.median && s.median <= s.ci95[1]);
        assert_eq!(summarize(&[]), None);
        let one = summarize(&[7.0]).unwrap();
        assert_eq!((one.median, one.ci95), (7.0, [7.0, 7.0]));
    }

    #[test]
    fn test_bootstrap_is_reproducible_and_brackets_the_median() {
        let v: Vec<f64> = (0..25).map(|i| f64::from((i * 37) % 101)).collect();
        let a = summarize(&v).unwrap();
        let b = summarize(&v).unwrap();
        assert_eq!(a.ci95, b.ci95);
        assert!(a.ci95[0] < a.median && a.median < a.ci95[1], "{a:?}");
        // Order of the input does not matter.
        let mut r = v.clone();
        r.reverse();
        assert_eq!(summarize(&r).unwrap().ci95, a.ci95);
        // Identical runs: a zero-width interval.
        assert_eq!(summarize(&[5.0; 10]).unwrap().ci95, [5.0, 5.0]);
    }

    #[test]
    fn test_two_groups_sees_the_hystart_runs() {
        // The 6.25 % column of the HyStart patch (Mbit/s).
        let before = [20.66, 249.38, 254.10, 14.94, 251.92, 237.73, 19.18, 252.89, 21.32, 15.58];
        let s = summarize(&before).unwrap();
        let g = s.groups.unwrap();
        assert_eq!((g.low.runs, g.high.runs), (5, 5));
        assert_eq!((g.low.min, g.low.max, g.high.min, g.high.max), (14.94, 21.32, 237.73, 254.10));
        // The 12.5 % column is one group.
        let after = [251.09, 247.46, 250.92, 248.91, 250.88, 249.84, 250.51, 254.15, 250.62, 250.89];
        assert_eq!(summarize(&after).unwrap().groups, None);
        // Evenly spread values, one outlier, constant values: not two groups.
        assert_eq!(two_groups(&(0..10).map(f64::from).collect::<Vec<_>>()), None);
        assert_eq!(two_groups(&[1.0, 1.1, 1.2, 1.3, 100.0]), None);
        assert_eq!(two_groups(&[4.0; 6]), None);
        assert_eq!(two_groups(&[1e9, 1e9, 1e9 + 1.0, 1e9 + 1.0]), None);
    }

    #[test]
    fn test_strip_shows_two_clusters() {
        let s = strip(&[0.0, 0.0, 1.0, 10.0, 10.0, 10.0], 0.0, 10.0, 11);
        assert_eq!(s.chars().count(), 11);
        assert_eq!(s, "▆▃        █");
        assert_eq!(strip(&[5.0, 5.0], 5.0, 5.0, 5), "  █  ");
    }

    #[test]
    fn test_quantiles() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile_sorted(&v, 0.5), 2.5);
        assert_eq!(quantile_sorted(&v, 0.0), 1.0);
        assert_eq!(quantile_sorted(&v, 1.0), 4.0);
    }
}
