//! `tcplab kernel build`: a User-Mode Linux kernel with what the lab needs,
//! from Debian's source package or from a user's own tree.
//!
//! The pipeline, each step skipped when its inputs have not changed:
//!
//! 1. **Source.** `debian:<series>` installs `linux-source-<series>` with
//!    apt-get if it is missing and unpacks its tarball once into the
//!    cache; a path names a kernel tree of the user's, which is never
//!    written to, or a tarball (`.tar.xz`, `.tar.gz`, `.tar.bz2`),
//!    unpacked once into the cache under its content hash. The top-level
//!    Makefile's version picks the [`Series`]: an era kernel (3.12, 3.18,
//!    4.17) gets its series' base patches (build fixes, virtual time)
//!    before the switches, its own configuration quirks and the options
//!    it has.
//! 2. **Work tree.** The source is mirrored into a build tree of its own
//!    (one per source, HZ, host and configuration), copying only files
//!    whose size or modification time changed since the last build, so
//!    that a developer who edits `tcp_input.c` gets an incremental build
//!    (about a minute), not a fresh one (5-15 minutes).
//! 3. **Edits.** The files the build changes (the host's XSAVE size in
//!    `arch/x86/um/user-offsets.c`, HZ in `arch/um/Kconfig`, and every
//!    file a patch touches) are prepared in a staging directory from the
//!    pristine source and written into the work tree only where their
//!    content differs, so unchanged files keep their timestamps and `make`
//!    does not rebuild what depends on them.
//! 4. **Configuration.** `defconfig`, then [`CONFIG_OPTIONS`] on, modules
//!    off, 64 KB kernel stacks (UML also runs signal handlers on them, and
//!    a large host XSAVE area overflows the default 16 KB), `olddefconfig`,
//!    and a check that every option survived.
//! 5. **make** `ARCH=um linux`, with progress from its `CC` lines; the
//!    image and its [`ImageMeta`] go into the cache under their key.

use crate::error::{KernelError, Result};
use crate::image::{self, Fnv, Image, ImageMeta, PatchInfo};
use crate::series::{self, Series};
use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

/// Kernel options the lab needs, all built in (`CONFIG_MODULES` is off).
pub const CONFIG_OPTIONS: &[&str] = &[
    // Virtual time: the guest clock advances only while the guest idles.
    "UML_TIME_TRAVEL_SUPPORT",
    // The host's files as the root file system (tools, agent, results).
    "HOSTFS",
    // Hosts and switches as namespaces, links as veth pairs.
    "NET_NS",
    "VETH",
    // Shaping (htb), queues (fifo, RED), delay (netem), fq pacing.
    "NET_SCHED",
    "NET_SCH_HTB",
    "NET_SCH_TBF",
    "NET_SCH_NETEM",
    "NET_SCH_FQ",
    "NET_SCH_RED",
    "NET_SCH_FQ_CODEL",
    "NET_SCH_PRIO",
    "NET_SCH_INGRESS",
    // A link's delay stage redirects from one veth to the next.
    "NET_CLS_ACT",
    "NET_CLS_MATCHALL",
    "NET_CLS_U32",
    "NET_CLS_BASIC",
    "NET_ACT_GACT",
    "NET_ACT_MIRRED",
    // A link direction's token-bucket policer (`police` in a scenario):
    // a matchall filter on the sender's htb with act_police.
    "NET_ACT_POLICE",
    // Congestion controls.
    "TCP_CONG_ADVANCED",
    "TCP_CONG_CUBIC",
    "TCP_CONG_DCTCP",
    "TCP_CONG_BBR",
    // Linux's own packetdrill runs in the guest on a tun device.
    "TUN",
];

/// Kernel stack order 4 (64 KB): see the module doc.
const KERNEL_STACK_ORDER: u32 = 4;

/// HZ values Linux offers (`kernel/Kconfig.hz`).
pub use tcplab_core::config::HZ_VALUES;

/// Changes whenever this file changes how an image is made, so that old
/// images are not reused for a different recipe.
const RECIPE_VERSION: &str = "tcplab-kernel-build-1";

/// Where the kernel source comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// Debian's `linux-source-<series>` package, e.g. series `6.12`.
    Debian { series: String },
    /// A kernel tree of the user's.
    Tree(PathBuf),
    /// A kernel source tarball (kernel.org's, or `../shared/kernels`).
    Tarball(PathBuf),
}

