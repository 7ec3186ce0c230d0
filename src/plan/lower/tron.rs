//! Truncated Newton for a twice-differentiable loss with ½‖·‖² only (docs/algorithms.md §9, §11):
//! LIBLINEAR's primal solver for `-s 0` / `-s 2` in its current form (newton.cpp, LIBLINEAR
//! ≥ 2.40: Hsia, Chiang & Lin 2018, the line-search successor of TRON, Lin, Weng & Keerthi
//! 2008). For F(w) = (c/m)·Σᵢ ℓ(yᵢ, zᵢ) + (λ/2)‖w‖², z = Xw (+ b), one epoch is one Newton
//! iteration:
//!
//! 1. one pass at the margins z: g = ∇F = (c/m)·Xᵀℓ′ + λw, Dᵢ = (c/m)·ℓ″(yᵢ, zᵢ), ℓ(yᵢ, zᵢ), and
//!    the diagonal preconditioner M = λ + α·diag((c/m)·XᵀDX), α = 0.01 (newton.cpp's mix of the
//!    identity and the Hessian's diagonal, here in F's units), and F itself;
//! 2. preconditioned conjugate gradients on ∇²F·s = −g, each step one Hessian-vector product
//!    ∇²F·v = Xᵀ(D ⊙ Xv) + λv: per row, t = Dᵢ·⟨xᵢ, v⟩, then t·xᵢ scattered (rows with Dᵢ = 0,
//!    squared hinge beyond its margin, are skipped: LIBLINEAR's active set). CG stops by
//!    newton.cpp's rule on the quadratic model Q(s) = gᵀs + ½sᵀ∇²F s = −½(sᵀr − sᵀg): once
//!    step k's decrease is small against the total, k·(Qₖ − Qₖ₋₁) ≥ τ·Qₖ; or when Q stops
//!    decreasing, or the curvature pᵀ∇²F p is no longer positive. The forcing term is
//!    τ = min(0.5, √(ζ/|F|)) with ζ = gᵀM⁻¹g (about twice the decrease the step predicts),
//!    so τ ∝ ‖g‖ and the local rate is quadratic. newton.cpp's τ = min(0.5, ζ_P^{1/4}) in its
//!    units (P = F/λ, ζ_P = ζ/λ) stays at 0.5 until ‖g‖ is tiny, which is linear convergence
//!    near the optimum: LIBLINEAR stops at a loose ‖g‖ ≤ 0.01‖g₀‖, optc at a certified gap.
//!    On a9a at λ = 1/m to a certified 1e-8 that took 22 iterations, this rule 9, and half the
//!    time; dna (softmax) 41 against 9. On few features one dense Cholesky factor of the same
//!    system takes the step instead, where it costs less than the CG steps of the last
//!    iteration that ran them ([`Stmt::Newton`]);
//! 3. an Armijo backtracking line search on the exact F from the unit step,
//!    F(w + ηs) − F(w) ≤ σ·η·gᵀs (σ = 0.01, η halved at most 20 times), which costs one loss
//!    evaluation per row per trial (Xs is computed once), then w += ηs and z += η·Xs.
//!
//! An unregularized intercept b is one more coordinate with no λ: its gradient Σᵢ qᵢ, its row
//! and column of the Hessian Σᵢ Dᵢ and Σᵢ Dᵢxᵢ (one more term in t, one more sum in the
//! scatter), its preconditioner (1 − α)·λ + α·Σᵢ Dᵢ (newton.cpp's with the regularizer's 1
//! taken out). Multiclass softmax on W ∈ ℝ^{d×k} is the same iteration on the entries of W
//! ([`softmax`]): the row's Hessian in the scores is diag(p) − ppᵀ, p = softmax(Wᵀxᵢ).
//!
//! The driver's certificate (§10) decides when to stop (with no penalty, λ = 0, the gradient's
//! norm: see [`Newton`]'s `unpenalised`); an iteration whose line search fails leaves w as it
//! was. A quadratic loss (squared) has a constant ℓ″, inlined as a number, and its Newton model
//! is exact: CG runs to the certificate's residual in the first iteration.

mod softmax;

use super::super::build::*;
use super::super::{Expr, Index, Len, NewtonCall, ParamInit, Plan, Range, ScalarId, ScalarRole, Stmt, VecId, VecRole};
use super::{hoist_shared_calls, Builder};
use crate::analysis::{CoordinateProx, Structure};
use crate::check::Model;
use crate::diagnostics::Problem;
use crate::solvers::SolverKind;
use crate::symbolic::{Cmp, Func};

