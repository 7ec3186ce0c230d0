//! Dictionary learning (Mairal 2013 §4.3): the sparse coder against an independent solve.

use optc::runtime::dictionary::{Dictionary, CODE_TOL};
use serde_json::Value;

fn fixture() -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sparse_codes.json");
    serde_json::from_str(&std::fs::read_to_string(path).expect("sparse_codes.json")).expect("json")
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect()
}

/// The codes and the cost ℓ(x, D) of every signal match CVXPY + Clarabel's (tests/fixtures/make.py
/// sparse_codes) to 1e-6, at three (λ₁, λ₂), one of them without the ridge.
#[test]
fn codes_match_an_independent_elastic_net_solve() {
    let f = fixture();
    let rows: Vec<Vec<f64>> = f["D"].as_array().expect("D").iter().map(floats).collect();
    let (m, k) = (rows.len(), rows[0].len());
    // The atoms are the columns of D: K rows of m.
    let d: Vec<f64> = (0..k).flat_map(|a| rows.iter().map(move |r| r[a])).collect();
    let dict = Dictionary::new(k, m, d);
    let signals: Vec<Vec<f64>> = f["x"].as_array().expect("x").iter().map(floats).collect();
    let coder = dict.coder();
    let indices: Vec<u32> = (0..m as u32).collect();
    for case in f["cases"].as_array().expect("cases") {
        let (l1, l2) = (case["lambda1"].as_f64().expect("λ₁"), case["lambda2"].as_f64().expect("λ₂"));
        for (s, x) in signals.iter().enumerate() {
            let (alpha, cost) = coder.code((&indices).into(), x, (l1, l2), CODE_TOL);
            let want = floats(&case["codes"][s]);
            for (a, w) in alpha.iter().zip(&want) {
                assert!((a - w).abs() < 1e-6, "λ = ({l1}, {l2}), signal {s}: {alpha:?} vs {want:?}");
            }
            let want_cost = case["costs"][s].as_f64().expect("cost");
            assert!(
                (cost - want_cost).abs() < 1e-8 * (1.0 + want_cost),
                "λ = ({l1}, {l2}), signal {s}: {cost} vs {want_cost}"
            );
        }
    }
}

mod common;

use common::{assert_has_lines, optc, text, write};

