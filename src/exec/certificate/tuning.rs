//! Every number that tunes the certificate's refinements, in one value: [`TUNING`].

/// The tuning of the certificate: when a check refines, how far each refinement goes, and the
/// bounds that keep a check's cost in hand. Each number's measurements (the runs that chose
/// it, on named data sets) are in docs/benchmarks_l1.md, "The certificate's tuning".
///
/// | name | default | what it bounds, and why |
/// |---|---:|---|
/// | `eager_gap` | 0.1 | An eager run refines at a check whatever F did once the gap is within this fraction of F, or while the support is small enough (at most `refine_all` non-zeros) for the dense refinement to cost little. |
/// | `extrapolation_k` | 5 | How many differences the extrapolation combines. |
/// | `refine_stall` | 0.1 | In a run, the refinement is tried when F went down by less than this fraction of the gap since the last check: while F still falls fast the primal is what the gap waits for (and the signs of w, which the Newton steps keep, are not yet those of the optimum); once F stalls against the gap, the dual point is. |
/// | `refine_first` | 1e-2 | At the first check of a run (nothing to compare F with), the refinement is tried when the gap is within this fraction of F already: after a warm start near the optimum, not after a cold one. |
/// | `exact_gap` | 0.5 | A wide support's refinement takes exact Newton steps once the gap is within this fraction of F. |
/// | `settle_gap` | 0.9 | A support just past `support.rs`'s exact bound is settled (`settle.rs`) once the gap is within this fraction of F. |
/// | `refine_max` | 1500 | Most coordinates a Newton refinement solves for: its dense Hessian holds n² entries, and every step of its model's minimisation costs up to n² a sweep or a conjugate-gradient iteration (`solvers::DENSE_NEWTON_MAX`, which the analysis's few-features rule reads too). |
/// | `refine_rounds` | 5 | Rounds of a refinement, at most: each picks V again (the non-zero coordinates of its point and the zero ones that violate optimality there) and solves F restricted to V. |
/// | `refine_rounds_eager` | 3 | Rounds of a refinement at a check whose point the solver continues from: the epochs that follow bring in the remaining violators more cheaply than a wider V would. |
/// | `refine_slack` | 0.1 | A round ends once the duality gap of F restricted to V is this fraction of the gap asked for: the rest of the gap is left to the coordinates outside V. |
/// | `refine_steps` | 20 | Proximal Newton steps per round, at most (each a Hessian on V, a pass over the rows of X_V and a line search over the rows). |
/// | `refine_chord` | 8 | A Newton refinement's step reuses the last whole step's factor (a chord step, no new Hessian) when the gap times its last ratio (gap/gap before that step) times this is within the gap asked for: near the optimum a chord step shrinks the gap by about that ratio (the chord steps measured on w8a and a9a, ℓ2-logistic + b, shrank it by 5–7 times less), so it is taken only where it should certify, and otherwise the step is Newton's. |
/// | `refine_all` | 512 | A round takes every violating coordinate when V then holds at most this many. |
/// | `refine_grow_passes` | 32 | Beside l1, the first round from w = 0 takes the `refine_enter` worst violators instead of every one when a Newton step's Hessian on every column costs more than this many passes over X (and `refine_dense_share` of X is stored); later rounds take every violator. At a cold start every column correlates with the residual (a dense 15,000 × 200 lasso + b: 200 violators at w = 0, 20 non-zeros at the optimum; 0.031 s → 0.015). An elastic net + b with 127 of 200 non-zeros pays a round: 0.023 s → 0.032 (0.045 when every round grew V by doubling). |
/// | `refine_dense_share` | 0.5 | The share of X's entries stored from which `refine_grow_passes` and `refine_eager_epochs` weigh a round by its support's share of the whole Hessian, (s/d)²: true of dense rows, whose columns are alike, not of long sparse rows (debian-desc's whole Hessian is 65 passes, debian-files' 1,442, with 5e-4 and 2e-4 of their entries stored and the frequent columns in the support). |
/// | `refine_eager_epochs` | 16 | On rows that store most columns (see `refine_grow_passes`), a polishing run refines eagerly (before F stalls) only while a round on the support costs at most this many epochs (its Hessian's share and its factor, against 2·nnz an epoch): while F still falls the epochs are cheaper. An elastic net + b on a dense 2,000 × 5,000 set (3,200 non-zeros, a round about 1,000 epochs): 2.07 s with two eager rounds, 0.34 s and 6 epochs without. |
/// | `refine_defer_epochs` | 4 | A round that costs more epochs than this (`refine::round_cost`) waits while the run's own epochs reach the target within this many at the pace of its gap, or, at a run's first check after epochs, one check to measure that pace: about the most epochs a wrong guess costs. At 8, debian-desc's ℓ1 squared hinge + b at C = 1 waited at a pace that then stalled, 12 → 18 epochs; at 4 it and the ℓ1-logistic rows of debian-desc and debian-files at C = 10 take their epochs of before. |
/// | `refine_enter` | 32 | Violating coordinates a round brings into V, at least (at most as many as V holds already, so V at most doubles a round: the Hessian costs Σᵢ nnz(xᵢ restricted to V)²). |
/// | `refine_residual` | 1e-9 | A round has converged when no coordinate of V is further than this fraction of l1 (or of the largest gradient, without l1) from its optimality condition: the scaling s of the dual point then costs at most this fraction of l1‖w‖₁. |
/// | `model_rounds` | 20 | Rounds of a model's minimisation, at most: coordinate-descent sweeps, then conjugate gradients on the non-zero coordinates until they stop at no wall. |
/// | `model_forcing` | 0.1 | The model is minimised once no coordinate violates its optimality condition by more than this fraction of the worst violation at v: an inexact Newton step whose forcing term is relative to the optimality of v keeps Newton's fast rate. |
/// | `model_forcing_squared` | 1e-9 | `model_forcing` for the squared loss, whose model is F itself (its Hessian is constant): solved to rounding (sweeps of n² on the model, against a pass over X), its step ends the round. A dense 15,000 × 20 lasso + b took three steps at 0.1, each a pass for the gradient and one for the line search; one at this. |
/// | `model_sweeps` | 2 | Coordinate-descent sweeps of a round. |
/// | `model_cg_steps` | 200 | Conjugate-gradient iterations of a round, at most (and at most twice the coordinates). |
/// | `model_cg_tol` | 1e-6 | Conjugate gradients stop once the residual is this fraction of the first. |
/// | `model_tol` | 1e-3 | A step of conjugate gradients that lowers the model by less than this fraction of what its first round did ends them: on nearly singular H they go on for hundreds of steps gaining nothing. |
/// | `armijo` | 1e-2 | Armijo's constant: a step is taken when F falls by this fraction of Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁) (every refinement's line search, `search.rs`). |
/// | `refine_min_step` | 1e-12 | The dense refinement's (and softmax's) line search shortens the step down to this before it gives up. |
/// | `support_steps` | 4 | Newton steps of a refinement, at most. |
/// | `support_cg_steps` | 50 | Conjugate-gradient iterations of one Newton step, at most. |
/// | `support_budget_passes` | 150 | What a refinement may cost, in passes over X: its Hessian-vector products cost two passes over X_V each, and a wide support of a stochastic iterate (FOBOS on debian-files after two epochs: 16,665 non-zeros, most of X) would otherwise cost a thousand passes a check. |
/// | `support_exact_max` | 6000 | Supports up to this many coordinates get exact Newton steps: the dense Hessian on them (8·n² bytes: 288 MB at the bound) factored by Cholesky. |
/// | `support_settle_max` | 9000 | A support wider than `support_exact_max`, up to this, is settled by `settle.rs`'s ADMM steps near the optimum, and then gets exact steps: debian-files at C = 100 holds 6,500–6,650 columns there. |
/// | `support_exact_steps` | 6 | Exact Newton steps of a round, at most. |
/// | `support_exact_budget` | 10 | Exact Newton steps of a refinement, at most, over all its rounds. |
/// | `support_exact_rounds` | 5 | Rounds of exact steps: the support, then the support with the zero coordinates that violate optimality at the point it reached. |
/// | `support_slow_round` | 0.5 | A round of exact steps that leaves more than this fraction of the gap the round before left ends the check's rounds. |
/// | `support_exact_enter` | 1024 | Violating zero coordinates a round brings in, at most (the worst first). |
/// | `support_settled` | 1e-2 | A round has solved its support once a step lowers F by less than this fraction of the gap left at its point: the rest of the gap is the zero coordinates', and the next round brings them in. |
/// | `support_cg_least` | 10 | Fewer CG iterations a step than this, within the budget, and the refinement is not tried. |
/// | `support_cg_tol` | 1e-6 | CG stops once the preconditioned residual rᵀM⁻¹r is this fraction of the first. |
/// | `support_min_step` | 1e-6 | The line search halves the step down to this, at most twenty trials. |
/// | `face_solves` | 4 | Solves of a step's face, at most: each adds the coordinates the last one carried across zero. |
/// | `face_crossings` | 256 | A step that carries more coordinates than this across zero is not taken exactly: its point is far from the optimum's support, and each face solve costs a triangular solve per such coordinate. |
/// | `face_held_steps` | 25 | Conjugate-gradient iterations of a step preconditioned by an earlier factor, at most, and where they stop: once rᵀP⁻¹r is this fraction of the first, an inexact Newton step with a forcing term of 1e-2. |
/// | `face_held_tol` | 1e-4 | with `face_held_steps` above: Conjugate-gradient iterations of a step preconditioned by an earlier factor, at most, and where they stop: once rᵀP⁻¹r is this fraction of the first, an inexact Newton step with a forcing term of 1e-2. |
/// | `face_held` | 512 | Rows of a held factor a face holds at zero, at most (the coordinates that left V or do not move): each costs a solve with the factor once a step, 10–20 ms at 4,400 columns. |
/// | `face_border_max` | 512 | Coordinates new to V a held factor is bordered with, at most: the border costs a solve with the factor per coordinate. |
/// | `face_ridges` | 0, 1e-10, 1e-8, 1e-6 | The ridges a face step's Cholesky factor (and its bordered Schur complement) tries in turn, as fractions of the largest diagonal entry: near-duplicate columns leave the matrix singular to rounding. |
/// | `settle_steps` | 8 | Proximal Newton steps of a settling, at most. |
/// | `settled_gap` | 5e-3 | The settling ends once the gap is within this fraction of F: the face steps finish from there. |
/// | `settle_iterations` | 100 | ADMM iterations of one subproblem, and ρ as a multiple of the median of H's diagonal. |
/// | `settle_rho` | 0.1 | with `settle_iterations` above: ADMM iterations of one subproblem, and ρ as a multiple of the median of H's diagonal. |
/// | `settle_warm_iterations` | 50 | ADMM iterations of a later step's subproblem, started from the multipliers the step before ended with: near the optimum they change little between steps, and the first iterations' swings come from a cold start. |
/// | `settle_relax` | 1.6 | ADMM's over-relaxation. |
/// | `settle_near_violation` | 0.999 | A zero column with \|∇ⱼf\| above this fraction of λ joins V. |
/// | `settle_min_step` | 1e-6 | The line search halves the step down to this, at most. |
/// | `settle_halvings` | 20 | Halvings of a one-coordinate step, at most (to 1e-6 of its length). |
/// | `settle_coordinates` | 1024 | Coordinates that take one-coordinate Newton steps after each settling step, the worst violators of optimality, and the steps each takes. |
/// | `settle_coordinate_steps` | 3 | with `settle_coordinates` above: Coordinates that take one-coordinate Newton steps after each settling step, the worst violators of optimality, and the steps each takes. |
/// | `offset_steps` | 100 | Newton iterations on the offset, at most. |
/// | `offset_resolution` | 1e-12 | The offset's Newton iterations stop once a step moves it by less than this times 1 + \|t\|: the sum of ℓ′ over the rows is then at its rounding (about 1e-9 on w8a's 49,749 rows, a step of 1e-12), and the steps after it only bisect that noise (17 iterations from w = 0 on w8a at 1e-15, 7 at 1e-12); `balance` removes what is left of Σᵢ uᵢ. |
/// | `offset_label_groups` | 8 | From equal margins (w = 0) the offset's iterations run over the distinct labels, each with its rows' summed weight, when there are at most this many (classes); each row looks through them once. |
/// | `softmax_hessian_work_max` | 4e9 | The most multiply-adds one Hessian may take, Σᵢ (k·nnzᵢ)²/2: about 2 s on a 2-core machine (satimage's, 4,435 dense rows of 36 features and 6 classes, is 1.0e8 and a step about 0.07 s). |
pub(crate) struct RefineTuning {
    /// An eager run refines at a check whatever F did once the gap is within this fraction of F, or while the support is small enough (at most `refine_all` non-zeros) for the dense refinement to cost little.
    pub(crate) eager_gap: f64,
    /// How many differences the extrapolation combines.
    pub(crate) extrapolation_k: usize,
    /// In a run, the refinement is tried when F went down by less than this fraction of the gap since the last check: while F still falls fast the primal is what the gap waits for (and the signs of w, which the Newton steps keep, are not yet those of the optimum); once F stalls against the gap, the dual point is.
    pub(crate) refine_stall: f64,
    /// At the first check of a run (nothing to compare F with), the refinement is tried when the gap is within this fraction of F already: after a warm start near the optimum, not after a cold one.
    pub(crate) refine_first: f64,
    /// A wide support's refinement takes exact Newton steps once the gap is within this fraction of F.
    pub(crate) exact_gap: f64,
    /// A support just past `support.rs`'s exact bound is settled (`settle.rs`) once the gap is within this fraction of F.
    pub(crate) settle_gap: f64,
    /// Most coordinates a Newton refinement solves for: its dense Hessian holds n² entries, and every step of its model's minimisation costs up to n² a sweep or a conjugate-gradient iteration.
    pub(crate) refine_max: usize,
    /// Rounds of a refinement, at most: each picks V again (the non-zero coordinates of its point and the zero ones that violate optimality there) and solves F restricted to V.
    pub(crate) refine_rounds: usize,
    /// Rounds of a refinement at a check whose point the solver continues from: the epochs that follow bring in the remaining violators more cheaply than a wider V would.
    pub(crate) refine_rounds_eager: usize,
    /// A round ends once the duality gap of F restricted to V is this fraction of the gap asked for: the rest of the gap is left to the coordinates outside V.
    pub(crate) refine_slack: f64,
    /// Proximal Newton steps per round, at most (each a Hessian on V, a pass over the rows of X_V and a line search over the rows).
    pub(crate) refine_steps: usize,
    /// A Newton refinement's step reuses the last whole step's factor (a chord step, no new Hessian) when the gap times its last ratio (gap/gap before that step) times this is within the gap asked for: near the optimum a chord step shrinks the gap by about that ratio (the chord steps measured on w8a and a9a, ℓ2-logistic + b, shrank it by 5–7 times less), so it is taken only where it should certify, and otherwise the step is Newton's.
    pub(crate) refine_chord: f64,
    /// A round takes every violating coordinate when V then holds at most this many.
    pub(crate) refine_all: usize,
    /// Violating coordinates a round brings into V, at least (at most as many as V holds already, so V at most doubles a round: the Hessian costs Σᵢ nnz(xᵢ restricted to V)²).
    pub(crate) refine_enter: usize,
    /// Beside l1, the first round from w = 0 takes the `refine_enter` worst violators instead of every one when a Newton step's Hessian on every column costs more than this many passes over X (and `refine_dense_share` of X is stored); later rounds take every violator. At a cold start every column correlates with the residual (a dense 15,000 × 200 lasso + b: 200 violators at w = 0, 20 non-zeros at the optimum; 0.031 s → 0.015). An elastic net + b with 127 of 200 non-zeros pays a round: 0.023 s → 0.032 (0.045 when every round grew V by doubling).
    pub(crate) refine_grow_passes: f64,
    /// On rows that store most columns (see `refine_grow_passes`), a polishing run refines eagerly (before F stalls) only while a round on the support costs at most this many epochs (its Hessian's share and its factor, against 2·nnz an epoch): while F still falls the epochs are cheaper. An elastic net + b on a dense 2,000 × 5,000 set (3,200 non-zeros, a round about 1,000 epochs): 2.07 s with two eager rounds, 0.34 s and 6 epochs without.
    pub(crate) refine_eager_epochs: f64,
    /// A round that costs more epochs than this (`refine::round_cost`) waits while the run's own epochs reach the target within this many at the pace of its gap, or, at a run's first check after epochs, one check to measure that pace: about the most epochs a wrong guess costs. At 8, debian-desc's ℓ1 squared hinge + b at C = 1 waited at a pace that then stalled, 12 → 18 epochs; at 4 it and the ℓ1-logistic rows of debian-desc and debian-files at C = 10 take their epochs of before.
    pub(crate) refine_defer_epochs: f64,
    /// The share of X's entries stored from which `refine_grow_passes` and `refine_eager_epochs` weigh a round by its support's share of the whole Hessian, (s/d)²: true of dense rows, whose columns are alike, not of long sparse rows (debian-desc's whole Hessian is 65 passes, debian-files' 1,442, with 5e-4 and 2e-4 of their entries stored and the frequent columns in the support).
    pub(crate) refine_dense_share: f64,
    /// A round has converged when no coordinate of V is further than this fraction of l1 (or of the largest gradient, without l1) from its optimality condition: the scaling s of the dual point then costs at most this fraction of l1‖w‖₁.
    pub(crate) refine_residual: f64,
    /// Rounds of a model's minimisation, at most: coordinate-descent sweeps, then conjugate gradients on the non-zero coordinates until they stop at no wall.
    pub(crate) model_rounds: usize,
    /// The model is minimised once no coordinate violates its optimality condition by more than this fraction of the worst violation at v: an inexact Newton step whose forcing term is relative to the optimality of v keeps Newton's fast rate.
    pub(crate) model_forcing: f64,
    /// `model_forcing` for the squared loss, whose model is F itself (its Hessian is constant): solved to rounding (sweeps of n² on the model, against a pass over X), its step ends the round. A dense 15,000 × 20 lasso + b took three steps at 0.1, each a pass for the gradient and one for the line search; one at this.
    pub(crate) model_forcing_squared: f64,
    /// Coordinate-descent sweeps of a round.
    pub(crate) model_sweeps: usize,
    /// Conjugate-gradient iterations of a round, at most (and at most twice the coordinates).
    pub(crate) model_cg_steps: usize,
    /// Conjugate gradients stop once the residual is this fraction of the first.
    pub(crate) model_cg_tol: f64,
    /// A step of conjugate gradients that lowers the model by less than this fraction of what its first round did ends them: on nearly singular H they go on for hundreds of steps gaining nothing.
    pub(crate) model_tol: f64,
    /// Armijo's constant: a step is taken when F falls by this fraction of Δ = ∇ᵀd + l1·(‖x‖₁ − ‖v‖₁) (every refinement's line search, `search.rs`).
    pub(crate) armijo: f64,
    /// The dense refinement's (and softmax's) line search halves the step down to this.
    pub(crate) refine_min_step: f64,
    /// Newton steps of a refinement, at most.
    pub(crate) support_steps: usize,
    /// Conjugate-gradient iterations of one Newton step, at most.
    pub(crate) support_cg_steps: usize,
    /// What a refinement may cost, in passes over X: its Hessian-vector products cost two passes over X_V each, and a wide support of a stochastic iterate (FOBOS on debian-files after two epochs: 16,665 non-zeros, most of X) would otherwise cost a thousand passes a check.
    pub(crate) support_budget_passes: usize,
    /// Supports up to this many coordinates get exact Newton steps: the dense Hessian on them (8·n² bytes: 288 MB at the bound) factored by Cholesky.
    pub(crate) support_exact_max: usize,
    /// A support wider than `support_exact_max`, up to this, is settled by `settle.rs`'s ADMM steps near the optimum, and then gets exact steps: debian-files at C = 100 holds 6,500–6,650 columns there.
    pub(crate) support_settle_max: usize,
    /// Exact Newton steps of a round, at most.
    pub(crate) support_exact_steps: usize,
    /// Exact Newton steps of a refinement, at most, over all its rounds.
    pub(crate) support_exact_budget: usize,
    /// Rounds of exact steps: the support, then the support with the zero coordinates that violate optimality at the point it reached.
    pub(crate) support_exact_rounds: usize,
    /// A round of exact steps that leaves more than this fraction of the gap the round before left ends the check's rounds.
    pub(crate) support_slow_round: f64,
    /// Violating zero coordinates a round brings in, at most (the worst first).
    pub(crate) support_exact_enter: usize,
    /// A round has solved its support once a step lowers F by less than this fraction of the gap left at its point: the rest of the gap is the zero coordinates', and the next round brings them in.
    pub(crate) support_settled: f64,
    /// Fewer CG iterations a step than this, within the budget, and the refinement is not tried.
    pub(crate) support_cg_least: usize,
    /// CG stops once the preconditioned residual rᵀM⁻¹r is this fraction of the first.
    pub(crate) support_cg_tol: f64,
    /// The line search halves the step down to this, at most twenty trials.
    pub(crate) support_min_step: f64,
    /// Solves of a step's face, at most: each adds the coordinates the last one carried across zero.
    pub(crate) face_solves: usize,
    /// A step that carries more coordinates than this across zero is not taken exactly: its point is far from the optimum's support, and each face solve costs a triangular solve per such coordinate.
    pub(crate) face_crossings: usize,
    /// Conjugate-gradient iterations of a step preconditioned by an earlier factor, at most, and where they stop: once rᵀP⁻¹r is this fraction of the first, an inexact Newton step with a forcing term of 1e-2.
    pub(crate) face_held_steps: usize,
    /// with `face_held_steps` above: Conjugate-gradient iterations of a step preconditioned by an earlier factor, at most, and where they stop: once rᵀP⁻¹r is this fraction of the first, an inexact Newton step with a forcing term of 1e-2.
    pub(crate) face_held_tol: f64,
    /// Rows of a held factor a face holds at zero, at most (the coordinates that left V or do not move): each costs a solve with the factor once a step, 10–20 ms at 4,400 columns.
    pub(crate) face_held: usize,
    /// Coordinates new to V a held factor is bordered with, at most: the border costs a solve with the factor per coordinate.
    pub(crate) face_border_max: usize,
    /// The ridges a face step's Cholesky factor tries in turn, as fractions of the largest
    /// diagonal entry.
    pub(crate) face_ridges: [f64; 4],
    /// Proximal Newton steps of a settling, at most.
    pub(crate) settle_steps: usize,
    /// The settling ends once the gap is within this fraction of F: the face steps finish from there.
    pub(crate) settled_gap: f64,
    /// ADMM iterations of one subproblem, and ρ as a multiple of the median of H's diagonal.
    pub(crate) settle_iterations: usize,
    /// with `settle_iterations` above: ADMM iterations of one subproblem, and ρ as a multiple of the median of H's diagonal.
    pub(crate) settle_rho: f64,
    /// ADMM iterations of a later step's subproblem, started from the multipliers the step before ended with: near the optimum they change little between steps, and the first iterations' swings come from a cold start.
    pub(crate) settle_warm_iterations: usize,
    /// ADMM's over-relaxation.
    pub(crate) settle_relax: f64,
    /// A zero column with |∇ⱼf| above this fraction of λ joins V.
    pub(crate) settle_near_violation: f64,
    /// The line search halves the step down to this, at most.
    pub(crate) settle_min_step: f64,
    /// Halvings of a one-coordinate step, at most (to 1e-6 of its length).
    pub(crate) settle_halvings: usize,
    /// Coordinates that take one-coordinate Newton steps after each settling step, the worst violators of optimality, and the steps each takes.
    pub(crate) settle_coordinates: usize,
    /// with `settle_coordinates` above: Coordinates that take one-coordinate Newton steps after each settling step, the worst violators of optimality, and the steps each takes.
    pub(crate) settle_coordinate_steps: usize,
    /// Newton iterations on the offset, at most.
    pub(crate) offset_steps: usize,
    /// The offset's Newton iterations stop once a step moves it by less than this times 1 + |t|: the sum of ℓ′ over the rows is then at its rounding (about 1e-9 on w8a's 49,749 rows, a step of 1e-12), and the steps after it only bisect that noise (17 iterations from w = 0 on w8a at 1e-15, 7 at 1e-12); `balance` removes what is left of Σᵢ uᵢ.
    pub(crate) offset_resolution: f64,
    /// From equal margins (w = 0) the offset's iterations run over the distinct labels, each with its rows' summed weight, when there are at most this many (classes); each row looks through them once.
    pub(crate) offset_label_groups: usize,
    /// The most multiply-adds one Hessian may take, Σᵢ (k·nnzᵢ)²/2: about 2 s on a 2-core machine (satimage's, 4,435 dense rows of 36 features and 6 classes, is 1.0e8 and a step about 0.07 s).
    pub(crate) softmax_hessian_work_max: f64,
}