/// File names a source tarball may have.
const TARBALL_EXTS: &[&str] = &[".tar.xz", ".tar.gz", ".tgz", ".tar.bz2", ".tar"];

impl Source {
    /// Parses `debian:6.12` or a path.
    pub fn parse(s: &str) -> Result<Source> {
        if let Some(series) = s.strip_prefix("debian:") {
            let ok = !series.is_empty() && series.chars().all(|c| c.is_ascii_digit() || c == '.');
            if !ok {
                return Err(KernelError::new(format!("--source {s}: expected debian:<series> such as debian:6.12")));
            }
            return Ok(Source::Debian { series: series.to_string() });
        }
        let p = PathBuf::from(s);
        if p.is_file() {
            if !TARBALL_EXTS.iter().any(|e| s.ends_with(e)) {
                return Err(KernelError::new(format!(
                    "--source {s}: a file, but not a tarball ({}): give a kernel tree or a tarball",
                    TARBALL_EXTS.join(", ")
                )));
            }
            let p = p.canonicalize().map_err(|e| KernelError::new(format!("--source {s}: {e}")))?;
            return Ok(Source::Tarball(p));
        }
        if !p.join("Makefile").is_file() || !p.join("arch").join("um").is_dir() {
            return Err(KernelError::new(format!(
                "--source {s}: not a Linux source tree (no Makefile and arch/um there) nor a tarball"
            )));
        }
        let p = p.canonicalize().map_err(|e| KernelError::new(format!("--source {s}: {e}")))?;
        Ok(Source::Tree(p))
    }
}

/// Which switch patches a build applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Patches {
    /// The series' own ([`Series::switch_patches`] under the project's
    /// `kernel/` folder).
    Series,
    /// `*.patch` files of a directory, in name order.
    Dir(PathBuf),
    /// None.
    None,
}

/// What to build.
#[derive(Clone, Debug)]
pub struct BuildOptions {
    pub source: Source,
    /// The switch patches; an era series' base patches come first always.
    pub patches: Patches,
    /// The project's GPL-2.0 `kernel/` folder (`patches/`, `era/`).
    pub kernel_dir: PathBuf,
    pub hz: u32,
    /// Parallel `make` jobs.
    pub jobs: usize,
    /// A name to select the image by (`--kernel NAME`).
    pub name: Option<String>,
}

/// Progress of a build, e.g. a progress bar.
pub trait BuildProgress {
    /// A new step begins.
    fn phase(&self, _what: &str) {}
    /// `done` compile steps of an expected `estimate`.
    fn compiled(&self, _done: u64, _estimate: u64) {}
}

/// What a build did.
pub struct Built {
    pub image: Image,
    /// False when the image was already cached.
    pub compiled: bool,
}