/// The preconditioner's floor without a penalty, where λ no longer holds it above 0.
const UNPENALISED_FLOOR: f64 = 1e-12;
/// Without a penalty the Newton system is damped by μₖ = DAMPING·‖∇F‖ (a regularized Newton
/// method). Logistic + b with no penalty, `--tol 1e-4`, epochs on a9a / w8a: μₖ = ‖∇F‖ 20 / 50,
/// 0.1·‖∇F‖ 12 / 15, 0.01·‖∇F‖ 11 / 11 (undamped, w8a's line searches all failed from epoch 8).
const DAMPING: f64 = 0.01;
/// newton.cpp's α_pcg: M = (1 − α)·I + α·diag(∇²P) in LIBLINEAR's units.
const ALPHA_PCG: f64 = 0.01;
/// newton.cpp's eps_cg: the loosest forcing term of the CG stopping rule.
const ETA_CG: f64 = 0.5;
/// CG steps of one Newton iteration, at most: newton.cpp allows max(n, 5), and its rule stops
/// far sooner; a constant bound keeps native code bounded whatever the data.
const MAX_CG: u32 = 1000;
/// CG's last step of a run: once the step's predicted decrease is at most this times tol·|F|,
/// CG goes on until the gap predicted after it is at most [`FINAL_SHARE`]·tol.
const FINAL_DECREASE: f64 = 1.0;
const FINAL_SHARE: f64 = 0.5;
/// ... and at most this share of |F|: a step that changes F by more is not yet where the
/// quadratic model predicts the next gradient (on a9a's squared hinge at `--tol 1e-2` the
/// residual promised a gap of 2e-3 after a step predicted to take off 1% of F; the gap found
/// was 20·|F|).
const QUADRATIC: f64 = 1e-3;
/// pᵀ∇²F p at most this times λ (1e-16 in LIBLINEAR's units) ends CG: 0/0 in its step.
const TINY_CURVATURE: f64 = 1e-16;
/// Armijo's sufficient-decrease fraction and the number of halvings (newton.cpp's).
const SIGMA: f64 = 0.01;
const MAX_HALVINGS: u32 = 20;

pub(super) fn lower(model: &Model, st: &Structure) -> Result<Plan, Problem> {
    match st.prox {
        Some(crate::analysis::ProxShape::Multiclass(prox, None)) if is_ridge(prox) => Ok(softmax::lower(model, prox)),
        Some(crate::analysis::ProxShape::Coordinate(prox)) if is_ridge(prox) => Ok(lower_scalar(model, st, prox)),
        _ => Err(Problem::error(
            "optc::plan",
            "`tron` is compiled for a smooth loss with λ·l2sq terms only (λ ≥ 0)",
            model.objective_span,
            "this model",
        )),
    }
}

/// ½‖·‖² with λ ≥ 0 and nothing else: what the analysis lets `tron` take (λ = 0: no penalty).
fn is_ridge(p: CoordinateProx) -> bool {
    p.l2 >= 0.0 && p.l1 == 0.0 && !p.has_box() && p.tangent.is_none()
}

/// A quantity with one value per coordinate of the variable: a vec[d] (or the mat[d, k] of a
/// multiclass W), plus the intercept's own scalar for it when the model has one.
#[derive(Clone, Copy)]
struct Var {
    buf: VecId,
    b: Option<ScalarId>,
    /// Softmax's per-class intercepts: a vec[k] beside the mat[d, k].
    classes: Option<VecId>,
}

/// Where a per-coordinate statement acts: an entry w[j] or W[j, c] inside the loops over
/// them, or the intercept (one scalar, no λ).
#[derive(Clone, Copy, PartialEq)]
enum Coord {
    Vector,
    Matrix,
    Intercept,
    /// b[c], one unregularized offset per class, inside a loop over the classes.
    ClassIntercept,
}

impl Coord {
    fn ld(self, v: Var) -> Expr {
        match self {
            Coord::Vector => at(v.buf, Index::Feature),
            Coord::Matrix => Expr::LoadAt(v.buf, Index::Feature, Index::Class),
            Coord::Intercept => s(v.b.expect("an intercept slot for every Var of a model with b")),
            Coord::ClassIntercept => {
                at(v.classes.expect("a class slot for every Var of a model with b[c]"), Index::Class)
            }
        }
    }

    fn set(self, v: Var, e: Expr) -> Stmt {
        match self {
            Coord::Vector => Stmt::Store(v.buf, Index::Feature, e),
            Coord::Matrix => Stmt::StoreAt(v.buf, Index::Feature, Index::Class, e),
            Coord::Intercept => Stmt::Set(v.b.expect("an intercept slot for every Var of a model with b"), e),
            Coord::ClassIntercept => {
                Stmt::Store(v.classes.expect("a class slot for every Var of a model with b[c]"), Index::Class, e)
            }
        }
    }

    /// `v = v + e`.
    fn add_to(self, v: Var, e: Expr) -> Stmt {
        self.set(v, add(self.ld(v), e))
    }

    /// λ·x for an entry; for the intercept μ·x with `μ·l2sq(b)`, None when it is unregularized.
    fn ridge(self, n: &Newton, x: Expr) -> Option<Expr> {
        match self {
            Coord::Intercept => n.lambda_b.map(|mu| mul(s(mu), x)),
            Coord::ClassIntercept => None,
            _ => Some(mul(s(n.lambda), x)),
        }
    }
}

