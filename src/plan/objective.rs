//! What a plan says of F beside its statements: the formulas the report evaluates F with, the
//! certificate's closed-form dual (docs/algorithms.md §10), and what ends a run that has none.

use super::*;

/// How the report computes F(w) = c·(1/m)·Σᵢ ℓ(yᵢ, ⟨xᵢ, w⟩) + Σⱼ penalty(wⱼ), the same code
/// path whatever back end ran the plan (docs/algorithms.md's normalisation).
#[derive(Clone, Debug, PartialEq)]
pub struct Objective {
    /// ℓ(y\[i], a) with the margin in the scalar `margin`.
    pub loss: Expr,
    /// ℓ′(y\[i], a), unweighted: the dual point of the certificate.
    pub dloss: Expr,
    pub margin: ScalarId,
    /// The intercept b (`var b: scalar`), a state scalar added to every margin; unregularized,
    /// so the certificate's dual point must also satisfy Σᵢ uᵢ = 0.
    pub intercept: Option<ScalarId>,
    /// μ of `μ·l2sq(b)`, the intercept's ridge: F adds μ·½b² (0: b unregularized).
    pub intercept_l2: f64,
    /// Softmax: one unregularized offset per class, b (a vec\[k]) added to every row's scores; the
    /// certificate's dual point must then satisfy Σᵢ uᵢ = 0 in ℝᵏ.
    pub class_intercept: Option<VecId>,
    pub loss_weight: f64,
    /// Σ of the coordinate-wise regularizers at w\[j] (constraints hold by construction).
    pub penalty: Expr,
    /// The term on the whole vector (a norm, or a set's indicator), or on each row of a
    /// multiclass W, if any.
    pub vector: Option<VectorTerm>,
    /// A dual point the plan maintains, uᵢ as an expression at row i of the state (the Picard
    /// SVM's dual); the certificate tries it besides ℓ′ at the margins.
    pub dual: Option<Expr>,
    /// The plan's dual point is the iterate of a dual method (dual coordinate descent): the
    /// certificate evaluates it alone. ℓ′ at the margins and its extrapolation would cost two
    /// more passes a check for a bound no tighter than the one the solver optimises.
    pub dual_only: bool,
    /// A composite term coef·ω(B w), evaluated with the operator bound with the data.
    pub composite: Option<Composite>,
    /// Dictionary learning: F(D) = (c/m)·Σᵢ sparse_code(xᵢ, D, λ₁, λ₂) + Σ over atoms of ϕ, the
    /// weights a mat[d, k] of k atoms (`loss`, `dloss`, `margin` and `penalty` are unused).
    pub dictionary: Option<DictionaryCost>,
    /// Multiclass: ℓ is softmax over the k scores aᵢ = Wᵀxᵢ, ℓ(y, a) = logsumexp(a) − a_y,
    /// evaluated directly (`loss`, `dloss` and `margin` are unused), and `penalty` reads W[j, c].
    pub softmax: bool,
}

impl Objective {
    /// How the intercept enters F, in the words a report and a plan show beside b:
    /// "unregularized", or "penalised: μ·½b², μ = …" (`μ·l2sq(b)`, LIBLINEAR's `-B 1`).
    pub fn intercept_words(&self) -> String {
        if self.intercept_l2 > 0.0 {
            format!("penalised: μ·½b², μ = {}", crate::symbolic::fmt_num(self.intercept_l2))
        } else {
            "unregularized".into()
        }
    }
}

/// The convex conjugate ℓ*(y, u) of a loss in its margin (docs/algorithms.md §10), where optc knows
/// it in closed form.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LossConjugate {
    /// p·log p + (1 − p)·log(1 − p), p = −y·u ∈ [0, 1]
    Logistic,
    /// ½u² + u·y
    Squared,
    /// y·u for y·u ∈ [−1, 0]
    Hinge,
    /// y·u + u²/4 for y·u ≤ 0 (the squared hinge max(0, 1 − y·a)²)
    SquaredHinge,
    /// Σ_c q_c·log q_c with q = u + e_y in the simplex (u ∈ ℝᵏ: softmax's conjugate)
    Softmax,
    /// u·y + ½u² for |u| ≤ δ (Huber's loss of a − y with this δ > 0)
    Huber(f64),
    /// u·y for −τ ≤ u ≤ 1 − τ (the pinball loss at this level τ)
    Quantile(f64),
    /// u·y + ε|u| for |u| ≤ 1 (max(0, |a − y| − ε) with this ε)
    EpsInsensitive(f64),
    /// u·y + ε|u| + u²/4 (max(0, |a − y| − ε)² with this ε)
    SquaredEpsInsensitive(f64),
    /// (u + y)·log(u + y) − (u + y) for u ≥ −y (Poisson's exp(a) − y·a)
    Poisson,
}

