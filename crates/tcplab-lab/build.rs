//! Records how the binary was built, for `tcplab bench`'s report: a
//! profile-guided build (scripts/pgo-build.sh) runs the benchmark about
//! 40 % faster than a plain one, so a figure says which it came from.

fn main() {
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    let has = |what: &str| flags.split('\x1f').any(|f| f.contains(what));
    let kind = if has("profile-use") {
        "profile-guided"
    } else if has("profile-generate") {
        "instrumented for profiling"
    } else {
        "plain"
    };
    let profile = std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into());
    println!("cargo:rustc-env=TCPLAB_BUILD={profile}, {kind}");
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    println!("cargo:rerun-if-changed=build.rs");
}