/// Builds (or finds) the image `opts` describe.
pub fn build(opts: &BuildOptions, progress: &dyn BuildProgress) -> Result<Built> {
    if !HZ_VALUES.contains(&opts.hz) {
        return Err(KernelError::new(format!("--hz {}: {}", opts.hz, tcplab_core::config::hz_rule())));
    }
    let xsave = crate::host::xsave_size().ok_or_else(|| {
        KernelError::new("the kernel backend needs an x86-64 host with XSAVE (User-Mode Linux saves FP state with it)")
    })?;
    let cache = image::cache_root()?.join("kernel");
    let started = std::time::Instant::now();

    progress.phase("finding the kernel source");
    let (src_dir, src_label, identity) = resolve_source(&opts.source, &cache, progress)?;
    let series = tree_series(&src_dir)?;
    let mut patches = match series.base_patches {
        Some(rel) => {
            let dir = opts.kernel_dir.join(rel);
            if !dir.is_dir() {
                return Err(KernelError::new(format!(
                    "Linux {} needs its base patches (build fixes, virtual time) from {}, which is missing",
                    series.name,
                    dir.display()
                )));
            }
            read_patches(Some(&dir), &format!("{rel}/"))?
        }
        None => Vec::new(),
    };
    let switch_dir = match &opts.patches {
        Patches::Series => Some(opts.kernel_dir.join(series.switch_patches)),
        Patches::Dir(d) => Some(d.clone()),
        Patches::None => None,
    };
    patches.extend(read_patches(switch_dir.as_deref(), "")?);
    let options = config_options(series);

    let mut key = Fnv::default();
    key.write(RECIPE_VERSION.as_bytes());
    key.write(identity.as_bytes());
    key.write(&opts.hz.to_le_bytes());
    key.write(&xsave.to_le_bytes());
    key.write(options.join(",").as_bytes());
    if series.is_era() {
        // Mainline's key is as before the eras came, so its images stay.
        key.write(series.name.as_bytes());
        key.write(series.make_args.join(" ").as_bytes());
    }
    for p in &patches {
        key.write(p.name.as_bytes());
        key.write(p.text.as_bytes());
    }
    let key = key.hex();
    let image_dir = cache.join("images").join(&key);
    if let Ok(mut img) = image::load(&image_dir) {
        if opts.name.is_some() && img.meta.name != opts.name {
            img.meta.name = opts.name.clone();
            write_meta(&image_dir, &img.meta)?;
        }
        return Ok(Built { image: img, compiled: false });
    }

    // One work tree per source location and recipe: patches and file
    // contents change between builds, the tree stays.
    let mut wkey = Fnv::default();
    wkey.write(RECIPE_VERSION.as_bytes());
    wkey.write(src_dir.to_string_lossy().as_bytes());
    wkey.write(&opts.hz.to_le_bytes());
    wkey.write(&xsave.to_le_bytes());
    wkey.write(options.join(",").as_bytes());
    if series.is_era() {
        wkey.write(series.name.as_bytes());
    }
    let work = cache.join("work").join(wkey.hex());
    fs::create_dir_all(&work).map_err(|e| io_err("create", &work, e))?;

    progress.phase("mirroring the source into the build tree");
    let touched = edited_files(series, &patches);
    sync_tree(&src_dir, &work, &touched)?;

    progress.phase("applying the host's XSAVE size, HZ and the patches");
    apply_edits(&src_dir, &work, &touched, &patches, xsave, opts.hz, series)?;

    progress.phase("configuring");
    configure(&work, series, &options)?;

    progress.phase("compiling");
    make_linux(&work, opts.jobs.max(1), series, progress)?;
    let mut args = vec!["-s", "ARCH=um"];
    args.extend(series.make_args);
    args.push("kernelrelease");
    let release = make_output(&work, &args)?;

    progress.phase("storing the image");
    let meta = ImageMeta {
        key: key.clone(),
        name: opts.name.clone(),
        source: src_label,
        kernel_release: release.trim().to_string(),
        series: Some(series.name.to_string()),
        hz: opts.hz,
        xsave_size: xsave,
        patches: patches.iter().map(|p| PatchInfo { name: p.name.clone(), hash: p.hash.clone() }).collect(),
        switches: patches.iter().flat_map(|p| p.switches.iter().cloned()).collect(),
        build_seconds: started.elapsed().as_secs_f64(),
        built_at: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    };
    store_image(&work.join("linux"), &image_dir, &meta)?;
    let image = image::load(&image_dir)?;
    Ok(Built { image, compiled: true })
}

/// The options a series builds: [`CONFIG_OPTIONS`] but those it lacks.
pub fn config_options(series: &Series) -> Vec<&'static str> {
    CONFIG_OPTIONS.iter().copied().filter(|o| series.has_config(o)).collect()
}

/// The series of the tree at `dir`, from its top-level Makefile.
fn tree_series(dir: &Path) -> Result<&'static Series> {
    let mk = dir.join("Makefile");
    let text = fs::read_to_string(&mk).map_err(|e| io_err("read", &mk, e))?;
    let (v, p, _) = series::makefile_version(&text).ok_or_else(|| {
        KernelError::new(format!("{}: no VERSION and PATCHLEVEL: not a Linux top-level Makefile", mk.display()))
    })?;
    Series::for_version(v, p).map_err(|e| KernelError::new(format!("{}: {}", dir.display(), e.message)))
}

