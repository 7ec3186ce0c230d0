//! SCD (docs/algorithms.md §5): parameter-free coordinate steps over a fresh permutation of the
//! columns each epoch, with z = Xw maintained so a step costs O(nnz of column j):
//!
//!   gⱼ = (c/m)·Σᵢ xᵢⱼ·ℓ′(yᵢ, zᵢ),  βⱼ = c·β·(1/m)·Σᵢ xᵢⱼ²,  wⱼ⁺ = prox_{r/βⱼ}(wⱼ − gⱼ/βⱼ),
//!   zᵢ += (wⱼ⁺ − wⱼ)·xᵢⱼ.
//!
//! βⱼ bounds the curvature of the loss along coordinate j, so the step never overshoots; for
//! the squared loss (β = 1) it is the exact coordinate minimiser. `init` computes βⱼ and
//! z = Xw from the weights, which is also what makes a warm start exact.
//!
//! Where ℓ″ is not constant (logistic) and `newton` is on (the default), the plan is the
//! Newton-type variant of [`super::newton`] instead.

use super::super::build::*;
use super::super::{Len, ParamInit, Plan, Range, ScalarRole, Stmt, VecRole};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let probe = Builder::new(model, SolverKind::Scd, false, prox, None);
    // Huber's ℓ″ is 0 on every row whose residual is beyond δ, possibly all of them (at w = 0
    // on labels far from 0): Newton's model is then unbounded, and only its line search holds
    // the step. The curvature bound β = 1 majorizes F along each coordinate instead, and every
    // step descends (skglm's Huber datafit takes the same steps).
    let huber = model.loss.def.known() == Some(crate::stdlib::KnownLoss::Huber);
    if st.settings.newton != Some(false) && !huber {
        if let Some(d2) = probe.second_derivative(model, st) {
            return super::newton::lower(model, st, prox, &d2);
        }
    }
    // ℓ′ affine in the margin (a quadratic loss): the intercept optimal for w follows each
    // column step in closed form, below.
    let quadratic = probe.second_derivative(model, st).is_none();
    let mut b = probe;
    let (y, w) = b.labels_and_weights();
    let c = model.loss.coef.value;
    let beta = st.smooth.expect("SCD is only chosen for smooth losses");
    let z = b.vector("z", Len::Rows, VecRole::State, 0.0);
    let betaj = b.vector("βj", Len::Features, VecRole::State, 0.0);
    let curv = b.scalar(
        "κ",
        ScalarRole::Param,
        ParamInit::PerRow { scale: c * beta },
        "c·β/m: βj = κ·Σᵢ xᵢⱼ², the curvature bound along coordinate j",
    );
    let mean = b.per_example_weight(model);
    let q = b.local("q");
    let g = b.local("g");
    let wn = b.local("wn");
    let delta = b.local("δ");
    let a = b.local("a");
    let (i, j) = (super::super::Index::Row, super::super::Index::Feature);

    // With a quadratic loss and an intercept, z = Xw and the margin is z + b: b then moves
    // after every column step at O(1) (the means x̄ⱼ), never touching z. Otherwise z = Xw + b.
    // With the rows' weights ωᵢ the curvatures and the means are weighted: βj = κ·Σᵢ ωᵢxᵢⱼ²,
    // x̄ⱼ = Σᵢ ωᵢxᵢⱼ / Σᵢ ωᵢ (docs/algorithms.md §12).
    let weight = b.row_weights();
    let weighted = |e: Expr| match weight {
        Some(sw) => mul(e, at(sw, i)),
        None => e,
    };
    let follow = b.intercept().filter(|_| quadratic).map(|slot| {
        let inv_m = match weight {
            Some(_) => b.state("1/Σω", "for the column means: 1 over the rows' total weight"),
            None => b.scalar("1/m", ScalarRole::Param, ParamInit::PerRow { scale: 1.0 }, "for the column means"),
        };
        (slot, b.vector("x̄", Len::Features, VecRole::State, 0.0), inv_m, b.local("p"))
    });
    let margin = match follow {
        Some((slot, ..)) => add(at(z, i), s(slot)),
        None => at(z, i),
    };

    // init: z = Xw (+ b) and βj, in one pass over the columns.
    let z0 = b.intercept().filter(|_| follow.is_none()).map_or(k(0.0), s);
    let mut per_entry = vec![
        Stmt::Set(q, add(s(q), weighted(mul(Expr::Value, Expr::Value)))),
        Stmt::Store(z, i, add(at(z, i), mul(Expr::Value, at(w, j)))),
    ];
    let mut per_column = vec![Stmt::Set(q, k(0.0))];
    if let Some((.., p)) = follow {
        per_entry.push(Stmt::Set(p, add(s(p), weighted(Expr::Value))));
        per_column.push(Stmt::Set(p, k(0.0)));
    }
    per_column.extend([each(Range::ColNonZeros, per_entry), Stmt::Store(betaj, j, mul(s(curv), s(q)))]);
    if let Some((_, means, inv_m, p)) = follow {
        // Along wⱼ with b following, F's curvature is that of the centred column:
        // κ·(Σᵢ xᵢⱼ² − m·x̄ⱼ²), the exact coordinate minimiser of the profiled quadratic (the
        // uncentred bound steps short and zigzags with b). Kept ≥ 1e-12 of the uncentred one:
        // a constant column has none, and rounding must not make it a huge step.
        per_column.push(Stmt::Store(means, j, mul(s(p), s(inv_m))));
        let centred = sub(s(q), mul(s(p), at(means, j)));
        let floor = mul(k(1e-12), s(q));
        per_column.push(Stmt::Store(betaj, j, mul(s(curv), call(Func::Max, vec![centred, floor]))));
    }
    b.plan.init = vec![each(Range::Upto(Len::Rows), vec![Stmt::Store(z, i, z0)])];
    if let (Some(sw), Some((_, _, inv, p))) = (weight, follow) {
        b.plan.init.extend([
            Stmt::Set(p, k(0.0)),
            each(Range::Upto(Len::Rows), vec![Stmt::Set(p, add(s(p), at(sw, i)))]),
            Stmt::Set(inv, select_positive(s(p))),
        ]);
    }
    b.plan.init.push(each(Range::Upto(Len::Features), per_column));

    // epoch: one coordinate step per column, in this epoch's order.
    let dloss = b.dloss(model, st, y, margin.clone());
    let step = vec![
        Stmt::Set(g, k(0.0)),
        each(Range::ColNonZeros, vec![Stmt::Set(g, add(s(g), mul(Expr::Value, dloss)))]),
        Stmt::Set(g, mul(s(g), s(mean))),
        Stmt::Guard(s(g), "the partial derivative gⱼ".into()),
        Stmt::Set(wn, b.coordinate_prox(sub(at(w, j), div(s(g), at(betaj, j))), div(k(1.0), at(betaj, j)))),
        Stmt::Set(delta, sub(s(wn), at(w, j))),
        if_moved(
            delta,
            [Stmt::Store(w, j, s(wn)), col_axpy(z, delta)]
                .into_iter()
                // b = argmin F(w, ·) moves by −δ·x̄ⱼ when wⱼ moves by δ (ℓ′ is affine).
                .chain(follow.map(|(slot, means, ..)| Stmt::Set(slot, sub(s(slot), mul(s(delta), at(means, j))))))
                .collect(),
        ),
    ];
    // A column with no non-zeros has βj = 0 and no gradient: it keeps its weight.
    b.plan.epoch = vec![each(Range::Perm(Len::Features), vec![Stmt::If(Cmp::Gt, at(betaj, j), k(0.0), step)])];
    if let Some(intercept) = b.intercept() {
        // The intercept is one more coordinate, its column all ones: curvature bound c·β, no
        // prox. O(m) per epoch, next to the epoch's O(nnz).
        let beta_b = match weight {
            Some(_) => b.scalar(
                "βb",
                ScalarRole::Param,
                ParamInit::MeanWeight { scale: c * beta },
                "c·β·Σωᵢ/m: the curvature bound along the intercept",
            ),
            None => b.param("βb", c * beta, "c·β: the curvature bound along the intercept"),
        };
        let dloss = b.dloss(model, st, y, margin);
        let mut moved = vec![Stmt::Set(intercept, add(s(intercept), s(delta)))];
        if follow.is_none() {
            moved.push(each(Range::Upto(Len::Rows), vec![Stmt::Store(z, i, add(at(z, i), s(delta)))]));
        }
        let exact_step = vec![
            Stmt::Set(g, k(0.0)),
            each(Range::Upto(Len::Rows), vec![Stmt::Set(g, add(s(g), dloss))]),
            Stmt::Set(g, mul(s(g), s(mean))),
            Stmt::Guard(s(g), "the derivative along the intercept".into()),
            Stmt::Set(delta, Expr::Neg(Box::new(div(s(g), s(beta_b))))),
            if_moved(delta, moved),
        ];
        // Following b column by column starts from b optimal for the weights (a warm start's
        // too); the step at the end of each epoch also clears the rounding the following
        // accumulates.
        if follow.is_some() {
            b.plan.init.extend(exact_step.clone());
        }
        b.plan.epoch.extend(exact_step);
    }
    b.report(model, st, w, y, a);
    b.plan
}

use super::super::Expr;

/// 1/t for t > 0, else 0 (every weight 0: no mean to take).
fn select_positive(t: Expr) -> Expr {
    Expr::Select(Cmp::Gt, Box::new(t.clone()), Box::new(k(0.0)), Box::new(div(k(1.0), t)), Box::new(k(0.0)))
}
