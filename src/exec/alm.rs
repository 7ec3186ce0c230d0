//! The `alm` solver's epoch: one step of the augmented Lagrangian method for the hinge with
//! ½‖w‖² (and a free or penalised intercept b), its subproblem in (w, b) solved by semismooth
//! Newton steps on a dense Hessian (Yan & Li 2020, after Li, Sun & Toh's SSNAL, 2018;
//! docs/algorithms.md §11). Both back ends call it (the plan's `alm` statement).
//!
//! In LIBLINEAR's scaling, P(w, b) = ½‖w‖² + ½ρ_b·b² + Σᵢ Cᵢ·max(0, 1 − yᵢaᵢ) with aᵢ = ⟨xᵢ, w⟩ + b,
//! and the dual variables αᵢ ∈ [0, Cᵢ] are the multipliers of the split aᵢ = ⟨xᵢ, w⟩ + b. With a
//! penalty σ, minimising the augmented Lagrangian over a in closed form leaves
//!
//!   φ(w, b) = ½‖w‖² + ½ρ_b·b² + Σᵢ ψᵢ(mᵢ),   αᵢ(w, b) = clip(αᵢ + σ(1 − yᵢmᵢ), 0, Cᵢ),
//!
//! mᵢ = ⟨xᵢ, w⟩ + b, with ∇φ = (w − Xᵀ(y∘α(w, b)), ρ_b·b − Σᵢ yᵢαᵢ(w, b)): φ is once
//! differentiable and piecewise quadratic, and its generalized Hessian I + σ·X̃_JᵀX̃_J (x̃ᵢ = [xᵢ, 1])
//! sums over the rows J whose αᵢ(w, b) lies strictly inside its box. Near the optimum J is the
//! free support vectors, a few hundred rows, so a Newton step's Hessian is cheap; its factor is
//! d³/3 flops. The multipliers then move to α(w, b), a step of dual ascent whose box keeps
//! every αᵢ feasible, and σ grows. Dual CD pays for a free b by an augmented Lagrangian on
//! Σᵢ αᵢyᵢ = 0 and for the many rows at the hinge's kink by epochs (w8a at b* needs four times the
//! epochs it needs at b = 0); here b is one more Newton coordinate, and the kink's rows are the J
//! the steps are made of.

use super::linalg::{dot, newton_direction};
use super::passes;
use super::DataView;

/// σ at the first epoch, in units of C: from α = 0 and w = 0 every αᵢ(w, b) is then σ = C/2,
/// inside its box, so the first Newton steps are on the whole smoothed problem. At C itself
/// every row starts on its bound and the first step learns nothing (w8a at C = 1: 49 Newton
/// steps to a relative gap of 1e-4, from C/2 38); in units of the rows' mean ‖xᵢ‖² instead,
/// the first subproblem at C = 0.01 took 27 steps on w8a where C/2 takes 15.
const SIGMA_START: f64 = 0.5;
/// σ's growth an epoch. The method converges linearly at a rate that improves with σ, while
/// each subproblem is harder as σ grows (J narrows, and the steps' Hessian misses the rows about
/// to enter it): in a numpy copy of the method, on w8a at C = 1, a growth of 2 took 34 Newton
/// steps to a relative gap of 1e-4, 4 and 8 took 62 and 72.
const SIGMA_GROWTH: f64 = 2.0;
/// σ stops growing at this many times C: the subproblem's Hessian I + σ·X̃_JᵀX̃_J is conditioned
/// as σ·‖xᵢ‖², and past about 1e14·C its steps were rounding (a small test problem certified
/// 1e-14 at σ = 200·C and lost it at 1e15·C). The runs measured stop by σ = 64·C at `--tol 1e-4`.
const SIGMA_MAX: f64 = 1e6;
/// An epoch's subproblem is solved once ‖∇φ‖ is at most this times ‖α(w, b) − α‖/σ, the move of
/// the multipliers it would make in margin units (SSNAL's criterion (B)): in the numpy copy
/// (with Armijo's halving for a line search) 0.1 took 57 Newton steps on w8a at C = 1, 1 took
/// 43, 3 took 42.
const INNER_TOLERANCE: f64 = 1.0;
/// Newton steps an epoch, at most.
const INNER_STEPS: usize = 50;
/// Evaluations of φ′ along a step, at most: its root is found by Newton's method on the
/// piecewise linear φ′, safeguarded by bisection.
const LINE_STEPS: usize = 40;