/// The source directory, a label for people, and an identity string that
/// changes whenever the source does.
fn resolve_source(source: &Source, cache: &Path, progress: &dyn BuildProgress) -> Result<(PathBuf, String, String)> {
    match source {
        Source::Debian { series } => {
            let pkg = format!("linux-source-{series}");
            let version = match dpkg_version(&pkg) {
                Some(v) => v,
                None => {
                    progress.phase(&format!("installing {pkg} with apt-get"));
                    apt_install(&pkg)?;
                    dpkg_version(&pkg)
                        .ok_or_else(|| KernelError::new(format!("apt-get installed {pkg} but dpkg does not list it")))?
                }
            };
            let tarball = ["tar.xz", "tar.bz2", "tar.gz"]
                .iter()
                .map(|ext| PathBuf::from(format!("/usr/src/{pkg}.{ext}")))
                .find(|p| p.is_file())
                .ok_or_else(|| KernelError::new(format!("{pkg} is installed but /usr/src/{pkg}.tar.* is missing")))?;
            let dir = cache.join("src").join(format!("debian-{}", sanitize(&version)));
            let tree = dir.join(&pkg);
            let marker = dir.join(".unpacked");
            if !marker.is_file() {
                progress.phase(&format!("unpacking {}", tarball.display()));
                let _ = fs::remove_dir_all(&dir);
                fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
                run_checked(
                    Command::new("tar").arg("-xf").arg(&tarball).arg("-C").arg(&dir),
                    "unpack the kernel source",
                )?;
                fs::write(&marker, &version).map_err(|e| io_err("write", &marker, e))?;
            }
            if !tree.join("Makefile").is_file() {
                return Err(KernelError::new(format!("{}: the tarball did not unpack to {pkg}/", tarball.display())));
            }
            Ok((tree, format!("debian:{series} ({version})"), format!("debian:{series}={version}")))
        }
        Source::Tarball(file) => {
            progress.phase(&format!("reading {}", file.display()));
            let bytes = fs::read(file).map_err(|e| io_err("read", file, e))?;
            let mut h = Fnv::default();
            h.write(&bytes);
            let hash = h.hex();
            drop(bytes);
            let fname = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let dir = cache.join("src").join(format!("tarball-{}-{hash}", sanitize(&fname)));
            let marker = dir.join(".unpacked");
            if !marker.is_file() {
                progress.phase(&format!("unpacking {}", file.display()));
                let _ = fs::remove_dir_all(&dir);
                fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
                run_checked(Command::new("tar").arg("-xf").arg(file).arg("-C").arg(&dir), "unpack the kernel tarball")?;
                fs::write(&marker, &hash).map_err(|e| io_err("write", &marker, e))?;
            }
            // The tree is the one top-level directory with a Makefile and arch/um.
            let trees: Vec<PathBuf> = fs::read_dir(&dir)
                .map_err(|e| io_err("read", &dir, e))?
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.join("Makefile").is_file() && p.join("arch").join("um").is_dir())
                .collect();
            match trees.as_slice() {
                [tree] => Ok((tree.clone(), file.display().to_string(), format!("tarball:{fname}:{hash}"))),
                _ => Err(KernelError::new(format!(
                    "{}: expected one top-level kernel tree (a Makefile and arch/um) in the tarball, found {}",
                    file.display(),
                    trees.len()
                ))),
            }
        }
        Source::Tree(path) => {
            progress.phase(&format!("reading {}", path.display()));
            let manifest = manifest(path)?;
            let mut h = Fnv::default();
            for (rel, (len, mtime)) in &manifest {
                h.write(rel.as_bytes());
                h.write(&len.to_le_bytes());
                h.write(&mtime.to_le_bytes());
            }
            Ok((path.clone(), path.display().to_string(), format!("tree:{}:{}", path.display(), h.hex())))
        }
    }
}

fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '.' || c == '-' { c } else { '_' }).collect()
}

fn dpkg_version(pkg: &str) -> Option<String> {
    let out = Command::new("dpkg-query").args(["-W", "-f=${Status}\t${Version}", pkg]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let (status, version) = text.split_once('\t')?;
    (out.status.success() && status.ends_with("installed") && !version.is_empty()).then(|| version.to_string())
}

fn apt_install(pkg: &str) -> Result<()> {
    let root = effective_uid() == 0;
    if !root {
        return Err(KernelError::new(format!(
            "{pkg} is not installed and this user cannot install it: run `sudo apt-get install {pkg}`, or give --source PATH to a kernel tree"
        )));
    }
    let status = Command::new("apt-get")
        .args(["install", "-y", "--no-install-recommends", pkg])
        .env("DEBIAN_FRONTEND", "noninteractive")
        .stdout(Stdio::null())
        .status()
        .map_err(|e| KernelError::new(format!("cannot run apt-get: {e}")))?;
    if !status.success() {
        return Err(KernelError::new(format!(
            "`apt-get install {pkg}` failed ({status}); is the package in this system's sources (Debian bookworm-security has 6.12)?"
        )));
    }
    Ok(())
}

fn effective_uid() -> u32 {
    // The effective uid, from /proc (no libc dependency for one call).
    fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("Uid:")).and_then(|l| l.split_whitespace().nth(2)?.parse().ok()))
        .unwrap_or(u32::MAX)
}

