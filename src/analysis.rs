//! Stage 3: the structure of a checked model. Smoothness of the loss, convexity and
//! separability of each term, whether a regularizer is composite ω∘B, which prox applies, and
//! which solver runs it (ALGORITHMS.md §9) — with the reason, since users ask "why this one?".

pub mod dictionary;
mod file_facts;
mod ridge;

pub use file_facts::{FileFacts, GroupLayout};

use crate::check::{Model, Operator, RegTerm, Shape};
use crate::diagnostics::Problem;
use crate::runtime::VectorTerm;
pub use crate::solvers::SolverKind;
use crate::solvers::{Convexity, OptionKind};
use crate::stdlib::{ProxKind, Separability};
use crate::symbolic::{self, fmt_num, Sym};
use std::fmt::Write as _;

/// prox of τ·(l1·|v| + l2/2·v²) + ι_[lo, hi], per coordinate:
/// clamp(soft(v, τ·l1) / (1 + τ·l2), lo, hi). Every coordinate-separable convex term of the
/// stdlib folds into it (l1, l2sq, elastic, Box, NonNeg, ≥, ≤); `logeps` does through its
/// tangent, a weighted ℓ1 whose weights the DC solvers keep (`tangent`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoordinateProx {
    pub l1: f64,
    pub l2: f64,
    pub lo: f64,
    pub hi: f64,
    pub tangent: Option<Tangent>,
}

/// coef·Σⱼ log(|wⱼ| + ε), concave in |w|: the DC solvers majorize it at the last iterate θ by
/// its tangent coef·Σⱼ ηⱼ·|wⱼ| with ηⱼ = 1/(|θⱼ| + ε), so the prox soft-thresholds coordinate j
/// at τ·(l1 + coef·ηⱼ) (ALGORITHMS.md §8).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tangent {
    pub coef: f64,
    pub eps: f64,
}

impl CoordinateProx {
    /// No term: the identity.
    pub const NONE: CoordinateProx =
        CoordinateProx { l1: 0.0, l2: 0.0, lo: f64::NEG_INFINITY, hi: f64::INFINITY, tangent: None };

    pub fn has_box(&self) -> bool {
        self.lo > f64::NEG_INFINITY || self.hi < f64::INFINITY
    }

    /// The formula as the report prints it.
    pub fn describe(&self) -> String {
        let mut s = "v".to_string();
        match (self.l1 > 0.0, self.tangent) {
            (true, Some(t)) => s = format!("soft({s}, τ·({} + {}·ηⱼ))", fmt_num(self.l1), fmt_num(t.coef)),
            (false, Some(t)) => s = format!("soft({s}, τ·{}·ηⱼ)", fmt_num(t.coef)),
            (true, None) => s = format!("soft({s}, τ·{})", fmt_num(self.l1)),
            (false, None) => {}
        }
        if self.l2 > 0.0 {
            s = format!("{s} / (1 + τ·{})", fmt_num(self.l2));
        }
        if self.has_box() {
            s = format!("clamp({s}, {}, {})", fmt_num(self.lo), fmt_num(self.hi));
        }
        if let Some(t) = self.tangent {
            s.push_str(&format!(", ηⱼ: tangent weights 1/(|wⱼ| + {})", fmt_num(t.eps)));
        }
        s
    }
}

#[derive(Clone, Debug)]
pub struct Choice {
    pub solver: SolverKind,
    pub reason: String,
}

/// Settings of the run, from `solve with ...(...)`; the command line may override them.
#[derive(Clone, Debug)]
pub struct Settings {
    /// `epochs = N` (or `iterations`): with no `tol`, exactly N epochs.
    pub epochs: Option<usize>,
    /// `tol = T`: stop when the certified relative gap is ≤ T.
    pub tol: Option<f64>,
    pub seed: u64,
    /// η_t as a formula of t; None for the default η₀/√t.
    pub step: Option<Sym>,
    pub step_text: Option<String>,
    /// η₀; None for the data-dependent default 1/(β·max‖xᵢ‖²).
    pub eta0: Option<f64>,
    /// `scd(newton = 0)`: the paper's curvature-bound steps instead of Newton-type ones.
    pub newton: Option<bool>,
    /// SMM's n₀ of the weights √((n₀ + 1)/(n + n₀)); None: tuned on a sample by `optc run`.
    pub n0: Option<f64>,
    /// `average = 1`: return the averaged iterate.
    pub average: bool,
    /// AdaGrad's δ in sⱼ = δ + √(Σ g²ⱼ); None for the lowering's default.
    pub delta: Option<f64>,
    /// `adagrad(rda = 1)`: dual averaging instead of the composite (FOBOS) step.
    pub rda: bool,
    /// Truncated gradient's K: the gravity is applied every K steps (None: every step).
    pub every: Option<usize>,
    /// Truncated gradient's θ: weights above it are not truncated (None: ∞, plain ℓ1).
    pub theta: Option<f64>,
    /// `dc(batch = 1)`: reweighted ℓ1 solved to tolerance instead of online DC.
    pub batch: bool,
    /// `dcd(shrinking = 0)`: every row every epoch.
    pub shrinking: Option<bool>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            epochs: None,
            tol: None,
            seed: 1,
            step: None,
            step_text: None,
            eta0: None,
            newton: None,
            n0: None,
            average: false,
            delta: None,
            rda: false,
            every: None,
            theta: None,
            batch: false,
            shrinking: None,
        }
    }
}

#[derive(Clone, Debug)]
pub struct TermReport {
    pub text: String,
    pub convex: bool,
    pub separability: Separability,
    pub prox: ProxKind,
    /// How B is handled when the term is ω(B w).
    pub composite: Option<String>,
    /// For `group_l2(groups(load(...)), w)`: what the file says (disjoint or not) and the prox
    /// that follows from it.
    pub groups: Option<String>,
}

#[derive(Clone, Debug)]
pub struct Structure {
    pub smooth: Option<f64>,
    pub lipschitz: Option<f64>,
    pub derivative: Option<Sym>,
    pub terms: Vec<TermReport>,
    pub constraints: Vec<TermReport>,
    pub convex: bool,
    pub composite: bool,
    /// Set when the whole regularizer + constraint is one per-coordinate closed-form prox.
    pub coordinate: Option<CoordinateProx>,
    /// Set when it is a per-coordinate closed form followed by one vector routine (then
    /// `coordinate` is None): batch solvers apply it to the whole vector.
    pub vector: Option<(CoordinateProx, VectorTerm)>,
    /// Set for a composite term ω∘B (alone, or with ½‖·‖² whose scaling composes with it):
    /// batch solvers apply its prox by the runtime's Picard fixed point, or, for `group_l2`
    /// over groups its file showed disjoint, by the closed-form shrink of each group.
    pub composite_prox: Option<(CoordinateProx, crate::plan::Composite)>,
    /// Set for a multiclass W whose prox is per entry, then (optionally) one routine on each
    /// row (ℓ1/ℓ2 or ℓ1/∞ rows); `coordinate` and `vector` are None.
    pub multiclass: Option<(CoordinateProx, Option<VectorTerm>)>,
    pub recommended: Choice,
    /// None when this build cannot run the model yet; `unavailable` says why.
    pub chosen: Option<Choice>,
    pub unavailable: Option<String>,
    pub settings: Settings,
    /// When the default depends on the data's shape (ALGORITHMS.md §9): the solver for few
    /// features against the one chosen above, for the run to pick once the data is bound.
    pub by_shape: Option<ShapeRule>,
}