/// The Newton-CG iteration's buffers and scalars, shared by the scalar and softmax plans; the
/// passes over the data are the model's ([`Passes`]).
struct Newton {
    /// The weights w (or W), with the intercept b.
    w: Var,
    g: Var,
    /// The preconditioner: the Hessian's diagonal data part, then M itself. None for softmax's
    /// W, whose CG is not preconditioned (M = λ, a parameter): on debian-desc.multiclass (20
    /// classes, 181k features) at λ = 1/m, newton.cpp's α = 0.01 took 8 Newton iterations and
    /// 15.2 s to a relative gap of 3.9e-3 where plain CG took 5 and 8.2 s (1e-6: 10 and 23 s
    /// against 7 and 17 s); dna and satimage took the same iterations either way.
    m: Option<Var>,
    /// The Newton step s, the CG residual r = −g − ∇²F·s, the CG direction p (V for a
    /// matrix) and ∇²F·p.
    step: Var,
    r: Var,
    v: Var,
    hv: Var,
    /// c/m and λ.
    mean: ScalarId,
    lambda: ScalarId,
    /// μ of `μ·l2sq(b)`, the intercept's own ridge, if the model penalises b.
    lambda_b: Option<ScalarId>,
    /// The relative gap a check after this epoch should find (see [`Plan::estimate`]).
    estimate: ScalarId,
    /// The run's `--tol`, ∞ without one (see [`Newton::conjugate_gradients`]).
    tolerance: ScalarId,
    /// The line search's step η and the change of the loss it measures, Σᵢ ωᵢ·(ℓ(new) − ℓ(old))
    /// (ωᵢ the row's weight, 1 without weights).
    eta: ScalarId,
    change: ScalarId,
    matrix: bool,
    /// No penalty (λ = 0): ‖∇F(0)‖², set by init (by the first epoch should ∇F(0) be 0). The
    /// estimate is then the
    /// relative gradient norm ‖∇F‖/‖∇F(0)‖, which ends the run ([`Uncertified::Gradient`]).
    unpenalised: Option<ScalarId>,
    /// ... and the damping μₖ ∝ ‖∇F‖ ([`DAMPING`]) of the Newton system (∇²F + μₖI)s = −∇F, a regularized
    /// Newton method: (c/m)·XᵀDX alone is singular along every direction no row's curvature
    /// reaches (w8a: CG's steps there left every line search failing), and μₖ → 0 with the
    /// gradient keeps the local rate superlinear. F itself keeps λ = 0.
    damping: Option<ScalarId>,
    /// The loss is quadratic (squared): the Newton model is F itself, so CG runs on to the
    /// gap the tolerance needs in the first iteration (see [`Newton::conjugate_gradients`]).
    quadratic: bool,
    /// D, the rows' curvature (a scalar loss's): the step is then first asked of one dense
    /// factor ([`Stmt::Newton`]), where the features are few enough for it to pay against the
    /// CG steps of the last iteration that ran CG (`cg_steps`, a state scalar; 0 after a line
    /// search that failed along a dense step), and CG runs only where it was not taken. None for
    /// softmax's W.
    curvature: Option<VecId>,
    cg_steps: Option<ScalarId>,
}

impl Newton {
    /// Declares the iteration's state after the weights (`w`, and b in `w.b`).
    fn declare(b: &mut Builder, model: &Model, w: Var, lambda_value: f64, matrix: bool) -> Newton {
        let mean = b.per_example_weight(model);
        let lambda = b.param("λ", lambda_value, "weight of ½‖·‖²");
        let intercept = w.b.is_some();
        let per_class = w.classes.is_some();
        let lambda_b = model
            .intercept_l2
            .as_ref()
            .filter(|_| intercept)
            .map(|r| b.param("μ", r.coef, "weight of ½b², the intercept's ridge"));
        // Named as vectors (g, s, …) or as matrices (G, S, …), the intercept's part with a b.
        let mut var = |vector: &str, matrix_name: &str, scalar: &str| {
            let buf = if matrix {
                b.matrix(matrix_name, Len::Features, Len::Classes, VecRole::State, 0.0)
            } else {
                b.vector(vector, Len::Features, VecRole::State, 0.0)
            };
            let classes = per_class.then(|| b.vector(&format!("{matrix_name}b"), Len::Classes, VecRole::State, 0.0));
            Var { buf, b: intercept.then(|| b.local(scalar)), classes }
        };
        let g = var("g", "G", "gb");
        let m = (!matrix).then(|| var("M", "M", "Mb"));
        let (step, r) = (var("s", "S", "sb"), var("r", "R", "rb"));
        let (v, hv) = (var("p", "V", "pb"), var("Hp", "HV", "Hpb"));
        let (eta, change) = (b.local("η"), b.local("ΔF"));
        let estimate = b.scalar(
            "gap≈",
            ScalarRole::State,
            ParamInit::Value(f64::INFINITY),
            "‖∇F‖²/(2λ|F|) where the last epoch started: the relative gap a check there finds",
        );
        b.plan.estimate = Some(estimate);
        let tolerance =
            b.scalar("tol", ScalarRole::State, ParamInit::Value(f64::INFINITY), "the run's --tol, set by the driver");
        b.plan.tolerance = Some(tolerance);
        let unpenalised = (lambda_value == 0.0).then(|| {
            b.state("‖g₀‖²", "‖∇F‖² at the run's first iterate: no penalty, the gradient's norm ends the run")
        });
        if unpenalised.is_some() {
            b.plan.scalars[estimate.0].note =
                "‖∇F‖/‖∇F(0)‖ where the last epoch started: the run ends when it is ≤ tol".into();
        }
        let damping = unpenalised.map(|_| b.state("μₖ", "‖∇F‖: the Newton system's damping, with no penalty"));
        Newton {
            w,
            g,
            m,
            step,
            r,
            v,
            hv,
            mean,
            lambda,
            lambda_b,
            estimate,
            tolerance,
            eta,
            change,
            matrix,
            unpenalised,
            damping,
            quadratic: false,
            curvature: None,
            cg_steps: None,
        }
    }

    /// M at a coordinate: the preconditioner's entry, or without one the coordinate's ridge
    /// (λ, or μ for b with `μ·l2sq(b)`).
    fn precond(&self, c: Coord) -> Expr {
        match (self.m, c, self.lambda_b) {
            (Some(m), _, _) => c.ld(m),
            (None, Coord::Intercept | Coord::ClassIntercept, Some(mu)) => s(mu),
            // No penalty (softmax's W): the damping, kept above 0.
            (None, _, _) => match self.damping {
                Some(mu) => call(Func::Max, vec![s(mu), k(UNPENALISED_FLOOR)]),
                None => s(self.lambda),
            },
        }
    }