/// A patch file: its text, hash, the files it touches and the switches
/// (`module_param`s) it adds.
struct Patch {
    name: String,
    text: String,
    hash: String,
    files: Vec<String>,
    switches: Vec<String>,
}

/// The `*.patch` files of `dir` in name order, each named `prefix` + its
/// file name.
fn read_patches(dir: Option<&Path>, prefix: &str) -> Result<Vec<Patch>> {
    let Some(dir) = dir else { return Ok(Vec::new()) };
    let entries = fs::read_dir(dir).map_err(|e| KernelError::new(format!("--patches {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> =
        entries.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "patch")).collect();
    paths.sort();
    let mut out = Vec::new();
    for p in paths {
        let text = fs::read_to_string(&p).map_err(|e| io_err("read", &p, e))?;
        let (files, switches) = parse_patch(&text);
        if files.is_empty() {
            return Err(KernelError::new(format!("{}: no `+++ b/FILE` line: not a unified diff", p.display())));
        }
        let mut h = Fnv::default();
        h.write(text.as_bytes());
        let name = format!("{prefix}{}", p.file_name().map(|n| n.to_string_lossy()).unwrap_or_default());
        out.push(Patch { name, hash: h.hex(), text, files, switches });
    }
    Ok(out)
}

/// The files a unified diff touches and the `module_param`s it adds, named
/// `<file stem>.<param>` as they appear under `/sys/module/`.
fn parse_patch(text: &str) -> (Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut switches = Vec::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("+++ ") {
            let path = rest.split_whitespace().next().unwrap_or("");
            let path = path.strip_prefix("b/").unwrap_or(path).to_string();
            if !files.contains(&path) {
                files.push(path.clone());
            }
            current = Some(path);
        } else if let Some(added) = line.strip_prefix('+') {
            let added = added.trim_start();
            // The first argument is the parameter's name in all three.
            let param = added
                .strip_prefix("module_param(")
                .or_else(|| added.strip_prefix("module_param_cb("))
                .or_else(|| added.strip_prefix("module_param_named("))
                .and_then(|r| r.split(',').next());
            if let (Some(param), Some(file)) = (param, &current) {
                // A header's parameters belong to the .c file that
                // includes it; the patches name the module in the .c file.
                if let Some(stem) = Path::new(file).file_stem() {
                    if file.ends_with(".c") {
                        switches.push(format!("{}.{}", stem.to_string_lossy(), param.trim()));
                    }
                }
            }
        }
    }
    (files, switches)
}

const FP_FILE: &str = "arch/x86/um/user-offsets.c";

fn edited_files(series: &Series, patches: &[Patch]) -> Vec<String> {
    let mut v = vec![FP_FILE.to_string(), series.hz_file.to_string()];
    for p in patches {
        for f in &p.files {
            if !v.contains(f) {
                v.push(f.clone());
            }
        }
    }
    v
}

type Manifest = BTreeMap<String, (u64, i128)>;

/// Relative path → (size, mtime ns) of every regular file under `root`,
/// outside `.git` and the build's own outputs.
fn manifest(root: &Path) -> Result<Manifest> {
    let mut out = Manifest::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let entries = fs::read_dir(&dir).map_err(|e| io_err("read", &dir, e))?;
        for entry in entries.flatten() {
            let name = entry.file_name();
            let name_s = name.to_string_lossy();
            if rel.as_os_str().is_empty() && (name_s == ".git" || name_s == ".tcplab") {
                continue;
            }
            let Ok(ft) = entry.file_type() else { continue };
            let child = rel.join(&name);
            if ft.is_dir() {
                stack.push(child);
            } else if ft.is_file() {
                if let Ok(md) = entry.metadata() {
                    let mtime = md
                        .modified()
                        .ok()
                        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                        .map_or(0, |d| d.as_nanos() as i128);
                    out.insert(child.to_string_lossy().into_owned(), (md.len(), mtime));
                }
            }
        }
    }
    Ok(out)
}

