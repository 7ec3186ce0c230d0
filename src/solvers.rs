//! The one registry of solvers: what `solve with NAME(...)` may say, what each solver needs of
//! the model, whether this build compiles it, and its run defaults. The checker reads the
//! names, the analyser the options and requirements, the lowering and the driver the rest;
//! adding a solver is an entry here plus its lowering in `plan::lower`.

/// A solver of docs/algorithms.md.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SolverKind {
    Fobos,
    /// Truncated gradient (Langford, Li & Zhang 2009), the SCD paper's baseline: FOBOS's ℓ1
    /// step with the shrink (gravity) applied every K steps and only to weights within θ of 0.
    Truncated,
    Adagrad,
    Smm,
    Scd,
    Smidas,
    Dc,
    Proxgrad,
    /// The linear SVM as the prox of hinge∘B at 0 (Argyriou et al. §4): the Picard iteration
    /// on the dual, with FISTA momentum.
    Picard,
    /// Dual coordinate descent for hinge and squared hinge with ½‖w‖² (Hsieh et al. 2008,
    /// LIBLINEAR's `-s 3` / `-s 1`): one dual variable a step, O(nnz of the row).
    Dcd,
    /// Truncated Newton with preconditioned conjugate gradients and a line search
    /// (LIBLINEAR's primal solver for `-s 0`/`-s 2`), for a twice-differentiable loss with
    /// ½‖·‖² only.
    Tron,
    /// The primal-dual hybrid gradient method (Chambolle & Pock 2011) for a loss whose
    /// conjugate has a closed-form prox beside any penalty with a prox, neither smooth: the
    /// 1-norm SVM.
    Pdhg,
    /// The augmented Lagrangian method for the hinge with ½‖w‖² (Yan & Li 2020, after SSNAL):
    /// its subproblems by Newton steps on a dense Hessian of the features, its multipliers the
    /// dual variables; on few features.
    Alm,
}

/// What an option's value must be; the analyser checks it and says so when it is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionKind {
    /// A whole number ≥ 1 (epochs, iterations).
    Count,
    /// A whole number ≥ 0.
    Seed,
    /// A positive finite number (η₀, tol, δ).
    Positive,
    /// A positive formula of the step counter `t` (a step schedule).
    Schedule,
    /// 0 or 1.
    Flag,
}

#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: OptionKind,
    /// What it does, for `optc check` and the "no such option" hint.
    pub help: &'static str,
}

/// What a solver needs of the model; the analyser turns a miss into a diagnostic that points
/// at the term to blame.
#[derive(Clone, Copy, Debug)]
pub struct Requirements {
    pub smooth_loss: bool,
    /// Every term separable per coordinate (SCD updates one coordinate at a time).
    pub coordinate_separable: bool,
    /// Only ℓ1 and no constraint (SMIDAS).
    pub l1_only: bool,
    /// Convex objective; `dc` instead needs a non-convex one.
    pub convexity: Convexity,
    /// Exactly hinge + λ·l2sq, nothing else (the SVM as a prox of hinge∘B).
    pub svm_only: bool,
    /// A loss whose dual step is closed-form (hinge, squared hinge) with λ·l2sq only, no
    /// constraint (dual coordinate descent).
    pub dual_cd: bool,
    /// λ·l2sq terms only, λ > 0, no constraint (Newton steps need F twice differentiable
    /// and strongly convex).
    pub l2sq_only: bool,
    /// A loss whose conjugate's prox is closed-form (hinge, squared hinge, squared): the
    /// primal-dual method's dual step.
    pub conjugate_prox: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Convexity {
    Convex,
    NonConvex,
}

#[derive(Clone, Copy, Debug)]
pub struct SolverSpec {
    pub kind: SolverKind,
    pub name: &'static str,
    pub options: &'static [OptionSpec],
    pub requires: Requirements,
    /// This build lowers it to a plan.
    pub compiled: bool,
    /// The epoch (iteration) cap when the model and the command line give none: a run
    /// normally stops earlier, on the certificate.
    pub default_max_epochs: usize,
    /// Epochs between two certificate checks (each costs passes over the data).
    pub check_every: usize,
    /// What it can do besides the model it takes; every command asks here, never by name.
    pub can: Capabilities,
}

/// What a solver can do beyond the models it takes: the one list `--shards`, `--stream`, the
/// intercept checks and the report's wording consult.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capabilities {
    /// It lowers a lazy plan (skipped proxes composed in closed form just before a coordinate is
    /// read) beside the eager one, and the report names which ran.
    pub lazy: bool,
    /// `--shards`: its epochs can be cut into shards on threads and the flushed states averaged.
    pub shards: bool,
    /// Its per-pass work restarts its history after a closed-form catch-up, so run a block at a
    /// time (`--stream`) it is the same algorithm; per-row state it keeps is of the pass.
    pub restarts_each_pass: bool,
    /// Its steps or weights decay, so it rarely certifies a tight gap: the report's hint for an
    /// unfinished run says to leave the solver to optc.
    pub decaying_steps: bool,
    /// Which intercepts it fits.
    pub intercept: Intercepts,
    /// It takes the rows' weights of `E[s·loss(...)]`: each row's loss, derivatives and dual
    /// term carry ωᵢ (docs/algorithms.md §12).
    pub row_weights: bool,
}

