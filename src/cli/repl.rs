//! `optc repl [MODEL] [DATA]`: edit a model a line at a time and solve it again and again on
//! data read once. On a terminal it is a line editor (history, tab completion); otherwise it
//! reads lines from standard input and prints plain text, so a session can be a script.
//!
//! A line starting with `:` is a command; any other line is a statement that edits the model.
//! A wrong line prints its diagnostic and the session goes on; a script whose lines all worked
//! exits 0, one with a failed line exits 1.

mod commands;
mod complete;
mod model_text;

use super::inputs::load_data;
use super::outputs::{commit_output, prepare_output};
use super::path::PathOptions;
use super::saved::saved_text;
use super::session::{self, Bound, DataOptions};
use super::{compile, model_dir, parse_sets, read_model, report_compile_error, Failure};
use crate::data::{Dataset, LabelMap};
use crate::exec::driver::RunSettings;
use crate::exec::evaluate::{evaluate, Evaluation};
use crate::pipeline::{self, CompileOptions, Compiled};
use crate::plan::Plan;
use crate::session::saved::saved_model;
use crate::source::SourceFile;
use crate::stdlib::LabelKind;
use crate::symbolic::fmt_num;
use commands::{Command, RunOpts};
use model_text::ModelText;
use std::io::{BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// The last solution, with what is needed to show it, save it and start the next run from it.
struct Solution {
    compiled: Compiled,
    plan: Plan,
    bound: Bound,
    w: Vec<f64>,
    /// b, with `var b: scalar` (None without).
    intercept: Option<f64>,
    eval: Evaluation,
    gap: Option<f64>,
    status: String,
    epochs: usize,
    /// The model's shape and the data it was solved on: a run with the same starts warm.
    shape: String,
    data_generation: u64,
}

struct Repl {
    model: ModelText,
    train: Option<Dataset>,
    /// Counts `:data` loads, so a solution on older data is not taken as a warm start.
    data_generation: u64,
    test: Option<Dataset>,
    last: Option<Solution>,
    /// Progress bars and colour: only on a terminal.
    terminal: bool,
    /// `--threads` and `--cache` of `optc repl`, for every file it reads.
    reading: DataOptions,
}

/// What a line asks of the loop.
enum Next {
    Continue,
    Quit,
}

pub(super) fn repl(model: Option<&Path>, data: Option<&Path>, reading: DataOptions) -> Result<(), Failure> {
    // Ctrl-C stops a solve, not the session (at the prompt the line editor reads it as a key).
    super::interrupt();
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
    let mut repl =
        Repl { model: ModelText::empty(), train: None, data_generation: 0, test: None, last: None, terminal, reading };
    let mut failed = false;
    if let Some(m) = model {
        failed |= repl.command(Command::Load(m.to_path_buf())).is_err();
    }
    if let Some(d) = data {
        failed |= repl.command(Command::Data(d.to_path_buf())).is_err();
    }
    failed |= if terminal { interactive(&mut repl) } else { scripted(&mut repl) };
    if failed && !terminal {
        Err(Failure::Reported)
    } else {
        Ok(())
    }
}

/// The fuzzers' way in (`fuzz_harness::repl`): `text`'s lines as one scripted session on
/// `train` and `test`. What would write files or read ones the fuzzer cannot name (`:load`,
/// `:data`, `:test`, `:save`, `--out`, `--plot`, `--test`, `--cache`) is skipped, and what would
/// make a line long or wide (epochs, steps, threads, shards, time) is capped: a finding is a
/// panic, not a slow input the user asked for.
#[doc(hidden)]
pub fn fuzz_session(text: &str, train: Dataset, test: Dataset) {
    let reading = DataOptions { threads: Some(1), cache: None };
    let mut repl = Repl {
        model: ModelText::empty(),
        train: Some(train),
        data_generation: 1,
        test: Some(test),
        last: None,
        terminal: false,
        reading,
    };
    for line in text.lines().take(64) {
        let trimmed = line.trim();
        if !trimmed.starts_with(':') {
            let _ = repl.line(line);
            continue;
        }
        let Ok(command) = commands::parse(trimmed) else { continue };
        let tamed = match command {
            Command::Load(_) | Command::Data(_) | Command::Test(_) | Command::Save(_) | Command::Quit => continue,
            Command::Run(mut o) => {
                let s = &mut o.solve;
                s.epochs = Some(s.epochs.unwrap_or(50).min(200));
                s.time_limit = Some(s.time_limit.unwrap_or(1.0).clamp(0.0, 1.0));
                s.shards = s.shards.map(|k| k.min(4));
                s.test = None;
                s.data = DataOptions { threads: Some(1), cache: None };
                Command::Run(o)
            }
            Command::Path(mut o) => {
                o.steps = o.steps.min(6);
                o.epochs = Some(o.epochs.unwrap_or(50).min(200));
                (o.out, o.plot, o.test) = (None, None, None);
                o.data = DataOptions { threads: Some(1), cache: None };
                Command::Path(o)
            }
            other => other,
        };
        let _ = repl.command(tamed);
    }
}

/// Lines from standard input, no prompt; returns whether some line failed.
fn scripted(repl: &mut Repl) -> bool {
    let mut failed = false;
    let mut input = std::io::stdin().lock();
    let mut buf = vec![];
    let mut number = 0;
    loop {
        buf.clear();
        match input.read_until(b'\n', &mut buf) {
            Ok(0) => return failed,
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: cannot read standard input: {e}");
                return true;
            }
        }
        number += 1;
        let Ok(line) = std::str::from_utf8(&buf) else {
            eprintln!("error: line {number} of the input is not UTF-8 text");
            failed = true;
            continue;
        };
        match repl.line(line.trim_end_matches(['\n', '\r'])) {
            Ok(Next::Quit) => return failed,
            Ok(Next::Continue) => {}
            Err(f) => {
                print_failure(f);
                failed = true;
            }
        }
        let _ = std::io::stdout().flush();
    }
}

