//! The commands, started in the background: each validates its input at
//! once (raising `tcplab.Error` with the CLI's message) and returns a
//! [`Task`] running the lab's own function for it, as the CLI's command
//! of the same name does: `runner::run_with` and `RunReport` (run),
//! `CompareSpec` (compare), `SweepSpec` (sweep), `DiffSpec` (diff) and
//! the experiment registry (reproduce).

use crate::error::to_py;
use crate::results::{ComparisonOutput, DiffOutput, Output, ReproductionOutput, RunOutput, SweepOutput};
use crate::scenario::{value_text, PyScenario};
use crate::task::{Counter, Task};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tcplab_lab::backend::{Backend, Choice};
use tcplab_lab::compare::{ArmSpec, CompareSpec};
use tcplab_lab::experiments::{self, KernelColumn, REGISTRY};
use tcplab_lab::overrides::{parse_list, Setting};
use tcplab_lab::report::RunReport;
use tcplab_lab::runner::{self, Extras};
use tcplab_lab::sweep::{self, SweepSpec, Vary};
use tcplab_lab::{batch, choices, Error};

/// Settings given as `"K=V,K=V"`, a list of such strings, or a dict;
/// `flag` names them in errors (`--a`, `--set`).
pub fn settings(flag: &str, obj: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Setting>> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(Vec::new()) };
    if let Ok(s) = obj.downcast::<PyString>() {
        return parse_list(flag, &s.extract::<String>()?).map_err(to_py);
    }
    if let Ok(d) = obj.downcast::<PyDict>() {
        let mut v = Vec::new();
        for (k, x) in d.iter() {
            let key: String = k.extract().map_err(|_| PyTypeError::new_err(format!("{flag}: keys must be strings")))?;
            v.push(Setting { key, value: value_text(&x)? });
        }
        return Ok(v);
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut v = Vec::new();
        for item in obj.try_iter()? {
            let item = item?;
            let s: String = item
                .extract()
                .map_err(|_| PyTypeError::new_err(format!("{flag}: give \"KEY=VALUE\" strings or a dict")))?;
            v.extend(parse_list(flag, &s).map_err(to_py)?);
        }
        return Ok(v);
    }
    Err(PyTypeError::new_err(format!("{flag}: give a dict, \"KEY=VALUE,...\" or a list of \"KEY=VALUE\"")))
}

/// The one backend of `backend` (`model` or `linux`); `what` is told
/// when `both` is asked for.
fn one_backend(backend: &str, kernel: Option<&str>, max_wall: Option<f64>, what: &str) -> Result<Backend, Error> {
    let choice = Choice::parse(backend)?;
    if choice == Choice::Both {
        return Err(Error::at(format!("backend={backend:?}"), what.to_string()));
    }
    let mut v = choices::backends(choice, kernel, max_wall)?;
    Ok(v.remove(0))
}

fn jobs(py: Python<'_>, requested: Option<usize>) -> PyResult<usize> {
    let (n, note) = choices::jobs(requested);
    if let Some(note) = note {
        let warnings = py.import("warnings")?;
        warnings.call_method1("warn", (format!("tcplab: {note}"),))?;
    }
    Ok(n)
}

/// Starts one run of `scenario` (`tcplab run`).
#[pyfunction]
#[pyo3(signature = (scenario, seed = None, backend = "model", kernel = None, trace = true, max_wall = None))]
pub fn start_run(
    py: Python<'_>,
    scenario: PyScenario,
    seed: Option<u64>,
    backend: &str,
    kernel: Option<String>,
    trace: bool,
    max_wall: Option<f64>,
) -> PyResult<Task> {
    let sc = py.allow_threads(|| scenario.validated(seed)).map_err(to_py)?;
    let backend = one_backend(
        backend,
        kernel.as_deref(),
        max_wall,
        "tcplab.run runs on one backend: call it once per backend, or use tcplab.diff to compare the two",
    )
    .map_err(to_py)?;
    Task::spawn("run", 1000, move |shared| {
        let mut report = |done: f64| shared.done.store((done * 1000.0) as u64, Ordering::Relaxed);
        let extras = Extras { keep_trace: trace, progress: Some(&mut report), backend, ..Default::default() };
        let outcome = runner::run_with(&sc, extras)?;
        let report = RunReport::new(&sc, &outcome);
        let out = RunOutput { report, result: outcome.result, traced: trace };
        Ok((Output::Run(Box::new(out)), true))
    })
}