/// The intercepts a solver fits: `var b: scalar` unregularized, `μ·l2sq(b)`, and one offset per
/// class (`var b: vec[classes(y)]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Intercepts {
    pub free: bool,
    pub penalised: bool,
    pub per_class: bool,
}

impl Intercepts {
    pub const NONE: Intercepts = Intercepts { free: false, penalised: false, per_class: false };
}

const EPOCHS: OptionSpec =
    OptionSpec { name: "epochs", kind: OptionKind::Count, help: "exactly N epochs, or a cap when `tol` is given" };
const SEED: OptionSpec = OptionSpec { name: "seed", kind: OptionKind::Seed, help: "seed of the row or column order" };
const TOL: OptionSpec =
    OptionSpec { name: "tol", kind: OptionKind::Positive, help: "stop when the certified relative gap is ≤ tol" };
const ETA0: OptionSpec = OptionSpec { name: "eta0", kind: OptionKind::Positive, help: "η₀ of the step η₀/√t" };

/// A batch or coordinate method: no lazy plan, no shards, fits an unregularized intercept.
const BATCH: Capabilities = Capabilities {
    lazy: false,
    shards: false,
    restarts_each_pass: false,
    decaying_steps: false,
    intercept: Intercepts { free: true, penalised: false, per_class: false },
    row_weights: false,
};

const fn needs(smooth_loss: bool, coordinate_separable: bool) -> Requirements {
    Requirements {
        smooth_loss,
        coordinate_separable,
        l1_only: false,
        convexity: Convexity::Convex,
        svm_only: false,
        dual_cd: false,
        l2sq_only: false,
        conjugate_prox: false,
    }
}

