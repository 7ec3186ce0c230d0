//! SCD with Newton-type steps, for smooth losses whose curvature varies (logistic): newGLMNET
//! (Yuan, Ho & Lin 2012; LIBLINEAR's L1R_LR solver), reduced to its core. One epoch is one outer
//! iteration:
//!
//! 1. at the current margins z = Xw: qᵢ = (c/m)·ℓ′(yᵢ, zᵢ), Dᵢ = (c/m)·ℓ″(yᵢ, zᵢ), and per
//!    coordinate of this epoch's columns Gⱼ = Σᵢ xᵢⱼ·qᵢ, Hⱼ = Σᵢ xᵢⱼ²·Dᵢ + ν;
//! 2. coordinate descent on the quadratic model Gᵀd + ½dᵀXᵀDXd + R(w + d), its passes repeated
//!    until their measure Σⱼ Hⱼ·|Δⱼ| is a fraction of the first pass's (at most 20), or only one
//!    pass while that pass measures little against the run's first (newGLMNET's rule), each
//!    step clipped to ±10 as LIBLINEAR clips it: arithmetic only, no transcendental function per
//!    non-zero;
//! 3. an Armijo backtracking line search along d on the exact F,
//!    F(w + λd) − F(w) ≤ σ·λ·(Gᵀd + R(w + d) − R(w)),
//!    which costs one loss evaluation per row per trial.
//!
//! Compared with one-coordinate Newton steps (CDN), the loss and its derivatives are evaluated
//! O(m) times per epoch instead of O(nnz), and the joint quadratic model moves correlated
//! features together. `perm(d)` is the driver's order over the working set, so an epoch on text
//! data touches only the columns that matter.

use super::super::build::*;
use super::super::{Expr, Index, Len, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};
use super::{hoist_shared_calls, Builder};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func, Sym};

