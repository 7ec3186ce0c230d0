//! `--weights FILE` and `--class-weight LABEL=W`: the rows' weights read and attached to the
//! training data, for a model that weights its loss; refused, with the way to say it, for one
//! that does not.

use super::inputs::{data_failure, readable};
use super::Failure;
use crate::check::Model;
use crate::data::{class_weights_of, display_name, open_text, read_weights, DataFacts, Dataset, RowWeights};
use std::path::{Path, PathBuf};

/// The flags, as `optc run` and `optc path` take them.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct WeightArgs {
    /// The rows' weights: one number ≥ 0 a line, one line a row (LIBLINEAR's weight files),
    /// for a model that weights its loss (`data ..., s: weights` and `E[s·loss(...)]`).
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Multiply the weights of the rows labelled LABEL by W (LIBLINEAR's -wi for two classes; with
    /// one-vs-rest each row keeps its class's weight in every problem, as scikit-learn's); may be
    /// repeated.
    #[arg(long = "class-weight", value_name = "LABEL=W")]
    pub class_weight: Vec<String>,
}

impl WeightArgs {
    /// Whether any weight was given.
    pub fn given(&self) -> bool {
        self.weights.is_some() || !self.class_weight.is_empty()
    }
}

/// The weights `args` give a streamed run of `rows` rows (the first pass counted them) whose
/// raw labels are `labels`, read now and applied block by block; `facts`' curvature bound is
/// raised to the largest weight's (max ωᵢ‖xᵢ‖² ≤ max ω · max ‖xᵢ‖², a safe step for every row).
pub(super) fn streamed(
    args: &WeightArgs,
    model: &Model,
    rows: usize,
    labels: &[f64],
    facts: &mut DataFacts,
) -> Result<Option<RowWeights>, Failure> {
    if !args.given() {
        return Ok(None);
    }
    refuse_unweighted(args, model)?;
    let file = args.weights.as_deref().map(|path| read_file(path, rows)).transpose()?;
    let classes = class_weights_of(&args.class_weight, labels).map_err(|e| Failure::Input(e.to_string()))?;
    let weights = RowWeights { file, classes };
    let most = weights.max();
    facts.max_row_norm_sq = facts.max_row_norm_sq.map(|n| n * most);
    facts.mean_weight = most;
    facts.max_weight = most;
    Ok(Some(weights))
}

/// The usage error for weights given to a model whose loss does not read them.
fn refuse_unweighted(args: &WeightArgs, model: &Model) -> Result<(), Failure> {
    if model.loss.weighted {
        return Ok(());
    }
    let flag = if args.weights.is_some() { "--weights" } else { "--class-weight" };
    Err(Failure::Usage(format!(
        "{flag}: the model's loss is not weighted\n  hint: declare the weights, `data {}: sparse, {}: labels, s: weights`, and write `E[s·{}(...)]`",
        model.features.name, model.label.name, model.loss.def.name
    )))
}

/// Attaches the weights `args` give to `train` (before any split, so that line k of the file
/// is row k). Nothing when none are given: a weighted model then has every weight 1.
pub(super) fn attach(args: &WeightArgs, model: &Model, train: &mut Dataset) -> Result<(), Failure> {
    if !args.given() {
        return Ok(());
    }
    refuse_unweighted(args, model)?;
    if let Some(path) = &args.weights {
        train.weights = Some(read_file(path, train.rows())?);
    }
    train.apply_class_weights(&args.class_weight).map_err(|e| Failure::Input(e.to_string()))
}

/// The weight file `path`, for data of `rows` rows.
fn read_file(path: &Path, rows: usize) -> Result<Vec<f64>, Failure> {
    readable("weights file", path)?;
    let reader = open_text(path, false).map_err(data_failure)?;
    read_weights(reader, &display_name(path), rows).map_err(data_failure)
}
