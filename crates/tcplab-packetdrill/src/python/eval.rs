//! Running parsed blocks: the global namespace, builtins, and Python's
//! arithmetic and comparison semantics on [`Value`]s.

use super::format::percent_format;
use super::parser::{parse_program, BinOp, CmpOp, PExpr, Program, Stmt, UnaryOp};
use super::{PyError, Value};
use std::collections::HashMap;

/// A Python namespace that blocks run in, in script order.
#[derive(Default, Debug)]
pub struct Interpreter {
    globals: HashMap<String, Value>,
    /// What `print` wrote, one entry per call.
    pub output: Vec<String>,
}

impl Interpreter {
    pub fn new() -> Interpreter {
        Interpreter::default()
    }

    /// Binds a global variable.
    pub fn set(&mut self, name: &str, v: Value) {
        self.globals.insert(name.to_string(), v);
    }

    /// Reads a global variable.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.globals.get(name)
    }

    /// Runs a parsed block.
    pub fn run(&mut self, p: &Program) -> Result<(), PyError> {
        for s in &p.stmts {
            match s {
                Stmt::Pass => {}
                Stmt::Expr(e) => {
                    self.eval(e)?;
                }
                Stmt::Assign(n, e) => {
                    let v = self.eval(e)?;
                    self.globals.insert(n.clone(), v);
                }
                Stmt::AugAssign(n, op, e) => {
                    let cur = self.lookup(n)?;
                    let r = self.eval(e)?;
                    let v = binop(*op, cur, r)?;
                    self.globals.insert(n.clone(), v);
                }
                Stmt::Assert(t, msg) => {
                    if !self.eval(t)?.truthy() {
                        let message = match msg {
                            Some(m) => self.eval(m)?.to_str(),
                            None => String::new(),
                        };
                        return Err(PyError::Exception { kind: "AssertionError".into(), message });
                    }
                }
            }
        }
        Ok(())
    }

    /// Parses and runs source text.
    pub fn exec(&mut self, src: &str) -> Result<(), PyError> {
        let p = parse_program(src)?;
        self.run(&p)
    }

    /// Evaluates one expression.
    pub fn eval_str(&mut self, src: &str) -> Result<Value, PyError> {
        let p = parse_program(src)?;
        match p.stmts.as_slice() {
            [Stmt::Expr(e)] => self.eval(e),
            _ => Err(PyError::Unsupported("expected a single expression".into())),
        }
    }

    fn lookup(&self, n: &str) -> Result<Value, PyError> {
        self.globals.get(n).cloned().ok_or_else(|| PyError::exc("NameError", format!("name '{n}' is not defined")))
    }

    fn eval(&mut self, e: &PExpr) -> Result<Value, PyError> {
        Ok(match e {
            PExpr::Const(v) => v.clone(),
            PExpr::Name(n) => self.lookup(n)?,
            PExpr::Tuple(items) => Value::Tuple(items.iter().map(|i| self.eval(i)).collect::<Result<_, _>>()?),
            PExpr::Not(x) => Value::Bool(!self.eval(x)?.truthy()),
            PExpr::And(a, b) => {
                let l = self.eval(a)?;
                if !l.truthy() {
                    l
                } else {
                    self.eval(b)?
                }
            }
            PExpr::Or(a, b) => {
                let l = self.eval(a)?;
                if l.truthy() {
                    l
                } else {
                    self.eval(b)?
                }
            }
            PExpr::IfElse(c, a, b) => {
                if self.eval(c)?.truthy() {
                    self.eval(a)?
                } else {
                    self.eval(b)?
                }
            }
            PExpr::Unary(op, x) => {
                let v = self.eval(x)?;
                match (*op, &v) {
                    (UnaryOp::Neg, Value::Float(f)) => Value::Float(-f),
                    (UnaryOp::Pos, Value::Float(f)) => Value::Float(*f),
                    (UnaryOp::Neg, _) if v.as_int().is_some() => {
                        Value::Int(checked(v.as_int().unwrap_or(0).checked_neg())?)
                    }
                    (UnaryOp::Pos, _) if v.as_int().is_some() => Value::Int(v.as_int().unwrap_or(0)),
                    (UnaryOp::Invert, _) if v.as_int().is_some() => Value::Int(!v.as_int().unwrap_or(0)),
                    _ => {
                        return Err(PyError::type_err(format!("bad operand type for unary {op}: '{}'", v.type_name())))
                    }
                }
            }
            PExpr::Binary(op, a, b) => {
                let l = self.eval(a)?;
                let r = self.eval(b)?;
                binop(*op, l, r)?
            }
            PExpr::Compare(operands, ops) => {
                let mut left = self.eval(&operands[0])?;
                for (i, op) in ops.iter().enumerate() {
                    let right = self.eval(&operands[i + 1])?;
                    if !compare(*op, &left, &right)? {
                        return Ok(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
            PExpr::Call(f, args) => {
                let vals: Vec<Value> = args.iter().map(|a| self.eval(a)).collect::<Result<_, _>>()?;
                self.call(f, vals)?
            }
        })
    }

    fn call(&mut self, f: &str, args: Vec<Value>) -> Result<Value, PyError> {
        let one = |args: &[Value]| -> Result<Value, PyError> {
            match args {
                [v] => Ok(v.clone()),
                _ => Err(PyError::type_err(format!("{f}() takes exactly one argument ({} given)", args.len()))),
            }
        };
        Ok(match f {
            "print" => {
                let line: Vec<String> = args.iter().map(Value::to_str).collect();
                self.output.push(line.join(" "));
                Value::None
            }
            "str" => Value::Str(one(&args)?.to_str()),
            "repr" => Value::Str(one(&args)?.repr()),
            "bool" => Value::Bool(one(&args)?.truthy()),
            "int" => match one(&args)? {
                Value::Float(v) if v.is_finite() => Value::Int(v.trunc() as i128),
                Value::Str(s) => Value::Int(s.trim().parse().map_err(|_| {
                    PyError::exc("ValueError", format!("invalid literal for int() with base 10: '{s}'"))
                })?),
                v => Value::Int(v.as_int().ok_or_else(|| {
                    PyError::type_err(format!("int() argument must be a number, not '{}'", v.type_name()))
                })?),
            },
            "float" => match one(&args)? {
                Value::Str(s) => Value::Float(
                    s.trim()
                        .parse()
                        .map_err(|_| PyError::exc("ValueError", format!("could not convert string to float: '{s}'")))?,
                ),
                v => Value::Float(v.as_f64().ok_or_else(|| PyError::type_err("float() argument must be a number"))?),
            },
            "abs" => match one(&args)? {
                Value::Float(v) => Value::Float(v.abs()),
                v => Value::Int(checked(
                    v.as_int().ok_or_else(|| PyError::type_err("bad operand type for abs()"))?.checked_abs(),
                )?),
            },
            "hex" => {
                let v = one(&args)?.as_int().ok_or_else(|| PyError::type_err("hex() needs an integer"))?;
                Value::Str(if v < 0 { format!("-0x{:x}", -v) } else { format!("0x{v:x}") })
            }
            "len" => match one(&args)? {
                Value::Str(s) => Value::Int(s.chars().count() as i128),
                Value::Tuple(t) => Value::Int(t.len() as i128),
                v => return Err(PyError::type_err(format!("object of type '{}' has no len()", v.type_name()))),
            },
            "round" => match args.as_slice() {
                [v] => {
                    let x = v.as_f64().ok_or_else(|| PyError::type_err("round() needs a number"))?;
                    // Python rounds half to even.
                    let r = x.round();
                    let r = if (x - x.trunc()).abs() == 0.5 && r % 2.0 != 0.0 { r - x.signum() } else { r };
                    Value::Int(r as i128)
                }
                _ => return Err(PyError::Unsupported("round() with ndigits".into())),
            },
            "min" | "max" => {
                let items = match args.as_slice() {
                    [Value::Tuple(t)] => t.clone(),
                    _ => args,
                };
                let mut best: Option<Value> = None;
                for v in items {
                    best = Some(match best {
                        None => v,
                        Some(b) => {
                            let better =
                                if f == "min" { compare(CmpOp::Lt, &v, &b)? } else { compare(CmpOp::Gt, &v, &b)? };
                            if better {
                                v
                            } else {
                                b
                            }
                        }
                    });
                }
                best.ok_or_else(|| PyError::exc("ValueError", format!("{f}() arg is an empty sequence")))?
            }
            _ => {
                if self.globals.contains_key(f) {
                    return Err(PyError::type_err(format!("'{}' object is not callable", self.globals[f].type_name())));
                }
                return Err(PyError::exc("NameError", format!("name '{f}' is not defined")));
            }
        })
    }
}

fn checked(v: Option<i128>) -> Result<i128, PyError> {
    v.ok_or_else(|| PyError::Unsupported("integer beyond 128 bits".into()))
}

fn floor_div(a: i128, b: i128) -> i128 {
    let q = a / b;
    if (a % b != 0) && ((a < 0) != (b < 0)) {
        q - 1
    } else {
        q
    }
}

fn py_mod(a: i128, b: i128) -> i128 {
    let r = a % b;
    if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    }
}

fn binop(op: BinOp, l: Value, r: Value) -> Result<Value, PyError> {
    if op == BinOp::Mod {
        if let Value::Str(fmt) = &l {
            return Ok(Value::Str(percent_format(fmt, &r)?));
        }
    }
    if op == BinOp::Add {
        match (&l, &r) {
            (Value::Str(a), Value::Str(b)) => return Ok(Value::Str(format!("{a}{b}"))),
            (Value::Tuple(a), Value::Tuple(b)) => return Ok(Value::Tuple(a.iter().chain(b).cloned().collect())),
            _ => {}
        }
    }
    if op == BinOp::Mul {
        match (&l, &r) {
            (Value::Str(s), n) | (n, Value::Str(s)) if n.as_int().is_some() => {
                return Ok(Value::Str(s.repeat(n.as_int().unwrap_or(0).max(0) as usize)))
            }
            _ => {}
        }
    }
    let bad = || {
        PyError::type_err(format!("unsupported operand type(s) for {op}: '{}' and '{}'", l.type_name(), r.type_name()))
    };
    if let (Some(a), Some(b)) = (l.as_int(), r.as_int()) {
        return Ok(match op {
            BinOp::Add => Value::Int(checked(a.checked_add(b))?),
            BinOp::Sub => Value::Int(checked(a.checked_sub(b))?),
            BinOp::Mul => Value::Int(checked(a.checked_mul(b))?),
            BinOp::Div => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "division by zero"));
                }
                Value::Float(a as f64 / b as f64)
            }
            BinOp::FloorDiv => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "integer division or modulo by zero"));
                }
                Value::Int(floor_div(a, b))
            }
            BinOp::Mod => {
                if b == 0 {
                    return Err(PyError::exc("ZeroDivisionError", "integer division or modulo by zero"));
                }
                Value::Int(py_mod(a, b))
            }
            BinOp::Pow => {
                if b < 0 {
                    Value::Float((a as f64).powf(b as f64))
                } else {
                    let e = u32::try_from(b).map_err(|_| PyError::Unsupported("huge exponent".into()))?;
                    Value::Int(checked(a.checked_pow(e))?)
                }
            }
            BinOp::BitOr => Value::Int(a | b),
            BinOp::BitAnd => Value::Int(a & b),
            BinOp::BitXor => Value::Int(a ^ b),
            BinOp::Shl => {
                if b < 0 {
                    return Err(PyError::exc("ValueError", "negative shift count"));
                }
                let s = u32::try_from(b).map_err(|_| PyError::Unsupported("huge shift".into()))?;
                let v = a.checked_shl(s).filter(|v| v >> s == a);
                Value::Int(checked(v)?)
            }
            BinOp::Shr => {
                if b < 0 {
                    return Err(PyError::exc("ValueError", "negative shift count"));
                }
                Value::Int(a >> b.min(127))
            }
        });
    }
    if let (Some(a), Some(b)) = (l.as_f64(), r.as_f64()) {
        return Ok(Value::Float(match op {
            BinOp::Add => a + b,
            BinOp::Sub => a - b,
            BinOp::Mul => a * b,
            BinOp::Div => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float division by zero"));
                }
                a / b
            }
            BinOp::FloorDiv => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float floor division by zero"));
                }
                (a / b).floor()
            }
            BinOp::Mod => {
                if b == 0.0 {
                    return Err(PyError::exc("ZeroDivisionError", "float modulo"));
                }
                let m = a % b;
                if m != 0.0 && ((m < 0.0) != (b < 0.0)) {
                    m + b
                } else {
                    m
                }
            }
            BinOp::Pow => a.powf(b),
            BinOp::BitOr | BinOp::BitAnd | BinOp::BitXor | BinOp::Shl | BinOp::Shr => return Err(bad()),
        }));
    }
    Err(bad())
}

