//! Dictionary learning's structure (docs/algorithms.md §9): the cost is not convex (bilinear in D
//! and the codes), so no duality gap certifies it; SMM on D in mini-batches is the method, and
//! the only one of optc's that takes a structured ϕ on the atoms. Its majorizer is each
//! batch's own cost at its codes: eq. 5's proximal-gradient surrogate (Mairal 2013), one 1/L
//! step a batch, had not reached scikit-learn's one-pass held-out cost after four passes on
//! image patches, so it is kept as `smm(linearize = 1)`. Also what `optc check` prints of such
//! a model.

use std::fmt::Write;

use super::{groups_note, penalty_text, FileFacts};
use crate::check::Dictionary;
use crate::diagnostics::Problem;
use crate::solvers::SolverKind;
use crate::stdlib::ProxKind;
use crate::symbolic::fmt_num;

/// Signals a step codes and averages into the surrogate, by default (Mairal's experiment).
pub const DEFAULT_BATCH: usize = 100;
/// Passes over the data by default: "one pass gives a usable model".
pub const DEFAULT_EPOCHS: usize = 1;

/// How a dictionary model is solved.
#[derive(Clone, Debug, PartialEq)]
pub struct DictionaryChoice {
    pub batch: usize,
    pub epochs: usize,
    pub majorizer: crate::runtime::dictionary::Majorizer,
    pub reason: String,
}

/// The solver for `d`: SMM, with the batch and the passes `solve with smm(batch = …, epochs = …)`
/// sets. Another solver, or an option SMM does not take here, is a diagnostic.
pub fn choose(d: &Dictionary) -> Result<DictionaryChoice, Vec<Problem>> {
    let mut problems = vec![];
    let (mut batch, mut epochs) = (DEFAULT_BATCH, DEFAULT_EPOCHS);
    let mut majorizer = crate::runtime::dictionary::Majorizer::Variational;
    if let Some(s) = &d.solver {
        if SolverKind::from_name(&s.name) != Some(SolverKind::Smm) && s.name != crate::solvers::AUTO {
            problems.push(
                Problem::error(
                    "optc::solver",
                    format!("`{}` does not learn dictionaries", s.name),
                    s.span,
                    "not smm",
                )
                .with_help("dictionary learning is solved by `smm(batch = 100)` (Mairal 2013 §4.3); remove `solve with` or write `solve with smm`"),
            );
        }
        for o in &s.options {
            let value = o.value.as_const();
            let count = value.filter(|v| *v >= 1.0 && v.fract() == 0.0 && *v <= 1e9).map(|v| v as usize);
            match (o.name.as_str(), count) {
                ("batch", Some(n)) => batch = n,
                ("epochs", Some(n)) => epochs = n,
                ("linearize", _) if matches!(value, Some(v) if v == 0.0 || v == 1.0) => {
                    if value == Some(1.0) {
                        majorizer = crate::runtime::dictionary::Majorizer::Linearized;
                    }
                }
                ("linearize", _) => problems.push(Problem::error(
                    "optc::solver",
                    "`linearize` is 0 or 1",
                    o.span,
                    "not 0 or 1",
                )),
                ("batch" | "epochs", None) => problems.push(Problem::error(
                    "optc::solver",
                    format!("`{}` is a count of at least 1", o.name),
                    o.span,
                    "not a whole number ≥ 1",
                )),
                (other, _) => problems.push(
                    Problem::error(
                        "optc::solver",
                        format!("smm on a dictionary does not take `{other}`"),
                        o.span,
                        "unknown option",
                    )
                    .with_help("its options are `batch` (signals a step), `epochs` (passes over the data) and `linearize` (1: eq. 5's proximal-gradient surrogate)"),
                ),
            }
        }
    }
    // The prox of ϕ on an atom is the composition of its parts: ½‖·‖² scales, the ball projects
    // last; l1 and a group term, or two group terms, would need a splitting of their own.
    let shrinks: Vec<_> = d.penalties.iter().filter(|p| p.def.name != "l2sq").collect();
    if let [_, second, ..] = shrinks.as_slice() {
        problems.push(
            Problem::error(
                "optc::dictionary",
                "at most one of l1, group_l2 and group_linf may penalise the atoms",
                second.span,
                "a second one",
            )
            .with_help("their proxes do not compose; keep one (an l2sq term may stand beside it)"),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let reason = format!(
        "dictionary learning: SMM on {} averaging {}, mini-batches of {batch}, {epochs} pass{}: the cost is not convex (bilinear in {} and the codes), and SMM takes any prox-friendly penalty on the atoms where online dictionary learning takes only a constraint",
        d.var.name,
        majorizer.name(),
        if epochs == 1 { "" } else { "es" },
        d.var.name,
    );
    Ok(DictionaryChoice { batch, epochs, majorizer, reason })
}

/// What `optc check` prints of a dictionary model.
pub fn report(d: &Dictionary, choice: &DictionaryChoice, name: &str, files: &FileFacts) -> String {
    let (x, v, k) = (&d.features.name, &d.var.name, d.atoms);
    let mut o = String::new();
    let _ = writeln!(o, "model       {name}");
    let _ = writeln!(o, "data        {x}: sparse signals, one per row (the file's labels are ignored)");
    let _ = writeln!(o, "variable    {v}: mat[dim({x}), {k}] — the dictionary, {k} atoms (its columns)");
    let _ = writeln!(o);
    let weight = if d.coef.text.is_empty() { String::new() } else { format!("{}·", d.coef.text) };
    let _ = writeln!(o, "loss        {weight}{}", d.loss_text);
    let _ = writeln!(
        o,
        "            sparse_code({x}, {v}, λ₁, λ₂) = min over α ∈ ℝ^{k} of ½‖{x} − {v}α‖² + λ₁‖α‖₁ + (λ₂/2)‖α‖², λ₁ = {}, λ₂ = {}",
        fmt_num(d.lambda1),
        fmt_num(d.lambda2)
    );
    let unique = if d.lambda2 > 0.0 {
        "unique as λ₂ > 0"
    } else {
        "unique only where the active atoms are independent (λ₂ = 0)"
    };
    let _ = writeln!(o, "            each code by coordinate descent on {v}ᵀ{v} ({unique}); ∇_{v} = ({v}α* − {x})·α*ᵀ");
    for p in &d.penalties {
        let _ = writeln!(o, "term        {}", p.text);
        let _ = writeln!(o, "            penalty {} on each atom", penalty_text(p, "d"));
        let prox = match (&p.groups, p.def.prox) {
            (Some(g), kind) => format!(
                "prox {} per atom: groups {}",
                kind.describe(),
                groups_note(g, kind == ProxKind::ProxLinfGroups, files)
            ),
            (None, kind) => format!("prox {} per atom", kind.describe()),
        };
        let _ = writeln!(o, "            {prox}");
    }
    if let Some(b) = &d.ball {
        let _ = writeln!(o, "constraint  {}: each atom projected on the ball after the prox", b.text);
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "convex      no: bilinear in {v} and the codes; a stationary point, no duality gap");
    let _ = writeln!(o, "solver      smm — {}", choice.reason);
    o
}