/// Mirrors `src` into `work`: copies files that are new or changed since
/// the last sync (by the source's size and mtime, recorded in
/// `work/.tcplab/source-manifest`), removes files gone from the source.
/// Files in `skip` are left to [`apply_edits`].
fn sync_tree(src: &Path, work: &Path, skip: &[String]) -> Result<()> {
    let record = work.join(".tcplab").join("source-manifest");
    let old: Manifest = fs::read_to_string(&record)
        .ok()
        .map(|t| {
            t.lines()
                .filter_map(|l| {
                    let mut it = l.splitn(3, '\t');
                    let len = it.next()?.parse().ok()?;
                    let mtime = it.next()?.parse().ok()?;
                    Some((it.next()?.to_string(), (len, mtime)))
                })
                .collect()
        })
        .unwrap_or_default();
    let new = manifest(src)?;
    for (rel, meta) in &new {
        if skip.contains(rel) || old.get(rel) == Some(meta) && work.join(rel).is_file() {
            continue;
        }
        let to = work.join(rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        fs::copy(src.join(rel), &to).map_err(|e| io_err("copy to", &to, e))?;
        // Keep the source's mtime: make compares it with the objects'.
        if let Ok(t) = fs::metadata(src.join(rel)).and_then(|m| m.modified()) {
            let _ = fs::File::options().write(true).open(&to).and_then(|f| f.set_modified(t));
        }
    }
    for rel in old.keys() {
        if !new.contains_key(rel) && !skip.contains(rel) {
            let _ = fs::remove_file(work.join(rel));
        }
    }
    let dir = work.join(".tcplab");
    fs::create_dir_all(&dir).map_err(|e| io_err("create", &dir, e))?;
    let text: String = new.iter().map(|(rel, (len, m))| format!("{len}\t{m}\t{rel}\n")).collect();
    fs::write(&record, text).map_err(|e| io_err("write", &record, e))
}

/// Prepares every edited file from the pristine source in a staging
/// directory (host XSAVE size, HZ, patches) and writes each into the work
/// tree only if its content changed.
fn apply_edits(
    src: &Path,
    work: &Path,
    files: &[String],
    patches: &[Patch],
    xsave: u32,
    hz: u32,
    series: &Series,
) -> Result<()> {
    let stage = work.join(".tcplab").join("stage");
    let _ = fs::remove_dir_all(&stage);
    for rel in files {
        let from = src.join(rel);
        let to = stage.join(rel);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        if from.is_file() {
            fs::copy(&from, &to).map_err(|e| io_err("copy to", &to, e))?;
        }
    }
    edit_file(&stage.join(FP_FILE), |text| {
        // UML 4.17 and 6.12 have the literal; 3.x saves FP state with
        // PTRACE_GETFPREGS (`struct user_fpregs_struct`) and needs no edit.
        let old = "DEFINE_LONGS(HOST_FP_SIZE, 2696);";
        Ok(text.replace(old, &format!("DEFINE_LONGS(HOST_FP_SIZE, {xsave});")))
    })?;
    let hz_file = series.hz_file;
    edit_file(&stage.join(hz_file), |text| {
        let old = "config HZ\n\tint\n\tdefault 100\n";
        if !text.contains(old) {
            return Err(format!("{hz_file}: no `config HZ` with `default 100`: cannot set HZ in this tree"));
        }
        Ok(text.replace(old, &format!("config HZ\n\tint\n\tdefault {hz}\n")))
    })?;
    for p in patches {
        let out = Command::new("patch")
            .args(["-p1", "--forward", "--batch", "--no-backup-if-mismatch", "-r", "-", "-d"])
            .arg(&stage)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .and_then(|mut child| {
                use std::io::Write;
                if let Some(mut stdin) = child.stdin.take() {
                    stdin.write_all(p.text.as_bytes())?;
                }
                child.wait_with_output()
            })
            .map_err(|e| KernelError::new(format!("cannot run `patch` (apt-get install patch): {e}")))?;
        if !out.status.success() {
            return Err(KernelError::new(format!(
                "patch {} does not apply to {}:\n{}{}\nadapt it, or build with --patches DIR (or --patches none)",
                p.name,
                src.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )));
        }
    }
    for rel in files {
        let staged = stage.join(rel);
        let Ok(new) = fs::read(&staged) else { continue };
        let target = work.join(rel);
        if fs::read(&target).ok().as_deref() != Some(new.as_slice()) {
            fs::write(&target, &new).map_err(|e| io_err("write", &target, e))?;
        }
    }
    let _ = fs::remove_dir_all(&stage);
    Ok(())
}

fn edit_file(path: &Path, f: impl FnOnce(&str) -> std::result::Result<String, String>) -> Result<()> {
    let text = fs::read_to_string(path).map_err(|e| io_err("read", path, e))?;
    let new = f(&text).map_err(KernelError::new)?;
    fs::write(path, new).map_err(|e| io_err("write", path, e))
}

/// `defconfig` plus the series' [`config_options`], redone only when the
/// recipe changed.
fn configure(work: &Path, series: &Series, options: &[&str]) -> Result<()> {
    let mut want = options.join(",");
    want.push_str(&format!(";stack={KERNEL_STACK_ORDER};modules=off"));
    if series.is_era() {
        want.push_str(&format!(";make={};off={}", series.make_args.join(" "), series.disable_config.join(",")));
    }
    let stamp = work.join(".tcplab").join("config");
    if work.join(".config").is_file() && fs::read_to_string(&stamp).ok().as_deref() == Some(want.as_str()) {
        return Ok(());
    }
    let make = |target: &str| {
        let mut c = Command::new("make");
        c.arg("ARCH=um").args(series.make_args).arg(target).current_dir(work);
        c
    };
    run_checked(&mut make("defconfig"), "make ARCH=um defconfig")?;
    let mut cmd = Command::new("./scripts/config");
    for o in options {
        cmd.args(["-e", o]);
    }
    for o in series.disable_config {
        cmd.args(["-d", o]);
    }
    cmd.args(["-d", "MODULES", "--set-val", "KERNEL_STACK_ORDER", &KERNEL_STACK_ORDER.to_string()]);
    run_checked(cmd.current_dir(work), "scripts/config")?;
    run_checked(&mut make("olddefconfig"), "make ARCH=um olddefconfig")?;
    let config = fs::read_to_string(work.join(".config")).map_err(|e| io_err("read", &work.join(".config"), e))?;
    let missing: Vec<&str> =
        options.iter().copied().filter(|o| !config.lines().any(|l| l == format!("CONFIG_{o}=y"))).collect();
    if !missing.is_empty() {
        return Err(KernelError::new(format!(
            "this tree's configuration dropped CONFIG_{} (unmet dependencies?)",
            missing.join(", CONFIG_")
        )));
    }
    fs::write(&stamp, want).map_err(|e| io_err("write", &stamp, e))
}

/// `make ARCH=um -jN linux`, reporting progress from its output; the full
/// log is kept in `.tcplab/build.log`.
fn make_linux(work: &Path, jobs: usize, series: &Series, progress: &dyn BuildProgress) -> Result<()> {
    let log_path = work.join(".tcplab").join("build.log");
    let estimate_path = work.join(".tcplab").join("steps");
    // A fresh tree compiles about 1,900 files; an incremental build
    // starts from the last build's count and a few steps.
    let fresh = !work.join("vmlinux").is_file();
    let estimate: u64 = if fresh {
        fs::read_to_string(&estimate_path).ok().and_then(|s| s.trim().parse().ok()).unwrap_or(1900)
    } else {
        20
    };
    let mut child = Command::new("make")
        .arg("ARCH=um")
        .args(series.make_args)
        .args([&format!("-j{jobs}"), "linux"])
        .current_dir(work)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            KernelError::new(format!("cannot run make (apt-get install build-essential flex bison bc): {e}"))
        })?;
    // stderr goes to a thread so that neither pipe fills up.
    let stderr = child.stderr.take();
    let err_thread = std::thread::spawn(move || {
        let mut lines = Vec::new();
        if let Some(s) = stderr {
            for l in BufReader::new(s).lines().map_while(|l| l.ok()) {
                lines.push(l);
            }
        }
        lines
    });
    let mut log = Vec::new();
    let mut done = 0u64;
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(|l| l.ok()) {
            let t = line.trim_start();
            if t.starts_with("CC ") || t.starts_with("AS ") || t.starts_with("LD ") || t.starts_with("AR ") {
                done += 1;
                progress.compiled(done, estimate.max(done + 1));
            }
            log.push(line);
        }
    }
    let status = child.wait().map_err(|e| KernelError::new(format!("make: {e}")))?;
    let errors = err_thread.join().unwrap_or_default();
    let mut text = log.join("\n");
    text.push_str("\n--- stderr ---\n");
    text.push_str(&errors.join("\n"));
    let _ = fs::write(&log_path, &text);
    if !status.success() {
        let tail: Vec<&str> = errors.iter().rev().take(20).map(|s| s.as_str()).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(KernelError::new(format!(
            "make ARCH=um linux failed ({status}); the last lines:\n{}\nfull log: {}\n\
             (missing tools: apt-get install build-essential flex bison bc; a patch that breaks the build: check --patches)",
            tail.join("\n"),
            log_path.display()
        )));
    }
    if fresh {
        let _ = fs::write(&estimate_path, done.to_string());
    }
    progress.compiled(estimate.max(done), estimate.max(done));
    Ok(())
}

