//! Quantities with units: rates, times and sizes.
//!
//! Every parser here is total: any input string gives either a value or an
//! error message that says what was expected, never a panic. Arithmetic is
//! exact integer arithmetic on the decimal text (`"2.5Mbit"` is exactly
//! 2 500 000 bit/s); a value that is not a whole number of the base unit
//! (`"0.5ns"`) or that overflows is an error, not a rounding.
//!
//! | kind | base unit | accepted units |
//! |------|-----------|----------------|
//! | rate | bit/s | `bit`, `bit/s`, `Kbit`, `Mbit`, `Gbit`, `Tbit` (prefix case-insensitive) |
//! | time | ns | `ns`, `us` (`µs`), `ms`, `s` |
//! | size | byte | `B`, `KB`, `MB`, `GB` (powers of 1000), `KiB`, `MiB`, `GiB` (powers of 1024) |
//! | queue limit | packets or bytes | a size, or `p` (also `pkt`, `pkts`, `packets`) for packets |

use tcplab_core::time::Duration;
use tcplab_sim::config::Limit;

/// A decimal number split off the front of a quantity string.
struct Decimal {
    negative: bool,
    /// All digits, integer and fraction, as one integer.
    digits: u128,
    /// Number of fraction digits.
    scale: u32,
}

/// Splits `"2.5 Mbit"` into the number and the unit text.
fn split_number(s: &str) -> Result<(Decimal, &str), String> {
    let t = s.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = body.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(body.len());
    let (num, unit) = body.split_at(end);
    let num: String = num.chars().filter(|c| *c != '_').collect();
    if num.is_empty() || num == "." {
        return Err(format!("{t:?} does not start with a number"));
    }
    let mut parts = num.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next().unwrap_or("");
    if frac.contains('.') {
        return Err(format!("{t:?} is not a number"));
    }
    if int.len() + frac.len() > 30 {
        return Err(format!("{t:?} has too many digits"));
    }
    let mut digits: u128 = 0;
    for c in int.chars().chain(frac.chars()) {
        // Cannot overflow: at most 30 digits < u128::MAX (39 digits).
        digits = digits * 10 + u128::from(c.to_digit(10).unwrap_or(0));
    }
    Ok((Decimal { negative, digits, scale: frac.len() as u32 }, unit.trim()))
}

/// `digits / 10^scale * mult`, exactly, or an error.
fn scale_exact(d: &Decimal, mult: u128, what: &str, base: &str, text: &str) -> Result<u64, String> {
    let v = d.digits.checked_mul(mult).ok_or_else(|| format!("{text:?} is too large"))?;
    let div = 10u128.checked_pow(d.scale).ok_or_else(|| format!("{text:?} has too many decimals"))?;
    if v % div != 0 {
        return Err(format!("{text:?} is not a whole number of {base} ({what} resolution is 1 {base})"));
    }
    u64::try_from(v / div).map_err(|_| format!("{text:?} is too large"))
}

/// A link rate such as `"100Mbit"` → bits per second. Zero is allowed
/// here; callers reject it where a rate must be positive.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let (d, unit) = split_number(s)?;
    if d.negative {
        return Err(format!("{:?} is negative; a rate must be positive", s.trim()));
    }
    let lower = unit.to_ascii_lowercase();
    let mult: u128 = match lower.as_str() {
        "bit" | "bit/s" | "bits" => 1,
        "kbit" | "kbit/s" => 1_000,
        "mbit" | "mbit/s" => 1_000_000,
        "gbit" | "gbit/s" => 1_000_000_000,
        "tbit" | "tbit/s" => 1_000_000_000_000,
        "" => return Err(format!("{:?} has no unit; write e.g. \"100Mbit\" (units: bit, Kbit, Mbit, Gbit)", s.trim())),
        "bps" | "kbps" | "mbps" | "gbps" => {
            return Err(format!(
                "ambiguous unit {unit:?} (tc reads it as bytes per second); write \"{}bit\" for bits per second",
                &unit[..unit.len() - 3]
            ))
        }
        _ => return Err(format!("unknown rate unit {unit:?} in {:?} (units: bit, Kbit, Mbit, Gbit)", s.trim())),
    };
    scale_exact(&d, mult, "rate", "bit/s", s.trim())
}

/// A time such as `"10ms"` → nanoseconds.
pub fn parse_time(s: &str) -> Result<Duration, String> {
    let (d, unit) = split_number(s)?;
    if d.negative {
        return Err(format!("{:?} is negative; a time must be zero or positive", s.trim()));
    }
    let mult: u128 = match unit {
        "ns" => 1,
        "us" | "µs" | "μs" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "" => return Err(format!("{:?} has no unit; write e.g. \"10ms\" (units: ns, us, ms, s)", s.trim())),
        _ => return Err(format!("unknown time unit {unit:?} in {:?} (units: ns, us, ms, s)", s.trim())),
    };
    scale_exact(&d, mult, "time", "ns", s.trim()).map(Duration::from_nanos)
}

