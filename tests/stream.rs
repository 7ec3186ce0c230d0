//! `optc run --stream`: epochs over a file read a block of rows at a time are the in-memory
//! epochs over the same rows in file order; the streamed F is the in-memory F and the streamed
//! gap is a true bound; blocks never exceed their size; bad data deep in the file is named by
//! its line; solvers that cannot stream are refused or replaced, and the run says which.

mod common;

use common::{compile, fixture, optc, text, write};
use optc::data::stream::{scan, StreamSource, Streamed};
use optc::data::{read_libsvm, LabelMap};
use optc::exec::driver::RunSettings;
use optc::exec::evaluate::evaluate;
use optc::exec::{select_backend, Orders, State};
use optc::pipeline::CompileOptions;
use optc::stdlib::LabelKind;
use rand::{Rng, SeedableRng};
use std::path::Path;

/// Seeded sparse classification data with uneven row lengths, blank and comment lines, and
/// labels 1/2 (mapped to ±1), as LIBSVM text.
fn generated(rows: usize, features: usize, seed: u64) -> String {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut s = String::from("# generated\n");
    for i in 0..rows {
        let mut line = String::new();
        let mut score = 0.0;
        for j in 1..=features {
            if rng.gen_bool(0.15) {
                let v: f64 = rng.gen_range(-2.0..2.0);
                score += v * if j % 3 == 0 { 1.0 } else { -0.5 };
                line += &format!(" {j}:{v:.4}");
            }
        }
        let label = if score + rng.gen_range(-0.5..0.5) > 0.0 { 2 } else { 1 };
        s += &format!("{label}{line}\n");
        if i % 17 == 5 {
            s += "\n# a comment between rows\n";
        }
    }
    s
}

/// The in-memory reference: `epochs` epochs over the rows in file order, then the flush.
fn in_memory(plan: &optc::plan::Plan, data: &Path, kind: LabelKind, epochs: usize) -> (Vec<f64>, f64) {
    let d = read_libsvm(data).expect("reads");
    let map = LabelMap::fit(kind, &d).expect("labels");
    let y = map.apply(&d).expect("labels map");
    let classes = if kind == LabelKind::Classes { map.originals.len() } else { 0 };
    let view = d.view(&y, d.features()).with_classes(classes);
    let facts = optc::data::DataFacts { classes, ..d.facts() };
    let mut selected = select_backend(plan, &facts, true);
    let backend = selected.backend.as_mut();
    let mut state = State::new(plan, &facts, &y);
    let order: Vec<u32> = (0..d.rows() as u32).collect();
    backend.init(&mut state, &view).expect("init");
    for _ in 0..epochs {
        backend.epoch(&mut state, &view, &Orders::rows(&order)).expect("epoch");
    }
    backend.finish(&mut state, &view).expect("finish");
    let f = evaluate(plan, &state, &view).objective;
    (state.weights(plan).to_vec(), f)
}

struct StreamedRun {
    w: Vec<f64>,
    f: f64,
    gap: Option<f64>,
}

fn streamed(plan: &optc::plan::Plan, data: &Path, kind: LabelKind, epochs: usize, block: usize) -> StreamedRun {
    let mut source = StreamSource::new(data, block, 2).expect("source");
    let scanned = scan(&mut source, 1).expect("scan");
    let d = read_libsvm(data).expect("reads");
    // The first pass learns what reading the whole file does.
    assert_eq!((scanned.rows, scanned.features, scanned.nnz), (d.rows(), d.features(), d.nnz()));
    assert_eq!(scanned.max_row_norm_sq, d.max_row_norm_sq());
    assert!(scanned.largest_block <= block);
    let label_map = scanned.label_map(kind).expect("labels");
    let classes = if kind == LabelKind::Classes { label_map.originals.len() } else { 0 };
    let facts = scanned.facts(scanned.features, classes);
    let data = Streamed { source, label_map, features: scanned.features, classes, weights: None };
    // Memory is the state plus blocks: no view a pass hands out is larger than a block.
    data.pass(|view, lines| {
        assert!(view.rows() <= block && lines.len() == view.rows());
        Ok::<(), ()>(())
    })
    .expect("a pass");
    let mut selected = select_backend(plan, &facts, true);
    let done = optc::exec::stream::run(
        plan,
        selected.backend.as_mut(),
        optc::exec::stream::Rows::Streamed(&data),
        &facts,
        &RunSettings::fixed(epochs, 1),
        &optc::exec::collective::Alone,
    )
    .expect("no divergence");
    assert_eq!(done.outcome.epochs, epochs);
    StreamedRun { w: done.outcome.state.weights(plan).to_vec(), f: done.outcome.eval.objective, gap: done.outcome.gap }
}