/// The defaults of [`RefineTuning`].
pub(crate) const TUNING: RefineTuning = RefineTuning {
    eager_gap: 0.1,
    extrapolation_k: 5,
    refine_stall: 0.1,
    refine_first: 1e-2,
    exact_gap: 0.5,
    settle_gap: 0.9,
    refine_max: crate::solvers::DENSE_NEWTON_MAX,
    refine_rounds: 5,
    refine_rounds_eager: 3,
    refine_slack: 0.1,
    refine_steps: 20,
    refine_chord: 8.0,
    refine_all: 512,
    refine_grow_passes: 32.0,
    refine_eager_epochs: 16.0,
    refine_defer_epochs: 4.0,
    refine_dense_share: 0.5,
    refine_enter: 32,
    refine_residual: 1e-9,
    model_rounds: 20,
    model_forcing: 0.1,
    model_forcing_squared: 1e-9,
    model_sweeps: 2,
    model_cg_steps: 200,
    model_cg_tol: 1e-6,
    model_tol: 1e-3,
    armijo: 1e-2,
    refine_min_step: 1e-12,
    support_steps: 4,
    support_cg_steps: 50,
    support_budget_passes: 150,
    support_exact_max: 6000,
    support_settle_max: 9000,
    support_exact_steps: 6,
    support_exact_budget: 10,
    support_exact_rounds: 5,
    support_slow_round: 0.5,
    support_exact_enter: 1024,
    support_settled: 1e-2,
    support_cg_least: 10,
    support_cg_tol: 1e-6,
    support_min_step: 1e-6,
    face_solves: 4,
    face_crossings: 256,
    face_held_steps: 25,
    face_held_tol: 1e-4,
    face_held: 512,
    face_border_max: 512,
    face_ridges: [0.0, 1e-10, 1e-8, 1e-6],
    settle_steps: 8,
    settled_gap: 5e-3,
    settle_iterations: 100,
    settle_rho: 0.1,
    settle_warm_iterations: 50,
    settle_relax: 1.6,
    settle_near_violation: 0.999,
    settle_min_step: 1e-6,
    settle_halvings: 20,
    settle_coordinates: 1024,
    settle_coordinate_steps: 3,
    offset_steps: 100,
    offset_resolution: 1e-12,
    offset_label_groups: 8,
    softmax_hessian_work_max: 4e9,
};
