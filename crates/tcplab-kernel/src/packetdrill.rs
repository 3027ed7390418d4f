//! Linux's own packetdrill, run against the kernel in the guest.
//!
//! `tcplab packetdrill --backend linux` runs each `.pkt` script with the
//! real packetdrill (google/packetdrill, GPLv2) inside a User-Mode Linux
//! guest of the kernel backend, in virtual time, as root in the guest and
//! never on the host:
//!
//! 1. **The tool.** packetdrill's C sources (the `gtests/net/packetdrill`
//!    directory beside the scripts, or `--packetdrill DIR`) are copied into
//!    the cache (`<cache>/packetdrill/work-*`), given tcplab's
//!    [`EDITS`] (virtual time, an older kernel's `tcp_info`) and built with `./configure && make
//!    packetdrill`; the binary is cached under a key that hashes every
//!    source file and the edits (`<cache>/packetdrill/<key>/packetdrill`),
//!    as kernel images are. The sources are never written to.
//! 2. **The guests.** Scripts are shared among `--jobs` guests (one per
//!    core by default), each booting once and running its scripts one
//!    after another (`tcplab-agent packetdrill`, see
//!    `crates/tcplab-agent/src/packetdrill.rs`): per script a fresh
//!    network namespace, the script's directory as working directory, and
//!    the arguments of packetdrill's own harness (`run_all.py`, IPv4):
//!    `--send_omit_free --ip_version=ipv4 --local_ip --gateway_ip
//!    --netmask_ip --remote_ip -D TFO_COOKIE=... -D CODE=host_unreachable
//!    -D CMSG_LEVEL_IP=SOL_IP -D CMSG_TYPE_RECVERR=IP_RECVERR`. Each
//!    script's init command sources `defaults.sh` itself, as under
//!    `run_all.py`.
//! 3. **Addresses** ([`TunAddresses`]): the guest's addresses come from
//!    the benchmarking range 198.18.0.0/15 (local and gateway 198.18.0.1/16,
//!    remote 198.19.0.1), with `TFO_COOKIE` computed for them as Linux
//!    computes a Fast Open cookie ([`tfo_cookie`]). A script whose text
//!    names packetdrill's own addresses (192.168.0.x, 192.0.2.x) or the
//!    cookie for them runs with those, as `run_all.py` runs it: its
//!    commands or packets depend on them. The guest has no network device
//!    attached to the host either way.
//! 4. **Outcomes** ([`Verdict`]): exit status 0 is a pass; otherwise the
//!    first `NAME.pkt:LINE: ` line of packetdrill's stderr gives the line
//!    and, with what follows, the message. `*v6.pkt` scripts are skipped
//!    (`run_all.py` runs them over IPv6 only; the image has no IPv6).
//!
//! A guest that makes no progress for [`Runner::stall_limit`] of wall
//! time is killed; the script it was running fails with a message saying
//! so and the rest of its scripts go to a new guest.

