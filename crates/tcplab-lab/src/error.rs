//! The one error type of the lab: where (file:line:col, or the `--set`
//! argument, or the flag), which field (its dotted path), and what is
//! wrong, phrased so that the reader knows what to change.

use std::fmt;

/// Exit code: everything went well.
pub const EXIT_OK: u8 = 0;
/// Exit code: the run worked but an experiment check failed (reserved).
pub const EXIT_CHECK_FAILED: u8 = 1;
/// Exit code: bad input or an I/O failure.
pub const EXIT_ERROR: u8 = 2;

/// A user-facing error. Displays as `LOCATION: PATH: MESSAGE`, leaving out
/// the parts that are not known, e.g.
/// `scenarios/x.toml:12:8: flow[0].cc: unknown congestion control "cubik" (known: reno, cubic, dctcp, bbr)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    /// `file:line:col`, `file`, `--set KEY=VALUE` or a flag name.
    pub location: Option<String>,
    /// Dotted path of the field, e.g. `flow[0].cc`.
    pub path: Option<String>,
    pub message: String,
}

impl Error {
    /// An error with a message only.
    pub fn msg(message: impl Into<String>) -> Error {
        Error { location: None, path: None, message: message.into() }
    }

    /// An error about a place but no particular field.
    pub fn at(location: impl Into<String>, message: impl Into<String>) -> Error {
        Error { location: Some(location.into()), path: None, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = &self.location {
            write!(f, "{l}: ")?;
        }
        if let Some(p) = &self.path {
            if !p.is_empty() {
                write!(f, "{p}: ")?;
            }
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The closest of `candidates` to `word`, if it is close enough to be a
/// likely typo (Levenshtein distance ≤ 1/3 of the length, at least 1).
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn levenshtein(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_display_leaves_out_unknown_parts() {
        let e = Error { location: Some("x.toml:3:1".into()), path: Some("run.seed".into()), message: "bad".into() };
        assert_eq!(e.to_string(), "x.toml:3:1: run.seed: bad");
        assert_eq!(Error::msg("bad").to_string(), "bad");
    }

    #[test]
    fn test_did_you_mean() {
        assert_eq!(did_you_mean("cubik", ["reno", "cubic", "dctcp"]), Some("cubic"));
        assert_eq!(did_you_mean("tcp_reorderin", ["tcp_reordering", "tcp_sack"]), Some("tcp_reordering"));
        assert_eq!(did_you_mean("zzz", ["reno", "cubic"]), None);
    }
}