/// `optc check` describes a dictionary model (the spelling, with its squares file): the
/// dictionary, the loss, the structured penalty per atom, the ball, non-convexity, and SMM with
/// its batch and passes; `solve with smm(...)` sets them, another solver or option is refused.
#[test]
fn check_describes_a_dictionary_model() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "squares.txt", "1 2 9 10\n2 3 10 11\n");
    let head = "data  x: sparse\nvar   D: mat[dim(x), 64]\nparam λ = 0.1, γ = 1e-3\n\
                minimize E[sparse_code(x, D, λ, 0.01)] + γ·group_linf(groups(load(\"squares.txt\")), D)\n\
                st columns(D) ∈ L2Ball(1)\n";
    let model = write(dir.path(), "dict.opt", head);
    let out = optc(&["check", model.to_str().expect("utf-8")]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_has_lines(
        &text(&out.stdout),
        &[
            "variable    D: mat[dim(x), 64] — the dictionary, 64 atoms (its columns)",
            "term        γ·group_linf(groups(load(\"squares.txt\")), D)",
            "constraint  columns(D) ∈ L2Ball(1): each atom projected on the ball after the prox",
            "convex      no: bilinear in D and the codes; a stationary point, no duality gap",
        ],
    );
    assert!(text(&out.stdout).contains("solver      smm — dictionary learning: SMM on D averaging the batches' own costs at their codes (variational), mini-batches of 100, 1 pass:"));
    let set = write(dir.path(), "set.opt", &format!("{head}solve with smm(batch = 50, epochs = 3)\n"));
    let out = optc(&["check", set.to_str().expect("utf-8")]);
    assert!(text(&out.stdout).contains("mini-batches of 50, 3 passes:"), "{}", text(&out.stdout));
    let eq5 = write(dir.path(), "eq5.opt", &format!("{head}solve with smm(linearize = 1)\n"));
    let out = optc(&["check", eq5.to_str().expect("utf-8")]);
    assert!(
        text(&out.stdout).contains("SMM on D averaging the proximal-gradient surrogate (eq. 5), mini-batches of 100"),
        "{}",
        text(&out.stdout)
    );
    for (solve, says) in [
        ("solve with scd", "`scd` does not learn dictionaries"),
        ("solve with smm(linearize = 2)", "`linearize` is 0 or 1"),
        ("solve with smm(batch = 0)", "`batch` is a count of at least 1"),
        ("solve with smm(step = 1)", "smm on a dictionary does not take `step`"),
    ] {
        let bad = write(dir.path(), "bad.opt", &format!("{head}{solve}\n"));
        let out = optc(&["check", bad.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(1), "{solve}");
        assert!(text(&out.stderr).contains(says), "{solve}: {}", text(&out.stderr));
    }
    let both = write(dir.path(), "both.opt", &head.replace("+ γ·group_linf", "+ γ·l1(D) + γ·group_linf"));
    let out = optc(&["check", both.to_str().expect("utf-8")]);
    assert!(text(&out.stderr).contains("at most one of l1, group_l2 and group_linf"), "{}", text(&out.stderr));
    let data = write(dir.path(), "signals.svm", "0 1:0.5 2:0.25\n0 3:1\n");
    let plot = dir.path().join("a.svg");
    let out = optc(&[
        "run",
        set.to_str().expect("utf-8"),
        data.to_str().expect("utf-8"),
        "--plot",
        plot.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .contains("--plot draws the atoms as images of square signals (m = s², s > 1); these have m = 3"));
    let out = optc(&["path", model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), "--param", "λ"]);
    assert!(
        text(&out.stderr).contains("this command does not take a dictionary-learning model"),
        "{}",
        text(&out.stderr)
    );
}

/// Signals of 3 of 32 random unit atoms in ℝ⁶⁴ (weights N(0, 1)) plus noise of 0.01, written as
/// LIBSVM rows; the atoms, row-major 32 × 64.
fn planted(rows: usize) -> (String, Vec<f64>) {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
    let (k, m) = (32, 64);
    let normal = |rng: &mut rand_chacha::ChaCha8Rng| {
        let (u, v): (f64, f64) = (rng.gen_range(1e-12..1.0), rng.gen_range(0.0..1.0));
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    };
    let mut truth = vec![0.0; k * m];
    for a in 0..k {
        let atom = &mut truth[a * m..(a + 1) * m];
        atom.iter_mut().for_each(|v| *v = normal(&mut rng));
        let norm = atom.iter().map(|v| v * v).sum::<f64>().sqrt();
        atom.iter_mut().for_each(|v| *v /= norm);
    }
    let mut out = String::new();
    for _ in 0..rows {
        let mut x: Vec<f64> = (0..m).map(|_| 0.01 * normal(&mut rng)).collect();
        for _ in 0..3 {
            let (a, c) = (rng.gen_range(0..k), normal(&mut rng));
            for j in 0..m {
                x[j] += c * truth[a * m + j];
            }
        }
        let feats: Vec<String> = x.iter().enumerate().map(|(j, v)| format!("{}:{v}", j + 1)).collect();
        out.push_str(&format!("0 {}\n", feats.join(" ")));
    }
    (out, truth)
}

/// D as `--save` writes it: m rows of K values after the `#` lines.
fn read_dictionary(path: &std::path::Path) -> Vec<Vec<f64>> {
    std::fs::read_to_string(path)
        .expect("saved")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split_whitespace().map(|v| v.parse().expect("a number")).collect())
        .collect()
}

