//! `tcplab.Scenario`: a scenario file (or TOML text) and its `--set`
//! overrides, validated by the lab exactly as `tcplab run --set` does.

use crate::error::to_py;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};
use tcplab_lab::overrides::{parse_one, Layers, ScenarioText, Setting};

/// A scenario: TOML text (from a file or a string) and the overrides set
/// on it, in order. Nothing runs until `tcplab.run` (or compare, sweep,
/// diff) is given it; every change is validated at once, so a bad key or
/// value raises `tcplab.Error` naming the file, line and field, as the
/// CLI prints it.
#[pyclass(module = "tcplab", name = "Scenario")]
#[derive(Clone)]
pub struct PyScenario {
    pub text: ScenarioText,
    pub settings: Vec<Setting>,
}

impl PyScenario {
    /// The overrides as layers named as the CLI names them (`--set KEY=VALUE`).
    pub fn layers(&self) -> Layers {
        tcplab_lab::compare::set_layers(&self.settings)
    }

    /// The validated scenario with the overrides, and `seed` if given.
    pub fn validated(&self, seed: Option<u64>) -> Result<tcplab_lab::Scenario, tcplab_lab::Error> {
        self.text.load(&self.layers(), seed)
    }
}

/// A Python value as the text of a `--set` value: strings as given (the
/// CLI's bare words: `50Mbit`, `reno`), booleans and numbers as TOML
/// writes them, lists as TOML arrays and dicts as inline tables.
pub fn value_text(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.downcast::<PyString>() {
        return s.extract::<String>();
    }
    toml_value(v)
}

fn toml_value(v: &Bound<'_, PyAny>) -> PyResult<String> {
    if v.is_instance_of::<PyBool>() {
        return Ok(if v.extract::<bool>()? { "true" } else { "false" }.to_string());
    }
    if v.is_instance_of::<PyInt>() {
        return v.str()?.extract::<String>();
    }
    if v.is_instance_of::<PyFloat>() {
        let x: f64 = v.extract()?;
        if !x.is_finite() {
            return Err(PyValueError::new_err(format!("{x} is not a value a scenario can hold")));
        }
        return Ok(format!("{x:?}"));
    }
    if let Ok(s) = v.downcast::<PyString>() {
        // Inside an array or table a string is a TOML string.
        return Ok(serde_json::to_string(&s.extract::<String>()?).unwrap_or_default());
    }
    if v.is_instance_of::<PyList>() || v.is_instance_of::<PyTuple>() {
        let items: Vec<String> = v.try_iter()?.map(|x| toml_value(&x?)).collect::<PyResult<_>>()?;
        return Ok(format!("[{}]", items.join(", ")));
    }
    if let Ok(d) = v.downcast::<PyDict>() {
        let mut items = Vec::new();
        for (k, x) in d.iter() {
            let k: String = k.extract().map_err(|_| PyTypeError::new_err("table keys must be strings"))?;
            items.push(format!("{k} = {}", toml_value(&x)?));
        }
        return Ok(format!("{{ {} }}", items.join(", ")));
    }
    Err(PyTypeError::new_err(format!(
        "cannot write a {} as a scenario value (give a str, bool, int, float, list or dict)",
        v.get_type().name()?
    )))
}

#[pymethods]
impl PyScenario {
    /// Reads a scenario file (TOML). Relative paths are taken from the
    /// current directory; the path is how errors name the file.
    #[staticmethod]
    fn load(path: std::path::PathBuf) -> PyResult<PyScenario> {
        let name = path.to_string_lossy().into_owned();
        let text = ScenarioText::read(&name).map_err(to_py)?;
        let sc = PyScenario { text, settings: Vec::new() };
        sc.load_checked()?;
        Ok(sc)
    }

    /// A scenario from TOML text; `name` stands for the file in error
    /// messages.
    #[staticmethod]
    #[pyo3(signature = (text, name = "<toml>"))]
    fn from_toml(text: &str, name: &str) -> PyResult<PyScenario> {
        let sc =
            PyScenario { text: ScenarioText { name: name.to_string(), text: text.to_string() }, settings: Vec::new() };
        sc.load_checked()?;
        Ok(sc)
    }