    /// `body` at every coordinate: inside the loops over the entries, then at the intercept.
    fn each(&self, body: impl Fn(Coord) -> Vec<Stmt>) -> Vec<Stmt> {
        let entries = if self.matrix {
            each(Range::Upto(Len::Features), vec![each(Range::Upto(Len::Classes), body(Coord::Matrix))])
        } else {
            each(Range::Upto(Len::Features), body(Coord::Vector))
        };
        let mut out = vec![entries];
        if self.w.b.is_some() {
            out.extend(body(Coord::Intercept));
        }
        if self.w.classes.is_some() {
            out.push(each(Range::Upto(Len::Classes), body(Coord::ClassIntercept)));
        }
        out
    }

    /// The epoch: gradient pass, PCG, line search, move.
    fn epoch(&self, b: &mut Builder, passes: Passes) -> Vec<Stmt> {
        let n = self;
        let mut out = n.each(|c| {
            let mut zero = vec![c.set(n.g, c.ridge(n, c.ld(n.w)).unwrap_or(k(0.0)))];
            zero.extend(n.m.map(|m| c.set(m, k(0.0))));
            zero
        });
        out.extend(passes.gradient);
        // F(w), for the forcing term of CG: the losses at the margins, the ridge below.
        let fnow = b.local("F");
        out.extend([
            Stmt::Set(fnow, k(0.0)),
            each(Range::Upto(Len::Rows), vec![Stmt::Set(fnow, add(s(fnow), at(passes.losses, Index::Row)))]),
            Stmt::Set(fnow, mul(s(n.mean), s(fnow))),
        ]);
        let (rr, q) = (b.local("‖r‖²"), b.local("Q"));
        let (cg, dense) = self.conjugate_gradients(b, fnow, rr, q, passes.hessian);
        out.extend(cg);
        // After a full step, ∇F at the new iterate is −r up to the loss's change of curvature
        // along the step: the gap a check there finds is about ‖r‖²/(2λ|F|), F the value the
        // model predicts there, F + Q (F itself near the optimum; far below it after a first
        // step from 0, and exactly it for a quadratic loss). A dense step's r is 0, which says
        // nothing of that change: the estimate stays the one of the step's start.
        let predicted = div(s(rr), mul(mul(k(2.0), s(self.lambda)), floor_abs(add(s(fnow), s(q)))));
        let mut advance = passes.advance;
        if self.unpenalised.is_none() {
            let update = Stmt::Set(self.estimate, predicted);
            let update = match dense {
                Some(solved) => Stmt::If(Cmp::Lt, s(solved), k(0.5), vec![update]),
                None => update,
            };
            advance.push(Stmt::If(Cmp::Gt, s(self.eta), k(0.75), vec![update]));
        }
        // A line search that failed along a dense step leaves the next iteration to CG, whose
        // shorter, inexact step may pass where the whole Newton step did not.
        let failed = self.cg_steps.filter(|_| dense.is_some()).map(|last| Stmt::Set(last, k(0.0)));
        out.extend(self.line_search(b, passes.direction, passes.trial, advance, failed));
        out
    }

