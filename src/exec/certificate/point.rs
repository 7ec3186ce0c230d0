//! The dual point: every point the certificate evaluates D at is made here, by [`dual_point`],
//! from the margins or from entries another part computed. It is ℓ′ (or the entries given) put
//! into the domain of ℓ*, then balanced to Σᵢ ωᵢuᵢ = 0 where an intercept asks for it; `dual_at`
//! then scales it into the domain of R* and evaluates D. The plain point (ℓ′ at the iterate), the
//! plan's own (a dual method's, the Picard SVM's), the extrapolated one and the refined ones all
//! come through it. The streamed and ranked runs build the same point from sums over their
//! blocks of rows (`reduced.rs`), since no rank holds every row.

use super::conjugates::into_loss_domain;
use super::intercept;
use super::loss::loss_derivatives;
use crate::plan::{Certificate, LossConjugate};
use std::borrow::Cow;

/// What a dual point is made from.
pub(crate) enum Entries<'a> {
    /// The margins, where the loss has ℓ″: ℓ′ in closed form, with a free intercept at the
    /// offset optimal for this w (the margins shifted by it), so the balance moves the point
    /// least.
    Margins(&'a [f64]),
    /// Entries already in the domain of ℓ* (ℓ′ of the plan's own formula at the iterate, `width`
    /// a row): only balanced.
    InDomain(Vec<f64>),
    /// Any entries (the plan's dual expression, an extrapolation): put into the domain (for
    /// softmax, each row's u + e_y onto the simplex), then balanced.
    Any(Vec<f64>),
}

/// An unregularized intercept, whose dual point must satisfy Σᵢ uᵢ = 0.
pub(super) fn free_intercept(cert: &Certificate) -> bool {
    cert.intercept && cert.intercept_l2 == 0.0
}

/// The dual point of `entries` (one entry a row, `width` for softmax): in the domain of ℓ*, and
/// with a free intercept balanced to Σᵢ ωᵢuᵢ = 0 (per class for softmax) inside the domain.
pub(crate) fn dual_point(
    cert: &Certificate,
    labels: &[f64],
    weights: Option<&[f64]>,
    width: usize,
    entries: Entries,
) -> Vec<f64> {
    let kind = cert.conjugate;
    let free = free_intercept(cert);
    let mut u = match entries {
        Entries::Margins(a) => {
            let mut a = Cow::Borrowed(a);
            if free {
                intercept::shift_to_optimal_offset(kind, labels, weights, a.to_mut());
            }
            a.iter().zip(labels).map(|(&ai, &y)| into_loss_domain(kind, y, loss_derivatives(kind, y, ai).0)).collect()
        }
        Entries::InDomain(u) => u,
        Entries::Any(mut u) if kind == LossConjugate::Softmax => {
            // q = u + e_y projected onto the simplex, row by row.
            for (row, &y) in u.chunks_mut(width).zip(labels) {
                row[y as usize] += 1.0;
                crate::runtime::Routine::ProjSimplex.apply(row, 0.0);
                row[y as usize] -= 1.0;
            }
            u
        }
        Entries::Any(u) => u.iter().zip(labels).map(|(&ui, &y)| into_loss_domain(kind, y, ui)).collect(),
    };
    if free {
        if kind == LossConjugate::Softmax {
            u = intercept::balance_classes(labels, weights, u, width);
        } else {
            intercept::balance(kind, labels, weights, &mut u);
        }
    }
    u
}
