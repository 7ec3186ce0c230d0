//! `--stream` against the in-memory epoch it replaces, in non-zeros per second of the epochs:
//!   in memory     the epoch over the loaded rows in file order (JIT);
//!   streamed      the same epochs over the file read a block at a time, parsing the text;
//!   cached        the same, with `--cache`: the first pass writes the parsed blocks to a binary
//!                 log and the epochs read that.
//! All three run the same arithmetic in the same order, so their weights must agree bit for bit
//! (the table says so, or prints the largest difference; SMM's per-epoch history restarts at
//! each block, so its weights agree to rounding). The target is streamed ≥ 0.8× in
//! memory; the text column shows what parsing costs each pass.
//!
//!     cargo bench --bench stream [-- --data FILE] [-- --epochs N] [-- --threads N] [-- --solver smm]
//!
//! Data: debian-files.binary.train (--data, default /tmp/files.svm if present, else
//! ../shared/data/debian-files.binary.train.xz, whose text passes are then bound by the xz
//! decoder).

use optc::data::stream::{scan, StreamSource, Streamed, DEFAULT_BLOCK_ROWS};
use optc::data::{cache::CacheDir, read_libsvm, LabelMap};
use optc::exec::driver::RunSettings;
use optc::exec::{select_backend, Orders, State};
use optc::pipeline::{self, CompileOptions};
use optc::plan::Plan;
use optc::source::SourceFile;
use optc::stdlib::{LabelKind, Library};
use std::path::Path;
use std::time::Instant;

/// The l1-logistic model of the README's streaming example, solved by `solve` (FOBOS with the
/// η₀ its calibration picks there, or SMM, the streamed default for a smooth loss).
fn model(solve: &str) -> String {
    format!(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1.28e-4\n\
         minimize E[logistic(y, <x, w>)] + λ·l1(w)\nsolve with {solve}\n"
    )
}

fn plan(solve: &str) -> Plan {
    let text = model(solve);
    let file = SourceFile::new("bench.opt", text.as_str());
    let opts = CompileOptions::default();
    let c = pipeline::front_end(&file, &Library::standard(), &opts).expect("model checks");
    pipeline::plan(&c, &opts).expect("model plans")
}

/// Seconds of each in-memory epoch (file order) and the final weights.
fn in_memory(plan: &Plan, path: &Path, epochs: usize) -> (Vec<f64>, Vec<f64>, usize) {
    let d = read_libsvm(path).expect("reads");
    let map = LabelMap::fit(LabelKind::Labels, &d).expect("labels");
    let y = map.apply(&d).expect("labels map");
    let view = d.view(&y, d.features());
    let facts = d.facts();
    let mut selected = select_backend(plan, &facts, true);
    let backend = selected.backend.as_mut();
    let mut state = State::new(plan, &facts, &y);
    let order: Vec<u32> = (0..d.rows() as u32).collect();
    backend.init(&mut state, &view).expect("init");
    let mut seconds = vec![];
    for _ in 0..epochs {
        let t = Instant::now();
        backend.epoch(&mut state, &view, &Orders::rows(&order)).expect("epoch");
        seconds.push(t.elapsed().as_secs_f64());
    }
    backend.finish(&mut state, &view).expect("finish");
    (seconds, state.weights(plan).to_vec(), d.nnz())
}

/// Seconds of the first pass, seconds of all the epochs' passes, and the final weights.
fn streamed(plan: &Plan, path: &Path, epochs: usize, threads: usize, cache: Option<&Path>) -> (f64, f64, Vec<f64>) {
    let mut source = StreamSource::new(path, DEFAULT_BLOCK_ROWS, threads)
        .expect("source")
        .with_cache(cache.map(|d| CacheDir::In(d.to_path_buf())));
    let t = Instant::now();
    let scanned = scan(&mut source, 1).expect("scan");
    let first = t.elapsed().as_secs_f64();
    if cache.is_some() {
        assert!(source.cached().is_some(), "no cache: {:?}", scanned.cache);
    }
    let label_map = scanned.label_map(LabelKind::Labels).expect("labels");
    let facts = scanned.facts(scanned.features, 0);
    let data = Streamed { source, label_map, features: scanned.features, classes: 0, weights: None };
    let mut selected = select_backend(plan, &facts, true);
    let settings = RunSettings { check_every: usize::MAX, ..RunSettings::fixed(epochs, 1) };
    let done = optc::exec::stream::run(
        plan,
        selected.backend.as_mut(),
        optc::exec::stream::Rows::Streamed(&data),
        &facts,
        &settings,
        &optc::exec::collective::Alone,
    )
    .expect("runs");
    (first, done.epoch_seconds, done.outcome.state.weights(plan).to_vec())
}

fn largest_difference(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs() / x.abs().max(y.abs()).max(1.0)).fold(0.0, f64::max)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |k: &str| args.iter().position(|a| a == k).and_then(|p| args.get(p + 1)).cloned();
    let epochs: usize = arg("--epochs").and_then(|e| e.parse().ok()).unwrap_or(5).max(1);
    let threads: usize = arg("--threads").and_then(|e| e.parse().ok()).unwrap_or(2).max(1);
    let solver = arg("--solver").unwrap_or_else(|| "fobos".into());
    let solve = if solver == "fobos" { "fobos(eta0 = 16)".to_string() } else { solver.clone() };
    let file = arg("--data").unwrap_or_else(|| {
        if Path::new("/tmp/files.svm").exists() {
            "/tmp/files.svm".into()
        } else {
            "../shared/data/debian-files.binary.train.xz".into()
        }
    });
    let path = Path::new(&file);
    if !path.exists() {
        eprintln!("skipping: no {file}");
        return;
    }
    let plan = plan(&solve);
    let dir = tempfile::tempdir().expect("temp dir");
    let (memory, w_memory, nnz) = in_memory(&plan, path, epochs);
    let (text_first, text_epochs, w_text) = streamed(&plan, path, epochs, threads, None);
    let (cache_first, cache_epochs, w_cache) = streamed(&plan, path, epochs, threads, Some(dir.path()));
    let (warm_first, warm_epochs, w_warm) = streamed(&plan, path, epochs, threads, Some(dir.path()));
    let rate = |s: f64| nnz as f64 / s;
    let best_memory = memory.iter().cloned().fold(f64::INFINITY, f64::min);
    let mean_memory = memory.iter().sum::<f64>() / epochs as f64;
    println!("{file}: {nnz} non-zeros, {epochs} epochs of `{solve}` in file order, {threads} parse threads\n");
    println!("| run | first pass (s) | epoch (s) | nnz/s | / in memory (mean) | weights vs in memory |");
    println!("|---|---:|---:|---:|---:|---|");
    println!(
        "| in memory | (load) | {mean_memory:.3} (best {best_memory:.3}) | {:.3e} | 1.00 | — |",
        rate(mean_memory)
    );
    for (name, first, total, w) in [
        ("streamed, text", text_first, text_epochs, &w_text),
        ("streamed, --cache (cold: writes it)", cache_first, cache_epochs, &w_cache),
        ("streamed, --cache (warm)", warm_first, warm_epochs, &w_warm),
    ] {
        let epoch = total / epochs as f64;
        let diff = largest_difference(w, &w_memory);
        println!(
            "| {name} | {first:.3} | {epoch:.3} | {:.3e} | {:.2} | {} |",
            rate(epoch),
            mean_memory / epoch,
            if diff == 0.0 { "identical".to_string() } else { format!("differ by {diff:.1e}") }
        );
    }
}