    /// Step 2: s ≈ −(∇²F)⁻¹g by preconditioned CG from s = 0, stopped by newton.cpp's rule,
    /// and on the last step of a run by the certificate's.
    ///
    /// The gap a check finds after a full step is about ‖r‖²/(2λ|F|), r CG's last residual,
    /// and newton.cpp's forcing term leaves ‖r‖ at a tenth or so of ‖g‖: the iterate is then
    /// often already within `--tol` of F* (the step's predicted decrease −Q ≈ F − F* is far
    /// below tol·|F|) while the gap at the next iterate still is not, and a whole further
    /// Newton iteration (a gradient pass, CG from scratch, a line search) is spent on the
    /// certificate. So once −Q ≤ [`FINAL_DECREASE`]·tol·|F| (and ≤ [`QUADRATIC`]·|F|), CG goes on until ‖r‖²/(2λ|F|) ≤
    /// [`FINAL_SHARE`]·tol: more steps on the same Hessian, which cost less than that iteration.
    /// A quadratic loss takes that rule from the first step: its model is exact, so a Newton
    /// iteration that stops CG early only restarts the same system from a new point. Ridge on a
    /// planted 100,000 × 50,000 set took 7 Newton iterations to `--tol 1e-4`; one CG run to the
    /// gap takes one, as scikit-learn's `Ridge` runs one CG solve.
    fn conjugate_gradients(
        &self,
        b: &mut Builder,
        fnow: ScalarId,
        rr: ScalarId,
        q: ScalarId,
        hessian: Vec<Stmt>,
    ) -> (Vec<Stmt>, Option<ScalarId>) {
        let n = self;
        let (zeta, zeta_new, tau) = (b.local("ζ"), b.local("ζn"), b.local("τ"));
        let (q_new, steps, done) = (b.local("Qn"), b.local("kcg"), b.local("done"));
        let (curv, alpha, beta, sr, sg) = (b.local("vHv"), b.local("α"), b.local("β"), b.local("sr"), b.local("sg"));
        let gg = b.local("‖g‖²");
        let mut out = vec![Stmt::Set(zeta, k(0.0)), Stmt::Set(gg, k(0.0))];
        // ‖g‖²: with no penalty in a pass of its own, for the damping μₖ the preconditioner reads
        // (PCG needs one M for the whole of its run); else beside the preconditioner's.
        let sum_gg = |c: Coord| Stmt::Set(gg, add(s(gg), mul(c.ld(n.g), c.ld(n.g))));
        if let Some(mu) = n.damping {
            out.extend(n.each(|c| vec![sum_gg(c)]));
            out.push(Stmt::Set(mu, mul(k(DAMPING), call(Func::Sqrt, vec![s(gg)]))));
        }
        out.extend(n.each(|c| {
            // M = (1 − α)·λ + α·(λ + H_data) for an entry = λ + α·H_data; for b, no λ inside
            // (μ instead, with `μ·l2sq(b)`).
            let preconditioner = n.m.map(|m| {
                let data = mul(k(ALPHA_PCG), c.ld(m));
                let value = match (c, n.lambda_b) {
                    (Coord::Intercept | Coord::ClassIntercept, Some(mu)) => add(s(mu), data),
                    (Coord::Intercept | Coord::ClassIntercept, None) => add(mul(k(1.0 - ALPHA_PCG), s(n.lambda)), data),
                    _ => add(n.damping.map_or(s(n.lambda), s), data),
                };
                // No penalty: a column without curvature (all zero, or beyond every margin of
                // the squared hinge) has no λ to hold M above 0.
                let value = match n.unpenalised {
                    Some(_) => call(Func::Max, vec![value, k(UNPENALISED_FLOOR)]),
                    None => value,
                };
                c.set(m, value)
            });
            preconditioner
                .into_iter()
                .chain([
                    c.set(n.step, k(0.0)),
                    c.set(n.r, Expr::Neg(Box::new(c.ld(n.g)))),
                    c.set(n.v, div(c.ld(n.r), n.precond(c))),
                    Stmt::Set(zeta, add(s(zeta), mul(c.ld(n.v), c.ld(n.r)))),
                ])
                .chain(n.damping.is_none().then(|| sum_gg(c)))
                .chain(c.ridge(n, mul(k(0.5), mul(c.ld(n.w), c.ld(n.w)))).map(|r| Stmt::Set(fnow, add(s(fnow), r))))
                .collect()
        }));
        // With ½‖·‖² alone, the duality gap at the dual point ℓ′ of the margins is exactly
        // ‖∇F‖²/(2λ) (Fenchel–Young with equality: F − D = ‖λw − z‖²/(2λ), z = −(c/m)·Xᵀℓ′), so
        // the epoch knows, for free, what a check at the point it started from would find; the
        // driver pays for a check only once it is near the tolerance (`Plan::estimate`).
        match n.unpenalised {
            None => out.push(Stmt::Set(n.estimate, div(s(gg), mul(mul(k(2.0), s(n.lambda)), floor_abs(s(fnow)))))),
            Some(g0) => out.extend([
                // The first epoch (‖g₀‖² starts at 0 and a gradient's is ≥ 0).
                Stmt::If(Cmp::Lt, s(g0), k(f64::MIN_POSITIVE), vec![Stmt::Set(g0, s(gg))]),
                Stmt::Set(
                    n.estimate,
                    Expr::Select(
                        Cmp::Gt,
                        Box::new(s(g0)),
                        Box::new(k(0.0)),
                        Box::new(call(Func::Sqrt, vec![div(s(gg), s(g0))])),
                        Box::new(k(0.0)),
                    ),
                ),
            ]),
        }
        out.extend([
            Stmt::Set(tau, call(Func::Min, vec![k(ETA_CG), call(Func::Sqrt, vec![div(s(zeta), floor_abs(s(fnow)))])])),
            Stmt::Set(q, k(0.0)),
            Stmt::Set(steps, k(0.0)),
            Stmt::Set(done, k(0.0)),
        ]);
        // Where it costs less than the CG steps of the last iteration, one dense factor solves
        // the Newton system (damped as CG's would be): its residual is 0 and Q = ½·gᵀs.
        let dense = n.curvature.map(|curvature| {
            let (solved, last) = (b.local("dense"), n.cg_steps.expect("declared with the curvature"));
            let ridge = n.damping.map_or(s(n.lambda), s);
            let ridge_b = n.lambda_b.map_or(k(0.0), s);
            let call = NewtonCall {
                curvature,
                gradient: n.g.buf,
                gradient_b: n.g.b,
                step: n.step.buf,
                step_b: n.step.b,
                ridge,
                ridge_b,
                cg_steps: s(last),
                solved,
            };
            out.push(Stmt::Newton(call));
            let mut taken = vec![Stmt::Set(rr, k(0.0))];
            taken.extend(n.each(|c| vec![Stmt::Set(q, add(s(q), mul(k(0.5), mul(c.ld(n.g), c.ld(n.step)))))]));
            out.push(Stmt::If(Cmp::Gt, s(solved), k(0.5), taken));
            solved
        });

        // One CG step: ∇²F·v, then the step along v, the stopping test, the next direction.
        let mut body = vec![Stmt::Set(steps, add(s(steps), k(1.0)))];
        body.extend(n.each(|c| {
            // Softmax's offsets are damped too: the scores are blind to b + t·1, along which
            // undamped CG steps grow b without bound.
            let ridge = match (n.damping, c) {
                (Some(mu), Coord::Vector | Coord::Matrix | Coord::ClassIntercept) => Some(mul(s(mu), c.ld(n.v))),
                _ => c.ridge(n, c.ld(n.v)),
            };
            vec![c.set(n.hv, ridge.unwrap_or(k(0.0)))]
        }));
        body.extend(hessian);
        body.push(Stmt::Set(curv, k(0.0)));
        body.extend(n.each(|c| vec![Stmt::Set(curv, add(s(curv), mul(c.ld(n.v), c.ld(n.hv))))]));
        body.push(Stmt::Set(done, select(Cmp::Gt, s(curv), mul(k(TINY_CURVATURE), s(n.lambda)), k(0.0), k(1.0))));
        let mut next = vec![Stmt::Set(beta, div(s(zeta_new), s(zeta)))];
        next.extend(n.each(|c| vec![c.set(n.v, add(div(c.ld(n.r), n.precond(c)), mul(s(beta), c.ld(n.v))))]));
        next.push(Stmt::Set(zeta, s(zeta_new)));
        // The step, the new residual, and in the same loop the sums the test and the next
        // direction need: sᵀr, sᵀg, ζ' = rᵀM⁻¹r.
        let mut stepped = vec![
            Stmt::Set(alpha, div(s(zeta), s(curv))),
            Stmt::Set(sr, k(0.0)),
            Stmt::Set(sg, k(0.0)),
            Stmt::Set(zeta_new, k(0.0)),
            Stmt::Set(rr, k(0.0)),
        ];
        stepped.extend(n.each(|c| {
            vec![
                c.add_to(n.step, mul(s(alpha), c.ld(n.v))),
                c.set(n.r, sub(c.ld(n.r), mul(s(alpha), c.ld(n.hv)))),
                Stmt::Set(sr, add(s(sr), mul(c.ld(n.step), c.ld(n.r)))),
                Stmt::Set(sg, add(s(sg), mul(c.ld(n.step), c.ld(n.g)))),
                Stmt::Set(zeta_new, add(s(zeta_new), div(mul(c.ld(n.r), c.ld(n.r)), n.precond(c)))),
                Stmt::Set(rr, add(s(rr), mul(c.ld(n.r), c.ld(n.r)))),
            ]
        }));
        // Done unless Q went down and this step's share of the decrease is still above τ, or
        // this is the run's last step and its residual is still above what the gap needs.
        let small = select(Cmp::Lt, mul(s(steps), sub(s(q_new), s(q))), mul(s(tau), s(q_new)), k(0.0), k(1.0));
        let tol_f = mul(s(n.tolerance), floor_abs(s(fnow)));
        // The gap is wanted relative to F after the step, F + Q.
        let tol_next = mul(s(n.tolerance), floor_abs(add(s(fnow), s(q_new))));
        let needed = mul(k(FINAL_SHARE), mul(mul(k(2.0), s(n.lambda)), tol_next));
        let decrease = Expr::Neg(Box::new(s(q_new)));
        let within = call(Func::Min, vec![mul(k(FINAL_DECREASE), tol_f), mul(k(QUADRATIC), floor_abs(s(fnow)))]);
        let last = if n.quadratic { k(0.0) } else { select(Cmp::Gt, decrease, within, k(1.0), k(0.0)) };
        // No penalty: no gap to shape the last step to; newton.cpp's rule alone.
        let enough = match n.unpenalised {
            Some(_) => k(1.0),
            None => select(Cmp::Lt, s(rr), needed, k(1.0), last),
        };
        stepped.extend([
            Stmt::Set(q_new, mul(k(-0.5), sub(s(sr), s(sg)))),
            Stmt::Set(done, select(Cmp::Gt, s(q_new), k(0.0), k(1.0), mul(small, enough))),
            Stmt::Set(q, s(q_new)),
            Stmt::If(Cmp::Lt, s(done), k(0.5), next),
        ]);
        body.push(Stmt::If(Cmp::Lt, s(done), k(0.5), stepped));
        let cg = Stmt::Repeat(MAX_CG, Cmp::Gt, s(done), k(0.5), body);
        out.push(match (dense, n.cg_steps) {
            (Some(solved), Some(last)) => Stmt::If(Cmp::Lt, s(solved), k(0.5), vec![cg, Stmt::Set(last, s(steps))]),
            _ => cg,
        });
        (out, dense)
    }

