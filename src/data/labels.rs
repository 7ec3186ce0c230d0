//! Raw labels → what a loss reads. docs/language.md: `labels` are ±1 (0/1 mapped to −1/+1);
//! optc extends that to any two values (the smaller → −1), as LIBSVM's sets use 1/2.
//! `classes` map k distinct labels to 0..k in first-seen order; `real` is the identity.
//! A two-class loss on data with k > 2 labels trains one-vs-rest ([`LabelMap::one_vs_rest`]).

use crate::stdlib::LabelKind;

#[derive(Clone, Debug, PartialEq)]
pub struct LabelMap {
    pub kind: LabelKind,
    /// The raw label of each mapped value: [negative, positive] for labels, class order for
    /// classes, empty for real.
    pub originals: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
#[error("{at}: {message}")]
pub struct LabelError {
    /// The row's place ([`super::Dataset::place`]).
    pub at: String,
    pub message: String,
}

impl LabelMap {
    /// Learns the mapping from training labels.
    pub fn fit(kind: LabelKind, data: &super::Dataset) -> Result<LabelMap, LabelError> {
        let mut distinct: Vec<f64> = vec![];
        for (k, &y) in data.labels.iter().enumerate() {
            if kind == LabelKind::Real {
                break;
            }
            if !distinct.contains(&y) {
                distinct.push(y);
                if kind == LabelKind::Labels && distinct.len() > 2 {
                    // Fractional targets are regression data, not a third class.
                    let hint = if distinct.iter().any(|v| v.fract() != 0.0) {
                        "; these look like real-valued targets: declare `y: real` and use a regression loss such as `squared`"
                    } else {
                        "; declare `y: classes` (with `softmax`) for multiclass data"
                    };
                    return Err(LabelError {
                        at: data.place(k),
                        message: format!(
                            "a third distinct label `{}` (seen: {}, {}): `y: labels` is for two classes",
                            fmt(y),
                            fmt(distinct[0]),
                            fmt(distinct[1])
                        ) + hint,
                    });
                }
            }
        }
        // Classes keep their first-seen order, as LIBLINEAR numbers them (so a saved model's
        // `label` line and its weight columns match LIBLINEAR's); two labels are sorted.
        if kind != LabelKind::Classes {
            distinct.sort_by(f64::total_cmp);
        }
        let originals = match kind {
            LabelKind::Real => vec![],
            LabelKind::Classes => distinct,
            LabelKind::Labels => match distinct.as_slice() {
                [a, b] => vec![*a, *b],
                [v] if *v > 0.0 => vec![-1.0, *v],
                [v] => vec![*v, 1.0],
                _ => vec![-1.0, 1.0],
            },
        };
        Ok(LabelMap { kind, originals })
    }

    /// One-vs-rest's classes (docs/algorithms.md §11): when a two-class loss (`kind` is `labels`)
    /// meets data with more than two whole-number labels, a map of kind `classes` (the labels in
    /// first-seen order, LIBLINEAR's numbering, so a saved model's `label` line and its weight
    /// columns are the ones `liblinear-train` writes); None for two labels or fewer, and for
    /// fractional labels, which are regression targets that [`LabelMap::fit`] diagnoses.
    pub fn one_vs_rest(kind: LabelKind, data: &super::Dataset) -> Option<LabelMap> {
        if kind != LabelKind::Labels {
            return None;
        }
        // Binary data, the common case, costs one pass with two labels to compare against.
        let mut distinct: Vec<f64> = vec![];
        let third = data.labels.iter().any(|&y| {
            if !distinct.contains(&y) {
                distinct.push(y);
            }
            distinct.len() > 2
        });
        if !third || data.labels.iter().any(|y| y.fract() != 0.0) {
            return None;
        }
        LabelMap::fit(LabelKind::Classes, data).ok()
    }

    /// The value a loss reads for a raw label, or None if the label is unknown to the map.
    pub fn map(&self, raw: f64) -> Option<f64> {
        match self.kind {
            LabelKind::Real => Some(raw),
            LabelKind::Labels => {
                if raw == self.originals[1] {
                    Some(1.0)
                } else if raw == self.originals[0] {
                    Some(-1.0)
                } else {
                    None
                }
            }
            LabelKind::Classes => self.originals.iter().position(|&c| c == raw).map(|k| k as f64),
        }
    }

    /// Maps every label of a data set (train or test).
    pub fn apply(&self, data: &super::Dataset) -> Result<Vec<f64>, LabelError> {
        data.labels
            .iter()
            .enumerate()
            .map(|(k, &y)| {
                self.map(y).ok_or_else(|| LabelError {
                    at: data.place(k),
                    message: format!(
                        "label `{}` was not in the training data (labels there: {})",
                        fmt(y),
                        self.originals.iter().map(|v| fmt(*v)).collect::<Vec<_>>().join(", ")
                    ),
                })
            })
            .collect()
    }

    /// Whether the mapping changed the labels (for telling the user).
    pub fn describe(&self) -> Option<String> {
        match (self.kind, self.originals.as_slice()) {
            (LabelKind::Labels, [a, b]) if !(*a == -1.0 && *b == 1.0) => {
                Some(format!("labels {} → −1 and {} → +1", fmt(*a), fmt(*b)))
            }
            _ => None,
        }
    }
}

/// One-vs-rest problem `class`: +1 on the rows of that class, −1 on the rest, from labels
/// mapped to 0..k (by a map from [`LabelMap::one_vs_rest`]).
pub fn one_vs_rest_labels(mapped: &[f64], class: usize) -> Vec<f64> {
    mapped.iter().map(|&y| if y == class as f64 { 1.0 } else { -1.0 }).collect()
}

/// A label as LIBLINEAR prints it (`%g`-like: integers without a decimal point).
pub fn fmt(v: f64) -> String {
    crate::symbolic::fmt_num(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(labels: &[f64]) -> super::super::Dataset {
        let text: String = labels.iter().map(|y| format!("{y} 1:1\n")).collect();
        super::super::read_libsvm_from(text.as_bytes(), "t").expect("reads")
    }

    /// LIBLINEAR numbers classes by first appearance: 3, 2, 1 here, not sorted.
    #[test]
    fn one_vs_rest_keeps_first_seen_order() {
        let d = data(&[3.0, 2.0, 3.0, 1.0, 2.0]);
        let map = LabelMap::one_vs_rest(LabelKind::Labels, &d).expect("three labels");
        assert_eq!(map.originals, vec![3.0, 2.0, 1.0]);
        let mapped = map.apply(&d).expect("maps");
        assert_eq!(one_vs_rest_labels(&mapped, 1), vec![-1.0, 1.0, -1.0, -1.0, 1.0]);
    }

    #[test]
    fn two_labels_or_real_targets_are_not_one_vs_rest() {
        assert_eq!(LabelMap::one_vs_rest(LabelKind::Labels, &data(&[1.0, -1.0, 1.0])), None);
        assert_eq!(LabelMap::one_vs_rest(LabelKind::Labels, &data(&[0.5, 1.5, 2.25])), None);
        assert_eq!(LabelMap::one_vs_rest(LabelKind::Classes, &data(&[1.0, 2.0, 3.0])), None);
        assert_eq!(LabelMap::one_vs_rest(LabelKind::Real, &data(&[1.0, 2.0, 3.0])), None);
    }
}
