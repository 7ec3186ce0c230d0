//! `mpirun -np N optc run MODEL DATA --stream` (the `mpi` feature; OpenMPI's `mpirun` on the
//! PATH), DATA one shard file a rank or one file the ranks cut by bytes: the ranks each stream
//! their own rows, average their epochs and certify together. A rank killed mid-run ends the
//! job, and the saved model from before stays.
//! Rank 0's report says how many processes ran and what they sent; its gap bounds the whole
//! data's F − F*; a bad line on one rank ends every rank with its file, line and column; ranks
//! started with different options are refused before any work.
#![cfg(feature = "mpi")]

mod common;

use common::{fixture, optc, text, write};
use std::process::{Command, Output};

/// `mpirun` (as root, OpenMPI wants to be told; more ranks than cores need --oversubscribe),
/// its session directory under `session`. OpenMPI 4.1 puts every job's session directory in
/// one `/tmp/ompi.HOST.UID`, and two jobs started at once can race to create it: the loser
/// fails in `orte_init` with "File exists", as one CI run did while these tests ran in parallel.
fn launcher(session: &std::path::Path) -> Command {
    let mut mpirun = Command::new("mpirun");
    mpirun.args(["--allow-run-as-root", "--oversubscribe"]).env("OMPI_MCA_orte_tmpdir_base", session);
    mpirun
}

/// `mpirun` with `ranks` copies of one optc command.
fn mpirun(ranks: usize, args: &[&str]) -> Output {
    let session = tempfile::tempdir().expect("tmp");
    launcher(session.path())
        .args(["-np", &ranks.to_string(), env!("CARGO_BIN_EXE_optc")])
        .args(args)
        .output()
        .expect("mpirun runs (install openmpi-bin)")
}

/// The fixture's rows cut into `n` shard files of about equal size, in order, and their list.
fn shards(dir: &std::path::Path, n: usize) -> String {
    shards_of(dir, &fixture("binary.svm"), n)
}

/// `data`'s rows cut into `n` shard files of about equal size, in order, and their list.
fn shards_of(dir: &std::path::Path, data: &std::path::Path, n: usize) -> String {
    let all = std::fs::read_to_string(data).expect("fixture");
    let stem = data.file_stem().and_then(|s| s.to_str()).unwrap_or("data");
    let lines: Vec<&str> = all.lines().collect();
    let per = lines.len().div_ceil(n);
    let files: Vec<String> = lines
        .chunks(per)
        .enumerate()
        .map(|(k, rows)| {
            let name = if stem == "binary" { format!("{n}part{k}.svm") } else { format!("{stem}{n}part{k}.svm") };
            write(dir, &name, &(rows.join("\n") + "\n")).display().to_string()
        })
        .collect();
    files.join(",")
}

const L1: &str =
    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";

#[test]
fn ranks_streaming_their_shards_certify_the_whole_data() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", L1);
    let model = model.to_str().expect("utf-8");
    // F* of the whole file, in memory, certified to 1e-10.
    let exact = optc(&["run", model, fixture("binary.svm").to_str().expect("utf-8"), "--tol", "1e-10", "--json"]);
    assert!(exact.status.success(), "{}", text(&exact.stderr));
    let exact: serde_json::Value = serde_json::from_slice(&exact.stdout).expect("json");
    let f_star = exact["objective"].as_f64().expect("F") - exact["gap"].as_f64().expect("gap");
    // Shard files a rank, and one file the ranks cut by bytes.
    let whole = fixture("binary.svm").display().to_string();
    for (ranks, list) in [(2, shards(dir.path(), 2)), (4, shards(dir.path(), 4)), (3, whole)] {
        let saved = dir.path().join(format!("w{ranks}.model"));
        let out = mpirun(
            ranks,
            &["run", model, &list, "--stream", "--epochs", "60", "--json", "--save", saved.to_str().expect("utf-8")],
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        // One report, rank 0's.
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
        assert_eq!(r["stream"]["processes"], ranks);
        assert!(r["stream"]["bytes_communicated"].as_u64().is_some_and(|b| b > 0), "{r}");
        assert_eq!(r["rows"], 200, "the whole data's rows");
        assert_eq!(r["solver"], "adagrad");
        let (f, gap) = (r["objective"].as_f64().expect("F"), r["gap"].as_f64().expect("gap"));
        assert!(f - f_star <= gap * (1.0 + 1e-9), "{ranks} ranks: F − F* = {} above the gap {gap}", f - f_star);
        assert!(f - f_star <= 1e-3 * f_star, "{ranks} ranks: F {f} against F* {f_star}");
        assert!(saved.exists(), "rank 0 writes --save");
    }
}