    /// Step 3: Armijo backtracking on F along s from η = 1, then the move.
    fn line_search(
        &self,
        b: &mut Builder,
        direction: Vec<Stmt>,
        trial: Vec<Stmt>,
        advance: Vec<Stmt>,
        failed: Option<Stmt>,
    ) -> Vec<Stmt> {
        let n = self;
        let (gs, ws, ss, ok) = (b.local("gs"), b.local("ws"), b.local("ss"), b.local("ok"));
        let (eta, change) = (n.eta, n.change);
        let mut out = vec![Stmt::Set(gs, k(0.0)), Stmt::Set(ws, k(0.0)), Stmt::Set(ss, k(0.0))];
        out.extend(n.each(|c| {
            let mut v = vec![Stmt::Set(gs, add(s(gs), mul(c.ld(n.g), c.ld(n.step))))];
            // The ridge below is λ·(η·wᵀs + ½η²·sᵀs): b's terms count in it at μ/λ of theirs.
            let (wsum, ssum) = (mul(c.ld(n.w), c.ld(n.step)), mul(c.ld(n.step), c.ld(n.step)));
            let weighted = match (c, n.lambda_b) {
                (Coord::Intercept, Some(mu)) => {
                    let wt = div(s(mu), s(n.lambda));
                    Some((mul(wt.clone(), wsum), mul(wt, ssum)))
                }
                (Coord::Intercept, None) | (Coord::ClassIntercept, _) => None,
                _ => Some((wsum, ssum)),
            };
            if let Some((wsum, ssum)) = weighted {
                v.push(Stmt::Set(ws, add(s(ws), wsum)));
                v.push(Stmt::Set(ss, add(s(ss), ssum)));
            }
            v
        }));
        // F(w + ηs) − F(w) = (c/m)·Σᵢ (ℓ(zᵢ + η(Xs)ᵢ) − ℓ(zᵢ)) + λ·(η·wᵀs + ½η²·sᵀs).
        let ridge = mul(s(n.lambda), add(mul(s(eta), s(ws)), mul(k(0.5), mul(mul(s(eta), s(eta)), s(ss)))));
        let mut attempt = vec![Stmt::Set(change, k(0.0))];
        attempt.extend(trial);
        attempt.extend([
            Stmt::Set(change, add(mul(s(n.mean), s(change)), ridge)),
            // Strictly below: a NaN change is a failed trial.
            Stmt::Set(ok, select(Cmp::Lt, s(change), mul(k(SIGMA), mul(s(eta), s(gs))), k(1.0), k(0.0))),
            Stmt::Set(eta, select(Cmp::Gt, s(ok), k(0.5), s(eta), mul(s(eta), k(0.5)))),
        ]);
        let mut moved = n.each(|c| vec![c.add_to(n.w, mul(s(eta), c.ld(n.step)))]);
        moved.extend(advance);
        out.extend(direction);
        out.extend([
            Stmt::Set(eta, k(1.0)),
            Stmt::Set(ok, k(0.0)),
            Stmt::If(
                Cmp::Lt,
                s(gs),
                k(0.0),
                vec![
                    Stmt::Repeat(MAX_HALVINGS, Cmp::Gt, s(ok), k(0.5), attempt),
                    Stmt::If(Cmp::Gt, s(ok), k(0.5), moved),
                ],
            ),
        ]);
        out.extend(failed.map(|f| Stmt::If(Cmp::Lt, s(ok), k(0.5), vec![f])));
        out
    }
}