impl LossConjugate {
    /// ℓ′ is Lipschitz with a (generalized) second derivative the certificate's Newton steps
    /// can take: logistic, squared, and the squared hinge, whose ℓ″ is 2 where the hinge is
    /// active and 0 elsewhere, Huber's, 1 within δ and 0 beyond, and the squared
    /// ε-insensitive loss's, 2 outside the tube and 0 inside (a semismooth Newton
    /// method; the steps' line search on F keeps them descending across the kink).
    pub fn has_curvature(self) -> bool {
        matches!(
            self,
            LossConjugate::Logistic
                | LossConjugate::Squared
                | LossConjugate::SquaredHinge
                | LossConjugate::Huber(_)
                | LossConjugate::SquaredEpsInsensitive(_)
                | LossConjugate::Poisson
        )
    }

    /// ℓ(y, a) of the loss this conjugate names, in closed form (a model cannot redefine the
    /// stdlib's losses): the report's F and the certificate's line searches take it per row,
    /// where the plan's formula through the interpreter cost a fit of 200,000 rows 4–5 ms a
    /// pass. Softmax's k scores a row are the report's own ([`Objective::softmax`]): it is never
    /// asked here, and reads as the squared loss.
    pub fn loss(self, y: f64, a: f64) -> f64 {
        match self {
            LossConjugate::Logistic => {
                let z = -y * a;
                // log(1 + eᶻ) without overflow for large z.
                if z > 0.0 {
                    z + (-z).exp().ln_1p()
                } else {
                    z.exp().ln_1p()
                }
            }
            LossConjugate::Hinge => (1.0 - y * a).max(0.0),
            LossConjugate::SquaredHinge => (1.0 - y * a).max(0.0).powi(2),
            LossConjugate::Huber(delta) => {
                let r = (a - y).abs();
                if r <= delta {
                    0.5 * r * r
                } else {
                    delta * (r - 0.5 * delta)
                }
            }
            LossConjugate::Quantile(tau) => (tau * (y - a)).max((tau - 1.0) * (y - a)),
            LossConjugate::Poisson => a.exp() - y * a,
            LossConjugate::EpsInsensitive(eps) => ((a - y).abs() - eps).max(0.0),
            LossConjugate::SquaredEpsInsensitive(eps) => ((a - y).abs() - eps).max(0.0).powi(2),
            LossConjugate::Squared | LossConjugate::Softmax => 0.5 * (a - y) * (a - y),
        }
    }
}

/// What the duality-gap certificate needs beyond the objective: ℓ* and the regularizer
/// r(wⱼ) = l1·|wⱼ| + (l2/2)·wⱼ² + ι\[lo, hi\](wⱼ) per coordinate (per entry of W), whose conjugate
/// is closed-form, plus at most one vector term — on w, or on each row of W — (then there is no
/// box: see the analysis's `split_prox`), or a group term over disjoint groups.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Certificate {
    pub conjugate: LossConjugate,
    pub l1: f64,
    pub l2: f64,
    pub lo: f64,
    pub hi: f64,
    pub vector: Option<VectorTerm>,
    /// γ of γ·Σ_g ‖w_g‖₂ over the disjoint groups of the operator bound with the data (no
    /// ℓ1, box or vector term beside it), whose conjugate is closed-form too.
    pub groups: Option<f64>,
    /// An intercept: unregularized (`intercept_l2` = 0), the dual point must also satisfy
    /// Σᵢ uᵢ = 0; with `μ·l2sq(b)`, R* adds (Σᵢ (c/m)·uᵢ)²/(2μ) instead.
    pub intercept: bool,
    pub intercept_l2: f64,
}

/// What ends a run that has no certificate, besides the epoch cap and the time limit. A
/// non-convex F has no duality gap (docs/algorithms.md §10), so its plans say what they stop on
/// rather than borrow the convex rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Uncertified {
    /// The relative change of F between two checks ≤ tol: a convex F whose dual has no closed
    /// form here (ω∘B).
    Progress,
    /// Nothing: online DC on a non-convex F has no test that it is done, and a small change of
    /// F between epochs of a stochastic method is not one.
    Caps,
    /// Batch DC's reweighting has settled: the epoch leaves in `change` the last reweighting's
    /// largest relative change of a weight (1 where a coordinate entered or left the support)
    /// and counts reweightings in `rounds`; the run stops when `change` ≤ tol.
    Reweighting { change: ScalarId, rounds: ScalarId },
    /// No penalty (λ = 0): F = (c/m)·Σᵢ ℓᵢ has no regularizer whose conjugate bounds the dual,
    /// so no gap certifies it, and the minimiser may not exist (separable classes). A Newton
    /// method's rule ends the run, LIBLINEAR's: the epoch leaves in `norm` ‖∇F‖/‖∇F(0)‖ at the
    /// iterate it started from, and the run stops when it is ≤ tol.
    Gradient { norm: ScalarId },
}

impl Uncertified {
    /// Why the run has no certificate, for the report.
    pub fn reason(self) -> &'static str {
        match self {
            Uncertified::Progress => "no closed-form dual for this model",
            Uncertified::Caps | Uncertified::Reweighting { .. } => "F is not convex, so no duality gap bounds F − F*",
            Uncertified::Gradient { .. } => "no penalty, so no duality gap bounds F − F* (nor need a minimiser exist)",
        }
    }
}
