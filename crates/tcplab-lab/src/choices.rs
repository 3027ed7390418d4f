//! What the options every front end shares mean: the backend, the kernel
//! image and wall-clock limit, the worker threads. The CLI's flags
//! (`--backend`, `--kernel`, `--max-wall`, `--jobs`) and the Python
//! package's keyword arguments of the same names both come here, so they
//! accept the same values and fail with the same messages.

use crate::backend::{Backend, Choice};
use crate::batch;
use crate::error::{Error, Result};
use std::time::Duration;

/// `--max-wall SECS`: a positive number of seconds.
pub fn max_wall(secs: Option<f64>) -> Result<Option<Duration>> {
    match secs {
        Some(s) if !(s.is_finite() && s > 0.0 && s < 1e9) => {
            Err(Error::at("--max-wall", format!("{s}: give a positive number of seconds")))
        }
        Some(s) => Ok(Some(Duration::from_secs_f64(s))),
        None => Ok(None),
    }
}

/// The backends of `--backend model|linux|both` with `--kernel` and
/// `--max-wall`, model first.
pub fn backends(choice: Choice, kernel: Option<&str>, max_wall_secs: Option<f64>) -> Result<Vec<Backend>> {
    choice.backends(kernel, max_wall(max_wall_secs)?)
}

/// `--jobs J`, or every core when not given; more than
/// [`batch::max_jobs`] is reduced, with the note to show the user.
pub fn jobs(requested: Option<usize>) -> (usize, Option<String>) {
    match requested {
        Some(n) if n > batch::max_jobs() => (
            batch::max_jobs(),
            Some(format!(
                "--jobs {n}: using {} worker threads ({} per core; runs are CPU-bound)",
                batch::max_jobs(),
                batch::MAX_THREADS_PER_CORE
            )),
        ),
        Some(n) => (n, None),
        None => (batch::default_jobs(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_max_wall_refuses_what_is_not_a_time() {
        assert_eq!(max_wall(None).unwrap(), None);
        assert_eq!(max_wall(Some(2.5)).unwrap(), Some(Duration::from_millis(2500)));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e10] {
            let e = max_wall(Some(bad)).unwrap_err().to_string();
            assert!(e.starts_with("--max-wall: ") && e.contains("positive number of seconds"), "{e}");
        }
    }

    #[test]
    fn test_jobs_capped_with_a_note() {
        assert_eq!(jobs(Some(1)), (1, None));
        assert_eq!(jobs(None), (batch::default_jobs(), None));
        let (n, note) = jobs(Some(batch::max_jobs() + 1));
        assert_eq!(n, batch::max_jobs());
        assert!(note.unwrap().contains("worker threads"));
    }
}
