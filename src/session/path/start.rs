//! Where a regularization path starts when `--from` is not given: λ_max, the smallest value of
//! the parameter at which w = 0 (with the best intercept for it) is optimal, and the solution
//! known at and above it, reported without running a solver.
//!
//! w = 0 is optimal exactly when −∇f(0) is in the subdifferential of the regularizer at 0, so
//! λ_max is the dual norm of ∇f(0) over the norm's weight per unit of the parameter: ‖·‖∞ for
//! ℓ1, ‖·‖₁ for ℓ∞, ‖·‖₂ for ℓ2, the largest group's or row's dual norm for groups and the rows
//! of W, the spectral norm for the nuclear norm. Overlapping groups have no closed form: a split
//! of ∇f(0) over the groups bounds λ_max from above (and w = 0 is optimal from that bound on),
//! a test direction from below. A model with no sparsifying term has no λ_max; it gets
//! glmnet's range for a ridge.

use crate::analysis::{CoordinateProx, ProxShape};
use crate::exec::certificate::{self, Assessment};
use crate::exec::evaluate::{evaluate_with_margins, Evaluation};
use crate::exec::{DataView, State};
use crate::pipeline::Compiled;
use crate::plan::Plan;
use crate::runtime::picard::{Omega, Operator};
use crate::runtime::{norm1, norm2, VectorTerm};
use crate::session::bind::Bound;

/// The solution at values where w = 0 is optimal: w = 0 and the intercept-only b.
pub(crate) struct Start {
    pub state: State,
    pub eval: Evaluation,
    /// The certificate's check of it (None when the plan has no certificate).
    pub assessment: Option<Assessment>,
    /// ∇f there: of the loss part (−∇f(0) must lie in the regularizer's subdifferential).
    pub gradient: Vec<f64>,
    /// Entries of ∇f per feature: 1, or k for a multiclass W (d × k, row-major).
    pub width: usize,
    /// b is the intercept-only optimum (or the model has no b). When there is none to be had
    /// (one class, the hinge's kink) b is 0, and the gradient serves only a ridge's range.
    pub exact: bool,
}

/// w = 0 with the best intercept for it (b unregularized or `μ·l2sq(b)`, per-class softmax
/// offsets), or b = 0 marked inexact when there is no such b (one class) or its loss has no
/// single ℓ′ there ([`certificate::intercept_only`]).
pub(crate) fn at_start(plan: &Plan, bound: &Bound, view: &DataView) -> Start {
    let mut state = State::new(plan, &bound.facts, view.labels);
    let obj = &plan.objective;
    let mut exact = true;
    if let Some(b) = obj.intercept {
        let kind = plan.certificate.map(|c| c.conjugate);
        match kind
            .and_then(|k| certificate::intercept_only(k, view.labels, view.weights, obj.loss_weight, obj.intercept_l2))
        {
            Some(v) => state.scalars[b.0] = v,
            None => exact = false,
        }
    }
    if let Some(b) = obj.class_intercept {
        let k = state.vectors[b.0].len();
        match certificate::class_offsets(view.labels, view.weights, k) {
            Some(v) => state.vectors[b.0] = v,
            None => exact = false,
        }
    }
    let (eval, margins) = evaluate_with_margins(plan, &state, view);
    let gradient = certificate::loss_gradient(plan, &state, view, &margins);
    let assessment = certificate::assess(plan, &state, view, eval.objective, &margins, None);
    let width = margins.len() / view.rows().max(1);
    Start { state, eval, assessment, gradient, width: width.max(1), exact }
}

/// Where the path's values come from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Range {
    /// w = 0 is optimal exactly from λ_max up; `norm` names the dual norm taken.
    Zero { lambda_max: f64, norm: &'static str },
    /// w = 0 is optimal from `upper` up, and not below `lower` (overlapping groups).
    Bounded { lower: f64, upper: f64 },
    /// No value makes w = 0 optimal (a ridge alone): glmnet's start for α = 0, the λ_max the
    /// model would have with an ℓ1 term of weight 10⁻³ per unit of the parameter.
    Ridge { from: f64 },
}

impl Range {
    /// The path's first value.
    pub fn from(&self) -> f64 {
        match *self {
            Range::Zero { lambda_max, .. } => lambda_max,
            Range::Bounded { upper, .. } => upper,
            Range::Ridge { from } => from,
        }
    }

