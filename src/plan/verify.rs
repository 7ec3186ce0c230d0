//! Structural invariants of a plan. The interpreter would only panic on a broken plan; compiled
//! code would read out of bounds, so the JIT refuses any plan that fails these checks.
//!
//! - every scalar and vector id exists; parameters and labels are never written;
//! - `vec[i]` only for vectors of length m and inside `for i in perm(m)`;
//! - `vec[j]` only for vectors of length d and inside `row(X, i)` or `0..d`;
//! - `v` only inside `row(X, i)`; `row(X, i)` only inside `perm(m)`;
//! - every intrinsic call has its arity.

use super::{Expr, Index, Len, Plan, ScalarId, ScalarRole, Stmt, VecId, VecRole};

#[derive(Clone, Copy, Default)]
struct Scope {
    row: bool,
    feature: bool,
    nonzero: bool,
}

pub fn verify(plan: &Plan) -> Result<(), String> {
    stmts(plan, &plan.epoch, Scope::default())?;
    stmts(plan, &plan.finish, Scope::default())?;
    let row_scope = Scope { row: true, ..Scope::default() };
    expr(plan, &plan.objective.loss, row_scope)?;
    scalar(plan, plan.objective.margin)?;
    expr(plan, &plan.objective.penalty, Scope { feature: true, ..Scope::default() })?;
    if let Some(t) = plan.step_counter {
        scalar(plan, t)?;
    }
    Ok(())
}

fn scalar(plan: &Plan, id: ScalarId) -> Result<(), String> {
    if id.0 < plan.scalars.len() {
        Ok(())
    } else {
        Err(format!("scalar #{} does not exist", id.0))
    }
}

fn vector(plan: &Plan, id: VecId, idx: Index, scope: Scope) -> Result<(), String> {
    let v = plan.vectors.get(id.0).ok_or_else(|| format!("vector #{} does not exist", id.0))?;
    match (idx, v.len) {
        (Index::Row, Len::Rows) if scope.row => Ok(()),
        (Index::Feature, Len::Features) if scope.feature => Ok(()),
        (Index::Row, Len::Rows) => Err(format!("`{}[i]` outside a loop over rows", v.name)),
        (Index::Feature, Len::Features) => Err(format!("`{}[j]` outside a loop over features", v.name)),
        _ => Err(format!("`{}` indexed by the wrong loop variable", v.name)),
    }
}

fn stmts(plan: &Plan, body: &[Stmt], scope: Scope) -> Result<(), String> {
    for s in body {
        match s {
            Stmt::Set(id, e) => {
                scalar(plan, *id)?;
                if plan.scalar(*id).role == ScalarRole::Param {
                    return Err(format!("parameter `{}` is assigned", plan.scalar(*id).name));
                }
                expr(plan, e, scope)?;
            }
            Stmt::Store(v, idx, e) => {
                vector(plan, *v, *idx, scope)?;
                if plan.vector(*v).role == VecRole::Labels {
                    return Err(format!("the labels `{}` are written", plan.vector(*v).name));
                }
                expr(plan, e, scope)?;
            }
            Stmt::ForRows(b) => {
                if scope.row {
                    return Err("nested loops over rows".into());
                }
                stmts(plan, b, Scope { row: true, ..scope })?;
            }
            Stmt::ForRowNonZeros(b) => {
                if !scope.row || scope.feature {
                    return Err("`row(X, i)` outside a loop over rows, or nested in a feature loop".into());
                }
                stmts(plan, b, Scope { feature: true, nonzero: true, ..scope })?;
            }
            Stmt::ForFeatures(b) => {
                if scope.feature {
                    return Err("nested loops over features".into());
                }
                stmts(plan, b, Scope { feature: true, nonzero: false, ..scope })?;
            }
            Stmt::If(_, l, r, b) => {
                expr(plan, l, scope)?;
                expr(plan, r, scope)?;
                stmts(plan, b, scope)?;
            }
            Stmt::Guard(e, _) => expr(plan, e, scope)?,
        }
    }
    Ok(())
}

fn expr(plan: &Plan, e: &Expr, scope: Scope) -> Result<(), String> {
    match e {
        Expr::Const(_) => Ok(()),
        Expr::Scalar(id) => scalar(plan, *id),
        Expr::Load(v, idx) => vector(plan, *v, *idx, scope),
        Expr::Value if scope.nonzero => Ok(()),
        Expr::Value => Err("`v` outside `row(X, i)`".into()),
        Expr::Neg(a) => expr(plan, a, scope),
        Expr::Bin(_, a, b) => {
            expr(plan, a, scope)?;
            expr(plan, b, scope)
        }
        Expr::Call(f, args) => {
            if args.len() != f.arity() {
                return Err(format!("`{}` takes {} argument(s), given {}", f.name(), f.arity(), args.len()));
            }
            args.iter().try_for_each(|a| expr(plan, a, scope))
        }
        Expr::Select(_, l, r, a, b) => [l, r, a, b].iter().try_for_each(|x| expr(plan, x, scope)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{front_end, plan as lower, CompileOptions};
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
        p.finish.push(Stmt::ForFeatures(vec![Stmt::Store(w, Index::Feature, Expr::Value)]));
        assert_eq!(verify(&p), Err("`v` outside `row(X, i)`".into()));
    }
}