/// The rows of the problem: labels ±1, and each row's box Cᵢ = C·ωᵢ (0 for a row of weight 0).
pub(crate) struct Rows<'a> {
    pub labels: &'a [f64],
    pub weights: Option<&'a [f64]>,
    pub cap: f64,
}

impl Rows<'_> {
    fn cap(&self, i: usize) -> f64 {
        match self.weights {
            Some(w) if w[i] > 0.0 => self.cap * w[i],
            Some(_) => 0.0,
            None => self.cap,
        }
    }

    /// αᵢ(m) = clip(αᵢ + σ(1 − yᵢmᵢ), 0, Cᵢ), and whether it lies strictly inside its box.
    fn multiplier(&self, i: usize, alpha: f64, sigma: f64, margin: f64) -> (f64, bool) {
        let cap = self.cap(i);
        let v = alpha + sigma * (1.0 - self.labels[i] * margin);
        if v <= 0.0 {
            (0.0, false)
        } else if v >= cap {
            (cap, false)
        } else {
            (v, true)
        }
    }
}

/// What an epoch moves: w, b (with ρ_b, 0 when b is free), the multipliers α and σ.
pub(crate) struct Iterate<'a> {
    pub w: &'a mut [f64],
    pub b: Option<(&'a mut f64, f64)>,
    pub alpha: &'a mut [f64],
    pub sigma: &'a mut f64,
}

/// One epoch: the subproblem at the current multipliers and σ solved by Newton steps from the
/// current (w, b), then α ← α(w, b) and σ grown. A σ that is not positive starts at
/// [`SIGMA_START`]·C. Nothing moves when a step is not finite.
///
/// Returns the relative gap the epoch expects at the point it ends at, (P − D)/|P| with D taken
/// at α as it stands (not balanced for a free b): a pass the last Newton step already made, so
/// the driver checks the certificate only once it is near the tolerance (∞ when not known).
pub(crate) fn epoch(data: &DataView, rows: &Rows, it: Iterate) -> f64 {
    let Iterate { w, b, alpha, sigma } = it;
    let (m, d) = (rows.labels.len(), w.len());
    if *sigma <= 0.0 || !sigma.is_finite() {
        *sigma = SIGMA_START * rows.cap;
    }
    let s = *sigma;
    if !(s > 0.0 && s.is_finite()) || alpha.len() != m || data.indptr.len() != m + 1 {
        return f64::INFINITY;
    }
    let (mut b, ridge_b) = match b {
        Some((b, r)) => (Some(b), r),
        None => (None, 0.0),
    };
    let at = |b: &Option<&mut f64>| b.as_deref().copied().unwrap_or(0.0);
    let mut margins = times(data, w, at(&b));
    let mut pass = Pass::at(data, rows, alpha, s, &margins, d);
    for _ in 0..INNER_STEPS {
        let g: Vec<f64> = w.iter().zip(&pass.xtu).map(|(w, x)| w - x).collect();
        let g_b = b.as_deref().map(|&b| ridge_b * b - pass.sum);
        let norm = (dot(&g, &g) + g_b.map_or(0.0, |x| x * x)).sqrt();
        if !norm.is_finite() || norm <= INNER_TOLERANCE * pass.moved.sqrt() / s {
            break;
        }
        let Some((step, step_b)) = pass.direction(data, s, &g, g_b.map(|g| (g, ridge_b))) else { break };
        let slope = dot(&g, &step) + g_b.map_or(0.0, |g| g * step_b);
        if slope.is_nan() || slope >= 0.0 {
            break;
        }
        let along = times(data, &step, step_b);
        let line = Line::new(rows, alpha, &margins, &along, s);
        let quadratic = (dot(w, &step), dot(&step, &step), ridge_b * at(&b) * step_b, ridge_b * step_b * step_b);
        let t = line.minimum(quadratic, slope);
        if !(t > 0.0 && t.is_finite()) {
            break;
        }
        w.iter_mut().zip(&step).for_each(|(w, s)| *w += t * s);
        if let Some(b) = b.as_deref_mut() {
            *b += t * step_b;
        }
        margins.iter_mut().zip(&along).for_each(|(m, a)| *m += t * a);
        pass = Pass::at(data, rows, alpha, s, &margins, d);
    }
    alpha.copy_from_slice(&pass.next);
    *sigma = (s * SIGMA_GROWTH).min(SIGMA_MAX * rows.cap);
    // P at (w, b) from the margins, D at the new α from the pass made there.
    let hinge: f64 = (0..m).map(|i| rows.cap(i) * (1.0 - rows.labels[i] * margins[i]).max(0.0)).sum();
    let b_term = |x: f64| if ridge_b > 0.0 { x } else { 0.0 };
    let primal = 0.5 * dot(w, w) + b_term(0.5 * ridge_b * at(&b) * at(&b)) + hinge;
    let dual =
        alpha.iter().sum::<f64>() - 0.5 * dot(&pass.xtu, &pass.xtu) - b_term(0.5 * pass.sum * pass.sum / ridge_b);
    // P ≥ 0, and P = 0 is the optimum itself (w = 0, every margin past 1).
    let estimate = if primal > 0.0 { (primal - dual).max(0.0) / primal } else { 0.0 };
    if estimate.is_finite() {
        estimate
    } else {
        f64::INFINITY
    }
}

