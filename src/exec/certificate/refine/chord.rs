//! The chord step of a check's dense Newton steps: the last whole step's factor used again
//! near the end, where a new Hessian would only confirm what that factor already solves.

use super::newton_point_by;
use crate::exec::linalg::cholesky::Factor;

/// A whole Newton step's factor of the model on V (b eliminated), kept for a chord step: the
/// next step taken with it instead of a new Hessian. Near the optimum a Newton step's Hessian
/// differs from the last one's by about the last step's length, so a chord step shrinks the gap
/// about as much as that step did (gap ← gap·gap/gap_before, up to `TUNING.refine_chord`);
/// where that certifies, the Hessian (w8a's 6.9 million scattered products, 2.9 ms, against a
/// step's two passes) is not formed. Any positive definite matrix gives a descent direction, so
/// a chord step that falls short still lowers F, and the next step is Newton's.
pub(super) struct Held {
    pub(super) factor: Factor,
    /// b's row of that Hessian and its curvature h_bb, when b is a coordinate of the step.
    pub(super) b_row: Option<(Vec<f64>, f64)>,
    /// The gap on V (b's decrease included) where that step started.
    pub(super) gap: f64,
}

impl Held {
    /// The chord step's point on V and b's step, from ∇_V F (`gradient`) and ∂F/∂b (`g_b`).
    pub(super) fn step(&self, v: &[f64], gradient: &[f64], g_b: f64) -> Option<(Vec<f64>, f64)> {
        let centred: Vec<f64> = match &self.b_row {
            Some((h_b, h_bb)) => gradient.iter().zip(h_b).map(|(g, h)| g - h * g_b / h_bb).collect(),
            None => gradient.to_vec(),
        };
        let x = newton_point_by(&self.factor, v, &centred)?;
        let step_b = self.b_row.as_ref().map_or(0.0, |(h_b, h_bb)| {
            let hd: f64 = h_b.iter().zip(x.iter().zip(v)).map(|(h, (x, v))| h * (x - v)).sum();
            -(g_b + hd) / h_bb
        });
        Some((x, step_b))
    }
}
