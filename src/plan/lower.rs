//! Checked model + structure → update plan, one module per solver: `fobos` (stochastic,
//! lazy O(nnz) steps), `adagrad` (FOBOS with per-coordinate steps), `scd` (coordinate descent
//! over columns), `proxgrad` (batch proximal gradient with FISTA momentum), `tron` (Newton-CG
//! for ½‖·‖² alone). They share `Builder`: the declarations, the report (F from
//! the stdlib formulas, ℓ′ for the dual point) and the certificate.

mod adagrad;
mod alm;
mod dc;
mod dcd;
pub mod dictionary;
mod fobos;
mod multiclass;
mod newton;
mod pdhg;
mod proxgrad;
mod scd;
mod smidas;
mod smm;
mod svm;
mod tron;

use super::build::*;
use super::{
    Certificate, Expr, Index, Len, LossConjugate, ParamInit, Plan, PlanInfo, ScalarDecl, ScalarId, ScalarRole, VecDecl,
    VecId, VecRole,
};
use crate::analysis::{CoordinateProx, ProxShape, Structure};
use crate::check::Model;
use crate::diagnostics::Problem;
use crate::runtime::VectorTerm;
use crate::solvers::SolverKind;
use crate::symbolic::{Func, Sym};

/// Options of lowering that are not part of the model.
#[derive(Clone, Copy, Debug)]
pub struct LowerOptions {
    /// Defer the prox of untouched coordinates (O(nnz) steps). Off gives the eager O(d)
    /// reference the lazy plan is tested against.
    pub lazy: bool,
}

impl Default for LowerOptions {
    fn default() -> Self {
        LowerOptions { lazy: true }
    }
}

pub fn lower(model: &Model, st: &Structure, opts: LowerOptions) -> Result<Plan, Problem> {
    let Some(choice) = &st.chosen else {
        let why = st.unavailable.clone().unwrap_or_default();
        let span = model.solver.as_ref().map_or(model.objective_span, |s| s.span);
        return Err(Problem::error("optc::plan", format!("no update plan for this model: {why}"), span, "this model")
            .with_help("`optc check` shows the structure optc recognised and the solver it needs"));
    };
    if choice.solver == SolverKind::Tron {
        return tron::lower(model, st);
    }
    match (choice.solver, &st.prox) {
        (SolverKind::Proxgrad, Some(ProxShape::Multiclass(prox, rows))) => {
            Ok(multiclass::lower(model, st, *prox, *rows))
        }
        (SolverKind::Fobos, Some(ProxShape::Multiclass(prox, rows))) => {
            Ok(fobos::lower_multiclass(model, st, *prox, *rows, opts))
        }
        (SolverKind::Proxgrad, Some(ProxShape::Composite(prox, term))) => {
            Ok(proxgrad::lower_composite(model, st, *prox, term.clone()))
        }
        (SolverKind::Proxgrad, Some(ProxShape::Vector(prox, term))) => {
            Ok(proxgrad::lower(model, st, *prox, Some(*term)))
        }
        (SolverKind::Pdhg, Some(ProxShape::Vector(prox, term))) => {
            Ok(pdhg::lower(model, st, *prox, pdhg::Whole::Vector(*term)))
        }
        (SolverKind::Pdhg, Some(ProxShape::Composite(prox, term)))
            if term.prox == super::CompositeProx::GroupShrink =>
        {
            Ok(pdhg::lower(model, st, *prox, pdhg::Whole::Groups(term.clone())))
        }
        (s, Some(ProxShape::Coordinate(prox))) => coordinate(s, model, st, *prox, opts),
        (s, _) => Err(not_compiled(s, model)),
    }
}

