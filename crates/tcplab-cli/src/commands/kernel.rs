//! `tcplab kernel`: the kernel backend's images.

use crate::options::ScenarioArgs;
use crate::terminal::{emit, interactive, styled_bar};
use clap::{Args, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcplab_lab::batch;
use tcplab_lab::Error;

#[derive(Subcommand, Debug)]
pub(crate) enum KernelCmd {
    /// Build (or find cached) a User-Mode Linux kernel for the linux backend.
    Build(KernelBuildArgs),
    /// List the cached kernel images.
    List {
        /// Print JSON (one array of image descriptions).
        #[arg(long)]
        json: bool,
    },
    /// Print how a scenario is set up in the guest (namespaces, veth, qdiscs,
    /// sysctls, module parameters), without running it.
    Plan {
        #[command(flatten)]
        scenario: ScenarioArgs,
        /// Kernel image (as for --kernel); default: the newest built for this host at HZ 250.
        #[arg(long, value_name = "IMAGE")]
        kernel: Option<String>,
    },
}

#[derive(Args, Debug)]
pub(crate) struct KernelBuildArgs {
    /// debian:SERIES (Debian's linux-source-SERIES package, installed with apt-get if
    /// missing), the path of a kernel source tree (it is copied, never written to) or
    /// of a source tarball (.tar.xz, .tar.gz, .tar.bz2; unpacked once into the cache).
    /// Linux 3.12, 3.18 and 4.17 build as era images with their base patches.
    #[arg(long, value_name = "debian:6.12|PATH", default_value = "debian:6.12")]
    source: String,
    /// Directory of *.patch files applied in name order, or `none`. Default: tcplab's
    /// own run-time switches for the tree's series (kernel/patches, or
    /// kernel/era/SERIES/switches; GPL-2.0). An era's base patches apply always.
    #[arg(long, value_name = "DIR|none")]
    patches: Option<String>,
    /// The kernel's HZ (100, 250, 300 or 1000); scenarios must use the same `hz`.
    #[arg(long, value_name = "N", default_value_t = 250)]
    hz: u32,
    /// Parallel make jobs; default: every core.
    #[arg(long, value_name = "J")]
    jobs: Option<usize>,
    /// A name to select the image by (--kernel NAME).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
}

/// Shows a kernel build's steps and compile progress on stderr.
pub(crate) struct BuildBar(Option<indicatif::ProgressBar>);

impl tcplab_kernel::build::BuildProgress for BuildBar {
    fn phase(&self, what: &str) {
        match &self.0 {
            Some(b) => b.set_message(what.to_string()),
            None => eprintln!("tcplab: {what}"),
        }
    }
    fn compiled(&self, done: u64, estimate: u64) {
        if let Some(b) = &self.0 {
            b.set_length(estimate);
            b.set_position(done);
        }
    }
}

pub(crate) fn run(k: KernelCmd) -> Result<ExitCode, Error> {
    use tcplab_kernel::{build, image};
    let kerr = |flag: &str, e: tcplab_kernel::KernelError| Error::at(flag, e.message);
    match k {
        KernelCmd::Build(a) => {
            let source = build::Source::parse(&a.source).map_err(|e| kerr("--source", e))?;
            let kernel_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel");
            let patches = match a.patches.as_deref() {
                Some("none") => build::Patches::None,
                Some(dir) => build::Patches::Dir(PathBuf::from(dir)),
                None => {
                    if !kernel_dir.is_dir() {
                        return Err(Error::at(
                            "--patches",
                            format!(
                                "tcplab's kernel patches are not at {}: give --patches DIR (or none)",
                                kernel_dir.display()
                            ),
                        ));
                    }
                    build::Patches::Series
                }
            };
            let opts = build::BuildOptions {
                source,
                patches,
                kernel_dir,
                hz: a.hz,
                jobs: a.jobs.unwrap_or_else(batch::default_jobs),
                name: a.name.clone(),
            };
            let bar = BuildBar(interactive().then(|| styled_bar(0, "{pos}/{len} compile steps", String::new())));
            let built = build::build(&opts, &bar);
            if let Some(b) = &bar.0 {
                b.finish_and_clear();
            }
            let built = built.map_err(|e| kerr("tcplab kernel build", e))?;
            let m = &built.image.meta;
            let how =
                if built.compiled { format!("built in {:.0} s", m.build_seconds) } else { "already cached".into() };
            emit(&format!(
                "kernel image {} ({how}): Linux {} (series {}) from {}, HZ {}, {} patch(es)\n  {}\n",
                m.key,
                m.kernel_release,
                m.series.as_deref().unwrap_or("mainline"),
                m.source,
                m.hz,
                m.patches.len(),
                built.image.binary.display()
            ))
        }
        KernelCmd::List { json } => {
            let all = image::list().map_err(|e| kerr("tcplab kernel list", e))?;
            if json {
                let metas: Vec<&image::ImageMeta> = all.iter().map(|i| &i.meta).collect();
                let text = serde_json::to_string(&metas).map_err(|e| Error::msg(e.to_string()))?;
                return emit(&(text + "\n"));
            }
            if all.is_empty() {
                return emit("no kernel images: build one with `tcplab kernel build`\n");
            }
            let host = tcplab_kernel::host::xsave_size();
            let mut s = format!(
                "{:<16} {:<12} {:<10} {:<8} {:>4} {:>7}  {:<8} source\n",
                "key", "name", "release", "series", "HZ", "patches", "host"
            );
            for i in &all {
                let m = &i.meta;
                let fits = if Some(m.xsave_size) == host { "this" } else { "other" };
                let series = i.series().map_or("?", |s| s.name);
                s.push_str(&format!(
                    "{:<16} {:<12} {:<10} {:<8} {:>4} {:>7}  {:<8} {}\n",
                    m.key,
                    m.name.as_deref().unwrap_or("-"),
                    m.kernel_release,
                    series,
                    m.hz,
                    m.patches.len(),
                    fits,
                    m.source
                ));
            }
            emit(&s)
        }
        KernelCmd::Plan { scenario, kernel } => {
            let sc = tcplab_lab::load(&scenario.file, &scenario.set, scenario.seed)?;
            let backend = tcplab_kernel::KernelBackend::new(kernel.as_deref(), std::time::Duration::ZERO)
                .map_err(|e| kerr("--kernel", e))?;
            let plan = backend
                .plan(&sc.sim, &tcplab_lab::backend::flow_knobs(&sc))
                .map_err(|e| tcplab_lab::backend::kernel_error(&sc, e))?;
            let mut s = tcplab_kernel::translate::describe(&plan).join("\n");
            s.push('\n');
            emit(&s)
        }
    }
}