fn model(kind: &str, lambda: f64, objective: &str, solve: &str) -> String {
    format!("{}{solve}\n", common::model_text(kind, lambda, objective))
}

/// Streamed and in-memory runs end with the same weights: bit for bit where the epoch body is
/// one loop over the rows, to 1e-12 where SMM restarts its per-epoch history at each block.
fn assert_same(model: &str, data: &Path, kind: LabelKind, epochs: usize, exact: bool) -> StreamedRun {
    let plan = compile(model, &CompileOptions::default());
    optc::exec::stream::streamable(&plan).expect("streamable");
    let (want, f) = in_memory(&plan, data, kind, epochs);
    let got = streamed(&plan, data, kind, epochs, 7);
    assert!(want.iter().any(|v| *v != 0.0), "the run must move some weights for the comparison to mean anything");
    for (j, (a, b)) in got.w.iter().zip(&want).enumerate() {
        let tol = if exact { 0.0 } else { 1e-12 * a.abs().max(b.abs()).max(1.0) };
        assert!((a - b).abs() <= tol, "{model}: w[{j}] streamed {a} vs in memory {b}");
    }
    assert!((got.f - f).abs() <= 1e-12 * f.abs(), "{model}: F streamed {} vs in memory {f}", got.f);
    got
}

#[test]
fn streamed_epochs_are_the_in_memory_epochs_in_file_order() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = write(dir.path(), "d.svm", &generated(120, 40, 3));
    let l1 = "minimize E[logistic(y, <x, w>)] + λ·l1(w)";
    for solve in ["solve with fobos", "solve with truncated", "solve with adagrad", "solve with fobos(eta0 = 0.3)"] {
        assert_same(&model("labels", 0.01, l1, solve), &data, LabelKind::Labels, 3, true);
    }
    let elastic = "minimize E[hinge(y, <x, w>)] + λ·elastic(w, 1) st w ∈ Box(-0.5, 0.5)";
    assert_same(&model("labels", 0.02, elastic, "solve with fobos"), &data, LabelKind::Labels, 2, true);
    assert_same(&model("labels", 0.01, l1, "solve with smm"), &data, LabelKind::Labels, 3, false);
}

#[test]
fn intercepts_regression_and_classes_stream_too() {
    let intercept = "data x: sparse, y: real\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[squared(y, <x, w> + b)] + λ·l1(w)\nsolve with fobos\n";
    let run = assert_same(intercept, &fixture("offset_regression.svm"), LabelKind::Real, 2, true);
    // The gap of a free intercept and of softmax, from sums over the blocks, bounds F − F*
    // against CVXPY's optimum of the same problems.
    let gap = run.gap.expect("a certificate with a free intercept");
    let best = common::fixture_named("lasso_intercept").best;
    assert!(run.f - gap <= best * (1.0 + 1e-12), "F {} − gap {gap} above F* {best}", run.f);
    let softmax = "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W>)] + λ·l1(W)\nsolve with fobos\n";
    let run = assert_same(softmax, &fixture("multiclass.svm"), LabelKind::Classes, 2, true);
    let gap = run.gap.expect("a certificate for softmax");
    let best = common::fixture_named("softmax_l1").best;
    assert!(run.f - gap <= best * (1.0 + 1e-12), "F {} − gap {gap} above F* {best}", run.f);
}

