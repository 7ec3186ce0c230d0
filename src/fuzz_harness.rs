//! What the fuzzers in `fuzz/` feed each input to, kept in the library so that
//! `tests/fuzz_regressions.rs` replays the committed corpora through exactly the same code
//! without libFuzzer. Each function may only return: any panic is a finding.

use crate::data::structure_files::{parse_edges, parse_groups};
use crate::data::{read_libsvm_from, sniff, LabelMap};
use crate::model_file::SavedModel;
use crate::pipeline::{self, CompileError, CompileOptions};
use crate::source::SourceFile;
use crate::stdlib::{LabelKind, Library};
use std::sync::OnceLock;

/// Model text → parse, check, analyse, lower (lazy and eager), dump; or rendered diagnostics.
pub fn model(data: &[u8]) {
    static LIB: OnceLock<Library> = OnceLock::new();
    let Ok(text) = std::str::from_utf8(data) else { return };
    let file = SourceFile::new("fuzz.opt", text);
    let lib = LIB.get_or_init(Library::standard);
    for eager in [false, true] {
        let opts = CompileOptions { eager, ..CompileOptions::default() };
        match pipeline::front_end(&file, lib, &opts) {
            Ok(compiled) => {
                let _ = crate::analysis::report(&compiled.model, &compiled.structure, &file.name);
                if let Ok(plan) = pipeline::plan(&compiled, &opts) {
                    let _ = crate::plan::dump::dump(&plan, None);
                    crate::plan::verify::verify(&plan).expect("a lowered plan verifies");
                }
            }
            Err(CompileError::Model(problems)) => {
                let _ = crate::diagnostics::render_terminal(&problems, &file);
            }
            Err(CompileError::Usage(_)) => {}
        }
    }
}

/// Data bytes, sniffed for gzip/bzip2/xz/zstd as `optc run` does → a matrix and label maps,
/// or a located error.
pub fn libsvm(data: &[u8]) {
    let Ok(reader) = sniff(std::io::Cursor::new(data.to_vec())) else { return };
    let read = read_libsvm_from(reader, "fuzz.svm");
    // The parallel reader, in blocks of a few bytes, reads the same rows or the same error.
    if let Ok(reader) = sniff(std::io::Cursor::new(data.to_vec())) {
        let blocks = crate::data::read_in_blocks(reader, "fuzz.svm", 2, 7);
        match (&read, &blocks) {
            (Ok(a), Ok(b)) => {
                assert!(a.x == b.x && a.lines == b.lines && a.bytes == b.bytes, "the readers differ");
                let bits = |d: &crate::data::Dataset| d.labels.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(a), bits(b));
                assert_eq!(a.max_index_line, b.max_index_line);
            }
            (Err(a), Err(b)) => assert_eq!((a.to_string(), a.context()), (b.to_string(), b.context())),
            _ => panic!("one reader failed, the other did not"),
        }
    }
    match read {
        Ok(d) => {
            let _ = d.facts();
            for kind in [LabelKind::Labels, LabelKind::Classes, LabelKind::Real] {
                if let Ok(map) = LabelMap::fit(kind, &d) {
                    map.apply(&d).expect("training labels map under their own map");
                    let _ = map.describe();
                }
            }
        }
        Err(e) => {
            let _ = (e.to_string(), e.context());
        }
    }
}

/// A LIBLINEAR model file → predictions → written back → read again, the same.
pub fn model_file(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(m) = SavedModel::parse(text, "fuzz.model") {
        let dec = m.decision(&[0, 1, 7], &[1.0, -2.0, 0.5]);
        let _ = m.predict(&dec);
        let back = SavedModel::parse(&m.to_text(), "again").expect("a parsed model writes back parseable");
        assert_eq!(back.w.len(), m.w.len());
    }
}

/// The edge and group files of `load("...")`.
pub fn load_files(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(e) = parse_edges(text, "edges.txt") {
        assert!(e.edges.iter().all(|&(i, j)| i != j && i < e.max_index && j < e.max_index));
    }
    if let Ok(g) = parse_groups(text, "groups.txt") {
        assert!(g.groups.iter().flatten().all(|&j| j < g.max_index));
        // The overlap witness is a feature both named groups list, and the groups are
        // disjoint exactly when there is none.
        match g.first_shared() {
            Some(s) => {
                let has = |k: usize| g.groups[k - 1].contains(&(s.feature - 1));
                assert!(s.first < s.second && has(s.first) && has(s.second));
            }
            None => {
                let mut all: Vec<u32> = g.groups.iter().flatten().copied().collect();
                let n = all.len();
                all.sort_unstable();
                all.dedup();
                assert_eq!(all.len(), n, "first_shared missed a shared feature");
            }
        }
    }
}
