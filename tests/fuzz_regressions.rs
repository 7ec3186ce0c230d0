//! Replays every committed fuzzing input (the minimised corpora in `fuzz/corpus/` and the
//! findings kept in `fuzz/regressions/`) through the same harness the fuzzers use: none may panic.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in [root.join("corpus").join(target), root.join("regressions").join(target)] {
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
fn model_file_inputs() {
    replay("model_file", optc::fuzz_harness::model_file);
}

#[test]
fn load_file_inputs() {
    replay("load_files", optc::fuzz_harness::load_files);
}
