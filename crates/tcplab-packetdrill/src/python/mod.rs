//! The subset of Python that packetdrill `%{ ... }%` blocks use, evaluated
//! without a Python interpreter.
//!
//! packetdrill writes every block, preceded by assignments of the
//! `tcpi_*` values captured when the block's timestamp was reached, into
//! one Python file and runs it after the last event; a raised exception
//! ends the run with `<script>:<line>: error in Python code` and the
//! traceback's last line (`AssertionError: 36`). [`Interpreter`] keeps the
//! same model: one global namespace for all blocks, blocks run in order.
//!
//! Supported: simple statements separated by newlines or `;` (assignment,
//! `+= -= *= /= //= %=` and friends, `assert test[, msg]`, expression
//! statements such as `print(...)`, `pass`); expressions with `or and not`,
//! chained comparisons, `| ^ & << >>`, `+ - * / // % **`, unary `- + ~`,
//! conditional expressions, calls of a few builtins (`print int float str
//! abs min max len bool hex round`), `%` string formatting, int (arbitrary
//! sign, i128), float, str, bool, None and tuple values, `#` comments and
//! backslash line continuation. Anything else (compound statements,
//! attribute access, imports, ...) is [`PyError::Unsupported`], which the
//! driver turns into a skip rather than a failure.

mod eval;
mod format;
mod lexer;
mod parser;

pub use eval::Interpreter;
pub use parser::{parse_program, Program};

use format::float_repr;
use std::fmt;

/// A Python value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
    None,
    Tuple(Vec<Value>),
}

/// Why evaluation stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum PyError {
    /// A Python exception: kind (`AssertionError`, `NameError`, ...) and
    /// message (empty for a bare `assert`).
    Exception { kind: String, message: String },
    /// A construct outside the supported subset.
    Unsupported(String),
}

impl PyError {
    fn exc(kind: &str, message: impl Into<String>) -> PyError {
        PyError::Exception { kind: kind.to_string(), message: message.into() }
    }
    fn type_err(message: impl Into<String>) -> PyError {
        PyError::exc("TypeError", message)
    }
}

impl fmt::Display for PyError {
    /// As the last line of a Python traceback.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PyError::Exception { kind, message } if message.is_empty() => write!(f, "{kind}"),
            PyError::Exception { kind, message } => write!(f, "{kind}: {message}"),
            PyError::Unsupported(m) => write!(f, "unsupported Python construct: {m}"),
        }
    }
}

impl Value {
    fn type_name(&self) -> &'static str {
        match self {
            Value::Int(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bool(_) => "bool",
            Value::None => "NoneType",
            Value::Tuple(_) => "tuple",
        }
    }
    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Int(v) => *v != 0,
            Value::Float(v) => *v != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::Bool(b) => *b,
            Value::None => false,
            Value::Tuple(t) => !t.is_empty(),
        }
    }
    /// `str(value)`.
    pub fn to_str(&self) -> String {
        match self {
            Value::Str(s) => s.clone(),
            other => other.repr(),
        }
    }
    /// `repr(value)`.
    pub fn repr(&self) -> String {
        match self {
            Value::Int(v) => v.to_string(),
            Value::Float(v) => float_repr(*v),
            Value::Str(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
            Value::Bool(true) => "True".into(),
            Value::Bool(false) => "False".into(),
            Value::None => "None".into(),
            Value::Tuple(t) => {
                let items: Vec<String> = t.iter().map(Value::repr).collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
        }
    }
    /// Integer view of int and bool.
    fn as_int(&self) -> Option<i128> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Bool(b) => Some(*b as i128),
            _ => None,
        }
    }
    fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Float(v) => Some(*v),
            other => other.as_int().map(|v| v as f64),
        }
    }
}

#[cfg(test)]
mod tests;