/// The plans of a prox that is one closed form per coordinate.
fn coordinate(
    s: SolverKind,
    model: &Model,
    st: &Structure,
    prox: CoordinateProx,
    opts: LowerOptions,
) -> Result<Plan, Problem> {
    match s {
        SolverKind::Dc if prox.tangent.is_some() => Ok(dc::lower(model, st, prox, opts)),
        // Only the DC solvers keep the tangent weights of `logeps` (the analysis refuses others).
        s if prox.tangent.is_some() => Err(not_compiled(s, model)),
        SolverKind::Fobos => Ok(fobos::lower(model, st, prox, opts)),
        SolverKind::Truncated => Ok(fobos::lower_truncated(model, st, prox, opts)),
        SolverKind::Smidas => Ok(smidas::lower(model, st, prox)),
        SolverKind::Smm => Ok(smm::lower(model, st, prox, opts)),
        SolverKind::Adagrad => Ok(adagrad::lower(model, st, prox, opts)),
        SolverKind::Scd => Ok(scd::lower(model, st, prox)),
        SolverKind::Proxgrad => Ok(proxgrad::lower(model, st, prox, None)),
        SolverKind::Picard => Ok(svm::lower(model, st, prox)),
        SolverKind::Dcd => Ok(dcd::lower(model, st, prox)),
        SolverKind::Alm => Ok(alm::lower(model, st, prox)),
        SolverKind::Pdhg => Ok(pdhg::lower(model, st, prox, pdhg::Whole::None)),
        s => Err(not_compiled(s, model)),
    }
}

fn not_compiled(s: SolverKind, model: &Model) -> Problem {
    Problem::error(
        "optc::plan",
        format!("`{}` is not compiled by this build for this model", s.name()),
        model.objective_span,
        "this model",
    )
}

/// A plan under construction: declarations in order, and the parts every solver shares.
pub(super) struct Builder {
    pub plan: Plan,
    prox: CoordinateProx,
    /// The vector routine applied after the per-coordinate prox, if any.
    vector: Option<VectorTerm>,
    /// The composite term whose prox is the Picard call, if any.
    pub composite: Option<super::Composite>,
    /// The weights ηⱼ of the tangent of a `logeps` term (the DC solvers), declared with w.
    tangent: Option<VecId>,
    /// Whether the model adds an intercept to its margins (the note b is declared with: how it
    /// enters F), and its slot once declared with w.
    wants_intercept: Option<String>,
    intercept: Option<ScalarId>,
    /// Whether the loss is weighted (`E[s·loss(...)]`), and the rows' weights once declared
    /// with w: [`Builder::dloss`], [`Builder::loss_at`] and [`Builder::at_point`] then carry ωᵢ.
    wants_row_weights: bool,
    row_weights: Option<VecId>,
}

impl Builder {
    pub fn new(
        model: &Model,
        solver: SolverKind,
        lazy: bool,
        prox: CoordinateProx,
        vector: Option<VectorTerm>,
    ) -> Builder {
        let loss = &model.loss.def;
        let regs: Vec<&str> = model.regs.iter().map(|r| r.text.as_str()).collect();
        let mut summary = format!(
            "loss {} ({}), R = {}",
            loss.name,
            match loss.smooth {
                Some(b) => format!("smooth, β = {}", crate::symbolic::fmt_num(b)),
                None => "subgradient".into(),
            },
            if regs.is_empty() { "0".to_string() } else { regs.join(" + ") }
        );
        if !model.constraints.is_empty() {
            let cs: Vec<&str> = model.constraints.iter().map(|c| c.text.as_str()).collect();
            summary.push_str(&format!(", st {}", cs.join(", ")));
        }
        let per_coordinate = prox.l1 > 0.0 || prox.l2 > 0.0 || prox.has_box();
        match vector {
            None => summary.push_str(&format!("; prox per coordinate {}", prox.describe())),
            Some(t) if per_coordinate => summary.push_str(&format!(
                "; prox per coordinate {}, then {} of {}",
                prox.describe(),
                t.routine().name(),
                t.describe()
            )),
            Some(t) => summary.push_str(&format!("; prox {} of {}", t.routine().name(), t.describe())),
        }
        let info =
            PlanInfo { solver, summary, lazy, classification: loss.label_kind == crate::stdlib::LabelKind::Labels };
        let mut plan = Plan::empty(info);
        plan.objective.vector = vector;
        let wants_intercept = model.intercept.as_ref().map(|_| match &model.intercept_l2 {
            Some(r) => format!("the intercept, added to every margin, penalised by `{}`", r.text),
            None => "the intercept, added to every margin, unregularized".into(),
        });
        Builder {
            plan,
            prox,
            vector,
            composite: None,
            tangent: None,
            wants_intercept,
            intercept: None,
            wants_row_weights: model.loss.weighted,
            row_weights: None,
        }
    }