    /// Whether w = 0 (with the intercept-only b) is known optimal at `value`.
    pub fn zero_at(&self, value: f64) -> bool {
        match *self {
            Range::Zero { lambda_max, .. } => value >= lambda_max * (1.0 - 1e-12),
            Range::Bounded { upper, .. } => value >= upper,
            Range::Ridge { .. } => false,
        }
    }

    /// Where the first value came from, for the path's report; `intercept` is b at w = 0.
    pub fn describe(&self, param: &str, intercept: Option<f64>) -> String {
        let num = crate::symbolic::sig6;
        let zero = match intercept {
            Some(b) => format!("w = 0 with the intercept-only b = {}", num(b)),
            None => "w = 0".into(),
        };
        match *self {
            Range::Zero { lambda_max, norm } => {
                format!("{param} from λ_max = {} ({norm}: {zero} is optimal from there on)", num(lambda_max))
            }
            Range::Bounded { lower, upper } => format!(
                "{param} from {} (overlapping groups: {zero} is optimal from there on; λ_max is in [{}, {}])",
                num(upper),
                num(lower),
                num(upper)
            ),
            Range::Ridge { from } => format!(
                "{param} from {} (no sparsifying term, so no value makes w = 0 optimal: glmnet's range for a ridge, 1000·‖∇f(0)‖∞)",
                num(from)
            ),
        }
    }
}

/// How a coefficient moves with the parameter t, from the model compiled at t = 1 and t = 2:
/// c(t) = slope·t + rest. Only a coefficient that does not shrink as t grows can make w = 0
/// optimal from some t on.
#[derive(Clone, Copy, Debug)]
struct Affine {
    slope: f64,
    rest: f64,
}

impl Affine {
    fn of(one: f64, two: f64) -> Affine {
        let slope = two - one;
        // Rounding of two compilations: a change below 1e-12 of the value is none.
        let slope = if slope.abs() <= 1e-12 * one.abs() { 0.0 } else { slope };
        Affine { slope, rest: one - slope }
    }

    fn at(&self, t: f64) -> f64 {
        self.slope * t + self.rest
    }

    /// Only the parameter's own part: c = slope·t, nothing beside it.
    fn linear(&self) -> bool {
        self.slope > 0.0 && self.rest.abs() <= 1e-12 * self.slope
    }
}

