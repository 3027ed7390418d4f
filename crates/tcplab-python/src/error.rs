//! The lab's errors as Python exceptions: `tcplab.Error` carries the
//! CLI's message (`file:line:col: field: what is wrong`) as its text and
//! its parts as attributes (`location`, `path`, `message`).

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    tcplab,
    Error,
    PyException,
    "An error of tcplab: bad scenario input, a bad option, a failed run. `str(e)` is the CLI's message \
     (`file:line:col: field: what is wrong`); `e.location` (`file:line:col`, `--set KEY=VALUE`, an option), \
     `e.path` (the field's dotted path) and `e.message` are its parts (None when not known)."
);

/// The lab's error as a `tcplab.Error`.
pub fn to_py(e: tcplab_lab::Error) -> PyErr {
    Python::with_gil(|py| {
        let err = Error::new_err(e.to_string());
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail in practice;
        // if it did, the message alone still says everything.
        let _ = v.setattr("location", e.location.clone());
        let _ = v.setattr("path", e.path.clone());
        let _ = v.setattr("message", e.message.clone());
        err
    })
}
