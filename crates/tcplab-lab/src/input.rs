//! Reading the files a user names (scenario files, sweep shards, resumed
//! results): regular files only, up to a size limit, so that `tcplab run
//! /dev/zero` or a FIFO is refused at once with a message naming the file
//! instead of reading forever into gigabytes of memory.

use crate::error::{Error, Result};
use std::io::Read;
use std::path::Path;

/// Largest scenario file read (bytes). Shipped scenarios are a few KB.
pub const SCENARIO_LIMIT: u64 = 16 << 20;

/// Largest results file read (bytes): a sweep shard or a `--resume` file
/// holds about 200 bytes per run, so this is millions of runs.
pub const RESULTS_LIMIT: u64 = 1 << 30;

/// Reads `path` as UTF-8 text. `what` names the file's role in messages
/// ("scenario file"); errors are located at the path (and the line of
/// the first byte that is not UTF-8).
pub fn read_text(path: &Path, what: &str, limit: u64) -> Result<String> {
    let loc = path.display().to_string();
    let not_regular = |meta: &std::fs::Metadata| {
        let kind = if meta.is_dir() { "a directory" } else { "not a regular file (a device, FIFO or socket)" };
        Error::at(&loc, format!("cannot read {what}: {kind}; give the path of a regular file"))
    };
    // Look before opening: opening a FIFO waits for a writer, forever if
    // none comes. The open file is checked again (it may have changed).
    let meta = std::fs::metadata(path).map_err(|e| Error::at(&loc, format!("cannot read {what}: {e}")))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let file = std::fs::File::open(path).map_err(|e| Error::at(&loc, format!("cannot read {what}: {e}")))?;
    let meta = file.metadata().map_err(|e| Error::at(&loc, format!("cannot read {what}: {e}")))?;
    if !meta.is_file() {
        return Err(not_regular(&meta));
    }
    let too_big = || Error::at(&loc, format!("{what} is larger than {}; is this the right file?", size(limit)));
    if meta.len() > limit {
        return Err(too_big());
    }
    let mut bytes = Vec::new();
    // The file may grow while being read: never read past the limit.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(|e| Error::at(&loc, format!("cannot read {what}: {e}")))?;
    if bytes.len() as u64 > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|b| **b == b'\n').count() + 1;
        Error::at(format!("{loc}:{line}"), format!("{what} is not UTF-8 text"))
    })
}

/// `16 MiB`, or bytes below 1 MiB.
fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_devices_and_directories_are_refused_at_once() {
        let e = read_text(Path::new("/dev/zero"), "scenario file", SCENARIO_LIMIT).unwrap_err().to_string();
        assert!(e.starts_with("/dev/zero: cannot read scenario file: not a regular file"), "{e}");
        let e = read_text(Path::new("/"), "scenario file", SCENARIO_LIMIT).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
    }

    #[test]
    fn test_size_limit_and_utf8() {
        let dir = std::env::temp_dir().join(format!("tcplab-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; 2048]).unwrap();
        let e = read_text(&big, "scenario file", 1024).unwrap_err().to_string();
        assert!(e.contains("scenario file is larger than 1024 bytes"), "{e}");
        assert_eq!(read_text(&big, "scenario file", 2048).unwrap().len(), 2048);
        let bad = dir.join("bad.toml");
        std::fs::write(&bad, b"a = 1\nb = \"\xff\"\n").unwrap();
        let e = read_text(&bad, "scenario file", 1024).unwrap_err().to_string();
        assert_eq!(e, format!("{}:2: scenario file is not UTF-8 text", bad.display()));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