/// The line editor. A failed line is not the session's failure here (the user saw it and went
/// on), so this returns false unless the editor could not start and plain lines were read.
fn interactive(repl: &mut Repl) -> bool {
    let config =
        rustyline::Config::builder().auto_add_history(true).completion_type(rustyline::CompletionType::List).build();
    let mut editor: rustyline::Editor<complete::ReplHelper, rustyline::history::FileHistory> =
        match rustyline::Editor::with_config(config) {
            Ok(e) => e,
            Err(e) => {
                eprintln!("note: no line editing ({e}); reading plain lines");
                return scripted(repl);
            }
        };
    let mut helper = complete::ReplHelper::new();
    helper.model_names = repl.model.names();
    editor.set_helper(Some(helper));
    let history = history_file();
    if let Some(h) = &history {
        // No history yet, or an unreadable one: the session works without it.
        let _ = editor.load_history(h);
    }
    println!("optc repl: a line edits the model (`param λ = 1e-3`, `minimize ...`); :help lists the commands");
    loop {
        match editor.readline("optc> ") {
            Ok(line) => {
                let next = repl.line(&line);
                if let Some(h) = editor.helper_mut() {
                    h.model_names = repl.model.names();
                }
                match next {
                    Ok(Next::Quit) => break,
                    Ok(Next::Continue) => {}
                    Err(f) => print_failure(f),
                }
            }
            // Ctrl-C drops the line being typed, as in a shell.
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => {
                eprintln!("error: {e}");
                break;
            }
        }
    }
    if let Some(h) = &history {
        if let Some(dir) = h.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        let _ = editor.save_history(h);
    }
    false
}

/// `$XDG_DATA_HOME/optc/history`, else `~/.local/share/optc/history` (the XDG default).
fn history_file() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty() && Path::new(d).is_absolute())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").filter(|h| !h.is_empty()).map(|h| PathBuf::from(h).join(".local/share"))
        })?;
    Some(data.join("optc").join("history"))
}

fn print_failure(f: Failure) {
    match f {
        Failure::Reported | Failure::Interrupted | Failure::Said(_) => {}
        Failure::Input(m) | Failure::Usage(m) | Failure::Diverged(m) => eprintln!("error: {m}"),
    }
}