fn make_output(work: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("make")
        .args(args)
        .current_dir(work)
        .output()
        .map_err(|e| KernelError::new(format!("make {}: {e}", args.join(" "))))?;
    if !out.status.success() {
        return Err(KernelError::new(format!(
            "make {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Copies the binary and writes the metadata into a temporary directory,
/// then renames it into place: an interrupted store leaves no image.
fn store_image(binary: &Path, dir: &Path, meta: &ImageMeta) -> Result<()> {
    let parent = dir.parent().ok_or_else(|| KernelError::new("bad image directory"))?;
    fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
    let tmp = parent.join(format!(".tmp-{}-{}", meta.key, std::process::id()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(|e| io_err("create", &tmp, e))?;
    fs::copy(binary, tmp.join("linux")).map_err(|e| io_err("copy", binary, e))?;
    write_meta(&tmp, meta)?;
    let _ = fs::remove_dir_all(dir);
    fs::rename(&tmp, dir).map_err(|e| io_err("rename into", dir, e))
}

fn write_meta(dir: &Path, meta: &ImageMeta) -> Result<()> {
    let path = dir.join("image.json");
    let text = serde_json::to_string_pretty(meta).map_err(|e| KernelError::new(e.to_string()))?;
    fs::write(&path, text + "\n").map_err(|e| io_err("write", &path, e))
}

fn run_checked(cmd: &mut Command, what: &str) -> Result<()> {
    let out = cmd.output().map_err(|e| KernelError::new(format!("{what}: cannot run: {e}")))?;
    if !out.status.success() {
        return Err(KernelError::new(format!(
            "{what} failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )));
    }
    Ok(())
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> KernelError {
    KernelError::new(format!("cannot {what} {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_parses_debian_series_and_rejects_junk() {
        assert_eq!(Source::parse("debian:6.12").unwrap(), Source::Debian { series: "6.12".into() });
        assert!(Source::parse("debian:").is_err());
        assert!(Source::parse("debian:6.12;rm").is_err());
        let e = Source::parse("/nonexistent/tree").unwrap_err();
        assert!(e.message.contains("not a Linux source tree"), "{e}");
    }

    #[test]
    fn patch_parsing_finds_files_and_switches() {
        let text = "Subject: x\n---\n--- a/net/ipv4/tcp_dctcp.h\n+++ b/net/ipv4/tcp_dctcp.h\n@@ -1 +1,2 @@\n+static bool x;\n\
                    --- a/net/ipv4/tcp_dctcp.c\n+++ b/net/ipv4/tcp_dctcp.c\n@@ -1 +1,2 @@\n+module_param(dctcp_ack_on_ce_change, bool, 0644);\n\
                    +module_param_named(ts_jiffies, tcp_ts_jiffies, bool, 0644);\n";
        let (files, switches) = parse_patch(text);
        assert_eq!(files, vec!["net/ipv4/tcp_dctcp.h", "net/ipv4/tcp_dctcp.c"]);
        assert_eq!(switches, vec!["tcp_dctcp.dctcp_ack_on_ce_change", "tcp_dctcp.ts_jiffies"]);
    }

    #[test]
    fn the_projects_patches_declare_the_seed_switches() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel/patches");
        let patches = read_patches(Some(&dir), "").unwrap();
        let switches: Vec<String> = patches.iter().flat_map(|p| p.switches.clone()).collect();
        for s in crate::switches::ALL {
            assert!(switches.iter().any(|x| x == s), "{s} missing from kernel/patches: {switches:?}");
        }
    }
}
