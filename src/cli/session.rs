//! The options of a solve as the command line gives them (`run`, `path` and the REPL's `:run`
//! share them), over the library's session layer ([`crate::session`]).

pub(crate) use crate::session::bind::Bound;
pub(crate) use crate::session::solve::{run_settings, solve, Stopping, Unsolved};
use std::path::PathBuf;

/// The options of one solve, shared by `optc run` and the REPL's `:run`.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub(crate) struct SolveOptions {
    /// Held-out data: report its error and loss.
    #[arg(long)]
    pub test: Option<PathBuf>,
    #[command(flatten)]
    pub model: ModelOptions,
    /// Exactly N epochs (batch solvers: iterations), unless --tol is also given; then a cap.
    #[arg(long)]
    pub epochs: Option<usize>,
    /// Stop when the certified relative duality gap is at most T (default 1e-4).
    #[arg(long, value_name = "T")]
    pub tol: Option<f64>,
    /// Stop after the epoch during which this many seconds passed.
    #[arg(long, value_name = "SECONDS")]
    pub time_limit: Option<f64>,
    /// Seed of the row order and of the η₀ calibration sample (default 1).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stochastic epochs (fobos, adagrad) on K threads: each epoch's rows are cut into K
    /// shards, run from the same state, and the K flushed states averaged (iterative parameter
    /// mixing). The same numbers for the same K and seed on any machine (default 1: no shards).
    #[arg(long, value_name = "K")]
    pub shards: Option<usize>,
    /// Run the reference interpreter.
    #[arg(long)]
    pub no_jit: bool,
    #[command(flatten)]
    pub data: DataOptions,
}

/// What changes the model a command compiles, declared once for `run`, `path`, `plan` and the
/// REPL's `:run`.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub(crate) struct ModelOptions {
    /// Override a parameter (repeatable): --set lambda=1e-3
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Force a solver (same as `solve with NAME`).
    #[arg(long, value_parser = SolverName)]
    pub solver: Option<String>,
    /// Run the eager reference plan (prox on every coordinate each step).
    #[arg(long)]
    pub eager: bool,
}

impl ModelOptions {
    /// The compiler's options these flags ask for, with each point's epoch cap and the
    /// directory of the model's `load` files (`optc path`, `optc cv`).
    pub fn compile_options(
        &self,
        epochs: Option<usize>,
        dir: &std::path::Path,
    ) -> Result<crate::pipeline::CompileOptions, super::Failure> {
        Ok(crate::pipeline::CompileOptions {
            overrides: super::parse_sets(&self.set)?,
            solver: self.solver.clone(),
            eager: self.eager,
            epochs,
            files: Some(dir.to_path_buf()),
            ..Default::default()
        })
    }
}

/// How data files are read (`--threads`, `--cache`), shared by `run`, `path` and the REPL.
#[derive(clap::Args, Debug, Default, Clone, PartialEq)]
pub(crate) struct DataOptions {
    /// Threads to use (default: the cores available). Reading the data: N parser threads and
    /// one that reads and decompresses; --threads 1 reads line by line on one thread. Solving:
    /// the passes over all rows at a check (F, the margins, the certificate's Xᵀu).
    #[arg(long, value_name = "N", value_parser = parse_threads)]
    pub threads: Option<usize>,
    /// Keep the parsed data in a binary cache, memory-mapped by the next run instead of parsing
    /// the text: FILE.optc-cache next to the data (or in ~/.cache/optc when that directory is
    /// not writable), or in DIR with --cache=DIR. Rebuilt when the data file changes.
    #[arg(long, value_name = "DIR", num_args = 0..=1, require_equals = true)]
    pub cache: Option<Option<PathBuf>>,
}

fn parse_threads(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("`{s}`: give a whole number of threads, at least 1")),
    }
}

impl DataOptions {
    /// The thread count: the flag's, else the cores available. Reading uses it now; whatever
    /// else parallelises a run (gradient passes) should read it from here too.
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or_else(crate::data::available_threads)
    }

    /// Where `--cache` puts caches, or None without it.
    pub fn cache_dir(&self) -> Option<crate::data::cache::CacheDir> {
        use crate::data::cache::CacheDir;
        self.cache.as_ref().map(|d| d.as_ref().map_or(CacheDir::Beside, |d| CacheDir::In(d.clone())))
    }

    /// These options, with `fallback`'s where these give none (a `:run` flag over the REPL's).
    pub fn or(&self, fallback: &DataOptions) -> DataOptions {
        DataOptions {
            threads: self.threads.or(fallback.threads),
            cache: self.cache.clone().or_else(|| fallback.cache.clone()),
        }
    }
}

impl SolveOptions {
    pub fn stopping(&self) -> Stopping {
        Stopping {
            epochs: self.epochs,
            tol: self.tol,
            time_limit: self.time_limit,
            seed: self.seed,
            shards: self.shards,
        }
    }
}

/// `--solver`'s value: any text (the compiler names a wrong one and the nearest), with the
/// registry's names as its possible values, which shell completions offer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SolverName;

impl clap::builder::TypedValueParser for SolverName {
    type Value = String;

    fn parse_ref(
        &self,
        _cmd: &clap::Command,
        _arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<String, clap::Error> {
        Ok(value.to_string_lossy().into_owned())
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(crate::solvers::names().into_iter().map(clap::builder::PossibleValue::new)))
    }
}
