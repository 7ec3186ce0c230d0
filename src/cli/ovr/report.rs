//! The report of a one-vs-rest run: a line per class (F, gap, status, epochs) and the run as a
//! whole — its status the worst class's, its gap the largest relative one, F the mean — with the
//! error of the combined argmax predictor. `--json` carries the same in a `classes` array.

use super::{labels_text, worst, Class};
use crate::analysis::Settings;
use crate::exec::driver::{RunSettings, Status};
use crate::pipeline::Compiled;
use crate::source::SourceFile;
use crate::symbolic::fmt_num;
use std::path::Path;

/// What the report reads.
pub(in crate::cli) struct Summary<'a> {
    pub file: &'a SourceFile,
    pub compiled: &'a Compiled,
    pub settings: &'a Settings,
    pub run_settings: &'a RunSettings,
    /// The training data: its name, rows and non-zeros (over every rank's share).
    pub data: (&'a str, usize, usize),
    pub parse_seconds: f64,
    /// The front end's seconds plus every class's JIT compile.
    pub compile_seconds: f64,
    pub features: usize,
    /// What the plans' parameters were bound from (the same data for every class).
    pub facts: crate::data::DataFacts,
    pub classes: &'a [Class],
    pub train_error: f64,
    pub test_error: Option<f64>,
    /// Wall seconds from the first problem's start to the last one's end.
    pub wall: f64,
    pub spread: Spread,
    /// Why the run took another solver than the model's own (on ranks: the one that splits).
    pub solver_note: Option<&'a str>,
    pub init: Option<&'a Path>,
}

/// How the k problems shared the work.
pub(in crate::cli) enum Spread {
    /// In one process: problems at once, threads for each problem's passes.
    Threads(usize, usize),
    /// On ranks holding their rows, one problem after another: the processes, and the bytes
    /// rank 0 sent in reductions.
    Processes(usize, u64),
}

impl Summary<'_> {
    fn mean_objective(&self) -> f64 {
        crate::session::ovr::mean(self.classes, |e| e.objective)
    }

    /// The largest relative gap and its class; None when some class has no certificate.
    fn largest_gap(&self) -> Option<(f64, &Class)> {
        let mut largest: Option<(f64, &Class)> = None;
        for c in self.classes {
            let g = c.relative_gap()?;
            if largest.is_none_or(|(l, _)| g > l) {
                largest = Some((g, c));
            }
        }
        largest
    }

    fn solver(&self) -> &'static str {
        self.classes.first().map_or("", |c| c.plan.info.solver.name())
    }
}

pub(in crate::cli) fn json(s: &Summary) -> serde_json::Value {
    let classes: Vec<serde_json::Value> = s
        .classes
        .iter()
        .map(|c| {
            let o = &c.solved.outcome;
            serde_json::json!({
                "label": c.label,
                "objective": o.eval.objective,
                "loss": o.eval.loss,
                "gap": o.gap,
                "relative_gap": c.relative_gap(),
                "status": o.status.name(),
                "stopped_by": o.rule,
                "epochs": o.epochs,
                "seconds": o.seconds,
                "nnz": o.eval.nnz,
                "intercept": c.intercept,
                "step": crate::cli::wording::StepShown::of(&c.plan, s.settings, &s.facts).shown.json(),
            })
        })
        .collect();
    let largest = s.largest_gap();
    let mut json = serde_json::json!({
        "model": s.file.name,
        "data": s.data.0,
        "one_vs_rest": true,
        "solver": s.solver(),
        "solver_reason": s.compiled.structure.chosen.as_ref().map(|c| c.reason.clone()),
        "solver_note": s.solver_note,
        "lazy": s.classes.first().map(|c| c.plan.info.lazy),
        "backend": s.classes.first().map(|c| c.solved.backend),
        "compile_seconds": s.compile_seconds,
        "objective": s.mean_objective(),
        "gap": if largest.is_some() {
            s.classes.iter().filter_map(|c| c.solved.outcome.gap).reduce(f64::max)
        } else {
            None
        },
        "relative_gap": largest.map(|(g, _)| g),
        "status": worst(s.classes).name(),
        "classes": classes,
        "features": s.features,
        "rows": s.data.1,
        "data_nnz": s.data.2,
        "epochs": s.classes.iter().map(|c| c.solved.outcome.epochs).max(),
        "tol": s.run_settings.tol,
        "seed": s.settings.seed,
        "shards": s.run_settings.shards,
        "init": s.init.map(|p| p.display().to_string()),
        "train_error": s.train_error,
        "test_error": s.test_error,
        "seconds": s.wall,
        "parse_seconds": s.parse_seconds,
    });
    let spread = match s.spread {
        Spread::Threads(at_once, per) => serde_json::json!({ "problems_at_once": at_once, "threads_per_problem": per }),
        Spread::Processes(n, bytes) => serde_json::json!({
            "problems_at_once": 1,
            "stream": { "processes": n, "in_memory": true, "bytes_communicated": bytes },
        }),
    };
    if let (Some(o), serde_json::Value::Object(more)) = (json.as_object_mut(), spread) {
        o.extend(more);
    }
    json
}

