//! Dual coordinate descent for the ℓ2-regularized SVMs (Hsieh, Chang, Lin, Keerthi &
//! Sundararajan, ICML 2008; LIBLINEAR's `-s 3` and `-s 1`; docs/algorithms.md §11). With
//! C = c/(λm), F(w) = c·(1/m)·Σᵢ ℓ(yᵢ⟨xᵢ, w⟩) + λ·½‖w‖² is λ times LIBLINEAR's primal
//! ½‖w‖² + C·Σᵢ ℓ, whose dual is
//!
//!   max over 0 ≤ αᵢ ≤ U of  Σᵢ αᵢ − ½·αᵀQ̄α,   Q̄ᵢⱼ = yᵢyⱼ⟨xᵢ, xⱼ⟩ + δ·[i = j],
//!
//! (U, δ) = (C, 0) for hinge and (∞, 1/(2C)) for the squared hinge, and w(α) = Σᵢ αᵢyᵢxᵢ.
//! One step takes one αᵢ to the exact minimiser of the dual along it, clipped to [0, U]:
//!
//!   G = yᵢ⟨xᵢ, w⟩ − 1 + δ·αᵢ,  αᵢ⁺ = min(max(αᵢ − G/Q̄ᵢᵢ, 0), U),  w += (αᵢ⁺ − αᵢ)·yᵢ·xᵢ,
//!
//! O(nnz of the row), in a fresh permutation of the rows each epoch. LIBLINEAR's shrinking
//! leaves out of the next epochs an αᵢ at a bound whose gradient points out of the box by more
//! than the last epoch's extreme projected gradients (it will stay there); once the projected
//! gradients of the rows still in spread by less than ε, every row comes back, and once they
//! do so with every row in, ε is cut tenfold (LIBLINEAR would stop there; optc stops on the
//! certificate, so shrinking goes on at a finer scale).
//!
//! Every α is dual-feasible, so the certificate needs no rescaling: uᵢ = −yᵢαᵢ/C is in the
//! domain of ℓ*, and F(w) − D(u) = λ·(P(w) − D(α)) is the gap in F's units.

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};
use super::Builder;
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::stdlib::KnownLoss;
use crate::symbolic::{Cmp, Func};
use intercept::Intercept;

/// LIBLINEAR's default stopping tolerance on the spread of projected gradients: the first scale
/// at which the shrunk rows come back.
const SHRINK_START: f64 = 0.1;
/// The scale is cut by this factor each time the rows converge to it with none left out.
const SHRINK_CUT: f64 = 0.1;
/// A projected gradient below this moves nothing (LIBLINEAR's 1e-12).
const MOVES: f64 = 1e-12;
/// Q̄ᵢᵢ is at least this: an empty row of a hinge model then steps straight to αᵢ = C, its
/// optimum (its margin is 0 whatever w), instead of dividing by 0.
const Q_FLOOR: f64 = 1e-12;

