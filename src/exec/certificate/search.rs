//! The one line search of every refinement (the dense steps of `refine.rs`, the support's of
//! `support.rs`, the settling's of `settle.rs` and softmax's): from the full step back, until F
//! falls by Armijo's share of what the step's model predicted.
//!
//! The refinements differ only in their paths, which the caller gives as a trial at each step
//! length t: a straight line v + t·d (and its margins a + t·X_V·d), or a path projected into the
//! orthant of v that stops where a coordinate crosses zero (`support.rs`). Where differences of
//! F near its minimum are lost to rounding, Armijo's test fails on steps that lowered F; a
//! caller may then accept a trial whose slope of F at its end is not positive (`flat_end`): F is
//! convex along the path, so it decreased all the way.

use super::regularizer;
use super::tuning::TUNING;
use crate::plan::Certificate;

/// A point the search tries: its coordinates on V, the caller's rows there (the margins and
/// what the next step reads of them), the loss Σᵢ ωᵢℓ there, and the decrease of F that the
/// step's model predicts at this length (negative for a descent step).
pub(super) struct Trial<R> {
    pub(super) point: Vec<f64>,
    pub(super) rows: R,
    pub(super) loss: f64,
    pub(super) predicted: f64,
}

/// Where a search starts: the certificate's regularizer r, the scale c/m of the loss, the
/// coordinates v on V and the loss there. F changes by scale·(loss − `loss`) + r(point) − r(v).
pub(super) struct Search<'a> {
    pub(super) cert: &'a Certificate,
    pub(super) scale: f64,
    pub(super) v: &'a [f64],
    pub(super) loss: f64,
    /// The shortest step tried (the caller's tuning).
    pub(super) least: f64,
    /// The step tried after the full one when it is shorter than 1 (where the path meets its
    /// first crossing), then halved; 1 (or more) to halve from the start.
    pub(super) after_full: f64,
}

impl Search<'_> {
    /// The first trial, at t = 1, `after_full`, then halving, whose F falls by
    /// `TUNING.armijo`·predicted or that `flat_end` accepts, with its t; None when none down to
    /// `least` passes. A trial predicting no decrease is never taken.
    pub(super) fn run<R>(
        &self,
        mut trial: impl FnMut(f64) -> Trial<R>,
        flat_end: impl Fn(&Trial<R>) -> bool,
    ) -> Option<(Trial<R>, f64)> {
        let now = regularizer(self.cert, self.v);
        let mut t = 1.0_f64;
        while t >= self.least {
            let at = trial(t);
            let change = self.scale * (at.loss - self.loss) + regularizer(self.cert, &at.point) - now;
            if at.predicted < 0.0 && (change <= TUNING.armijo * at.predicted || flat_end(&at)) {
                return Some((at, t));
            }
            t = if t == 1.0 && self.after_full < 1.0 { self.after_full.max(self.least) } else { t * 0.5 };
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// On F(x) = ½(x − 3)² (no regularizer, scale 1) from v = 0 along d = 10, the full step
    /// raises F and Armijo takes t = ½ (F falls from 4.5 to 2, predicted −45·½); a flat end
    /// accepts the full step; a step predicting no decrease is never taken.
    #[test]
    fn the_search_halves_until_armijo_or_a_flat_end_accepts() {
        let cert = super::super::tests::cert(0.0, 0.0, f64::NEG_INFINITY, f64::INFINITY);
        let f = |x: f64| 0.5 * (x - 3.0) * (x - 3.0);
        let search = Search { cert: &cert, scale: 1.0, v: &[0.0], loss: f(0.0), least: 1e-6, after_full: 1.0 };
        let slope = -3.0 * 10.0;
        let trial = |t: f64| Trial { point: vec![10.0 * t], rows: (), loss: f(10.0 * t), predicted: t * slope };
        let (at, t) = search.run(trial, |_| false).expect("a step");
        assert_eq!(t, 0.5);
        assert!(f(at.point[0]) - f(0.0) <= TUNING.armijo * at.predicted);
        assert_eq!(search.run(trial, |_| true).map(|(_, t)| t), Some(1.0));
        let uphill = |t: f64| Trial { point: vec![-t], rows: (), loss: f(-t), predicted: 3.0 * t };
        assert!(search.run(uphill, |_| true).is_none());
    }

    /// After a full step that fails, the search tries the crossing given, then halves from it.
    #[test]
    fn the_search_tries_the_crossing_after_the_full_step() {
        let cert = super::super::tests::cert(0.0, 0.0, f64::NEG_INFINITY, f64::INFINITY);
        let mut tried = vec![];
        let search = Search { cert: &cert, scale: 1.0, v: &[0.0], loss: 0.0, least: 0.1, after_full: 0.3 };
        let result = search.run(
            |t| {
                tried.push(t);
                Trial { point: vec![0.0], rows: (), loss: 1.0, predicted: -1.0 }
            },
            |_| false,
        );
        assert!(result.is_none());
        assert_eq!(tried, [1.0, 0.3, 0.15]);
    }
}