/// Armijo's sufficient-decrease fraction (LIBLINEAR's σ).
const SIGMA: f64 = 0.01;
/// Line-search halvings before an epoch gives up moving.
const MAX_HALVINGS: u32 = 30;
/// Passes of coordinate descent on the quadratic model, at most. LIBLINEAR bounds them at 100.
/// Without shrinking, the late epochs at weak regularization swept working sets of
/// 6,000–12,000 columns up to 100 times, crawling along near-duplicate columns that the
/// certificate's Newton steps solve anyway. Whole runs to a certified 1e-4 at 20 against 100,
/// paired: debian-desc at C = 100 0.87×, debian-files at C = 10 0.97×, at C = 1 0.91×,
/// debian-desc at C = 10 and 1, a9a and w8a 0.91–1.00×.
///
/// The passes also shrink as LIBLINEAR's inner loop does: a coordinate a pass leaves at zero
/// sits out the next passes, and once the rest meet the tolerance every coordinate comes back
/// for one full pass that shrinks none, whose measure decides. Whole runs to a certified 1e-4,
/// paired against the passes without it: debian-desc at C = 100 0.76×, debian-files at C = 10
/// 0.79×, debian-desc at C = 10 0.92×, at C = 1 0.90×, debian-files at C = 1 0.89×, a9a and
/// w8a at C = 100 0.95–1.00×. Shrinking without the full pass at the end (a coordinate left at
/// zero sat out the rest of the epoch) took more epochs: 14 against 12 at C = 100.
const MAX_INNER: u32 = 20;
/// The inner passes stop once the model's prox-gradient measure Σⱼ Hⱼ·|Δⱼ| (each coordinate's
/// step, scaled by its curvature) falls below a fraction of what the first pass measured: an
/// inexact Newton step whose forcing term starts loose (early outer iterations need only a rough
/// direction) and tightens every epoch down to the floor, as newGLMNET tightens its inner
/// tolerance. The floor stays loose: on data with near-duplicate columns CD on the model crawls
/// along their differences, and the certificate's Newton refinement, which the run continues
/// from, solves those directions instead.
const INNER_TOL_START: f64 = 0.3;
const INNER_TOL_DECAY: f64 = 0.7;
const INNER_TOL_FLOOR: f64 = 1e-3;
/// An epoch also ends after its first pass when that pass measures less than τ₁ times the run's
/// first pass σ₁, τ₁ starting at 1 and multiplied by this each time an epoch ends so: newGLMNET's
/// rule (LIBLINEAR's `inner_eps` against `Gnorm1_init`). The first epoch's first pass is σ₁, so
/// the fraction decides that epoch (0.19 s on debian-desc at C = 100, to F = 0.171 against
/// LIBLINEAR's 0.191 after its one cycle). After it, while the violation falls fast, an
/// epoch is then one pass, where the fraction above always asks for two (the first pass is its
/// yardstick) and three when the second left coordinates out (a full pass follows). On
/// debian-desc at C = 100 LIBLINEAR's first five iterations take one cycle each and 0.75 s;
/// optc's first five epochs took 1.65 s.
///
/// The rule ends at the run's first polish (a check that moved w, after which the plan's `init`
/// runs again and finds σ₁ set): near the optimum the checks need what the epochs' passes give.
/// Left on there, the one-pass epochs after debian-files' settling at C = 100 left the next
/// check's dual point short, and it refined for 5.0 s instead of 0.1 s. Whole runs to a
/// certified 1e-4, with this rule and the continued exact steps of `support.rs` against neither,
/// summed over seeds 1–3: debian-desc at C = 100 0.94×, at C = 10 0.91×, debian-files at C = 10
/// 0.83×, at C = 100 0.93×, debian-desc and debian-files at C = 1 1.00×; paired at the default
/// seed, debian-desc at C = 100 0.79× and debian-files at C = 100 0.92×. Replacing the fraction
/// with newGLMNET's rule instead (its yardstick for every pass) took debian-files at C = 100 to
/// 1.20× (docs/benchmarks_l1.md).
const ONE_PASS_DECAY: f64 = 0.25;
/// Added to every Hⱼ, so a column whose examples are all confidently right keeps a finite step.
const NU: f64 = 1e-12;
/// The most one coordinate step of the model's CD moves dⱼ (LIBLINEAR's clip). At weak
/// regularization most rows are confidently right, Dᵢ ≈ 0, and a column seen only by them has
/// Hⱼ ≈ ν: its unclipped step −Gⱼ/Hⱼ runs far past where the exact loss turns, and the line
/// search then halved the whole direction down to steps of 1e-7 (debian-desc at C = 10).
const MAX_MOVE: f64 = 10.0;

pub(super) fn lower(model: &Model, st: &Structure, prox: CoordinateProx, d2: &Sym) -> Plan {
    let Iteration { mut b, y, w, measure, step, margin, .. } = iteration(model, st, prox, d2, SolverKind::Scd);
    b.plan.epoch = measure;
    b.plan.epoch.extend(step);
    b.report(model, st, w, y, margin);
    b.plan
}

/// One outer iteration, apart, for a plan that wraps it (batch DC decides between a step and a
/// reweighting after `measure`).
pub(super) struct Iteration {
    pub b: Builder,
    pub y: VecId,
    pub w: VecId,
    /// qᵢ = (c/m)·ℓ′(yᵢ, zᵢ) per row, and Gⱼ = Σᵢ xᵢⱼ·qᵢ over this epoch's columns, once
    /// `measure` has run.
    pub q: VecId,
    pub gradient: VecId,
    /// c/m.
    pub mean: ScalarId,
    /// Step 1: the derivatives at the margins, G and H.
    pub measure: Vec<Stmt>,
    /// Steps 2 and 3: the quadratic model by CD, the line search and the move.
    pub step: Vec<Stmt>,
    /// The report's margin slot.
    pub margin: ScalarId,
}

