//! Lowered plans pass the verifier, and plans broken by hand do not: tests of `plan::verify`
//! on plans this pipeline lowers (here, since the plan layer does not import the pipeline).

use super::{front_end, plan as lower, CompileOptions};
use crate::plan::verify::verify;
use crate::plan::*;
use crate::source::SourceFile;

fn plan_of(text: &str) -> Plan {
    let file = SourceFile::new("t.opt", text);
    let c = front_end(&file, &crate::stdlib::Library::standard(), &CompileOptions::default()).expect("checks");
    lower(&c, &CompileOptions::default()).expect("plans")
}

#[test]
fn lowered_plans_verify_and_broken_ones_do_not() {
    let mut p = plan_of(
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistic(y, <x, w>)] + 0.1·elastic(w, 1) st w ≥ 0\n",
    );
    assert_eq!(verify(&p), Ok(()));
    let w = p.weights().expect("weights");
    p.finish.push(Stmt::Store(w, Index::Row, Expr::Const(0.0)));
    assert!(verify(&p).is_err(), "w[i] with w of length d");
    p.finish.pop();
    p.finish.push(Stmt::For(Range::Upto(Len::Features), vec![Stmt::Store(w, Index::Feature, Expr::Value)]));
    assert_eq!(verify(&p), Err("`v` outside `row(X, i)` or `col(Xc, j)`".into()));
    p.finish.pop();
    p.finish.push(Stmt::For(Range::ColNonZeros, vec![]));
    assert_eq!(verify(&p), Err("`col(Xc, j)` outside a loop that binds its index".into()));
    p.finish.pop();
    p.finish.push(Stmt::For(Range::Perm(Len::Rows), vec![]));
    assert_eq!(verify(&p), Err("`perm(·)` outside the epoch".into()));
    p.finish.pop();
    // Rank 2: a matrix over (d, k) needs both indices, each of its own dimension, in scope.
    p.vectors.push(crate::plan::VecDecl {
        name: "W".into(),
        len: Len::Features,
        cols: Some(Len::Classes),
        role: VecRole::State,
        init: 0.0,
    });
    let m = VecId(p.vectors.len() - 1);
    let over =
        |body: Vec<Stmt>| Stmt::For(Range::Upto(Len::Features), vec![Stmt::For(Range::Upto(Len::Classes), body)]);
    p.finish.push(over(vec![Stmt::StoreAt(m, Index::Feature, Index::Class, Expr::Idx(Index::Class))]));
    assert_eq!(verify(&p), Ok(()));
    p.finish.pop();
    p.finish.push(over(vec![Stmt::StoreAt(m, Index::Class, Index::Feature, Expr::Const(0.0))]));
    assert_eq!(verify(&p), Err("`W` indexed by the wrong loop variable `c`".into()));
    p.finish.pop();
    p.finish.push(Stmt::For(
        Range::Upto(Len::Features),
        vec![Stmt::StoreAt(m, Index::Feature, Index::Class, Expr::Const(0.0))],
    ));
    assert_eq!(verify(&p), Err("`W[c]` outside a loop over k".into()));
    p.finish.pop();
    p.finish.push(over(vec![Stmt::Store(m, Index::Feature, Expr::Const(0.0))]));
    assert_eq!(verify(&p), Err("`W` is a matrix, indexed as a vector".into()));
    p.finish.pop();
    let row = crate::plan::Slice { buf: m, row: Some(Index::Feature) };
    p.finish.push(Stmt::Call(crate::plan::Routine::ShrinkL2, row, Expr::Const(1.0)));
    assert_eq!(verify(&p), Err("`W[j, ·]` outside a loop over d".into()));
    p.finish.pop();
    // The group shrink writes a state vec[d] in place, with a γ evaluated where it stands.
    p.finish.push(Stmt::GroupShrink(w, Expr::Const(0.1)));
    assert_eq!(verify(&p), Ok(()));
    p.finish.pop();
    let y = p.labels().expect("labels");
    p.finish.push(Stmt::GroupShrink(y, Expr::Const(0.1)));
    assert_eq!(verify(&p), Err("`group_shrink` on `y`, which is not a state vec[d]".into()));
    p.finish.pop();
    p.finish.push(Stmt::GroupShrink(m, Expr::Const(0.1)));
    assert_eq!(verify(&p), Err("`group_shrink` on `W`, which is not a state vec[d]".into()));
    p.finish.pop();
    p.finish.push(Stmt::GroupShrink(w, Expr::Value));
    assert_eq!(verify(&p), Err("`v` outside `row(X, i)` or `col(Xc, j)`".into()));
    p.finish.pop();
    p.finish.push(Stmt::For(Range::Upto(Len::Classes), vec![Stmt::Store(w, Index::Feature, Expr::Const(0.0))]));
    assert_eq!(verify(&p), Err("`w[j]` outside a loop over d".into()));
}

/// Analysing the checked model again with a solver forced gives what compiling the text with
/// that solver gives: the streamed and ranked runs' fallbacks rely on it, and no longer parse
/// the text or read its files again.
#[test]
fn a_forced_solver_on_the_checked_model_matches_a_fresh_compile() {
    let lib = crate::stdlib::Library::standard();
    let models = [
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.01\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nvar b: scalar\nminimize E[logistic(y, <x, w> + b)] + 0.1·l2sq(w)\n",
        "data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[hinge(y, <x, w>)] + 0.01·l1(w) st w ≥ 0\n",
    ];
    let forced: [(&str, Vec<(String, f64)>); 5] = [
        ("adagrad", vec![("rda".into(), 1.0)]),
        ("smm", vec![]),
        ("fobos", vec![]),
        ("tron", vec![]),
        ("proxgrad", vec![]),
    ];
    let mut compared = 0;
    for text in models {
        let file = SourceFile::new("t.opt", text);
        let checked = front_end(&file, &lib, &CompileOptions::default()).expect("compiles");
        for (solver, options) in &forced {
            let opts = CompileOptions {
                solver: Some(solver.to_string()),
                solver_options: options.clone(),
                ..Default::default()
            };
            let again =
                super::with_solver(&checked, &opts).map(|c| (format!("{:?}", c.structure), format!("{:?}", c.model)));
            let fresh = front_end(&file, &lib, &opts).map(|c| (format!("{:?}", c.structure), format!("{:?}", c.model)));
            match (again, fresh) {
                (Ok(a), Ok(f)) => {
                    assert_eq!(a, f, "{solver} on {text}");
                    compared += 1;
                }
                (Err(a), Err(f)) => assert_eq!(format!("{a:?}"), format!("{f:?}"), "{solver} on {text}"),
                (a, f) => panic!("{solver} on {text}: {:?} against {:?}", a.is_ok(), f.is_ok()),
            }
        }
    }
    assert!(compared >= 5, "only {compared} pairs compiled");
}