use crate::error::{KernelError, Result};
use crate::image::{self, Fnv, Image};
use std::collections::{BTreeMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tcplab_agent::packetdrill::{PdGuest, PdJob, PdOutcome, PdScript, GUEST_FILE, OUTCOMES_FILE, PD_JOB_VERSION};

/// Changes whenever the way the tool is built changes.
const RECIPE_VERSION: &str = "tcplab-packetdrill-build-1";

/// One edit of packetdrill's sources: in `file`, `find` (which must occur
/// exactly once) becomes `replace`.
#[derive(Clone, Copy, Debug)]
pub struct Edit {
    pub file: &'static str,
    pub find: &'static str,
    pub replace: &'static str,
}

/// The edits tcplab makes to its copy of packetdrill (the sources under
/// `../shared` are never written to).
///
/// The first three make packetdrill run in virtual time. Under
/// `time-travel=inf-cpu` the guest's clock stands still while a process
/// computes, so packetdrill's two spin loops would never end:
/// `wait_for_event` sleeps until 20 µs before an event and spins the rest
/// (and spins the whole wait before the first event), and
/// `schedule_start_time_usecs` spins on `times()` to find the edge of a
/// jiffy. Edited, the first sleeps the whole wait (exact in virtual time:
/// the agent gives packetdrill a timer slack of 1 ns) and the second
/// polls `times()` every 10 µs of sleep, so a script still starts 250 µs
/// (plus at most 10 µs) after a tick, as packetdrill wants.
///
/// The fourth lets packetdrill read an older kernel's `tcp_info`: this
/// packetdrill's `struct _tcp_info` ends with the AccECN counters of
/// Linux 6.18 (`tcpi_received_ce` on), 6.12's is shorter, and every
/// `%{ }%` block would fail on `assert(len >= sizeof(struct _tcp_info))`.
/// The buffer is zeroed before `getsockopt` (`calloc`), so the fields the
/// kernel does not have read as 0; the assertion keeps the fields every
/// kernel since 2.6 has (up to `tcpi_total_retrans`), so era kernels'
/// (3.12, ...) shorter `tcp_info` is read the same way.
pub const EDITS: &[Edit] = &[
    Edit {
        file: "run.c",
        find: "const int MAX_SPIN_USECS = 20;",
        replace: "const int MAX_SPIN_USECS = 0; /* tcplab: virtual time, never spin */",
    },
    Edit {
        file: "run.c",
        find: "if (state->num_events > 0 && wait_usecs > MAX_SPIN_USECS) {",
        replace: "if (wait_usecs > MAX_SPIN_USECS) { /* tcplab: sleep before the first event too */",
    },
    Edit {
        file: "run.c",
        find: "\twhile (jiffy_ticks < TARGET_JIFFY_TICKS) {\n\t\tclock_t jiffies = times(NULL);",
        replace: "\twhile (jiffy_ticks < TARGET_JIFFY_TICKS) {\n\t\tusleep(10); /* tcplab: virtual time, never spin */\n\t\tclock_t jiffies = times(NULL);",
    },
    Edit {
        file: "code.c",
        find: "\tassert(len >= sizeof(struct _tcp_info));\n\n\twrite_symbols(code);\n\n\t/* Emit the recorded values of tcpi_foo values. */\n\temit_var(code, \"tcpi_state\",\t\tinfo->tcpi_state);\n\temit_var(code, \"tcpi_ca_state\"",
        replace: "\t/* tcplab: an older kernel's shorter tcp_info; the rest is zero (calloc) */\n\tassert(len >= __builtin_offsetof(struct _tcp_info, tcpi_pacing_rate));\n\n\twrite_symbols(code);\n\n\t/* Emit the recorded values of tcpi_foo values. */\n\temit_var(code, \"tcpi_state\",\t\tinfo->tcpi_state);\n\temit_var(code, \"tcpi_ca_state\"",
    },
];

/// Virtual seconds a script may run in the guest (`run_all.py`'s limit,
/// there in wall time).
pub const SCRIPT_TIMEOUT_SECS: u64 = 180;

/// The built tool.
#[derive(Clone, Debug)]
pub struct Tool {
    pub binary: PathBuf,
    pub key: String,
    /// Where the sources came from.
    pub source: PathBuf,
}

/// The packetdrill source directory that comes with `scripts`: the first
/// ancestor directory of a script that has `packetdrill/run.c` and
/// `packetdrill/configure` (Linux's scripts live in `gtests/net/tcp/`,
/// the tool in `gtests/net/packetdrill/`).
pub fn find_source(scripts: &[PathBuf]) -> Option<PathBuf> {
    for s in scripts {
        let abs = s.canonicalize().unwrap_or_else(|_| s.clone());
        for dir in abs.ancestors().skip(1) {
            let cand = dir.join("packetdrill");
            if is_source(&cand) {
                return Some(cand);
            }
        }
    }
    None
}

fn is_source(dir: &Path) -> bool {
    dir.join("run.c").is_file() && dir.join("configure").is_file() && dir.join("parser.y").is_file()
}

/// Every regular file under `root`, relative, sorted.
fn source_files(root: &Path) -> Result<Vec<PathBuf>> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
        let entries = fs::read_dir(dir).map_err(|e| KernelError::new(format!("{}: {e}", dir.display())))?;
        for e in entries.flatten() {
            let p = e.path();
            let ft = e.file_type().map_err(|e| KernelError::new(format!("{}: {e}", p.display())))?;
            if ft.is_dir() {
                walk(root, &p, out)?;
            } else if ft.is_file() {
                out.push(p.strip_prefix(root).unwrap_or(&p).to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}

/// The cache key of the tool built from `src`: every file's name and
/// content, the edits and the recipe.
pub fn tool_key(src: &Path) -> Result<String> {
    let mut h = Fnv::default();
    h.write(RECIPE_VERSION.as_bytes());
    for e in EDITS {
        h.write(e.file.as_bytes());
        h.write(e.find.as_bytes());
        h.write(e.replace.as_bytes());
    }
    for rel in source_files(src)? {
        let p = src.join(&rel);
        let bytes = fs::read(&p).map_err(|e| KernelError::new(format!("{}: {e}", p.display())))?;
        h.write(rel.to_string_lossy().as_bytes());
        h.write(&bytes);
    }
    Ok(h.hex())
}

/// Applies [`EDITS`] to a copy of the sources; each must find its text
/// exactly once.
fn apply_edits(work: &Path) -> Result<()> {
    for Edit { file, find: from, replace: to } in EDITS {
        let p = work.join(file);
        let text = fs::read_to_string(&p).map_err(|e| KernelError::new(format!("{}: {e}", p.display())))?;
        let n = text.matches(from).count();
        if n != 1 {
            return Err(KernelError::new(format!(
                "packetdrill's {file} has changed: the virtual-time edit expects {:?} once, found it {n} times \
                 (tcplab's EDITS in crates/tcplab-kernel/src/packetdrill.rs must follow)",
                from.lines().next().unwrap_or(from)
            )));
        }
        fs::write(&p, text.replacen(from, to, 1)).map_err(|e| KernelError::new(format!("{}: {e}", p.display())))?;
    }
    Ok(())
}

/// The tool built from `src` (found in the cache, or built into it).
/// `phase` is told what happens ("building packetdrill").
pub fn tool(src: &Path, phase: &dyn Fn(&str)) -> Result<Tool> {
    if !is_source(src) {
        return Err(KernelError::new(format!(
            "{}: not packetdrill's source directory (no run.c, configure and parser.y)",
            src.display()
        )));
    }
    let src = src.canonicalize().map_err(|e| KernelError::new(format!("{}: {e}", src.display())))?;
    let key = tool_key(&src)?;
    let root = image::cache_root()?.join("packetdrill");
    let dir = root.join(&key);
    let binary = dir.join("packetdrill");
    if binary.is_file() {
        return Ok(Tool { binary, key, source: src });
    }
    phase(&format!("building packetdrill from {} (once; cached as {key})", src.display()));
    let work = root.join(format!("work-{key}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&work);
    for rel in source_files(&src)? {
        let to = work.join(&rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| KernelError::new(format!("{}: {e}", parent.display())))?;
        }
        fs::copy(src.join(&rel), &to).map_err(|e| KernelError::new(format!("{}: {e}", to.display())))?;
    }
    apply_edits(&work)?;
    let log_path = root.join(format!("build-{key}.log"));
    let log = fs::File::create(&log_path).map_err(|e| KernelError::new(format!("{}: {e}", log_path.display())))?;
    for (what, program, args) in [("./configure", "sh", ["./configure"]), ("make", "make", ["packetdrill"])] {
        let out =
            |log: &fs::File| log.try_clone().map_err(|e| KernelError::new(format!("{}: {e}", log_path.display())));
        let status = Command::new(program)
            .args(args)
            .current_dir(&work)
            .stdin(Stdio::null())
            .stdout(out(&log)?)
            .stderr(out(&log)?)
            .status()
            .map_err(|e| KernelError::new(format!("cannot run {what} for packetdrill: {e}")))?;
        if !status.success() {
            let text = fs::read_to_string(&log_path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            return Err(KernelError::new(format!(
                "building packetdrill: `{what}` failed ({status}); it needs a C compiler, make, bison and flex \
                 (apt-get install build-essential bison flex). Last lines of {}:\n{}",
                log_path.display(),
                lines[lines.len().saturating_sub(15)..].join("\n")
            )));
        }
    }
    fs::create_dir_all(&dir).map_err(|e| KernelError::new(format!("{}: {e}", dir.display())))?;
    let tmp = dir.join(format!("packetdrill.tmp-{}", std::process::id()));
    fs::copy(work.join("packetdrill"), &tmp).map_err(|e| KernelError::new(format!("{}: {e}", tmp.display())))?;
    fs::rename(&tmp, &binary).map_err(|e| KernelError::new(format!("{}: {e}", binary.display())))?;
    let _ = fs::remove_dir_all(&work);
    Ok(Tool { binary, key, source: src })
}

/// The tun device's addresses, as packetdrill's `--local_ip`,
/// `--gateway_ip`, `--netmask_ip` and `--remote_ip`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addresses {
    pub local: [u8; 4],
    pub gateway: [u8; 4],
    pub netmask: [u8; 4],
    pub remote: [u8; 4],
}

/// The benchmarking range (RFC 2544's 198.18.0.0/15), as every address in
/// the kernel backend's guests.
pub const BENCHMARK_ADDRESSES: Addresses =
    Addresses { local: [198, 18, 0, 1], gateway: [198, 18, 0, 1], netmask: [255, 255, 0, 0], remote: [198, 19, 0, 1] };

/// `run_all.py`'s IPv4 addresses.
pub const PACKETDRILL_ADDRESSES: Addresses =
    Addresses { local: [192, 168, 0, 1], gateway: [192, 168, 0, 1], netmask: [255, 255, 0, 0], remote: [192, 0, 2, 1] };

/// Which addresses the scripts run with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TunAddresses {
    /// [`BENCHMARK_ADDRESSES`], except for a script that names
    /// packetdrill's own ([`needs_packetdrill_addresses`]).
    #[default]
    Auto,
    /// [`PACKETDRILL_ADDRESSES`] for every script, as `run_all.py`.
    Packetdrill,
}

impl TunAddresses {
    pub fn parse(s: &str) -> std::result::Result<TunAddresses, String> {
        match s {
            "auto" => Ok(TunAddresses::Auto),
            "packetdrill" => Ok(TunAddresses::Packetdrill),
            _ => Err(format!("{s:?}: expected auto or packetdrill")),
        }
    }
}

/// The Fast Open key `defaults.sh` sets (`net.ipv4.tcp_fastopen_key`).
pub const DEFAULT_TFO_KEY: [u32; 4] = [0xa1a1a1a1, 0xb2b2b2b2, 0xc3c3c3c3, 0xd4d4d4d4];

/// The Fast Open cookie Linux 6.12 gives a client at `client` talking to
/// `server` under `key` (`__tcp_fastopen_cookie_gen_cipher`: SipHash-2-4
/// of the SYN's source and destination addresses, keyed by the sysctl's
/// four words as little-endian bytes), as packetdrill writes it (hex of
/// the option's bytes). For run_all.py's addresses and the default key it
/// is run_all.py's `TFO_COOKIE=3021b9d889017eeb`.
pub fn tfo_cookie(key: [u32; 4], client: [u8; 4], server: [u8; 4]) -> String {
    let mut kb = [0u8; 16];
    for (i, w) in key.iter().enumerate() {
        kb[i * 4..i * 4 + 4].copy_from_slice(&w.to_le_bytes());
    }
    let k0 = u64::from_le_bytes(kb[0..8].try_into().unwrap_or_default());
    let k1 = u64::from_le_bytes(kb[8..16].try_into().unwrap_or_default());
    let mut data = [0u8; 8];
    data[..4].copy_from_slice(&client);
    data[4..].copy_from_slice(&server);
    let h = siphash24(k0, k1, &data);
    h.to_le_bytes().iter().map(|b| format!("{b:02x}")).collect()
}

/// SipHash-2-4 of `data` (Linux's `siphash()`).
fn siphash24(k0: u64, k1: u64, data: &[u8]) -> u64 {
    let mut v0 = k0 ^ 0x736f6d6570736575;
    let mut v1 = k1 ^ 0x646f72616e646f6d;
    let mut v2 = k0 ^ 0x6c7967656e657261;
    let mut v3 = k1 ^ 0x7465646279746573;
    let round = |v0: &mut u64, v1: &mut u64, v2: &mut u64, v3: &mut u64| {
        *v0 = v0.wrapping_add(*v1);
        *v1 = v1.rotate_left(13);
        *v1 ^= *v0;
        *v0 = v0.rotate_left(32);
        *v2 = v2.wrapping_add(*v3);
        *v3 = v3.rotate_left(16);
        *v3 ^= *v2;
        *v0 = v0.wrapping_add(*v3);
        *v3 = v3.rotate_left(21);
        *v3 ^= *v0;
        *v2 = v2.wrapping_add(*v1);
        *v1 = v1.rotate_left(17);
        *v1 ^= *v2;
        *v2 = v2.rotate_left(32);
    };
    let chunks = data.chunks_exact(8);
    let rest = chunks.remainder();
    for c in chunks {
        let m = u64::from_le_bytes(c.try_into().unwrap_or_default());
        v3 ^= m;
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        round(&mut v0, &mut v1, &mut v2, &mut v3);
        v0 ^= m;
    }
    let mut last = (data.len() as u64 & 0xff) << 56;
    for (i, b) in rest.iter().enumerate() {
        last |= u64::from(*b) << (8 * i);
    }
    v3 ^= last;
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    round(&mut v0, &mut v1, &mut v2, &mut v3);
    v0 ^= last;
    v2 ^= 0xff;
    for _ in 0..4 {
        round(&mut v0, &mut v1, &mut v2, &mut v3);
    }
    v0 ^ v1 ^ v2 ^ v3
}

fn dotted(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

/// packetdrill's arguments before the script's name: `run_all.py`'s for
/// IPv4 with `addr`.
pub fn arguments(addr: &Addresses) -> Vec<String> {
    let mut v = vec![
        "--send_omit_free".to_string(),
        "--ip_version=ipv4".to_string(),
        format!("--local_ip={}", dotted(addr.local)),
        format!("--gateway_ip={}", dotted(addr.gateway)),
        format!("--netmask_ip={}", dotted(addr.netmask)),
        format!("--remote_ip={}", dotted(addr.remote)),
    ];
    for d in [
        format!("TFO_COOKIE={}", tfo_cookie(DEFAULT_TFO_KEY, addr.remote, addr.local)),
        "CODE=host_unreachable".to_string(),
        "CMSG_LEVEL_IP=SOL_IP".to_string(),
        "CMSG_TYPE_RECVERR=IP_RECVERR".to_string(),
    ] {
        v.push("-D".to_string());
        v.push(d);
    }
    v
}

/// Whether a script's text depends on `run_all.py`'s addresses: outside
/// its header options (`--local_ip=...`, which the command line
/// overrides), it names 192.168.0.x or 192.0.2.x (in a command such as
/// `ip route change 192.0.2.1 via 192.168.0.2`), or carries the Fast Open
/// cookie computed for them.
pub fn needs_packetdrill_addresses(text: &str) -> bool {
    let cookie = tfo_cookie(DEFAULT_TFO_KEY, PACKETDRILL_ADDRESSES.remote, PACKETDRILL_ADDRESSES.local);
    text.lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .any(|l| l.contains("192.168.0.") || l.contains("192.0.2.") || l.contains(&cookie))
}

/// How a script ended on the kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// The script line and packetdrill's error (its stderr from the
    /// `NAME.pkt:LINE: ` prefix on, lines kept).
    Fail {
        line: u32,
        message: String,
    },
    Skip {
        reason: String,
    },
}

/// The verdict of one packetdrill run from its exit status and stderr.
pub fn verdict(script: &Path, o: &PdOutcome, stderr: &str) -> Verdict {
    if let Some(e) = &o.error {
        return Verdict::Fail { line: 0, message: format!("in the guest: {e}") };
    }
    if o.timed_out {
        return Verdict::Fail {
            line: 0,
            message: format!(
                "timed out: still running after {SCRIPT_TIMEOUT_SECS} s of virtual time (run_all.py's limit){}",
                last_lines(stderr)
            ),
        };
    }
    if o.exit_code == Some(0) {
        return Verdict::Pass;
    }
    let base = script.file_name().map(|b| b.to_string_lossy().into_owned()).unwrap_or_default();
    let prefix = format!("{base}:");
    let lines: Vec<&str> = stderr.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let Some(rest) = l.strip_prefix(&prefix) else { continue };
        let Some((num, msg)) = rest.split_once(':') else { continue };
        let Ok(line) = num.trim().parse::<u32>() else { continue };
        let mut message = msg.trim_start().to_string();
        for more in &lines[i + 1..] {
            message.push('\n');
            message.push_str(more);
        }
        return Verdict::Fail { line, message: message.trim_end().to_string() };
    }
    let status = match (o.exit_code, o.signal) {
        (Some(c), _) => format!("packetdrill exited with status {c}"),
        (None, Some(s)) => format!("packetdrill was killed by signal {s}"),
        (None, None) => "packetdrill did not report how it ended".to_string(),
    };
    let text = stderr.trim();
    Verdict::Fail { line: 0, message: if text.is_empty() { status } else { format!("{status}: {text}") } }
}

fn last_lines(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        String::new()
    } else {
        format!("; last output:\n{}", lines[lines.len().saturating_sub(5)..].join("\n"))
    }
}

/// The directory that hides `path` from the guest, if one does: the
/// agent mounts tmpfs on `/run` (and on `/tmp`, but it reaches the host's
/// `/tmp` through a bind mount), so a script there is not the host's.
pub fn hidden_in_guest(path: &Path) -> Option<&'static str> {
    ["/run"].into_iter().find(|d| path.starts_with(d))
}

