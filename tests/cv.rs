//! `optc cv` and the library's cross-validation: the held-out losses are the ones each fold's
//! own fit gives, the choice follows glmnet's rules, the refit is the model at the chosen value,
//! and bad requests are usage errors.

mod common;

use common::{compile, fixture, optc, run_plan, text};
use optc::data::{read_libsvm, LabelMap};
use optc::exec::driver::RunSettings;
use optc::pipeline::CompileOptions;
use optc::session::cv::{cross_validate, folds, Choose, CvSpec};
use optc::session::path::PathSpec;
use optc::source::SourceFile;
use optc::stdlib::LabelKind;

const MODEL: &str =
    "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nparam λ = 0.01\nminimize E[logistic(y, <x, w> + b)] + λ·l1(w)\n";

fn spec(folds: usize, choose: Choose) -> CvSpec {
    CvSpec {
        path: PathSpec {
            param: "λ".into(),
            from: None,
            to: None,
            steps: 6,
            values: None,
            tol: Some(1e-9),
            epochs: None,
            seed: 3,
            cold: false,
            jit: true,
            threads: 2,
            compile: CompileOptions::default(),
            cancel: Default::default(),
        },
        folds,
        choose,
        fold_of: None,
        keep_folds: false,
    }
}

/// Each value's mean held-out loss and its standard error are those of K fits made here, one
/// per fold on the rows the seeded, stratified folds leave in, scored on the rows they hold
/// out; λ_1se is at least λ_min; the refit is the fit on all of the rows at the chosen value.
#[test]
fn held_out_losses_are_the_folds_own_fits_scored_on_their_rows() {
    let file = SourceFile::new("cv.opt", MODEL.to_string());
    let data = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let done = cross_validate(&file, &data, &spec(4, Choose::OneSe), |_| {}).expect("cross-validated");
    assert_eq!(done.points.len(), 6);
    assert!(done.stratified);
    assert!(done.points[done.one_se].value >= done.points[done.min].value);
    assert_eq!(done.chosen, done.one_se);
    let fold_of = folds(&data.labels, 4, true, 3).expect("folds");
    let map = LabelMap::fit(LabelKind::Labels, &data).expect("labels");
    let settings = RunSettings::to_tolerance(1e-11, 100_000, 1);
    for at in [2, 4] {
        let value = done.points[at].value;
        let text = MODEL.replace("λ = 0.01", &format!("λ = {value:e}"));
        let losses: Vec<f64> = (0..4)
            .map(|f| {
                let (train, test) = data.fold(&fold_of, f);
                let r = run_plan(compile(&text, &CompileOptions::default()), &train, &settings, None);
                let (w, b) = (r.outcome.state.weights(&r.plan).to_vec(), r.outcome.state.intercept(&r.plan));
                let y = map.apply(&test).expect("labels");
                let (indptr, indices, values) = test.csr();
                let loss: f64 = (0..test.rows())
                    .map(|i| {
                        let a: f64 = b
                            + (indptr[i]..indptr[i + 1])
                                .map(|k| values[k] * w.get(indices[k] as usize).copied().unwrap_or(0.0))
                                .sum::<f64>();
                        (1.0 + (-y[i] * a).exp()).ln()
                    })
                    .sum();
                loss / test.rows() as f64
            })
            .collect();
        let mean = losses.iter().sum::<f64>() / 4.0;
        let se = (losses.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / 3.0 / 4.0).sqrt();
        let p = &done.points[at];
        assert!((p.loss - mean).abs() <= 1e-6 * mean, "at {value}: cv's loss {} against {mean}", p.loss);
        assert!((p.loss_se - se).abs() <= 1e-4 * se + 1e-9, "at {value}: cv's se {} against {se}", p.loss_se);
        assert_eq!((p.folds, p.unconverged), (4, 0));
    }
    // The refit: the model on every row at the chosen value.
    let refit = done.refit();
    let text = MODEL.replace("λ = 0.01", &format!("λ = {:e}", refit.value));
    let r = run_plan(compile(&text, &CompileOptions::default()), &data, &settings, None);
    assert!(
        (refit.objective - r.eval.objective).abs() <= 1e-8 * r.eval.objective,
        "{} vs {}",
        refit.objective,
        r.eval.objective
    );
    let min = cross_validate(&file, &data, &spec(4, Choose::Min), |_| {}).expect("cross-validated");
    assert_eq!(min.chosen, min.min);
}