/// What one pass over the rows gives at the current margins: the multipliers α(w, b), the rows
/// strictly inside their box (J), Xᵀ(y∘α(w, b)), Σᵢ yᵢαᵢ(w, b) and ‖α(w, b) − α‖². In blocks of
/// rows added in order, so the sums are the same for any thread count.
struct Pass {
    next: Vec<f64>,
    inside: Vec<usize>,
    xtu: Vec<f64>,
    sum: f64,
    moved: f64,
}

impl Pass {
    fn at(data: &DataView, rows: &Rows, alpha: &[f64], sigma: f64, margins: &[f64], features: usize) -> Pass {
        let parts = passes::blocks(margins.len(), data.threads, |range| {
            let mut part = Pass { next: vec![], inside: vec![], xtu: vec![0.0; features], sum: 0.0, moved: 0.0 };
            for i in range {
                let (a, inside) = rows.multiplier(i, alpha[i], sigma, margins[i]);
                part.next.push(a);
                if inside {
                    part.inside.push(i);
                }
                part.moved += (a - alpha[i]) * (a - alpha[i]);
                let u = rows.labels[i] * a;
                part.sum += u;
                if u != 0.0 {
                    each_entry(data, i, |j, x| {
                        if let Some(out) = part.xtu.get_mut(j as usize) {
                            *out += x * u;
                        }
                    });
                }
            }
            part
        });
        let mut all = Pass { next: vec![], inside: vec![], xtu: vec![0.0; features], sum: 0.0, moved: 0.0 };
        for part in parts {
            all.next.extend(part.next);
            all.inside.extend(part.inside);
            all.xtu.iter_mut().zip(&part.xtu).for_each(|(x, p)| *x += p);
            all.sum += part.sum;
            all.moved += part.moved;
        }
        all
    }

    /// The Newton step on φ: its Hessian I + σ·X̃_JᵀX̃_J (b's corner σ|J| + ρ_b) over the rows of
    /// J alone, copied out (a few hundred near the optimum, where X has tens of thousands).
    fn direction(&self, data: &DataView, sigma: f64, g: &[f64], b: Option<(f64, f64)>) -> Option<(Vec<f64>, f64)> {
        if self.inside.is_empty() || g.is_empty() {
            // H = I on w (no features: nothing), and b's corner σ|J| + ρ_b. Where that is 0 (a free
            // b and every row on a bound: φ is linear in b) b takes the curvature it has once every
            // row is back inside its box, σ·m, so that the step is in margin units (with the
            // identity's, a C of 1e-6 moved b by 1e-5 a step towards a b* of 1).
            let step_b = b.map_or(0.0, |(g_b, ridge_b)| {
                let corner = sigma * self.inside.len() as f64 + ridge_b;
                let corner = if corner > 0.0 { corner } else { sigma * self.next.len() as f64 };
                if corner > 0.0 {
                    -g_b / corner
                } else {
                    0.0
                }
            });
            return Some((g.iter().map(|g| -g).collect(), step_b));
        }
        let mut indptr = Vec::with_capacity(self.inside.len() + 1);
        indptr.push(0);
        let (mut indices, mut values) = (vec![], vec![]);
        for &i in &self.inside {
            for k in data.indptr[i]..data.indptr[i + 1] {
                indices.push(data.indices[k]);
                values.push(data.values[k]);
            }
            indptr.push(indices.len());
        }
        let view = DataView::new(&indptr, &indices, &values, &[], g.len()).with_threads(data.threads);
        newton_direction(&view, g.len(), &vec![sigma; self.inside.len()], g, 1.0, b)
    }
}

