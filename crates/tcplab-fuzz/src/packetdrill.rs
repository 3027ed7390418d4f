//! The packetdrill interpreter: lexer, parser, and (for scripts that
//! parse) the whole run against the TCP model in virtual time.
//!
//! Input: script text. Oracles: nothing panics or overflows the stack; a
//! parse error carries a line within the script; a run ends in pass, fail
//! or skip, and the model never panics under it.

use std::path::Path;
use tcplab_packetdrill::{parser, run_source, Outcome, RunOptions};

pub fn check(data: &[u8]) {
    let Ok(src) = std::str::from_utf8(data) else { return };
    match parser::parse(src) {
        Err(e) => {
            let lines = src.lines().count().max(1);
            let line = e.line as usize;
            assert!(line >= 1 && line <= lines + 1, "error line {line} outside 1..={}: {e}", lines + 1);
        }
        Ok(_) => {
            // Harness files are looked up next to the script: none here.
            let r = run_source(src, Path::new("/nonexistent/fuzz.pkt"), &RunOptions::default());
            if let Outcome::Fail { message, .. } = &r.outcome {
                assert!(!message.starts_with("model panicked"), "{message}");
            }
        }
    }
}