    pub fn scalar(&mut self, name: &str, role: ScalarRole, init: ParamInit, note: &str) -> ScalarId {
        self.plan.scalars.push(ScalarDecl { name: name.into(), role, init, note: note.into() });
        ScalarId(self.plan.scalars.len() - 1)
    }

    pub fn param(&mut self, name: &str, v: f64, note: &str) -> ScalarId {
        self.scalar(name, ScalarRole::Param, ParamInit::Value(v), note)
    }

    pub fn state(&mut self, name: &str, note: &str) -> ScalarId {
        self.scalar(name, ScalarRole::State, ParamInit::Value(0.0), note)
    }

    pub fn local(&mut self, name: &str) -> ScalarId {
        self.scalar(name, ScalarRole::Local, ParamInit::Value(0.0), "")
    }

    pub fn vector(&mut self, name: &str, len: Len, role: VecRole, init: f64) -> VecId {
        self.plan.vectors.push(VecDecl { name: name.into(), len, cols: None, role, init });
        VecId(self.plan.vectors.len() - 1)
    }

    /// A row-major `mat[len, cols]`.
    pub fn matrix(&mut self, name: &str, len: Len, cols: Len, role: VecRole, init: f64) -> VecId {
        self.plan.vectors.push(VecDecl { name: name.into(), len, cols: Some(cols), role, init });
        VecId(self.plan.vectors.len() - 1)
    }

    /// L = c·β·λmax(XᵀX)/m, the step bound of the batch solvers (β: the loss's curvature bound).
    pub fn lipschitz(&mut self, model: &Model, beta: f64) -> ScalarId {
        let scale = model.loss.coef.value * beta;
        self.scalar(
            "L",
            ScalarRole::Param,
            ParamInit::GramNorm { scale },
            "c·β·λmax(XᵀX)/m (power iteration): the Lipschitz constant of ∇f",
        )
    }

    /// 1/τ′ = L + l2: the inverse step left for a prox applied after the per-coordinate
    /// ½‖·‖² scaling (prox_{τ(R + l2/2‖·‖²)}(v) = prox_{τ′R}(v/(1 + τ·l2)), τ = 1/L).
    pub fn scaled_inverse_step(&self, lip: ScalarId) -> Expr {
        if self.prox.l2 > 0.0 {
            add(s(lip), k(self.prox.l2))
        } else {
            s(lip)
        }
    }

    /// `c/m`, the weight of one example's loss in F.
    pub fn per_example_weight(&mut self, model: &Model) -> ScalarId {
        let c = model.loss.coef.value;
        self.scalar("c/m", ScalarRole::Param, ParamInit::PerRow { scale: c }, "weight of one example's loss")
    }

    /// y, and w started at the point of the box nearest 0 (every stored weight is feasible);
    /// with a `logeps` term, also its tangent weights η, at 1/ε (the tangent at w = 0).
    pub fn labels_and_weights(&mut self) -> (VecId, VecId) {
        let y = self.vector("y", Len::Rows, VecRole::Labels, 0.0);
        if self.wants_row_weights {
            self.row_weights = Some(self.vector("ω", Len::Rows, VecRole::RowWeights, 1.0));
        }
        let w = self.vector("w", Len::Features, VecRole::Weights, super::clamp(0.0, self.prox.lo, self.prox.hi));
        if let Some(t) = self.prox.tangent {
            self.tangent = Some(self.vector("η", Len::Features, VecRole::State, 1.0 / t.eps));
        }
        if let Some(note) = self.wants_intercept.clone() {
            self.intercept = Some(self.state("b", &note));
        }
        (y, w)
    }

    /// The rows' weights s, once declared with w (a weighted loss only).
    pub fn row_weights(&self) -> Option<VecId> {
        self.row_weights
    }

    /// Whether the model has an intercept (declared or not yet).
    pub fn wants_intercept(&self) -> bool {
        self.wants_intercept.is_some()
    }

    /// The intercept's slot, when the model has one (declared by [`Builder::labels_and_weights`]).
    pub fn intercept(&self) -> Option<ScalarId> {
        self.intercept
    }

    /// The unregularized stochastic step on the intercept, b ← b − η·g with ηg = η·c·ℓ′ the
    /// step the weights take per unit of feature value (the intercept's feature is 1).
    pub fn intercept_step(&self, eta_g: Expr) -> Vec<super::Stmt> {
        self.intercept.map(|b| super::Stmt::Set(b, sub(s(b), eta_g))).into_iter().collect()
    }

