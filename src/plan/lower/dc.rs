//! DC programming for F(w) = f(w) + λ·Σⱼ log(|wⱼ| + ε) (Mairal 2013 §4.2; docs/algorithms.md §8).
//! The penalty is concave in |w|, so its tangent at any θ, λ·Σⱼ ηⱼ·|wⱼ| with ηⱼ = 1/(|θⱼ| + ε)
//! (plus a constant), majorizes it: both solvers minimize weighted-ℓ1 surrogates, and differ in
//! how often the weights move.
//!
//! - Online DC (the default) is SMM (`super::smm`) whose surrogate of the penalty is that
//!   tangent at the last iterate, its weights averaged like the surrogates' points:
//!   η ← (1 − ω)·η + ω/(|θ| + ε), θ = soft(z̄, λ·η/L). No test tells a stochastic method on a
//!   non-convex F that it is done: the run ends at the epoch cap (or the time limit).
//! - Batch DC (`dc(batch = 1)`) is reweighted ℓ1: Newton-type SCD (`super::newton`) on the
//!   weighted problem until its optimality violation is small, then new weights at the
//!   solution. An epoch is one Newton iteration or, once the violation is under the target,
//!   one reweighting; the run ends when a reweighting moves no weight by more than tol
//!   (relative) and leaves the support as it was: a fixed point, not a certificate.
//!
//! Both report the non-convex F, and neither has a duality gap.

use super::super::build::*;
use super::super::{Expr, Index, Len, Plan, Range, ScalarRole, Stmt, Uncertified};
use super::{Builder, LowerOptions};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

/// The weighted problem counts as solved when every coordinate's optimality violation
/// |wⱼ − prox(wⱼ − ∇ⱼf)| is at most this fraction of ‖∇f(0)‖∞, the violation at w = 0 with no
/// penalty: a scale of the data's gradients that neither the weights nor a warm start change.
const KKT_TOL: f64 = 1e-6;
/// A floor under ‖∇f(0)‖∞ (a loss flat at 0), so the target is never 0.
const GRADIENT_FLOOR: f64 = 1e-12;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, opts: LowerOptions) -> Plan {
    if st.settings.batch {
        return batch(model, st, prox);
    }
    let mut plan = super::smm::lower_as(model, st, prox, opts, SolverKind::Dc);
    plan.uncertified = Uncertified::Caps;
    plan
}

fn batch(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let loss = &model.loss.def;
    let d1 = st.derivative.clone().expect("scalar losses have a derived ℓ′");
    // ℓ″ even where it is constant: for a quadratic loss the model is exact and the line search
    // takes the full step.
    let d2 = crate::symbolic::simplify(&crate::symbolic::derivative(&d1, &loss.margin));
    let n = super::newton::iteration(model, st, prox, &d2, SolverKind::Dc);
    let mut b: Builder = n.b;
    let (eta, t) = b.tangent().expect("labels_and_weights declares η for a logeps tangent");
    b.plan.info.summary.push_str(&format!(
        "; batch DC: Newton-type iterations on the weighted-ℓ1 problem until every optimality violation is ≤ {}·‖∇f(0)‖∞, then a reweighting ηⱼ = 1/(|wⱼ| + {})",
        crate::symbolic::fmt_num(KKT_TOL),
        crate::symbolic::fmt_num(t.eps)
    ));
    let (i, j) = (Index::Row, Index::Feature);
    let scale = b.state("‖∇f(0)‖∞", "the scale of the optimality violations (init)");
    let change = b.scalar(
        "Δη",
        ScalarRole::State,
        crate::plan::ParamInit::Value(1.0),
        "the last reweighting's largest relative change of a weight (1 where the support changed)",
    );
    let rounds = b.state("rounds", "reweightings so far");
    let (g, kkt, solved, fresh, moved) =
        (b.local("gj"), b.local("kkt"), b.local("solved"), b.local("ηn"), b.local("moved"));
    let inverse = |e: Expr| div(k(1.0), add(call(Func::Abs, vec![e]), k(t.eps)));
    // 1 for a coordinate in the support: its weight is below 1/ε, the weight of a zero.
    let in_support =
        |e: Expr| Expr::Select(Cmp::Lt, Box::new(e), Box::new(k(1.0 / t.eps)), Box::new(k(1.0)), Box::new(k(0.0)));

    // init: ‖∇f(0)‖∞ from ℓ′(yᵢ, 0), and the weights of the tangent at w (1/ε at w = 0).
    b.plan.init.extend([
        each(Range::Upto(Len::Rows), vec![Stmt::Store(n.q, i, mul(s(n.mean), b.dloss(model, st, n.y, k(0.0))))]),
        Stmt::Set(scale, k(GRADIENT_FLOOR)),
        each(
            Range::Upto(Len::Features),
            vec![
                Stmt::Set(g, k(0.0)),
                each(Range::ColNonZeros, vec![Stmt::Set(g, add(s(g), mul(Expr::Value, at(n.q, i))))]),
                Stmt::Set(scale, call(Func::Max, vec![s(scale), call(Func::Abs, vec![s(g)])])),
            ],
        ),
        each(Range::Upto(Len::Features), vec![Stmt::Store(eta, j, inverse(at(n.w, j)))]),
    ]);

    // epoch: measure; a Newton step while the weighted problem is unsolved, else reweight.
    let mut epoch = n.measure;
    let stationary = b.coordinate_prox(sub(at(n.w, j), at(n.gradient, j)), k(1.0));
    let violation = call(Func::Abs, vec![sub(at(n.w, j), stationary)]);
    epoch.extend([
        Stmt::Set(kkt, k(0.0)),
        each(Range::Perm(Len::Features), vec![Stmt::Set(kkt, call(Func::Max, vec![s(kkt), violation]))]),
        Stmt::Set(
            solved,
            Expr::Select(
                Cmp::Gt,
                Box::new(s(kkt)),
                Box::new(mul(k(KKT_TOL), s(scale))),
                Box::new(k(0.0)),
                Box::new(k(1.0)),
            ),
        ),
        Stmt::If(Cmp::Lt, s(solved), k(0.5), n.step),
    ]);
    let support_moved = call(Func::Abs, vec![sub(in_support(s(fresh)), in_support(at(eta, j)))]);
    let reweight = vec![
        Stmt::Set(change, k(0.0)),
        each(
            Range::Upto(Len::Features),
            vec![
                Stmt::Set(fresh, inverse(at(n.w, j))),
                Stmt::Set(moved, div(call(Func::Abs, vec![sub(s(fresh), at(eta, j))]), at(eta, j))),
                Stmt::Set(moved, call(Func::Max, vec![s(moved), support_moved])),
                Stmt::Set(change, call(Func::Max, vec![s(change), s(moved)])),
                Stmt::Store(eta, j, s(fresh)),
            ],
        ),
        Stmt::Set(rounds, add(s(rounds), k(1.0))),
    ];
    epoch.push(Stmt::If(Cmp::Gt, s(solved), k(0.5), reweight));
    b.plan.epoch = epoch;
    b.report(model, st, n.w, n.y, n.margin);
    b.plan.uncertified = Uncertified::Reweighting { change, rounds };
    b.plan
}