/// `optc run` learns a planted dictionary: 32 random unit atoms in ℝ⁶⁴, 4,000 signals of 3 of
/// them plus noise, five passes in batches of 100; at least 90% of the atoms are found with
/// |cos| ≥ 0.95 in the saved D. The interpreter saves the same D, to the bit. `optc plan`
/// prints the plan.
#[test]
fn run_learns_a_planted_dictionary_the_same_under_both_back_ends() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (signals, truth) = planted(4000);
    let data = write(dir.path(), "planted.svm", &signals);
    let model = write(
        dir.path(),
        "planted.opt",
        "data x: sparse\nvar D: mat[dim(x), 32]\nminimize E[sparse_code(x, D, 0.1, 0.01)]\nst columns(D) ∈ L2Ball(1)\nsolve with smm(batch = 100, epochs = 5)\n",
    );
    let (jit, interp) = (dir.path().join("jit.txt"), dir.path().join("interp.txt"));
    let (m, d) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"));
    let out = optc(&["run", m, d, "--save", jit.to_str().expect("utf-8"), "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!((report["epochs"].as_u64(), report["atoms"].as_u64()), (Some(5), Some(32)));
    assert!(report["gap"].is_null());
    assert_eq!(report["status"], "max_epochs");
    // No gap bounds a non-convex cost: a tolerance is refused, not ignored.
    let out = optc(&["run", m, d, "--tol", "1e-3"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--tol does not take a dictionary model"), "{}", text(&out.stderr));
    let plot = dir.path().join("atoms.svg");
    let out = optc(&[
        "run",
        m,
        d,
        "--no-jit",
        "--save",
        interp.to_str().expect("utf-8"),
        "--plot",
        plot.to_str().expect("utf-8"),
        "--quiet",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    // The atoms as 32 images of 8 × 8 squares, on a white ground.
    let svg = std::fs::read_to_string(&plot).expect("the plot");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<rect").count(), 32 * 64 + 1);
    assert_eq!(std::fs::read(&jit).expect("jit"), std::fs::read(&interp).expect("interp"), "the back ends disagree");
    let found = atoms_found(&jit, &truth);
    assert!(found * 10 >= 9 * 32, "found {found} of 32");
    let out = optc(&["plan", m]);
    assert!(text(&out.stdout).contains("dictionary(D[0..d, 0..k], B = B, A = A"), "{}", text(&out.stdout));
}

/// How many of the 32 planted atoms a saved D finds with |cos| ≥ 0.95.
fn atoms_found(saved: &std::path::Path, truth: &[f64]) -> usize {
    let rows = read_dictionary(saved);
    assert_eq!((rows.len(), rows[0].len()), (64, 32));
    (0..32)
        .filter(|&a| {
            (0..32).any(|b| {
                let norm = rows.iter().map(|r| r[b] * r[b]).sum::<f64>().sqrt();
                let dot: f64 = (0..64).map(|j| truth[a * 64 + j] * rows[j][b]).sum();
                norm > 0.0 && dot.abs() / norm >= 0.95
            })
        })
        .count()
}

/// `--stream` learns the planted dictionary a block of rows at a time (blocks of 700 rows, so a
/// pass is six blocks and the batches do not divide them): at least 90% of the atoms found, the
/// JIT and the interpreter save the same bits, and the report says it streamed. The ℓ(x, D) it
/// reports is the whole file's: within 1e-9 of what `optc predict` computes from the saved D.
/// eq. 5's surrogate (`linearize = 1`) runs too, and `--plot` writes a PNG.
#[test]
fn stream_learns_a_planted_dictionary_a_block_at_a_time() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (signals, truth) = planted(4000);
    let data = write(dir.path(), "planted.svm", &signals);
    let body =
        "data x: sparse\nvar D: mat[dim(x), 32]\nminimize E[sparse_code(x, D, 0.1, 0.01)]\nst columns(D) ∈ L2Ball(1)\n";
    let model = write(dir.path(), "planted.opt", &format!("{body}solve with smm(epochs = 5)\n"));
    let (m, d) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"));
    let saved = |name: &str| dir.path().join(name);
    let run = |extra: &[&str], out: &std::path::Path| {
        let mut args = vec!["run", m, d, "--stream", "--block-rows", "700", "--json", "--quiet"];
        args.extend_from_slice(&["--save", out.to_str().expect("utf-8")]);
        args.extend_from_slice(extra);
        let out = optc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).expect("json")
    };
    let png = saved("atoms.png");
    let report = run(&["--plot", png.to_str().expect("utf-8")], &saved("jit.txt"));
    assert_eq!(report["streamed"], true);
    assert_eq!((report["epochs"].as_u64(), report["rows"].as_u64()), (Some(5), Some(4000)));
    let image = std::fs::read(&png).expect("the plot");
    assert_eq!(&image[..8], b"\x89PNG\r\n\x1a\n");
    run(&["--no-jit"], &saved("interp.txt"));
    assert_eq!(std::fs::read(saved("jit.txt")).expect("jit"), std::fs::read(saved("interp.txt")).expect("interp"));
    let found = atoms_found(&saved("jit.txt"), &truth);
    assert!(found * 10 >= 9 * 32, "found {found} of 32");
    let out = optc(&["predict", saved("jit.txt").to_str().expect("utf-8"), d, "--out", "-"]);
    let printed: f64 = text(&out.stderr)
        .split("mean cost ℓ(x, D) = ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("the mean cost");
    assert!((printed - report["loss"].as_f64().expect("loss")).abs() < 1e-6, "{printed} vs {report}");
    let eq5 = write(dir.path(), "eq5.opt", &format!("{body}solve with smm(epochs = 5, linearize = 1)\n"));
    let out = optc(&["run", eq5.to_str().expect("utf-8"), d, "--stream", "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let linearized: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(linearized["solver_reason"].as_str().is_some_and(|r| r.contains("eq. 5")), "{linearized}");
}

/// A saved dictionary round-trips: `--test` reports the held-out mean cost (and `--trace` it per
/// epoch), `optc predict` writes one code per signal as `j:αⱼ` pairs and prints the same mean
/// cost, and `--init` continues from the saved D to a lower cost than the first pass reached.
#[test]
fn a_saved_dictionary_codes_new_signals_and_starts_a_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (signals, _) = planted(1200);
    let (train, test): (Vec<&str>, Vec<&str>) = {
        let lines: Vec<&str> = signals.lines().collect();
        (lines[..1000].to_vec(), lines[1000..].to_vec())
    };
    let data = write(dir.path(), "train.svm", &(train.join("\n") + "\n"));
    let held = write(dir.path(), "test.svm", &(test.join("\n") + "\n"));
    let model = write(
        dir.path(),
        "m.opt",
        "data x: sparse\nvar D: mat[dim(x), 32]\nminimize E[sparse_code(x, D, 0.1, 0.01)]\nst columns(D) ∈ L2Ball(1)\n",
    );
    let path = |name: &str| dir.path().join(name).to_str().expect("utf-8").to_string();
    let (m, d, t) = (model.to_str().expect("utf-8"), data.to_str().expect("utf-8"), held.to_str().expect("utf-8"));
    let (saved, trace, codes) = (path("D.txt"), path("trace.csv"), path("codes.txt"));
    let out = optc(&["run", m, d, "--test", t, "--trace", &trace, "--save", &saved, "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let first: Value = serde_json::from_slice(&out.stdout).expect("json");
    let test_cost = first["test_loss"].as_f64().expect("a held-out cost");
    let csv = std::fs::read_to_string(&trace).expect("trace");
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.lines().nth(1).is_some_and(|l| l.starts_with("1,") && !l.ends_with(',')), "{csv}");
    let out = optc(&["predict", &saved, t, "--out", &codes]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stderr);
    let printed: f64 = said
        .split("mean cost ℓ(x, D) = ")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("the mean cost");
    assert!((printed - test_cost).abs() < 1e-6, "{printed} vs {test_cost}");
    let lines = std::fs::read_to_string(&codes).expect("codes");
    assert_eq!(lines.lines().count(), 200);
    for line in lines.lines() {
        for pair in line.split_whitespace() {
            let (j, a) = pair.split_once(':').expect("j:α");
            let (j, a): (usize, f64) = (j.parse().expect("j"), a.parse().expect("α"));
            assert!((1..=32).contains(&j) && a != 0.0, "{pair}");
        }
    }
    let out = optc(&["run", m, d, "--init", &saved, "--json", "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let again: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert!(again["objective"].as_f64() < first["objective"].as_f64(), "{again} vs {first}");
    let wrong = write(dir.path(), "wrong.opt", &std::fs::read_to_string(&model).expect("model").replace("32]", "16]"));
    let out = optc(&["run", wrong.to_str().expect("utf-8"), d, "--init", &saved]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("a dictionary of 64 × 32 where the model and data have 64 × 16"),
        "{}",
        text(&out.stderr)
    );
}
