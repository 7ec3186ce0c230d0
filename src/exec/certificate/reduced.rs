//! The dual point from sums over the rows, for a check that never holds all of u at once: a
//! streamed file's blocks, or rows split across ranks. One pass adds up Xᵀu and Σᵢ uᵢ (and,
//! with a free intercept, what makes u feasible for it); the caller adds those sums up across
//! the ranks, and a last pass sums ℓ* at the scaled point.
//!
//! A free intercept needs Σᵢ uᵢ = 0 ([`super::intercept`]). In memory each uᵢ is moved toward
//! the end of its domain in proportion to its room there. Here the move is one that Xᵀ passes
//! through, affine in uᵢ with coefficients that depend only on yᵢ's class:
//! - binary losses: every uᵢ goes the same fraction f of the way to the end of its domain on
//!   the side that cancels the excess r = Σᵢ uᵢ, u′ᵢ = (1 − f)·uᵢ + f·e(yᵢ), with
//!   f = |r| / Σᵢ |e(yᵢ) − uᵢ| (the room, ≥ |r| because 0 is in every domain);
//! - the squared hinge, whose domain is unbounded on one side for each class: where the excess
//!   must go that way, the rows of that class are shifted by the excess over their count;
//! - the squared loss: the mean is subtracted;
//! - softmax with one offset per class: the mean row is subtracted and the result mixed with
//!   the class frequencies by the least θ that keeps every row in the simplex, as
//!   [`super::intercept::balance_classes`] does (θ needs one more pass: a maximum over rows).
//!
//! So Xᵀu′ is a combination of Xᵀu and of each class's column sums Xᵀ1_{y=class}, all summed in
//! the first pass, and u′ᵢ is recomputed row by row where ℓ* needs it. The in-memory check's
//! first step, moving the margins to the optimal offset for w, needs every margin at once and
//! is left out: where b is near optimal, as at the end of a run, the move is small anyway.

use super::intercept::domain;
use super::point::free_intercept;
use crate::data::DataView;
use crate::plan::{Certificate, LossConjugate};
use crate::runtime::picard::Operator;

/// What a pass over the rows adds up for the dual point, in one buffer the ranks add up:
/// Xᵀu (d × width) | Xᵀ1 of each class (d × classes) | Σᵢ uᵢ (width) | rows per class |
/// the room below and above u (binary losses with a free intercept).
pub(crate) struct DualSums {
    features: usize,
    width: usize,
    /// Label classes the move toward feasibility tells apart (0 without a free intercept).
    classes: usize,
    pub buf: Vec<f64>,
}

impl DualSums {
    /// Zero sums for `features` columns of `width` dual entries per row.
    pub fn new(cert: &Certificate, features: usize, width: usize) -> DualSums {
        let classes = match (free_intercept(cert), cert.conjugate) {
            (false, _) => 0,
            (true, LossConjugate::Softmax) => width,
            (true, LossConjugate::Squared | LossConjugate::SquaredEpsInsensitive(_)) => 1,
            (true, _) => 2,
        };
        let len = features * (width + classes) + width + classes + 2;
        DualSums { features, width, classes, buf: vec![0.0; len] }
    }

    /// Adds row `i` of `view` with its dual entries `u` (in the domain of ℓ*), each sum
    /// weighted by the row's weight ωᵢ (1 without weights): Σ ωᵢxᵢuᵢ, the weighted counts and
    /// rooms, so the balance keeps Σᵢ ωᵢuᵢ = 0.
    pub fn add(&mut self, cert: &Certificate, view: &DataView, i: usize, u: &[f64]) {
        let (d, k, classes) = (self.features, self.width, self.classes);
        let y = view.labels[i];
        let wi = view.weight(i);
        if wi == 0.0 {
            return;
        }
        let class = class_of(cert.conjugate, y);
        let (xtu, rest) = self.buf.split_at_mut(d * k);
        let (by_class, rest) = rest.split_at_mut(d * classes);
        for p in view.indptr[i]..view.indptr[i + 1] {
            let j = view.indices[p] as usize;
            if j >= d {
                continue;
            }
            let x = wi * view.values[p];
            for (t, uc) in xtu[j * k..(j + 1) * k].iter_mut().zip(u) {
                *t += x * uc;
            }
            if classes > 0 {
                by_class[j * classes + class] += x;
            }
        }
        for (t, uc) in rest[..k].iter_mut().zip(u) {
            *t += wi * uc;
        }
        if classes > 0 {
            rest[k + class] += wi;
            if !matches!(
                cert.conjugate,
                LossConjugate::Softmax | LossConjugate::Squared | LossConjugate::SquaredEpsInsensitive(_)
            ) {
                let (lo, hi) = domain(cert.conjugate, y);
                rest[k + classes] += wi * (u[0] - lo);
                rest[k + classes + 1] += wi * (hi - u[0]);
            }
        }
    }

