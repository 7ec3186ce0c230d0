//! The command line (docs/cli.md): `check`, `plan`, `run`, `predict`, `path`, `repl`. Exit codes: 0 success,
//! 1 the model or the data is wrong, 2 bad usage, 3 the solver diverged.

mod args;
mod cv;
mod dictionary;
mod init;
mod inputs;
mod outputs;
mod ovr;
pub(crate) mod path;
mod predict;
pub(crate) mod repl;
mod run;
mod saved;
pub(crate) mod session;
mod stream;
mod together;
pub(crate) mod weights;
mod wording;

use crate::diagnostics::render_terminal;
use crate::pipeline::{self, CompileError, CompileOptions, Compiled};
use crate::source::SourceFile;
use crate::stdlib::Library;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};

#[derive(Parser, Debug)]
#[command(name = "optc", version, about = "A modeling language and solver compiler for regularized loss minimization")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Parse and typecheck a model; print the structure optc recognised.
    Check {
        /// The model file (.opt).
        model: PathBuf,
    },
    /// Print the update plan the compiler will run (with DATA: bound to that data).
    Plan {
        /// The model file (.opt).
        model: PathBuf,
        /// Data to bind data-dependent parameters (η₀) to.
        data: Option<PathBuf>,
        #[command(flatten)]
        options: session::ModelOptions,
        /// Also print the code the JIT generates: `clif` (Cranelift IR) or `asm` (machine code).
        #[arg(long, value_parser = ["clif", "asm"])]
        emit: Option<String>,
    },
    /// Compile the model and solve it on DATA.
    Run(args::RunArgs),
    /// Score data with a saved model (optc's or LIBLINEAR's).
    Predict(predict::PredictArgs),
    /// Solve along a log-spaced grid of one parameter, each point warm-started from the last.
    Path(path::PathArgs),
    /// Cross-validate along warm-started paths: held-out loss per value, λ_min and λ_1se, and
    /// the model refitted on all of the data at the chosen one.
    Cv(cv::CvArgs),
    /// Print a shell completion script: `optc completions bash > ~/.local/share/bash-completion/completions/optc`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Interactive exploration: edit the model a line at a time, solve again on data read once.
    Repl {
        /// A model file (.opt) to start from.
        model: Option<PathBuf>,
        /// Training data to read at the start.
        data: Option<PathBuf>,
        #[command(flatten)]
        options: session::DataOptions,
    },
}

/// Why a command failed; each maps to an exit code.
pub(crate) enum Failure {
    /// Already printed (a diagnostic); exit 1.
    Reported,
    /// The model or the data is wrong: exit 1.
    Input(String),
    /// Bad usage: exit 2.
    Usage(String),
    /// The solver diverged: exit 3.
    Diverged(String),
    /// Ctrl-C stopped the run, whose report and files are written: exit 130, as a shell
    /// reports a process SIGINT ended.
    Interrupted,
    /// Said by another process (rank 0 under mpirun, for a failure every rank shares): this
    /// exit code, nothing printed.
    Said(u8),
}

impl Failure {
    /// The exit code.
    fn code(&self) -> u8 {
        match self {
            Failure::Reported | Failure::Input(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Diverged(_) => 3,
            Failure::Interrupted => 130,
            Failure::Said(code) => *code,
        }
    }

    /// Prints the message, if there is one still to print; the exit code.
    pub(crate) fn say(self) -> i32 {
        if let Failure::Input(m) | Failure::Usage(m) | Failure::Diverged(m) = &self {
            eprintln!("error: {m}");
        }
        i32::from(self.code())
    }

    /// The same failure once said (by this rank, or by another one): its exit code alone.
    pub(crate) fn said(self) -> Failure {
        Failure::Said(self.code())
    }
}

/// An unknown option that names a parameter of the model on the command line (`run m.opt d.svm
/// --lambda 0.1`): clap's error with its tip ("to pass '--lambda' as a value…") replaced by the
/// way to set it, `--set λ=0.1`, and the parameters the model declares. None for any other
/// error, or when no model file on the line can be read.
fn parameter_tip(e: &clap::Error, args: &[String]) -> Option<String> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    if e.kind() != ErrorKind::UnknownArgument {
        return None;
    }
    let Some(ContextValue::String(flag)) = e.get(ContextKind::InvalidArg) else { return None };
    let name = flag.strip_prefix("--")?.split('=').next()?;
    let model = args.iter().skip(1).find(|a| a.ends_with(".opt"))?;
    let file = crate::source::SourceFile::new(model.clone(), std::fs::read_to_string(model).ok()?);
    let declared = crate::check::declared_params(&crate::syntax::parse(&file).ok()?);
    let param = crate::check::resolve_param(&declared, name)?;
    let joined = format!("--{name}=");
    let value = match args.iter().find_map(|a| a.strip_prefix(&joined)) {
        Some(v) => v.to_string(),
        None => args.iter().skip_while(|a| *a != flag).nth(1).cloned().unwrap_or_else(|| "VALUE".into()),
    };
    let tip = format!(
        "  tip: a parameter is set with --set: `--set {param}={value}` (the model declares {})",
        declared.join(", ")
    );
    // clap's tip for an unknown argument is one line; ours takes its place.
    let rendered = e.render().to_string();
    let lines = rendered.lines().map(|l| if l.trim_start().starts_with("tip: to pass") { tip.as_str() } else { l });
    Some(lines.map(|l| format!("{l}\n")).collect())
}