/// The model's passes over the rows, written against [`Newton`]'s buffers.
struct Passes {
    /// ωᵢ·ℓ(yᵢ, zᵢ) per row (ωᵢ the row's weight, 1 without weights), which `gradient` stores.
    losses: VecId,
    /// Adds the data parts of g and of the Hessian's diagonal (into `m`); keeps what the
    /// Hessian-vector products need (D, or the probabilities) and ℓ at the margins.
    gradient: Vec<Stmt>,
    /// Adds Xᵀ(D ⊙ Xv) (or its softmax form) into `hv`.
    hessian: Vec<Stmt>,
    /// X·s, once per iteration.
    direction: Vec<Stmt>,
    /// Adds Σᵢ ℓ(zᵢ + η·(Xs)ᵢ) − ℓ(zᵢ) into `change`.
    trial: Vec<Stmt>,
    /// z += η·Xs.
    advance: Vec<Stmt>,
}

/// max(|x|, 1e-300): a divisor that is never 0.
fn floor_abs(x: Expr) -> Expr {
    call(Func::Max, vec![call(Func::Abs, vec![x]), k(1e-300)])
}

fn select(cmp: Cmp, l: Expr, r: Expr, yes: Expr, no: Expr) -> Expr {
    Expr::Select(cmp, Box::new(l), Box::new(r), Box::new(yes), Box::new(no))
}

