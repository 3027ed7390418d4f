//! libFuzzer target; the input format and oracles are in
//! crates/tcplab-fuzz/src/merge.rs (docs/FUZZING.md).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| tcplab_fuzz::merge::check(data));
