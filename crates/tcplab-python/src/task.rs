//! Work in the background: a run or a batch goes on a thread of its own
//! (a batch then spreads over the lab's worker pool, as in the CLI), so
//! the GIL is free the whole time; Python waits on a [`Task`] in short
//! slices, drawing progress and seeing Ctrl-C between them.
//!
//! Stopping: [`Task::cancel`] asks the lab to stop
//! ([`tcplab_lab::interrupt::request`], the CLI's signal path). A batch
//! starts no new run and its running runs stop at their next slice of
//! simulated time; the finished runs are kept (the lab's `run_finished`)
//! and the result says it is incomplete. Once the work has stopped the
//! request is cleared ([`tcplab_lab::interrupt::clear`]) so that the next
//! call runs. The request is process-wide, as in the CLI: cancelling one
//! task stops every task running at that moment.

use crate::results::Output;
use pyo3::exceptions::{PyKeyboardInterrupt, PyRuntimeError};
use pyo3::prelude::*;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tcplab_lab::batch::Progress;
use tcplab_lab::interrupt;

/// What a task's work returns: the output and whether every run finished.
pub type WorkResult = Result<(Output, bool), tcplab_lab::Error>;

/// Progress and outcome, shared by the worker thread and Python.
pub struct Shared {
    /// Finished runs (a batch), or per mille of simulated time (one run).
    pub done: AtomicU64,
    pub total: AtomicU64,
    cancelled: AtomicBool,
    outcome: Mutex<Option<WorkResult>>,
    finished: Condvar,
}

impl Shared {
    fn new(total: u64) -> Arc<Shared> {
        Arc::new(Shared {
            done: AtomicU64::new(0),
            total: AtomicU64::new(total),
            cancelled: AtomicBool::new(false),
            outcome: Mutex::new(None),
            finished: Condvar::new(),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<WorkResult>> {
        self.outcome.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A batch's progress: one per finished run.
pub struct Counter(pub Arc<Shared>);

impl Progress for Counter {
    fn inc(&self) {
        self.0.done.fetch_add(1, Ordering::Relaxed);
    }
}

/// A run or batch going on in the background. Created by the `start_*`
/// functions; `tcplab.run`, `compare` and the others wait on it.
#[pyclass(module = "tcplab._native", name = "Task", frozen)]
pub struct Task {
    shared: Arc<Shared>,
    /// What the task does, for progress bars: `run`, `compare`, ...
    #[pyo3(get)]
    kind: String,
}

impl Task {
    /// Starts `work` on a thread of its own; `total` is the progress
    /// bar's length (runs, or 1000 for one run's per mille).
    pub fn spawn(
        kind: &str,
        total: u64,
        work: impl FnOnce(&Arc<Shared>) -> WorkResult + Send + 'static,
    ) -> PyResult<Task> {
        let shared = Shared::new(total);
        let s = Arc::clone(&shared);
        std::thread::Builder::new()
            .name(format!("tcplab-{kind}"))
            .spawn(move || {
                let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(&s))).unwrap_or_else(|_| {
                    Err(tcplab_lab::Error::msg("internal error: the work panicked (please report this)"))
                });
                // Under the lock, so that a cancel either comes before this
                // (and is cleared here) or sees the work ended (and asks nothing).
                let mut outcome = s.lock();
                if s.cancelled.load(Ordering::SeqCst) {
                    // The work has stopped: the next call may run.
                    interrupt::clear();
                }
                *outcome = Some(out);
                drop(outcome);
                s.finished.notify_all();
            })
            .map_err(|e| PyRuntimeError::new_err(format!("cannot start a thread: {e}")))?;
        Ok(Task { shared, kind: kind.to_string() })
    }
}

#[pymethods]
impl Task {
    /// Waits up to `timeout` seconds (without holding the GIL); True once
    /// the work has ended.
    fn wait(&self, py: Python<'_>, timeout: f64) -> bool {
        let timeout = Duration::try_from_secs_f64(timeout.max(0.0)).unwrap_or(Duration::from_secs(3600));
        py.allow_threads(|| {
            let guard = self.shared.lock();
            let (guard, _) = self
                .shared
                .finished
                .wait_timeout_while(guard, timeout, |o| o.is_none())
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            guard.is_some()
        })
    }

    /// Whether the work has ended.
    #[getter]
    fn finished(&self) -> bool {
        self.shared.lock().is_some()
    }

    /// Runs finished so far (a batch), or per mille of simulated time (a run).
    #[getter]
    fn done(&self) -> u64 {
        self.shared.done.load(Ordering::Relaxed)
    }

    /// The progress bar's length: runs in the batch, or 1000 (a run).
    #[getter]
    fn total(&self) -> u64 {
        self.shared.total.load(Ordering::Relaxed)
    }

    /// Asks the work to stop: no new run starts and running runs stop at
    /// their next slice of simulated time. Returns at once; `wait` for the end.
    fn cancel(&self) {
        let outcome = self.shared.lock();
        if outcome.is_none() {
            self.shared.cancelled.store(true, Ordering::SeqCst);
            interrupt::request();
        }
    }

    /// Whether `cancel` was called.
    #[getter]
    fn cancelled(&self) -> bool {
        self.shared.cancelled.load(Ordering::SeqCst)
    }

    /// The outcome, once finished: `(result, complete)`, where `complete`
    /// is False when a cancelled batch kept only its finished runs. Raises
    /// `tcplab.Error` if the work failed, KeyboardInterrupt if a single
    /// run was cancelled (it keeps nothing), RuntimeError if not finished
    /// or already taken.
    fn result(&self, py: Python<'_>) -> PyResult<(PyObject, bool)> {
        let out = self.shared.lock().take();
        match out {
            None => Err(PyRuntimeError::new_err("the task has not finished, or its result was already taken")),
            Some(Ok((output, complete))) => Ok((output.into_py_object(py)?, complete)),
            Some(Err(e)) if e == interrupt::interrupted() => {
                Err(PyKeyboardInterrupt::new_err("tcplab: interrupted; the run was stopped"))
            }
            Some(Err(e)) => Err(crate::error::to_py(e)),
        }
    }
}