/// The range of a path of the parameter compiled at 1 (`at_one`) and 2 (`at_two`), from the
/// gradient at the start. None when the parameter does not move the regularizer in a way that
/// makes w = 0 optimal from some value on, and it is not a ridge's weight either.
pub(crate) fn range(at_one: &Compiled, at_two: &Compiled, start: &Start, view: &DataView) -> Option<Range> {
    let g = &start.gradient;
    if g.iter().any(|v| !v.is_finite()) {
        return None;
    }
    // Without the intercept-only b, ∇f there says nothing of where w = 0 is optimal.
    let exact = start.exact;
    let zero = |lambda_max: f64, norm| {
        (exact && lambda_max > 0.0 && lambda_max.is_finite()).then_some(Range::Zero { lambda_max, norm })
    };
    let (p1, p2) = (at_one.structure.prox.as_ref()?, at_two.structure.prox.as_ref()?);
    let l1 = |a: &CoordinateProx, b: &CoordinateProx| Affine::of(a.l1, b.l1);
    match (p1, p2) {
        (ProxShape::Coordinate(a), ProxShape::Coordinate(b))
        | (ProxShape::Multiclass(a, None), ProxShape::Multiclass(b, None))
            if a.tangent.is_none() =>
        {
            let t = l1(a, b);
            if t.linear() {
                let name = match (a.lo == 0.0, a.hi == 0.0) {
                    (true, false) => "the largest −∂f/∂wⱼ at 0, as w ≥ 0",
                    (false, true) => "the largest ∂f/∂wⱼ at 0, as w ≤ 0",
                    _ => "‖∇f(0)‖∞",
                };
                return zero(reach(a, g)? / t.slope, name);
            }
            let ridge = Affine::of(a.l2, b.l2);
            (a.l1 == 0.0 && b.l1 == 0.0 && ridge.linear() && a.lo < 0.0 && a.hi > 0.0)
                .then(|| Range::Ridge { from: reach(a, g).unwrap_or(0.0) / 1e-3 / ridge.slope })
                .filter(|r| r.from() > 0.0 && r.from().is_finite())
        }
        (ProxShape::Vector(a, t1), ProxShape::Vector(b, t2)) if a.tangent.is_none() => {
            let (c, norm, name): (Affine, fn(&[f64]) -> f64, _) = match (t1, t2) {
                (VectorTerm::Norm2(c1), VectorTerm::Norm2(c2)) => (Affine::of(*c1, *c2), norm2, "‖∇f(0)‖₂"),
                (VectorTerm::NormInf(c1), VectorTerm::NormInf(c2)) => (Affine::of(*c1, *c2), norm1, "‖∇f(0)‖₁"),
                _ => return None,
            };
            if a.l1 == 0.0 && b.l1 == 0.0 {
                return c.linear().then(|| zero(norm(g) / c.slope, name)).flatten();
            }
            // ℓ1 beside the norm (the sparse group lasso): w = 0 is optimal where the part of
            // ∇f(0) the ℓ1 ball does not absorb is in the norm's dual ball.
            let t = l1(a, b);
            let excess = |s: f64| norm(&g.iter().map(|v| crate::plan::soft(*v, t.at(s))).collect::<Vec<_>>());
            smallest(|s| excess(s) <= c.at(s), t, c)
                .and_then(|s| zero(s, "where the norm's weight covers what ℓ1 leaves of ∇f(0)"))
        }
        (ProxShape::Multiclass(a, Some(t1)), ProxShape::Multiclass(b, Some(t2))) if a.l1 == 0.0 && b.l1 == 0.0 => {
            let width = start.width;
            let rows = |dual: fn(&[f64]) -> f64| g.chunks(width).map(dual).fold(0.0, f64::max);
            let (c, value, name) = match (t1, t2) {
                (VectorTerm::Norm2(c1), VectorTerm::Norm2(c2)) => {
                    (Affine::of(*c1, *c2), rows(norm2), "the largest row's ‖·‖₂ of ∇f(0)")
                }
                (VectorTerm::NormInf(c1), VectorTerm::NormInf(c2)) => {
                    (Affine::of(*c1, *c2), rows(norm1), "the largest row's ‖·‖₁ of ∇f(0)")
                }
                (VectorTerm::Nuclear(c1), VectorTerm::Nuclear(c2)) => {
                    (Affine::of(*c1, *c2), spectral(g, width), "the spectral norm of ∇f(0)")
                }
                (VectorTerm::CenteredNuclear(c1), VectorTerm::CenteredNuclear(c2)) => (
                    Affine::of(*c1, *c2),
                    spectral(&crate::runtime::centered(g, width), width),
                    "the spectral norm of ∇f(0)(I − 11ᵀ/k)",
                ),
                _ => return None,
            };
            c.linear().then(|| zero(value / c.slope, name)).flatten()
        }
        (ProxShape::Composite(a, c1), ProxShape::Composite(b, c2)) if a.l1 == 0.0 && b.l1 == 0.0 => {
            let c = Affine::of(c1.coef, c2.coef);
            let op = view.operator?;
            if !c.linear() || !c1.group_blocks || !op.values.iter().all(|&v| v == 1.0) {
                return None;
            }
            if c1.omega == Omega::L1 {
                return None;
            }
            let (lower, upper) = split_bounds(op, g, c1.omega)?;
            if c1.prox == crate::plan::CompositeProx::GroupShrink || upper <= lower * (1.0 + 1e-12) {
                // Disjoint groups: each feature has one group, the split is ∇f(0) itself.
                let name = if c1.omega == Omega::BlockL2 {
                    "the largest group's ‖·‖₂ of ∇f(0)"
                } else {
                    "the largest group's ‖·‖₁ of ∇f(0)"
                };
                return zero(upper / c.slope, name);
            }
            exact.then_some(Range::Bounded { lower: lower / c.slope, upper: upper / c.slope })
        }
        _ => None,
    }
}