mod intercept;
mod logistic;
mod svr;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    if svr::fits(model) {
        return svr::lower(model, st, prox);
    }
    let squared = model.loss.def.known() == Some(KnownLoss::SquaredHinge);
    let logistic = model.loss.def.known() == Some(KnownLoss::Logistic);
    let mut b = Builder::new(model, SolverKind::Dcd, false, prox, None);
    let (i, j) = (Index::Row, Index::Feature);
    let c = model.loss.coef.value;
    let (y, w) = b.labels_and_weights();
    let cap = b.scalar("C", ScalarRole::Param, ParamInit::PerRow { scale: c / prox.l2 }, "c/(λm): LIBLINEAR's C");
    // δ = 1/(2C) for the squared hinge: set by init, which knows C.
    let delta = squared.then(|| b.state("δ", "1/(2C): the squared hinge's diagonal of Q̄"));
    // With the rows' weights ωᵢ, row i's C is C·ωᵢ (docs/algorithms.md §12): the hinge's box is
    // [0, C·ωᵢ] and the squared hinge's δ is 1/(2C·ωᵢ). A row of weight 0 is held at αᵢ = 0.
    let weight = b.row_weights();
    let held = |e: Expr| match weight {
        Some(sw) => select(at(sw, i), Cmp::Gt, k(0.0), e, k(0.0)),
        None => e,
    };
    let row_cap = match weight {
        Some(sw) => mul(s(cap), at(sw, i)),
        None => s(cap),
    };
    let delta_at = |d: ScalarId| match weight {
        Some(sw) => held(div(s(d), at(sw, i))),
        None => s(d),
    };
    let upper = if squared { held(k(f64::INFINITY)) } else { row_cap.clone() };
    let alpha = b.vector("α", Len::Rows, VecRole::State, 0.0);
    let q = b.vector("Q", Len::Rows, VecRole::State, 0.0);
    // Logistic's α stay inside (0, C) (its dual has log αᵢ), where shrinking has no bound to
    // hold them at.
    let shrink = (st.settings.shrinking != Some(false) && !logistic).then(|| Shrink::declare(&mut b));
    let a = b.local("a");
    let g = b.local("G");
    let next = b.local("αn");
    let step = b.local("Δ");
    let (norm_w, sum_alpha) = (b.local("‖w‖₁"), b.local("Σα"));
    // b, free or `μ·l2sq(b)`: a coordinate of the dual's rows [xᵢ, t], under the augmented
    // Lagrangian of Σᵢ αᵢyᵢ = 0 when free (`intercept.rs`).
    let intercept = Intercept::declare(&mut b, model, prox.l2, "Σ αᵢyᵢ");
    let bias = intercept.as_ref().map(Intercept::pair);
    // Into the box: [0, U]; for logistic, LIBLINEAR's interior [ι, C − ι], ι = min(10⁻³·C, 10⁻⁸).
    let inside = call(Func::Min, vec![mul(k(1e-3), row_cap.clone()), k(1e-8)]);
    let clip = |v: Expr| {
        let (lo, hi) =
            if logistic { (inside.clone(), sub(row_cap.clone(), inside.clone())) } else { (k(0.0), row_cap.clone()) };
        let v = call(Func::Max, vec![v, lo]);
        match (squared, weight) {
            (true, None) => v,
            (true, Some(_)) => call(Func::Min, vec![v, upper.clone()]),
            (false, _) => call(Func::Min, vec![v, hi]),
        }
    };
    // ⟨xᵢ, w⟩ + b
    let row_dot = |into: ScalarId| {
        vec![
            Stmt::Set(into, bias.map_or(k(0.0), |(slot, _)| s(slot))),
            each(Range::RowNonZeros, vec![Stmt::Set(into, add(s(into), mul(Expr::Value, at(w, j))))]),
        ]
    };
    // w += Δ·xᵢ, b += t²·Δ
    let row_axpy = |by: ScalarId| {
        let w_step = each(Range::RowNonZeros, vec![Stmt::Store(w, j, add(at(w, j), mul(s(by), Expr::Value)))]);
        let b_step = bias.map(|(slot, t2)| Stmt::Set(slot, add(s(slot), mul(s(t2), s(by)))));
        std::iter::once(w_step).chain(b_step).collect::<Vec<_>>()
    };

    // init: Q̄ᵢᵢ; α into its box (a path's next λ moves C); w = Σ αᵢyᵢxᵢ. Weights given without a
    // dual (`--init`) start α at C·(−yᵢ·ℓ′(yᵢ, ⟨xᵢ, w⟩)), the dual point their margins suggest.
    let mut init = vec![];
    if let Some(x) = &intercept {
        init.extend(x.start());
    }
    if let Some(d) = delta {
        init.push(Stmt::Set(d, div(k(0.5), s(cap))));
    }
    let diag = delta.map_or(s(a), |d| add(s(a), delta_at(d)));
    let diag = bias.map_or(diag.clone(), |(_, t2)| add(diag, s(t2)));
    init.push(each(
        Range::Upto(Len::Rows),
        vec![
            Stmt::Set(a, k(0.0)),
            each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, Expr::Value)))]),
            Stmt::Store(q, i, call(Func::Max, vec![diag, k(Q_FLOOR)])),
            Stmt::Store(alpha, i, clip(at(alpha, i))),
        ],
    ));
    let dloss = b.dloss(model, st, y, s(a));
    let mut from_weights = row_dot(a);
    from_weights.push(Stmt::Store(alpha, i, clip(mul(s(cap), Expr::Neg(Box::new(mul(at(y, i), dloss)))))));
    let no_dual = select(s(sum_alpha), Cmp::Gt, k(0.0), k(0.0), k(1.0));
    init.extend([
        Stmt::Set(norm_w, bias.map_or(k(0.0), |(slot, _)| call(Func::Abs, vec![s(slot)]))),
        each(Range::Upto(Len::Features), vec![Stmt::Set(norm_w, add(s(norm_w), call(Func::Abs, vec![at(w, j)])))]),
        Stmt::Set(sum_alpha, k(0.0)),
        each(Range::Upto(Len::Rows), vec![Stmt::Set(sum_alpha, add(s(sum_alpha), at(alpha, i)))]),
        Stmt::If(Cmp::Gt, mul(s(norm_w), no_dual), k(0.0), vec![each(Range::Upto(Len::Rows), from_weights)]),
        each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, k(0.0))]),
    ]);
    if let Some(x) = &intercept {
        init.extend(x.recentre(step, mul(at(alpha, i), at(y, i))));
    }
    init.extend([each(
        Range::Upto(Len::Rows),
        vec![Stmt::Set(step, mul(at(alpha, i), at(y, i))), if_moved(step, row_axpy(step))],
    )]);
    if let Some(sh) = &shrink {
        init.extend(sh.reset());
    }
    b.plan.init = init;

    // epoch: one step per row, or per row still in, in this epoch's order.
    let mut logistic_dual = None;
    if logistic {
        let steps = logistic::Steps {
            alpha,
            q,
            cap,
            g,
            next,
            step,
            y,
            w,
            bias,
            center: intercept.as_ref().and_then(Intercept::b0),
            weight,
        };
        let (reset, epoch, cadence, dual) = logistic::epoch(&mut b, steps, row_dot(g), row_axpy(step));
        b.plan.init.extend(reset);
        b.plan.epoch = epoch;
        b.plan.cadence = Some(cadence);
        logistic_dual = Some(dual);
    } else {
        let (pg, lo, hi) = (b.local("PG"), b.local("at0"), b.local("atU"));
        let mut visit = row_dot(g);
        let gradient = sub(mul(at(y, i), s(g)), k(1.0));
        visit.push(Stmt::Set(g, delta.map_or(gradient.clone(), |d| add(gradient, mul(delta_at(d), at(alpha, i))))));
        visit.push(Stmt::Guard(s(g), "the dual gradient G = yᵢ⟨xᵢ, w⟩ − 1 + δαᵢ".into()));
        visit.extend([
            Stmt::Set(lo, select(at(alpha, i), Cmp::Gt, k(0.0), k(0.0), k(1.0))),
            Stmt::Set(hi, select(at(alpha, i), Cmp::Lt, upper.clone(), k(0.0), k(1.0))),
            Stmt::Set(
                pg,
                select(
                    s(lo),
                    Cmp::Gt,
                    k(0.0),
                    call(Func::Min, vec![s(g), k(0.0)]),
                    select(s(hi), Cmp::Gt, k(0.0), call(Func::Max, vec![s(g), k(0.0)]), s(g)),
                ),
            ),
        ]);
        let moves = Stmt::If(
            Cmp::Gt,
            call(Func::Abs, vec![s(pg)]),
            k(MOVES),
            vec![
                Stmt::Set(next, clip(sub(at(alpha, i), div(s(g), at(q, i))))),
                Stmt::Set(step, mul(sub(s(next), at(alpha, i)), at(y, i))),
                Stmt::Store(alpha, i, s(next)),
                if_moved(step, row_axpy(step)),
            ],
        );
        b.plan.epoch = match &shrink {
            Some(sh) => sh.epoch(visit, moves, (g, pg, lo, hi)),
            None => {
                visit.push(moves);
                vec![each(Range::Perm(Len::Rows), visit)]
            }
        };
        if let Some(sh) = &shrink {
            b.plan.cadence = Some(super::super::Cadence { visits: sh.visits, ready: sh.ready });
            b.plan.active_rows = Some(super::super::ActiveRows { flags: sh.active, returned: sh.returned });
        }
    }
    if let Some(x) = &intercept {
        let rebase = match (logistic_dual, bias, x.b0()) {
            (Some(dual), Some(pair), Some(b0)) => Some(logistic::rebase(dual, pair, b0, b.local("D_b"))),
            _ => None,
        };
        let (before, after) = rebase.unzip();
        b.plan.epoch.extend(before);
        b.plan.epoch.extend(x.multiplier_step(step, q));
        b.plan.epoch.extend(after);
    }
    b.report(model, st, w, y, a);
    // The dual iterate is the certificate's point: uᵢ = −yᵢαᵢ/C (αᵢ/(C·ωᵢ) with the rows'
    // weights, 0 for a row of weight 0, whose term is out of the dual).
    b.plan.objective.dual = Some(held(div(Expr::Neg(Box::new(mul(at(y, i), at(alpha, i)))), row_cap.clone())));
    b.plan.objective.dual_only = true;
    b.plan.info.summary = summary(model, shrink.is_some());
    b.plan
}