/// Why a script is not run on the kernel, if it is not.
pub fn skip_reason(script: &Path) -> Option<String> {
    let name = script.file_name()?.to_string_lossy();
    name.ends_with("v6.pkt").then(|| {
        "IPv6 script: run_all.py runs *v6.pkt over IPv6 only, and the image has no IPv6 (UML's defconfig)".to_string()
    })
}

/// One script's result on the kernel.
#[derive(Clone, Debug)]
pub struct ScriptRun {
    pub path: PathBuf,
    pub verdict: Verdict,
    pub stdout: String,
    pub stderr: String,
    /// Virtual seconds packetdrill ran for (0 when it did not run).
    pub virtual_secs: f64,
    /// The addresses it ran with (none when skipped).
    pub addresses: Option<Addresses>,
}

/// Runs scripts on one image.
#[derive(Clone, Debug)]
pub struct Runner {
    pub image: Image,
    pub agent: PathBuf,
    pub tool: Tool,
    /// Guests at a time.
    pub guests: usize,
    /// Wall time a guest may go without finishing a script (boot included).
    pub stall_limit: Duration,
    pub addresses: TunAddresses,
    /// Guest memory, MB.
    pub mem_mb: u32,
}

/// A script to run: its index in the caller's list, path, arguments.
struct Pending {
    index: usize,
    path: PathBuf,
    addresses: Addresses,
}

