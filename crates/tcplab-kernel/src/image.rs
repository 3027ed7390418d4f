//! Kernel images in the user's cache, and how a run picks one.
//!
//! Layout under [`cache_root`] (`$TCPLAB_CACHE`, else
//! `$XDG_CACHE_HOME/tcplab`, else `~/.cache/tcplab`):
//!
//! ```text
//! kernel/src/debian-<version>/   Debian's linux-source tarball, unpacked
//! kernel/work/<key>/             build trees (kept for incremental rebuilds)
//! kernel/images/<key>/linux      a built User-Mode Linux image
//! kernel/images/<key>/image.json [`ImageMeta`]
//! ```
//!
//! An image's key hashes everything the binary depends on: the source
//! (Debian's package version, or the path and file manifest of a user's
//! tree), the configuration, the patches' contents, HZ and the host's
//! XSAVE size. Same inputs, same key: `tcplab kernel build` then finds
//! the image and builds nothing.

use crate::error::{KernelError, Result};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use tcplab_sim::fnv::Fnv1a64;

/// What `image.json` records about an image.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageMeta {
    pub key: String,
    /// A name given with `tcplab kernel build --name`.
    pub name: Option<String>,
    /// Where the source came from: `debian:6.12 (6.12.117-1~deb12u1)` or
    /// the path of a user's tree.
    pub source: String,
    /// `make kernelrelease`, e.g. `6.12.117`.
    pub kernel_release: String,
    /// The [`crate::series::Series`] it was built as (`3.18`, `mainline`);
    /// absent in images built before the eras, which are mainline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<String>,
    pub hz: u32,
    /// The host XSAVE size the image was built for (see `host.rs`).
    pub xsave_size: u32,
    /// The patches applied, in order, with their content hashes.
    pub patches: Vec<PatchInfo>,
    /// Run-time switches the patches add, as `<file>.<parameter>`
    /// (`tcp_input.cwnd_reduction_floor`): set on the kernel command line.
    pub switches: Vec<String>,
    /// Wall seconds the build took (0 when nothing had to be compiled).
    pub build_seconds: f64,
    /// Seconds since the Unix epoch when the image was stored.
    pub built_at: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PatchInfo {
    pub name: String,
    pub hash: String,
}

/// A built image ready to boot.
#[derive(Clone, Debug, PartialEq)]
pub struct Image {
    pub meta: ImageMeta,
    /// The `linux` executable.
    pub binary: PathBuf,
}

impl Image {
    /// `linux-<release>` plus the key, as printed in results (`backend`).
    pub fn label(&self) -> String {
        format!("linux-{}", self.meta.kernel_release)
    }

    /// Whether the image has run-time switch `param` (`tcp_input.ack_on_cwr`).
    pub fn has_switch(&self, param: &str) -> bool {
        self.meta.switches.iter().any(|s| s == param)
    }

    /// The image's series: as recorded, else from its release.
    pub fn series(&self) -> Result<&'static crate::series::Series> {
        match &self.meta.series {
            Some(name) => crate::series::SERIES.iter().find(|s| s.name == name).ok_or_else(|| {
                KernelError::new(format!("kernel image {}: unknown series {name:?} in image.json", self.meta.key))
            }),
            None => crate::series::Series::for_release(&self.meta.kernel_release),
        }
    }
}

/// The root of tcplab's cache.
pub fn cache_root() -> Result<PathBuf> {
    if let Some(p) = std::env::var_os("TCPLAB_CACHE").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p));
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(p).join("tcplab"));
    }
    match std::env::var_os("HOME").filter(|p| !p.is_empty()) {
        Some(h) => Ok(PathBuf::from(h).join(".cache").join("tcplab")),
        None => Err(KernelError::new("no cache directory: set TCPLAB_CACHE, XDG_CACHE_HOME or HOME")),
    }
}

/// `<cache>/kernel/images`.
pub fn images_dir() -> Result<PathBuf> {
    Ok(cache_root()?.join("kernel").join("images"))
}

/// Every cached image, newest first. Directories without a readable
/// `image.json` and a `linux` binary (an interrupted store) are skipped.
pub fn list() -> Result<Vec<Image>> {
    let dir = images_dir()?;
    let mut out = Vec::new();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(KernelError::new(format!("cannot read {}: {e}", dir.display()))),
    };
    for entry in entries.flatten() {
        if let Ok(img) = load(&entry.path()) {
            out.push(img);
        }
    }
    out.sort_by(|a, b| b.meta.built_at.cmp(&a.meta.built_at).then_with(|| a.meta.key.cmp(&b.meta.key)));
    Ok(out)
}

/// The image stored in directory `dir`.
pub fn load(dir: &Path) -> Result<Image> {
    let meta_path = dir.join("image.json");
    let text = std::fs::read_to_string(&meta_path)
        .map_err(|e| KernelError::new(format!("cannot read {}: {e}", meta_path.display())))?;
    let meta: ImageMeta = serde_json::from_str(&text)
        .map_err(|e| KernelError::new(format!("{}: not an image description: {e}", meta_path.display())))?;
    let binary = dir.join("linux");
    if !binary.is_file() {
        return Err(KernelError::new(format!("{}: no `linux` binary beside image.json", dir.display())));
    }
    Ok(Image { meta, binary })
}

