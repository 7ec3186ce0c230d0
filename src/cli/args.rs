//! The flags of `optc run`, which the in-memory, streamed, one-vs-rest and dictionary runs
//! all read.

use super::session::SolveOptions;
use super::{model_dir, parse_sets, Failure};
use crate::pipeline::CompileOptions;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The model file (.opt).
    pub model: PathBuf,
    /// Training data, LIBSVM/svmlight text (plain, .gz, .bz2, .xz or .zst); `-` for stdin.
    pub data: PathBuf,
    #[command(flatten)]
    pub solve: SolveOptions,
    #[command(flatten)]
    pub weights: super::weights::WeightArgs,
    /// Hold out this fraction of the rows (seeded) and stop when their loss has not improved
    /// for --patience epochs, returning the best epoch's weights.
    #[arg(long, value_name = "FRACTION")]
    pub holdout: Option<f64>,
    /// Epochs without a better held-out loss before --holdout stops the run.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub patience: usize,
    /// Start from the weights of a saved model (optc's or LIBLINEAR's) instead of 0.
    #[arg(long, value_name = "SAVED_MODEL")]
    pub init: Option<PathBuf>,
    /// Write the weights in LIBLINEAR's model format (`-` for stdout).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Write the objective after every epoch as CSV (`-` for stdout); with --test, the test
    /// error (or MSE) and loss too.
    #[arg(long, value_name = "FILE.csv")]
    pub trace: Option<PathBuf>,
    /// Draw the trace as an SVG figure (`-` for stdout): suboptimality against epochs and
    /// seconds, and the test error with --test.
    #[arg(long, value_name = "FILE.svg")]
    pub plot: Option<PathBuf>,
    /// Print the report as JSON on stdout (human output goes to stderr).
    #[arg(long)]
    pub json: bool,
    /// No progress bar and no summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// Make passes over DATA without loading it: memory is the weights plus a few blocks of
    /// rows (stochastic solvers, rows in file order).
    #[arg(long)]
    pub stream: bool,
    /// Rows per block with --stream (default 16384).
    #[arg(long, value_name = "N", requires = "stream")]
    pub block_rows: Option<usize>,
}

impl RunArgs {
    /// A note for the user: on stdout, or on stderr when stdout carries `--json`; nothing
    /// with `--quiet`.
    pub(super) fn say(&self, s: String) {
        if self.quiet {
            return;
        }
        if self.json {
            eprintln!("{s}");
        } else {
            println!("{s}");
        }
    }
}

/// `optc run`'s flags, checked once: the values every run reads are in range, and what they ask
/// of the compiler is parsed. The runs read the flags through it (it dereferences to them).
pub struct RunRequest<'a> {
    pub args: &'a RunArgs,
    /// What the flags ask of the compiler, in memory and streamed alike.
    pub options: CompileOptions,
}

impl std::ops::Deref for RunRequest<'_> {
    type Target = RunArgs;
    fn deref(&self) -> &RunArgs {
        self.args
    }
}

impl RunArgs {
    /// The flags checked: `--set` parsed, `--holdout` a fraction, `--patience` at least 1. The
    /// flags a kind of run cannot take are that run's to refuse.
    pub(super) fn check(&self) -> Result<RunRequest<'_>, Failure> {
        if let Some(f) = self.holdout {
            if !(f > 0.0 && f < 1.0) {
                return Err(Failure::Usage(format!(
                    "--holdout {f}: give the fraction of rows to hold out, between 0 and 1"
                )));
            }
        }
        if self.patience == 0 {
            return Err(Failure::Usage("--patience must be at least 1".into()));
        }
        let options = CompileOptions {
            overrides: parse_sets(&self.solve.model.set)?,
            solver: self.solve.model.solver.clone(),
            eager: self.solve.model.eager,
            epochs: self.solve.epochs,
            files: Some(model_dir(&self.model)),
            ..CompileOptions::default()
        };
        Ok(RunRequest { args: self, options })
    }
}