    /// The tangent weights η of a `logeps` term and the term, once declared.
    pub fn tangent(&self) -> Option<(VecId, crate::analysis::Tangent)> {
        self.tangent.zip(self.prox.tangent)
    }

    /// The ℓ1 weight of coordinate j: l1, plus coef·η[j] from a `logeps` tangent.
    fn l1_at(&self) -> Option<Expr> {
        let p = self.prox;
        let weighted = self.tangent().map(|(eta, t)| mul(k(t.coef), at(eta, Index::Feature)));
        match (p.l1 > 0.0, weighted) {
            (true, Some(e)) => Some(add(k(p.l1), e)),
            (false, Some(e)) => Some(e),
            (true, None) => Some(k(p.l1)),
            (false, None) => None,
        }
    }

    /// ωᵢ·ℓ′(y[i], a) inlined from the stdlib formula (ωᵢ the row's weight, when the loss is
    /// weighted), without the term's coefficient c.
    pub fn dloss(&self, model: &Model, st: &Structure, y: VecId, a: Expr) -> Expr {
        self.row_weighted(Self::unweighted_dloss(model, st, y, a))
    }

    /// ℓ′(y[i], a), the certificate's dual point whatever the rows' weights.
    fn unweighted_dloss(model: &Model, st: &Structure, y: VecId, a: Expr) -> Expr {
        let loss = &model.loss.def;
        let derivative = st.derivative.clone().expect("scalar losses have a derived ℓ′");
        formula(&derivative, &[(loss.label.as_str(), at(y, Index::Row)), (loss.margin.as_str(), a)])
    }

    /// ωᵢ·e for a weighted loss, e otherwise.
    pub fn row_weighted(&self, e: Expr) -> Expr {
        match self.row_weights {
            Some(s) => mul(at(s, Index::Row), e),
            None => e,
        }
    }

    /// c·ℓ′(y[i], a), the loss term's weight c a parameter declared here when it is not 1: the
    /// gradient coefficient of one example in the stochastic solvers' steps.
    pub fn weighted_dloss(&mut self, model: &Model, st: &Structure, y: VecId, a: Expr) -> Expr {
        let dloss = self.dloss(model, st, y, a);
        let c = model.loss.coef.value;
        if c == 1.0 {
            return dloss;
        }
        let cw = self.param("c", c, "weight of the loss term");
        mul(s(cw), dloss)
    }

    /// ωᵢ·ℓ(y[i], a) inlined from the stdlib formula (ωᵢ as in [`Builder::dloss`]).
    pub fn loss_at(&self, model: &Model, y: VecId, a: Expr) -> Expr {
        let loss = &model.loss.def;
        let value = loss.value.clone().expect("scalar losses have a formula");
        self.row_weighted(formula(&value, &[(loss.label.as_str(), at(y, Index::Row)), (loss.margin.as_str(), a)]))
    }

    /// ℓ″(y, a) as a formula, or None when it is a constant (a quadratic loss: then the
    /// curvature bound is exact and no line search is needed).
    pub fn second_derivative(&self, model: &Model, st: &Structure) -> Option<Sym> {
        let loss = &model.loss.def;
        let d1 = st.derivative.clone()?;
        let d2 = crate::symbolic::simplify(&crate::symbolic::derivative(&d1, &loss.margin));
        d2.as_const().is_none().then_some(d2)
    }

    /// ωᵢ·ℓ″(y[i], a) for a formula from [`Builder::second_derivative`] (ωᵢ as in
    /// [`Builder::dloss`]).
    pub fn at_point(&self, model: &Model, f: &Sym, y: VecId, a: Expr) -> Expr {
        let loss = &model.loss.def;
        self.row_weighted(formula(f, &[(loss.label.as_str(), at(y, Index::Row)), (loss.margin.as_str(), a)]))
    }

    /// r(v) = l1·|v| + (l2/2)·v² for one coordinate (the box holds by construction); with a
    /// `logeps` tangent, l1 + coef·η[j] in place of l1 (the convex surrogate, not F's term).
    pub fn coordinate_penalty(&self, v: Expr) -> Expr {
        let p = self.prox;
        let l1 = self.l1_at();
        let mut e = k(0.0);
        if let Some(l1) = &l1 {
            e = mul(l1.clone(), call(Func::Abs, vec![v.clone()]));
        }
        if p.l2 > 0.0 {
            let q = mul(k(0.5 * p.l2), mul(v.clone(), v));
            e = if l1.is_some() { add(e, q) } else { q };
        }
        e
    }