#[test]
fn the_streamed_gap_bounds_the_distance_to_the_optimum() {
    let dir = tempfile::tempdir().expect("tmp");
    let data = write(dir.path(), "d.svm", &generated(150, 30, 9));
    let l1 = "minimize E[logistic(y, <x, w>)] + λ·l1(w)";
    let optimum = common::run_plan(
        compile(&model("labels", 0.02, l1, "solve with scd"), &CompileOptions::default()),
        &read_libsvm(&data).expect("reads"),
        &RunSettings::to_tolerance(1e-10, 10_000, 1),
        None,
    );
    let f_star = optimum.eval.objective;
    for epochs in [1, 5, 30] {
        let plan = compile(&model("labels", 0.02, l1, "solve with fobos"), &CompileOptions::default());
        let run = streamed(&plan, &data, LabelKind::Labels, epochs, 11);
        let gap = run.gap.expect("a certificate");
        assert!(run.f - gap <= f_star + 1e-10, "{epochs} epochs: F {} − gap {gap} above F* {f_star}", run.f);
        assert!(gap >= run.f - f_star - 1e-12 && gap.is_finite());
    }
}

#[test]
fn streaming_refuses_what_needs_the_whole_matrix() {
    let smidas = compile(
        &model("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w)", "solve with smidas"),
        &CompileOptions::default(),
    );
    let why = optc::exec::stream::streamable(&smidas).expect_err("smidas counts epochs");
    assert!(why.contains("η₀/√e"), "{why}");
    let scd = compile(
        &model("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w)", "solve with scd"),
        &CompileOptions::default(),
    );
    assert!(optc::exec::stream::streamable(&scd).expect_err("columns").contains("columns"));
}

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = optc(args);
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("json")
}

/// A temporary directory with seeded data (`generated(rows, features, seed)`) and the
/// l1-logistic model at λ = 0.01 in it, and their paths.
fn l1_logistic_in_tmp(rows: usize, features: usize, seed: u64) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("tmp");
    let data = write(dir.path(), "d.svm", &generated(rows, features, seed));
    let m = write(dir.path(), "m.opt", &model("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w)", ""));
    let path = |p: std::path::PathBuf| p.to_str().expect("utf-8").to_string();
    (dir, path(m), path(data))
}