/// Features at most which a model counts as having few: the certificate's Newton refinement
/// holds a dense Hessian over up to this many coordinates (`certificate::REFINE_MAX`), so at
/// its first check SCD solves the whole ℓ2-logistic problem; and a primal Newton system of this
/// size is cheaper to work on than a dual of one variable per row when the rows outnumber it.
pub const FEW_FEATURES: usize = 1500;

/// The defaults for few features (d ≤ [`FEW_FEATURES`]) and for wide data (more features than
/// rows, text), where they differ from the one the analysis chose.
#[derive(Clone, Debug)]
pub struct ShapeRule {
    pub few_features: Option<Choice>,
    pub wide: Option<Choice>,
    /// Dual CD whatever the shape once the ridge is strong ([`STRONG_RIDGE`]), with λ/c of
    /// F = (c/m)·Σᵢ ℓ + (λ/2)‖w‖², which LIBLINEAR's C = c/(λm) is made of.
    pub strong: Option<(Choice, f64)>,
}

/// LIBLINEAR's C times the mean ‖xᵢ‖² at most which the ridge counts as strong. Dual CD's
/// system is Q + diag(1/(2C)) with Qᵢᵢ = ‖xᵢ‖² for the squared hinge: from about here the
/// diagonal holds it and a few epochs solve it. Squared hinge, `--tol 1e-4`, solve seconds of
/// tron / dcd: a9a (mean ‖xᵢ‖² = 13.9) at C = 0.01 0.027 / 0.014, C = 0.03 0.053 / 0.020, C = 0.1
/// 0.078 / 0.032, C = 1 0.049 / 0.22; w8a (11.6) at C = 0.03 0.036 / 0.021, C = 0.1 0.036 /
/// 0.042. Logistic at C = 0.01 (SCD, tron, dcd): a9a 0.037, 0.024, 0.027; w8a 0.057, 0.038,
/// 0.039; at C = 1 SCD's 0.044 and 0.070 win.
pub const STRONG_RIDGE: f64 = 0.5;

impl ShapeRule {
    /// The choice for data of `rows` × `features`: the rule's for few features, for wide data,
    /// else `otherwise`, its reason prefixed by the shape that decided.
    /// `mean_row_norm_sq` is the mean ‖xᵢ‖² over the rows.
    pub fn choose(&self, features: usize, rows: usize, mean_row_norm_sq: f64, otherwise: &Choice) -> Choice {
        let strength = |ridge: f64| mean_row_norm_sq / (ridge * rows.max(1) as f64);
        let (shape, choice) = match (&self.few_features, &self.wide, &self.strong) {
            (_, _, Some((c, ridge))) if strength(*ridge) <= STRONG_RIDGE => {
                (format!("C·mean ‖xᵢ‖² = {:.3} ≤ {STRONG_RIDGE}", strength(*ridge)), c)
            }
            (Some(c), _, _) if features <= FEW_FEATURES => (format!("d = {features} ≤ {FEW_FEATURES}"), c),
            (_, Some(c), _) if features > rows => (format!("d = {features} > m = {rows}"), c),
            _ => (format!("d = {features} > {FEW_FEATURES}, m = {rows}"), otherwise),
        };
        Choice { solver: choice.solver, reason: format!("{shape}: {}", choice.reason) }
    }
}

/// The solver a default would take for few features, where the data's shape changes it:
/// `tron`'s ℓ2-logistic or least squares go to SCD (its check's dense Newton refinement solves
/// them: a9a and w8a in one epoch, 2.5× faster than tron), and `dcd`'s squared hinge goes to
/// `tron` (w8a: 0.16 s against 0.31 s; on debian-desc, d = 181k, dcd's 0.58 s beats tron's 1.2 s).
///
/// With a strong ridge (`ridge` = λ/c, see [`STRONG_RIDGE`]) both go to dual CD.
fn shape_rule(model: &Model, chosen: &Choice, ridge: Option<f64>) -> Option<ShapeRule> {
    use crate::stdlib::KnownLoss;
    let known = model.loss.def.known();
    let scd = Choice {
        solver: SolverKind::Scd,
        reason: "few features: SCD, whose first check refines the dual point by Newton steps on a dense Hessian over every feature, which solves the whole problem".into(),
    };
    let vector = matches!(model.shape, Shape::Vec(_));
    let strong = |what: &str| {
        ridge.map(|r| {
            let reason = format!("a strong ridge: dual coordinate descent (LIBLINEAR's {what}), whose system the ridge's diagonal holds, in a few epochs of O(nnz)");
            (Choice { solver: SolverKind::Dcd, reason }, r)
        })
    };
    match (chosen.solver, known) {
        (SolverKind::Tron, Some(KnownLoss::Logistic)) if vector => {
            // Dual CD needs no free intercept (Σ αᵢyᵢ = 0 would need pairwise steps).
            let dual = model.intercept.is_none() || model.intercept_l2.is_some();
            Some(ShapeRule {
                // SCD fits no penalised intercept.
                few_features: model.intercept_l2.is_none().then_some(scd),
                wide: dual.then(|| Choice {
                    solver: SolverKind::Dcd,
                    reason: "more features than rows (text): dual coordinate descent for logistic (LIBLINEAR's -s 7), a 1-D Newton step per αᵢ at O(nnz of its row); on debian-desc 0.34 s against tron's 0.59 s".into(),
                }),
                strong: strong("-s 7").filter(|_| dual),
            })
        }
        (SolverKind::Tron, Some(KnownLoss::Squared)) if vector && model.intercept_l2.is_none() => {
            Some(ShapeRule { few_features: Some(scd), wide: None, strong: None })
        }
        (SolverKind::Dcd, Some(KnownLoss::SquaredHinge)) => Some(ShapeRule {
            few_features: Some(Choice {
                solver: SolverKind::Tron,
                reason: "few features against the rows: the primal's d unknowns by truncated Newton (LIBLINEAR's -s 2) rather than a dual of one variable per row".into(),
            }),
            wide: None,
            strong: strong("-s 1"),
        }),
        _ => None,
    }
}

/// Most passes a run may make for SMM to be the default: "one pass gives a usable model".
const SMM_BUDGET: usize = 2;