/// max over coordinates of how far −∇f(0)ⱼ reaches past the bounds the box leaves 0: |gⱼ| when
/// 0 is inside the box, the part pushing out of it at an end of the box at 0 (w ≥ 0: −gⱼ). None
/// when 0 is outside the box (w = 0 is never feasible).
fn reach(a: &CoordinateProx, g: &[f64]) -> Option<f64> {
    if a.lo > 0.0 || a.hi < 0.0 {
        return None;
    }
    let one = |v: f64| match (a.lo == 0.0, a.hi == 0.0) {
        (true, true) => 0.0,
        (true, false) => (-v).max(0.0),
        (false, true) => v.max(0.0),
        (false, false) => v.abs(),
    };
    Some(g.iter().fold(0.0_f64, |m, &v| m.max(one(v))))
}

/// The largest singular value of the d × `width` matrix `g` (row-major).
fn spectral(g: &[f64], width: usize) -> f64 {
    crate::runtime::singular_values(g, width).into_iter().fold(0.0, f64::max)
}

/// The smallest s > 0 at which `holds` does, for a condition that, once true, stays true as s
/// grows (the ℓ1 weight `t` and the norm's `c` do not shrink with s), to the last bit by
/// bisection; None when it holds at 0 already or never within 2⁶⁰.
fn smallest(holds: impl Fn(f64) -> bool, t: Affine, c: Affine) -> Option<f64> {
    if t.slope < 0.0 || c.slope < 0.0 || (t.slope == 0.0 && c.slope == 0.0) || holds(0.0) {
        return None;
    }
    let mut hi = 1.0;
    while !holds(hi) {
        hi *= 2.0;
        if hi > 1.2e18 {
            return None;
        }
    }
    let mut lo = 0.0;
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if holds(mid) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Some(hi)
}