impl Runner {
    /// Runs `scripts` (absolute or relative paths); results in the same
    /// order. `done` is called as each script ends (from worker threads).
    /// `kernel_release` of the guests is returned with them.
    pub fn run(&self, scripts: &[PathBuf], done: &(dyn Fn(&ScriptRun) + Sync)) -> Result<(Vec<ScriptRun>, String)> {
        let mut results: Vec<Option<ScriptRun>> = vec![None; scripts.len()];
        let mut todo = Vec::new();
        for (i, s) in scripts.iter().enumerate() {
            if let Some(reason) = skip_reason(s) {
                let r = ScriptRun {
                    path: s.clone(),
                    verdict: Verdict::Skip { reason },
                    stdout: String::new(),
                    stderr: String::new(),
                    virtual_secs: 0.0,
                    addresses: None,
                };
                done(&r);
                results[i] = Some(r);
                continue;
            }
            let text = fs::read_to_string(s).map_err(|e| KernelError::new(format!("{}: {e}", s.display())))?;
            let addresses = match self.addresses {
                TunAddresses::Packetdrill => PACKETDRILL_ADDRESSES,
                TunAddresses::Auto if needs_packetdrill_addresses(&text) => PACKETDRILL_ADDRESSES,
                TunAddresses::Auto => BENCHMARK_ADDRESSES,
            };
            let abs = s.canonicalize().map_err(|e| KernelError::new(format!("{}: {e}", s.display())))?;
            if let Some(dir) = hidden_in_guest(&abs) {
                return Err(KernelError::new(format!(
                    "{}: the guest cannot see the host's {dir} (it mounts its own there): \
                     run scripts from another directory",
                    s.display()
                )));
            }
            todo.push(Pending { index: i, path: abs, addresses });
        }
        let guests = self.guests.clamp(1, todo.len().max(1));
        // Interleaved shares: neighbouring scripts (one topic) cost alike.
        let mut shares: Vec<VecDeque<Pending>> = (0..guests).map(|_| VecDeque::new()).collect();
        for (k, p) in todo.into_iter().enumerate() {
            shares[k % guests].push_back(p);
        }
        let out = Mutex::new(BTreeMap::new());
        let release = Mutex::new(String::new());
        let first_error: Mutex<Option<KernelError>> = Mutex::new(None);
        std::thread::scope(|scope| {
            for share in shares {
                let (out, release, first_error) = (&out, &release, &first_error);
                scope.spawn(move || {
                    if let Err(e) = self.run_share(share, scripts, out, release, done) {
                        first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                    }
                });
            }
        });
        if let Some(e) = first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            return Err(e);
        }
        for (i, r) in out.into_inner().unwrap_or_else(|p| p.into_inner()) {
            results[i] = Some(r);
        }
        let mut all = Vec::with_capacity(results.len());
        for (i, r) in results.into_iter().enumerate() {
            all.push(r.ok_or_else(|| KernelError::new(format!("internal: no result for {}", scripts[i].display())))?);
        }
        Ok((all, release.into_inner().unwrap_or_else(|p| p.into_inner())))
    }

    /// Boots guests until every script of `share` has a result.
    fn run_share(
        &self,
        mut share: VecDeque<Pending>,
        scripts: &[PathBuf],
        out: &Mutex<BTreeMap<usize, ScriptRun>>,
        release: &Mutex<String>,
        done: &(dyn Fn(&ScriptRun) + Sync),
    ) -> Result<()> {
        while !share.is_empty() {
            let batch: Vec<&Pending> = share.iter().collect();
            let boot = self.boot(&batch)?;
            if !boot.kernel_release.is_empty() {
                *release.lock().unwrap_or_else(|p| p.into_inner()) = boot.kernel_release.clone();
            }
            let mut finished = 0;
            for (o, stdout, stderr) in boot.outcomes {
                let Some(pos) = share.iter().position(|p| p.index == o.index) else { continue };
                let p = share.remove(pos).unwrap_or_else(|| unreachable!("position is in range"));
                let r = ScriptRun {
                    path: scripts[p.index].clone(),
                    verdict: verdict(&p.path, &o, &stderr),
                    stdout,
                    stderr,
                    virtual_secs: o.virtual_secs,
                    addresses: Some(p.addresses),
                };
                done(&r);
                out.lock().unwrap_or_else(|p| p.into_inner()).insert(p.index, r);
                finished += 1;
            }
            if let Some(stall) = boot.stalled {
                // The script the guest was in fails; the rest go to a new guest.
                let Some(p) = share.pop_front() else { break };
                let (stdout, stderr) = stall.outputs;
                let r = ScriptRun {
                    path: scripts[p.index].clone(),
                    verdict: Verdict::Fail {
                        line: 0,
                        message: format!(
                            "the guest made no progress for {} s of wall time and was killed (raise the limit with --max-wall){}",
                            self.stall_limit.as_secs(),
                            last_lines(&stderr)
                        ),
                    },
                    stdout,
                    stderr,
                    virtual_secs: 0.0,
                    addresses: Some(p.addresses),
                };
                done(&r);
                out.lock().unwrap_or_else(|p| p.into_inner()).insert(p.index, r);
            } else if !share.is_empty() {
                // The guest ended before its last script (a crash of the
                // agent or the kernel): nothing to retry on.
                return Err(KernelError::new(format!(
                    "the packetdrill guest ended after {finished} of its {} scripts; console:\n{}",
                    finished + share.len(),
                    boot.console
                )));
            }
        }
        Ok(())
    }

    /// One guest for `batch`: what it reported before it ended or stalled.
    fn boot(&self, batch: &[&Pending]) -> Result<Boot> {
        let dir = TempDir::new()?;
        let job = PdJob {
            version: PD_JOB_VERSION,
            packetdrill: self.tool.binary.display().to_string(),
            scripts: batch
                .iter()
                .map(|p| PdScript { index: p.index, path: p.path.display().to_string(), args: arguments(&p.addresses) })
                .collect(),
            timeout_secs: SCRIPT_TIMEOUT_SECS,
            out_dir: dir.path().display().to_string(),
        };
        let job_path = dir.path().join("job.json");
        let text = serde_json::to_string(&job).map_err(|e| KernelError::new(format!("internal: job encoding: {e}")))?;
        fs::write(&job_path, text).map_err(|e| io_err(&job_path, e))?;
        let init = dir.path().join("init");
        let script = format!("#!/bin/sh\nexec {} packetdrill {}\n", shell_quote(&self.agent), shell_quote(&job_path));
        fs::write(&init, script).map_err(|e| io_err(&init, e))?;
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&init, fs::Permissions::from_mode(0o755)).map_err(|e| io_err(&init, e))?;
        }
        let console = dir.path().join("console.log");
        let log = fs::File::create(&console).map_err(|e| io_err(&console, e))?;
        let log2 = log.try_clone().map_err(|e| io_err(&console, e))?;
        let mut cmd = Command::new(&self.image.binary);
        cmd.arg(format!("mem={}M", self.mem_mb))
            .args(["rootfstype=hostfs", "rootflags=/", "rw"])
            .arg(format!("init={}", init.display()))
            .args(["time-travel=inf-cpu", "con=null", "con0=fd:0,fd:1", "quiet"])
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2);
        {
            use std::os::unix::process::CommandExt;
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| KernelError::new(format!("cannot start the guest {}: {e}", self.image.binary.display())))?;
        let pgid = child.id() as i32;
        live_guests().push((pgid, dir.path().to_path_buf()));
        let outcomes_path = dir.path().join(OUTCOMES_FILE);
        let mut last_len = 0u64;
        let mut last_progress = Instant::now();
        let mut stalled = false;
        loop {
            match child.try_wait() {
                Ok(Some(_)) => break,
                Ok(None) => {}
                Err(e) => return Err(KernelError::new(format!("waiting for the guest: {e}"))),
            }
            let len = fs::metadata(&outcomes_path).map_or(0, |m| m.len());
            if len != last_len {
                last_len = len;
                last_progress = Instant::now();
            }
            if last_progress.elapsed() > self.stall_limit {
                stalled = true;
                kill_group(pgid);
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        kill_group(pgid);
        live_guests().retain(|(g, _)| *g != pgid);
        let console_text = console_tail(&console);
        let guest_path = dir.path().join(GUEST_FILE);
        let guest: Option<PdGuest> =
            fs::read_to_string(&guest_path).ok().and_then(|t| serde_json::from_str(t.trim()).ok());
        if let Some(PdGuest { error: Some(e), .. }) = &guest {
            return Err(KernelError::new(format!("in the guest: {e}")));
        }
        let text = fs::read_to_string(&outcomes_path).unwrap_or_default();
        let mut outcomes = Vec::new();
        for line in text.lines() {
            // A line cut short by the kill is not a result.
            let Ok(o) = serde_json::from_str::<PdOutcome>(line) else { continue };
            let read =
                |ext: &str| fs::read_to_string(dir.path().join(format!("{}.{ext}", o.index))).unwrap_or_default();
            let (so, se) = (read("out"), read("err"));
            outcomes.push((o, so, se));
        }
        let stalled = stalled.then(|| {
            let reported: Vec<usize> = outcomes.iter().map(|(o, _, _)| o.index).collect();
            let current = batch.iter().find(|p| !reported.contains(&p.index));
            let read =
                |idx: usize, ext: &str| fs::read_to_string(dir.path().join(format!("{idx}.{ext}"))).unwrap_or_default();
            let outputs =
                current.map_or((String::new(), String::new()), |p| (read(p.index, "out"), read(p.index, "err")));
            Stall { outputs }
        });
        if guest.is_none() && outcomes.is_empty() && stalled.is_none() {
            return Err(KernelError::new(format!("the guest ended without a result; console:\n{console_text}")));
        }
        Ok(Boot {
            kernel_release: guest.map(|g| g.kernel_release).unwrap_or_default(),
            outcomes,
            stalled,
            console: console_text,
        })
    }
}