/// Row i's entries, (column, value), to `f` in order: u32 indices as a slice where the data
/// stores them so (no stride a read), else through their stride.
fn each_entry(data: &DataView, i: usize, mut f: impl FnMut(u32, f64)) {
    let row = data.indptr[i]..data.indptr[i + 1];
    let values = &data.values[row.clone()];
    match data.indices.as_slice() {
        Some(indices) => indices[row].iter().zip(values).for_each(|(&j, &x)| f(j, x)),
        None => row.zip(values).for_each(|(k, &x)| f(data.indices[k], x)),
    }
}

/// X·v + offset over the first v.len() columns (indices past them ignored), on the data's threads.
fn times(data: &DataView, v: &[f64], offset: f64) -> Vec<f64> {
    let m = data.indptr.len().saturating_sub(1);
    passes::blocks(m, data.threads, |range| {
        range
            .map(|i| {
                let mut sum = offset;
                each_entry(data, i, |j, x| sum += v.get(j as usize).map_or(0.0, |vj| x * vj));
                sum
            })
            .collect::<Vec<f64>>()
    })
    .into_iter()
    .flatten()
    .collect()
}

/// φ along a step: the margins move by t·`along`, and φ′(t) = (w + t·s)·s + ρ_b(b + t·s_b)s_b −
/// Σᵢ yᵢαᵢ(t)·alongᵢ is piecewise linear and non-decreasing in t. Each row the step moves is
/// kept as αᵢ(t) = clip(baseᵢ + t·slopeᵢ, 0, Cᵢ) with its weight yᵢ·alongᵢ, in arrays a tight
/// loop reads (rows it leaves alone, alongᵢ = 0, are left out).
struct Line {
    base: Vec<f64>,
    slope: Vec<f64>,
    weight: Vec<f64>,
    cap: Vec<f64>,
}

impl Line {
    fn new(rows: &Rows, alpha: &[f64], margins: &[f64], along: &[f64], sigma: f64) -> Line {
        let mut line = Line { base: vec![], slope: vec![], weight: vec![], cap: vec![] };
        for (i, &a) in along.iter().enumerate() {
            if a != 0.0 {
                let y = rows.labels[i];
                line.base.push(alpha[i] + sigma * (1.0 - y * margins[i]));
                line.slope.push(-sigma * y * a);
                line.weight.push(y * a);
                line.cap.push(rows.cap(i));
            }
        }
        line
    }

    /// φ′(t) and its slope φ″(t) (σ·Σ over the rows inside their box of alongᵢ², plus the
    /// quadratic part's), given w·s, s·s, ρ_b·b·s_b and ρ_b·s_b².
    fn derivatives(&self, t: f64, (ws, ss, bs, bb): (f64, f64, f64, f64)) -> (f64, f64) {
        let (mut first, mut second) = (ws + t * ss + bs + t * bb, ss + bb);
        for (((&base, &slope), &weight), &cap) in self.base.iter().zip(&self.slope).zip(&self.weight).zip(&self.cap) {
            let v = base + t * slope;
            if v <= 0.0 {
                continue;
            }
            if v >= cap {
                first -= cap * weight;
            } else {
                first -= v * weight;
                // slope·weight = −σ·alongᵢ²
                second -= slope * weight;
            }
        }
        (first, second)
    }

    /// The step length that minimises φ along the step (φ′(0) = `slope` < 0): Newton's method on
    /// φ′ inside the bracket it keeps, bisection where Newton leaves it, the bracket doubled
    /// from t = 1 until φ′ turns.
    fn minimum(&self, quadratic: (f64, f64, f64, f64), slope: f64) -> f64 {
        let (mut lo, mut hi) = (0.0_f64, f64::INFINITY);
        let mut t = 1.0;
        for _ in 0..LINE_STEPS {
            let (first, second) = self.derivatives(t, quadratic);
            if !first.is_finite() {
                hi = t;
                t = 0.5 * (lo + hi);
                continue;
            }
            if first.abs() <= 1e-12 * slope.abs() {
                return t;
            }
            if first < 0.0 {
                lo = t;
            } else {
                hi = t;
            }
            let newton = if second > 0.0 { t - first / second } else { f64::NAN };
            t = if newton > lo && newton < hi {
                newton
            } else if hi.is_finite() {
                0.5 * (lo + hi)
            } else {
                2.0 * t
            };
            if hi.is_finite() && hi - lo <= 1e-12 * hi {
                break;
            }
        }
        // Any point of the bracket's left end has φ below φ(0); its right end may not.
        if hi.is_finite() && lo > 0.0 {
            lo
        } else {
            t
        }
    }
}

#[cfg(test)]
mod tests;
