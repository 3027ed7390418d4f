//! `tcplab._native`: the extension module under the `tcplab` Python
//! package (python/tcplab). It calls the lab's library API and nothing
//! else: scenarios are loaded and validated by `tcplab_lab`, runs and
//! batches are the lab's (the same worker pool and determinism as the
//! CLI), and results cross into Python as Arrow tables (tables.rs). The
//! Python side adds only presentation: DataFrames, progress bars, HTML,
//! plots.

use pyo3::prelude::*;

mod commands;
mod error;
mod results;
mod scenario;
mod tables;
mod task;

use tables::{Col, Columns, Table};
use tcplab_lab::catalog;

/// Every knob a scenario's `[tcp]` table accepts: table, name, key (the
/// dotted path for `Scenario.set`), linux-current default, accepted
/// values, the Linux setting it models, the side that reads it, what the
/// kernel backend does with it, and its documentation.
#[pyfunction]
fn knobs_table() -> Table {
    let rows = catalog::knob_rows();
    let mut c = Columns::new();
    c.push("table", Col::Str(rows.iter().map(|r| r.table.to_string()).collect()))
        .push("name", Col::Str(rows.iter().map(|r| r.name.clone()).collect()))
        .push("key", Col::Str(rows.iter().map(|r| r.key.clone()).collect()))
        .push("default", Col::Str(rows.iter().map(|r| r.default.clone()).collect()))
        .push("accepts", Col::Str(rows.iter().map(|r| r.accepts.clone()).collect()))
        .push("linux", Col::Str(rows.iter().map(|r| r.linux.clone()).collect()))
        .push("side", Col::Str(rows.iter().map(|r| r.side.to_string()).collect()))
        .push("kernel", Col::Str(rows.iter().map(|r| r.kernel.clone()).collect()))
        .push("doc", Col::Str(rows.iter().map(|r| r.doc.to_string()).collect()));
    c.finish()
}

/// Every kernel-era preset's knobs that differ from linux-current:
/// preset, knob, value, linux_current.
#[pyfunction]
fn presets_table() -> Table {
    let rows = catalog::preset_rows();
    let mut c = Columns::new();
    c.push("preset", Col::Str(rows.iter().map(|r| r.preset.to_string()).collect()))
        .push("knob", Col::Str(rows.iter().map(|r| r.knob.clone()).collect()))
        .push("value", Col::Str(rows.iter().map(|r| r.value.clone()).collect()))
        .push("linux_current", Col::Str(rows.iter().map(|r| r.linux_current.clone()).collect()));
    c.finish()
}

/// The presets' names.
#[pyfunction]
fn preset_names() -> Vec<&'static str> {
    catalog::preset_names().to_vec()
}

/// The counters the model keeps, by nstat name.
#[pyfunction]
fn counter_names() -> Vec<&'static str> {
    catalog::counter_names()
}