struct Boot {
    kernel_release: String,
    /// Outcomes with each script's stdout and stderr.
    outcomes: Vec<(PdOutcome, String, String)>,
    stalled: Option<Stall>,
    console: String,
}

struct Stall {
    /// stdout and stderr of the script that was running.
    outputs: (String, String),
}

/// The HZ the model and the scenarios default to (250).
pub fn default_hz() -> u32 {
    tcplab_core::TcpConfig::default().hz
}

/// Process groups of the guests running now, so that an interrupted
/// command can end them ([`kill_guests`]): each guest runs in a process
/// group of its own and would otherwise outlive `tcplab`.
/// Each with its temporary directory.
static LIVE_GUESTS: Mutex<Vec<(i32, PathBuf)>> = Mutex::new(Vec::new());

fn live_guests() -> std::sync::MutexGuard<'static, Vec<(i32, PathBuf)>> {
    LIVE_GUESTS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Kills every guest this process has running and removes its temporary
/// directory (from a signal handler's thread, before exiting).
pub fn kill_guests() {
    for (pgid, dir) in live_guests().drain(..) {
        kill_group(pgid);
        let _ = fs::remove_dir_all(dir);
    }
}

/// The image for `--hz N` when none is named: among this host's images
/// at that HZ, the newest built from Debian's source (the default
/// `tcplab kernel build`), else the newest.
pub fn image_for_hz(hz: u32) -> Result<Image> {
    let host = crate::host::xsave_size();
    let at: Vec<Image> =
        image::list()?.into_iter().filter(|i| i.meta.hz == hz && Some(i.meta.xsave_size) == host).collect();
    at.iter().find(|i| i.meta.source.starts_with("debian:")).or(at.first()).cloned().ok_or_else(|| {
        KernelError::new(format!(
            "no kernel image at HZ {hz} for this host: build one with `tcplab kernel build --hz {hz}` (see `tcplab kernel list`)"
        ))
    })
}