/// The init phase (z = Xw) in `b`, and one outer iteration.
pub(super) fn iteration(
    model: &Model,
    st: &Structure,
    prox: CoordinateProx,
    d2: &Sym,
    solver: SolverKind,
) -> Iteration {
    let mut b = Builder::new(model, solver, false, prox, None);
    b.plan.info.summary.push_str(if prox.tangent.is_some() {
        "; Newton-type steps (newGLMNET): quadratic model by CD, line search on the weighted-ℓ1 surrogate"
    } else {
        "; Newton-type steps (newGLMNET): quadratic model by CD, line search on F"
    });
    let (y, w) = b.labels_and_weights();
    let (i, j) = (Index::Row, Index::Feature);
    let mean = b.per_example_weight(model);
    let z = b.vector("z", Len::Rows, VecRole::State, 0.0);
    let q = b.vector("q", Len::Rows, VecRole::State, 0.0);
    let dd = b.vector("D", Len::Rows, VecRole::State, 0.0);
    let lz = b.vector("ℓz", Len::Rows, VecRole::State, 0.0);
    let xd = b.vector("Xd", Len::Rows, VecRole::State, 0.0);
    let dir = b.vector("d", Len::Features, VecRole::State, 0.0);
    let gv = b.vector("G", Len::Features, VecRole::State, 0.0);
    let hv = b.vector("H", Len::Features, VecRole::State, 0.0);
    let (g, h, gq, nw, delta) = (b.local("g"), b.local("h"), b.local("gq"), b.local("nw"), b.local("δ"));
    let (descent, lambda, change, ok, a) = (b.local("Δ"), b.local("λ"), b.local("ΔF"), b.local("ok"), b.local("a"));
    let (sv, sv0) = (b.local("σ"), b.local("σ0"));
    // The model's inner shrinking: a coordinate a pass leaves at zero sits out the next passes
    // (`out`), until the passes meet their tolerance on the rest and one full pass follows.
    let out = b.vector("out", Len::Features, VecRole::State, 0.0);
    let (shrunk, may_shrink, still) = (b.local("nout"), b.local("shrink"), b.local("still"));
    let inner_tol = b.scalar("τin", ScalarRole::State, ParamInit::Value(INNER_TOL_START), "inner tolerance");

    let intercept = b.intercept().map(|slot| InterceptModel::declare(&mut b, slot));
    let z0 = b.intercept().map_or(k(0.0), s);
    // newGLMNET's one-pass rule: the run's first pass measure σ₁ (negative until it is taken)
    // and τ₁; an `init` after the run's start (a polish) ends the rule.
    let first = b.scalar("σ₁", ScalarRole::State, ParamInit::Value(-1.0), "the run's first pass measure");
    let one_pass = b.scalar("τ₁", ScalarRole::State, ParamInit::Value(1.0), "one-pass tolerance");
    let (passes, ended) = (b.local("passes"), b.local("ended"));
    b.plan.init = vec![
        Stmt::If(Cmp::Gt, s(first), k(0.0), vec![Stmt::Set(one_pass, k(0.0))]),
        Stmt::Set(inner_tol, k(INNER_TOL_START)),
        each(Range::Upto(Len::Rows), vec![Stmt::Store(z, i, z0)]),
        each(
            Range::Upto(Len::Features),
            vec![each(Range::ColNonZeros, vec![Stmt::Store(z, i, add(at(z, i), mul(Expr::Value, at(w, j))))])],
        ),
    ];

    // 1. Derivatives at the margins (ℓ′, ℓ″ and ℓ share their transcendental calls).
    let derivatives =
        vec![b.dloss(model, st, y, at(z, i)), b.at_point(model, d2, y, at(z, i)), b.loss_at(model, y, at(z, i))];
    let (hoisted, exprs) = hoist_shared_calls(&mut b, derivatives);
    let [dloss, curvature, loss_now] =
        <[Expr; 3]>::try_from(exprs).unwrap_or_else(|_| unreachable!("three in, three out"));
    let mut per_row = hoisted;
    per_row.extend([
        Stmt::Store(q, i, mul(s(mean), dloss)),
        Stmt::Guard(at(q, i), "the loss derivative ℓ′".into()),
        Stmt::Store(dd, i, mul(s(mean), curvature)),
        Stmt::Store(lz, i, loss_now),
        Stmt::Store(xd, i, k(0.0)),
    ]);
    if let Some(m) = &intercept {
        per_row.extend([Stmt::Set(m.g, add(s(m.g), at(q, i))), Stmt::Set(m.h, add(s(m.h), at(dd, i)))]);
    }
    let mut per_entry = vec![
        Stmt::Set(g, add(s(g), mul(Expr::Value, at(q, i)))),
        Stmt::Set(h, add(s(h), mul(mul(Expr::Value, Expr::Value), at(dd, i)))),
    ];
    let mut per_column = vec![Stmt::Set(g, k(0.0)), Stmt::Set(h, k(0.0))];
    if intercept.is_some() {
        per_entry.push(Stmt::Set(gq, add(s(gq), mul(Expr::Value, at(dd, i)))));
        per_column.push(Stmt::Set(gq, k(0.0)));
    }
    per_column.extend([
        each(Range::ColNonZeros, per_entry),
        Stmt::Store(gv, j, s(g)),
        Stmt::Store(hv, j, add(s(h), k(NU))),
        Stmt::Store(dir, j, k(0.0)),
    ]);
    if let Some(m) = &intercept {
        // glmnet's implicit centering: with b kept at its optimum for d, the model along dⱼ
        // has the curvature of the column centred by D, Hⱼ − (DXⱼ)²/H_b = Σᵢ Dᵢ(xᵢⱼ − x̄ⱼ)²,
        // x̄ⱼ = DXⱼ/H_b. Kept ≥ 1e-12 of Hⱼ: a column constant on D's rows has none, and
        // rounding must not make it a huge step.
        let centred = sub(s(h), div(mul(s(gq), s(gq)), add(s(m.h), k(NU))));
        per_column.extend([
            Stmt::Store(m.dx, j, s(gq)),
            Stmt::Store(hv, j, add(call(Func::Max, vec![centred, mul(k(1e-12), s(h))]), k(NU))),
        ]);
    }
    let gradients = each(Range::Perm(Len::Features), per_column);

    // 2. Coordinate descent on the quadratic model; the prox acts on w + d.
    let target = b.coordinate_prox(sub(add(at(w, j), at(dir, j)), div(s(gq), at(hv, j))), div(k(1.0), at(hv, j)));
    // With an intercept, (X d)ᵢ + d_b is the model's direction in the margins: the column
    // sums DXⱼ = Σᵢ xᵢⱼDᵢ and S = Σᵢ Dᵢ(Xd)ᵢ, kept as d moves, make the intercept's
    // coordinate step O(1) and add one product per column step.
    let gq_start = match &intercept {
        Some(m) => add(at(gv, j), mul(s(m.dir), at(m.dx, j))),
        None => at(gv, j),
    };
    let mut moved = vec![Stmt::Store(dir, j, s(nw)), col_axpy(xd, delta)];
    if let Some(m) = &intercept {
        // b follows exactly: d_b = −(G_b + S)/H_b moves by −δ·x̄ⱼ.
        moved.extend([
            Stmt::Set(m.cross, add(s(m.cross), mul(s(delta), at(m.dx, j)))),
            Stmt::Set(m.dir, sub(s(m.dir), div(mul(s(delta), at(m.dx, j)), add(s(m.h), k(NU))))),
        ]);
    }
    let coordinate = vec![
        Stmt::Set(gq, gq_start),
        each(Range::ColNonZeros, vec![Stmt::Set(gq, add(s(gq), mul(mul(Expr::Value, at(dd, i)), at(xd, i))))]),
        Stmt::Set(nw, sub(target, at(w, j))),
        Stmt::Set(
            delta,
            call(Func::Min, vec![call(Func::Max, vec![sub(s(nw), at(dir, j)), k(-MAX_MOVE)]), k(MAX_MOVE)]),
        ),
        Stmt::Set(nw, add(at(dir, j), s(delta))),
        if_moved(delta, moved),
        Stmt::Set(sv, add(s(sv), mul(at(hv, j), call(Func::Abs, vec![s(delta)])))),
        // Left at zero by a pass that may shrink: |w + d| + |δ| + (1 − shrink) is 0.
        Stmt::Set(
            still,
            add(
                add(call(Func::Abs, vec![add(at(w, j), at(dir, j))]), call(Func::Abs, vec![s(delta)])),
                sub(k(1.0), s(may_shrink)),
            ),
        ),
        Stmt::If(
            Cmp::Lt,
            s(still),
            k(1e-300),
            vec![Stmt::Store(out, j, k(1.0)), Stmt::Set(shrunk, add(s(shrunk), k(1.0)))],
        ),
    ];
    let mut inner_pass = vec![
        Stmt::Set(sv, k(0.0)),
        each(Range::Perm(Len::Features), vec![Stmt::If(Cmp::Lt, at(out, j), k(0.5), coordinate)]),
    ];
    if let Some(m) = &intercept {
        // The intercept's exact minimiser of the quadratic model along it (no prox).
        let nb = add(s(m.h), k(NU));
        inner_pass.extend([
            Stmt::Set(gq, add(add(s(m.g), s(m.cross)), mul(s(m.dir), s(m.h)))),
            Stmt::Set(delta, Expr::Neg(Box::new(div(s(gq), nb.clone())))),
            Stmt::Set(m.dir, add(s(m.dir), s(delta))),
            Stmt::Set(sv, add(s(sv), mul(nb.clone(), call(Func::Abs, vec![s(delta)])))),
        ]);
    }
    inner_pass.push(Stmt::Set(
        sv0,
        Expr::Select(Cmp::Lt, Box::new(s(sv0)), Box::new(k(0.0)), Box::new(s(sv)), Box::new(s(sv0))),
    ));
    // Met on the coordinates left in play: every coordinate comes back for one full pass that
    // shrinks none, whose measure then decides (LIBLINEAR's inner loop).
    inner_pass.extend([
        Stmt::Set(may_shrink, k(1.0)),
        Stmt::If(
            Cmp::Lt,
            s(sv),
            add(mul(s(inner_tol), s(sv0)), k(1e-300)),
            vec![Stmt::If(
                Cmp::Gt,
                s(shrunk),
                k(0.5),
                vec![
                    each(Range::Perm(Len::Features), vec![Stmt::Store(out, j, k(0.0))]),
                    Stmt::Set(shrunk, k(0.0)),
                    Stmt::Set(may_shrink, k(0.0)),
                    Stmt::Set(sv, k(1e300)),
                ],
            )],
        ),
    ]);
    // Or one pass, newGLMNET's exit: the first pass measured less than τ₁·σ₁.
    inner_pass.extend([
        Stmt::Set(passes, add(s(passes), k(1.0))),
        Stmt::If(Cmp::Lt, s(first), k(0.0), vec![Stmt::Set(first, s(sv0))]),
        Stmt::If(
            Cmp::Lt,
            s(passes),
            k(1.5),
            vec![Stmt::If(
                Cmp::Lt,
                s(sv0),
                add(mul(s(one_pass), s(first)), k(1e-300)),
                vec![Stmt::Set(sv, k(-1.0)), Stmt::Set(ended, k(1.0))],
            )],
        ),
    ]);
    // The direction in the margins: Xd, plus d_b with an intercept.
    let xd_at = match &intercept {
        Some(m) => add(at(xd, i), s(m.dir)),
        None => at(xd, i),
    };

    // 3. Line search on F along d.
    let r_now = b.coordinate_penalty(at(w, j));
    let full = b.coordinate_penalty(add(at(w, j), at(dir, j)));
    let stepped = b.coordinate_penalty(add(at(w, j), mul(s(lambda), at(dir, j))));
    let trial = vec![
        Stmt::Set(change, k(0.0)),
        each(
            Range::Upto(Len::Rows),
            vec![Stmt::Set(
                change,
                add(s(change), sub(b.loss_at(model, y, add(at(z, i), mul(s(lambda), xd_at.clone()))), at(lz, i))),
            )],
        ),
        Stmt::Set(change, mul(s(change), s(mean))),
        each(Range::Perm(Len::Features), vec![Stmt::Set(change, add(s(change), sub(stepped, r_now.clone())))]),
        Stmt::Set(
            ok,
            Expr::Select(
                Cmp::Gt,
                Box::new(s(change)),
                Box::new(mul(k(SIGMA), mul(s(lambda), s(descent)))),
                Box::new(k(0.0)),
                Box::new(k(1.0)),
            ),
        ),
        Stmt::Set(
            lambda,
            Expr::Select(
                Cmp::Gt,
                Box::new(s(ok)),
                Box::new(k(0.5)),
                Box::new(s(lambda)),
                Box::new(mul(s(lambda), k(0.5))),
            ),
        ),
    ];

    let mut measure = vec![each(Range::Upto(Len::Rows), per_row), gradients];
    let mut step = vec![
        Stmt::Set(sv0, k(-1.0)),
        // The first pass shrinks none (its measure is the yardstick), and all start in play.
        each(Range::Perm(Len::Features), vec![Stmt::Store(out, j, k(0.0))]),
        Stmt::Set(shrunk, k(0.0)),
        Stmt::Set(may_shrink, k(0.0)),
        Stmt::Set(passes, k(0.0)),
        Stmt::Set(ended, k(0.0)),
        Stmt::Repeat(MAX_INNER, Cmp::Lt, s(sv), add(mul(s(inner_tol), s(sv0)), k(1e-300)), inner_pass),
        Stmt::Set(
            one_pass,
            mul(
                s(one_pass),
                Expr::Select(
                    Cmp::Gt,
                    Box::new(s(ended)),
                    Box::new(k(0.5)),
                    Box::new(k(ONE_PASS_DECAY)),
                    Box::new(k(1.0)),
                ),
            ),
        ),
        Stmt::Set(inner_tol, call(Func::Max, vec![mul(s(inner_tol), k(INNER_TOL_DECAY)), k(INNER_TOL_FLOOR)])),
        Stmt::Set(descent, intercept.as_ref().map_or(k(0.0), |m| mul(s(m.g), s(m.dir)))),
        each(
            Range::Perm(Len::Features),
            vec![Stmt::Set(descent, add(s(descent), add(mul(at(gv, j), at(dir, j)), sub(full, r_now))))],
        ),
        Stmt::Set(lambda, k(1.0)),
        Stmt::Set(ok, k(0.0)),
        Stmt::If(
            Cmp::Lt,
            s(descent),
            k(0.0),
            vec![
                Stmt::Repeat(MAX_HALVINGS, Cmp::Gt, s(ok), k(0.5), trial),
                Stmt::If(
                    Cmp::Gt,
                    s(ok),
                    k(0.5),
                    vec![
                        each(
                            Range::Perm(Len::Features),
                            vec![Stmt::Store(w, j, add(at(w, j), mul(s(lambda), at(dir, j))))],
                        ),
                        each(Range::Upto(Len::Rows), vec![Stmt::Store(z, i, add(at(z, i), mul(s(lambda), xd_at)))]),
                    ]
                    .into_iter()
                    .chain(intercept.as_ref().map(|m| Stmt::Set(m.slot, add(s(m.slot), mul(s(lambda), s(m.dir))))))
                    .collect(),
                ),
            ],
        ),
    ];
    if let Some(m) = &intercept {
        measure.insert(0, Stmt::Set(m.g, k(0.0)));
        measure.insert(1, Stmt::Set(m.h, k(0.0)));
        // d_b starts at its optimum for d = 0, and follows every column step.
        step.insert(0, Stmt::Set(m.dir, Expr::Neg(Box::new(div(s(m.g), add(s(m.h), k(NU)))))));
        step.insert(1, Stmt::Set(m.cross, k(0.0)));
    }
    Iteration { b, y, w, q, gradient: gv, mean, measure, step, margin: a }
}

/// The intercept's part of the quadratic model: G_b = Σᵢ qᵢ, H_b = Σᵢ Dᵢ, its direction d_b,
/// the column sums DXⱼ = Σᵢ xᵢⱼDᵢ and S = Σᵢ Dᵢ(Xd)ᵢ.
struct InterceptModel {
    slot: ScalarId,
    g: ScalarId,
    h: ScalarId,
    dir: ScalarId,
    cross: ScalarId,
    dx: VecId,
}

impl InterceptModel {
    fn declare(b: &mut Builder, slot: ScalarId) -> InterceptModel {
        InterceptModel {
            slot,
            g: b.local("Gb"),
            h: b.local("Hb"),
            dir: b.local("db"),
            cross: b.local("S"),
            dx: b.vector("DX", Len::Features, VecRole::State, 0.0),
        }
    }
}