#[test]
fn a_bad_line_on_one_rank_ends_every_rank_with_its_place() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", L1);
    let list = shards(dir.path(), 2);
    let second = list.split(',').nth(1).expect("two").to_string();
    let mut rows = std::fs::read_to_string(&second).expect("shard");
    rows.insert_str(0, "1 3:x\n");
    std::fs::write(&second, rows).expect("write");
    // Streamed, and held in memory.
    for how in [&["--stream"][..], &[]] {
        let out = mpirun(2, &[&["run", model.to_str().expect("utf-8"), &list][..], how].concat());
        assert!(!out.status.success());
        let err = text(&out.stderr);
        assert!(err.contains("2part1.svm:1:5: value `x` is not a number"), "{how:?}: {err}");
    }
    // In one file the ranks cut, the line is the file's own.
    let all = std::fs::read_to_string(fixture("binary.svm")).expect("fixture");
    let mut lines: Vec<&str> = all.lines().collect();
    lines.insert(150, "1 3:x");
    let bad = write(dir.path(), "bad.svm", &(lines.join("\n") + "\n"));
    let out = mpirun(3, &["run", model.to_str().expect("utf-8"), bad.to_str().expect("utf-8"), "--stream"]);
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("bad.svm:151:5: value `x` is not a number"), "{err}");
}

#[test]
fn ranks_started_with_different_options_are_refused_before_any_work() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(dir.path(), "m.opt", L1);
    let model = model.to_str().expect("utf-8");
    let list = shards(dir.path(), 2);
    let out = launcher(dir.path())
        .args(["-np", "1", env!("CARGO_BIN_EXE_optc"), "run", model, &list, "--stream", "--epochs", "3", ":"])
        .args(["-np", "1", env!("CARGO_BIN_EXE_optc"), "run", model, &list, "--stream", "--epochs", "4"])
        .output()
        .expect("mpirun runs");
    assert!(!out.status.success());
    let err = text(&out.stderr);
    assert!(err.contains("started with different models or options"), "{err}");
}

/// The pids of the processes whose command line mentions `marker` and which MPI started as
/// rank `rank`.
fn rank_pids(marker: &str, rank: usize) -> Vec<u32> {
    let want = format!("OMPI_COMM_WORLD_RANK={rank}");
    let Ok(entries) = std::fs::read_dir("/proc") else { return vec![] };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let has = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).any(|w| w == needle);
            has(&cmdline, marker.as_bytes()) && has(&environ, want.as_bytes()) && has(&cmdline, b"run")
        })
        .collect()
}