/// The registered experiments (`tcplab reproduce NAME`): name, title,
/// source, scenario, arms, runs, metrics, summary.
#[pyfunction]
fn experiments_table() -> Table {
    let r = tcplab_lab::experiments::REGISTRY;
    let mut c = Columns::new();
    c.push("name", Col::Str(r.iter().map(|e| e.name.to_string()).collect()))
        .push("title", Col::Str(r.iter().map(|e| e.title.to_string()).collect()))
        .push("source", Col::Str(r.iter().map(|e| e.source.to_string()).collect()))
        .push("scenario", Col::Str(r.iter().map(|e| e.scenario.path.to_string()).collect()))
        .push(
            "arms",
            Col::Str(r.iter().map(|e| e.arms.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")).collect()),
        )
        .push("runs", Col::U64(r.iter().map(|e| u64::from(e.runs)).collect()))
        .push("metrics", Col::Str(r.iter().map(|e| e.metrics.join(", ")).collect()))
        .push("kernel_setup", Col::Bool(r.iter().map(|e| e.kernel.is_some()).collect()))
        .push("summary", Col::Str(r.iter().map(|e| e.summary.to_string()).collect()));
    c.finish()
}

/// A registered experiment as data: (scenario, arms, metrics, runs),
/// where scenario is the compiled-in scenario file with the experiment's
/// own overrides, and arms are (name, settings) as compare takes them.
type ExperimentData = (scenario::PyScenario, Vec<(String, Vec<String>)>, Vec<String>, u32);

#[pyfunction]
fn experiment(name: &str) -> PyResult<ExperimentData> {
    let e = tcplab_lab::experiments::REGISTRY.iter().find(|e| e.name == name).ok_or_else(|| {
        let names: Vec<&str> = tcplab_lab::experiments::REGISTRY.iter().map(|e| e.name).collect();
        error::to_py(tcplab_lab::Error::at(
            format!("reproduce {name}"),
            format!("no experiment named {name:?} (known: {})", names.join(", ")),
        ))
    })?;
    let loc = format!("experiment {}", e.name);
    let settings = e
        .set
        .iter()
        .map(|s| tcplab_lab::overrides::parse_one(&loc, s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(error::to_py)?;
    let text =
        tcplab_lab::overrides::ScenarioText { name: e.scenario.path.to_string(), text: e.scenario.text.to_string() };
    let sc = scenario::PyScenario { text, settings };
    let arms =
        e.arms.iter().map(|a| (a.name.to_string(), a.settings.iter().map(|s| s.to_string()).collect())).collect();
    Ok((sc, arms, e.metrics.iter().map(|m| m.to_string()).collect(), e.runs))
}

/// The kernel image the linux backend would use (`kernel`: a key, name
/// or directory, as `--kernel`), as `linux-<release>`; raises
/// `tcplab.Error` with the CLI's message when there is none (or no guest
/// agent).
#[pyfunction]
#[pyo3(signature = (kernel = None))]
fn kernel_image(kernel: Option<&str>) -> PyResult<String> {
    let b = tcplab_lab::backend::Backend::linux(kernel, None).map_err(error::to_py)?;
    Ok(b.label())
}

/// The kernel images built on this machine (`tcplab kernel list`),
/// newest first: key, name, release, series (`mainline` or an era such as
/// `3.18`), HZ, whether this host can boot it, where the source came from.
#[pyfunction]
fn kernel_images() -> PyResult<Table> {
    let all =
        tcplab_kernel::image::list().map_err(|e| error::to_py(tcplab_lab::Error::at("kernel images", e.message)))?;
    let host = tcplab_kernel::host::xsave_size();
    let mut c = Columns::new();
    c.push("key", Col::Str(all.iter().map(|i| i.meta.key.clone()).collect()))
        .push("name", Col::OptStr(all.iter().map(|i| i.meta.name.clone()).collect()))
        .push("label", Col::Str(all.iter().map(|i| i.label()).collect()))
        .push("release", Col::Str(all.iter().map(|i| i.meta.kernel_release.clone()).collect()))
        .push(
            "series",
            Col::Str(all.iter().map(|i| i.meta.series.clone().unwrap_or_else(|| "mainline".into())).collect()),
        )
        .push("hz", Col::U32(all.iter().map(|i| i.meta.hz).collect()))
        .push("this_host", Col::Bool(all.iter().map(|i| Some(i.meta.xsave_size) == host).collect()))
        .push("source", Col::Str(all.iter().map(|i| i.meta.source.clone()).collect()));
    Ok(c.finish())
}

/// The worker threads a batch uses when `jobs` is not given: every core.
#[pyfunction]
fn default_jobs() -> usize {
    tcplab_lab::batch::default_jobs()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", tcplab_lab::VERSION)?;
    m.add("Error", m.py().get_type::<error::Error>())?;
    m.add_class::<scenario::PyScenario>()?;
    m.add_class::<Table>()?;
    m.add_class::<task::Task>()?;
    m.add_class::<results::RunOutput>()?;
    m.add_class::<results::ComparisonOutput>()?;
    m.add_class::<results::DiffOutput>()?;
    m.add_class::<results::ReproductionOutput>()?;
    m.add_class::<results::SweepOutput>()?;
    m.add_function(wrap_pyfunction!(commands::start_run, m)?)?;
    m.add_function(wrap_pyfunction!(commands::start_compare, m)?)?;
    m.add_function(wrap_pyfunction!(commands::start_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(commands::start_diff, m)?)?;
    m.add_function(wrap_pyfunction!(commands::parse_vary, m)?)?;
    m.add_function(wrap_pyfunction!(commands::start_reproduce, m)?)?;
    m.add_function(wrap_pyfunction!(knobs_table, m)?)?;
    m.add_function(wrap_pyfunction!(presets_table, m)?)?;
    m.add_function(wrap_pyfunction!(preset_names, m)?)?;
    m.add_function(wrap_pyfunction!(counter_names, m)?)?;
    m.add_function(wrap_pyfunction!(experiments_table, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_image, m)?)?;
    m.add_function(wrap_pyfunction!(kernel_images, m)?)?;
    m.add_function(wrap_pyfunction!(experiment, m)?)?;
    m.add_function(wrap_pyfunction!(default_jobs, m)?)?;
    Ok(())
}