fn compare(op: CmpOp, l: &Value, r: &Value) -> Result<bool, PyError> {
    use std::cmp::Ordering;
    let ord: Option<Ordering> = match (l, r) {
        (a, b) if a.as_int().is_some() && b.as_int().is_some() => a.as_int().partial_cmp(&b.as_int()),
        (a, b) if a.as_f64().is_some() && b.as_f64().is_some() => {
            a.as_f64().unwrap_or(0.0).partial_cmp(&b.as_f64().unwrap_or(0.0))
        }
        (Value::Str(a), Value::Str(b)) => a.partial_cmp(b),
        _ => None,
    };
    match (ord, op) {
        (Some(o), _) => Ok(match op {
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::Le => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::Ge => o != Ordering::Less,
            CmpOp::Eq => o == Ordering::Equal,
            CmpOp::Ne => o != Ordering::Equal,
        }),
        (None, CmpOp::Eq) => Ok(l == r),
        (None, CmpOp::Ne) => Ok(l != r),
        (None, _) => {
            if let (Value::Float(a), Value::Float(b)) = (l, r) {
                if a.is_nan() || b.is_nan() {
                    return Ok(false);
                }
            }
            Err(PyError::type_err(format!(
                "'{op}' not supported between instances of '{}' and '{}'",
                l.type_name(),
                r.type_name()
            )))
        }
    }
}
