//! Python's text forms of values: `repr(float)` and `%` formatting.

use super::{PyError, Value};

/// Python's `repr(float)`: shortest round-trip digits, `.0` for integral
/// values, exponent form outside [1e-4, 1e16).
pub(super) fn float_repr(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e16).contains(&a) {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        return format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

/// `fmt % args` (printf-style formatting).
pub(super) fn percent_format(fmt: &str, args: &Value) -> Result<String, PyError> {
    let args: Vec<Value> = match args {
        Value::Tuple(t) => t.clone(),
        v => vec![v.clone()],
    };
    let mut next = args.into_iter();
    let mut out = String::new();
    let chars: Vec<char> = fmt.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut flags = String::new();
        while i < chars.len() && "-+ 0#".contains(chars[i]) {
            flags.push(chars[i]);
            i += 1;
        }
        let mut width = String::new();
        while i < chars.len() && chars[i].is_ascii_digit() {
            width.push(chars[i]);
            i += 1;
        }
        let mut prec: Option<usize> = None;
        if i < chars.len() && chars[i] == '.' {
            i += 1;
            let mut p = String::new();
            while i < chars.len() && chars[i].is_ascii_digit() {
                p.push(chars[i]);
                i += 1;
            }
            prec = Some(p.parse().unwrap_or(0));
        }
        let Some(&conv) = chars.get(i) else {
            return Err(PyError::exc("ValueError", "incomplete format"));
        };
        i += 1;
        if conv == '%' {
            out.push('%');
            continue;
        }
        let arg = next.next().ok_or_else(|| PyError::type_err("not enough arguments for format string"))?;
        let body = match conv {
            'd' | 'i' | 'u' => {
                let v = match &arg {
                    Value::Float(f) => *f as i128,
                    v => v.as_int().ok_or_else(|| {
                        PyError::type_err(format!("%{conv} format: a real number is required, not {}", arg.type_name()))
                    })?,
                };
                let s = v.abs().to_string();
                sign_prefix(v < 0, &flags) + &s
            }
            'x' | 'X' | 'o' => {
                let v =
                    arg.as_int().ok_or_else(|| PyError::type_err(format!("%{conv} format: an integer is required")))?;
                let mut s = match conv {
                    'x' => format!("{:x}", v.abs()),
                    'X' => format!("{:X}", v.abs()),
                    _ => format!("{:o}", v.abs()),
                };
                if flags.contains('#') {
                    s = match conv {
                        'x' => format!("0x{s}"),
                        'X' => format!("0X{s}"),
                        _ => format!("0o{s}"),
                    };
                }
                sign_prefix(v < 0, &flags) + &s
            }
            'f' | 'F' | 'e' | 'E' | 'g' | 'G' => {
                let v = arg.as_f64().ok_or_else(|| PyError::type_err("must be real number"))?;
                let p = prec.unwrap_or(6);
                let s = match conv {
                    'f' | 'F' => format!("{:.*}", p, v.abs()),
                    'e' | 'E' => {
                        let s = format!("{:.*e}", p, v.abs());
                        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                        let e: i32 = e.parse().unwrap_or(0);
                        let s = format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs());
                        if conv == 'E' {
                            s.to_uppercase()
                        } else {
                            s
                        }
                    }
                    _ => float_repr(v.abs()),
                };
                sign_prefix(v < 0.0, &flags) + &s
            }
            's' => {
                let s = arg.to_str();
                match prec {
                    Some(p) => s.chars().take(p).collect(),
                    None => s,
                }
            }
            'r' => arg.repr(),
            'c' => match &arg {
                Value::Str(s) => s.clone(),
                v => v.as_int().and_then(|c| char::from_u32(c as u32)).map(String::from).unwrap_or_default(),
            },
            other => return Err(PyError::exc("ValueError", format!("unsupported format character '{other}'"))),
        };
        let w: usize = width.parse().unwrap_or(0);
        let len = body.chars().count();
        if len >= w {
            out.push_str(&body);
        } else if flags.contains('-') {
            out.push_str(&body);
            out.push_str(&" ".repeat(w - len));
        } else if flags.contains('0') && "diuxXofFeEgG".contains(conv) {
            let (sign, digits) = if body.starts_with(['-', '+', ' ']) { body.split_at(1) } else { ("", body.as_str()) };
            out.push_str(sign);
            out.push_str(&"0".repeat(w - len));
            out.push_str(digits);
        } else {
            out.push_str(&" ".repeat(w - len));
            out.push_str(&body);
        }
    }
    if next.next().is_some() {
        return Err(PyError::type_err("not all arguments converted during string formatting"));
    }
    Ok(out)
}

fn sign_prefix(neg: bool, flags: &str) -> String {
    if neg {
        "-".into()
    } else if flags.contains('+') {
        "+".into()
    } else if flags.contains(' ') {
        " ".into()
    } else {
        String::new()
    }
}