fn select(l: Expr, cmp: Cmp, r: Expr, then: Expr, other: Expr) -> Expr {
    Expr::Select(cmp, Box::new(l), Box::new(r), Box::new(then), Box::new(other))
}

/// LIBLINEAR's shrinking: which rows are in, the last epoch's extreme projected gradients, the
/// scale ε at which the rows come back, and what the driver reads to pace its checks.
struct Shrink {
    active: VecId,
    pg_max: ScalarId,
    pg_min: ScalarId,
    eps: ScalarId,
    visits: ScalarId,
    ready: ScalarId,
    returned: ScalarId,
    inv_m: ScalarId,
    out: ScalarId,
    new_max: ScalarId,
    new_min: ScalarId,
    kept: ScalarId,
    done: ScalarId,
}

impl Shrink {
    fn declare(b: &mut Builder) -> Shrink {
        let state = |b: &mut Builder, name: &str, v: f64, note: &str| {
            b.scalar(name, ScalarRole::State, ParamInit::Value(v), note)
        };
        Shrink {
            active: b.vector("active", Len::Rows, VecRole::State, 1.0),
            pg_max: state(b, "PGmax", f64::INFINITY, "last epoch's largest PG"),
            pg_min: state(b, "PGmin", f64::NEG_INFINITY, "its smallest"),
            eps: state(b, "ε", SHRINK_START, "the spread at which shrunk rows return"),
            visits: b.state("visits", "rows visited so far: the driver checks at least every few passes' worth"),
            ready: b.state("ready", "1 after an epoch whose projected gradients all spread by less than ε: check then"),
            returned: b.state("returned", "1 after an epoch that brought every row back"),
            inv_m: b.scalar("1/m", ScalarRole::Param, ParamInit::PerRow { scale: 1.0 }, "to tell when every row is in"),
            out: b.local("shrink"),
            new_max: b.local("PGmax⁺"),
            new_min: b.local("PGmin⁺"),
            kept: b.local("kept"),
            done: b.local("done"),
        }
    }