/// Picks the image a run uses. `spec` is a key (or a prefix of one), a
/// name given at build time, or a directory holding `image.json`; without
/// it, the newest image built for this host at the model's default HZ
/// ([`default_image`]). The image must match this host's XSAVE size.
pub fn select(spec: Option<&str>) -> Result<Image> {
    let host_xsave = crate::host::xsave_size();
    let img = match spec {
        Some(s) if Path::new(s).join("image.json").is_file() => load(Path::new(s))?,
        Some(s) => {
            let all = list()?;
            let hits: Vec<&Image> =
                all.iter().filter(|i| i.meta.name.as_deref() == Some(s) || i.meta.key.starts_with(s)).collect();
            match hits.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    return Err(KernelError::new(format!(
                        "no kernel image {s:?} (see `tcplab kernel list`; build one with `tcplab kernel build`)"
                    )))
                }
                many => {
                    // A name shared by several builds means the newest.
                    if many.iter().all(|i| i.meta.name.as_deref() == Some(s)) {
                        (*many[0]).clone()
                    } else {
                        let keys: Vec<&str> = many.iter().map(|i| i.meta.key.as_str()).collect();
                        return Err(KernelError::new(format!("kernel image {s:?} is ambiguous: {}", keys.join(", "))));
                    }
                }
            }
        }
        None => {
            let all = list()?;
            match default_image(all, host_xsave) {
                Some(i) => i,
                None => {
                    return Err(KernelError::new(
                        "no kernel image for this host: run `tcplab kernel build` first (about 5-15 minutes, once per machine)",
                    ))
                }
            }
        }
    };
    if Some(img.meta.xsave_size) != host_xsave {
        return Err(KernelError::new(format!(
            "kernel image {} was built for a host with XSAVE size {} bytes, this host has {}: run `tcplab kernel build` here",
            img.meta.key,
            img.meta.xsave_size,
            host_xsave.map_or("none".to_string(), |n| n.to_string())
        )));
    }
    Ok(img)
}

/// The image a run takes when none is named: of those built for this
/// host (newest first, as [`list`] gives them), the newest at the HZ the
/// scenarios default to, so that an image built for an experiment at
/// another HZ (`--hz 1000 --name hz1000`) is used only when named; the
/// newest for this host when there is none at that HZ.
pub fn default_image(newest_first: Vec<Image>, host_xsave: Option<u32>) -> Option<Image> {
    let default_hz = tcplab_core::TcpConfig::default().hz;
    // An era image (3.12, 3.18, 4.17) runs only when named: scenarios are
    // written for today's kernel, and an era refuses what it lacks.
    let mainline = |i: &Image| i.series().is_ok_and(|s| !s.is_era());
    let here: Vec<Image> = newest_first.into_iter().filter(|i| Some(i.meta.xsave_size) == host_xsave).collect();
    let pick = |ok: &dyn Fn(&Image) -> bool| here.iter().find(|i| ok(i)).cloned();
    pick(&|i| mainline(i) && i.meta.hz == default_hz).or_else(|| pick(&mainline)).or_else(|| here.first().cloned())
}

/// 64-bit FNV-1a ([`tcplab_sim::fnv`]) over fields: stable across
/// machines and Rust versions, enough to tell builds apart; each image
/// also records its inputs in `image.json`.
#[derive(Clone, Copy, Default)]
pub struct Fnv(Fnv1a64);

impl Fnv {
    pub fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        // A separator, so that ("ab", "c") and ("a", "bc") differ.
        self.0.write(&[0xff]);
    }

    pub fn hex(&self) -> String {
        format!("{:016x}", self.0.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_separates_fields_and_is_stable() {
        let h = |parts: &[&str]| {
            let mut f = Fnv::default();
            for p in parts {
                f.write(p.as_bytes());
            }
            f.hex()
        };
        assert_ne!(h(&["ab", "c"]), h(&["a", "bc"]));
        // Pinned: a key must not change between tcplab versions or hosts.
        assert_eq!(h(&["tcplab"]), h(&["tcplab"]));
        assert_eq!(h(&[]), "cbf29ce484222325");
    }

    fn image(key: &str, hz: u32, xsave: u32) -> Image {
        let meta = ImageMeta {
            key: key.into(),
            name: None,
            source: "debian:6.12".into(),
            kernel_release: "6.12.117".into(),
            series: None,
            hz,
            xsave_size: xsave,
            patches: vec![],
            switches: vec![],
            build_seconds: 0.0,
            built_at: 0,
        };
        Image { meta, binary: PathBuf::from("/nonexistent/linux") }
    }

    #[test]
    fn the_default_image_is_the_newest_at_the_default_hz_for_this_host() {
        let keys = |v: Option<Image>| v.map(|i| i.meta.key);
        // Newest first: an HZ 1000 experiment, then two default builds.
        let all = || vec![image("hz1000", 1000, 832), image("new250", 250, 832), image("old250", 250, 832)];
        assert_eq!(keys(default_image(all(), Some(832))), Some("new250".into()));
        // No image at the default HZ: the newest for this host.
        assert_eq!(keys(default_image(vec![image("hz1000", 1000, 832)], Some(832))), Some("hz1000".into()));
        // Another host's images never.
        assert_eq!(keys(default_image(vec![image("other", 250, 1088)], Some(832))), None);
        assert_eq!(keys(default_image(all(), None)), None);
    }
}
