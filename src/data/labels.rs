//! Raw labels → what a loss reads. LANGUAGE.md: `labels` are ±1 (0/1 mapped to −1/+1);
//! optc extends that to any two values (the smaller → −1), as LIBSVM's sets use 1/2.
//! `classes` map k distinct labels to 0..k in ascending order; `real` is the identity.

use crate::stdlib::LabelKind;

#[derive(Clone, Debug, PartialEq)]
pub struct LabelMap {
    pub kind: LabelKind,
    /// The raw label of each mapped value: [negative, positive] for labels, class order for
    /// classes, empty for real.
    pub originals: Vec<f64>,
}

#[derive(Debug, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct LabelError {
    pub file: String,
    pub line: u32,
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
                        file: data.name.clone(),
                        line: data.lines[k],
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
                    file: data.name.clone(),
                    line: data.lines[k],
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

/// A label as LIBLINEAR prints it (`%g`-like: integers without a decimal point).
pub fn fmt(v: f64) -> String {
    crate::symbolic::fmt_num(v)
}