/// Folds and values given by the caller: the grid is theirs (sorted from large to small), and
/// each fold holds the rows they say.
#[test]
fn given_folds_and_values_are_followed() {
    let file = SourceFile::new("cv.opt", MODEL.to_string());
    let data = read_libsvm(&fixture("binary.svm")).expect("fixture");
    let mut s = spec(3, Choose::Min);
    s.path.values = Some(vec![0.01, 0.1, 0.03]);
    s.fold_of = Some((0..data.rows()).map(|i| i % 3).collect());
    let done = cross_validate(&file, &data, &s, |_| {}).expect("cross-validated");
    let values: Vec<f64> = done.points.iter().map(|p| p.value).collect();
    assert_eq!(values, [0.1, 0.03, 0.01]);
    assert!(!done.points.iter().any(|p| p.unconverged > 0));
    // The same folds drawn differently give other held-out losses.
    let mut other = s.clone();
    other.fold_of = Some((0..data.rows()).map(|i| (i / 67) % 3).collect());
    let again = cross_validate(&file, &data, &other, |_| {}).expect("cross-validated");
    assert_ne!(done.points[1].loss, again.points[1].loss);
}

/// Fewer than two folds, more folds than rows, and a label with fewer rows than folds are
/// usage errors, said before anything is solved.
#[test]
fn impossible_folds_are_usage_errors() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = common::write(dir.path(), "m.opt", MODEL);
    let data = fixture("binary.svm");
    let skewed = common::write(
        dir.path(),
        "skewed.svm",
        &(0..30).map(|i| format!("{} 1:{}\n", if i < 3 { 1 } else { -1 }, i as f64 / 30.0)).collect::<String>(),
    );
    for (folds, data, says) in [
        ("1", data.as_path(), "--folds 1: give at least 2"),
        ("201", data.as_path(), "--folds 201: the data has 200 rows"),
        ("5", skewed.as_path(), "label 1 has 3 rows, fewer than the folds"),
    ] {
        let o = optc(&["cv", model.to_str().unwrap(), data.to_str().unwrap(), "--param", "λ", "--folds", folds]);
        assert_eq!(o.status.code(), Some(2), "--folds {folds}: {}", text(&o.stderr));
        assert!(text(&o.stderr).contains(says), "--folds {folds}: {}", text(&o.stderr));
    }
}

/// The command: the table on standard output (or `--out`), one object with `--json`, the
/// picture with `--plot`, the refit saved with `--save` and read back by `optc predict`.
#[test]
fn optc_cv_writes_its_table_choice_and_refit() {
    let dir = tempfile::tempdir().expect("tmp");
    let model = common::write(dir.path(), "m.opt", MODEL);
    let data = fixture("binary.svm");
    let (saved, table, plot) = (dir.path().join("cv.model"), dir.path().join("cv.csv"), dir.path().join("cv.svg"));
    let args = [
        "cv",
        model.to_str().unwrap(),
        data.to_str().unwrap(),
        "--param",
        "lambda",
        "--folds",
        "3",
        "--steps",
        "5",
        "--json",
        "--out",
        table.to_str().unwrap(),
        "--save",
        saved.to_str().unwrap(),
        "--plot",
        plot.to_str().unwrap(),
    ];
    let o = optc(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON object");
    assert_eq!(json["points"].as_array().map(Vec::len), Some(5));
    let (min, one_se) = (json["lambda_min"].as_f64().expect("λ_min"), json["lambda_1se"].as_f64().expect("λ_1se"));
    assert!(one_se >= min);
    assert_eq!(json["refit"]["value"].as_f64(), Some(one_se));
    assert_eq!(json["refit"]["status"], "converged");
    let csv = std::fs::read_to_string(&table).expect("the table");
    assert!(csv.starts_with("lambda,cv_loss,cv_loss_se,cv_error,cv_error_se,folds,"), "{csv}");
    assert_eq!(csv.lines().count(), 6);
    assert!(csv.lines().any(|l| l.ends_with(",1se") || l.ends_with(",min+1se")), "{csv}");
    let svg = std::fs::read_to_string(&plot).expect("the plot");
    assert!(svg.contains("λ_min") && svg.contains("held-out loss"), "{}", &svg[..svg.len().min(300)]);
    let p = optc(&["predict", saved.to_str().unwrap(), data.to_str().unwrap()]);
    assert!(p.status.success(), "{}", text(&p.stderr));
    // Two writers of standard output at once is a usage error.
    let o = optc(&["cv", model.to_str().unwrap(), data.to_str().unwrap(), "--param", "λ", "--json", "--save", "-"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
}
