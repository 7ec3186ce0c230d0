//! The front half of the pipeline in one call: text → AST → Model → (the files it loads) →
//! Structure → Plan. The command line, the tests and (later) the REPL all come through here.

mod files;
#[cfg(test)]
mod tests;

pub use files::reads_files;

use crate::analysis::{analyse, FileFacts, Structure};
use crate::check::{self, Model};
use crate::diagnostics::{did_you_mean, Problem};
use crate::plan::lower::{lower, LowerOptions};
use crate::plan::Plan;
use crate::source::SourceFile;
use crate::stdlib::Library;
use crate::syntax;

#[derive(Clone, Debug, Default)]
pub struct CompileOptions {
    /// `--set NAME=VALUE`, names as the user typed them (ASCII aliases allowed).
    pub overrides: Vec<(String, f64)>,
    /// `--solver NAME`: the same as `solve with NAME`.
    pub solver: Option<String>,
    /// Options for `solver` that no user wrote: the streamed default is `adagrad` with
    /// `rda = 1` (docs/algorithms.md §9). Given with a solver, they replace the model's own.
    pub solver_options: Vec<(String, f64)>,
    /// Off for the eager reference plan.
    pub eager: bool,
    /// `--epochs N` from the command line: a budget of passes the default choice heeds
    /// (docs/algorithms.md §9: one or two passes are SMM's).
    pub epochs: Option<usize>,
    /// The directory `load("...")` paths are relative to: the model file's. The files are read
    /// and checked before analysis, which takes facts from them (disjoint groups get a
    /// closed-form prox). None reads no file: then nothing is assumed of them (a model compiled
    /// from its text alone, as the fuzzers do).
    pub files: Option<std::path::PathBuf>,
}

#[derive(Debug)]
pub enum CompileError {
    /// Problems in the model text (exit 1).
    Model(Vec<Problem>),
    /// A command-line value that does not fit the model (exit 2).
    Usage(String),
}

#[derive(Clone, Debug)]
pub struct Compiled {
    pub model: Model,
    pub structure: Structure,
    /// The facts of the files the model loads, read once: [`with_solver`] analyses the model
    /// again from them.
    pub files: FileFacts,
}

/// A model file compiled, whichever kind of model it holds: what `optc run` hands to the run
/// that takes it.
#[derive(Debug)]
pub enum AnyModel {
    Loss(Box<Compiled>),
    Dictionary(Box<CompiledDictionary>),
}

/// The model in `file`, parsed once and compiled as the kind it is.
pub fn compile(file: &SourceFile, lib: &Library, opts: &CompileOptions) -> Result<AnyModel, CompileError> {
    let program = syntax::parse(file).map_err(|p| CompileError::Model(vec![p]))?;
    Ok(match check::is_dictionary(&program) {
        true => AnyModel::Dictionary(Box::new(dictionary_of(&program, opts)?)),
        false => AnyModel::Loss(Box::new(front_end_of(&program, lib, opts)?)),
    })
}

/// A dictionary-learning model, checked and analysed: what `optc check` describes.
#[derive(Debug)]
pub struct CompiledDictionary {
    pub model: check::Dictionary,
    pub choice: crate::analysis::dictionary::DictionaryChoice,
    pub files: FileFacts,
}

/// The dictionary-learning model `program` (Mairal 2013 §4.3), checked and analysed.
fn dictionary_of(program: &syntax::ast::Program, opts: &CompileOptions) -> Result<CompiledDictionary, CompileError> {
    let lib = Library::standard();
    let overrides = resolve_overrides(program, opts)?;
    let model = check::check_dictionary(program, &lib, &overrides).map_err(CompileError::Model)?;
    let files = match &opts.files {
        Some(dir) => files::terms_facts(&model.penalties, dir).map_err(CompileError::Model)?,
        None => FileFacts::default(),
    };
    let choice = crate::analysis::dictionary::choose(&model).map_err(CompileError::Model)?;
    Ok(CompiledDictionary { model, choice, files })
}

/// `--set` names resolved against the parameters the program declares.
fn resolve_overrides(
    program: &syntax::ast::Program,
    opts: &CompileOptions,
) -> Result<Vec<(String, f64)>, CompileError> {
    let declared = check::declared_params(program);
    let mut overrides = vec![];
    for (name, value) in &opts.overrides {
        match check::resolve_param(&declared, name) {
            Some(p) => overrides.push((p.clone(), *value)),
            None => return Err(unknown_param("--set", name, &declared)),
        }
    }
    Ok(overrides)
}

