//! A solved model as a saved file: LIBLINEAR's format with optc's extensions (a bias, class
//! offsets).

use crate::data::LabelMap;
use crate::model_file::SavedModel;
use crate::stdlib::LabelKind;

/// Per-class intercepts as LIBLINEAR's bias row: `bias 1`, the k offsets the last row (their
/// difference when two classes are saved as one column), which LIBLINEAR's predict adds to
/// each class's decision value as optc's does.
pub(crate) fn with_class_bias(mut saved: SavedModel, b: Option<&[f64]>) -> SavedModel {
    if let Some(b) = b {
        match b {
            [first, second] if saved.nr_class == 2 => saved.w.push(first - second),
            _ => saved.w.extend_from_slice(b),
        }
        saved.bias = 1.0;
    }
    saved
}

/// The value of LIBLINEAR's bias feature that makes its model this one: with `μ·l2sq(b)` beside
/// `λ·l2sq(w)`, b = t·β where β is penalised as a weight, t = √(λ/μ), which is LIBLINEAR's
/// `-B t` (`-B 1` when μ = λ); 1 for a free intercept, or with no ½‖w‖² to match.
pub(crate) fn bias_feature(model: &crate::check::Model) -> f64 {
    let lambda: f64 = model.regs.iter().filter(|r| r.def.name == "l2sq").map(|r| r.coef.value).sum();
    match &model.intercept_l2 {
        Some(r) if lambda > 0.0 && r.coef > 0.0 => (lambda / r.coef).sqrt(),
        _ => 1.0,
    }
}

/// The weights as a LIBLINEAR model file; an intercept b is LIBLINEAR's bias feature of value 1,
/// its weight (b) the last row, so LIBLINEAR's `predict` adds it as optc's does.
pub(crate) fn saved_model(
    model: &crate::check::Model,
    labels: &LabelMap,
    features: usize,
    w: &[f64],
    intercept: Option<f64>,
) -> SavedModel {
    let has_l1 = has_l1(model);
    let mut w = w.to_vec();
    let (solver_type, nr_class, label_line) = match (model.label_kind, model.loss.def.name.as_str()) {
        (LabelKind::Real, _) => ("L2R_L2LOSS_SVR", 2, vec![]),
        // K weight columns in `label` order; LIBLINEAR's predict takes the largest decision
        // value, which for softmax is the most probable class.
        (LabelKind::Classes, _) => {
            if labels.originals.len() == 2 {
                // LIBLINEAR reads one column when `nr_class` is 2 (decision > 0 → the first
                // label), so two softmax columns become their difference: the same argmax,
                // and sigmoid of it is the softmax probability, as LIBLINEAR's `-b 1` computes.
                w = w.chunks_exact(2).map(|row| row[0] - row[1]).collect();
            }
            (if has_l1 { "L1R_LR" } else { "L2R_LR" }, labels.originals.len(), labels.originals.clone())
        }
        _ => (binary_solver_type(model), 2, vec![labels.originals[1], labels.originals[0]]),
    };
    // The checker allows an intercept on a vector model only: one weight column.
    let bias = match intercept {
        Some(b) => {
            let t = bias_feature(model);
            w.push(b / t);
            t
        }
        None => -1.0,
    };
    SavedModel { solver_type: solver_type.into(), nr_class, labels: label_line, nr_feature: features, bias, w }
}

pub(crate) fn has_l1(model: &crate::check::Model) -> bool {
    model.regs.iter().any(|r| matches!(r.def.name.as_str(), "l1" | "elastic" | "l1l2" | "l1inf"))
}

/// LIBLINEAR's name for a two-class model of this loss and regularizer (one-vs-rest's k columns
/// are k of them).
pub(crate) fn binary_solver_type(model: &crate::check::Model) -> &'static str {
    match (model.loss.def.name.as_str(), has_l1(model)) {
        ("logistic", true) => "L1R_LR",
        ("logistic", false) => "L2R_LR",
        ("hinge", false) => "L2R_L1LOSS_SVC_DUAL",
        (_, true) => "L1R_L2LOSS_SVC",
        (_, false) => "L2R_L2LOSS_SVC",
    }
}
