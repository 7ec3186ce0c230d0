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
//! Every β is dual-feasible, so the certificate reads its point uᵢ = −βᵢ/C directly. An
//! intercept is a coordinate of the rows [xᵢ, t] as for the classification duals
//! (`intercept.rs`): G and H gain b and t², b moves by t²·Δ, and a free b's multiplier step
//! drives Σᵢ βᵢ to 0.
//!
//! Shrinking is LIBLINEAR's for these duals: a βᵢ at 0 whose G ± ε lie beyond the last
//! epoch's largest violation on both sides, or at an end of its box with its gradient pointing
//! out by more than that, leaves the next epochs; once the epoch's summed violation falls to ε_s
//! times the first epoch's, every row comes back, and when that happens with every row in, the
//! driver checks and ε_s is cut tenfold (`dcd(shrinking = 0)` visits every row every epoch).

use super::super::super::build::*;
use super::super::super::{
    ActiveRows, Cadence, Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole,
};
use super::super::Builder;
use super::intercept::Intercept;
use super::{select, MOVES, Q_FLOOR, SHRINK_CUT};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::stdlib::KnownLoss;
use crate::symbolic::{Cmp, Func};

/// The first ε_s: rows come back once an epoch's summed violation is this share of the first
/// epoch's (LIBLINEAR's default `-e 0.1` for `-s 13`); it is cut by the classification
/// duals' `SHRINK_CUT` each time they do with every row in. A step below `MOVES` moves
/// nothing, and H is at least `Q_FLOOR`, both shared with those duals.
const SHRINK_START: f64 = 0.1;

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
    let shrink = (st.settings.shrinking != Some(false)).then(|| Shrink::declare(&mut b));
    // b, free or `μ·l2sq(b)`: a coordinate of the dual's rows [xᵢ, t], under the augmented
    // Lagrangian of Σᵢ βᵢ = 0 when free (`intercept.rs`).
    let intercept = Intercept::declare(&mut b, model, prox.l2, "Σ βᵢ");
    // ⟨xᵢ, w⟩ + b into a; w += Δ·xᵢ and b += t²·Δ.
    let margin = vec![
        Stmt::Set(a, intercept.as_ref().map_or(k(0.0), |x| s(x.slot))),
        each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, at(w, j))))]),
    ];
    let axpy = |by: ScalarId| {
        let w_step = each(Range::RowNonZeros, vec![Stmt::Store(w, j, add(at(w, j), mul(s(by), Expr::Value)))]);
        let b_step = intercept.as_ref().map(|x| Stmt::Set(x.slot, add(s(x.slot), mul(s(x.t2), s(by)))));
        std::iter::once(w_step).chain(b_step).collect::<Vec<_>>()
    };

    // init: H = ‖xᵢ‖² + δ (+ t²); β into its box (a path's next λ moves C); w = Σ βᵢxᵢ, and b
    // from its centre.
    let diag = delta.as_ref().map_or(s(a), |d| add(s(a), d.clone()));
    let diag = intercept.as_ref().map_or(diag.clone(), |x| add(diag, s(x.t2)));
    b.plan.init = intercept.as_ref().map_or(vec![], Intercept::start);
    b.plan.init.extend([
        each(
            Range::Upto(Len::Rows),
            vec![
                Stmt::Set(a, k(0.0)),
                each(Range::RowNonZeros, vec![Stmt::Set(a, add(s(a), mul(Expr::Value, Expr::Value)))]),
                Stmt::Store(q, i, call(Func::Max, vec![diag, k(Q_FLOOR)])),
                Stmt::Store(beta, i, clip(at(beta, i))),
            ],
        ),
        each(Range::Upto(Len::Features), vec![Stmt::Store(w, j, k(0.0))]),
    ]);
    if let Some(x) = &intercept {
        b.plan.init.extend(x.recentre(step, at(beta, i)));
    }
    b.plan.init.push(each(Range::Upto(Len::Rows), vec![Stmt::Set(step, at(beta, i)), if_moved(step, axpy(step))]));

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
    let visit = [
        margin,
        vec![
            Stmt::Set(g, gradient),
            Stmt::Guard(
                s(g),
                format!("the dual gradient G = ⟨xᵢ, w⟩{} − yᵢ + δβᵢ", if intercept.is_some() { " + b" } else { "" }),
            ),
        ],
    ]
    .concat();
    let moves = vec![
        Stmt::Set(next, clip(add(at(beta, i), newton))),
        Stmt::Set(step, sub(s(next), at(beta, i))),
        Stmt::If(
            Cmp::Gt,
            call(Func::Abs, vec![s(step)]),
            k(MOVES),
            [vec![Stmt::Store(beta, i, s(next))], axpy(step)].concat(),
        ),
    ];
    b.plan.epoch = match &shrink {
        Some(rows) => {
            b.plan.init.extend(rows.reset());
            let ends = Ends { beta: at(beta, i), lo: lo.clone(), hi: hi.clone(), eps: sh.eps };
            let epoch = rows.epoch(visit, moves, g, ends);
            b.plan.cadence = Some(Cadence { visits: rows.visits, ready: rows.ready });
            b.plan.active_rows = Some(ActiveRows { flags: rows.active, returned: rows.returned });
            epoch
        }
        None => vec![each(Range::Perm(Len::Rows), [visit, moves].concat())],
    };
    if let Some(x) = &intercept {
        b.plan.epoch.extend(x.multiplier_step(step, q));
    }
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
    ) + if shrink.is_some() { ", with shrinking" } else { "" };
    b.plan
}