impl Repl {
    fn line(&mut self, line: &str) -> Result<Next, Failure> {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            return Ok(Next::Continue);
        }
        if trimmed.starts_with(':') {
            let command = commands::parse(trimmed).map_err(Failure::Usage)?;
            if command == Command::Quit {
                return Ok(Next::Quit);
            }
            self.command(command)?;
        } else {
            self.edit(line)?;
        }
        Ok(Next::Continue)
    }

    fn command(&mut self, command: Command) -> Result<(), Failure> {
        match command {
            Command::Load(path) => self.load(&path),
            Command::Data(path) => {
                let (d, seconds, note) = load_data(&path, "data file", self.terminal, &self.reading)?;
                if let Some(n) = note {
                    println!("note: {n}");
                }
                println!(
                    "data: {} — {} rows × {} features, {} non-zeros (read in {seconds:.2} s)",
                    d.name,
                    d.rows(),
                    d.features(),
                    d.nnz()
                );
                self.train = Some(d);
                self.data_generation += 1;
                Ok(())
            }
            Command::Test(path) => {
                let (d, _, _) = load_data(&path, "test file", self.terminal, &self.reading)?;
                println!("test data: {} — {} rows × {} features", d.name, d.rows(), d.features());
                self.test = Some(d);
                Ok(())
            }
            Command::Check => {
                let file = self.model_source()?;
                let c = compile(&file, &self.options(&RunOpts::default())?)?;
                print!("{}", crate::analysis::report(&c.model, &c.structure, &file.name));
                Ok(())
            }
            Command::Plan => {
                let file = self.model_source()?;
                let opts = self.options(&RunOpts::default())?;
                let c = compile(&file, &opts)?;
                let plan = pipeline::plan(&c, &opts).map_err(|e| report_compile_error(e, &file))?;
                let facts = self.train.as_ref().map(|d| d.facts_for(&plan, d.features()));
                print!("{}", crate::plan::dump::dump(&plan, facts.as_ref()));
                print!("{}", crate::plan::dump::refinement(&plan).unwrap_or_default());
                Ok(())
            }
            Command::Run(opts) => self.run(&opts),
            Command::Show(k) => self.show(k),
            Command::Path(opts) => self.path(&opts),
            Command::Save(path) => self.save(&path),
            Command::Model => {
                if self.model.is_empty() {
                    println!("no model yet: :load MODEL, or type its statements");
                } else {
                    print!("{}", self.model.listing());
                }
                Ok(())
            }
            Command::Help => {
                print!("{}", commands::help());
                Ok(())
            }
            Command::Quit => Ok(()),
        }
    }

    fn load(&mut self, path: &Path) -> Result<(), Failure> {
        let file = read_model(path)?;
        let model = ModelText::from_file(file.clone(), model_dir(path)).map_err(|p| {
            eprint!("{}", crate::diagnostics::render_terminal(&[p], &file));
            Failure::Reported
        })?;
        self.model = model;
        println!("model: {}", file.name);
        // A model that does not check is still loaded: the next lines can fix it.
        compile(&file, &self.options(&RunOpts::default())?).map(|_| ())
    }

    /// Applies a statement to the model. While the model checks, an edit that breaks it is
    /// refused (the model is unchanged); a model still being written accepts any statement that
    /// parses.
    fn edit(&mut self, line: &str) -> Result<(), Failure> {
        let input = SourceFile::new("<input>", line);
        let (edited, edits) = self.model.edited(&input).map_err(|p| {
            eprint!("{}", crate::diagnostics::render_terminal(&[p], &input));
            Failure::Reported
        })?;
        if edits.is_empty() {
            return Ok(());
        }
        if edited.has_objective() {
            let opts = CompileOptions { files: Some(self.model.dir.clone()), ..Default::default() };
            let works = |m: &ModelText| {
                crate::pipeline::front_end(&m.source(), &crate::stdlib::Library::standard(), &opts).is_ok()
            };
            if let Err(f) = compile(&edited.source(), &opts) {
                if self.model.has_objective() && works(&self.model) {
                    eprintln!("the line was not applied: the model is unchanged");
                    return Err(f);
                }
                self.model = edited;
                return Err(f);
            }
        }
        self.model = edited;
        for e in edits {
            println!("{e}");
        }
        Ok(())
    }

    fn model_source(&self) -> Result<SourceFile, Failure> {
        if !self.model.has_objective() {
            return Err(Failure::Usage(if self.model.is_empty() {
                "no model yet: :load MODEL, or type its statements (`data ...`, `var ...`, `minimize ...`)".into()
            } else {
                "the model has no objective yet: type `minimize ...`".into()
            }));
        }
        Ok(self.model.source())
    }

    fn options(&self, opts: &RunOpts) -> Result<CompileOptions, Failure> {
        Ok(CompileOptions {
            overrides: parse_sets(&opts.solve.model.set)?,
            solver: opts.solve.model.solver.clone(),
            eager: opts.solve.model.eager,
            epochs: opts.solve.epochs,
            files: Some(self.model.dir.clone()),
            ..CompileOptions::default()
        })
    }

    /// `optc path` on the current model and the loaded data (and `:test`'s, unless --test).
    fn path(&self, opts: &PathOptions) -> Result<(), Failure> {
        let file = self.model_source()?;
        let Some(train) = &self.train else {
            return Err(Failure::Usage("no data: :data FILE first".into()));
        };
        let outputs = super::path::Outputs::prepare(opts)?;
        let test = match &opts.test {
            Some(p) => Some(load_data(p, "test file", self.terminal, &opts.data.or(&self.reading))?.0),
            None => None,
        };
        super::path::trace_path(&file, &self.model.dir, train, test.as_ref().or(self.test.as_ref()), opts, outputs)
    }

    fn run(&mut self, opts: &RunOpts) -> Result<(), Failure> {
        let file = self.model_source()?;
        let Some(train) = &self.train else {
            return Err(Failure::Usage("no data: :data FILE first".into()));
        };
        let copts = self.options(opts)?;
        let compiled = compile(&file, &copts)?;
        let mut plan = pipeline::plan(&compiled, &copts).map_err(|e| report_compile_error(e, &file))?;
        let settings = run_settings(&compiled, opts, self.terminal)?;
        let shape =
            format!("{}solver {:?}\neager {}\n", self.model.shape(), opts.solve.model.solver, opts.solve.model.eager);
        super::ovr::refuse(":run", &train.name, LabelMap::one_vs_rest(compiled.model.label_kind, train))?;
        let bound = Bound::new(&compiled, &plan, train, &self.model.dir)?;
        let view = bound.view(train, self.reading.threads());
        if let Some(m) = bound.label_map.describe() {
            println!("note: {m}");
        }
        let warm = match &self.last {
            None => None,
            Some(l) if l.data_generation != self.data_generation => {
                println!("cold start: the data changed since the last solution");
                None
            }
            Some(l) if l.shape != shape => {
                println!("cold start: the model changed, not only its parameters");
                None
            }
            Some(l) => {
                println!("warm start from the previous solution");
                Some((l.w.as_slice(), l.intercept.unwrap_or(0.0)))
            }
        };
        let solved =
            match session::solve(&mut plan, &bound, &view, Default::default(), &settings, !opts.solve.no_jit, warm) {
                Ok(s) => s,
                Err(e) => return Err(e.failure(train, plan.info.solver, None, None).into()),
            };
        if let Some(why) = &solved.fallback {
            println!("note: {why}");
        }
        let outcome = solved.outcome;
        let ev = outcome.eval.clone();
        let w = outcome.state.weights(&plan).to_vec();
        let intercept = plan.objective.intercept.map(|_| outcome.state.intercept(&plan));
        println!(
            "{} on {}: {} rows × {} features, {} backend",
            plan.info.solver,
            train.name,
            train.rows(),
            bound.features,
            solved.backend
        );
        match settings.shards {
            1 => println!("  epochs       {}", outcome.epochs),
            k => println!("  epochs       {} (each in {k} shards on {k} threads, averaged)", outcome.epochs),
        }
        print!("{}", facts(&ev, outcome.gap, outcome.status.name(), &outcome.rule, w.len(), &plan));
        if let Some(b) = intercept {
            println!("  intercept    b = {}", super::wording::sig6(b));
        }
        if let Some(e) = ev.error {
            println!("  train error  {:.2}%", 100.0 * e);
        }
        if let Some(e) = ev.mse {
            println!("  train mse    {e:.6}");
        }
        let test = match &opts.solve.test {
            Some(p) => Some(load_data(p, "test file", self.terminal, &opts.solve.data.or(&self.reading))?.0),
            None => None,
        };
        if let Some(t) = test.as_ref().or(self.test.as_ref()) {
            let ty = bound.labels_of(t)?;
            let te = evaluate(&plan, &outcome.state, &bound.test_view(t, &ty));
            match (te.error, te.mse) {
                (Some(e), _) => println!("  test error   {:.2}%  (test loss {:.6})", 100.0 * e, te.loss),
                (_, Some(m)) => println!("  test mse     {m:.6}  (test loss {:.6})", te.loss),
                _ => {}
            }
        }
        println!("  time         {:.3} s", outcome.seconds);
        self.last = Some(Solution {
            compiled,
            plan,
            bound,
            w,
            intercept,
            eval: ev,
            gap: outcome.gap,
            status: format!("{}: {}", outcome.status.name(), outcome.rule),
            epochs: outcome.epochs,
            shape,
            data_generation: self.data_generation,
        });
        Ok(())
    }

    fn show(&self, k: usize) -> Result<(), Failure> {
        let Some(s) = &self.last else {
            return Err(Failure::Usage("no solution yet: :run first".into()));
        };
        println!("  epochs       {}", s.epochs);
        let (status, rule) = s.status.split_once(": ").unwrap_or((&s.status, ""));
        print!("{}", facts(&s.eval, s.gap, status, rule, s.w.len(), &s.plan));
        let classes = s.bound.classes.max(1);
        let mut order: Vec<usize> = (0..s.w.len()).filter(|&i| s.w[i] != 0.0).collect();
        order.sort_by(|&a, &b| s.w[b].abs().total_cmp(&s.w[a].abs()).then(a.cmp(&b)));
        let shown = order.len().min(k);
        println!("  largest      {shown} of {} non-zero weights by |w|", order.len());
        for &i in &order[..shown] {
            let (feature, class) = (i / classes + 1, i % classes);
            let label = match s.compiled.model.label_kind {
                LabelKind::Classes => {
                    format!(
                        ", class {}",
                        s.bound.label_map.originals.get(class).map_or(String::from("?"), |c| fmt_num(*c))
                    )
                }
                _ => String::new(),
            };
            println!("    feature {feature}{label}  {:+.6}", s.w[i]);
        }
        Ok(())
    }

    fn save(&self, path: &Path) -> Result<(), Failure> {
        let Some(s) = &self.last else {
            return Err(Failure::Usage("nothing to save: :run first".into()));
        };
        let out = prepare_output(Some(&path.to_path_buf()))?;
        let saved = saved_model(&s.compiled.model, &s.bound.label_map, s.bound.features, &s.w, s.intercept);
        commit_output(out, || saved_text(saved, ":save", false))?;
        if path != Path::new("-") {
            println!("saved {}", path.display());
        }
        Ok(())
    }
}

/// The objective, gap, status and nnz lines of a solution.
fn facts(ev: &Evaluation, gap: Option<f64>, status: &str, rule: &str, weights: usize, plan: &Plan) -> String {
    let mut s = format!("  objective    F = {:.6}  (mean loss {:.6})\n", ev.objective, ev.loss);
    match gap {
        Some(g) => s += &format!("  gap          {g:.2e}  (relative {:.2e}, certified)\n", g / ev.objective.abs()),
        None => s += &format!("  gap          none: {}\n", plan.uncertified.reason()),
    }
    s += &format!("  status       {status}: {rule}\n");
    s += &format!("  nnz          {} of {weights} weights\n", ev.nnz);
    s
}

/// The stopping rules of a run, as `optc run` derives them from the model and the options.
fn run_settings(compiled: &Compiled, opts: &RunOpts, terminal: bool) -> Result<RunSettings, Failure> {
    let stop = opts.solve.stopping();
    let (_, settings) = session::run_settings(compiled, &stop)?;
    // Ctrl-C during a solve ends that solve (status `interrupted`); the session goes on.
    let cancel = super::interrupt();
    cancel.reset();
    Ok(RunSettings { progress: terminal, cancel, ..settings })
}