/// Multiplier of a byte-size unit, if `unit` is one.
fn size_mult(unit: &str) -> Option<u128> {
    Some(match unit {
        "B" | "b" | "bytes" => 1,
        "KB" | "kB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    })
}

const SIZE_UNITS: &str = "B, KB, MB, GB, KiB, MiB, GiB";

/// A byte size such as `"250KB"` → bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (d, unit) = split_number(s)?;
    if d.negative {
        return Err(format!("{:?} is negative; a size must be zero or positive", s.trim()));
    }
    if unit.is_empty() {
        return Err(format!("{:?} has no unit; write e.g. \"64KB\" (units: {SIZE_UNITS})", s.trim()));
    }
    let mult =
        size_mult(unit).ok_or_else(|| format!("unknown size unit {unit:?} in {:?} (units: {SIZE_UNITS})", s.trim()))?;
    scale_exact(&d, mult, "size", "byte", s.trim())
}

/// A queue length such as `"100p"` (packets) or `"150KB"` (bytes).
pub fn parse_limit(s: &str) -> Result<Limit, String> {
    let (d, unit) = split_number(s)?;
    if d.negative {
        return Err(format!("{:?} is negative; a queue limit must be positive", s.trim()));
    }
    match unit {
        "p" | "pkt" | "pkts" | "packets" => scale_exact(&d, 1, "packet count", "packet", s.trim()).map(Limit::Packets),
        "" => Err(format!("{:?} has no unit; write \"{0}p\" for packets or \"{0}KB\" for kilobytes", s.trim())),
        _ => match size_mult(unit) {
            Some(m) => scale_exact(&d, m, "size", "byte", s.trim()).map(Limit::Bytes),
            None => Err(format!(
                "unknown queue-limit unit {unit:?} in {:?} (units: p for packets, or {SIZE_UNITS})",
                s.trim()
            )),
        },
    }
}

/// Formats bits per second the way a person writes them (`100Mbit`).
pub fn format_rate(bps: u64) -> String {
    for (m, u) in [(1_000_000_000_000, "Tbit"), (1_000_000_000, "Gbit"), (1_000_000, "Mbit"), (1_000, "Kbit")] {
        if bps >= m && bps % m == 0 {
            return format!("{}{u}", bps / m);
        }
    }
    format!("{bps}bit")
}

/// Formats a duration exactly with the largest unit that divides it.
pub fn format_time(d: Duration) -> String {
    let ns = d.as_nanos();
    for (m, u) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns >= m && ns % m == 0 {
            return format!("{}{u}", ns / m);
        }
    }
    format!("{ns}ns")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_rate_units() {
        assert_eq!(parse_rate("100Mbit"), Ok(100_000_000));
        assert_eq!(parse_rate("2.5 Mbit"), Ok(2_500_000));
        assert_eq!(parse_rate("10gbit"), Ok(10_000_000_000));
        assert_eq!(parse_rate("9600bit/s"), Ok(9600));
        assert_eq!(parse_rate("0Mbit"), Ok(0));
        assert!(parse_rate("-5Mbit").unwrap_err().contains("negative"));
        assert!(parse_rate("100").unwrap_err().contains("no unit"));
        assert!(parse_rate("100Mbps").unwrap_err().contains("\"Mbit\""));
        assert!(parse_rate("100furlongs").unwrap_err().contains("unknown rate unit"));
        assert!(parse_rate("0.5bit").unwrap_err().contains("whole number"));
        assert!(parse_rate("99999999999999999999999Tbit").is_err());
        assert!(parse_rate("").is_err());
        assert!(parse_rate("Mbit").is_err());
        assert!(parse_rate("1.2.3Mbit").is_err());
    }

    #[test]
    fn test_time_units() {
        assert_eq!(parse_time("10ms"), Ok(Duration::from_millis(10)));
        assert_eq!(parse_time("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_time("250us"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("250µs"), Ok(Duration::from_micros(250)));
        assert_eq!(parse_time("7ns"), Ok(Duration::from_nanos(7)));
        assert!(parse_time("10").unwrap_err().contains("no unit"));
        assert!(parse_time("10min").unwrap_err().contains("unknown time unit"));
        assert!(parse_time("-1s").unwrap_err().contains("negative"));
        assert!(parse_time("0.1ns").unwrap_err().contains("whole number"));
    }

    #[test]
    fn test_size_and_limit_units() {
        assert_eq!(parse_size("250KB"), Ok(250_000));
        assert_eq!(parse_size("4MiB"), Ok(4 << 20));
        assert_eq!(parse_size("1500B"), Ok(1500));
        assert!(parse_size("12").unwrap_err().contains("no unit"));
        assert_eq!(parse_limit("172p"), Ok(Limit::Packets(172)));
        assert_eq!(parse_limit("150KB"), Ok(Limit::Bytes(150_000)));
        assert!(parse_limit("100").unwrap_err().contains("100p"));
        assert!(parse_limit("1.5p").is_err());
    }

    #[test]
    fn test_format_round_trips() {
        for s in ["100Mbit", "10Gbit", "1500bit", "1Kbit"] {
            assert_eq!(format_rate(parse_rate(s).unwrap()), s);
        }
        for s in ["10ms", "30s", "250us", "7ns"] {
            assert_eq!(format_time(parse_time(s).unwrap()), s);
        }
    }
}