/// The process's interrupt flag, set by the signal handler [`install_signals`] installs.
static INTERRUPT: std::sync::OnceLock<crate::exec::cancel::Cancel> = std::sync::OnceLock::new();
/// A solve is listening to [`INTERRUPT`] (see [`interrupt`]).
static ARMED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Installs the handler of SIGINT, SIGTERM and SIGHUP for the whole process. While a solve
/// listens ([`interrupt`]), the first signal sets the interrupt flag: the run stops after its
/// epoch, reports and writes its files. Otherwise, and at a second signal, the process removes
/// its temporary files (a cache or an output half written) and ends at once with exit 130.
fn install_signals() {
    let flag = INTERRUPT.get_or_init(crate::exec::cancel::Cancel::default).clone();
    // Without a handler (another one is installed) a signal ends the process as it would.
    let _ = ctrlc::set_handler(move || {
        if ARMED.load(std::sync::atomic::Ordering::SeqCst) && !flag.is_cancelled() {
            flag.cancel();
            return;
        }
        crate::temporary::remove_all();
        std::process::exit(130);
    });
}

/// The process's interrupt flag, for a solve to stop on: from now on the first Ctrl-C (or
/// SIGTERM) sets it instead of ending the process.
pub(crate) fn interrupt() -> crate::exec::cancel::Cancel {
    ARMED.store(true, std::sync::atomic::Ordering::SeqCst);
    INTERRUPT.get_or_init(crate::exec::cancel::Cancel::default).clone()
}

/// Err(Interrupted) when a run ended on Ctrl-C, after everything else is done.
fn unless_interrupted(status: crate::exec::driver::Status) -> Result<(), Failure> {
    match status {
        crate::exec::driver::Status::Interrupted => Err(Failure::Interrupted),
        _ => Ok(()),
    }
}

impl From<crate::session::Error> for Failure {
    fn from(e: crate::session::Error) -> Failure {
        use crate::session::Error;
        match e {
            // Printed as the CLI prints diagnostics: the library renders them as plain text.
            Error::Model(m) => Failure::Input(m.message),
            Error::Input(m) => Failure::Input(m),
            Error::Usage(m) => Failure::Usage(m),
            Error::Diverged(m) => Failure::Diverged(m),
        }
    }
}

pub fn main() -> i32 {
    install_signals();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            match parameter_tip(&e, &std::env::args().collect::<Vec<_>>()) {
                Some(message) => eprint!("{message}"),
                None => _ = e.print(),
            }
            return code;
        }
    };
    // Under mpirun only `optc run` splits its work; another command would run whole on every
    // process, each printing and writing the same files.
    let processes = crate::exec::collective::launcher_size();
    let result = match cli.command {
        Command::Path(_) | Command::Cv(_) | Command::Repl { .. } | Command::Predict(_) if processes > 1 => {
            Err(Failure::Usage(format!(
                "under mpirun ({processes} processes) only `optc run` splits its work; run this command as one process"
            )))
        }
        Command::Check { model } => check(&model),
        Command::Plan { model, data, options, emit } => {
            plan(&model, data.as_deref(), options.eager, &options.set, options.solver, emit.as_deref())
        }
        Command::Run(args) => run(&args),
        Command::Predict(args) => predict::predict(&args),
        Command::Path(args) => path::path(&args),
        Command::Cv(args) => cv::cv(&args),
        Command::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "optc", &mut std::io::stdout());
            Ok(())
        }
        Command::Repl { model, data, options } => repl::repl(model.as_deref(), data.as_deref(), options),
    };
    match result {
        Ok(()) => 0,
        Err(f) => f.say(),
    }
}