/// The structure of `model`; `files` is what the files it loads say (read by the caller: the
/// analysis does no IO), empty when they were not read. `budget`: the epochs the command line
/// allows, if it says; `solve with auto(epochs = N)` says it in the model.
pub fn analyse(model: &Model, files: &FileFacts, budget: Option<usize>) -> Result<Structure, Vec<Problem>> {
    let mut problems = vec![];
    let loss = &model.loss.def;
    let terms: Vec<TermReport> = model
        .regs
        .iter()
        .map(|r| TermReport {
            text: r.text.clone(),
            convex: r.def.convex,
            separability: if r.operator.is_some() || (r.groups.is_some() && !disjoint_groups(r, files)) {
                Separability::None
            } else {
                r.def.separability
            },
            prox: r.def.prox,
            // `center(k) Wᵀ` is not a composite: its prox is closed-form (SVT of the centred W).
            composite: r.operator.as_ref().filter(|o| !matches!(o, Operator::Center(_))).map(composite_note),
            groups: r.groups.as_ref().map(|g| groups_note(g, r.def.prox == ProxKind::ProxLinfGroups, files)),
        })
        .collect();
    let constraints: Vec<TermReport> = model
        .constraints
        .iter()
        .map(|c| TermReport {
            text: c.text.clone(),
            convex: true,
            separability: c.set.separability,
            prox: c.set.prox,
            composite: None,
            groups: None,
        })
        .collect();
    let convex = terms.iter().all(|t| t.convex);
    let composite = terms.iter().any(|t| t.composite.is_some());
    let is_matrix = loss.multiclass || matches!(model.shape, Shape::Mat(..));
    let split = split_prox(model, is_matrix);
    let (coordinate, vector, multiclass) = match (&split, is_matrix) {
        (Ok((p, t)), true) => (None, None, Some((*p, *t))),
        (Ok((p, None)), false) => (Some(*p), None, None),
        (Ok((p, Some(t))), false) => (None, Some((*p, *t)), None),
        (Err(_), _) => (None, None, None),
    };
    let composite_prox = if is_matrix { None } else { composite_prox(model, files) };
    let group_shrink = composite_prox.as_ref().is_some_and(|(_, c)| c.prox == crate::plan::CompositeProx::GroupShrink);
    let smooth = loss.smooth;

    let all_coordinate = terms.iter().chain(&constraints).all(|t| t.separability == Separability::Coordinate);
    let nuclear = model.regs.iter().any(|r| r.def.prox == ProxKind::Svt);
    let recommended = if !convex {
        Choice {
            solver: SolverKind::Dc,
            reason: "a non-convex concave-in-|w| penalty: online DC is the method here with guarantees for it".into(),
        }
    } else if group_shrink {
        Choice {
            solver: SolverKind::Proxgrad,
            reason: "group_l2 over disjoint groups: its prox is the ℓ2 shrink of each group; batch proximal gradient with FISTA, certified each iteration".into(),
        }
    } else if composite || composite_prox.is_some() {
        Choice {
            solver: SolverKind::Proxgrad,
            reason: "ω∘B is not separable: a dense Picard prox per step rules out stochastic O(nnz) steps".into(),
        }
    } else if nuclear {
        Choice { solver: SolverKind::Proxgrad, reason: "the nuclear norm's prox is an SVD of the whole matrix".into() }
    } else if is_matrix && smooth.is_some() && ridge::default_choice(model).is_none() {
        Choice {
            solver: SolverKind::Proxgrad,
            reason: "multiclass: the softmax couples the classes and row penalties tie W's rows; batch proximal gradient with FISTA on W, certified each iteration".into(),
        }
    } else if dual_cd_fits(model) && model.loss.def.known() != Some(crate::stdlib::KnownLoss::Logistic) {
        Choice {
            solver: SolverKind::Dcd,
            reason: format!(
                "`{}` with ½‖w‖² only: dual coordinate descent (LIBLINEAR's -s {}), one dual variable a step at O(nnz of its row), certified by the gap to its own dual",
                model.loss.def.name,
                if model.loss.def.known() == Some(crate::stdlib::KnownLoss::Hinge) { 3 } else { 1 }
            ),
        }
    } else if is_svm(model) && model.intercept.is_none() {
        Choice {
            solver: SolverKind::Picard,
            reason: "the linear SVM (hinge + ½‖·‖²) as the prox of hinge∘B at 0, by the Picard iteration with FISTA momentum: a subgradient method alone stalls near 1e-3".into(),
        }
    } else if smooth.is_some() && coordinate.is_some() && budget.or(auto_epochs(model)).is_some_and(|e| e <= SMM_BUDGET)
    {
        Choice {
            solver: SolverKind::Smm,
            reason: format!(
                "a budget of {} pass(es): SMM's averaged surrogates give a usable model in one pass, with O(nnz) steps for ℓ1 (SCD or FISTA would stop far from a certificate)",
                budget.or(auto_epochs(model)).unwrap_or(1)
            ),
        }
    } else if let Some(newton) = ridge::default_choice(model) {
        // ½‖·‖² alone (ALGORITHMS.md §11): Newton-CG, for a scalar loss and for softmax on W.
        newton
    } else if smooth.is_some() && all_coordinate {
        Choice {
            solver: SolverKind::Scd,
            reason: "smooth loss and a coordinate-separable regularizer: parameter-free, O(nnz) per epoch".into(),
        }
    } else if smooth.is_some() {
        Choice {
            solver: SolverKind::Proxgrad,
            reason: "smooth loss with a vector or row-wise prox: batch proximal gradient with FISTA, certified each iteration".into(),
        }
    } else {
        Choice {
            solver: SolverKind::Fobos,
            reason: format!("`{}` is not smooth: FOBOS needs only subgradients", loss.name),
        }
    };

    // What the compiled solvers (all with a per-coordinate prox and a scalar loss) can run.
    let compiled_blocker: Option<String> = if is_matrix
        && !(loss.name == "softmax" && matches!(model.shape, Shape::Mat(..)))
    {
        Some("a matrix variable is compiled for `softmax` only, and `softmax` needs one".into())
    } else if !convex {
        dc_blocker(&split, loss)
    } else if composite_prox.is_some() {
        None
    } else if composite {
        Some("ω(B w) is compiled alone or beside `l2sq` only (ℓ1, a box or another term beside it needs a stacked operator)".into())
    } else if let Err(SplitBlocker::Unsupported(text)) = &split {
        Some(format!("`{text}` is not separable per coordinate; its prox is not compiled yet"))
    } else if let Err(SplitBlocker::NoClosedForm(what)) = &split {
        Some(format!("the prox of {what} has no closed form here (it needs Dykstra's splitting)"))
    } else {
        None
    };

    let mut settings = Settings::default();
    let mut chosen;
    let mut unavailable = None;
    let forced = model.solver.as_ref().filter(|s| s.name != "auto");
    if let Some(req) = forced {
        let kind = SolverKind::from_name(&req.name).unwrap_or(SolverKind::Fobos);
        if let Some((why, culprit, label)) =
            forced_invalid(kind, model, &terms, &constraints, convex, composite, all_coordinate)
        {
            problems.push(
                Problem::error(
                    "optc::solver",
                    format!("`{}` cannot solve this model: {why}", kind.name()),
                    culprit,
                    label,
                )
                .with_label(req.span, "solver forced here")
                .with_help(format!(
                    "remove `solve with` to let optc choose (it would pick `{}`: {})",
                    recommended.solver.name(),
                    recommended.reason
                )),
            );
        }
        settings = parse_settings(kind, req, &mut problems);
        if kind.implemented() && compiled_blocker.is_none() {
            chosen = Some(Choice { solver: kind, reason: "forced by `solve with`".into() });
        } else {
            chosen = None;
            unavailable = Some(match &compiled_blocker {
                Some(b) if kind.implemented() => format!("{} in this build cannot run it: {b}", kind.name()),
                _ => {
                    format!(
                        "`{}` is not compiled by this build yet (it compiles {})",
                        kind.name(),
                        crate::solvers::compiled_names().join(", ")
                    )
                }
            });
        }
    } else {
        chosen = if recommended.solver.implemented() && compiled_blocker.is_none() {
            Some(recommended.clone())
        } else if compiled_blocker.is_none() {
            Some(Choice {
                solver: SolverKind::Fobos,
                reason: format!(
                    "`{}` would be preferred ({}), but it is not compiled yet; fobos handles this model with lazy O(nnz) steps",
                    recommended.solver.name(),
                    recommended.reason
                ),
            })
        } else {
            let blocker = compiled_blocker.clone().unwrap_or_default();
            unavailable = Some(if recommended.solver.implemented() {
                format!("`{}` cannot run it in this build: {blocker}", recommended.solver.name())
            } else {
                format!(
                    "`{}` is not compiled by this build yet, and no compiled solver can stand in: {blocker}",
                    recommended.solver.name()
                )
            });
            None
        };
        // `solve with auto(...)`: the options of the solver that was chosen.
        if let (Some(req), Some(c)) = (&model.solver, &chosen) {
            settings = parse_settings(c.solver, req, &mut problems);
        }
    }

    // A composite prox (Picard, or the group shrink) runs once per iteration: only the batch
    // solver has it.
    if let (Some(c), Some(_)) = (&chosen, &composite_prox) {
        if c.solver != SolverKind::Proxgrad {
            let what = if group_shrink { "the ℓ2 shrink of each group" } else { "the Picard prox of ω∘B" };
            unavailable = Some(format!(
                "{what} runs in proxgrad (a smooth loss) in this build; `{}` does not run it",
                c.solver.name()
            ));
            chosen = None;
        }
    }
    // A multiclass W runs in the batch solvers (proxgrad, tron), and in FOBOS with lazy per-row proxes, except
    // for a norm of the whole matrix (an SVD of W per step would cost O(d·k²), not O(nnz·k)).
    if let (Some(c), Some((_, rows))) = (&chosen, &multiclass) {
        let whole = rows.filter(|t| t.whole_matrix());
        let blocker = match (c.solver, whole) {
            (SolverKind::Proxgrad | SolverKind::Tron, _) => None,
            (SolverKind::Fobos, Some(t)) => Some(format!(
                "the prox of {} is an SVD of all of W, O(d·k²) per step: stochastic steps would cost more than a batch iteration; proxgrad runs it",
                t.describe()
            )),
            (SolverKind::Fobos, None) => None,
            (s, _) => Some(format!("multiclass models run with proxgrad, fobos or tron in this build; `{}` does not run them", s.name())),
        };
        if let Some(why) = blocker {
            unavailable = Some(why);
            chosen = None;
        }
    }
    // The intercept is one more unpenalized coordinate in SCD, proxgrad and the stochastic
    // plans; Picard's dual (the SVM as a prox at 0) and DC's reweighting have no place for it.
    if let (Some(c), Some(b)) = (&chosen, &model.intercept) {
        if matches!(c.solver, SolverKind::Picard | SolverKind::Dc) {
            unavailable = Some(format!(
                "`{}` does not fit the intercept `{}` in this build (scd, proxgrad, tron, fobos, adagrad, smm, smidas and truncated do)",
                c.solver.name(),
                b.name
            ));
            chosen = None;
        }
    }
    // One intercept per class: tron's Newton system takes them as k more coordinates.
    if let (Some(c), true) = (&chosen, model.intercept_per_class) {
        let why = if model.intercept_l2.is_some() {
            Some("a penalised per-class intercept is not compiled by this build (drop its `l2sq` term: unpenalised, tron fits it)".to_string())
        } else if c.solver != SolverKind::Tron {
            Some(format!(
                "per-class intercepts are compiled for tron (softmax with ½‖W‖² only) in this build; `{}` does not fit them",
                c.solver.name()
            ))
        } else {
            None
        };
        if let Some(why) = why {
            unavailable = Some(why);
            chosen = None;
        }
    }
    // `μ·l2sq(b)` is compiled where b is a coordinate of the solver's own: dual CD (a feature of
    // value √(λ/μ)) and tron.
    if let (Some(c), Some(r)) = (&chosen, &model.intercept_l2) {
        if !matches!(c.solver, SolverKind::Dcd | SolverKind::Tron) {
            unavailable = Some(format!(
                "`{}` does not fit a penalised intercept (`{}`) in this build (dcd and tron do)",
                c.solver.name(),
                r.text
            ));
            chosen = None;
        }
    }
    // A vector prox is applied to the whole vector each step: only the batch solver has it.
    if let (Some(c), Some((_, term))) = (&chosen, &vector) {
        if c.solver != SolverKind::Proxgrad {
            unavailable = Some(format!(
                "the prox of {} acts on the whole vector, and only proxgrad (a smooth loss) applies it in this build; `{}` does not",
                term.describe(),
                c.solver.name()
            ));
            chosen = None;
        }
    }

    // Dual CD's logistic steps keep every αᵢ inside (0, C): shrinking has no bound to hold one at.
    let logistic_dcd = chosen.as_ref().is_some_and(|c| c.solver == SolverKind::Dcd)
        && model.loss.def.known() == Some(crate::stdlib::KnownLoss::Logistic);
    if let (true, Some(o)) =
        (logistic_dcd, model.solver.iter().flat_map(|r| &r.options).find(|o| o.name == "shrinking"))
    {
        problems.push(
            Problem::error("optc::solver", "`shrinking` does not apply to logistic", o.span, "no bound to shrink at")
                .with_help("dcd's logistic steps keep every αᵢ strictly inside (0, C); remove `shrinking`"),
        );
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    let ridge = coordinate.map(|p| p.l2 / model.loss.coef.value).filter(|r| *r > 0.0 && r.is_finite());
    let by_shape = chosen.as_ref().filter(|_| forced.is_none()).and_then(|c| shape_rule(model, c, ridge));
    Ok(Structure {
        smooth,
        lipschitz: loss.lipschitz,
        derivative: loss.derivative.clone(),
        terms,
        constraints,
        convex,
        // Overlapping (or unread) groups need the fixed point as much as ω(B w) does.
        composite: composite || model.regs.iter().any(|r| r.groups.is_some() && !disjoint_groups(r, files)),
        coordinate,
        vector,
        multiclass,
        composite_prox,
        recommended,
        chosen,
        unavailable,
        settings,
        by_shape,
    })
}

fn composite_note(op: &Operator) -> String {
    match op {
        Operator::Diff(_) => "ω∘B with B = diff (first differences, λ_max(BBᵀ) ≤ 4): Picard fixed-point prox".into(),
        Operator::Incidence(p) => {
            format!("ω∘B with B = incidence(\"{p}\") (λ_max(BBᵀ) ≤ 2·max degree): Picard fixed-point prox")
        }
        Operator::Groups(p) => format!("ω∘B with B = groups(\"{p}\"): Picard fixed-point prox"),
        Operator::Center(_) => "W(I − 11ᵀ/k): singular-value thresholding of the row-centred W".into(),
    }
}

/// Whether the groups of a `group_l2` term are known disjoint: its file was read and no
/// feature is in two of its groups.
fn disjoint_groups(r: &RegTerm, files: &FileFacts) -> bool {
    matches!(&r.groups, Some(Operator::Groups(p)) if files.groups(p) == Some(GroupLayout::Disjoint))
}

/// What the groups file of a `group_l2` term says, and the prox it allows.
/// `linf`: the term is `group_linf`, whose prox is the fixed point even on disjoint groups.
pub(crate) fn groups_note(groups: &Operator, linf: bool, files: &FileFacts) -> String {
    let Operator::Groups(path) = groups else { return String::new() };
    match files.groups(path) {
        Some(GroupLayout::Disjoint) if linf => {
            format!("in \"{path}\" are disjoint: Picard fixed point on the stacked group selections")
        }
        Some(GroupLayout::Disjoint) => format!("in \"{path}\" are disjoint: closed-form ℓ2 prox per group"),
        Some(GroupLayout::Overlap { feature, first, second }) => format!(
            "in \"{path}\" overlap (feature {feature} is in groups {first} and {second}): Picard fixed point on the stacked group selections"
        ),
        None => format!(
            "in \"{path}\" not read: Picard fixed point on the stacked group selections, right whether or not they overlap"
        ),
    }
}

/// The prox the compiled solvers apply: the per-coordinate closed form every coordinate term
/// folds into, then at most one vector routine, where that composition is the exact prox of
/// the sum. It is for ½‖·‖² with anything (prox_{τ(R + μ/2‖·‖²)}(v) = prox_{τR/(1+τμ)}(v/(1+τμ)))
/// and for ℓ1 then the ℓ2 norm (the sparse-group-lasso identity); not for ℓ1 or a box with
/// another vector term, nor for two vector terms (those need Dykstra's splitting).
///
/// For a matrix W (`rows`), the vector terms are the row-wise `l1l2` and `l1inf`, applied to
/// each row; the whole-matrix norms and the balls are not compiled for W.
fn split_prox(model: &Model, rows: bool) -> Result<(CoordinateProx, Option<VectorTerm>), SplitBlocker> {
    let mut p = CoordinateProx::NONE;
    let mut vector: Vec<(VectorTerm, String)> = vec![];
    for r in &model.regs {
        if let (Some(Operator::Center(_)), ProxKind::Svt, true) = (&r.operator, r.def.prox, rows) {
            vector.push((VectorTerm::CenteredNuclear(r.coef.value), r.text.clone()));
            continue;
        }
        if r.operator.is_some() {
            return Err(SplitBlocker::Unsupported(r.text.clone()));
        }
        let scalar = |i: usize| r.scalars.get(i).map_or(0.0, |s| s.1);
        match r.def.prox {
            ProxKind::SoftThreshold => p.l1 += r.coef.value,
            ProxKind::Scale => p.l2 += r.coef.value,
            ProxKind::Elastic => {
                p.l1 += r.coef.value;
                p.l2 += r.coef.value * scalar(0);
            }
            ProxKind::ShrinkL2 if !rows => vector.push((VectorTerm::Norm2(r.coef.value), r.text.clone())),
            ProxKind::ProxLinf if !rows => vector.push((VectorTerm::NormInf(r.coef.value), r.text.clone())),
            ProxKind::ShrinkL2Rows if rows => vector.push((VectorTerm::Norm2(r.coef.value), r.text.clone())),
            ProxKind::ProxLinfRows if rows => vector.push((VectorTerm::NormInf(r.coef.value), r.text.clone())),
            ProxKind::Svt if rows => vector.push((VectorTerm::Nuclear(r.coef.value), r.text.clone())),
            ProxKind::ReweightedL1 if p.tangent.is_none() => {
                p.tangent = Some(Tangent { coef: r.coef.value, eps: scalar(0) })
            }
            _ => return Err(SplitBlocker::Unsupported(r.text.clone())),
        }
    }
    for c in &model.constraints {
        match c.set.name.as_str() {
            "Box" => {
                p.lo = p.lo.max(c.args[0]);
                p.hi = p.hi.min(c.args[1]);
            }
            "L1Ball" if !rows => vector.push((VectorTerm::L1Ball(c.args[0]), c.text.clone())),
            "L2Ball" if !rows => vector.push((VectorTerm::L2Ball(c.args[0]), c.text.clone())),
            "Simplex" if !rows => vector.push((VectorTerm::Simplex, c.text.clone())),
            _ => return Err(SplitBlocker::Unsupported(c.text.clone())),
        }
    }
    match vector.as_slice() {
        [] => Ok((p, None)),
        [(term, text)] => {
            if p.has_box() {
                Err(SplitBlocker::NoClosedForm(format!("`{text}` with a box")))
            } else if p.l1 > 0.0 && !matches!(term, VectorTerm::Norm2(_)) {
                Err(SplitBlocker::NoClosedForm(format!("`{text}` with an ℓ1 term")))
            } else {
                Ok((p, Some(*term)))
            }
        }
        [(_, a), (_, b), ..] => Err(SplitBlocker::NoClosedForm(format!("`{a}` with `{b}`"))),
    }
}

/// One composite term — `ω(B w)` with ω = ℓ1 or ℓ2, or `group_l2(groups(...), w)` — beside
/// ½‖·‖² terms only, whose scaling composes with any prox: prox_{τ(R + μ/2‖·‖²)}(v) =
/// prox_{τR/(1+τμ)}(v/(1+τμ)). Its prox is the Picard fixed point, or the closed-form shrink of
/// each group for `group_l2` over groups `files` shows disjoint (ALGORITHMS.md §3: when ω is
/// separable and B a selection, the fixed point is reached in one step).
fn composite_prox(model: &Model, files: &FileFacts) -> Option<(CoordinateProx, crate::plan::Composite)> {
    use crate::plan::{Composite, CompositeProx, OperatorSpec};
    use crate::runtime::picard::Omega;
    if !model.constraints.is_empty() {
        return None;
    }
    let spec = |op: &Operator| match op {
        Operator::Diff(crate::check::Dim::Fixed(n)) => Some(OperatorSpec::Diff(Some(*n))),
        Operator::Diff(_) => Some(OperatorSpec::Diff(None)),
        Operator::Incidence(p) => Some(OperatorSpec::Incidence(p.clone())),
        Operator::Groups(p) => Some(OperatorSpec::Groups(p.clone())),
        Operator::Center(_) => None,
    };
    let mut p = CoordinateProx::NONE;
    let mut found = None;
    for r in &model.regs {
        let (omega, operator, group_blocks) = match (&r.operator, &r.groups, r.def.prox) {
            (None, None, ProxKind::Scale) => {
                p.l2 += r.coef.value;
                continue;
            }
            (Some(op), None, ProxKind::SoftThreshold) => (Omega::L1, spec(op)?, false),
            (Some(op), None, ProxKind::ShrinkL2) => (Omega::BlockL2, spec(op)?, false),
            (None, Some(g), ProxKind::ShrinkL2Groups) => (Omega::BlockL2, spec(g)?, true),
            (None, Some(g), ProxKind::ProxLinfGroups) => (Omega::BlockLinf, spec(g)?, true),
            _ => return None,
        };
        if found.is_some() {
            return None;
        }
        // The closed-form shrink is group ℓ2's; group ℓ∞ takes the fixed point either way.
        let shrink = omega == Omega::BlockL2 && group_blocks && disjoint_groups(r, files);
        let prox = if shrink { CompositeProx::GroupShrink } else { CompositeProx::Picard };
        found = Some(Composite { omega, coef: r.coef.value, operator, group_blocks, prox });
    }
    found.map(|c| (p, c))
}

/// Why the DC solvers cannot run a non-convex model, if they cannot: they take `logeps` through
/// its tangent, beside terms that fold into the per-coordinate prox, and their surrogates of the
/// loss need its curvature bound.
fn dc_blocker(
    split: &Result<(CoordinateProx, Option<VectorTerm>), SplitBlocker>,
    loss: &crate::stdlib::LossDef,
) -> Option<String> {
    if loss.smooth.is_none() {
        return Some(format!(
            "the DC solvers majorize the loss by quadratics and need a smooth one; `{}` is not smooth",
            loss.name
        ));
    }
    match split {
        Ok((CoordinateProx { tangent: Some(t), .. }, None)) if !(t.eps > 0.0 && t.eps.is_finite()) => Some(format!(
            "`logeps` needs a positive, finite ε: with ε = {} the penalty is unbounded at w = 0",
            fmt_num(t.eps)
        )),
        Ok((CoordinateProx { tangent: Some(_), .. }, None)) => None,
        _ => Some(
            "the DC solver runs one `logeps` term beside per-coordinate convex terms only (l1, l2sq, elastic, a box)"
                .into(),
        ),
    }
}

/// Why the terms do not fold into [`split_prox`]'s form.
enum SplitBlocker {
    /// A term whose prox is not compiled (rows, groups, nuclear, ω∘B, logeps).
    Unsupported(String),
    /// Terms each compiled, whose sum has no closed-form prox here.
    NoClosedForm(String),
}

/// `solve with auto(epochs = N)`: the budget the model itself gives.
fn auto_epochs(model: &Model) -> Option<usize> {
    let req = model.solver.as_ref().filter(|s| s.name == "auto")?;
    let o = req.options.iter().find(|o| o.name == "epochs")?;
    let v = symbolic::simplify(&o.value).as_const()?;
    (v >= 1.0 && v.fract() == 0.0 && v < 1e15).then_some(v as usize)
}

/// hinge + λ·½‖w‖² and nothing else: the SVM the Picard solver takes as a prox of hinge∘B.
fn is_svm(model: &Model) -> bool {
    model.loss.def.name == "hinge"
        && matches!(model.shape, Shape::Vec(_))
        && model.constraints.is_empty()
        && !model.regs.is_empty()
        && model.regs.iter().all(|r| r.def.prox == ProxKind::Scale && r.operator.is_none())
}

/// A loss whose dual coordinate step optc has (hinge, squared hinge in closed form; logistic by
/// a 1-D Newton method), by name or by formula, with λ·l2sq terms only: no constraint, no other term, no unregularized intercept
/// (whose Σ αᵢyᵢ = 0 in the dual needs pairwise steps, ALGORITHMS.md §11).
fn dual_cd_fits(model: &Model) -> bool {
    use crate::stdlib::KnownLoss;
    matches!(model.loss.def.known(), Some(KnownLoss::Hinge | KnownLoss::SquaredHinge | KnownLoss::Logistic))
        && matches!(model.shape, Shape::Vec(_))
        && model.constraints.is_empty()
        && (model.intercept.is_none() || model.intercept_l2.is_some())
        && model.loss.coef.value > 0.0
        && !model.regs.is_empty()
        && model.regs.iter().all(|r| r.def.prox == ProxKind::Scale && r.operator.is_none() && r.coef.value > 0.0)
}

/// Why a forced solver cannot run the model: the reason, the span to blame and its label.
fn forced_invalid(
    kind: SolverKind,
    model: &Model,
    terms: &[TermReport],
    constraints: &[TermReport],
    convex: bool,
    composite: bool,
    all_coordinate: bool,
) -> Option<(String, crate::source::Span, String)> {
    let needs = kind.spec().requires;
    let loss = &model.loss.def;
    let term_span = |k: usize| model.regs.get(k).map_or(model.objective_span, |r| r.span);
    match needs.convexity {
        Convexity::Convex if !convex => {
            let k = terms.iter().position(|t| !t.convex).unwrap_or(0);
            return Some((
                format!("`{}` is not convex, and `{}` needs a convex objective (use `dc`)", terms[k].text, kind.name()),
                term_span(k),
                "not convex".into(),
            ));
        }
        Convexity::NonConvex if convex => {
            return Some((
                "online DC is for non-convex penalties such as `logeps`".into(),
                model.objective_span,
                "convex".into(),
            ))
        }
        _ => {}
    }
    if needs.smooth_loss && loss.smooth.is_none() {
        return Some((
            format!("{} needs a smooth loss, and `{}` is not smooth", kind.name(), loss.name),
            model.loss.span,
            "not smooth".into(),
        ));
    }
    if needs.coordinate_separable && (!all_coordinate || composite) {
        let (text, span) = match terms.iter().position(|t| t.separability != Separability::Coordinate) {
            Some(k) => (terms[k].text.clone(), term_span(k)),
            None => {
                let c = constraints.iter().position(|t| t.separability != Separability::Coordinate).unwrap_or(0);
                (constraints[c].text.clone(), model.constraints[c].span)
            }
        };
        return Some((
            format!(
                "{} updates one coordinate at a time, and `{text}` is not separable per coordinate",
                kind.name().to_uppercase()
            ),
            span,
            "not separable per coordinate".into(),
        ));
    }
    if needs.dual_cd && !dual_cd_fits(model) {
        let why = if model.intercept.is_some() {
            "an unregularized intercept adds Σ αᵢyᵢ = 0 to the dual, which one-variable steps cannot keep (use proxgrad or fobos, or regularize it)"
        } else {
            "dual coordinate descent takes hinge, squared_hinge or logistic with λ·l2sq(w) and no other term or constraint"
        };
        return Some((why.to_string(), model.objective_span, "not an ℓ2-regularized SVM".into()));
    }
    if needs.svm_only && !is_svm(model) {
        return Some((
            "picard solves the linear SVM, `E[hinge(y, <x, w>)] + λ·l2sq(w)` with no other term".into(),
            model.objective_span,
            "not hinge + l2sq".into(),
        ));
    }
    if needs.l2sq_only {
        if let Some(misfit) = ridge::misfit(model) {
            return Some(misfit);
        }
    }
    if needs.l1_only {
        let why = match kind {
            SolverKind::Smidas => "ℓ1's step in the mirror coordinates is a per-coordinate shrink of θ (sign wⱼ = sign θⱼ); for any other term the step under the p-norm potential, which couples every coordinate through ‖θ‖_p, has no closed form",
            _ => "its only step beside the gradient's is the ℓ1 term's truncation (gravity)",
        };
        if let Some(k) = model.regs.iter().position(|r| r.def.prox != ProxKind::SoftThreshold || r.operator.is_some()) {
            return Some((
                format!("{} handles an ℓ1 penalty only: {why}", kind.name().to_uppercase()),
                term_span(k),
                "not ℓ1".into(),
            ));
        }
        if let Some(c) = model.constraints.first() {
            return Some((
                format!("{} handles no constraints: {why}", kind.name().to_uppercase()),
                c.span,
                "constraint".into(),
            ));
        }
    }
    None
}

fn parse_settings(kind: SolverKind, req: &crate::check::SolverRequest, problems: &mut Vec<Problem>) -> Settings {
    let mut s = Settings::default();
    for o in &req.options {
        let Some(spec) = kind.option(&o.name) else {
            let names = kind.option_names();
            let p = Problem::error(
                "optc::solver",
                format!("`{}` has no option `{}`", kind.name(), o.name),
                o.span,
                "unknown option",
            );
            problems.push(p.suggest(
                &o.name,
                names.iter().copied(),
                format!("`{}` takes {}", kind.name(), names.join(", ")),
            ));
            continue;
        };
        if spec.kind == OptionKind::Schedule {
            let at_1 = o.value.eval(&|n| (n == "t").then_some(1.0));
            if !(at_1.is_finite() && at_1 > 0.0) {
                problems.push(
                    Problem::error(
                        "optc::solver",
                        format!("the step at t = 1 is {at_1}, not a positive number"),
                        o.span,
                        "here",
                    )
                    .with_help("a step schedule is a positive formula of t, e.g. `0.5/sqrt(t)`"),
                );
                continue;
            }
            s.step = Some(o.value.clone());
            s.step_text = Some(o.text.clone());
            continue;
        }
        let Some(v) = symbolic::simplify(&o.value).as_const() else {
            problems.push(Problem::error(
                "optc::solver",
                format!("`{}` must be a constant", o.name),
                o.span,
                "depends on t",
            ));
            continue;
        };
        let whole = v >= 0.0 && v.fract() == 0.0 && v < 1e15;
        let (valid, wanted) = match spec.kind {
            OptionKind::Count => (whole && v >= 1.0, "a whole number ≥ 1"),
            OptionKind::Seed => (whole, "a whole number"),
            OptionKind::Positive => (v > 0.0 && v.is_finite(), "a positive number"),
            OptionKind::Flag => (v == 0.0 || v == 1.0, "0 or 1"),
            OptionKind::Schedule => (true, ""),
        };
        if !valid {
            problems.push(
                Problem::error("optc::solver", format!("`{}` must be {wanted}", o.name), o.span, format!("found {v}"))
                    .with_help(format!("`{}`: {}", o.name, spec.help)),
            );
            continue;
        }
        match o.name.as_str() {
            "epochs" | "iterations" => s.epochs = Some(v as usize),
            "tol" => s.tol = Some(v),
            "seed" => s.seed = v as u64,
            "eta0" => s.eta0 = Some(v),
            "newton" => s.newton = Some(v == 1.0),
            "n0" => s.n0 = Some(v),
            "every" => s.every = Some(v as usize),
            "theta" => s.theta = Some(v),
            "batch" => s.batch = v == 1.0,
            "average" => s.average = v == 1.0,
            "delta" => s.delta = Some(v),
            "rda" => s.rda = v == 1.0,
            "shrinking" => s.shrinking = Some(v == 1.0),
            // The options of solvers this build does not compile: the run stops before them.
            _ => {}
        }
    }
    // Batch DC averages nothing: n₀ and averaged outputs would be silently ignored.
    for (name, what) in
        [("n0", "weights the surrogates of online DC"), ("average", "averages the iterates of online DC")]
    {
        if let (true, Some(o)) = (s.batch, req.options.iter().find(|o| o.name == name)) {
            problems.push(
                Problem::error("optc::solver", format!("`{name}` {what}"), o.span, "ignored with batch = 1")
                    .with_help(format!("remove `{name}`, or remove `batch = 1` to run online DC")),
            );
        }
    }
    s
}

/// The text `optc check` prints.
pub fn report(model: &Model, st: &Structure, file_name: &str) -> String {
    let mut o = String::new();
    let shape = match &model.shape {
        Shape::Vec(d) => format!("vec[{}]", dim_text(d, model)),
        Shape::Mat(r, c) => format!("mat[{}, {}]", dim_text(r, model), dim_text(c, model)),
    };
    let _ = writeln!(o, "model       {file_name}");
    let _ = writeln!(
        o,
        "data        {}: sparse features, {}: {}",
        model.features.name,
        model.label.name,
        label_text(model)
    );
    let _ = writeln!(o, "variable    {}: {shape}", model.var.name);
    match (&model.intercept, &model.intercept_l2) {
        (Some(b), None) if model.intercept_per_class => {
            _ = writeln!(o, "intercept   {}: vec[classes], one offset per class's score, unregularized", b.name)
        }
        (Some(b), None) => _ = writeln!(o, "intercept   {}: scalar, added to every margin, unregularized", b.name),
        (Some(b), Some(r)) => _ = writeln!(
            o,
            "intercept   {}: scalar, added to every margin, penalised by {} = {}·{}² (LIBLINEAR's -B 1 when it matches λ·l2sq({}))",
            b.name,
            r.text,
            fmt_num(r.coef / 2.0),
            b.name,
            model.var.name
        ),
        _ => {}
    }
    if !model.params.is_empty() {
        let ps: Vec<String> = model
            .params
            .iter()
            .map(|p| format!("{} = {}{}", p.name, fmt_num(p.value), if p.overridden { " (--set)" } else { "" }))
            .collect();
        let _ = writeln!(o, "params      {}", ps.join(", "));
    }
    let loss = &model.loss.def;
    let _ = writeln!(o);
    let _ = writeln!(o, "loss        {}({}, {}) = {}", loss.name, loss.label, loss.margin, loss.formula_text);
    match (loss.smooth, loss.lipschitz) {
        (Some(b), Some(g)) => _ = writeln!(o, "            smooth, β = {}; Lipschitz, G = {}", fmt_num(b), fmt6(g)),
        (Some(b), None) => _ = writeln!(o, "            smooth, β = {}; not Lipschitz (unbounded ℓ′)", fmt_num(b)),
        (None, Some(g)) => _ = writeln!(o, "            not smooth (subgradients); Lipschitz, G = {}", fmt6(g)),
        (None, None) => _ = writeln!(o, "            not smooth, not Lipschitz"),
    }
    match &st.derivative {
        Some(d) => _ = writeln!(o, "            ℓ′ = {d}   (derived)"),
        None => _ = writeln!(o, "            ℓ′ = softmax(a) − e_y   (vector of scores)"),
    }
    if model.loss.coef.value != 1.0 {
        let _ = writeln!(o, "            weight {} = {}", model.loss.coef.text, fmt_num(model.loss.coef.value));
    }
    for (t, r) in st.terms.iter().zip(&model.regs) {
        let _ = writeln!(o, "term        {}", t.text);
        let _ = writeln!(o, "            penalty {}", penalty_text(r, &model.var.name));
        let _ = writeln!(
            o,
            "            {}, {}; prox {}",
            if t.convex { "convex" } else { "NOT convex" },
            t.separability.describe(),
            r.def.prox.describe()
        );
        if let Some(c) = &t.composite {
            let _ = writeln!(o, "            composite {c}");
        }
        if let Some(g) = &t.groups {
            let _ = writeln!(o, "            groups {g}");
        }
    }
    for t in &st.constraints {
        let _ = writeln!(o, "constraint  {}", t.text);
        let _ = writeln!(o, "            convex, {}; prox {}", t.separability.describe(), t.prox.describe());
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "convex      {}", if st.convex { "yes" } else { "no" });
    let _ = writeln!(
        o,
        "composite   {}",
        if st.composite {
            "yes: ω(B w) needs an inner fixed-point prox"
        } else {
            "no: every term acts on the variable directly"
        }
    );
    match (&st.coordinate, &st.vector) {
        (Some(p), _) if p.tangent.is_some() => {
            _ = writeln!(o, "prox        per coordinate, of the convex DC surrogate: {}", p.describe())
        }
        (Some(p), _) => _ = writeln!(o, "prox        per coordinate, closed form: {}", p.describe()),
        (None, Some((p, t))) if p.l1 > 0.0 || p.l2 > 0.0 => {
            _ = writeln!(
                o,
                "prox        closed form: {} of {}, after the per-coordinate {}",
                t.routine().name(),
                t.describe(),
                p.describe()
            )
        }
        (None, Some((_, t))) => _ = writeln!(o, "prox        closed form: {} of {}", t.routine().name(), t.describe()),
        (None, None) if st.multiclass.is_some() => {
            let (p, rows) = st.multiclass.expect("checked");
            let entry = (p.l1 > 0.0 || p.l2 > 0.0 || p.has_box()).then(|| format!("per entry of W {}", p.describe()));
            let row = rows.map(|t| {
                let which = if t.whole_matrix() { "W" } else { "each row of W" };
                format!("{} of {which}", t.routine().name())
            });
            let parts: Vec<String> = entry.into_iter().chain(row).collect();
            let what = if parts.is_empty() { "none (R = 0)".to_string() } else { parts.join(", then ") };
            let _ = writeln!(o, "prox        closed form: {what}");
        }
        (None, None) => match &st.composite_prox {
            Some((p, c)) if c.prox == crate::plan::CompositeProx::GroupShrink => {
                let after =
                    if p.l2 > 0.0 { format!(", after the per-coordinate {}", p.describe()) } else { String::new() };
                _ = writeln!(o, "prox        closed form: ℓ2 shrink of each group{after}")
            }
            _ => _ = writeln!(o, "prox        term by term (see above)"),
        },
    }
    let _ = writeln!(o, "recommended {} — {}", st.recommended.solver.name(), st.recommended.reason);
    if let Some(rule) = &st.by_shape {
        if let Some(c) = &rule.few_features {
            let _ = writeln!(o, "by shape    d ≤ {FEW_FEATURES} features: {} — {}", c.solver.name(), c.reason);
        }
        if let Some(c) = &rule.wide {
            let _ = writeln!(o, "by shape    d > m (wide): {} — {}", c.solver.name(), c.reason);
        }
        if let Some((c, ridge)) = &rule.strong {
            let _ = writeln!(
                o,
                "by shape    C·mean ‖xᵢ‖² ≤ {STRONG_RIDGE} (here C = {}/m): {} — {}",
                fmt_num(1.0 / ridge),
                c.solver.name(),
                c.reason
            );
        }
    }
    match (&st.chosen, &st.unavailable) {
        (Some(c), _) => _ = writeln!(o, "solver      {} — {}", c.solver.name(), c.reason),
        (None, Some(why)) => _ = writeln!(o, "solver      none in this build — {why}"),
        (None, None) => {}
    }
    o
}

/// A penalty term in plain math with its coefficient multiplied out, e.g. `λ·l2sq(w)` with
/// λ = 1e-4 → `5e-5·‖w‖²`: `l2sq` is ½‖·‖², which a user converting LIBLINEAR's C can miss.
pub(crate) fn penalty_text(r: &crate::check::RegTerm, var: &str) -> String {
    let c = r.coef.value;
    let scalar = |name: &str| r.scalars.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
    let arg = match &r.operator {
        Some(Operator::Diff(_)) => format!("D{var}"),
        Some(Operator::Center(_)) => format!("{var}(I − 11ᵀ/k)"),
        Some(_) => format!("B{var}"),
        None => var.to_string(),
    };
    let times = |k: f64, what: String| if k == 1.0 { what } else { format!("{}·{what}", fmt_num(k)) };
    match r.def.name.as_str() {
        "l1" => times(c, format!("‖{arg}‖₁")),
        "l2sq" => times(c / 2.0, format!("‖{arg}‖²")),
        "elastic" => {
            let a = scalar("α").unwrap_or(0.0);
            format!("{} + {}", times(c, format!("‖{arg}‖₁")), times(c * a / 2.0, format!("‖{arg}‖²")))
        }
        "l2" => times(c, format!("‖{arg}‖₂")),
        "linf" => times(c, format!("‖{arg}‖∞")),
        "l1l2" => times(c, format!("Σᵢ ‖{arg}ᵢ‖₂ (rows)")),
        "l1inf" => times(c, format!("Σᵢ ‖{arg}ᵢ‖∞ (rows)")),
        "group_l2" => times(c, format!("Σ_g ‖{arg}_g‖₂")),
        "group_linf" => times(c, format!("Σ_g ‖{arg}_g‖∞")),
        "nuclear" => times(c, format!("‖{arg}‖_* (sum of singular values)")),
        "logeps" => times(c, format!("Σⱼ log({} + |{arg}ⱼ|)", fmt_num(scalar("ε").unwrap_or(0.0)))),
        _ => times(c, format!("{}  ({} = {})", r.text, r.def.name, r.def.formula_text)),
    }
}

/// Six significant digits (√2 → 1.41421).
fn fmt6(v: f64) -> String {
    format!("{v:.5e}").parse::<f64>().map_or_else(|_| v.to_string(), fmt_num)
}

fn dim_text(d: &crate::check::Dim, model: &Model) -> String {
    match d {
        crate::check::Dim::Features => format!("dim({})", model.features.name),
        crate::check::Dim::Classes => format!("classes({})", model.label.name),
        crate::check::Dim::Fixed(n) => n.to_string(),
    }
}

fn label_text(model: &Model) -> &'static str {
    match model.label_kind {
        crate::stdlib::LabelKind::Labels => "labels (±1; 0/1 and other pairs mapped to −1/+1)",
        crate::stdlib::LabelKind::Real => "real targets",
        crate::stdlib::LabelKind::Classes => "classes (k distinct labels)",
    }
}
