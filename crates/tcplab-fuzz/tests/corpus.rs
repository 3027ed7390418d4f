//! Replays the committed fuzz corpora (`fuzz/corpus/TARGET/`: the seeds,
//! a minimised set of what the campaign found interesting, and every
//! input that once failed, named `regression-*`) through the targets'
//! oracles, on the stable toolchain: a finding that comes back fails here.

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("corpus entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files.into_iter().map(|p| (p.clone(), std::fs::read(&p).expect("corpus file"))).collect()
}

#[test]
fn test_every_corpus_input_passes_its_targets_oracles() {
    for (name, check) in tcplab_fuzz::TARGETS {
        let inputs = corpus(name);
        assert!(!inputs.is_empty(), "fuzz/corpus/{name} is empty");
        for (path, data) in inputs {
            // Each input on a thread with the default 2 MiB stack, as the
            // CLI's worker threads: deep recursion shows up here too.
            let r = std::thread::Builder::new().spawn(move || check(&data)).expect("thread").join();
            assert!(r.is_ok(), "{name}: {} fails its oracles (see the panic above)", path.display());
        }
    }
}
