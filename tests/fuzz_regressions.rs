//! Replays every committed fuzzing input (the minimised corpora in `fuzz/corpus/`, the
//! hand-made seeds in `fuzz/seeds/` and the findings kept in `fuzz/regressions/`) through the same harness the fuzzers use: none may panic.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in
        [root.join("corpus").join(target), root.join("seeds").join(target), root.join("regressions").join(target)]
    {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.filter_map(|e| e.ok()) {
            let bytes = std::fs::read(entry.path()).expect("readable input");
            let name = entry.path().display().to_string();
            if std::panic::catch_unwind(|| run(&bytes)).is_err() {
                panic!("{name} panics the {target} harness");
            }
            count += 1;
        }
    }
    assert!(count > 0, "no committed inputs for {target}");
}

#[test]
fn model_inputs() {
    replay("model", optc::fuzz_harness::model);
}

#[test]
fn libsvm_inputs() {
    replay("libsvm", optc::fuzz_harness::libsvm);
}

#[test]
fn weights_inputs() {
    replay("weights", optc::fuzz_harness::weights);
}

#[test]
fn model_file_inputs() {
    replay("model_file", optc::fuzz_harness::model_file);
}

#[test]
fn load_file_inputs() {
    replay("load_files", optc::fuzz_harness::load_files);
}

#[test]
fn stream_log_inputs() {
    replay("stream_log", optc::fuzz_harness::stream_log);
}

#[test]
fn data_cache_inputs() {
    replay("data_cache", optc::fuzz_harness::data_cache);
}

#[test]
fn repl_inputs() {
    replay("repl", optc::fuzz_harness::repl);
}

#[test]
fn model_solve_inputs() {
    replay("model_solve", optc::fuzz_harness::model_solve);
}

/// The seeds of the two cache targets are a real log and a real cache of the harness's data, so
/// the fuzzers start from inputs that are used, not set aside: a layout change that left them
/// behind would make those targets fuzz only the first checks.
#[test]
fn the_cache_seeds_are_used_as_they_were_written() {
    use optc::data::cache::{fuzz_place, load, CacheDir, CacheNote};
    use optc::data::stream::{self, scan, StreamSource};
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let dir = tempfile::tempdir().expect("tmp");
    let source = dir.path().join("tiny.svm");
    std::fs::write(&source, optc::fuzz_harness::TINY).expect("written");
    let log = std::fs::read(corpus.join("stream_log/log-as-written")).expect("the log seed");
    stream::fuzz_place(&source, dir.path(), optc::fuzz_harness::BLOCK_ROWS, &log[1..], false).expect("placed");
    let mut s = StreamSource::new(&source, optc::fuzz_harness::BLOCK_ROWS, 1)
        .expect("a source")
        .with_cache(Some(CacheDir::In(dir.path().to_path_buf())));
    let scanned = scan(&mut s, 1).expect("scanned");
    assert!(matches!(scanned.cache, Some(CacheNote::Hit(_))), "{:?}", scanned.cache);
    let cache = std::fs::read(corpus.join("data_cache/cache-resealed")).expect("the cache seed");
    fuzz_place(&source, dir.path(), &cache[1..], true).expect("placed");
    let (_, note) = load(&source, &CacheDir::In(dir.path().to_path_buf()), || unreachable!("a hit")).expect("loaded");
    assert!(matches!(note, CacheNote::Hit(_)), "{note:?}");
}