/// `flag name` names no parameter of a model that declares `declared`: said with the closest
/// name, or the ones there are.
fn unknown_param(flag: &str, name: &str, declared: &[String]) -> CompileError {
    let hint = match check::suggest_param(name, declared) {
        Some(s) => format!("; did you mean `{s}`?"),
        None if declared.is_empty() => "; the model declares no parameters".into(),
        None => format!("; the model declares {}", declared.join(", ")),
    };
    CompileError::Usage(format!("{flag} {name}: the model has no parameter `{name}`{hint}"))
}

/// Ok when the model in `file` declares the parameter `name` (or its ASCII alias), else the
/// usage error that names `flag`, the option that gave it (`--param`).
pub fn declares_param(file: &SourceFile, name: &str, flag: &str) -> Result<(), CompileError> {
    let program = syntax::parse(file).map_err(|p| CompileError::Model(vec![p]))?;
    let declared = check::declared_params(&program);
    match check::resolve_param(&declared, name) {
        Some(_) => Ok(()),
        None => Err(unknown_param(flag, name, &declared)),
    }
}

/// Parses, checks and analyses a model (reading the files it loads when `opts.files` says where).
pub fn front_end(file: &SourceFile, lib: &Library, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    let program = syntax::parse(file).map_err(|p| CompileError::Model(vec![p]))?;
    front_end_of(&program, lib, opts)
}

/// The loss model `program`, checked and analysed.
fn front_end_of(
    program: &syntax::ast::Program,
    lib: &Library,
    opts: &CompileOptions,
) -> Result<Compiled, CompileError> {
    let overrides = resolve_overrides(program, opts)?;
    let mut model = check::check(program, lib, &overrides).map_err(CompileError::Model)?;
    request_solver(&mut model, opts)?;
    let files = match &opts.files {
        Some(dir) => files::facts(&model, dir).map_err(CompileError::Model)?,
        None => FileFacts::default(),
    };
    let structure = analyse(&model, &files, opts.epochs).map_err(CompileError::Model)?;
    Ok(Compiled { model, structure, files })
}

/// `c` analysed again as `opts` asks (another solver, its options), from the same checked model
/// and the facts of its files: no text parsed and no file read again.
pub fn with_solver(c: &Compiled, opts: &CompileOptions) -> Result<Compiled, CompileError> {
    let mut model = c.model.clone();
    request_solver(&mut model, opts)?;
    let structure = analyse(&model, &c.files, opts.epochs).map_err(CompileError::Model)?;
    Ok(Compiled { model, structure, files: c.files.clone() })
}

/// `--solver` (with the options no user wrote) put in place of the model's `solve with`.
fn request_solver(model: &mut Model, opts: &CompileOptions) -> Result<(), CompileError> {
    if let Some(s) = &opts.solver {
        let solvers = crate::solvers::names();
        if !solvers.contains(&s.as_str()) {
            let hint =
                did_you_mean(s, solvers.iter().copied()).map(|x| format!("; did you mean `{x}`?")).unwrap_or_default();
            return Err(CompileError::Usage(format!(
                "--solver {s}: unknown solver (solvers are {}){hint}",
                solvers.join(", ")
            )));
        }
        let (span, mut options) = match model.solver.take() {
            Some(req) if req.name == *s => (req.span, req.options),
            Some(req) => (req.span, vec![]),
            None => (model.objective_span, vec![]),
        };
        if !opts.solver_options.is_empty() {
            options = opts
                .solver_options
                .iter()
                .map(|(name, v)| check::SolverOption {
                    name: name.clone(),
                    value: crate::symbolic::c(*v),
                    text: crate::symbolic::fmt_num(*v),
                    span,
                })
                .collect();
        }
        model.solver = Some(check::SolverRequest { name: s.clone(), options, span });
    }
    Ok(())
}

/// Settles a default the analysis left to the data's shape ([`crate::analysis::ShapeRule`]),
/// once the data is bound with `size` = (features, rows, non-zeros), `mean_row_norm_sq` giving its mean ‖xᵢ‖² (a
/// pass over the data, made only where a strong ridge could decide); whether the solver changed
/// (then the plan and the run settings are to be made again).
pub fn shape(c: &mut Compiled, size: (usize, usize, usize), mean_row_norm_sq: impl FnOnce() -> f64) -> bool {
    let (Some(rule), Some(chosen)) = (&c.structure.by_shape, &c.structure.chosen) else { return false };
    let choice = rule.choose(size, mean_row_norm_sq, chosen);
    let changed = choice.solver != chosen.solver;
    c.structure.chosen = Some(choice);
    changed
}

/// Lowers an analysed model to its update plan.
pub fn plan(c: &Compiled, opts: &CompileOptions) -> Result<Plan, CompileError> {
    lower(&c.model, &c.structure, LowerOptions { lazy: !opts.eager }).map_err(|p| CompileError::Model(vec![p]))
}
