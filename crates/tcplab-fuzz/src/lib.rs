//! The fuzz targets of tcplab, as functions: each takes the raw input
//! bytes, feeds them to one part of tcplab and asserts its oracles (a
//! failed assertion or any panic is a finding).
//!
//! The libFuzzer targets in `fuzz/` (cargo-fuzz, nightly) are one line
//! each around these; `tests/corpus.rs` replays the committed corpora
//! (`fuzz/corpus/TARGET/`, seeds and every finding) through them on the
//! stable toolchain in `cargo test`. docs/FUZZING.md has the campaign.
//!
//! - [`scenario`]: scenario TOML text and `--set` overrides;
//! - [`packetdrill`]: packetdrill scripts, parsed and run;
//! - [`segments`]: the TCP core fed sequences of segments;
//! - [`merge`]: shard files given to `tcplab merge`.

pub mod merge;
pub mod packetdrill;
pub mod scenario;
pub mod segments;

/// A target: raw input bytes in, a panic on a finding.
pub type Check = fn(&[u8]);

/// The targets by name, as cargo-fuzz names them (`fuzz/fuzz_targets/`).
pub const TARGETS: &[(&str, Check)] = &[
    ("scenario", scenario::check),
    ("packetdrill", packetdrill::check),
    ("core_segments", segments::check),
    ("merge", merge::check),
];