    /// Every row in, no bounds, the first scale.
    fn reset(&self) -> Vec<Stmt> {
        vec![
            each(Range::Upto(Len::Rows), vec![Stmt::Store(self.active, Index::Row, k(1.0))]),
            Stmt::Set(self.pg_max, k(f64::INFINITY)),
            Stmt::Set(self.pg_min, k(f64::NEG_INFINITY)),
            Stmt::Set(self.eps, k(SHRINK_START)),
            Stmt::Set(self.visits, k(0.0)),
        ]
    }

    /// The epoch around a row's `visit` (its G and PG computed) and its step `moves`.
    fn epoch(
        &self,
        mut visit: Vec<Stmt>,
        moves: Stmt,
        (g, pg, lo, hi): (ScalarId, ScalarId, ScalarId, ScalarId),
    ) -> Vec<Stmt> {
        let i = Index::Row;
        visit.insert(0, Stmt::Set(self.visits, add(s(self.visits), k(1.0))));
        // Out: at 0 with G above last epoch's largest PG, or at U with G below its smallest.
        let beyond_max = select(s(g), Cmp::Gt, s(self.pg_max), k(1.0), k(0.0));
        let beyond_min = select(s(g), Cmp::Lt, s(self.pg_min), k(1.0), k(0.0));
        let stay = vec![
            Stmt::Set(self.kept, add(s(self.kept), k(1.0))),
            Stmt::Set(self.new_max, call(Func::Max, vec![s(self.new_max), s(pg)])),
            Stmt::Set(self.new_min, call(Func::Min, vec![s(self.new_min), s(pg)])),
            moves,
        ];
        visit.extend([
            Stmt::Set(self.out, add(mul(s(lo), beyond_max), mul(s(hi), beyond_min))),
            Stmt::If(Cmp::Gt, s(self.out), k(0.5), vec![Stmt::Store(self.active, i, k(0.0))]),
            Stmt::If(Cmp::Lt, s(self.out), k(0.5), stay),
        ]);
        // Converged on the rows still in: all come back (and, if every row was in, at a finer ε).
        let every_row_in = sub(k(1.0), mul(k(0.5), s(self.inv_m)));
        let converged = vec![
            Stmt::If(
                Cmp::Gt,
                mul(s(self.kept), s(self.inv_m)),
                every_row_in,
                vec![Stmt::Set(self.eps, mul(s(self.eps), k(SHRINK_CUT))), Stmt::Set(self.ready, k(1.0))],
            ),
            each(Range::Upto(Len::Rows), vec![Stmt::Store(self.active, i, k(1.0))]),
            Stmt::Set(self.returned, k(1.0)),
            Stmt::Set(self.pg_max, k(f64::INFINITY)),
            Stmt::Set(self.pg_min, k(f64::NEG_INFINITY)),
        ];
        let spread = vec![
            Stmt::Set(self.pg_max, select(s(self.new_max), Cmp::Gt, k(0.0), s(self.new_max), k(f64::INFINITY))),
            Stmt::Set(self.pg_min, select(s(self.new_min), Cmp::Lt, k(0.0), s(self.new_min), k(f64::NEG_INFINITY))),
        ];
        vec![
            Stmt::Set(self.ready, k(0.0)),
            Stmt::Set(self.returned, k(0.0)),
            Stmt::Set(self.new_max, k(f64::NEG_INFINITY)),
            Stmt::Set(self.new_min, k(f64::INFINITY)),
            Stmt::Set(self.kept, k(0.0)),
            // The driver's order holds the active rows only (`Plan::active_rows`); the test keeps
            // the meaning for an order of every row, and skips a row shrunk earlier this epoch.
            each(Range::Perm(Len::Rows), vec![Stmt::If(Cmp::Gt, at(self.active, i), k(0.5), visit)]),
            Stmt::Set(self.done, select(sub(s(self.new_max), s(self.new_min)), Cmp::Gt, s(self.eps), k(0.0), k(1.0))),
            Stmt::If(Cmp::Gt, s(self.done), k(0.5), converged),
            Stmt::If(Cmp::Lt, s(self.done), k(0.5), spread),
        ]
    }
}

fn summary(model: &Model, shrinking: bool) -> String {
    let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
    format!(
        "loss {}, R = {}: dual coordinate descent on 0 ≤ α ≤ {} (Hsieh et al. 2008), w = Σ αᵢyᵢxᵢ{}",
        model.loss.def.name,
        regs.join(" + "),
        match model.loss.def.known() {
            Some(KnownLoss::SquaredHinge) => "∞, Q̄ = Q + I/(2C)",
            Some(KnownLoss::Logistic) => "C with entropy terms, a Newton step per αᵢ (Yu, Huang & Lin 2011)",
            _ => "C",
        },
        if shrinking { ", with shrinking" } else { "" }
    )
}