fn kill_group(pgid: i32) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
}

fn console_tail(path: &Path) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(30)..].join("\n")
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.to_string_lossy().replace('\'', "'\\''"))
}

fn io_err(p: &Path, e: std::io::Error) -> KernelError {
    KernelError::new(format!("{}: {e}", p.display()))
}

/// A temporary directory removed on drop (`TCPLAB_KEEP_GUEST=1` keeps it).
struct TempDir {
    path: PathBuf,
}

impl TempDir {
    fn new() -> Result<TempDir> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        for _ in 0..100 {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let path = base.join(format!("tcplab-packetdrill-{}-{n}", std::process::id()));
            if fs::create_dir(&path).is_ok() {
                return Ok(TempDir { path });
            }
        }
        Err(KernelError::new(format!("cannot create a temporary directory in {}", base.display())))
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::env::var("TCPLAB_KEEP_GUEST").is_ok_and(|v| v == "1") {
            eprintln!("tcplab: kept the guest's files in {}", self.path.display());
        } else {
            let _ = fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tfo_cookie_for_run_alls_addresses_is_run_alls() {
        // run_all.py passes -D TFO_COOKIE=3021b9d889017eeb for a client at
        // 192.0.2.1 and the server at 192.168.0.1 under defaults.sh's key.
        assert_eq!(tfo_cookie(DEFAULT_TFO_KEY, [192, 0, 2, 1], [192, 168, 0, 1]), "3021b9d889017eeb");
    }

    #[test]
    fn siphash_matches_the_reference_vector() {
        // SipHash-2-4 paper, appendix A: key 00..0f, message 00..0e.
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let msg: Vec<u8> = (0..15).collect();
        assert_eq!(siphash24(k0, k1, &msg), 0xa129ca6149be45e5);
    }

    #[test]
    fn arguments_are_run_alls_ipv4_ones() {
        let a = arguments(&PACKETDRILL_ADDRESSES);
        let want = "--send_omit_free --ip_version=ipv4 --local_ip=192.168.0.1 --gateway_ip=192.168.0.1 \
                    --netmask_ip=255.255.0.0 --remote_ip=192.0.2.1 -D TFO_COOKIE=3021b9d889017eeb \
                    -D CODE=host_unreachable -D CMSG_LEVEL_IP=SOL_IP -D CMSG_TYPE_RECVERR=IP_RECVERR";
        assert_eq!(a.join(" "), want);
        let b = arguments(&BENCHMARK_ADDRESSES).join(" ");
        assert!(b.contains("--local_ip=198.18.0.1") && b.contains("--remote_ip=198.19.0.1"), "{b}");
    }

    #[test]
    fn scripts_naming_packetdrills_addresses_keep_them() {
        assert!(needs_packetdrill_addresses("`ip route change 192.0.2.1 via 192.168.0.2 dev tun0`"));
        assert!(needs_packetdrill_addresses("<mss 1460,FO 3021b9d889017eeb,nop,nop>"));
        assert!(!needs_packetdrill_addresses("+0 < S 0:0(0) win 32792 <mss 1000,sackOK>"));
        // Header options are overridden by the command line.
        assert!(!needs_packetdrill_addresses("--local_ip=192.168.0.1\n--remote_ip=192.0.2.1\n0 socket(...) = 3"));
    }

    fn outcome(code: i32) -> PdOutcome {
        PdOutcome { index: 0, exit_code: Some(code), ..Default::default() }
    }

    #[test]
    fn verdicts_read_packetdrills_first_error_line() {
        let p = Path::new("/x/tcp/sack/s.pkt");
        assert_eq!(verdict(p, &outcome(0), "warning: x\n"), Verdict::Pass);
        let err = "s.pkt:24: error handling packet: timing error: expected outbound packet at 0.227000 sec but happened at 0.236000 sec; tolerance 0.004000 sec\nscript packet:  0.227000 . 1:1001(1000) ack 1\nactual packet:  0.236000 . 1:1001(1000) ack 1 win 256\n";
        match verdict(p, &outcome(1), err) {
            Verdict::Fail { line, message } => {
                assert_eq!(line, 24);
                assert!(message.starts_with("error handling packet: timing error"), "{message}");
                assert!(message.ends_with("ack 1 win 256"), "{message}");
            }
            v => panic!("{v:?}"),
        }
        match verdict(p, &outcome(1), "") {
            Verdict::Fail { line: 0, message } => assert_eq!(message, "packetdrill exited with status 1"),
            v => panic!("{v:?}"),
        }
        let t = PdOutcome { timed_out: true, ..outcome(0) };
        assert!(matches!(verdict(p, &t, ""), Verdict::Fail { line: 0, .. }));
    }

    #[test]
    fn every_edit_finds_its_text_once_in_the_shared_sources() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../../shared/conformance/packetdrill/gtests/net/packetdrill");
        if !is_source(&src) {
            println!("SKIPPED: no packetdrill sources at {}", src.display());
            return;
        }
        for e in EDITS {
            let text = fs::read_to_string(src.join(e.file)).unwrap();
            assert_eq!(text.matches(e.find).count(), 1, "{}: {:?}", e.file, e.find);
        }
    }

