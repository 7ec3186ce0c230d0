//! The augmented Lagrangian method for the hinge with ½‖w‖² (Yan & Li 2020, after SSNAL; docs/
//! algorithms.md §11): an epoch is one `alm` statement ([`Stmt::Alm`], `exec::alm::epoch`), whose
//! subproblem in (w, b) is solved by Newton steps on a dense Hessian of the features, and whose
//! multipliers are the dual variables 0 ≤ αᵢ ≤ C·ωᵢ of LIBLINEAR's dual, with C = c/(λm) as for
//! dual CD. A free b is one more Newton coordinate and a penalised one (`μ·l2sq(b)`) has its own
//! ridge μ/λ, so neither needs dual CD's augmented Lagrangian on Σᵢ αᵢyᵢ = 0.
//!
//! The certificate is dual CD's: uᵢ = −yᵢαᵢ/(C·ωᵢ) is in ℓ*'s domain at every epoch, balanced for
//! a free b, and F(w, b) − D(u) is the gap.

use super::super::build::*;
use super::super::{AlmCall, Expr, Index, Len, ParamInit, Plan, ScalarRole, Stmt, VecRole};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let mut b = Builder::new(model, SolverKind::Alm, false, prox, None);
    let i = Index::Row;
    let c = model.loss.coef.value;
    let (y, w) = b.labels_and_weights();
    let cap = b.scalar("C", ScalarRole::Param, ParamInit::PerRow { scale: c / prox.l2 }, "c/(λm): LIBLINEAR's C");
    let weight = b.row_weights();
    let ridge_b = model.intercept_l2.as_ref().map_or(k(0.0), |r| k(r.coef / prox.l2));
    let alpha = b.vector("α", Len::Rows, VecRole::State, 0.0);
    let sigma = b.state("σ", "the augmented Lagrangian's penalty: set at the first epoch, doubled after each");
    let estimate = b.state("gap?", "the relative gap the epoch expects at its end: the driver checks near --tol");
    let a = b.local("a");
    let row_cap = match weight {
        Some(sw) => select(at(sw, i), Cmp::Gt, k(0.0), mul(s(cap), at(sw, i)), k(0.0)),
        None => s(cap),
    };
    // init: the multipliers into their boxes (a path's next λ moves C), σ to be set.
    b.plan.init = vec![
        each(
            super::super::Range::Upto(Len::Rows),
            vec![Stmt::Store(
                alpha,
                i,
                call(Func::Min, vec![call(Func::Max, vec![at(alpha, i), k(0.0)]), row_cap.clone()]),
            )],
        ),
        Stmt::Set(sigma, k(0.0)),
    ];
    let epoch = AlmCall {
        weights: w,
        intercept: b.intercept(),
        ridge_b,
        multipliers: alpha,
        sigma,
        cap: s(cap),
        estimate,
        labels: y,
        row_weights: weight,
    };
    b.plan.epoch = vec![Stmt::Alm(epoch)];
    b.plan.estimate = Some(estimate);
    b.report(model, st, w, y, a);
    // The dual iterate is the certificate's point, as dual CD's: uᵢ = −yᵢαᵢ/(C·ωᵢ), 0 for a row of
    // weight 0, whose term is out of the dual.
    let u = div(Expr::Neg(Box::new(mul(at(y, i), at(alpha, i)))), row_cap);
    b.plan.objective.dual = Some(match weight {
        Some(sw) => select(at(sw, i), Cmp::Gt, k(0.0), u, k(0.0)),
        None => u,
    });
    b.plan.objective.dual_only = true;
    b.plan.info.summary = format!(
        "loss {}, R = {}: the augmented Lagrangian method on aᵢ = ⟨xᵢ, w⟩ + b, its multipliers 0 ≤ αᵢ ≤ C, each subproblem by Newton steps on I + σ·X̃ᵀX̃ over the rows inside their box (Yan & Li 2020)",
        model.loss.def.name,
        model.regs.iter().map(|r| r.text.as_str()).collect::<Vec<_>>().join(" + "),
    );
    b.plan
}

fn select(l: Expr, cmp: Cmp, r: Expr, then: Expr, other: Expr) -> Expr {
    Expr::Select(cmp, Box::new(l), Box::new(r), Box::new(then), Box::new(other))
}