/// A two-rank streamed job that would run for minutes on generated rows in `dir` (`--save` to
/// `saved`), and rank 1's pid once it has run its epochs for a moment.
fn long_job(dir: &std::path::Path, saved: &std::path::Path, mpirun_args: &[&str]) -> (std::process::Child, u32) {
    let model = write(dir, "m.opt", L1);
    let mut rows = String::new();
    for i in 0..20_000u32 {
        let label = if i % 3 == 0 { 1 } else { -1 };
        rows += &format!("{label} {}:1 {}:0.5 {}:{}\n", 1 + i % 97, 100 + i % 89, 200 + i % 83, f64::from(i % 7) / 7.0);
    }
    let data = write(dir, "big.svm", &rows);
    let marker = dir.display().to_string();
    let job = launcher(dir)
        .args(["-np", "2"])
        .args(mpirun_args)
        .args([env!("CARGO_BIN_EXE_optc"), "run", model.to_str().expect("utf-8"), data.to_str().expect("utf-8")])
        .args(["--stream", "--epochs", "100000", "--time-limit", "120", "--save", saved.to_str().expect("utf-8")])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("mpirun runs");
    let start = std::time::Instant::now();
    let rank1 = loop {
        if let Some(&pid) = rank_pids(&marker, 1).first() {
            break pid;
        }
        assert!(start.elapsed().as_secs() < 60, "rank 1 never started");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::thread::sleep(std::time::Duration::from_millis(1500));
    (job, rank1)
}

/// A rank killed mid-run ends the job with a non-zero exit and mpirun's message, and the
/// `--save` file from before is left as it was (rank 0 writes it only at the end, atomically).
#[test]
fn a_rank_killed_mid_run_ends_the_job_and_leaves_the_saved_model() {
    let dir = tempfile::tempdir().expect("tmp");
    let saved = write(dir.path(), "w.model", "the previous model\n");
    let (job, victim) = long_job(dir.path(), &saved, &[]);
    let start = std::time::Instant::now();
    let killed = Command::new("kill").args(["-9", &victim.to_string()]).status().expect("kill runs");
    assert!(killed.success());
    let out = job.wait_with_output().expect("mpirun ends");
    assert!(!out.status.success(), "the job ends with a non-zero exit");
    assert!(start.elapsed().as_secs() < 100, "the job ended long after the kill");
    let said = text(&out.stderr) + &text(&out.stdout);
    assert!(said.contains("rank 1") && said.contains("signal 9"), "mpirun names the rank and its end: {said}");
    assert_eq!(std::fs::read_to_string(&saved).expect("saved"), "the previous model\n");
}

/// A rank that stops answering (stopped by SIGSTOP: alive, but never at the next reduction) is
/// named by rank 0 when the reduction's timeout (`OPTC_RANK_TIMEOUT`) runs out, and the job ends
/// with a non-zero exit instead of hanging.
#[test]
fn a_rank_that_never_comes_is_named_when_the_timeout_runs_out() {
    let dir = tempfile::tempdir().expect("tmp");
    let saved = dir.path().join("w.model");
    let (job, victim) = long_job(dir.path(), &saved, &["-x", "OPTC_RANK_TIMEOUT=3"]);
    let start = std::time::Instant::now();
    let stopped = Command::new("kill").args(["-STOP", &victim.to_string()]).status().expect("kill runs");
    assert!(stopped.success());
    let out = job.wait_with_output().expect("mpirun ends");
    // A stopped process ignores all but SIGKILL: make sure it is gone.
    let _ = Command::new("kill").args(["-9", &victim.to_string()]).status();
    assert!(!out.status.success(), "the job ends with a non-zero exit");
    assert!(start.elapsed().as_secs() < 60, "the job ended long after the timeout");
    let err = text(&out.stderr);
    assert!(err.contains("rank 0 of 2: rank 1 did not reach the reduction within 3 s"), "{err}");
}

/// Without --stream each rank holds its share of the rows, and a batch solver's sums over the
/// rows are added up across the ranks: on 2 and 4 ranks (one file cut by bytes, or shard files)
/// the run certifies the tolerance one process certifies, its F is one process's to that
/// tolerance, and the gap bounds the distance to CVXPY's F*. SCD's models (ℓ1, elastic net)
/// run its proximal Newton iterations with the working set's Hessian summed across the ranks,
/// and the report says so; ½‖w‖² runs TRON, its default, its sums split. A free intercept,
/// softmax and disjoint groups (each rank binding its own operator) run FISTA and certify too.
#[test]
fn ranks_holding_their_rows_certify_what_one_process_certifies() {
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::copy(common::fixture("disjoint_groups.txt"), dir.path().join("disjoint_groups.txt")).expect("copies");
    let tol = 1e-6;
    for (name, solver) in [
        ("l1_logistic", "scd"),
        ("l2_logistic", "tron"),
        ("lasso", "scd"),
        ("elastic_logistic", "scd"),
        ("l1_logistic_intercept", "proxgrad"),
        ("softmax_l1", "proxgrad"),
        ("disjoint_group_logistic", "proxgrad"),
        ("svm", "dcd"),
    ] {
        let fx = common::fixture_named(name);
        let model = write(dir.path(), &format!("{name}.opt"), &fx.model);
        let (model, data) = (model.to_str().expect("utf-8"), fx.data.to_str().expect("utf-8"));
        let one = optc(&["run", model, data, "--tol", "1e-6", "--json"]);
        assert!(one.status.success(), "{}", text(&one.stderr));
        let one: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
        let f_one = one["objective"].as_f64().expect("F");
        let list = shards_of(dir.path(), &fx.data, 4);
        let stem = fx.data.file_stem().and_then(|s| s.to_str()).expect("a name");
        let pattern = if stem == "binary" { "4part*.svm".to_string() } else { format!("{stem}4part*.svm") };
        let pattern = dir.path().join(pattern).display().to_string();
        for (ranks, files) in [(2, data), (4, data), (4, list.as_str()), (4, pattern.as_str())] {
            let out = mpirun(ranks, &["run", model, files, "--tol", "1e-6", "--json"]);
            assert!(out.status.success(), "{name} on {ranks}: {}", text(&out.stderr));
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
            assert_eq!(r["stream"]["processes"], ranks);
            assert_eq!(r["stream"]["in_memory"], true);
            assert!(r["stream"]["bytes_communicated"].as_u64().is_some_and(|b| b > 0), "{r}");
            assert_eq!(r["solver"], solver, "{r}");
            // SCD runs its proximal Newton iterations, and the report says so.
            let newton = solver == "scd";
            assert_eq!(r["solver_note"].as_str().is_some_and(|n| n.contains("proximal Newton")), newton, "{r}");
            assert_eq!(r["status"], "converged", "{name} on {ranks}: {r}");
            let (f, gap) = (r["objective"].as_f64().expect("F"), r["gap"].as_f64().expect("gap"));
            assert!(gap <= tol * f.abs(), "{name} on {ranks}: gap {gap}");
            assert!((f - f_one).abs() <= tol * f_one.abs(), "{name} on {ranks}: F {f} against one process's {f_one}");
            assert!(f - fx.best <= gap + 1e-7 * fx.best.abs(), "{name} on {ranks}: F − F* above the gap {gap}");
        }
    }
}

/// Every two-class, regression and softmax fixture on 2 and 4 ranks holding their rows: where
/// one process certifies, the ranks certify the same tolerance, their F within it of one
/// process's and F − F* under their gap; where it has no certificate (a composite term without
/// a closed-form dual), their F is within it of CVXPY's F*. (One-vs-rest has its own test.)
/// The hinge with a free intercept is the exception: dual CD's rounds on split rows do not take
/// a free b, so the ranks run FOBOS, which stops at its epoch cap; they must say so, with a gap
/// that still bounds F − F*. So is the hinge beside a nonsmooth penalty (`pdhg` in one process).
#[test]
fn every_fixture_on_ranks_reaches_what_one_process_reaches() {
    let dir = tempfile::tempdir().expect("tmp");
    for side in ["groups.txt", "disjoint_groups.txt", "edges.txt"] {
        std::fs::copy(common::fixture(side), dir.path().join(side)).expect("copies");
    }
    let all: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("optima.json")).expect("optima")).expect("parses");
    let names: Vec<String> =
        // Ranks refuse the rows' weights (tests/weights.rs has the weighted fixtures).
        all["fixtures"]
            .as_object()
            .expect("fixtures")
            .iter()
            .filter(|(k, v)| !k.starts_with("ovr_") && v["weights"].is_null())
            .map(|(k, _)| k.clone())
            .collect();
    assert!(names.len() >= 40, "{names:?}");
    let tol = 1e-6;
    for name in &names {
        let fx = common::fixture_named(name);
        let model = write(dir.path(), &format!("{name}.opt"), &fx.model);
        // The ranks cut plain text by bytes: a compressed fixture is unpacked first.
        let data = match fx.data.extension().is_some_and(|e| e == "xz") {
            true => {
                let mut text = String::new();
                let file = std::fs::File::open(&fx.data).expect("fixture");
                std::io::Read::read_to_string(&mut xz2::read::XzDecoder::new(file), &mut text).expect("unpacks");
                write(dir.path(), &format!("{name}.svm"), &text)
            }
            false => fx.data.clone(),
        };
        let (model, data) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"));
        let one = optc(&["run", model, data, "--tol", "1e-6", "--json"]);
        assert!(one.status.success(), "{name}: {}", text(&one.stderr));
        let one: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
        let f_one = one["objective"].as_f64().expect("F");
        for ranks in [2, 4] {
            let out = mpirun(ranks, &["run", model, data, "--tol", "1e-6", "--json"]);
            // The primal-dual method's start sums over the rows (its diagonal steps), which the
            // ranks do not split: they run FOBOS where it applies, at its epoch cap with a gap
            // that bounds F − F*, and refuse the rest (ℓ∞, groups), saying why.
            if one["solver"] == "pdhg" {
                if !out.status.success() {
                    let why = text(&out.stderr);
                    assert!(
                        why.contains("`pdhg`, its default, cannot run on rows split across ranks"),
                        "{name}: {why}"
                    );
                    continue;
                }
                let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
                assert_eq!(r["status"], "max_epochs", "{name} on {ranks}: {r}");
                let (f, gap) = (r["objective"].as_f64().expect("F"), r["gap"].as_f64().expect("a gap"));
                assert!(f - fx.best <= gap + 1e-7 * fx.best.abs(), "{name} on {ranks}: F − F* above the gap {gap}");
                continue;
            }
            assert!(out.status.success(), "{name} on {ranks}: {}", text(&out.stderr));
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
            assert_eq!(r["stream"]["processes"], ranks, "{r}");
            let f = r["objective"].as_f64().expect("F");
            // Where the default cannot split and neither tron nor proxgrad takes the model (dual
            // CD on the box duals of the ε-insensitive and pinball losses), the ranks average
            // AdaGrad's states: to its epoch cap, with a gap that still bounds F − F*.
            let averaged = r["solver_note"].as_str().is_some_and(|n| n.contains("average their states"));
            if averaged || ["svm_intercept", "svm_skewed_intercept"].contains(&name.as_str()) {
                assert_eq!(r["status"], "max_epochs", "{name} on {ranks}: {r}");
                let gap = r["gap"].as_f64().expect("a gap");
                assert!(f - fx.best <= gap + 1e-7 * fx.best.abs(), "{name} on {ranks}: F − F* above the gap {gap}");
                continue;
            }
            match one["gap"].as_f64() {
                Some(_) => {
                    assert_eq!(r["status"], "converged", "{name} on {ranks}: {r}");
                    let gap = r["gap"].as_f64().expect("a gap");
                    assert!(gap <= tol * f.abs(), "{name} on {ranks}: gap {gap}");
                    assert!((f - f_one).abs() <= tol * f_one.abs(), "{name} on {ranks}: F {f}, one process {f_one}");
                    assert!(f - fx.best <= gap + 1e-7 * fx.best.abs(), "{name} on {ranks}: F − F* above the gap {gap}");
                }
                None => assert!((f - fx.best).abs() <= tol * fx.best.abs(), "{name} on {ranks}: F {f}, F* {}", fx.best),
            }
        }
    }
}