/// The plan for a scalar loss ℓ(y, ⟨x, w⟩ (+ b)).
fn lower_scalar(model: &Model, st: &Structure, prox: CoordinateProx) -> Plan {
    let mut b = Builder::new(model, SolverKind::Tron, false, prox, None);
    b.plan.info.summary = summary(model, "Newton steps by preconditioned CG on ∇²F = (c/m)·XᵀDX + λI");
    let (y, w) = b.labels_and_weights();
    let weights = Var { buf: w, b: b.intercept(), classes: None };
    let mut n = Newton::declare(&mut b, model, weights, prox.l2, false);
    n.quadratic = is_quadratic(&b, model, st);
    let m = n.m.expect("a vector w's CG is preconditioned");
    let (i, j) = (Index::Row, Index::Feature);
    let z = b.vector("z", Len::Rows, VecRole::State, 0.0);
    let dd = b.vector("D", Len::Rows, VecRole::State, 0.0);
    let lz = b.vector("ℓz", Len::Rows, VecRole::State, 0.0);
    let xs = b.vector("Xs", Len::Rows, VecRole::State, 0.0);
    n.curvature = Some(dd);
    n.cg_steps = Some(b.state("k_cg", "conjugate-gradient steps of the last iteration that took them"));
    let (q, t, a) = (b.local("q"), b.local("t"), b.local("a"));
    let intercept = |v: Var| v.b.map_or(k(0.0), s);

    // z = Xw + b, by rows (no column copy of X is needed).
    let dot = |v: VecId, into: ScalarId, start: Expr| {
        vec![
            Stmt::Set(into, start),
            each(Range::RowNonZeros, vec![Stmt::Set(into, add(s(into), mul(Expr::Value, at(v, j))))]),
        ]
    };
    let mut init_row = dot(w, t, intercept(n.w));
    init_row.push(Stmt::Store(z, i, s(t)));
    b.plan.init = vec![each(Range::Upto(Len::Rows), init_row)];
    // No penalty: ‖∇F(0)‖², LIBLINEAR's reference for its gradient rule, taken at w = 0 (and
    // b = 0) whatever the run starts from: a warm start near the optimum has a tiny gradient
    // that the rule could never get a tol below.
    if let Some(g0) = n.unpenalised {
        let mut at_zero = vec![Stmt::Set(q, mul(s(n.mean), b.dloss(model, st, y, k(0.0))))];
        at_zero
            .push(each(Range::RowNonZeros, vec![Stmt::Store(n.g.buf, j, add(at(n.g.buf, j), mul(Expr::Value, s(q))))]));
        if let Some(gb) = n.g.b {
            at_zero.push(Stmt::Set(gb, add(s(gb), s(q))));
        }
        b.plan.init.push(each(Range::Upto(Len::Features), vec![Stmt::Store(n.g.buf, j, k(0.0))]));
        b.plan.init.extend(n.g.b.map(|gb| Stmt::Set(gb, k(0.0))));
        b.plan.init.push(each(Range::Upto(Len::Rows), at_zero));
        b.plan.init.push(Stmt::Set(g0, n.g.b.map_or(k(0.0), |gb| mul(s(gb), s(gb)))));
        b.plan.init.push(each(
            Range::Upto(Len::Features),
            vec![Stmt::Set(g0, add(s(g0), mul(at(n.g.buf, j), at(n.g.buf, j))))],
        ));
    }

    // 1. ℓ′, ℓ″ and ℓ at the margins (they share their transcendental calls).
    let derivatives =
        vec![b.dloss(model, st, y, at(z, i)), curvature(&b, model, st, y, at(z, i)), b.loss_at(model, y, at(z, i))];
    let (mut per_row, exprs) = hoist_shared_calls(&mut b, derivatives);
    let [dloss, d2, loss] = <[Expr; 3]>::try_from(exprs).unwrap_or_else(|_| unreachable!("three in, three out"));
    per_row.extend([
        Stmt::Set(q, mul(s(n.mean), dloss)),
        Stmt::Guard(s(q), "the loss derivative ℓ′".into()),
        Stmt::Store(dd, i, mul(s(n.mean), d2)),
        Stmt::Store(lz, i, loss),
        each(
            Range::RowNonZeros,
            vec![
                Stmt::Store(n.g.buf, j, add(at(n.g.buf, j), mul(s(q), Expr::Value))),
                Stmt::Store(m.buf, j, add(at(m.buf, j), mul(at(dd, i), mul(Expr::Value, Expr::Value)))),
            ],
        ),
    ]);
    if n.w.b.is_some() {
        let c = Coord::Intercept;
        per_row.extend([c.add_to(n.g, s(q)), c.add_to(m, at(dd, i))]);
    }

    // 2. (∇²F·v)ᵢ's data part, row by row: t = Dᵢ·(⟨xᵢ, v⟩ + v_b), then t·xᵢ (and t to b).
    let mut hv_row = dot(n.v.buf, t, intercept(n.v));
    hv_row.extend([
        Stmt::Set(t, mul(at(dd, i), s(t))),
        each(Range::RowNonZeros, vec![Stmt::Store(n.hv.buf, j, add(at(n.hv.buf, j), mul(s(t), Expr::Value)))]),
    ]);
    if n.w.b.is_some() {
        hv_row.push(Coord::Intercept.add_to(n.hv, s(t)));
    }

    // 3. Xs (+ s_b), then ℓ at z + η·Xs per trial.
    let mut xs_row = dot(n.step.buf, t, intercept(n.step));
    xs_row.push(Stmt::Store(xs, i, s(t)));
    let trial_loss = b.loss_at(model, y, add(at(z, i), mul(s(n.eta), at(xs, i))));
    let passes = Passes {
        losses: lz,
        gradient: vec![each(Range::Upto(Len::Rows), per_row)],
        hessian: vec![each(Range::Upto(Len::Rows), vec![Stmt::If(Cmp::Gt, at(dd, i), k(0.0), hv_row)])],
        direction: vec![each(Range::Upto(Len::Rows), xs_row)],
        trial: vec![each(
            Range::Upto(Len::Rows),
            vec![Stmt::Set(n.change, add(s(n.change), sub(trial_loss, at(lz, i))))],
        )],
        advance: vec![each(Range::Upto(Len::Rows), vec![Stmt::Store(z, i, add(at(z, i), mul(s(n.eta), at(xs, i))))])],
    };
    b.plan.epoch = n.epoch(&mut b, passes);
    b.report(model, st, w, y, a);
    // No penalty: no regularizer's conjugate bounds the dual, so the gradient's norm ends the run.
    if n.unpenalised.is_some() {
        b.plan.certificate = None;
        b.plan.uncertified = super::super::Uncertified::Gradient { norm: n.estimate };
    }
    b.plan
}

/// ωᵢ·ℓ″(y[i], a) inlined: the stdlib formula's second derivative, or its constant value for a
/// quadratic loss (ωᵢ the row's weight, when the loss is weighted).
fn curvature(b: &Builder, model: &Model, st: &Structure, y: VecId, a: Expr) -> Expr {
    if let Some(f) = b.second_derivative(model, st) {
        return b.at_point(model, &f, y, a);
    }
    let d1 = st.derivative.clone().expect("scalar losses have a derived ℓ′");
    let d2 = crate::symbolic::simplify(&crate::symbolic::derivative(&d1, &model.loss.def.margin));
    b.row_weighted(k(d2.as_const().unwrap_or(0.0)))
}

/// ℓ″ is a constant: the loss is quadratic in the margin.
fn is_quadratic(b: &Builder, model: &Model, st: &Structure) -> bool {
    st.derivative.is_some() && b.second_derivative(model, st).is_none()
}

/// The dump's header: the model, then the method.
fn summary(model: &Model, method: &str) -> String {
    let loss = &model.loss.def;
    let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
    format!(
        "loss {} (smooth, β = {}), R = {}{}; {method}, Armijo line search on F",
        loss.name,
        crate::symbolic::fmt_num(loss.smooth.unwrap_or(0.0)),
        regs.join(" + "),
        if model.intercept.is_some() { ", intercept b unregularized" } else { "" },
    )
}