    /// Σᵢ uᵢ over the rows added (width entries).
    pub fn sum_u(&self) -> &[f64] {
        let at = self.features * (self.width + self.classes);
        &self.buf[at..at + self.width]
    }

    fn counts(&self) -> &[f64] {
        let at = self.features * (self.width + self.classes) + self.width;
        &self.buf[at..at + self.classes]
    }

    fn room(&self) -> [f64; 2] {
        let n = self.buf.len();
        [self.buf[n - 2], self.buf[n - 1]]
    }

    /// The move that makes u feasible for the intercept, from the summed buffer of rows whose
    /// weights add up to `m` (their count without weights).
    pub fn balance(&self, cert: &Certificate, m: f64) -> Balance {
        if self.classes == 0 || m == 0.0 {
            return Balance::Keep;
        }
        let r = self.sum_u();
        match cert.conjugate {
            LossConjugate::Squared | LossConjugate::SquaredEpsInsensitive(_) => Balance::Shift(r[0] / m),
            LossConjugate::Softmax => Balance::Classes {
                shift: r.iter().map(|rc| rc / m).collect(),
                freq: self.counts().iter().map(|n| n / m).collect(),
                theta: 0.0,
            },
            _ => {
                let r = r[0];
                let down = r > 0.0;
                let room = if down { self.room()[0] } else { self.room()[1] };
                // The class whose domain is unbounded on the side the excess must go (y = +1's
                // below, y = −1's above, for the squared hinge), if it has rows.
                let unbounded = (0..2).find(|&class| {
                    let (lo, hi) = domain(cert.conjugate, if class == 0 { 1.0 } else { -1.0 });
                    (if down { lo } else { hi }).is_infinite() && self.counts()[class] > 0.0
                });
                // Toward's Xᵀu′ reads each class's end at its sign's label (±1): exact where a
                // row's domain depends on yᵢ through its sign alone. Poisson's lower ends, −yᵢ, do
                // not, so its rows are never moved toward them (its upper side is unbounded).
                let ends_by_sign = cert.conjugate != LossConjugate::Poisson;
                match (r, unbounded) {
                    (0.0, _) => Balance::Keep,
                    _ if room.is_finite() && room > 0.0 && ends_by_sign => {
                        Balance::Toward { f: (r.abs() / room).min(1.0), down }
                    }
                    (_, Some(class)) => Balance::ShiftClass { class, t: r / self.counts()[class] },
                    _ => Balance::Impossible,
                }
            }
        }
    }