/// One-vs-rest on ranks holding their rows: the k problems one after another on every rank,
/// each class certified to CVXPY's optimum and to one process's F, the saved model LIBLINEAR's
/// k columns in the same label order with each column within the certificate's reach of
/// CVXPY's w, and the argmax error one process's. What follows one problem is still refused.
#[test]
fn ranks_train_one_vs_rest_as_one_process_does() {
    let dir = tempfile::tempdir().expect("tmp");
    let tol = 1e-6;
    for name in ["ovr_svm", "ovr_sqhinge", "ovr_logistic"] {
        let fx = common::ovr_fixture_named(name);
        let model = write(dir.path(), &format!("{name}.opt"), &fx.model);
        let (model, data) = (model.to_str().expect("utf-8"), fx.data.to_str().expect("utf-8"));
        let one = optc(&["run", model, data, "--tol", "1e-6", "--json"]);
        assert!(one.status.success(), "{}", text(&one.stderr));
        let one: serde_json::Value = serde_json::from_slice(&one.stdout).expect("json");
        let list = shards_of(dir.path(), &fx.data, 4);
        for (ranks, files) in [(2, data), (4, list.as_str())] {
            let saved = dir.path().join(format!("{name}-{ranks}.model"));
            let out = mpirun(
                ranks,
                &["run", model, files, "--tol", "1e-6", "--json", "--save", saved.to_str().expect("utf-8")],
            );
            assert!(out.status.success(), "{name} on {ranks}: {}", text(&out.stderr));
            let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON report");
            assert_eq!(r["one_vs_rest"], true, "{r}");
            assert_eq!(r["stream"]["processes"], ranks, "{r}");
            assert!(r["stream"]["bytes_communicated"].as_u64().is_some_and(|b| b > 0), "{r}");
            assert_eq!(r["status"], "converged", "{name} on {ranks}: {r}");
            assert_eq!(r["train_error"], one["train_error"], "{name} on {ranks}: {r}");
            let classes = r["classes"].as_array().expect("classes");
            assert_eq!(classes.len(), fx.classes.len(), "{r}");
            let model = optc::model_file::SavedModel::read(&saved).expect("the saved model reads");
            assert_eq!(model.labels, fx.classes, "{name} on {ranks}: LIBLINEAR's first-seen order");
            let lambda = 0.01;
            for (c, class) in classes.iter().enumerate() {
                assert_eq!(class["label"].as_f64(), Some(fx.classes[c]), "{r}");
                let (f, gap) = (class["objective"].as_f64().expect("F"), class["gap"].as_f64().expect("gap"));
                let (best, f_one) = (fx.objectives[c], one["classes"][c]["objective"].as_f64().expect("F"));
                assert!(gap <= tol * f.abs(), "{name} class {c} on {ranks}: gap {gap}");
                assert!(f - best <= gap + 1e-7 * best, "{name} class {c} on {ranks}: F − F* above the gap {gap}");
                assert!((f - f_one).abs() <= tol * f_one, "{name} class {c} on {ranks}: F {f}, one process {f_one}");
                // λ·½‖w‖² is λ-strongly convex: ‖w − w*‖² ≤ 2·gap/λ.
                let far: f64 = (0..model.nr_feature).map(|j| (model.w[j * 3 + c] - fx.w[c][j]).powi(2)).sum();
                assert!(far <= 2.0 * gap / lambda + 1e-12, "{name} class {c} on {ranks}: ‖w − w*‖² = {far}");
            }
        }
        let trace = dir.path().join("t.csv");
        let out = mpirun(2, &["run", model, data, "--trace", trace.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("one-vs-rest"), "{}", text(&out.stderr));
    }
}

/// A failure every rank shares is said once, by rank 0, with the exit code one process gives:
/// a typo in the model (each rank compiles the same text), and a solver that diverges on the
/// whole data's sums (here a step bound L that overflows).
#[test]
fn a_failure_every_rank_shares_is_said_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let typo = write(
        dir.path(),
        "typo.opt",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistc(y, <x, w>)]\n",
    );
    let data = fixture("binary.svm");
    let out = mpirun(2, &["run", typo.to_str().expect("utf-8"), data.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).matches("unknown loss `logistc`").count(), 1, "{}", text(&out.stderr));
    // Two rows whose norms overflow, one in each rank's half.
    let rows = std::fs::read_to_string(&data).expect("fixture");
    let lines: Vec<&str> = rows.lines().collect();
    let half = lines.len() / 2;
    let huge =
        format!("{}\n1 1:1e200 2:1e200\n{}\n-1 1:1e200 3:1e200\n", lines[..half].join("\n"), lines[half..].join("\n"));
    let huge = write(dir.path(), "huge.svm", &huge);
    let model = write(dir.path(), "m.opt", &format!("{L1}solve with proxgrad\n"));
    let out = mpirun(2, &["run", model.to_str().expect("utf-8"), huge.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr).matches("the solver diverged").count(), 1, "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("hint:"), "{}", text(&out.stderr));
}

