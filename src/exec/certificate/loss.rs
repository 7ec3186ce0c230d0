//! The losses the certificate knows, in closed form: ℓ, ℓ′ and ℓ″ by the name of ℓ* (a model
//! cannot redefine the stdlib's losses). The intercept's balance, the refinement and the tests
//! evaluate them per row, where the plan's formula through the interpreter costs several times
//! more.

use crate::plan::LossConjugate;

/// ℓ, ℓ′ and ℓ″ at a; for logistic from one exponential, e^−|y·a|, which cannot overflow
/// (a line search's trials and the next step's Hessian take all three at every row).
pub(crate) fn loss_terms(kind: LossConjugate, y: f64, a: f64) -> (f64, f64, f64) {
    match kind {
        LossConjugate::Logistic => {
            let ya = y * a;
            let e = (-ya.abs()).exp();
            // p = 1/(1 + e^{y·a}), the probability of the other label.
            let p = if ya >= 0.0 { e / (1.0 + e) } else { 1.0 / (1.0 + e) };
            ((-ya).max(0.0) + e.ln_1p(), -y * p, e / ((1.0 + e) * (1.0 + e)))
        }
        _ => {
            let (u, curvature) = loss_derivatives(kind, y, a);
            (kind.loss(y, a), u, curvature)
        }
    }
}

/// ℓ′(y, a) and ℓ″(y, a) of the twice-differentiable losses the certificate knows (the name of
/// ℓ* names ℓ: a model cannot redefine the stdlib's losses), in closed form: a refinement
/// evaluates them tens of times per row, where the plan's formula through the interpreter costs
/// several times more. Hinge (not differentiable) and softmax (k scores a row) are never refined.
pub(crate) fn loss_derivatives(kind: LossConjugate, y: f64, a: f64) -> (f64, f64) {
    match kind {
        LossConjugate::Logistic => {
            let p = 1.0 / (1.0 + (y * a).exp());
            (-y * p, p * (1.0 - p))
        }
        // Its generalized second derivative, 2 where the hinge is active.
        LossConjugate::SquaredHinge => {
            let slack = (1.0 - y * a).max(0.0);
            (-2.0 * y * slack, if slack > 0.0 { 2.0 } else { 0.0 })
        }
        // Its generalized second derivative, 1 within δ of the label.
        LossConjugate::Huber(delta) => {
            let r = a - y;
            (r.clamp(-delta, delta), if r.abs() < delta { 1.0 } else { 0.0 })
        }
        // Its generalized second derivative, 2 outside the tube.
        LossConjugate::SquaredEpsInsensitive(eps) => {
            let (r, out) = (a - y, ((a - y).abs() - eps).max(0.0));
            (2.0 * r.signum() * out, if out > 0.0 { 2.0 } else { 0.0 })
        }
        LossConjugate::Poisson => {
            let e = a.exp();
            (e - y, e)
        }
        // Not differentiable: a subgradient (0 at the kinks) and no curvature; never refined.
        LossConjugate::Quantile(tau) => {
            let r = a - y;
            (
                if r > 0.0 {
                    1.0 - tau
                } else if r < 0.0 {
                    -tau
                } else {
                    0.0
                },
                0.0,
            )
        }
        LossConjugate::EpsInsensitive(eps) => {
            let r = a - y;
            (if r.abs() > eps { r.signum() } else { 0.0 }, 0.0)
        }
        LossConjugate::Squared | LossConjugate::Hinge | LossConjugate::Softmax => (a - y, 1.0),
    }
}