    /// z = scale·Xᵀu′ (scale = −c/m), d × width, u′ the balanced point.
    pub fn z(&self, cert: &Certificate, balance: &Balance, scale: f64) -> Vec<f64> {
        let (d, k, classes) = (self.features, self.width, self.classes);
        let xtu = &self.buf[..d * k];
        let by_class = &self.buf[d * k..d * (k + classes)];
        let ones = |j: usize| by_class[j * classes..(j + 1) * classes].iter().sum::<f64>();
        let mut z = xtu.to_vec();
        match balance {
            Balance::Keep | Balance::Impossible => {}
            Balance::Shift(t) => {
                for (j, zj) in z.iter_mut().enumerate() {
                    *zj -= t * ones(j);
                }
            }
            Balance::ShiftClass { class, t } => {
                for (j, zj) in z.iter_mut().enumerate() {
                    *zj -= t * by_class[j * classes + class];
                }
            }
            Balance::Toward { f, down } => {
                // Σᵢ xᵢⱼ·e(yᵢ), e the domain's end of each class (y = +1 and y = −1).
                let end = |class: usize| {
                    let (lo, hi) = domain(cert.conjugate, if class == 0 { 1.0 } else { -1.0 });
                    if *down {
                        lo
                    } else {
                        hi
                    }
                };
                let (e0, e1) = (end(0), end(1));
                // A class with no rows adds nothing, though its end be infinite (∞·0).
                let times = |e: f64, sum: f64| if sum == 0.0 { 0.0 } else { e * sum };
                for (j, zj) in z.iter_mut().enumerate() {
                    *zj = (1.0 - f) * *zj + f * (times(e0, by_class[2 * j]) + times(e1, by_class[2 * j + 1]));
                }
            }
            Balance::Classes { shift, freq, theta } => {
                for j in 0..d {
                    let sum = ones(j);
                    for c in 0..k {
                        let at = j * k + c;
                        let moved = xtu[at] - sum * shift[c];
                        let base = sum * freq[c] - by_class[j * classes + c];
                        z[at] = (1.0 - theta) * moved + theta * base;
                    }
                }
            }
        }
        z.iter_mut().for_each(|v| *v *= scale);
        z
    }
}

/// The move toward Σᵢ uᵢ = 0 for a free intercept; see the module's notes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Balance {
    /// No free intercept, or u already sums to 0: u as it is.
    Keep,
    /// The squared loss: u′ᵢ = uᵢ − t.
    Shift(f64),
    /// u′ᵢ = (1 − f)·uᵢ + f·e(yᵢ), e the lower end of the domain when `down`, else the upper.
    Toward { f: f64, down: bool },
    /// Softmax: u′ᵢ = (1 − θ)·(uᵢ − shift) + θ·(freq − e_{yᵢ}).
    Classes { shift: Vec<f64>, freq: Vec<f64>, theta: f64 },
    /// The squared hinge with the needed side unbounded for `class`: u′ᵢ = uᵢ − t on its rows.
    ShiftClass { class: usize, t: f64 },
    /// The end on the needed side is at infinity and no row can take the move: none.
    Impossible,
}

impl Balance {
    /// Whether θ is still to be found: [`Balance::theta_of_row`] over every row, the maximum.
    pub fn needs_theta(&self) -> bool {
        matches!(self, Balance::Classes { .. })
    }

    /// The least θ that keeps row `u` (label `y`) in the simplex after the shift.
    pub fn theta_of_row(&self, y: f64, u: &[f64]) -> f64 {
        let Balance::Classes { shift, freq, .. } = self else { return 0.0 };
        let mut theta: f64 = 0.0;
        for (c, uc) in u.iter().enumerate() {
            let q = uc - shift[c] + if c as f64 == y { 1.0 } else { 0.0 };
            if q < 0.0 {
                // (1 − θ)·q + θ·f_c ≥ 0; a class the data never shows has f_c = 0: all of u⁰.
                theta = theta.max(if freq[c] > 0.0 { -q / (freq[c] - q) } else { 1.0 });
            }
        }
        theta.min(1.0)
    }

    /// Sets θ, the maximum of [`Balance::theta_of_row`] over every rank's rows.
    pub fn set_theta(&mut self, found: f64) {
        if let Balance::Classes { theta, .. } = self {
            *theta = found.clamp(0.0, 1.0);
        }
    }

    /// Row `u` (label `y`) moved as the sums were.
    pub fn apply(&self, kind: LossConjugate, y: f64, u: &mut [f64]) {
        match self {
            Balance::Keep | Balance::Impossible => {}
            Balance::Shift(t) => u[0] -= t,
            Balance::ShiftClass { class, t } => {
                if class_of(kind, y) == *class {
                    u[0] -= t;
                }
            }
            Balance::Toward { f, down } => {
                let (lo, hi) = domain(kind, y);
                let end = if *down { lo } else { hi };
                u[0] = ((1.0 - f) * u[0] + f * end).clamp(lo, hi);
            }
            Balance::Classes { shift, freq, theta } => {
                for (c, uc) in u.iter_mut().enumerate() {
                    let u0 = freq[c] - if c as f64 == y { 1.0 } else { 0.0 };
                    *uc = (1.0 - theta) * (*uc - shift[c]) + theta * u0;
                }
            }
        }
    }
}