/// `optc run`: the flags checked once, the model read and compiled once (on every rank alike,
/// under `mpirun`), then handed to the run that takes it: a dictionary model's, a streamed or
/// ranked run, or the in-memory run.
fn run(args: &args::RunArgs) -> Result<(), Failure> {
    use together::{same_everywhere, together};
    // Under `mpirun` (the `mpi` feature), several ranks solve one problem, each with its share
    // of the rows: streamed, or held in memory; the streamed run's code serves both.
    let ranks = crate::exec::collective::launched();
    let started = crate::exec::collective::launcher_size();
    if ranks.size() < started {
        return Err(Failure::Usage(format!(
            "mpirun started {started} processes, but this optc was built without MPI: each would solve the whole problem alone\n  hint: build it with `cargo build --release --features mpi`, or run it as one process"
        )));
    }
    let ranks = ranks.as_ref();
    let compile_start = std::time::Instant::now();
    let request = together(ranks, args.check())?;
    // Each rank reads the model itself (its file may differ, or be missing, on another node).
    let file = together(ranks, read_model(&args.model))?;
    together(ranks, same_everywhere(ranks, args, &file.text))?;
    // One model text and one set of options compile alike everywhere: rank 0's diagnostics.
    if ranks.rank() > 0 {
        ANOTHER_RANK_SPEAKS.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let compiled = pipeline::compile(&file, &Library::standard(), &request.options);
    match together(ranks, compiled.map_err(|e| report_compile_error(e, &file)))? {
        pipeline::AnyModel::Dictionary(d) => dictionary::run(&request, *d, ranks.size(), compile_start),
        pipeline::AnyModel::Loss(c) if args.stream || ranks.size() > 1 => {
            stream::run(&request, &file, *c, ranks, compile_start)
        }
        pipeline::AnyModel::Loss(c) => run::run(&request, &file, *c, compile_start),
    }
}

pub(crate) fn read_model(path: &Path) -> Result<SourceFile, Failure> {
    let bytes = std::fs::read(path)
        .map_err(|e| Failure::Input(format!("cannot read model {}: {}", path.display(), crate::data::io_reason(&e))))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = 1 + e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count();
        Failure::Input(format!("{}:{line}: the model is not UTF-8 text (byte {at})", path.display()))
    })?;
    // Editors on Windows start UTF-8 files with a byte-order mark; it is not part of the model.
    let text = text.strip_prefix('\u{feff}').map(str::to_string).unwrap_or(text);
    Ok(SourceFile::new(path.display().to_string(), text))
}

/// `--set NAME=VALUE` → (NAME, value); the value may be an expression like `1/2`.
pub(crate) fn parse_sets(sets: &[String]) -> Result<Vec<(String, f64)>, Failure> {
    let mut out = vec![];
    for s in sets {
        let Some((name, value)) = s.split_once('=') else {
            return Err(Failure::Usage(format!("--set {s}: expected NAME=VALUE, e.g. --set lambda=1e-3")));
        };
        let file = SourceFile::new("--set", value.trim());
        let v = crate::syntax::parse_expr(&file)
            .ok()
            .and_then(|e| crate::stdlib::to_sym(&e).ok())
            .and_then(|e| crate::symbolic::simplify(&e).as_const())
            .filter(|v| !v.is_nan())
            .ok_or_else(|| Failure::Usage(format!("--set {s}: `{}` is not a number", value.trim())))?;
        out.push((name.trim().to_string(), v));
    }
    Ok(out)
}

pub(crate) fn compile(file: &SourceFile, opts: &CompileOptions) -> Result<Compiled, Failure> {
    let lib = Library::standard();
    pipeline::front_end(file, &lib, opts).map_err(|e| report_compile_error(e, file))
}

pub(crate) fn report_compile_error(e: CompileError, file: &SourceFile) -> Failure {
    match e {
        CompileError::Usage(m) => Failure::Usage(m),
        // Ranks that run one model text compile it alike: rank 0 shows the diagnostics.
        CompileError::Model(_) if ANOTHER_RANK_SPEAKS.load(std::sync::atomic::Ordering::Relaxed) => Failure::Said(1),
        CompileError::Model(problems) => {
            eprint!("{}", render_terminal(&problems, file));
            Failure::Reported
        }
    }
}

