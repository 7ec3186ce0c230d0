//! Columns that copy an earlier one ([`Copies`]), folded away where the model allows it.
//!
//! Under λ·‖w‖₁ alone (no ½‖·‖², no box) weight moves between equal columns at no cost, so a
//! run that keeps every copy at zero solves the same problem on fewer, independent columns.
//! The payoff is conditioning, not the columns saved: a support holding two copies has a
//! singular Hessian, coordinate descent drifts along their difference, and the certificate's
//! exact Newton steps cannot solve there. On debian-files at C = 100 (λ 1.94e-7), left free,
//! a run reached 7,500 non-zero weights of which some 1,000 copied another non-zero one.
//!
//! The gradient of a copy is its first column's bit for bit (the same sums in the same order),
//! so the duality gap, the screening and the working sets see no difference but the columns
//! they may pick.

use super::DataView;
use crate::data::Copies;
use crate::plan::Certificate;

/// The copies of `data`'s columns, when the model's regularizer lets their weight be folded
/// onto the first column of each kind and some column is a copy; None otherwise.
pub(crate) fn foldable<'a>(cert: &Certificate, data: &DataView<'a>) -> Option<&'a Copies> {
    let l1_alone = cert.l2 == 0.0
        && cert.lo == f64::NEG_INFINITY
        && cert.hi == f64::INFINITY
        && cert.vector.is_none()
        && cert.groups.is_none();
    let copies = data.csc_at_hand().filter(|_| l1_alone)?.copies(data.threads);
    (copies.count() > 0).then_some(copies)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::LossConjugate;

    /// The certificate of the squared loss with these terms.
    fn cert(l1: f64, l2: f64, lo: f64, hi: f64) -> Certificate {
        let conjugate = LossConjugate::Squared;
        Certificate { conjugate, l1, l2, lo, hi, vector: None, groups: None, intercept: false, intercept_l2: 0.0 }
    }

    /// Only ℓ1 alone folds: ½‖·‖² splits the weight of equal columns evenly, and a box may not
    /// hold their sum.
    #[test]
    fn only_l1_alone_folds_copies() {
        // Columns 0 and 1 are equal, column 2 is not.
        let (indptr, indices, values) = ([0, 3, 4], [0u32, 1, 2, 2], [1.0, 1.0, 2.0, 1.0]);
        let labels = [1.0, -1.0];
        let columns =
            crate::data::LazyColumns::built(crate::data::Columns::of(&indptr, (&indices).into(), &values, 3, 1));
        let view = DataView::new(&indptr, &indices, &values, &labels, 3).with_columns(&columns);
        let free = (f64::NEG_INFINITY, f64::INFINITY);
        let folds = |c: Certificate| foldable(&c, &view).map(|c| (0..3).map(|j| c.first(j)).collect::<Vec<_>>());
        assert_eq!(folds(cert(0.1, 0.0, free.0, free.1)), Some(vec![0, 0, 2]));
        assert_eq!(folds(cert(0.1, 0.5, free.0, free.1)), None);
        assert_eq!(folds(cert(0.1, 0.0, -1.0, 1.0)), None);
        assert_eq!(folds(cert(0.1, 0.0, 0.0, free.1)), None);
        let no_columns = DataView::new(&indptr, &indices, &values, &labels, 3);
        assert!(foldable(&cert(0.1, 0.0, free.0, free.1), &no_columns).is_none());
    }
}
