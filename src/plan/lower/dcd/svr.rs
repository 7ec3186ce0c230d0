//! Dual coordinate descent for the regression losses whose dual is a box (Ho & Lin, JMLR 2012;
//! LIBLINEAR's `-s 13` and `-s 12`; docs/algorithms.md §11). With C = c/(λm) and βᵢ = −C·uᵢ
//! (uᵢ the dual point in ℓ′'s units), F(w) = c·(1/m)·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩) + λ·½‖w‖² has the dual
//!
//!   min over lo ≤ βᵢ ≤ hi of  ½‖Σᵢ βᵢxᵢ‖² + (δ/2)·Σᵢ βᵢ² − Σᵢ βᵢyᵢ + ε·Σᵢ |βᵢ|,   w(β) = Σᵢ βᵢxᵢ,
//!
//! with, from each loss's conjugate (ALGORITHMS.md §12):
//!
//! | loss | [lo, hi] | δ | ε |
//! |---|---|---|---|
//! | `eps_insensitive(y, a, ε)` | [−C, C] | 0 | ε |
//! | `squared_eps_insensitive(y, a, ε)` | ℝ | 1/(2C) | ε |
//! | `quantile(y, a, τ)` | [−(1 − τ)·C, τ·C] | 0 | 0 |
//!
//! One step takes βᵢ to the exact minimiser along it of the model with its kink at 0: with
//! G = ⟨xᵢ, w⟩ − yᵢ + δβᵢ and H = ‖xᵢ‖² + δ, the step is −(G + ε)/H where that stays above 0,
//! −(G − ε)/H where that stays below, else to 0, then clipped into the box (LIBLINEAR's rule).
//! Every β is dual-feasible, so the certificate reads its point uᵢ = −βᵢ/C directly.

use super::super::super::build::*;
use super::super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarRole, Stmt, VecRole};
use super::super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::stdlib::KnownLoss;
use crate::symbolic::{Cmp, Func};

/// A step below this moves nothing (LIBLINEAR's 1e-12).
const MOVES: f64 = 1e-12;
/// H is at least this: an empty row of a loss without δ steps straight to its box's end.
const H_FLOOR: f64 = 1e-12;

/// The dual's box and terms for one loss: [lo, hi] as multiples of C (None: unbounded), δ·C
/// (the diagonal times C), and ε.
struct Shape {
    lo: Option<f64>,
    hi: Option<f64>,
    delta_c: f64,
    eps: f64,
}

/// The shape of the dual of `model`'s loss, for the losses this plan takes.
fn shape(model: &Model) -> Option<Shape> {
    let first = model.loss.def.bound.first().copied();
    Some(match model.loss.def.known()? {
        KnownLoss::EpsInsensitive => Shape { lo: Some(-1.0), hi: Some(1.0), delta_c: 0.0, eps: first? },
        KnownLoss::SquaredEpsInsensitive => Shape { lo: None, hi: None, delta_c: 0.5, eps: first? },
        KnownLoss::Quantile => {
            let tau = first?;
            Shape { lo: Some(tau - 1.0), hi: Some(tau), delta_c: 0.0, eps: 0.0 }
        }
        _ => return None,
    })
}

/// Whether this plan takes `model`'s loss.
pub(in super::super) fn fits(model: &Model) -> bool {
    shape(model).is_some()
}

