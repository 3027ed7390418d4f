//! The worked cluster examples (examples/cluster, docs/CLUSTER.md): the
//! shard script the Slurm array and the Kubernetes Job run, and the merge
//! script after them, run here as the schedulers would (on 2 seeds instead
//! of 20); merging the shards gives what the whole sweep in one shard
//! gives. The job files must ask for as many shards as they pass on.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn script(name: &str, args: &[&str]) {
    let out = Command::new("sh")
        .arg(repo().join("examples/cluster").join(name))
        .args(args)
        .env("TCPLAB", env!("CARGO_BIN_EXE_tcplab"))
        .env("RUNS", "2")
        .output()
        .unwrap();
    assert!(out.status.success(), "{name} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn test_three_shards_merge_to_the_whole_sweep() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cluster-example");
    let (sharded, whole) = (dir.join("sharded"), dir.join("whole"));
    let _ = std::fs::remove_dir_all(&dir);
    for k in ["1", "2", "3"] {
        script("sweep.sh", &[k, "3", sharded.to_str().unwrap()]);
    }
    script("merge.sh", &[sharded.to_str().unwrap()]);
    script("sweep.sh", &["1", "1", whole.to_str().unwrap()]);
    script("merge.sh", &[whole.to_str().unwrap()]);
    let read = |d: &Path, f: &str| std::fs::read_to_string(d.join(f)).unwrap();
    assert_eq!(read(&sharded, "sweep.csv"), read(&whole, "sweep.csv"));
    let json: serde_json::Value = serde_json::from_str(&read(&sharded, "sweep.json")).unwrap();
    let points = json["points"].as_array().expect("points");
    assert_eq!(points.len(), 2 * 3, "2 cc x 3 thresholds");
    assert!(points.iter().all(|p| p["runs"].as_array().map_or(0, Vec::len) == 2), "2 seeds each");
    // No partial files left behind.
    assert!(!sharded.join("shard-1.json.part").exists());
}

#[test]
fn test_job_files_ask_for_the_shards_they_pass_on() {
    let read = |f: &str| std::fs::read_to_string(repo().join("examples/cluster").join(f)).unwrap();
    let slurm = read("slurm.sbatch");
    assert!(slurm.contains("#SBATCH --array=1-8") && slurm.contains("sweep.sh \"$SLURM_ARRAY_TASK_ID\" 8 "));
    let k8s = read("k8s-job.yaml");
    assert!(k8s.contains("completions: 8") && k8s.contains("$((JOB_COMPLETION_INDEX + 1)) 8 /results"));
    assert!(read("k8s-merge.yaml").contains("merge.sh\", \"/results\""));
}