/// Where a row's βᵢ stands: its value, its box's ends and the kink's ε.
struct Ends {
    beta: Expr,
    lo: Expr,
    hi: Expr,
    eps: f64,
}

/// LIBLINEAR's shrinking for the box duals: which rows are in, the last epoch's largest
/// violation, the first epoch's summed one, the scale ε_s, and what the driver reads.
struct Shrink {
    active: VecId,
    gmax: ScalarId,
    first: ScalarId,
    scale: ScalarId,
    visits: ScalarId,
    ready: ScalarId,
    returned: ScalarId,
    inv_m: ScalarId,
    violation: ScalarId,
    out: ScalarId,
    new_max: ScalarId,
    sum: ScalarId,
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
            gmax: state(b, "Vmax", f64::INFINITY, "last epoch's largest violation"),
            first: state(b, "V₁", -1.0, "the first epoch's summed violation"),
            scale: state(b, "ε_s", SHRINK_START, "the share of V₁ at which shrunk rows return"),
            visits: b.state("visits", "rows visited so far: the driver checks at least every few passes' worth"),
            ready: b
                .state("ready", "1 after an epoch whose violations summed below ε_s·V₁ with every row in: check then"),
            returned: b.state("returned", "1 after an epoch that brought every row back"),
            inv_m: b.scalar("1/m", ScalarRole::Param, ParamInit::PerRow { scale: 1.0 }, "to tell when every row is in"),
            violation: b.local("v"),
            out: b.local("shrink"),
            new_max: b.local("Vmax⁺"),
            sum: b.local("V"),
            kept: b.local("kept"),
            done: b.local("done"),
        }
    }

    /// Every row in, no violation seen, the first scale.
    fn reset(&self) -> Vec<Stmt> {
        vec![
            each(Range::Upto(Len::Rows), vec![Stmt::Store(self.active, Index::Row, k(1.0))]),
            Stmt::Set(self.gmax, k(f64::INFINITY)),
            Stmt::Set(self.first, k(-1.0)),
            Stmt::Set(self.scale, k(SHRINK_START)),
            Stmt::Set(self.visits, k(0.0)),
        ]
    }

    /// The epoch around a row's `visit` (its G computed) and its step `moves`.
    fn epoch(&self, mut visit: Vec<Stmt>, moves: Vec<Stmt>, g: ScalarId, ends: Ends) -> Vec<Stmt> {
        let i = Index::Row;
        let (gp, gn) = (add(s(g), k(ends.eps)), sub(s(g), k(ends.eps)));
        let pos = |e: Expr| call(Func::Max, vec![e, k(0.0)]);
        let neg = |e: Expr| Expr::Neg(Box::new(e));
        // (the violation, whether the row leaves) at 0, at each end, and inside.
        let at_zero = (
            add(pos(neg(gp.clone())), pos(gn.clone())),
            mul(
                select(gp.clone(), Cmp::Gt, s(self.gmax), k(1.0), k(0.0)),
                select(gn.clone(), Cmp::Lt, neg(s(self.gmax)), k(1.0), k(0.0)),
            ),
        );
        let at_hi = (pos(gp.clone()), select(gp.clone(), Cmp::Lt, neg(s(self.gmax)), k(1.0), k(0.0)));
        let at_lo = (pos(neg(gn.clone())), select(gn.clone(), Cmp::Gt, s(self.gmax), k(1.0), k(0.0)));
        let inside = select(ends.beta.clone(), Cmp::Gt, k(0.0), call(Func::Abs, vec![gp]), call(Func::Abs, vec![gn]));
        let pick = |zero: Expr, hi: Expr, lo: Expr, inner: Expr| {
            select(
                call(Func::Abs, vec![ends.beta.clone()]),
                Cmp::Lt,
                k(MOVES),
                zero,
                // β ≥ hi, else β ≤ lo, else inside
                select(
                    ends.beta.clone(),
                    Cmp::Lt,
                    ends.hi.clone(),
                    select(ends.beta.clone(), Cmp::Gt, ends.lo.clone(), inner, lo),
                    hi,
                ),
            )
        };
        visit.insert(0, Stmt::Set(self.visits, add(s(self.visits), k(1.0))));
        let stay = [
            vec![
                Stmt::Set(self.kept, add(s(self.kept), k(1.0))),
                Stmt::Set(self.new_max, call(Func::Max, vec![s(self.new_max), s(self.violation)])),
                Stmt::Set(self.sum, add(s(self.sum), s(self.violation))),
            ],
            moves,
        ]
        .concat();
        visit.extend([
            Stmt::Set(self.violation, pick(at_zero.0, at_hi.0, at_lo.0, inside)),
            Stmt::Set(self.out, pick(at_zero.1, at_hi.1, at_lo.1, k(0.0))),
            Stmt::If(Cmp::Gt, s(self.out), k(0.5), vec![Stmt::Store(self.active, i, k(0.0))]),
            Stmt::If(Cmp::Lt, s(self.out), k(0.5), stay),
        ]);
        let every_row_in = sub(k(1.0), mul(k(0.5), s(self.inv_m)));
        let converged = vec![
            Stmt::If(
                Cmp::Gt,
                mul(s(self.kept), s(self.inv_m)),
                every_row_in,
                vec![Stmt::Set(self.scale, mul(s(self.scale), k(SHRINK_CUT))), Stmt::Set(self.ready, k(1.0))],
            ),
            each(Range::Upto(Len::Rows), vec![Stmt::Store(self.active, i, k(1.0))]),
            Stmt::Set(self.returned, k(1.0)),
            Stmt::Set(self.gmax, k(f64::INFINITY)),
        ];
        vec![
            Stmt::Set(self.ready, k(0.0)),
            Stmt::Set(self.returned, k(0.0)),
            Stmt::Set(self.new_max, k(0.0)),
            Stmt::Set(self.sum, k(0.0)),
            Stmt::Set(self.kept, k(0.0)),
            // The driver's order holds the active rows only (`Plan::active_rows`); the test keeps
            // the meaning for an order of every row.
            each(Range::Perm(Len::Rows), vec![Stmt::If(Cmp::Gt, at(self.active, i), k(0.5), visit)]),
            Stmt::If(Cmp::Lt, s(self.first), k(0.0), vec![Stmt::Set(self.first, s(self.sum))]),
            Stmt::Set(self.done, select(s(self.sum), Cmp::Gt, mul(s(self.scale), s(self.first)), k(0.0), k(1.0))),
            Stmt::If(Cmp::Gt, s(self.done), k(0.5), converged),
            Stmt::If(Cmp::Lt, s(self.done), k(0.5), vec![Stmt::Set(self.gmax, s(self.new_max))]),
        ]
    }
}