/// A solver the model names that can neither split its sums nor average its epochs is refused
/// with both reasons, before any work.
#[test]
fn a_named_solver_that_cannot_split_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().expect("tmp");
    // Dual CD's rounds on split rows take the hinge losses; its logistic steps are not among them.
    let logistic = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l2sq(w)\nsolve with dcd\n";
    let model = write(dir.path(), "m.opt", logistic);
    let out = mpirun(2, &["run", model.to_str().expect("utf-8"), fixture("binary.svm").to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("cannot run `dcd`") && err.contains("does not take shards") && err.contains("hint: choose tron"),
        "{err}"
    );
}

/// What does not split its work is refused under mpirun rather than run whole on every process:
/// dictionary learning, and the commands other than `optc run`.
#[test]
fn what_does_not_split_is_refused_on_several_processes() {
    let dir = tempfile::tempdir().expect("tmp");
    let dict = write(
        dir.path(),
        "d.opt",
        "data x: sparse\nvar D: mat[dim(x), 4]\nminimize E[sparse_code(x, D, 0.1, 0.01)]\nst columns(D) ∈ L2Ball(1)\n",
    );
    let data = fixture("binary.svm");
    let out = mpirun(2, &["run", dict.to_str().expect("utf-8"), data.to_str().expect("utf-8")]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("dictionary learning does not run on 2 processes"), "{}", text(&out.stderr));
    let model = write(dir.path(), "m.opt", L1);
    let out = mpirun(2, &["path", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--param", "λ"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("only `optc run` splits its work"), "{}", text(&out.stderr));
}

/// Classes numbered alike on every rank: shards whose rows show the classes in different
/// orders still mix one W (each rank numbering by its own first sight would average the
/// columns of different classes).
#[test]
fn ranks_number_the_classes_alike() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = write(
        dir.path(),
        "m.opt",
        "data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\nparam λ = 0.01\nminimize E[softmax(y, <x, W>)] + λ·l1(W)\n",
    );
    let model = model.to_str().expect("utf-8");
    let all = std::fs::read_to_string(fixture("multiclass.svm")).expect("fixture");
    let lines: Vec<&str> = all.lines().collect();
    let (a, b) = lines.split_at(lines.len() / 2);
    let reversed: Vec<&str> = b.iter().rev().copied().collect();
    let first = write(dir.path(), "a.svm", &(a.join("\n") + "\n"));
    let second = write(dir.path(), "b.svm", &(reversed.join("\n") + "\n"));
    let firsts = |rows: &[&str]| {
        let mut seen: Vec<String> = vec![];
        for r in rows {
            let y = r.split_whitespace().next().unwrap_or("").to_string();
            if !seen.contains(&y) {
                seen.push(y);
            }
        }
        seen
    };
    assert_ne!(firsts(a), firsts(&reversed), "the shards must see the classes in different orders");
    let exact = optc(&["run", model, fixture("multiclass.svm").to_str().expect("utf-8"), "--tol", "1e-9", "--json"]);
    assert!(exact.status.success(), "{}", text(&exact.stderr));
    let exact: serde_json::Value = serde_json::from_slice(&exact.stdout).expect("json");
    let f_star = exact["objective"].as_f64().expect("F") - exact["gap"].as_f64().expect("gap");
    let list = format!("{},{}", first.display(), second.display());
    let out = mpirun(2, &["run", model, &list, "--stream", "--epochs", "100", "--solver", "fobos", "--json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let f = r["objective"].as_f64().expect("F");
    assert!(f - f_star <= 0.05 * f_star, "F {f} against F* {f_star}: the ranks' classes were mixed up");
}