pub(in super::super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let sh = shape(model).expect("the analysis chose dual CD for a box-dual regression loss");
    let mut b = Builder::new(model, SolverKind::Dcd, false, prox, None);
    let (i, j) = (Index::Row, Index::Feature);
    let c = model.loss.coef.value;
    let (y, w) = b.labels_and_weights();
    let cap = b.scalar("C", ScalarRole::Param, ParamInit::PerRow { scale: c / prox.l2 }, "c/(λm): LIBLINEAR's C");
    // With the rows' weights ωᵢ, row i's C is C·ωᵢ: its box scales, and δ is 1/(2C·ωᵢ); a row of
    // weight 0 is held at βᵢ = 0.
    let weight = b.row_weights();
    let row_cap = match weight {
        Some(sw) => mul(s(cap), at(sw, i)),
        None => s(cap),
    };
    let held = |e: Expr| match weight {
        Some(sw) => select(at(sw, i), Cmp::Gt, k(0.0), e, k(0.0)),
        None => e,
    };
    let end = |side: Option<f64>, infinite: f64| match side {
        Some(f) => held(mul(k(f), row_cap.clone())),
        None => held(k(infinite)),
    };
    let (lo, hi) = (end(sh.lo, f64::NEG_INFINITY), end(sh.hi, f64::INFINITY));
    let delta = (sh.delta_c > 0.0).then(|| held(div(k(sh.delta_c), row_cap.clone())));
    let clip = |v: Expr| call(Func::Min, vec![call(Func::Max, vec![v, lo.clone()]), hi.clone()]);
    let beta = b.vector("β", Len::Rows, VecRole::State, 0.0);
    let q = b.vector("H", Len::Rows, VecRole::State, 0.0);
    let (a, g, step, next) = (b.local("a"), b.local("G"), b.local("Δ"), b.local("βn"));

    // init: H = ‖xᵢ‖² + δ; β into its box (a path's next λ moves C); w = Σ βᵢxᵢ.
    let diag = delta.as_ref().map_or(s(a), |d| add(s(a), d.clone()));
    b.plan.init = vec![
        each(
            Range::Upto(Len::Rows),
            vec![
                Stmt::Set(a, k(0.0)),
                each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, Expr::Value)))]),
                Stmt::Store(q, i, call(Func::Max, vec![diag, k(H_FLOOR)])),
                Stmt::Store(beta, i, clip(at(beta, i))),
            ],
        ),
        each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, k(0.0))]),
        each(
            Range::Upto(Len::Rows),
            vec![
                Stmt::Set(step, at(beta, i)),
                if_moved(
                    step,
                    vec![each(Range::RowNonZeros, vec![Stmt::Store(w, j, add(at(w, j), mul(s(step), Expr::Value)))])],
                ),
            ],
        ),
    ];

    // epoch: one step per row, in this epoch's order.
    let gradient = sub(s(a), at(y, i));
    let gradient = match &delta {
        Some(d) => add(gradient, mul(d.clone(), at(beta, i))),
        None => gradient,
    };
    let newton = if sh.eps > 0.0 {
        let hb = mul(at(q, i), at(beta, i));
        let (gp, gn) = (add(s(g), k(sh.eps)), sub(s(g), k(sh.eps)));
        let to_zero = Expr::Neg(Box::new(at(beta, i)));
        let below = select(gn.clone(), Cmp::Gt, hb.clone(), Expr::Neg(Box::new(div(gn, at(q, i)))), to_zero);
        select(gp.clone(), Cmp::Lt, hb, Expr::Neg(Box::new(div(gp, at(q, i)))), below)
    } else {
        // No kink at 0 (the pinball loss): the plain Newton step.
        Expr::Neg(Box::new(div(s(g), at(q, i))))
    };
    b.plan.epoch = vec![each(
        Range::Perm(Len::Rows),
        vec![
            Stmt::Set(a, k(0.0)),
            each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, at(w, j))))]),
            Stmt::Set(g, gradient),
            Stmt::Guard(s(g), "the dual gradient G = ⟨xᵢ, w⟩ − yᵢ + δβᵢ".into()),
            Stmt::Set(next, clip(add(at(beta, i), newton))),
            Stmt::Set(step, sub(s(next), at(beta, i))),
            Stmt::If(
                Cmp::Gt,
                call(Func::Abs, vec![s(step)]),
                k(MOVES),
                vec![
                    Stmt::Store(beta, i, s(next)),
                    each(Range::RowNonZeros, vec![Stmt::Store(w, j, add(at(w, j), mul(s(step), Expr::Value)))]),
                ],
            ),
        ],
    )];
    b.report(model, st, w, y, a);
    // The certificate's point: uᵢ = −βᵢ/C (−βᵢ/(C·ωᵢ) with the rows' weights, 0 for a row of
    // weight 0, whose term is out of the dual).
    b.plan.objective.dual = Some(held(div(Expr::Neg(Box::new(at(beta, i))), row_cap.clone())));
    b.plan.objective.dual_only = true;
    let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
    b.plan.info.summary = format!(
        "loss {}, R = {}: dual coordinate descent on {} (Ho & Lin 2012, LIBLINEAR's -s {}), w = Σ βᵢxᵢ",
        model.loss.def.name,
        regs.join(" + "),
        match (sh.lo, sh.hi) {
            (Some(lo), Some(hi)) if lo == -hi => format!("|βᵢ| ≤ {hi}·C"),
            (Some(lo), Some(hi)) => format!("{lo}·C ≤ βᵢ ≤ {hi}·C"),
            _ => "βᵢ ∈ ℝ, Q̄ = Q + I/(2C)".into(),
        },
        if sh.delta_c > 0.0 { 12 } else { 13 }
    );
    b.plan
}

fn select(l: Expr, cmp: Cmp, r: Expr, then: Expr, other: Expr) -> Expr {
    Expr::Select(cmp, Box::new(l), Box::new(r), Box::new(then), Box::new(other))
}