    /// The prox of τ·(l1·|v| + (l2/2)·v²) + ι[lo, hi] at v, with τ an expression (1/βⱼ, 1/L);
    /// with a `logeps` tangent, the threshold is τ·(l1 + coef·η[j]).
    pub fn coordinate_prox(&self, v: Expr, tau: Expr) -> Expr {
        let p = self.prox;
        let mut e = v;
        if let Some(l1) = self.l1_at() {
            e = soft(e, mul(tau.clone(), l1));
        }
        if p.l2 > 0.0 {
            e = div(e, add(k(1.0), mul(tau, k(p.l2))));
        }
        if p.has_box() {
            e = clamp(e, p.lo, p.hi);
        }
        e
    }

    /// The report (F from the stdlib formulas, ℓ′ for the dual point) and the certificate.
    pub fn report(&mut self, model: &Model, st: &Structure, w: VecId, y: VecId, margin: ScalarId) {
        let loss = &model.loss.def;
        let value = loss.value.clone().expect("scalar losses have a formula");
        let point = [(loss.label.as_str(), at(y, Index::Row)), (loss.margin.as_str(), s(margin))];
        let loss_expr = formula(&value, &point);
        let dloss = Self::unweighted_dloss(model, st, y, s(margin));
        let penalty = entry_penalty(model, at(w, Index::Feature));
        self.plan.objective = super::Objective {
            loss: loss_expr,
            dloss,
            margin,
            intercept: self.intercept,
            intercept_l2: model.intercept_l2.as_ref().map_or(0.0, |r| r.coef),
            class_intercept: None,
            loss_weight: model.loss.coef.value,
            penalty,
            vector: self.vector,
            composite: self.composite.clone(),
            dual: None,
            dual_only: false,
            softmax: false,
            dictionary: None,
        };
        // ℓ* in closed form for the stdlib's losses (a model cannot redefine them) and for a
        // loss the model declares with one of their formulas; any other has none here.
        let conjugate = conjugate_of(loss);
        let p = self.prox;
        let vector = self.vector;
        // R* of ω∘B has no closed form here (such runs stop on the relative change of F), but
        // for group_l2 over disjoint groups it has: R is then separable per group. With a
        // `logeps` term F is not convex: no dual bounds F − F*.
        let conjugate = conjugate.filter(|_| self.prox.tangent.is_none());
        let (conjugate, groups) = match &self.composite {
            None => (conjugate, None),
            Some(c) if c.prox == super::CompositeProx::GroupShrink => (conjugate, Some(c.coef)),
            Some(_) => (None, None),
        };
        self.plan.certificate = conjugate.map(|conjugate| Certificate {
            conjugate,
            l1: p.l1,
            l2: p.l2,
            lo: p.lo,
            hi: p.hi,
            vector,
            groups,
            intercept: self.intercept.is_some(),
            intercept_l2: model.intercept_l2.as_ref().map_or(0.0, |r| r.coef),
        });
    }

    /// The report of a multiclass plan: softmax over the scores (evaluated by the report
    /// itself), the per-entry penalty at W[j, c], the row term, and softmax's certificate.
    pub fn report_multiclass(&mut self, model: &Model, w: VecId, unused_margin: ScalarId) {
        let penalty = entry_penalty(model, Expr::LoadAt(w, Index::Feature, Index::Class));
        self.plan.objective = super::Objective {
            loss: k(0.0),
            dloss: k(0.0),
            margin: unused_margin,
            intercept: None,
            intercept_l2: 0.0,
            class_intercept: None,
            loss_weight: model.loss.coef.value,
            penalty,
            vector: self.vector,
            composite: None,
            dual: None,
            dual_only: false,
            softmax: true,
            dictionary: None,
        };
        let p = self.prox;
        self.plan.certificate = Some(Certificate {
            conjugate: LossConjugate::Softmax,
            l1: p.l1,
            l2: p.l2,
            lo: p.lo,
            hi: p.hi,
            vector: self.vector,
            groups: None,
            intercept: false,
            intercept_l2: 0.0,
        });
    }
}