pub const REGISTRY: [SolverSpec; 13] = [
    SolverSpec {
        kind: SolverKind::Fobos,
        name: "fobos",
        options: &[
            EPOCHS,
            OptionSpec { name: "step", kind: OptionKind::Schedule, help: "the step η_t as a formula of t" },
            ETA0,
            SEED,
            TOL,
        ],
        requires: needs(false, false),
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { lazy: true, shards: true, decaying_steps: true, row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Truncated,
        name: "truncated",
        options: &[
            EPOCHS,
            OptionSpec { name: "step", kind: OptionKind::Schedule, help: "the step η_t as a formula of t" },
            ETA0,
            OptionSpec {
                name: "every",
                kind: OptionKind::Count,
                help: "K: the gravity K·η·λ is applied every K steps",
            },
            OptionSpec {
                name: "theta",
                kind: OptionKind::Positive,
                help: "θ: only weights with |wⱼ| ≤ θ are truncated (default ∞: the ℓ1 objective itself)",
            },
            SEED,
            TOL,
        ],
        // The truncation is the ℓ1 term's gravity; it needs only subgradients of the loss.
        requires: Requirements { l1_only: true, ..needs(false, false) },
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { lazy: true, decaying_steps: true, row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Adagrad,
        name: "adagrad",
        options: &[
            EPOCHS,
            ETA0,
            OptionSpec { name: "delta", kind: OptionKind::Positive, help: "δ of the scaling" },
            OptionSpec {
                name: "rda",
                kind: OptionKind::Flag,
                help: "1: dual averaging (w from the summed gradients: exact zeros where the optimum has them); 0: the FOBOS step (default)",
            },
            SEED,
            TOL,
        ],
        requires: needs(false, false),
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { lazy: true, shards: true, decaying_steps: true, row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Smm,
        name: "smm",
        options: &[
            EPOCHS,
            OptionSpec { name: "n0", kind: OptionKind::Count, help: "n₀ of the weights √((n₀+1)/(n+n₀))" },
            SEED,
            OptionSpec { name: "average", kind: OptionKind::Flag, help: "return the averaged iterate" },
            TOL,
        ],
        requires: needs(true, false),
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { restarts_each_pass: true, decaying_steps: true, row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Scd,
        name: "scd",
        options: &[
            EPOCHS,
            SEED,
            TOL,
            OptionSpec {
                name: "newton",
                kind: OptionKind::Flag,
                help: "1: Newton-type steps where ℓ″ varies (default); 0: the paper's curvature-bound steps",
            },
        ],
        requires: needs(true, true),
        compiled: true,
        default_max_epochs: 1000,
        check_every: 1,
        can: Capabilities { row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Smidas,
        name: "smidas",
        options: &[
            EPOCHS,
            OptionSpec {
                name: "eta0",
                kind: OptionKind::Positive,
                help: "η₀ of the step η₀/√e, held through epoch e (tuned on a sample unless given)",
            },
            OptionSpec { name: "step", kind: OptionKind::Schedule, help: "the step η_t as a formula of t" },
            SEED,
            TOL,
        ],
        requires: Requirements { l1_only: true, ..needs(true, false) },
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { decaying_steps: true, row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Dc,
        name: "dc",
        options: &[
            EPOCHS,
            OptionSpec { name: "n0", kind: OptionKind::Count, help: "n₀ of the weights" },
            SEED,
            OptionSpec { name: "average", kind: OptionKind::Flag, help: "return the averaged iterate" },
            OptionSpec { name: "batch", kind: OptionKind::Flag, help: "reweighted ℓ1 solved to tolerance" },
            TOL,
        ],
        requires: Requirements { convexity: Convexity::NonConvex, ..needs(true, false) },
        compiled: true,
        default_max_epochs: 100,
        check_every: 1,
        can: Capabilities { restarts_each_pass: true, intercept: Intercepts::NONE, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Proxgrad,
        name: "proxgrad",
        options: &[OptionSpec { name: "iterations", kind: OptionKind::Count, help: "the same as epochs" }, EPOCHS, TOL],
        requires: needs(true, false),
        compiled: true,
        default_max_epochs: 20000,
        // An iteration costs one pass, a check two or three.
        check_every: 10,
        // Softmax's per-class offsets take a gradient step beside W's (`multiclass.rs`).
        can: Capabilities {
            intercept: Intercepts { free: true, penalised: false, per_class: true },
            row_weights: true,
            ..BATCH
        },
    },
    SolverSpec {
        kind: SolverKind::Picard,
        name: "picard",
        options: &[OptionSpec { name: "iterations", kind: OptionKind::Count, help: "the same as epochs" }, EPOCHS, TOL],
        requires: Requirements { svm_only: true, ..needs(false, false) },
        compiled: true,
        default_max_epochs: 50000,
        // An iteration costs two passes (margins, then w = −μBᵀv), a check two.
        check_every: 10,
        can: Capabilities { intercept: Intercepts::NONE, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Dcd,
        name: "dcd",
        options: &[
            EPOCHS,
            SEED,
            TOL,
            OptionSpec {
                name: "shrinking",
                kind: OptionKind::Flag,
                help: "1: LIBLINEAR's shrinking, rows stuck at a bound are left out for a while (default); 0: every row every epoch",
            },
        ],
        requires: Requirements { dual_cd: true, ..needs(false, false) },
        compiled: true,
        // Epochs over the rows shrinking keeps are cheap and many.
        default_max_epochs: 10000,
        // An epoch costs two passes over the rows still in (⟨xᵢ, w⟩, then w += Δ·xᵢ), a check
        // two over all of them (the margins, then Xᵀu): a check is due once the epochs have
        // visited enough rows, or shrinking says it converged (`Plan::cadence`).
        check_every: 1,
        // The rows' weights: row i's box, diagonal or logistic dual at C·ωᵢ.
        can: Capabilities {
            intercept: Intercepts { free: true, penalised: true, per_class: false },
            row_weights: true,
            ..BATCH
        },
    },
    SolverSpec {
        kind: SolverKind::Tron,
        name: "tron",
        options: &[OptionSpec { name: "iterations", kind: OptionKind::Count, help: "the same as epochs" }, EPOCHS, TOL],
        requires: Requirements { l2sq_only: true, ..needs(true, false) },
        compiled: true,
        default_max_epochs: 1000,
        // A Newton iteration costs a pass per CG step (often ten or more), a check two or three;
        // checking every second iteration was no faster on a9a, w8a, dna and satimage.
        check_every: 1,
        can: Capabilities {
            intercept: Intercepts { free: true, penalised: true, per_class: true },
            row_weights: true,
            ..BATCH
        },
    },
    SolverSpec {
        kind: SolverKind::Pdhg,
        name: "pdhg",
        options: &[
            OptionSpec { name: "iterations", kind: OptionKind::Count, help: "the same as epochs" },
            EPOCHS,
            TOL,
            OptionSpec {
                name: "weight",
                kind: OptionKind::Positive,
                help: "ω, the primal weight: the primal step over the dual step is 1/ω² (default 1)",
            },
        ],
        requires: Requirements { conjugate_prox: true, ..needs(false, false) },
        compiled: true,
        default_max_epochs: 100000,
        // An iteration costs one pass over the rows, a check three or four (the dual point
        // corrected on the support takes its own passes), and a certificate takes thousands.
        check_every: 50,
        // The rows' weights scale the coupling's rows: with the diagonal steps of a per-coordinate
        // prox only (the analysis refuses them beside a prox of the whole vector).
        can: Capabilities { row_weights: true, ..BATCH },
    },
    SolverSpec {
        kind: SolverKind::Alm,
        name: "alm",
        options: &[OptionSpec { name: "iterations", kind: OptionKind::Count, help: "the same as epochs" }, EPOCHS, TOL],
        requires: Requirements { svm_only: true, ..needs(false, false) },
        compiled: true,
        // Tens of epochs on the sets measured: σ doubles each, and the method converges
        // linearly at a rate that improves with σ.
        default_max_epochs: 200,
        // An epoch is a few Newton steps, each two passes and a factor; a check two passes.
        check_every: 1,
        // The rows' weights: row i's box [0, C·ωᵢ].
        can: Capabilities {
            intercept: Intercepts { free: true, penalised: true, per_class: false },
            row_weights: true,
            ..BATCH
        },
    },
];

/// `auto` lets the compiler choose (docs/algorithms.md §9).
/// Most coordinates a dense Newton system is formed over: the certificate's refinement holds
/// its Hessian (n² entries, and up to n² work a sweep of its model) over at most this many, and
/// the analysis counts a model with at most this many features as having few (its first check
/// then solves the whole problem). Here, below both, so that the two read one number.
pub const DENSE_NEWTON_MAX: usize = 1500;

pub const AUTO: &str = "auto";

impl SolverKind {
    pub fn spec(self) -> &'static SolverSpec {
        REGISTRY.iter().find(|s| s.kind == self).expect("every kind is registered")
    }

    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn from_name(name: &str) -> Option<SolverKind> {
        REGISTRY.iter().find(|s| s.name == name).map(|s| s.kind)
    }

    pub fn implemented(self) -> bool {
        self.spec().compiled
    }

    pub fn default_max_epochs(self) -> usize {
        self.spec().default_max_epochs
    }

    pub fn check_every(self) -> usize {
        self.spec().check_every
    }

    /// What it can do beyond the models it takes.
    pub fn can(self) -> Capabilities {
        self.spec().can
    }

    pub fn option(self, name: &str) -> Option<&'static OptionSpec> {
        self.spec().options.iter().find(|o| o.name == name)
    }

    pub fn option_names(self) -> Vec<&'static str> {
        self.spec().options.iter().map(|o| o.name).collect()
    }
}

/// Every name `solve with` accepts, `auto` last.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|s| s.name).chain([AUTO]).collect()
}

/// The solvers that can do `what`, in the registry's order, for messages.
pub fn that_can(what: impl Fn(Capabilities) -> bool) -> Vec<SolverKind> {
    REGISTRY.iter().filter(|s| what(s.can)).map(|s| s.kind).collect()
}

impl std::fmt::Display for SolverKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A solver equals its name: `plan.info.solver == "dcd"`.
impl PartialEq<&str> for SolverKind {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

/// A solver is written as its name (the `--json` report's `"solver"`).
impl serde::Serialize for SolverKind {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The solvers this build compiles, for messages.
pub fn compiled_names() -> Vec<&'static str> {
    REGISTRY.iter().filter(|s| s.compiled).map(|s| s.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_registered_once_by_a_unique_name() {
        let mut names = names();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), REGISTRY.len() + 1);
        for s in &REGISTRY {
            assert_eq!(SolverKind::from_name(s.name), Some(s.kind));
            let mut opts: Vec<_> = s.kind.option_names();
            opts.sort();
            opts.dedup();
            assert_eq!(opts.len(), s.options.len(), "{}: an option twice", s.name);
        }
    }
}