    #[test]
    fn scripts_under_the_guests_own_run_are_refused() {
        assert_eq!(hidden_in_guest(Path::new("/tmp/x/a.pkt")), None);
        assert_eq!(hidden_in_guest(Path::new("/run/a.pkt")), Some("/run"));
        assert_eq!(hidden_in_guest(Path::new("/runx/a.pkt")), None);
        assert_eq!(hidden_in_guest(Path::new("/work/tcp/a.pkt")), None);
    }

    #[test]
    fn ipv6_scripts_are_skipped() {
        assert!(skip_reason(Path::new("mtu_probe/basic-v6.pkt")).is_some());
        assert!(skip_reason(Path::new("mtu_probe/basic-v4.pkt")).is_none());
    }

    #[test]
    fn the_source_is_found_beside_the_scripts() {
        let root = std::env::temp_dir().join(format!("tcplab-pd-src-{}", std::process::id()));
        let tool = root.join("gtests/net/packetdrill");
        let topic = root.join("gtests/net/tcp/sack");
        fs::create_dir_all(&tool).unwrap();
        fs::create_dir_all(&topic).unwrap();
        for f in ["run.c", "configure", "parser.y"] {
            fs::write(tool.join(f), "x").unwrap();
        }
        fs::write(topic.join("a.pkt"), "").unwrap();
        let found = find_source(&[topic.join("a.pkt")]).unwrap();
        assert_eq!(found, tool.canonicalize().unwrap());
        assert_eq!(find_source(&[PathBuf::from("/nonexistent/a.pkt")]), None);
        let _ = fs::remove_dir_all(root);
    }
}
