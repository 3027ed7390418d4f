//! The Python subset, against CPython's results for the same text.

use super::*;

fn ev(src: &str) -> Value {
    Interpreter::new().eval_str(src).unwrap()
}

#[test]
fn test_arithmetic_operators() {
    assert_eq!(ev("7 // 2"), Value::Int(3));
    assert_eq!(ev("-7 // 2"), Value::Int(-4));
    assert_eq!(ev("-7 % 3"), Value::Int(2));
    assert_eq!(ev("7 / 2"), Value::Float(3.5));
    assert_eq!(ev("2 ** 10 - 1"), Value::Int(1023));
    assert_eq!(ev("(1 + 2) * 3"), Value::Int(9));
    assert_eq!(ev("0x7fffffff"), Value::Int(0x7fff_ffff));
    assert_eq!(ev("1 << 4 | 1"), Value::Int(17));
}

#[test]
fn test_deep_nesting_is_a_syntax_error() {
    // Each of these overflowed the stack of a spawned thread (2 MiB).
    let hostile = [
        format!("{}1{}", "(".repeat(10_000), ")".repeat(10_000)),
        format!("{}1", "-".repeat(100_000)),
        format!("{}1", "not ".repeat(100_000)),
        vec!["1"; 100_000].join(" + "),
        vec!["1"; 100_000].join(" and "),
        vec!["2"; 10_000].join(" ** "),
    ];
    let results = std::thread::spawn(move || {
        hostile.iter().map(|src| Interpreter::new().eval_str(src).map_err(|e| e.to_string())).collect::<Vec<_>>()
    })
    .join()
    .expect("no stack overflow");
    for r in results {
        let e = r.unwrap_err();
        assert!(e.contains("nested more than 100 levels"), "{e}");
    }
    assert_eq!(ev(&format!("{}1{}", "(".repeat(90), ")".repeat(90))), Value::Int(1));
    assert_eq!(ev(&vec!["1"; 90].join(" + ")), Value::Int(90));
}

#[test]
fn test_chained_comparison() {
    assert_eq!(ev("1 <= 2 <= 3"), Value::Bool(true));
    assert_eq!(ev("1 <= 5 <= 3"), Value::Bool(false));
    assert_eq!(ev("990 <= 1000 < 1010 != 7"), Value::Bool(true));
    assert_eq!(ev("not 1 == 2 and 3 > 2"), Value::Bool(true));
    assert_eq!(ev("0 or 5"), Value::Int(5));
}

#[test]
fn test_percent_formatting() {
    assert_eq!(ev("'cwnd=%d' % 10"), Value::Str("cwnd=10".into()));
    assert_eq!(ev("'a: %d b: %s c: %05.1f' % (1, 'x', 2.75)"), Value::Str("a: 1 b: x c: 002.8".into()));
    assert_eq!(ev("'%x|%-4d|' % (255, 7)"), Value::Str("ff|7   |".into()));
}

#[test]
fn test_assert_message_and_state_across_blocks() {
    let mut i = Interpreter::new();
    i.set("tcpi_snd_cwnd", Value::Int(36));
    i.exec("cwnd = 35").unwrap();
    i.exec("cwnd += 1; assert tcpi_snd_cwnd == cwnd, tcpi_snd_cwnd").unwrap();
    let e = i.exec("print(tcpi_snd_cwnd); assert tcpi_snd_cwnd == 48, tcpi_snd_cwnd").unwrap_err();
    assert_eq!(e.to_string(), "AssertionError: 36");
    assert_eq!(i.output, vec!["36".to_string()]);
    let e = i.exec("assert 0").unwrap_err();
    assert_eq!(e.to_string(), "AssertionError");
}

#[test]
fn test_continuation_comments_and_indentation() {
    let mut i = Interpreter::new();
    i.exec("\nx = 1 + \\\n  2   # three\n   assert x == 3, 'x=%d' % x;\\\n").unwrap();
    assert_eq!(i.get("x"), Some(&Value::Int(3)));
}

#[test]
fn test_errors() {
    let mut i = Interpreter::new();
    assert_eq!(i.exec("y = z").unwrap_err().to_string(), "NameError: name 'z' is not defined");
    assert_eq!(i.exec("y = 1 // 0").unwrap_err().to_string(), "ZeroDivisionError: integer division or modulo by zero");
    assert!(matches!(i.exec("if 1: pass"), Err(PyError::Unsupported(_))));
    assert!(matches!(i.exec("import os"), Err(PyError::Unsupported(_))));
}

#[test]
fn test_float_repr() {
    assert_eq!(ev("str(1.0)"), Value::Str("1.0".into()));
    assert_eq!(ev("str(0.1 + 0.2)"), Value::Str("0.30000000000000004".into()));
    assert_eq!(ev("str(1e16)"), Value::Str("1e+16".into()));
}

#[test]
fn test_names_read() {
    let p = parse_program("x = tcpi_rtt; print(tcpi_snd_cwnd + x)").unwrap();
    assert_eq!(p.names_read(), &["tcpi_rtt".to_string(), "tcpi_snd_cwnd".to_string(), "x".to_string()]);
}

#[test]
fn test_error_messages_quote_operators_as_written() {
    let mut i = Interpreter::new();
    assert_eq!(i.exec("x = 1 )").unwrap_err().to_string(), "SyntaxError: invalid syntax near Op(\")\")");
    assert_eq!(i.exec("x = (1, 2").unwrap_err().to_string(), "SyntaxError: expected ')'");
    assert_eq!(
        i.exec("x = 'a' - 1").unwrap_err().to_string(),
        "TypeError: unsupported operand type(s) for -: 'str' and 'int'"
    );
    assert_eq!(
        i.exec("x = 'a' <= 1").unwrap_err().to_string(),
        "TypeError: '<=' not supported between instances of 'str' and 'int'"
    );
    assert_eq!(i.exec("x = ~'a'").unwrap_err().to_string(), "TypeError: bad operand type for unary ~: 'str'");
    i.exec("x = 7; x //= 2; x **= 2; x <<= 1; x ^= 1").unwrap();
    assert_eq!(i.get("x"), Some(&Value::Int(19)));
}