/// The conjugate the certificate evaluates for a scalar loss optc knows, with the constants
/// its call bound (Huber's δ).
pub(crate) fn conjugate_of(loss: &crate::stdlib::LossDef) -> Option<LossConjugate> {
    use crate::stdlib::KnownLoss;
    match loss.known()? {
        KnownLoss::Logistic => Some(LossConjugate::Logistic),
        KnownLoss::Squared => Some(LossConjugate::Squared),
        KnownLoss::Hinge => Some(LossConjugate::Hinge),
        KnownLoss::SquaredHinge => Some(LossConjugate::SquaredHinge),
        KnownLoss::Softmax => None,
        KnownLoss::Huber => loss.bound.first().map(|&delta| LossConjugate::Huber(delta)),
        KnownLoss::Quantile => loss.bound.first().map(|&tau| LossConjugate::Quantile(tau)),
        KnownLoss::EpsInsensitive => loss.bound.first().map(|&eps| LossConjugate::EpsInsensitive(eps)),
        KnownLoss::SquaredEpsInsensitive => loss.bound.first().map(|&eps| LossConjugate::SquaredEpsInsensitive(eps)),
        KnownLoss::Poisson => Some(LossConjugate::Poisson),
    }
}

/// Σ of the regularizers that have a per-coordinate formula, each at `entry` (w[j] or W[j, c]);
/// the scalar parameters (α, ε) become constants. A composite ω(B w) is not one of them, even
/// when ω has such a formula: the report adds it through the operator.
fn entry_penalty(model: &Model, entry: Expr) -> Expr {
    let mut penalty = k(0.0);
    for r in model.regs.iter().filter(|r| r.def.per_coordinate.is_some() && r.operator.is_none() && r.groups.is_none())
    {
        let f = r.def.per_coordinate.clone().expect("filtered");
        let f = f.substitute(&|n| r.scalars.iter().find(|(p, _)| p == n).map(|(_, v)| Sym::Const(*v)));
        let term = formula(&crate::symbolic::simplify(&f), &[(r.def.params[0].0.as_str(), entry.clone())]);
        penalty = if penalty == k(0.0) { mul(k(r.coef.value), term) } else { add(penalty, mul(k(r.coef.value), term)) };
    }
    penalty
}

/// FISTA's momentum with gradient restart (O'Donoghue & Candès), shared by the batch solvers:
/// the statements that restart when `r` = ⟨ŵ − w⁺, w⁺ − w⟩ > 0 (momentum points uphill) and
/// compute β = (θ − 1)/θ⁺ with θ⁺ = (1 + √(1 + 4θ²))/2, then `extrapolate` (ŵ = w⁺ + β(w⁺ − w),
/// written by the caller with β), then θ = θ⁺.
pub(super) fn fista_momentum(b: &mut Builder, theta: ScalarId, r: ScalarId, beta_name: &str) -> Momentum {
    let tn = b.local("θn");
    let beta = b.local(beta_name);
    let before = vec![
        super::Stmt::If(crate::symbolic::Cmp::Gt, s(r), k(0.0), vec![super::Stmt::Set(theta, k(1.0))]),
        super::Stmt::Set(
            tn,
            div(add(k(1.0), call(Func::Sqrt, vec![add(k(1.0), mul(k(4.0), mul(s(theta), s(theta))))])), k(2.0)),
        ),
        super::Stmt::Set(beta, div(sub(s(theta), k(1.0)), s(tn))),
    ];
    Momentum { before, beta, after: super::Stmt::Set(theta, s(tn)) }
}

/// See [`fista_momentum`].
pub(super) struct Momentum {
    pub before: Vec<super::Stmt>,
    pub beta: ScalarId,
    pub after: super::Stmt,
}

impl Momentum {
    /// before ++ extrapolate ++ [after].
    pub fn around(self, extrapolate: Vec<super::Stmt>) -> Vec<super::Stmt> {
        let mut out = self.before;
        out.extend(extrapolate);
        out.push(self.after);
        out
    }
}