#[test]
fn the_cli_says_which_solver_it_streamed_and_why() {
    let (dir, m, data) = l1_logistic_in_tmp(90, 25, 5);
    let (m, data) = (m.as_str(), data.as_str());
    let saved = dir.path().join("w.model");
    let r = run_json(&[
        "run",
        m,
        data,
        "--stream",
        "--block-rows",
        "8",
        "--epochs",
        "3",
        "--json",
        "--save",
        saved.to_str().expect("utf-8"),
    ]);
    // docs/algorithms.md §9: streamed data with a per-coordinate regularizer runs AdaGrad's
    // dual averaging.
    assert_eq!(r["solver"], "adagrad");
    assert!(r["solver_note"].as_str().is_some_and(|n| n.contains("adagrad(rda = 1)") && n.contains("scd")), "{r}");
    assert_eq!(r["epochs"], 3);
    assert_eq!(r["rows"], 90);
    assert!(r["stream"]["largest_block"].as_u64().is_some_and(|b| b <= 8));
    assert!(r["gap"].as_f64().is_some_and(|g| g >= 0.0));
    // The saved weights are the reported ones: predict reproduces the train error.
    let out = optc(&["predict", saved.to_str().expect("utf-8"), data]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let wrong = (r["train_error"].as_f64().expect("error") * 90.0).round() as usize;
    let said = text(&out.stdout) + &text(&out.stderr);
    assert!(said.contains(&format!("({}/90)", 90 - wrong)), "{said}");

    // So does the linear SVM (½‖w‖² is per coordinate; dual averaging needs only subgradients).
    let svm = write(dir.path(), "svm.opt", &model("labels", 0.01, "minimize E[hinge(y, <x, w>)] + λ·l2sq(w)", ""));
    let r = run_json(&["run", svm.to_str().expect("utf-8"), data, "--stream", "--epochs", "2", "--json"]);
    assert_eq!(r["solver"], "adagrad");
    assert!(r["solver_note"].as_str().is_some_and(|n| n.contains("dcd")), "{r}");
    // Forced, SMM runs as asked, with no note.
    let r = run_json(&["run", m, data, "--stream", "--epochs", "2", "--solver", "smm", "--json"]);
    assert_eq!((&r["solver"], &r["solver_note"]), (&serde_json::json!("smm"), &serde_json::Value::Null), "{r}");
    // Where dual averaging does not apply (a non-convex penalty), the model's own streaming
    // default runs: online DC, SMM's surrogates.
    let dc =
        write(dir.path(), "dc.opt", &model("labels", 0.001, "minimize E[logistic(y, <x, w>)] + λ·logeps(w, 0.1)", ""));
    let r = run_json(&["run", dc.to_str().expect("utf-8"), data, "--stream", "--epochs", "2", "--json"]);
    assert_eq!((&r["solver"], &r["solver_note"]), (&serde_json::json!("dc"), &serde_json::Value::Null), "{r}");

    // A model no streaming solver takes (ω∘B's Picard prox runs only in proxgrad): each
    // fallback's reason is said, exit 2.
    let fused = write(
        dir.path(),
        "fused.opt",
        &model("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(diff(dim(x)) w)", ""),
    );
    let out = optc(&["run", fused.to_str().expect("utf-8"), data, "--stream"]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("--stream has no solver")
            && err.contains("nor can adagrad(rda = 1): ")
            && err.contains("; smm: ")
            && err.contains("; fobos: "),
        "{err}"
    );

    let forced = optc(&["run", m, data, "--stream", "--solver", "scd"]);
    assert_eq!(forced.status.code(), Some(2));
    assert!(text(&forced.stderr).contains("--stream cannot run `scd`"), "{}", text(&forced.stderr));
    let stdin = optc(&["run", m, "-", "--stream"]);
    assert_eq!(stdin.status.code(), Some(2));
    // An option a streamed run cannot honour is a diagnostic, not ignored.
    let out = optc(&["run", m, data, "--stream", "--holdout=0.1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--holdout with --stream"), "{}", text(&out.stderr));
}

#[test]
fn a_streamed_cache_gives_the_same_run_and_is_read_by_the_next() {
    let (dir, m, data) = l1_logistic_in_tmp(90, 25, 8);
    let (m, data) = (m.as_str(), data.as_str());
    let caches = dir.path().join("caches");
    let cache_flag = format!("--cache={}", caches.display());
    let run = |extra: &[&str], saved: &str| {
        let saved = dir.path().join(saved);
        let mut args = vec!["run", m, data, "--stream", "--block-rows", "16", "--epochs", "3", "--json"];
        args.extend_from_slice(&["--save", saved.to_str().expect("utf-8")]);
        args.extend_from_slice(extra);
        let out = optc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        (r, text(&out.stderr), std::fs::read(saved).expect("saved"))
    };
    let (plain, _, w_plain) = run(&[], "plain.model");
    let (cold, notes, w_cold) = run(&[&cache_flag], "cold.model");
    assert!(notes.contains("note: data cache written to"), "{notes}");
    let (warm, notes, w_warm) = run(&[&cache_flag], "warm.model");
    assert!(notes.contains("note: data read from the cache"), "{notes}");
    assert!(warm["stream"]["cache"].as_str().is_some_and(|p| p.starts_with(caches.to_str().expect("utf-8"))));
    assert!(plain["stream"]["cache"].is_null());
    for r in [&cold, &warm] {
        for key in ["objective", "gap", "nnz", "rows", "data_nnz"] {
            assert_eq!(r[key], plain[key], "{key}");
        }
    }
    assert!(w_cold == w_plain && w_warm == w_plain, "the saved weights");
}

/// No byte of a streamed cache is trusted unchecked: with any one byte of the log's header, of
/// its first block's frame or of that block's arrays changed, the run sets the log aside and
/// reads the text, and reports the objective, the dimension and the saved model of a run
/// without a cache. (A changed feature count in a frame once went unnoticed and saved a model
/// of 16,711,802 features.)
#[test]
fn a_damaged_streamed_cache_is_never_used() {
    let (dir, m, data) = l1_logistic_in_tmp(40, 25, 8);
    let (m, data) = (m.as_str(), data.as_str());
    let caches = dir.path().join("caches");
    let cache_flag = format!("--cache={}", caches.display());
    let saved = dir.path().join("w.model");
    let run = |extra: &[&str]| {
        let mut args = vec!["run", m, data, "--stream", "--block-rows", "8", "--epochs", "2", "--json", "--quiet"];
        args.extend_from_slice(&["--save", saved.to_str().expect("utf-8")]);
        args.extend_from_slice(extra);
        let out = optc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
        (r, std::fs::read(&saved).expect("saved"))
    };
    let (plain, w_plain) = run(&[]);
    run(&[&cache_flag]);
    let log: Vec<_> = std::fs::read_dir(&caches).expect("cache dir").map(|e| e.expect("entry").path()).collect();
    let [log] = log.as_slice() else { panic!("one log: {log:?}") };
    let whole = std::fs::read(log).expect("log");
    // The header (64 bytes and the source's path), the first frame (48 bytes), and the first
    // block's arrays: 9 row pointers of 8 bytes, then the entries, labels and lines.
    let path_len = u64::from_ne_bytes(whole[56..64].try_into().expect("8 bytes")) as usize;
    let frame = 64 + path_len;
    let nnz = u64::from_ne_bytes(whole[frame + 8..frame + 16].try_into().expect("8 bytes")) as usize;
    let arrays = frame + 48;
    let end = arrays + 9 * 8 + nnz * 12 + 8 * 12;
    let positions = (0..arrays).chain((arrays..end).step_by(5));
    for at in positions {
        let mut damaged = whole.clone();
        damaged[at] ^= 0x5a;
        std::fs::write(log, &damaged).expect("damaged log");
        let (r, w) = run(&[&cache_flag]);
        for key in ["objective", "features", "rows", "data_nnz", "nnz"] {
            assert_eq!(r[key], plain[key], "{key} with byte {at} of the log changed");
        }
        assert!(w == w_plain, "the saved model with byte {at} of the log changed");
    }
}

/// A cache whose writes start failing partway through the first pass (here a file-size limit:
/// `ulimit -f` with SIGXFSZ ignored, so a write past it returns EFBIG as a full disk's returns
/// ENOSPC) is said, its partial file is removed at once, and the run goes on from the text.
#[test]
fn a_cache_write_that_fails_mid_pass_leaves_nothing_and_the_run_goes_on() {
    let (dir, m, data) = l1_logistic_in_tmp(8000, 100, 5);
    let (m, data) = (m.as_str(), data.as_str());
    let caches = dir.path().join("caches");
    std::fs::create_dir(&caches).expect("cache dir");
    let cache_flag = format!("--cache={}", caches.display());
    let args = ["run", m, data, "--stream", "--block-rows", "500", "--epochs", "2", "--json"];
    // 256 KiB: bash counts `ulimit -f` in KiB.
    const LIMIT: u64 = 256 << 10;
    let limited = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"trap "" XFSZ; ulimit -f 256; exec "$@""#)
        .arg("optc")
        .arg(env!("CARGO_BIN_EXE_optc"))
        .args(args)
        .arg(&cache_flag)
        .output()
        .expect("bash runs");
    assert!(limited.status.success(), "{}", text(&limited.stderr));
    let notes = text(&limited.stderr);
    assert!(notes.contains("note: no data cache written:") && notes.contains("caches"), "{notes}");
    let left: Vec<_> = std::fs::read_dir(&caches).expect("cache dir").collect();
    assert!(left.is_empty(), "a partial cache was left: {left:?}");
    let plain = optc(&args);
    assert!(plain.status.success(), "{}", text(&plain.stderr));
    let (a, b): (serde_json::Value, serde_json::Value) =
        (serde_json::from_slice(&limited.stdout).expect("json"), serde_json::from_slice(&plain.stdout).expect("json"));
    for key in ["objective", "gap", "nnz", "rows", "data_nnz"] {
        assert_eq!(a[key], b[key], "{key}");
    }
    assert!(a["stream"]["cache"].is_null() && a["stream"]["cache_note"].is_string(), "{}", a["stream"]);
    // Mid-pass, not at the end: the whole log is larger than the limit plus the writer's 1 MiB
    // buffer, so a block's write is what failed, not the trailer's.
    let whole = optc(&[&args[..], &[cache_flag.as_str()]].concat());
    assert!(whole.status.success(), "{}", text(&whole.stderr));
    let log: Vec<_> = std::fs::read_dir(&caches).expect("cache dir").map(|e| e.expect("entry").path()).collect();
    assert_eq!(log.len(), 1, "{log:?}");
    let size = std::fs::metadata(&log[0]).expect("log").len();
    assert!(size > LIMIT + (1 << 20), "the log is only {size} bytes");
}

#[test]
fn bad_data_deep_in_the_stream_names_its_line() {
    let dir = tempfile::tempdir().expect("tmp");
    let mut lines: Vec<String> = generated(60, 10, 2).lines().map(str::to_string).collect();
    lines[47] = "1 3:0.5 2:1".into();
    let data = write(dir.path(), "bad.svm", &(lines.join("\n") + "\n"));
    let m = write(dir.path(), "m.opt", &model("labels", 0.01, "minimize E[logistic(y, <x, w>)] + λ·l1(w)", ""));
    let out =
        optc(&["run", m.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--stream", "--block-rows", "5"]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(err.contains("bad.svm:48:9: feature indices must increase"), "{err}");
}

/// Each rank's run over its own rows, `ranks` of them as threads: the outcomes in rank order.
fn on_ranks(
    plan: &optc::plan::Plan,
    shards: &[std::path::PathBuf],
    whole: &optc::data::Dataset,
    settings: &RunSettings,
    timeout: std::time::Duration,
    skip: Option<usize>,
) -> Vec<Option<Result<optc::exec::stream::StreamOutcome, optc::exec::stream::StreamStop>>> {
    use optc::exec::collective::Threads;
    let label_map = LabelMap::fit(LabelKind::Labels, whole).expect("labels");
    // What the ranks agree on before any work: the whole data's facts.
    let facts = whole.facts();
    let ranks = Threads::group(shards.len(), timeout);
    std::thread::scope(|s| {
        let handles: Vec<_> = ranks
            .iter()
            .zip(shards)
            .map(|(rank, shard)| {
                let (label_map, facts) = (label_map.clone(), facts);
                s.spawn(move || {
                    if skip == Some(optc::exec::collective::Collective::rank(rank)) {
                        return None;
                    }
                    let source = StreamSource::new(shard, 16, 1).expect("source");
                    let data = Streamed { source, label_map, features: facts.features, classes: 0, weights: None };
                    let mut selected = select_backend(plan, &facts, true);
                    Some(optc::exec::stream::run(
                        plan,
                        selected.backend.as_mut(),
                        optc::exec::stream::Rows::Streamed(&data),
                        &facts,
                        settings,
                        rank,
                    ))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("no panic")).collect()
    })
}

/// Ranks that each stream their own rows average their epochs and certify together: every rank
/// ends with the same weights, F is the whole data's F of them, and the gap (from the reduced
/// sums) bounds the distance to the optimum. A rank that fails stops every rank, and a rank that
/// never comes is named; nobody waits forever.
#[test]
fn ranks_mix_their_epochs_and_certify_the_whole_data() {
    let dir = tempfile::tempdir().expect("tmp");
    let text = generated(300, 40, 9);
    let lines: Vec<&str> = text.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    let shards =
        vec![write(dir.path(), "a.svm", &(a.join("\n") + "\n")), write(dir.path(), "b.svm", &(b.join("\n") + "\n"))];
    let whole_path = write(dir.path(), "d.svm", &text);
    let whole = read_libsvm(&whole_path).expect("reads");
    let map = LabelMap::fit(LabelKind::Labels, &whole).expect("labels");
    let y = map.apply(&whole).expect("labels map");
    let view = whole.view(&y, whole.features());
    let l1 = "minimize E[logistic(y, <x, w>)] + λ·l1(w)";
    // F* of the whole data, certified to 1e-10.
    let exact = compile(&model("labels", 0.01, l1, "solve with scd"), &CompileOptions::default());
    let f_star = {
        let facts = whole.facts();
        let mut selected = select_backend(&exact, &facts, true);
        let settings = RunSettings { tol: Some(1e-10), ..RunSettings::fixed(10_000, 1) };
        let columns = optc::data::LazyColumns::built(optc::data::Columns::of(
            whole.csr().0,
            whole.csr().1,
            whole.csr().2,
            whole.features(),
            1,
        ));
        let done = optc::exec::driver::run(
            &exact,
            selected.backend.as_mut(),
            &view.with_columns(&columns),
            &facts,
            &settings,
            None,
        )
        .expect("solves");
        done.eval.objective - done.gap.expect("a gap")
    };
    for solve in ["solve with fobos", "solve with adagrad(rda = 1)"] {
        let plan = compile(&model("labels", 0.01, l1, solve), &CompileOptions::default());
        let settings = RunSettings { tol: Some(1e-9), ..RunSettings::fixed(30, 1) };
        let runs = on_ranks(&plan, &shards, &whole, &settings, std::time::Duration::from_secs(60), None);
        let runs: Vec<_> = runs.into_iter().map(|r| r.expect("ran").expect("no stop")).collect();
        let (first, second) = (&runs[0].outcome, &runs[1].outcome);
        assert_eq!(first.state.weights(&plan), second.state.weights(&plan), "{solve}");
        assert_eq!((first.eval.objective, first.gap), (second.eval.objective, second.gap), "{solve}");
        let f = evaluate(&plan, &first.state, &view).objective;
        assert!(
            (first.eval.objective - f).abs() <= 1e-12 * f,
            "{solve}: F {} vs the whole data's {f}",
            first.eval.objective
        );
        let gap = first.gap.expect("a gap");
        assert!(f - f_star <= gap * (1.0 + 1e-9) + 1e-12, "{solve}: F − F* = {} above the gap {gap}", f - f_star);
        // Mixing two half-size epochs does about as well as one process's epochs over all rows.
        let alone = streamed(&plan, &whole_path, LabelKind::Labels, first.epochs, 16);
        assert!(
            f - f_star <= 2.0 * (alone.f - f_star),
            "{solve}: F − F* = {} on two ranks against {} alone: the ranks did not learn together",
            f - f_star,
            alone.f - f_star
        );
    }
    // Rank 1's rows have a bad line: it stops with its own error, naming the line, and rank 0
    // because another rank stopped.
    let plan = compile(&model("labels", 0.01, l1, "solve with fobos"), &CompileOptions::default());
    let settings = RunSettings::fixed(3, 1);
    let bad = vec![shards[0].clone(), write(dir.path(), "bad.svm", &(b[..20].join("\n") + "\n1 3:x\n"))];
    let runs = on_ranks(&plan, &bad, &whole, &settings, std::time::Duration::from_secs(60), None);
    let stops: Vec<String> = runs.into_iter().map(|r| format!("{:?}", r.expect("ran").err())).collect();
    assert!(stops[1].contains("Data") && stops[1].contains("bad.svm:21"), "{stops:?}");
    assert_eq!(stops[0], "Some(Elsewhere)");
    // Rank 1 never comes: rank 0 names it within its timeout.
    let runs = on_ranks(&plan, &shards, &whole, &settings, std::time::Duration::from_millis(300), Some(1));
    let stop = format!("{:?}", runs[0].as_ref().expect("ran").as_ref().err());
    assert!(stop.contains("Timeout") && stop.contains("missing: [1]"), "{stop}");
}