/// Bounds on min over splits ξ of max_g ‖ξ_g‖_* subject to Σ_g ξ_g = ∇f(0) (each ξ_g supported
/// on its group g, ‖·‖_* the dual of the group norm `omega` sums): the value of the parameter
/// (per unit) from which w = 0 is optimal. Any split is an exact subgradient, so its largest
/// group norm is an upper bound; a test direction v on one group gives ⟨∇f, v⟩/Ω(v) ≤ Ω*(∇f), a
/// lower bound. The split starts even and moves each shared feature's share toward the groups
/// with room (multiplicative weights) until the bounds meet or 200 rounds pass. None when a
/// feature in no group has a non-zero gradient (it is not penalised, so w = 0 is never optimal)
/// or the gradient is 0.
fn split_bounds(op: &Operator, g: &[f64], omega: Omega) -> Option<(f64, f64)> {
    let (dual, linf) = match omega {
        Omega::BlockL2 => (norm2 as fn(&[f64]) -> f64, false),
        _ => (norm1 as fn(&[f64]) -> f64, true),
    };
    let groups: Vec<&[u32]> = op.blocks.iter().map(|&(a, b)| &op.indices[op.indptr[a]..op.indptr[b]]).collect();
    let mut member_of: Vec<Vec<usize>> = vec![vec![]; g.len()];
    for (h, m) in groups.iter().enumerate() {
        m.iter().for_each(|&j| member_of[j as usize].push(h));
    }
    if member_of.iter().zip(g).any(|(hs, &v)| hs.is_empty() && v != 0.0) {
        return None;
    }
    // The lower bound: v = ∇f on group m (ℓ2), or its signs there (ℓ∞); Ω(v) = Σ_h ‖v_h‖ over
    // the groups h that meet m.
    let mut lower = 0.0_f64;
    for m in &groups {
        let mut parts: std::collections::HashMap<usize, f64> = std::collections::HashMap::new();
        let mut inner = 0.0;
        for &j in m.iter() {
            let gj = g[j as usize];
            let vj = if linf { gj.signum() * (gj != 0.0) as u8 as f64 } else { gj };
            inner += gj * vj;
            for &h in &member_of[j as usize] {
                let p = parts.entry(h).or_insert(0.0);
                *p = if linf { p.max(vj.abs()) } else { *p + vj * vj };
            }
        }
        let norm: f64 = parts.values().map(|p| if linf { *p } else { p.sqrt() }).sum();
        if norm > 0.0 {
            lower = lower.max(inner / norm);
        }
    }
    let mut weight = vec![1.0_f64; groups.len()];
    let mut best = f64::INFINITY;
    let mut share = vec![0.0; g.len()];
    for _ in 0..200 {
        share.iter_mut().for_each(|s| *s = 0.0);
        for (m, &a) in groups.iter().zip(&weight) {
            m.iter().for_each(|&j| share[j as usize] += a);
        }
        let norms: Vec<f64> = groups
            .iter()
            .zip(&weight)
            .map(|(m, &a)| dual(&m.iter().map(|&j| g[j as usize] * a / share[j as usize]).collect::<Vec<_>>()))
            .collect();
        let top = norms.iter().copied().fold(0.0, f64::max);
        best = best.min(top);
        if top == 0.0 || best <= lower * (1.0 + 1e-12) {
            break;
        }
        for (a, n) in weight.iter_mut().zip(&norms) {
            *a *= (top / n.max(1e-300 * top)).sqrt().min(1e6);
        }
        let largest = weight.iter().copied().fold(0.0, f64::max);
        weight.iter_mut().for_each(|a| *a = (*a / largest).max(1e-200));
    }
    (best > 0.0 && best.is_finite()).then_some((lower.min(best), best))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two groups sharing feature 1, ∇f = (1, 1, 1): the best split gives the shared feature
    /// half to each, so Ω*(∇f) = √(1 + ¼); the test direction on one group gives 2/(√2 + 1).
    #[test]
    fn a_split_over_overlapping_groups_reaches_the_dual_norm() {
        let op = Operator::groups(&[vec![0, 1], vec![1, 2]], 3);
        let (lower, upper) = split_bounds(&op, &[1.0, 1.0, 1.0], Omega::BlockL2).expect("bounds");
        assert!((upper - 1.25f64.sqrt()).abs() < 1e-9, "{upper}");
        assert!((lower - 2.0 / (2f64.sqrt() + 1.0)).abs() < 1e-12, "{lower}");
        // ℓ∞ groups, dual ℓ1: the shared 1 split evenly gives each group 1.5, the least.
        let (lower, upper) = split_bounds(&op, &[1.0, 1.0, 1.0], Omega::BlockLinf).expect("bounds");
        assert!((upper - 1.5).abs() < 1e-9 && lower <= upper, "{lower} {upper}");
        // Uneven: group {0, 1} holds 2 alone, so the best split gives it none of feature 1 and
        // Ω*(∇f) = 2; the even start (√4.25) must move toward it, and stay above it.
        let (_, upper) = split_bounds(&op, &[2.0, 1.0, 0.1], Omega::BlockL2).expect("bounds");
        assert!((2.0..2.0 + 1e-6).contains(&upper), "{upper}");
        // Disjoint groups: the split is ∇f itself and the bounds meet at the largest group norm.
        let op = Operator::groups(&[vec![0, 1], vec![2]], 3);
        let (lower, upper) = split_bounds(&op, &[3.0, 4.0, 1.0], Omega::BlockL2).expect("bounds");
        assert_eq!((lower, upper), (5.0, 5.0));
        // A feature in no group with a gradient: w = 0 is never optimal.
        let op = Operator::groups(&[vec![0, 1]], 3);
        assert_eq!(split_bounds(&op, &[1.0, 1.0, 0.5], Omega::BlockL2), None);
    }

    /// The ℓ1 condition at 0 under a box: both signs inside it, the push out of w ≥ 0 (−gⱼ) or
    /// w ≤ 0 (gⱼ) at an end at 0, never when 0 is outside.
    #[test]
    fn a_box_at_zero_makes_the_condition_one_sided() {
        let p = |lo: f64, hi: f64| CoordinateProx { l1: 1.0, l2: 0.0, lo, hi, tangent: None };
        let g = [0.5, -2.0, 3.0];
        assert_eq!(reach(&p(f64::NEG_INFINITY, f64::INFINITY), &g), Some(3.0));
        assert_eq!(reach(&p(0.0, f64::INFINITY), &g), Some(2.0));
        assert_eq!(reach(&p(f64::NEG_INFINITY, 0.0), &g), Some(3.0));
        assert_eq!(reach(&p(-1.0, 1.0), &g), Some(3.0));
        assert_eq!(reach(&p(0.5, 1.0), &g), None);
    }
}