    /// Overrides fields by their dotted paths, as `tcplab run --set`:
    /// `sc.set("link.bottleneck.rate", "50Mbit")`, or several at once,
    /// `sc.set({"flow.*.cc": "reno", "run.duration": "5s"})`. Changes this
    /// scenario and returns it; raises `tcplab.Error` (and changes nothing)
    /// if the result does not validate.
    #[pyo3(signature = (key, value = None))]
    fn set<'py>(
        slf: Bound<'py, Self>,
        key: &Bound<'py, PyAny>,
        value: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let mut new = Vec::new();
        match (key.downcast::<PyDict>(), value) {
            (Ok(d), None) => {
                for (k, v) in d.iter() {
                    let k: String = k.extract().map_err(|_| PyTypeError::new_err("keys must be strings"))?;
                    new.push((k, value_text(&v)?));
                }
            }
            (Ok(_), Some(_)) => return Err(PyTypeError::new_err("set(dict) takes no value")),
            (Err(_), Some(v)) => {
                let k: String = key.extract().map_err(|_| PyTypeError::new_err("the key must be a str"))?;
                new.push((k, value_text(v)?));
            }
            (Err(_), None) => {
                // One "KEY=VALUE" string, as on the command line.
                let kv: String = key
                    .extract()
                    .map_err(|_| PyTypeError::new_err("give set(key, value), set(dict) or set(\"KEY=VALUE\")"))?;
                let s = parse_one(&format!("--set {kv}"), &kv).map_err(to_py)?;
                new.push((s.key, s.value));
            }
        }
        let mut trial = slf.borrow().clone();
        for (k, v) in new {
            let s = parse_one(&format!("--set {k}={v}"), &format!("{k}={v}")).map_err(to_py)?;
            trial.settings.push(s);
        }
        trial.load_checked()?;
        *slf.borrow_mut() = trial;
        Ok(slf)
    }

    /// Validates the scenario with its overrides, as `tcplab check`, and
    /// returns its one-line summary (`ok: NAME: 3 nodes, ...`); raises
    /// `tcplab.Error` otherwise.
    #[pyo3(signature = (seed = None))]
    fn check(&self, seed: Option<u64>) -> PyResult<String> {
        let sc = self.validated(seed).map_err(to_py)?;
        Ok(format!(
            "ok: {}: {} nodes, {} links, {} flows, {} simulated, seed {}",
            sc.name,
            sc.sim.nodes.len(),
            sc.sim.links.len(),
            sc.sim.flows.len(),
            tcplab_lab::units::format_time(sc.sim.duration),
            sc.sim.seed
        ))
    }

    /// A copy, with its own overrides from here on.
    fn copy(&self) -> PyScenario {
        self.clone()
    }

    /// The file name (or the `name` given to `from_toml`).
    #[getter]
    fn name(&self) -> String {
        self.text.name.clone()
    }

    /// The TOML text, without the overrides.
    #[getter]
    fn text(&self) -> String {
        self.text.text.clone()
    }

    /// The overrides, in order, as `KEY=VALUE`.
    #[getter]
    fn settings(&self) -> Vec<String> {
        self.settings.iter().map(Setting::text).collect()
    }

    /// The scenario's description, if it has one.
    #[getter]
    fn description(&self) -> PyResult<Option<String>> {
        Ok(self.validated(None).map_err(to_py)?.description)
    }

    /// Simulated duration, seconds.
    #[getter]
    fn duration_s(&self) -> PyResult<f64> {
        Ok(self.validated(None).map_err(to_py)?.sim.duration.as_secs_f64())
    }

    /// The seed a run uses unless given one (`run.seed`).
    #[getter]
    fn seed(&self) -> PyResult<u64> {
        Ok(self.validated(None).map_err(to_py)?.sim.seed)
    }

    /// The flows' ids.
    #[getter]
    fn flows(&self) -> PyResult<Vec<String>> {
        Ok(self.validated(None).map_err(to_py)?.sim.flows.iter().map(|f| f.id.clone()).collect())
    }

    /// The nodes' names.
    #[getter]
    fn nodes(&self) -> PyResult<Vec<String>> {
        Ok(self.validated(None).map_err(to_py)?.sim.nodes.iter().map(|n| n.name.clone()).collect())
    }

    /// The links' names.
    #[getter]
    fn links(&self) -> PyResult<Vec<String>> {
        Ok(self.validated(None).map_err(to_py)?.sim.links.iter().map(|l| l.name.clone()).collect())
    }

    /// The identity of the text with its overrides (FNV-1a 64), as sweep
    /// results and journals carry it.
    #[getter]
    fn hash(&self) -> PyResult<String> {
        self.text.hash(&self.layers()).map_err(to_py)
    }

    fn __repr__(&self) -> String {
        if self.settings.is_empty() {
            format!("Scenario({:?})", self.text.name)
        } else {
            format!("Scenario({:?}, set={:?})", self.text.name, self.settings())
        }
    }

    fn _repr_html_(&self) -> PyResult<String> {
        let sc = self.validated(None).map_err(to_py)?;
        let esc = tcplab_lab::html::esc;
        let mut s = format!("<div><b>Scenario</b> <code>{}</code>", esc(&sc.name));
        if let Some(d) = &sc.description {
            s.push_str(&format!("<br><i>{}</i>", esc(d)));
        }
        s.push_str(&format!(
            "<br>{} nodes, {} links, {} flows, {} simulated, seed {}",
            sc.sim.nodes.len(),
            sc.sim.links.len(),
            sc.sim.flows.len(),
            esc(&tcplab_lab::units::format_time(sc.sim.duration)),
            sc.sim.seed
        ));
        if !self.settings.is_empty() {
            s.push_str("<br>set: ");
            let items: Vec<String> = self.settings().iter().map(|x| format!("<code>{}</code>", esc(x))).collect();
            s.push_str(&items.join(", "));
        }
        s.push_str("</div>");
        Ok(s)
    }
}

impl PyScenario {
    fn load_checked(&self) -> PyResult<()> {
        self.validated(None).map(|_| ()).map_err(to_py)
    }
}
