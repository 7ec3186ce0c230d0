//! Stage 3: the structure of a checked model. Smoothness of the loss, convexity and
//! separability of each term, whether a regularizer is composite ω∘B, which prox applies, and
//! which solver runs it (docs/algorithms.md §9) — with the reason, since users ask "why this one?".

pub mod dictionary;
mod file_facts;
mod fits;
mod forced;
mod prox;
mod report;
mod ridge;
mod shape;
mod weights;

pub use file_facts::{FileFacts, GroupLayout};
use fits::{dual_cd_fits, is_svm, primal_dual_fits};
use forced::*;
use prox::*;
pub use prox::{Composite, CompositeProx, OperatorSpec};
pub(crate) use report::penalty_text;
pub use report::report;
use shape::shape_rule;
pub use shape::{ShapeRule, FEW_FEATURES, STRONG_RIDGE};

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
/// at τ·(l1 + coef·ηⱼ) (docs/algorithms.md §8).
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
    /// `pdhg(weight = ω)`: the primal weight (None: 1).
    pub weight: Option<f64>,
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
            weight: None,
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

/// How the regularizer and the constraints are applied together: the four shapes of prox the
/// compiled solvers take. Exactly one holds, so lowering matches on it once.
#[derive(Clone, Debug)]
pub enum ProxShape {
    /// One closed-form prox per coordinate, the whole regularizer and constraint.
    Coordinate(CoordinateProx),
    /// A per-coordinate closed form followed by one routine on the whole vector (a norm, a ball,
    /// the simplex): batch solvers apply it to all of w.
    Vector(CoordinateProx, VectorTerm),
    /// A composite term ω∘B (alone, or with ½‖·‖² whose scaling composes with it): batch
    /// solvers apply its prox by the runtime's Picard fixed point, or, for `group_l2` over
    /// groups its file showed disjoint, by the closed-form shrink of each group.
    Composite(CoordinateProx, Composite),
    /// A multiclass W: a prox per entry, then (optionally) one routine on each row (ℓ1/ℓ2 or
    /// ℓ1/∞ rows) or on all of W.
    Multiclass(CoordinateProx, Option<VectorTerm>),
}

impl Structure {
    /// The per-coordinate prox, when it is the whole of the prox.
    pub fn coordinate(&self) -> Option<CoordinateProx> {
        match self.prox {
            Some(ProxShape::Coordinate(p)) => Some(p),
            _ => None,
        }
    }
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
    /// The shape of the regularizer and constraints' prox, which lowering builds on; None when
    /// the terms have no closed form together (`terms` says why, term by term).
    pub prox: Option<ProxShape>,
    pub recommended: Choice,
    /// None when this build cannot run the model yet; `unavailable` says why.
    pub chosen: Option<Choice>,
    pub unavailable: Option<String>,
    pub settings: Settings,
    /// When the default depends on the data's shape (docs/algorithms.md §9): the solver for few
    /// features against the one chosen above, for the run to pick once the data is bound.
    pub by_shape: Option<ShapeRule>,
}

