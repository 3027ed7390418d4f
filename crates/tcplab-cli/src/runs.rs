//! Where a batch's finished runs go, so that an interrupted command loses
//! none of them.

use crate::options::RunsArgs;
use std::path::PathBuf;
use tcplab_lab::interrupt;
use tcplab_lab::journal::Journal;
use tcplab_lab::Error;

/// Where a batch's finished runs go: `--journal FILE`, `--resume FILE`,
/// or else a journal of this process in the current directory that is
/// kept only if the command is interrupted.
pub(crate) struct Runs {
    journal: Option<Journal>,
    /// The journal is this command's own: removed unless interrupted.
    own: bool,
}

impl Runs {
    pub(crate) fn open(r: &RunsArgs, command: &str) -> Result<Runs, Error> {
        match (&r.journal, &r.resume) {
            (Some(p), _) => Ok(Runs { journal: Some(Journal::create("--journal", p)?), own: false }),
            (None, Some(p)) => {
                let j = Journal::resume(p)?;
                eprintln!("tcplab: resuming {}: {} finished run(s) in it", p.display(), j.resumed());
                Ok(Runs { journal: Some(j), own: false })
            }
            // Best effort: where the directory is not writable, nothing is kept.
            (None, None) => {
                let p = PathBuf::from(format!("tcplab-{command}-{}.jsonl", std::process::id()));
                Ok(Runs { journal: Journal::create("journal", &p).ok(), own: true })
            }
        }
    }

    pub(crate) fn journal(&self) -> Option<&Journal> {
        self.journal.as_ref()
    }

    /// After the batch: on an interruption, says where the finished runs
    /// are and how to continue; else removes this command's own journal.
    pub(crate) fn finish<T>(self, result: Result<T, Error>) -> Result<T, Error> {
        if let Some(j) = &self.journal {
            if interrupt::requested() {
                eprintln!(
                    "tcplab: interrupted: {} finished run(s) are in {}; `--resume {}` with the same arguments continues",
                    j.resumed() as u64 + j.written(),
                    j.path().display(),
                    j.path().display()
                );
            } else if self.own {
                let _ = std::fs::remove_file(j.path());
            }
        }
        result
    }
}