/// Set on ranks other than 0 once every rank is known to run the same model text and options
/// (`together::same_everywhere`): their compile diagnostics would be rank 0's, N times over.
pub(crate) static ANOTHER_RANK_SPEAKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// The directory a model's `load("...")` paths are relative to.
pub(crate) fn model_dir(model: &Path) -> PathBuf {
    model.parent().unwrap_or(Path::new(".")).to_path_buf()
}

fn check(path: &Path) -> Result<(), Failure> {
    let file = read_model(path)?;
    let opts = CompileOptions { files: Some(model_dir(path)), ..Default::default() };
    let compiled = pipeline::compile(&file, &Library::standard(), &opts);
    let c = match compiled.map_err(|e| report_compile_error(e, &file))? {
        pipeline::AnyModel::Dictionary(d) => {
            print!("{}", crate::analysis::dictionary::report(&d.model, &d.choice, &file.name, &d.files));
            return Ok(());
        }
        pipeline::AnyModel::Loss(c) => c,
    };
    print!("{}", crate::analysis::report(&c.model, &c.structure, &file.name));
    if c.model.label_kind == crate::stdlib::LabelKind::Labels {
        println!("classes     on data with more than two labels: one-vs-rest, one model per label (LIBLINEAR's convention), saved as k weight columns");
    }
    Ok(())
}

fn plan(
    path: &Path,
    data: Option<&Path>,
    eager: bool,
    set: &[String],
    solver: Option<String>,
    emit: Option<&str>,
) -> Result<(), Failure> {
    let file = read_model(path)?;
    let opts = CompileOptions {
        overrides: parse_sets(set)?,
        solver,
        eager,
        epochs: None,
        files: Some(model_dir(path)),
        ..CompileOptions::default()
    };
    let compiled = pipeline::compile(&file, &Library::standard(), &opts);
    let data = data.map(|d| inputs::load_data(d, "data file", false, &Default::default())).transpose()?.map(|d| d.0);
    let plan = match compiled.map_err(|e| report_compile_error(e, &file))? {
        pipeline::AnyModel::Dictionary(d) => crate::plan::lower::dictionary::lower(&d.model, &d.choice),
        pipeline::AnyModel::Loss(mut c) => {
            // The plan `optc run` makes on this data: a default its shape settles, settled.
            if let Some(d) = &data {
                pipeline::shape(&mut c, (d.features(), d.rows(), d.nnz()), || d.mean_row_norm_sq());
            }
            pipeline::plan(&c, &opts).map_err(|e| report_compile_error(e, &file))?
        }
    };
    let mut first_check = None;
    let facts = match data {
        Some(data) => {
            if crate::exec::certificate::refinement::first_check_solves(&plan, data.features()) {
                let costs = crate::exec::linalg::newton_costs(data.csr().0, data.features());
                first_check = Some(wording::first_check(plan.info.solver, data.features(), &costs));
            }
            Some(data.facts_for(&plan, data.features()))
        }
        None => None,
    };
    print!("{}", crate::plan::dump::dump(&plan, facts.as_ref()));
    print!("{}", crate::plan::dump::refinement(&plan).unwrap_or_default());
    if let Some(line) = first_check {
        println!("first   {line}");
    }
    if let Some(emit) = emit {
        // Without data, data-dependent parameters are bound as if max‖xᵢ‖² = 1.
        let bound = facts.unwrap_or(crate::data::DataFacts {
            rows: 1,
            features: 0,
            classes: 0,
            op_rows: 0,
            nnz: 0,
            max_row_norm_sq: Some(1.0),
            mean_weight: 1.0,
            max_weight: 1.0,
            gram_norm: Some(1.0),
        });
        match crate::exec::jit::compile_with(
            &plan,
            &crate::exec::bound_scalars(&plan, &bound),
            if emit == "asm" { crate::exec::jit::Emit::Asm } else { crate::exec::jit::Emit::Clif },
        ) {
            Ok(k) => {
                if facts.is_none() {
                    println!("\n; parameters bound with max‖xᵢ‖² = 1 (no DATA given)");
                }
                print!("\n{}", if emit == "asm" { k.asm.unwrap_or_default() } else { k.clif });
            }
            Err(e) => println!("\n; no Cranelift IR: {e}; `optc run` uses the interpreter for this plan"),
        }
    }
    Ok(())
}
