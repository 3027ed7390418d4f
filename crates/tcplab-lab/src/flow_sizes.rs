//! Flow-size distributions for random traffic: an empirical CDF given as
//! points `(bytes, cumulative percent)`, sampled by inverting the
//! piecewise-linear CDF through them — the form and the sampling of the
//! traffic generators that come with the DCTCP, pFabric and HPCC
//! simulations, so their published tables can be used as they are.
//!
//! A file holds one point per line, `BYTES PERCENT`, separated by
//! whitespace; `#` starts a comment. Percents rise from 0 to 100 (the
//! first point may have a percent above 0: sizes below it are then the
//! first point's size), bytes never fall. scenarios/dist/ has the web
//! search (DCTCP) and Hadoop (Facebook) distributions.

use crate::error::{Error, Result};
use crate::input;
use std::path::Path;
use tcplab_sim::rng::Pcg32;

/// Largest distribution file read.
const MAX_FILE: u64 = 1 << 20;
/// Most points of one distribution.
const MAX_POINTS: usize = 10_000;
/// Largest flow size a distribution may give: 1 TB.
pub const MAX_FLOW_BYTES: u64 = 1 << 40;

/// A validated CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSizes {
    /// `(bytes, percent)`, percents non-decreasing to 100.
    points: Vec<(f64, f64)>,
}

impl FlowSizes {
    /// Reads a distribution file; errors name the file and line.
    pub fn read(path: &Path) -> Result<FlowSizes> {
        let text = input::read_text(path, "the flow-size distribution", MAX_FILE)?;
        FlowSizes::parse(&path.display().to_string(), &text)
    }

    /// Parses the text of a distribution file called `name`.
    pub fn parse(name: &str, text: &str) -> Result<FlowSizes> {
        let mut points = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let at = |msg: String| Error::at(format!("{name}:{}", i + 1), msg);
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [bytes, percent] = fields[..] else {
                return Err(at(format!("expected two numbers, BYTES PERCENT; found {} fields", fields.len())));
            };
            let num = |s: &str, what: &str| -> Result<f64> {
                match s.parse::<f64>() {
                    Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                    _ => Err(at(format!("{what}: expected a non-negative number, found {s:?}"))),
                }
            };
            let point = (num(bytes, "bytes")?, num(percent, "percent")?);
            if point.0 > MAX_FLOW_BYTES as f64 {
                return Err(at(format!("bytes: at most {MAX_FLOW_BYTES}, found {bytes}")));
            }
            if point.1 > 100.0 {
                return Err(at(format!("percent: at most 100, found {percent}")));
            }
            if let Some(&(b, p)) = points.last() {
                if point.0 < b || point.1 < p {
                    return Err(at(format!("bytes and percent must not fall ({b} {p} before {bytes} {percent})")));
                }
            }
            if points.len() == MAX_POINTS {
                return Err(at(format!("more than {MAX_POINTS} points")));
            }
            points.push(point);
        }
        match points.last() {
            None => Err(Error::at(name, "no points: expected lines of BYTES PERCENT")),
            Some(&(_, p)) if p != 100.0 => Err(Error::at(name, format!("the last point's percent is {p}, not 100"))),
            Some(&(b, _)) if b < 1.0 => Err(Error::at(name, "every flow would be empty (the largest size is 0)")),
            Some(_) => Ok(FlowSizes { points }),
        }
    }

    /// Mean flow size in bytes: the CDF is linear between points, so each
    /// segment contributes its probability times its midpoint.
    pub fn mean(&self) -> f64 {
        let first = self.points[0];
        let mut m = first.0 * first.1 / 100.0;
        for w in self.points.windows(2) {
            let ((b0, p0), (b1, p1)) = (w[0], w[1]);
            m += (p1 - p0) / 100.0 * (b0 + b1) / 2.0;
        }
        m
    }

    /// One flow size, at least 1 byte: the inverse CDF at a uniform draw.
    pub fn sample(&self, rng: &mut Pcg32) -> u64 {
        let u = unit(rng) * 100.0;
        let i = self.points.partition_point(|&(_, p)| p < u).min(self.points.len() - 1);
        let (b1, p1) = self.points[i];
        let size = match i.checked_sub(1).map(|j| self.points[j]) {
            Some((b0, p0)) if p1 > p0 => b0 + (b1 - b0) * (u - p0) / (p1 - p0),
            _ => b1,
        };
        (size.round() as u64).max(1)
    }
}

/// Uniform in `[0, 1)` with 53 random bits.
pub fn unit(rng: &mut Pcg32) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_mean_of_two_segments_is_the_weighted_midpoints() {
        // Half the flows uniform in 0..100, half in 100..300: 0.5*50 + 0.5*200.
        let d = FlowSizes::parse("d", "0 0\n100 50\n300 100\n").unwrap();
        assert_eq!(d.mean(), 125.0);
    }

    #[test]
    fn test_samples_follow_the_cdf() {
        let d = FlowSizes::parse("d", "# sizes\n0 0\n100 50 # half\n300 100\n").unwrap();
        let mut rng = Pcg32::new(1, 2);
        let n = 100_000;
        let samples: Vec<u64> = (0..n).map(|_| d.sample(&mut rng)).collect();
        let below = samples.iter().filter(|&&s| s <= 100).count() as f64 / n as f64;
        assert!((below - 0.5).abs() < 0.01, "{below}");
        let mean = samples.iter().sum::<u64>() as f64 / n as f64;
        assert!((mean - 125.0).abs() < 2.0, "{mean}");
        assert!(samples.iter().all(|&s| (1..=300).contains(&s)));
    }

    #[test]
    fn test_a_first_point_above_zero_percent_is_an_atom() {
        let d = FlowSizes::parse("d", "1000 40\n2000 100\n").unwrap();
        let mut rng = Pcg32::new(3, 4);
        let atoms = (0..10_000).filter(|_| d.sample(&mut rng) == 1000).count();
        assert!((3_800..4_200).contains(&atoms), "{atoms}");
        assert_eq!(d.mean(), 0.4 * 1000.0 + 0.6 * 1500.0);
    }

    #[test]
    fn test_bad_files_name_the_line() {
        for (text, want) in [
            ("0 0\n100\n", "d:2: expected two numbers"),
            ("0 0\n100 -3\n", "d:2: percent: expected a non-negative number"),
            ("0 0\n100 50\n50 60\n", "d:3: bytes and percent must not fall"),
            ("0 0\n100 150\n", "d:2: percent: at most 100"),
            ("0 0\n100 90\n", "the last point's percent is 90"),
            ("# nothing\n", "no points"),
            ("0 0\n0 100\n", "every flow would be empty"),
            ("0 0\nnan 100\n", "d:2: bytes"),
        ] {
            let e = FlowSizes::parse("d", text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
