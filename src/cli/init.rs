//! `--init SAVED_MODEL`: the starting weights from a model file, ours or LIBLINEAR's. The file
//! names its classes by their raw labels and orders its weight columns by its own `label`
//! line, so the columns are matched to this run's label mapping rather than taken in order.

use super::session::Bound;
use super::Failure;
use crate::model_file::SavedModel;
use crate::stdlib::LabelKind;
use std::path::Path;

/// Weights laid out as the plan's `w` (d, or d × k row-major) from `path`, and the intercept:
/// LIBLINEAR's bias B times the weight of its constant feature (0 when the file has none).
pub(crate) fn initial_weights(
    path: &Path,
    bound: &Bound,
    kind: LabelKind,
    intercept: bool,
) -> Result<(Vec<f64>, f64), Failure> {
    super::inputs::readable("--init model file", path)?;
    let saved = SavedModel::read(path).map_err(|e| Failure::Input(e.to_string()))?;
    let file = path.display();
    let wrong = |what: String| Failure::Input(format!("--init {file}: {what}"));
    let has_bias = saved.bias >= 0.0;
    if has_bias && !intercept {
        return Err(wrong(format!(
            "the model file has a bias term (bias {}) and this model has no intercept\n  hint: train it without -B, or give the model one: `var b: scalar` and `<x, w> + b`",
            saved.bias
        )));
    }
    let nr_w = saved.nr_w();
    if has_bias && nr_w != 1 {
        return Err(wrong(
            "per-class bias terms; this build fits one intercept, for binary and regression models".into(),
        ));
    }
    let b = if has_bias { saved.bias * saved.w[saved.nr_feature * nr_w] } else { 0.0 };
    let w = weights(&saved, bound, kind, &wrong)?;
    // The intercept follows the weight column's orientation (see `weights`).
    let flipped =
        kind == LabelKind::Labels && bound.label_map.originals.iter().position(|&o| o == saved.labels[0]) == Some(0);
    Ok((w, if flipped { -b } else { b }))
}

fn weights(
    saved: &SavedModel,
    bound: &Bound,
    kind: LabelKind,
    wrong: &impl Fn(String) -> Failure,
) -> Result<Vec<f64>, Failure> {
    let nr_w = saved.nr_w();
    let d = bound.features;
    // Columns of a feature this data does not have must be 0: a non-zero one would be dropped.
    for j in d..saved.nr_feature {
        if (0..nr_w).any(|c| saved.w[j * nr_w + c] != 0.0) {
            return Err(wrong(format!(
                "feature {} has a non-zero weight, but the data has {d} features\n  hint: use data with the same features as the saved model",
                j + 1
            )));
        }
    }
    let (stored, weights) = (saved.nr_feature, &saved.w);
    let column = |c: usize| (0..d).map(move |j| if j < stored { weights[j * nr_w + c] } else { 0.0 });
    let originals = &bound.label_map.originals;
    let position = |label: f64| originals.iter().position(|&o| o == label);
    match kind {
        LabelKind::Real => {
            if !saved.is_regression() {
                return Err(wrong(format!("a {} classifier cannot start a regression", saved.solver_type)));
            }
            Ok(column(0).collect())
        }
        LabelKind::Labels => {
            if nr_w != 1 || saved.labels.len() != 2 {
                return Err(wrong(format!("it has {} classes; this model is binary", saved.nr_class)));
            }
            // A positive decision value means the file's first label; ours means y = +1,
            // originals[1].
            let sign = match (position(saved.labels[0]), position(saved.labels[1])) {
                (Some(1), Some(0)) => 1.0,
                (Some(0), Some(1)) => -1.0,
                _ => return Err(labels_differ(wrong, &saved.labels, originals)),
            };
            Ok(column(0).map(|v| sign * v).collect())
        }
        LabelKind::Classes => {
            let k = originals.len();
            let mut w = vec![0.0; d * k];
            if nr_w == 1 && saved.labels.len() == 2 && k == 2 {
                // One column: the difference of the two classes' scores, for the first label.
                let first = position(saved.labels[0]).ok_or_else(|| labels_differ(wrong, &saved.labels, originals))?;
                for (j, v) in column(0).enumerate() {
                    w[j * k + first] = v;
                }
                return Ok(w);
            }
            if saved.labels.len() != k || nr_w != k {
                return Err(wrong(format!("it has {} classes; the data has {k}", saved.nr_class)));
            }
            for (c, &label) in saved.labels.iter().enumerate() {
                let ours = position(label).ok_or_else(|| labels_differ(wrong, &saved.labels, originals))?;
                for (j, v) in column(c).enumerate() {
                    w[j * k + ours] = v;
                }
            }
            Ok(w)
        }
    }
}

fn labels_differ(wrong: &impl Fn(String) -> Failure, saved: &[f64], ours: &[f64]) -> Failure {
    let text = |l: &[f64]| l.iter().map(|v| crate::symbolic::fmt_num(*v)).collect::<Vec<_>>().join(" ");
    wrong(format!("its labels ({}) are not the data's ({})", text(saved), text(ours)))
}