/// The solvers that fit each kind of intercept ([`crate::solvers::Intercepts`]), as the
/// diagnostics list them; a test holds each list to the registry.
const FREE_INTERCEPT: &str = "scd, proxgrad, tron, dcd, alm, pdhg, fobos, adagrad, smm, smidas and truncated";
const PENALISED_INTERCEPT: &str = "dcd, alm and tron";
const PER_CLASS_INTERCEPT: &str = "tron and proxgrad";

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
    let group_shrink = composite_prox.as_ref().is_some_and(|(_, c)| c.prox == CompositeProx::GroupShrink);
    let smooth = loss.smooth;
    let newton_only = loss.known().is_some_and(crate::stdlib::KnownLoss::newton_only);

    let all_coordinate = terms.iter().chain(&constraints).all(|t| t.separability == Separability::Coordinate);
    let nuclear = model.regs.iter().any(|r| r.def.prox == ProxKind::Svt);
    let recommended = if !convex {
        Choice {
            solver: SolverKind::Dc,
            reason: "a non-convex concave-in-|w| penalty: online DC is the method here with guarantees for it".into(),
        }
    } else if smooth.is_none()
        && primal_dual_fits(model)
        && !dual_cd_fits(model)
        && (coordinate.is_some() || !model.loss.weighted)
        && (group_shrink || (!composite && composite_prox.is_none() && !nuclear && split.is_ok()))
    {
        Choice {
            solver: SolverKind::Pdhg,
            reason: format!(
                "`{}` is not smooth, nor is the penalty ½‖w‖² alone: the primal-dual hybrid gradient method takes the loss through its conjugate's prox (closed form, row by row) and the penalty through its own, O(nnz) an iteration, certified by its dual iterate",
                loss.name
            ),
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
    } else if dual_cd_fits(model)
        && !matches!(
            model.loss.def.known(),
            Some(crate::stdlib::KnownLoss::Logistic | crate::stdlib::KnownLoss::SquaredEpsInsensitive)
        )
    {
        Choice { solver: SolverKind::Dcd, reason: fits::dual_cd_reason(model) }
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
        // ½‖·‖² alone (docs/algorithms.md §11): Newton-CG, for a scalar loss and for softmax on W.
        newton
    } else if smooth.is_some() && all_coordinate {
        Choice {
            solver: SolverKind::Scd,
            reason: "smooth loss and a coordinate-separable regularizer: parameter-free, O(nnz) per epoch".into(),
        }
    } else if newton_only && all_coordinate {
        Choice {
            solver: SolverKind::Scd,
            reason: format!(
                "`{}`'s ℓ″ has no bound, and the penalty is coordinate-separable: SCD's Newton-type steps (newGLMNET) with their line search on F, O(nnz) per epoch",
                loss.name
            ),
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
        problems.extend(forced::curvature_bound_refused(kind, &settings, loss, req.span));
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

    // The rows' weights, before the checks below look at the solver they lead to.
    if let (Some(c), true) = (chosen.clone(), model.loss.weighted) {
        match weights::steer(model, c, forced.is_some(), is_matrix, convex) {
            Ok(c) => chosen = Some(c),
            Err(why) => {
                unavailable = Some(why);
                chosen = None;
            }
        }
    }
    // A composite prox (Picard, or the group shrink) runs once per iteration: only the batch
    // solver has it.
    if let (Some(c), Some(_)) = (&chosen, &composite_prox) {
        if c.solver != SolverKind::Proxgrad && !(c.solver == SolverKind::Pdhg && group_shrink) {
            let what = if group_shrink { "the ℓ2 shrink of each group" } else { "the Picard prox of ω∘B" };
            unavailable = Some(format!(
                "{what} runs in proxgrad (a smooth loss){} in this build; `{}` does not run it",
                if group_shrink { " and pdhg" } else { "" },
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
    // plans; Picard's dual (the SVM as a prox at 0) and DC's reweighting have no place for it
    // (dual CD's refusal, which says why, comes first).
    if let (Some(c), Some(b)) = (&chosen, &model.intercept) {
        let fits = c.solver.can().intercept;
        if !(fits.free || fits.penalised && model.intercept_l2.is_some()) {
            unavailable = Some(format!(
                "`{}` does not fit the intercept `{}` in this build ({FREE_INTERCEPT} do)",
                c.solver.name(),
                b.name
            ));
            chosen = None;
        }
    }
    // One intercept per class: tron's Newton system takes them as k more coordinates, proxgrad
    // as k more gradient coordinates.
    if let (Some(c), true) = (&chosen, model.intercept_per_class) {
        let why = if model.intercept_l2.is_some() {
            Some("a penalised per-class intercept is not compiled by this build (drop its `l2sq` term: unpenalised, tron fits it)".to_string())
        } else if !c.solver.can().intercept.per_class {
            Some(format!(
                "per-class intercepts are compiled for {PER_CLASS_INTERCEPT} in this build; `{}` does not fit them",
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
        if !c.solver.can().intercept.penalised {
            unavailable = Some(format!(
                "`{}` does not fit a penalised intercept (`{}`) in this build ({PENALISED_INTERCEPT} do)",
                c.solver.name(),
                r.text
            ));
            chosen = None;
        }
    }
    // The primal-dual method weighs its rows in its diagonal steps; a prox of the whole vector
    // takes one step for all, which the weights' coupling would need bounded anew.
    if let (Some(c), true) = (&chosen, model.loss.weighted && (vector.is_some() || composite_prox.is_some())) {
        if c.solver == SolverKind::Pdhg {
            unavailable = Some(
                "pdhg takes the rows' weights beside a per-coordinate penalty only in this build (ℓ1, the elastic net, a box), not beside a prox of the whole vector".into(),
            );
            chosen = None;
        }
    }
    // A vector prox is applied to the whole vector each step: only the batch solver has it.
    if let (Some(c), Some((_, term))) = (&chosen, &vector) {
        if !matches!(c.solver, SolverKind::Proxgrad | SolverKind::Pdhg) {
            unavailable = Some(format!(
                "the prox of {} acts on the whole vector, and only proxgrad (a smooth loss) and pdhg apply it in this build; `{}` does not",
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
    let by_shape = chosen
        .as_ref()
        .filter(|_| forced.is_none())
        .filter(|_| !ridge::unpenalised(model))
        .and_then(|c| shape_rule(model, c, ridge))
        .and_then(|r| weights::shape_rule(model, r));
    Ok(Structure {
        smooth,
        lipschitz: loss.lipschitz,
        derivative: loss.derivative.clone(),
        terms,
        constraints,
        convex,
        // Overlapping (or unread) groups need the fixed point as much as ω(B w) does.
        composite: composite || model.regs.iter().any(|r| r.groups.is_some() && !disjoint_groups(r, files)),
        prox: match (coordinate, vector, multiclass, composite_prox) {
            (Some(p), ..) => Some(ProxShape::Coordinate(p)),
            (_, Some((p, t)), ..) => Some(ProxShape::Vector(p, t)),
            (_, _, Some((p, rows)), _) => Some(ProxShape::Multiclass(p, rows)),
            (.., Some((p, c))) => Some(ProxShape::Composite(p, c)),
            _ => None,
        },
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

/// `solve with auto(epochs = N)`: the budget the model itself gives.
fn auto_epochs(model: &Model) -> Option<usize> {
    let req = model.solver.as_ref().filter(|s| s.name == "auto")?;
    let o = req.options.iter().find(|o| o.name == "epochs")?;
    let v = symbolic::simplify(&o.value).as_const()?;
    (v >= 1.0 && v.fract() == 0.0 && v < 1e15).then_some(v as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The solvers a diagnostic lists, as a sorted set of names.
    fn listed(text: &str) -> Vec<String> {
        let mut names: Vec<String> =
            text.replace(" and ", ", ").split(", ").map(str::trim).map(str::to_string).collect();
        names.sort();
        names
    }

    fn registered(what: impl Fn(crate::solvers::Intercepts) -> bool) -> Vec<String> {
        let mut names: Vec<String> =
            crate::solvers::that_can(|c| what(c.intercept)).iter().map(|s| s.name().to_string()).collect();
        names.sort();
        names
    }

    #[test]
    fn the_intercept_diagnostics_list_what_the_registry_says() {
        assert_eq!(listed(FREE_INTERCEPT), registered(|i| i.free));
        assert_eq!(listed(PENALISED_INTERCEPT), registered(|i| i.penalised));
        assert_eq!(listed(PER_CLASS_INTERCEPT), registered(|i| i.per_class));
    }

    #[test]
    fn the_weights_diagnostic_lists_what_the_registry_says() {
        let mut names: Vec<String> =
            crate::solvers::that_can(|c| c.row_weights).iter().map(|s| s.name().to_string()).collect();
        names.sort();
        assert_eq!(listed(weights::ROW_WEIGHTS), names);
    }
}
