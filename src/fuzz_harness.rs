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
        let dec = m.decision([0, 1, 7][..].into(), &[1.0, -2.0, 0.5]);
        let _ = m.predict(&dec);
        let back = SavedModel::parse(&m.to_text(), "again").expect("a parsed model writes back parseable");
        assert_eq!(back.w.len(), m.w.len());
    }
}

/// A weight file (`--weights`), for a data set of as many rows as its first byte says: every
/// weight read is finite and ≥ 0, exactly that many of them, and a refusal names a line of
/// the file; class weights are parsed whatever they say.
pub fn weights(data: &[u8]) {
    let Some((&rows, text)) = data.split_first() else { return };
    let rows = usize::from(rows);
    match crate::data::read_weights(text, "fuzz.txt", rows) {
        Ok(w) => assert!(w.len() == rows && w.iter().all(|v| v.is_finite() && *v >= 0.0)),
        Err(crate::data::DataError::Bad { line, .. }) => assert!(line >= 1),
        Err(e) => panic!("no IO error reading bytes: {e}"),
    }
    if let Ok(s) = std::str::from_utf8(text) {
        if let Ok((label, weight)) = crate::data::parse_class_weight(s) {
            assert!(label.is_finite() && weight.is_finite() && weight >= 0.0);
        }
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

/// Seven rows of LIBSVM text, the data the stateful targets below run on: labels ±1 and ℝ
/// alike (binary, one-vs-rest and regression models bind to it), seven features.
pub const TINY: &str = "+1 1:0.5 3:-1 7:2\n-1 2:1 3:0.25\n+1 1:-0.5 4:1.5\n-1 5:1 7:-1\n+1 2:0.75 6:0.5\n-1 1:1 6:-2 7:0.5\n+1 3:0.5 4:-0.25\n";
/// Rows per block of the stream log target (so the text makes three blocks).
pub const BLOCK_ROWS: usize = 3;

/// A directory for one fuzzing process, holding the text file `tiny.svm` (kept until exit).
struct Scratch {
    dir: tempfile::TempDir,
    source: std::path::PathBuf,
}

fn scratch() -> &'static Scratch {
    static S: OnceLock<Scratch> = OnceLock::new();
    S.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a scratch directory");
        let source = dir.path().join("tiny.svm");
        std::fs::write(&source, TINY).expect("the scratch data");
        Scratch { dir, source }
    })
}

fn tiny() -> crate::data::Dataset {
    read_libsvm_from(std::io::Cursor::new(TINY.as_bytes()), "tiny.svm").expect("the tiny data parses")
}

/// What a scan or a load must agree on with the text, bit for bit.
fn digest(rows: usize, features: usize, nnz: usize, norm: f64) -> (usize, usize, usize, u64) {
    (rows, features, nnz, norm.to_bits())
}

/// The bytes of a `--stream --cache` log after its header (first byte: bit 0 set reseals the
/// checksums, see `data::stream::fuzz_place`) → a streamed scan and a pass with that cache. The
/// text is always there to fall back on, so the scan must succeed; a log used without resealing
/// must give what the text gives.
pub fn stream_log(data: &[u8]) {
    use crate::data::cache::{CacheDir, CacheNote};
    use crate::data::stream::{fuzz_place, scan, StreamSource};
    let Some((&flag, body)) = data.split_first() else { return };
    let s = scratch();
    let reseal = flag & 1 == 1;
    fuzz_place(&s.source, s.dir.path(), BLOCK_ROWS, body, reseal).expect("the log is written");
    let mut source = StreamSource::new(&s.source, BLOCK_ROWS, 1)
        .expect("a file source")
        .with_cache(Some(CacheDir::In(s.dir.path().to_path_buf())));
    let scanned = scan(&mut source, 1).expect("a damaged log falls back on the text");
    let (mut rows, mut nnz) = (0, 0);
    for block in source.blocks().expect("a pass starts") {
        let Ok(b) = block else { break };
        let _ = (b.max_row_norm_sq(), b.facts());
        rows += b.rows();
        nnz += b.nnz();
    }
    if !reseal && matches!(scanned.cache, Some(CacheNote::Hit(_))) {
        let text = tiny();
        let want = digest(text.rows(), text.features(), text.nnz(), text.max_row_norm_sq());
        let got = digest(scanned.rows, scanned.features, scanned.nnz, scanned.max_row_norm_sq);
        assert_eq!(got, want, "a log used as it was written reads as the text");
        assert_eq!((rows, nnz), (text.rows(), text.nnz()));
    }
}

/// The counts and arrays of an in-memory `--cache` file (first byte: bit 0 set reseals its
/// checksum, see `data::cache::fuzz_place`) → a load with that cache, which must succeed (the
/// text is there); a cache used without resealing must give what the text gives.
pub fn data_cache(data: &[u8]) {
    use crate::data::cache::{fuzz_place, load, CacheDir, CacheNote};
    let Some((&flag, body)) = data.split_first() else { return };
    let s = scratch();
    let reseal = flag & 1 == 1;
    fuzz_place(&s.source, s.dir.path(), body, reseal).expect("the cache is written");
    let dir = CacheDir::In(s.dir.path().to_path_buf());
    let (d, note) = load(&s.source, &dir, || crate::data::read_libsvm(&s.source)).expect("the text is there");
    let _ = (d.facts(), d.max_row_norm_sq());
    if !reseal && matches!(note, CacheNote::Hit(_)) {
        let text = tiny();
        let want = digest(text.rows(), text.features(), text.nnz(), text.max_row_norm_sq());
        assert_eq!(digest(d.rows(), d.features(), d.nnz(), d.max_row_norm_sq()), want);
    }
}

/// Text → the lines of one scripted REPL session on the tiny data (train and test), as
/// `cli::repl::fuzz_session` tames them: commands and statements, any order.
pub fn repl(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    crate::cli::repl::fuzz_session(text, tiny(), tiny());
}

/// Model text → a library session on the tiny data: compiled, bound, and solved for a few
/// epochs under the interpreter and the JIT, which must agree on the epochs run. Reaches what
/// only binding and running see (the newer forms' shapes, per-class b, `columns(D)`).
pub fn model_solve(data: &[u8]) {
    use crate::session::{Data, Options, Problem, Session};
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(problem) = Problem::from_text(text) else { return };
    let d = tiny();
    let (indptr, indices, values) = d.csr();
    let mut reports = vec![];
    for no_jit in [true, false] {
        let Ok(data) = Data::from_csr(indptr, &indices.to_vec(), values, &d.labels, None) else { return };
        let mut session = Session::new(problem.clone(), data);
        let opts = Options { epochs: Some(3), threads: Some(1), no_jit, time_limit: Some(2.0), ..Options::default() };
        reports.push(session.solve(&opts).map(|r| (r.epochs, r.status.clone())).map_err(|e| e.to_string()));
    }
    if let [Ok((ei, _)), Ok((ej, _))] = &reports[..] {
        assert_eq!(ei, ej, "the interpreter and the JIT ran different epochs");
    }
}
