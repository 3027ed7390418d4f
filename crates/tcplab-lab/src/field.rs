//! Typed access to the scenario tree ([`crate::tree`]) for validation:
//! every accessor knows the field's dotted path and where its value came
//! from, so that each error names the file, line and field (or the
//! `--set` argument). The schema and the topology and traffic generators
//! read the tree only through these.

use crate::error::{did_you_mean, Error, Result};
use crate::tree::{Node, Origin, Source, Table, Value};
use crate::units;
use tcplab_core::time::Duration;
use tcplab_sim::config::Limit;
use tcplab_sim::MAX_DELAY;

/// A value being validated: the node, its path and the source.
#[derive(Clone, Copy)]
pub(crate) struct F<'a> {
    pub(crate) src: &'a Source,
    pub(crate) node: &'a Node,
    pub(crate) path: &'a str,
}

impl<'a> F<'a> {
    pub(crate) fn err(&self, msg: impl Into<String>) -> Error {
        self.src.error(&self.node.origin, self.path, msg)
    }

    pub(crate) fn wrong(&self, expected: &str) -> Error {
        let v = &self.node.value;
        match v {
            Value::Array(_) | Value::Table(_) => self.err(format!("expected {expected}, found {}", v.type_name())),
            _ => self.err(format!("expected {expected}, found {} {}", v.type_name(), v.describe())),
        }
    }

    pub(crate) fn str(&self, expected: &str) -> Result<&'a str> {
        match &self.node.value {
            Value::String(s) => Ok(s),
            _ => Err(self.wrong(expected)),
        }
    }

    pub(crate) fn table(&self, expected: &str) -> Result<T<'a>> {
        match &self.node.value {
            Value::Table(t) => Ok(T { src: self.src, table: t, origin: &self.node.origin, path: self.path }),
            _ => Err(self.wrong(expected)),
        }
    }

    pub(crate) fn array(&self, expected: &str) -> Result<&'a [Node]> {
        match &self.node.value {
            Value::Array(a) => Ok(a),
            _ => Err(self.wrong(expected)),
        }
    }

    /// A non-negative integer.
    pub(crate) fn u64(&self) -> Result<u64> {
        match &self.node.value {
            Value::Integer(i) if *i >= 0 => Ok(*i as u64),
            Value::Integer(i) => Err(self.err(format!("must not be negative, found {i}"))),
            _ => Err(self.wrong("an integer")),
        }
    }

    /// An integer in `[min, max]`.
    pub(crate) fn int_in(&self, min: u64, max: u64) -> Result<u64> {
        match &self.node.value {
            Value::Integer(i) => match u64::try_from(*i) {
                Ok(v) if v >= min && v <= max => Ok(v),
                _ => Err(self.err(format!("must be between {min} and {max}, found {i}"))),
            },
            _ => Err(self.wrong(&format!("an integer between {min} and {max}"))),
        }
    }

    /// `true`/`false`, or the sysctl spelling `1`/`0`.
    pub(crate) fn bool01(&self) -> Result<bool> {
        match &self.node.value {
            Value::Boolean(b) => Ok(*b),
            Value::Integer(0) => Ok(false),
            Value::Integer(1) => Ok(true),
            _ => Err(self.wrong("true/false (or 1/0)")),
        }
    }

    pub(crate) fn time(&self) -> Result<Duration> {
        if let Value::Integer(i) = self.node.value {
            return Err(
                self.err(format!("a time needs a unit: write e.g. \"{i}ms\" or \"{i}s\" (units: ns, us, ms, s)"))
            );
        }
        let s = self.str("a time such as \"10ms\"")?;
        units::parse_time(s).map_err(|m| self.err(m))
    }

    /// A propagation delay or jitter: a time of at most [`MAX_DELAY`].
    pub(crate) fn delay(&self) -> Result<Duration> {
        let d = self.time()?;
        if d > MAX_DELAY {
            return Err(self.err(format!("must be at most {}", units::format_time(MAX_DELAY))));
        }
        Ok(d)
    }

    pub(crate) fn positive_time(&self) -> Result<Duration> {
        let d = self.time()?;
        if d == Duration::ZERO {
            return Err(self.err("must be greater than zero"));
        }
        Ok(d)
    }

    pub(crate) fn rate(&self) -> Result<u64> {
        let v = match &self.node.value {
            Value::String(s) => units::parse_rate(s).map_err(|m| self.err(m))?,
            Value::Integer(i) if *i <= 0 => {
                return Err(self.err(format!("a rate must be positive, found {i} (write e.g. \"100Mbit\")")))
            }
            _ => return Err(self.wrong("a rate such as \"100Mbit\"")),
        };
        if v == 0 {
            return Err(self.err(format!("a rate must be positive, found {}", self.node.value.describe())));
        }
        Ok(v)
    }

    /// A byte count: an integer, or a size string such as `"10MB"`.
    pub(crate) fn bytes(&self) -> Result<u64> {
        match &self.node.value {
            Value::String(s) => units::parse_size(s).map_err(|m| self.err(m)),
            Value::Integer(_) => self.u64(),
            _ => Err(self.wrong("a size such as \"10MB\" or an integer number of bytes")),
        }
    }

    pub(crate) fn limit(&self) -> Result<Limit> {
        match &self.node.value {
            Value::String(s) => units::parse_limit(s).map_err(|m| self.err(m)),
            Value::Integer(i) => {
                Err(self
                    .err(format!("a queue length needs a unit: write \"{i}p\" for packets or \"{i}KB\" for kilobytes")))
            }
            _ => Err(self.wrong("a queue length such as \"100p\" or \"150KB\"")),
        }
    }
}

/// A table being validated.
#[derive(Clone, Copy)]
pub(crate) struct T<'a> {
    pub(crate) src: &'a Source,
    pub(crate) table: &'a Table,
    pub(crate) origin: &'a Origin,
    pub(crate) path: &'a str,
}

pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a> T<'a> {
    /// Rejects keys not in `known`, suggesting the closest known one.
    pub(crate) fn only(&self, known: &[&str]) -> Result<()> {
        for e in &self.table.entries {
            if !known.contains(&e.key.as_str()) {
                let hint = match did_you_mean(&e.key, known.iter().copied()) {
                    Some(k) => format!("; did you mean {k:?}?"),
                    None => format!(" (expected one of: {})", known.join(", ")),
                };
                return Err(self.src.error(&e.key_origin, &join(self.path, &e.key), format!("unknown key{hint}")));
            }
        }
        Ok(())
    }

    pub(crate) fn get<R>(&self, key: &str, f: impl FnOnce(F<'_>) -> Result<R>) -> Result<Option<R>> {
        match self.table.get(key) {
            Some(e) => {
                let path = join(self.path, key);
                f(F { src: self.src, node: &e.node, path: &path }).map(Some)
            }
            None => Ok(None),
        }
    }

    pub(crate) fn req<R>(&self, key: &str, f: impl FnOnce(F<'_>) -> Result<R>) -> Result<R> {
        match self.get(key, f)? {
            Some(v) => Ok(v),
            None => Err(self.src.error(self.origin, &join(self.path, key), "missing required key")),
        }
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.table.get(key).is_some()
    }

    /// An error about the value of `key` (at the table if it is absent).
    pub(crate) fn err_at(&self, key: &str, msg: impl Into<String>) -> Error {
        let origin = self.table.get(key).map_or(self.origin, |e| &e.node.origin);
        self.src.error(origin, &join(self.path, key), msg)
    }
}