/// Which class's column sums row label `y` adds to: softmax's class, the binary sign, or the
/// one class of a real label.
fn class_of(kind: LossConjugate, y: f64) -> usize {
    match kind {
        LossConjugate::Softmax => y as usize,
        LossConjugate::Squared | LossConjugate::SquaredEpsInsensitive(_) => 0,
        _ if y > 0.0 => 0,
        _ => 1,
    }
}

/// Whether the closed-form R* bounds F* for these weights: a group term needs its operator
/// bound, with every feature in a group unless ½‖·‖² is there too.
pub(crate) fn covers(cert: &Certificate, operator: Option<&Operator>, weights: usize) -> bool {
    cert.groups.is_none() || operator.is_some_and(|op| super::groups::applies(cert.l2, op, weights))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LossConjugate::*;

    fn cert(conjugate: LossConjugate) -> Certificate {
        Certificate {
            conjugate,
            l1: 0.1,
            l2: 0.0,
            lo: f64::NEG_INFINITY,
            hi: f64::INFINITY,
            vector: None,
            groups: None,
            intercept: true,
            intercept_l2: 0.0,
        }
    }

    /// Rows split in two parts and their sums added give a balanced point that sums to 0, stays
    /// in the domain, and whose Xᵀu′ (from the sums) is Xᵀ of the moved rows.
    #[test]
    fn the_balanced_point_sums_to_zero_and_xt_passes_through_the_move() {
        // Three features, five rows.
        let indptr = [0, 2, 3, 5, 6, 8];
        let indices = [0, 1, 2, 0, 2, 1, 0, 2];
        let values = [1.0, 2.0, -1.0, 0.5, 3.0, 1.5, -2.0, 1.0];
        for (kind, labels, u0) in [
            (Logistic, vec![1.0, -1.0, 1.0, 1.0, -1.0], vec![-0.9, 0.2, -0.1, -0.7, 0.05]),
            (Logistic, vec![1.0, -1.0, 1.0, 1.0, -1.0], vec![-0.01, 0.9, -0.02, 0.0, 0.99]),
            (Hinge, vec![1.0, -1.0, 1.0, 1.0, -1.0], vec![-1.0, 0.0, -0.3, -0.7, 1.0]),
            (Squared, vec![3.0, -1.0, 0.5, 2.0, 1.0], vec![0.3, -2.0, 1.0, 0.4, 0.8]),
            // The squared hinge's domain is unbounded below for y = +1, above for y = −1.
            (SquaredHinge, vec![1.0, -1.0, 1.0, 1.0, -1.0], vec![-0.9, 0.2, -0.1, -0.7, 0.05]),
            (SquaredHinge, vec![1.0, -1.0, 1.0, 1.0, -1.0], vec![-0.01, 0.9, -0.02, 0.0, 0.99]),
            // Real labels with domains that do not depend on them.
            (Huber(1.0), vec![3.0, -1.0, 0.5, 2.0, 1.0], vec![0.3, -0.9, 0.8, 0.4, 0.8]),
            (Quantile(0.3), vec![3.0, -1.0, 0.5, 2.0, 1.0], vec![0.6, -0.2, 0.5, 0.1, 0.7]),
            // Counts, whose domain u ≥ −y is unbounded above: shifted up.
            (Poisson, vec![3.0, 0.0, 1.0, 2.0, 0.0], vec![-1.0, 0.5, -0.5, -1.5, 0.2]),
        ] {
            let c = cert(kind);
            let view = DataView::new(&indptr, &indices, &values, &labels, 3);
            let mut sums = DualSums::new(&c, 3, 1);
            let mut other = DualSums::new(&c, 3, 1);
            for i in 0..5 {
                let part = if i < 2 { &mut sums } else { &mut other };
                part.add(&c, &view, i, &u0[i..i + 1]);
            }
            for (a, b) in sums.buf.iter_mut().zip(&other.buf) {
                *a += b;
            }
            let balance = sums.balance(&c, 5.0);
            let z = sums.z(&c, &balance, 1.0);
            let mut moved = u0.clone();
            for (ui, &y) in moved.iter_mut().zip(&labels) {
                balance.apply(kind, y, std::slice::from_mut(ui));
                let (lo, hi) = domain(kind, y);
                assert!(lo <= *ui && *ui <= hi, "{kind:?}: {ui} outside [{lo}, {hi}]");
            }
            assert!(moved.iter().sum::<f64>().abs() < 1e-14, "{kind:?}: Σu′ = {}", moved.iter().sum::<f64>());
            let direct = crate::exec::certificate::transpose_times(&view, 3, &moved);
            for (a, b) in z.iter().zip(&direct) {
                assert!((a - b).abs() < 1e-13, "{kind:?}: Xᵀu′ {a} from the sums, {b} directly");
            }
        }
    }

    /// Poisson's rows are never moved toward their lower ends (−yᵢ, which the sums do not hold):
    /// an excess that must go down leaves no balanced point, and so no certificate at that check.
    #[test]
    fn counts_are_not_moved_toward_their_lower_ends() {
        let (indptr, indices, values) = ([0, 1, 2, 3], [0, 1, 0], [1.0, 2.0, -1.0]);
        let labels = [3.0, 0.0, 1.0];
        let c = cert(Poisson);
        let view = DataView::new(&indptr, &indices, &values, &labels, 2);
        let mut sums = DualSums::new(&c, 2, 1);
        for (i, u) in [1.0, 0.5, 0.0].iter().enumerate() {
            sums.add(&c, &view, i, std::slice::from_ref(u));
        }
        assert_eq!(sums.balance(&c, 3.0), Balance::Impossible);
    }

    /// Softmax rows: after the shift and the mix by the rows' largest θ, every row is in the
    /// simplex (less e_y), the rows sum to 0 in every class, and Xᵀu′ follows from the sums.
    #[test]
    fn softmax_rows_balance_per_class_inside_the_simplex() {
        let indptr = [0, 1, 3, 4, 5];
        let indices = [0, 0, 1, 1, 0];
        let values = [1.0, 2.0, -1.0, 0.5, 3.0];
        let labels = [0.0, 2.0, 1.0, 2.0];
        let k = 3;
        // p − e_y for some probabilities p.
        let p = [[0.7, 0.2, 0.1], [0.05, 0.05, 0.9], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]];
        let mut u = vec![];
        for (row, &y) in p.iter().zip(&labels) {
            for (c, pc) in row.iter().enumerate() {
                u.push(pc - if c as f64 == y { 1.0 } else { 0.0 });
            }
        }
        let c = cert(Softmax);
        let view = DataView::new(&indptr, &indices, &values, &labels, 2);
        let mut sums = DualSums::new(&c, 2, k);
        for i in 0..4 {
            sums.add(&c, &view, i, &u[i * k..(i + 1) * k]);
        }
        let mut balance = sums.balance(&c, 4.0);
        assert!(balance.needs_theta());
        let theta = (0..4).map(|i| balance.theta_of_row(labels[i], &u[i * k..(i + 1) * k])).fold(0.0, f64::max);
        balance.set_theta(theta);
        let z = sums.z(&c, &balance, 1.0);
        let mut moved = u.clone();
        for (row, &y) in moved.chunks_mut(k).zip(&labels) {
            balance.apply(Softmax, y, row);
            for (cl, x) in row.iter().enumerate() {
                assert!(x + if cl as f64 == y { 1.0 } else { 0.0 } >= -1e-15, "a row left the simplex: {row:?}");
            }
        }
        for cl in 0..k {
            let total: f64 = moved.chunks(k).map(|r| r[cl]).sum();
            assert!(total.abs() < 1e-14, "class {cl}: Σu′ = {total}");
        }
        let mut direct = vec![0.0; 2 * k];
        for (i, row) in moved.chunks(k).enumerate() {
            for q in indptr[i]..indptr[i + 1] {
                for cl in 0..k {
                    direct[indices[q] as usize * k + cl] += values[q] * row[cl];
                }
            }
        }
        for (a, b) in z.iter().zip(&direct) {
            assert!((a - b).abs() < 1e-13, "Xᵀu′ {a} from the sums, {b} directly");
        }
    }
}