/// Computes every transcendental call that occurs more than once across `exprs` once, into a
/// local set before them (ℓ′, ℓ″ and ℓ of the logistic loss share sigmoid(−y·a)): the JIT does
/// no common-subexpression elimination across calls, and each call costs tens of cycles.
pub(super) fn hoist_shared_calls(b: &mut Builder, exprs: Vec<Expr>) -> (Vec<super::Stmt>, Vec<Expr>) {
    let mut seen: Vec<(Expr, usize)> = vec![];
    for e in &exprs {
        super::walk::expr(e, &mut |x| {
            if let Expr::Call(super::Intrinsic::Func(f), args) = x {
                let leaf = args.iter().all(|a| {
                    let mut inner = false;
                    super::walk::expr(a, &mut |y| inner |= matches!(y, Expr::Call(super::Intrinsic::Func(_), _)));
                    !inner
                });
                if leaf && matches!(f, Func::Exp | Func::Log | Func::Log1p | Func::Sigmoid | Func::Softplus) {
                    match seen.iter_mut().find(|(e, _)| e == x) {
                        Some((_, n)) => *n += 1,
                        None => seen.push((x.clone(), 1)),
                    }
                }
            }
        });
    }
    let mut stmts = vec![];
    let mut exprs = exprs;
    for (call_expr, _) in seen.into_iter().filter(|(_, n)| *n > 1) {
        let local = b.local(&format!("t{}", stmts.len() + 1));
        exprs = exprs.into_iter().map(|e| replace(&e, &call_expr, &s(local))).collect();
        stmts.push(super::Stmt::Set(local, call_expr));
    }
    (stmts, exprs)
}

/// `e` with every occurrence of `from` replaced by `to`.
fn replace(e: &Expr, from: &Expr, to: &Expr) -> Expr {
    if e == from {
        return to.clone();
    }
    let go = |x: &Expr| Box::new(replace(x, from, to));
    match e {
        Expr::Neg(a) => Expr::Neg(go(a)),
        Expr::Bin(op, a, c) => Expr::Bin(*op, go(a), go(c)),
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(|a| replace(a, from, to)).collect()),
        Expr::Select(cmp, l, r, a, c) => Expr::Select(*cmp, go(l), go(r), go(a), go(c)),
        Expr::CatchUp(c) => Expr::CatchUp(Box::new(super::CatchUp {
            value: replace(&c.value, from, to),
            from: replace(&c.from, from, to),
            to: replace(&c.to, from, to),
            sums_to: replace(&c.sums_to, from, to),
            logs_to: replace(&c.logs_to, from, to),
            tau: replace(&c.tau, from, to),
            ..**c
        })),
        Expr::Const(_) | Expr::Scalar(_) | Expr::Load(..) | Expr::LoadAt(..) | Expr::Idx(_) | Expr::Value => e.clone(),
    }
}

/// A stdlib formula as plan ops, each of its variables bound to a plan expression (the label to
/// y[i], the margin to the scalar `a`, the step to `t`, a regularizer's variable to w[j]).
pub(super) fn formula(f: &Sym, bindings: &[(&str, Expr)]) -> Expr {
    let go = |x: &Sym| formula(x, bindings);
    match f {
        Sym::Const(v) => k(*v),
        Sym::Var(n) => match bindings.iter().find(|(name, _)| name == n) {
            Some((_, e)) => e.clone(),
            None => unreachable!("free variable {n} in a checked formula"),
        },
        Sym::Neg(x) => Expr::Neg(Box::new(go(x))),
        Sym::Add(x, z) => add(go(x), go(z)),
        Sym::Sub(x, z) => sub(go(x), go(z)),
        Sym::Mul(x, z) => mul(go(x), go(z)),
        Sym::Div(x, z) => div(go(x), go(z)),
        Sym::Pow(x, e) => {
            let base = go(x);
            match e.as_const() {
                Some(2.0) => mul(base.clone(), base),
                Some(1.0) => base,
                Some(0.5) => call(Func::Sqrt, vec![base]),
                Some(-0.5) => div(k(1.0), call(Func::Sqrt, vec![base])),
                Some(-1.0) => div(k(1.0), base),
                _ => call(Func::Exp, vec![mul(go(e), call(Func::Log, vec![base]))]),
            }
        }
        Sym::Call(func, args) => call(*func, args.iter().map(go).collect()),
        Sym::Select(cmp, l, r, x, z) => {
            Expr::Select(*cmp, Box::new(go(l)), Box::new(go(r)), Box::new(go(x)), Box::new(go(z)))
        }
    }
}