pub(in crate::cli) fn human(s: &Summary) -> String {
    let k = s.classes.len();
    let labels: Vec<f64> = s.classes.iter().map(|c| c.label).collect();
    let mut o = format!(
        "optc: {} on {} — {} rows × {} features, {} non-zeros (read in {:.2} s)\n",
        s.solver(),
        s.data.0,
        s.data.1,
        s.features,
        s.data.2,
        s.parse_seconds
    );
    let spread = match s.spread {
        Spread::Threads(at_once, per) => {
            format!("{at_once} at a time, {per} thread{} each", if per == 1 { "" } else { "s" })
        }
        Spread::Processes(n, _) => format!("one after another, each on all {n} processes"),
    };
    o += &format!(
        "  one-vs-rest  {k} classes, labels {} in first-seen order (LIBLINEAR's): problem c is +1 on class c, −1 on the rest; {spread}\n",
        labels_text(&labels),
    );
    let width = labels.iter().map(|l| fmt_num(*l).chars().count()).max().unwrap_or(1).max(6);
    for c in s.classes {
        let out = &c.solved.outcome;
        let gap = match c.relative_gap() {
            Some(g) => format!("gap {g:.1e} rel"),
            None => "no gap".into(),
        };
        let b = c.intercept.map_or(String::new(), |b| format!("  b = {}", fmt_num(b)));
        o += &format!(
            "  class {:<width$} F = {:.6}  {gap}  {}, {} epoch{}, {:.3} s{b}\n",
            fmt_num(c.label),
            out.eval.objective,
            out.status.name(),
            out.epochs,
            if out.epochs == 1 { "" } else { "s" },
            out.seconds
        );
    }
    o += &format!("  objective    mean F = {:.6} over the {k} classes\n", s.mean_objective());
    match s.largest_gap() {
        Some((g, c)) => {
            o += &format!(
                "  gap          largest relative {g:.2e} (class {}): F − F* ≤ gap for every class, certified\n",
                fmt_num(c.label)
            )
        }
        None => {
            let why = s.classes.first().map_or("", |c| c.plan.uncertified.reason());
            o += &format!("  gap          none: {why}\n");
        }
    }
    let status = worst(s.classes);
    if status == Status::Converged {
        o += "  status       converged: every class\n";
    } else {
        let short: Vec<f64> =
            s.classes.iter().filter(|c| c.solved.outcome.status != Status::Converged).map(|c| c.label).collect();
        o += &format!("  status       {}: class{} {}\n", status.name(), plural(short.len()), labels_text(&short));
    }
    o += &format!(
        "  train error  {:.2}%  (argmax of the {k} decision values, LIBLINEAR's rule)\n",
        100.0 * s.train_error
    );
    if let Some(e) = s.test_error {
        o += &format!("  test error   {:.2}%\n", 100.0 * e);
    }
    o += &format!("  time         {:.3} s to solve the {k} problems\n", s.wall);
    match (s.solver_note, &s.compiled.structure.chosen) {
        (Some(note), _) => o += &format!("  solver       {} — {note}\n", s.solver()),
        (None, Some(c)) => o += &format!("  solver       {} — {}\n", c.solver.name(), c.reason),
        (None, None) => {}
    }
    let backend = s.classes.first().map_or("", |c| c.solved.backend);
    o += &format!("  backend      {backend} (model text → kernels in {:.1} ms)", 1e3 * s.compile_seconds);
    if let Spread::Processes(n, bytes) = s.spread {
        o += &format!("\n  processes    {n}, each holding its own shard; rank 0 sent {bytes} bytes in reductions");
    }
    o
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "es"
    }
}