/// Starts a comparison of `arms` (name, settings) of `scenario`
/// (`tcplab compare`); the scenario's own overrides apply to every arm
/// first, as `--set` does.
#[pyfunction]
#[pyo3(signature = (scenario, arms, runs = 10, metrics = Vec::new(), jobs = None, backend = "model", kernel = None, max_wall = None, keep_traces = false, max_runs = batch::DEFAULT_MAX_RUNS))]
#[allow(clippy::too_many_arguments)]
pub fn start_compare(
    py: Python<'_>,
    scenario: PyScenario,
    arms: Vec<(String, Bound<'_, PyAny>)>,
    runs: u32,
    metrics: Vec<String>,
    jobs: Option<usize>,
    backend: &str,
    kernel: Option<String>,
    max_wall: Option<f64>,
    keep_traces: bool,
    max_runs: u64,
) -> PyResult<Task> {
    let threads = self::jobs(py, jobs)?;
    let flags = ["--a", "--b"];
    let mut parsed = Vec::new();
    for (i, (name, s)) in arms.iter().enumerate() {
        let flag = flags.get(i).map_or_else(|| format!("arm {name}"), |f| f.to_string());
        parsed.push((name.clone(), flag.clone(), settings(&flag, Some(s))?));
    }
    let backend = one_backend(
        backend,
        kernel.as_deref(),
        max_wall,
        "tcplab.compare runs on one backend: call it once per backend, or use tcplab.diff",
    )
    .map_err(to_py)?;
    let spec = CompareSpec {
        scenario: scenario.text.clone(),
        base: scenario.settings.clone(),
        arms: parsed
            .into_iter()
            .map(|(name, flag, settings)| ArmSpec { name, flag, settings, backend: backend.clone() })
            .collect(),
        runs,
        metrics,
        jobs: threads,
        keep_first: keep_traces,
        max_runs,
    };
    let prepared = py.allow_threads(|| spec.prepare()).map_err(to_py)?;
    Task::spawn("compare", prepared.total_runs(), move |shared| {
        let (cmp, complete) = prepared.run_finished(&Counter(Arc::clone(shared)), None)?;
        Ok((Output::Compare(ComparisonOutput { cmp, complete }), complete))
    })
}

/// Starts a sweep of `scenario` over the cartesian product of `vary`
/// (`tcplab sweep`).
#[pyfunction]
#[pyo3(signature = (scenario, vary, runs = 3, metrics = Vec::new(), jobs = None, backend = "model", kernel = None, max_wall = None, shard = None, max_runs = batch::DEFAULT_MAX_RUNS))]
#[allow(clippy::too_many_arguments)]
pub fn start_sweep(
    py: Python<'_>,
    scenario: PyScenario,
    vary: Vec<(String, Vec<Bound<'_, PyAny>>)>,
    runs: u32,
    metrics: Vec<String>,
    jobs: Option<usize>,
    backend: &str,
    kernel: Option<String>,
    max_wall: Option<f64>,
    shard: Option<String>,
    max_runs: u64,
) -> PyResult<Task> {
    let threads = self::jobs(py, jobs)?;
    let mut vs = Vec::new();
    for (key, values) in &vary {
        let values: Vec<String> = values.iter().map(value_text).collect::<PyResult<_>>()?;
        if values.is_empty() || values.iter().any(|v| v.trim().is_empty()) {
            return Err(to_py(Error::at(format!("--vary {key}"), "expected KEY=V1,V2,... with no empty value")));
        }
        vs.push(Vary { key: key.clone(), values });
    }
    let shard = shard.as_deref().map(sweep::parse_shard).transpose().map_err(to_py)?;
    let backend =
        one_backend(backend, kernel.as_deref(), max_wall, "a sweep runs on one backend; tcplab.diff compares the two")
            .map_err(to_py)?;
    let spec = SweepSpec {
        scenario: scenario.text.clone(),
        base: scenario.settings.clone(),
        vary: vs,
        runs,
        metrics,
        shard,
        jobs: threads,
        backend,
        max_runs,
    };
    let prepared = py.allow_threads(|| spec.prepare()).map_err(to_py)?;
    Task::spawn("sweep", prepared.job_count(), move |shared| {
        let (sweep, complete) = prepared.run_finished(&Counter(Arc::clone(shared)), None)?;
        Ok((Output::Sweep(SweepOutput { sweep, complete }), complete))
    })
}

/// `KEY=V1,V2,...` as `--vary` takes it: (key, values).
#[pyfunction]
pub fn parse_vary(arg: &str) -> PyResult<(String, Vec<String>)> {
    let v = sweep::parse_vary(arg).map_err(to_py)?;
    Ok((v.key, v.values))
}

/// Starts `scenario` on the model and on the kernel (`tcplab diff`).
#[pyfunction]
#[pyo3(signature = (scenario, runs = 5, metrics = Vec::new(), jobs = None, kernel = None, max_wall = None, keep_traces = true))]
#[allow(clippy::too_many_arguments)]
pub fn start_diff(
    py: Python<'_>,
    scenario: PyScenario,
    runs: u32,
    metrics: Vec<String>,
    jobs: Option<usize>,
    kernel: Option<String>,
    max_wall: Option<f64>,
    keep_traces: bool,
) -> PyResult<Task> {
    let threads = self::jobs(py, jobs)?;
    // A bad scenario or setting is reported before any kernel is looked for.
    py.allow_threads(|| scenario.validated(None)).map_err(to_py)?;
    let pair = choices::backends(Choice::Both, kernel.as_deref(), max_wall).map_err(to_py)?;
    let [model, linux]: [Backend; 2] =
        pair.try_into().map_err(|_| to_py(Error::msg("internal: both backends give two")))?;
    let spec = tcplab_lab::diff::DiffSpec {
        scenario: scenario.text.clone(),
        base: scenario.settings.clone(),
        runs,
        metrics,
        jobs: threads,
        model,
        linux,
        keep_first: keep_traces,
    };
    let (cspec, model_settings) = py.allow_threads(|| spec.compare_spec()).map_err(to_py)?;
    let prepared = py.allow_threads(|| cspec.prepare()).map_err(to_py)?;
    Task::spawn("diff", prepared.total_runs(), move |shared| {
        let (comparison, complete) = prepared.run_finished(&Counter(Arc::clone(shared)), None)?;
        let diff = tcplab_lab::diff::Diff { comparison, model_settings };
        Ok((Output::Diff(DiffOutput { diff, complete }), complete))
    })
}

/// Starts registered experiments (`tcplab reproduce NAME|all`). On the
/// model the kernel's figures come from `ROOT/results/linux/NAME.json`
/// when `root` is given and the file exists, as the CLI reads them from
/// the current directory.
#[pyfunction]
#[pyo3(signature = (name, runs = None, jobs = None, backend = "model", kernel = None, max_wall = None, root = None))]
#[allow(clippy::too_many_arguments)]
pub fn start_reproduce(
    py: Python<'_>,
    name: &str,
    runs: Option<u32>,
    jobs: Option<usize>,
    backend: &str,
    kernel: Option<String>,
    max_wall: Option<f64>,
    root: Option<std::path::PathBuf>,
) -> PyResult<Task> {
    let threads = self::jobs(py, jobs)?;
    let chosen = experiments::select(REGISTRY, name).map_err(to_py)?;
    if let Some(r) = runs {
        tcplab_lab::compare::check_runs(r).map_err(to_py)?;
    }
    let backend = one_backend(
        backend,
        kernel.as_deref(),
        max_wall,
        "tcplab.reproduce runs on one backend: call it once per backend",
    )
    .map_err(to_py)?;
    let on_model = matches!(backend, Backend::Model { .. });
    let mut committed = Vec::new();
    for e in &chosen {
        let column = match (&root, on_model) {
            (Some(root), true) => {
                KernelColumn::load(&experiments::kernel_column::results_path(root, e.name), e.name).map_err(to_py)?
            }
            _ => None,
        };
        committed.push(column);
    }
    let opts = experiments::Options { runs, jobs: threads, keep_first: false, backend };
    let mut prepared = Vec::new();
    for e in &chosen {
        let spec = e.compare_spec(&opts).map_err(to_py)?;
        prepared.push((*e, py.allow_threads(|| spec.prepare()).map_err(to_py)?));
    }
    let total = prepared.iter().map(|(_, p)| p.total_runs()).sum();
    Task::spawn("reproduce", total, move |shared| {
        let mut done = Vec::new();
        let mut all = true;
        for ((e, p), linux) in prepared.into_iter().zip(committed) {
            if !all {
                break;
            }
            let (comparison, complete) = p.run_finished(&Counter(Arc::clone(shared)), None)?;
            all &= complete;
            let rep = experiments::Reproduction { experiment: e, comparison, linux };
            done.push(ReproductionOutput { rep, complete });
        }
        Ok((Output::Reproduce(done), all))
    })
}
