//! The calling convention between the driver and compiled kernels, the runtime functions the
//! kernels call, and the one place that calls native code.

use crate::exec::{DataView, Orders, State};
use crate::plan::{Plan, Routine};
use crate::symbolic::Func;

/// What a kernel receives: pointers into the state and the data. `#[repr(C)]` because the
/// generated code reads the fields at fixed offsets (see [`offsets`]).
#[repr(C)]
pub struct KernelCtx {
    /// The plan's scalars (parameters are folded into the code; state is loaded and stored).
    pub scalars: *mut f64,
    /// One base pointer per plan vector, in plan order.
    pub vectors: *const *mut f64,
    pub indptr: *const usize,
    /// The column indices: u32s, the k-th at byte `k << index_shift`.
    pub indices: *const u32,
    /// log₂ of the bytes from one index to the next: 2, or 3 for int64 indices read in place
    /// (their low halves; see [`crate::runtime::Indices`]).
    pub index_shift: u64,
    pub values: *const f64,
    pub order: *const u32,
    pub n_order: u64,
    pub features: u64,
    /// m, for `0..m`.
    pub rows: u64,
    /// k, for `0..k` and the rows of `mat[·, k]`.
    pub classes: u64,
    /// The operator of a composite ω∘B (null without one), for `picard` and `group_shrink`.
    pub operator: *const crate::runtime::picard::Operator,
    /// This epoch's permutation of the columns, for `perm(d)`.
    pub col_order: *const u32,
    pub n_col_order: u64,
    /// The CSC copy (null when the plan reads no columns).
    pub col_ptr: *const usize,
    pub col_rows: *const u32,
    pub col_values: *const f64,
    /// Written when a guard fires: the row and the offending value.
    pub fault_row: u64,
    pub fault_value: f64,
    /// Threads a runtime call may use (`--threads`); no kernel reads it.
    pub threads: u64,
    /// The ranks the rows are split across (null alone): a [`RankHook`] that lives for the
    /// call, for `optc_reduce`.
    pub ranks: *const std::ffi::c_void,
}

/// What `optc_reduce` needs besides the context: the ranks, the plan's reductions by id, the
/// length of every vector, and the error of a reduction that failed (the kernel then returns
/// [`RANKS_FAILED`]).
pub struct RankHook<'a> {
    ranks: &'a dyn crate::exec::collective::Collective,
    reductions: Vec<&'a crate::plan::Reduction>,
    scalars: usize,
    lens: Vec<usize>,
    failed: std::cell::RefCell<Option<crate::exec::collective::CollectiveError>>,
}

/// A kernel's return code when a reduction across the ranks failed.
pub const RANKS_FAILED: i64 = -1;

/// `ranks: …` in compiled code: the reduction `id` on the state the context points at; 0, or 1
/// when it failed (the error kept in the hook).
///
/// # Safety (why this is sound)
/// Only kernels call it, with the context [`call`] built: `ranks` is null or points at the hook
/// `call` keeps alive for the kernel's duration, `scalars` at the state's scalars (the hook's
/// count of them) and `vectors[v]` at the state buffer v, whose length [`check_shapes`]
/// verified against the hook's `lens`. A reduction names each buffer once and never the
/// labels (verify), so the slices are disjoint state the kernel owns during the call.
extern "C" fn optc_reduce(ctx: *mut KernelCtx, id: i64) -> i64 {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let (hook, scalars, mut bufs) = unsafe {
        let ctx = &*ctx;
        if ctx.ranks.is_null() {
            return 0;
        }
        let hook = &*(ctx.ranks as *const RankHook);
        let Some(r) = hook.reductions.get(id as usize) else { return 1 };
        let scalars = std::slice::from_raw_parts_mut(ctx.scalars, hook.scalars);
        let bufs: Vec<&mut [f64]> =
            r.vectors.iter().map(|v| std::slice::from_raw_parts_mut(*ctx.vectors.add(v.0), hook.lens[v.0])).collect();
        (hook, scalars, bufs)
    };
    let r = hook.reductions[id as usize];
    match crate::exec::collective::reduce_state(hook.ranks, r, scalars, &mut bufs) {
        Ok(()) => 0,
        Err(e) => {
            *hook.failed.borrow_mut() = Some(e);
            1
        }
    }
}

pub fn reduce_symbol() -> *const u8 {
    optc_reduce as *const u8
}

/// Byte offsets of the [`KernelCtx`] fields, for the translator.
pub mod offsets {
    use super::KernelCtx;
    use std::mem::offset_of;
    pub const SCALARS: i32 = offset_of!(KernelCtx, scalars) as i32;
    pub const VECTORS: i32 = offset_of!(KernelCtx, vectors) as i32;
    pub const INDPTR: i32 = offset_of!(KernelCtx, indptr) as i32;
    pub const INDICES: i32 = offset_of!(KernelCtx, indices) as i32;
    pub const INDEX_SHIFT: i32 = offset_of!(KernelCtx, index_shift) as i32;
    pub const VALUES: i32 = offset_of!(KernelCtx, values) as i32;
    pub const ORDER: i32 = offset_of!(KernelCtx, order) as i32;
    pub const N_ORDER: i32 = offset_of!(KernelCtx, n_order) as i32;
    pub const FEATURES: i32 = offset_of!(KernelCtx, features) as i32;
    pub const ROWS: i32 = offset_of!(KernelCtx, rows) as i32;
    pub const CLASSES: i32 = offset_of!(KernelCtx, classes) as i32;
    pub const COL_ORDER: i32 = offset_of!(KernelCtx, col_order) as i32;
    pub const N_COL_ORDER: i32 = offset_of!(KernelCtx, n_col_order) as i32;
    pub const COL_PTR: i32 = offset_of!(KernelCtx, col_ptr) as i32;
    pub const COL_ROWS: i32 = offset_of!(KernelCtx, col_rows) as i32;
    pub const COL_VALUES: i32 = offset_of!(KernelCtx, col_values) as i32;
    pub const FAULT_ROW: i32 = offset_of!(KernelCtx, fault_row) as i32;
    pub const FAULT_VALUE: i32 = offset_of!(KernelCtx, fault_value) as i32;
}

/// A compiled kernel: returns 0, or k ≥ 1 when the k-th guard of the body fired.
pub type KernelFn = unsafe extern "C" fn(*mut KernelCtx) -> i64;

// Transcendentals the kernels call. They evaluate exactly what the interpreter evaluates
// (`Func::apply`), so both back ends produce the same bits.
pub extern "C" fn optc_exp(x: f64) -> f64 {
    Func::Exp.apply(x, 0.0)
}
pub extern "C" fn optc_log(x: f64) -> f64 {
    Func::Log.apply(x, 0.0)
}
pub extern "C" fn optc_log1p(x: f64) -> f64 {
    Func::Log1p.apply(x, 0.0)
}
pub extern "C" fn optc_sigmoid(x: f64) -> f64 {
    Func::Sigmoid.apply(x, 0.0)
}
pub extern "C" fn optc_softplus(x: f64) -> f64 {
    Func::Softplus.apply(x, 0.0)
}

/// The runtime symbols, by the names the translator imports.
pub fn runtime_symbols() -> [(&'static str, *const u8, Func); 5] {
    [
        ("optc_exp", optc_exp as *const u8, Func::Exp),
        ("optc_log", optc_log as *const u8, Func::Log),
        ("optc_log1p", optc_log1p as *const u8, Func::Log1p),
        ("optc_sigmoid", optc_sigmoid as *const u8, Func::Sigmoid),
        ("optc_softplus", optc_softplus as *const u8, Func::Softplus),
    ]
}

// The vector routines (`crate::runtime`), called by kernels on a state buffer or a row of one:
// (base, length, row width — 1 but for a whole matrix —, argument).
extern "C" fn optc_shrink_l2(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::ShrinkL2, ptr, len, width, arg)
}
extern "C" fn optc_prox_linf(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::ProxLinf, ptr, len, width, arg)
}
extern "C" fn optc_proj_l1ball(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::ProjL1Ball, ptr, len, width, arg)
}
extern "C" fn optc_proj_l2ball(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::ProjL2Ball, ptr, len, width, arg)
}
extern "C" fn optc_proj_simplex(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::ProjSimplex, ptr, len, width, arg)
}
extern "C" fn optc_svt(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::Svt, ptr, len, width, arg)
}
extern "C" fn optc_svt_centered(ptr: *mut f64, len: u64, width: u64, arg: f64) {
    routine(Routine::SvtCentered, ptr, len, width, arg)
}

/// The one body of the routine entry points.
///
/// # Safety (why this is sound)
/// Only kernels call the entry points, and the translator passes the base pointer of a plan
/// buffer with its length (n, or n·k for a matrix), or the address of row r < n of a matrix with
/// the row's length k, read from the context (`translate_routine`);
/// [`call`] checked with [`check_shapes`] that every vector has exactly that length, and verify
/// keeps the labels (which [`call`] points at the data) out of `call` statements. So the slice
/// is the state buffer the kernel owns for the duration of the call, and nothing else aliases it.
fn routine(r: Routine, ptr: *mut f64, len: u64, width: u64, arg: f64) {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let v = unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) };
    r.apply_shaped(v, width as usize, arg);
}

/// The routine entry points, by the names the translator imports.
pub fn routine_symbols() -> [(&'static str, *const u8, Routine); 7] {
    let entry: [extern "C" fn(*mut f64, u64, u64, f64); 7] = [
        optc_shrink_l2,
        optc_prox_linf,
        optc_proj_l1ball,
        optc_proj_l2ball,
        optc_proj_simplex,
        optc_svt,
        optc_svt_centered,
    ];
    let names = [
        "optc_shrink_l2",
        "optc_prox_linf",
        "optc_proj_l1ball",
        "optc_proj_l2ball",
        "optc_proj_simplex",
        "optc_svt",
        "optc_svt_centered",
    ];
    let mut out = [("", std::ptr::null::<u8>(), Routine::ShrinkL2); 7];
    for (k, r) in Routine::ALL.into_iter().enumerate() {
        debug_assert_eq!(names[k], format!("optc_{}", r.name()));
        out[k] = (names[k], entry[k] as *const u8, r);
    }
    out
}

/// The Picard entry point: `target ← prox_{γ·ω∘B}(target)` with the dual warm-started, the
/// two buffers named by their index among the plan's vectors.
///
/// # Safety (why this is sound)
/// Only kernels call it, passing the context [`call`] built (valid for the whole call) and
/// vector indices from a verified `picard` statement: distinct, in range, target a vec[d] and
/// dual a vec[p]. [`check_shapes`] checked before the call that those vectors have d and p
/// entries, that an operator is bound when the plan calls picard, and that it `fits` (d, p).
extern "C" fn optc_picard(ctx: *mut KernelCtx, gamma: f64, tol: f64, cap: i64, omega: i64, target: i64, dual: i64) {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let (op, x, z) = unsafe {
        let ctx = &*ctx;
        let op = &*ctx.operator;
        let x = std::slice::from_raw_parts_mut(*ctx.vectors.add(target as usize), ctx.features as usize);
        let z = std::slice::from_raw_parts_mut(*ctx.vectors.add(dual as usize), op.rows);
        (op, x, z)
    };
    if let Some(omega) = crate::runtime::picard::Omega::from_code(omega) {
        crate::runtime::picard::prox(op, omega, x, z, gamma, tol, cap.clamp(1, i64::from(u32::MAX)) as u32);
    }
}

pub fn picard_symbol() -> *const u8 {
    optc_picard as *const u8
}

/// The dictionary entry point: one epoch of SMM on D (`runtime::dictionary::epoch`), the
/// buffers and scalars named by their index in the plan, the rest of the call by value.
///
/// # Safety (why this is sound)
/// Only kernels call it, passing the context [`call`] built (valid for the whole call) and
/// the indices of a verified `dictionary` statement: two distinct state mat[d, k], a state
/// mat[k, k] and a state scalar. [`check_shapes`] checked before the call that every mat[d, k]
/// has d·k entries and every mat[k, k] k²;
/// the order holds `n_order` row indices below m, and the CSR arrays are the data's (m + 1
/// offsets, their last the number of entries). The operator, when not null, is the bound one.
#[allow(clippy::too_many_arguments)]
extern "C" fn optc_dictionary(
    ctx: *mut KernelCtx,
    atoms: i64,
    surrogate: i64,
    curvature: i64,
    steps: i64,
    batch: i64,
    group: i64,
    majorizer: i64,
    lambda1: f64,
    lambda2: f64,
    n0: f64,
    l1: f64,
    l2: f64,
    gamma: f64,
    ball: f64,
) {
    let group = crate::runtime::picard::Omega::from_code(group).map(|omega| (omega, gamma));
    let penalty = crate::runtime::dictionary::AtomPenalty { l1, l2, group, ball: (ball >= 0.0).then_some(ball) };
    let call = crate::plan::DictionaryCall {
        atoms: crate::plan::VecId(atoms as usize),
        surrogate: crate::plan::VecId(surrogate as usize),
        curvature: crate::plan::VecId(curvature as usize),
        steps: crate::plan::ScalarId(steps as usize),
        settings: crate::runtime::dictionary::EpochSettings {
            lambda1,
            lambda2,
            batch: usize::try_from(batch).unwrap_or(1).max(1),
            n0,
            majorizer: crate::runtime::dictionary::Majorizer::from_code(majorizer),
            penalty,
        },
    };
    // SAFETY: see above.
    #[allow(unsafe_code)]
    unsafe {
        let ctx = &*ctx;
        let (d, k, m) = (ctx.features as usize, ctx.classes as usize, ctx.rows as usize);
        let indptr = std::slice::from_raw_parts(ctx.indptr, m + 1);
        let nnz = indptr[m];
        let x = crate::runtime::dictionary::Signals {
            indptr,
            indices: crate::data::store::indices_from_raw_parts(ctx.indices, nnz, ctx.index_shift as u32 - 2),
            values: std::slice::from_raw_parts(ctx.values, nnz),
        };
        let order = std::slice::from_raw_parts(ctx.order, ctx.n_order as usize);
        let atoms = std::slice::from_raw_parts_mut(*ctx.vectors.add(call.atoms.0), d * k);
        let surrogate = std::slice::from_raw_parts_mut(*ctx.vectors.add(call.surrogate.0), d * k);
        let curvature = std::slice::from_raw_parts_mut(*ctx.vectors.add(call.curvature.0), k * k);
        let steps = &mut *ctx.scalars.add(call.steps.0);
        let op = ctx.operator.as_ref();
        let state = crate::runtime::dictionary::EpochState { atoms, surrogate, curvature, steps };
        crate::runtime::dictionary::epoch(state, x, order, (d, k), &call.settings, op, ctx.threads as usize);
    }
}

/// The dense Newton entry point: tron's `newton` statement (as `exec::linalg::newton_statement`,
/// its cost rule asked before the pass that bounds the columns), the buffers and scalars named
/// by their index in the plan (−1: no intercept), b's gradient and the CG steps by value.
/// Writes the step, b's step and `solved` (1 or 0) into the plan's buffers.
///
/// # Safety (why this is sound)
/// Only kernels call it, passing the context [`call`] built (valid for the whole call) and the
/// indices of a verified `newton` statement: D a state vec[m], g and the step distinct state
/// vec[d], the scalars in range. [`check_shapes`] checked before the call that every vec[m]
/// has m entries and every vec[d] d; the CSR arrays are the data's (m + 1 offsets, their last
/// the number of entries).
#[allow(clippy::too_many_arguments)]
extern "C" fn optc_newton(
    ctx: *mut KernelCtx,
    ridge: f64,
    ridge_b: f64,
    g_b: f64,
    cg_steps: f64,
    curvature: i64,
    gradient: i64,
    gradient_b: i64,
    step: i64,
    step_b: i64,
    solved: i64,
) {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    unsafe {
        let ctx = &mut *ctx;
        let (d, m) = (ctx.features as usize, ctx.rows as usize);
        let indptr = std::slice::from_raw_parts(ctx.indptr, m + 1);
        let curvature = std::slice::from_raw_parts(*ctx.vectors.add(curvature as usize), m);
        *ctx.scalars.add(solved as usize) = 0.0;
        // The column bound is a pass over the indices: only for a step that is taken.
        if !crate::exec::linalg::dense_step_pays(indptr, ctx.threads as usize, d, curvature, cg_steps) {
            return;
        }
        let data = data_view(ctx, |indices| indices.iter().max().map_or(0, |j| j as usize + 1));
        let g = std::slice::from_raw_parts(*ctx.vectors.add(gradient as usize), d);
        let b = (gradient_b >= 0).then_some((g_b, ridge_b));
        let found = crate::exec::linalg::newton_direction(&data, d, curvature, g, ridge, b);
        *ctx.scalars.add(solved as usize) = if found.is_some() { 1.0 } else { 0.0 };
        if let Some((s, s_b)) = found {
            std::slice::from_raw_parts_mut(*ctx.vectors.add(step as usize), d).copy_from_slice(&s);
            if step_b >= 0 {
                *ctx.scalars.add(step_b as usize) = s_b;
            }
        }
    }
}

/// The augmented Lagrangian entry point: an `alm` statement's epoch (`exec::alm::epoch`), the
/// buffers and scalars named by their index in the plan (−1: no intercept, no rows' weights),
/// b's ridge and C by value. Moves w, α, b and σ in the plan's buffers.
///
/// # Safety (why this is sound)
/// Only kernels call it, passing the context [`call`] built (valid for the whole call) and the
/// indices of a verified `alm` statement: w the weights vec[d], α a state vec[m], y and ω input
/// vec[m], b, σ and the estimate distinct state scalars. [`check_shapes`] checked before the call that every
/// vec[m] has m entries and every vec[d] d; the CSR arrays are the data's (m + 1 offsets, their
/// last the number of entries). w and α are distinct buffers from y and ω (their roles differ).
#[allow(clippy::too_many_arguments)]
extern "C" fn optc_alm(
    ctx: *mut KernelCtx,
    ridge_b: f64,
    cap: f64,
    weights: i64,
    intercept: i64,
    multipliers: i64,
    sigma: i64,
    estimate: i64,
    labels: i64,
    row_weights: i64,
) {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    unsafe {
        let ctx = &mut *ctx;
        let (d, m) = (ctx.features as usize, ctx.rows as usize);
        // A bound every u32 index meets: the epoch reads no code that relies on a tighter one
        // (its passes skip indices past d, and its Newton steps view a copy of J's rows).
        let data = data_view(ctx, |_| u32::MAX as usize + 1);
        let rows = crate::exec::alm::Rows {
            labels: std::slice::from_raw_parts(*ctx.vectors.add(labels as usize), m),
            weights: (row_weights >= 0).then(|| std::slice::from_raw_parts(*ctx.vectors.add(row_weights as usize), m)),
            cap,
        };
        let w = std::slice::from_raw_parts_mut(*ctx.vectors.add(weights as usize), d);
        let alpha = std::slice::from_raw_parts_mut(*ctx.vectors.add(multipliers as usize), m);
        let sigma = &mut *ctx.scalars.add(sigma as usize);
        let b = (intercept >= 0).then(|| (&mut *ctx.scalars.add(intercept as usize), ridge_b));
        let expected = crate::exec::alm::epoch(&data, &rows, crate::exec::alm::Iterate { w, b, alpha, sigma });
        *ctx.scalars.add(estimate as usize) = expected;
    }
}

pub fn alm_symbol() -> *const u8 {
    optc_alm as *const u8
}

/// The data's CSR arrays as a view for a runtime call, on the context's threads, with the
/// column bound `columns` finds from the indices.
///
/// # Safety (why this is sound)
/// `ctx` is the context [`call`] built, valid for the whole call: its CSR arrays are the data's
/// (m + 1 offsets, their last the number of entries).
#[allow(unsafe_code)]
unsafe fn data_view<'a>(
    ctx: &'a KernelCtx,
    columns: impl FnOnce(&crate::runtime::Indices<'a>) -> usize,
) -> crate::exec::DataView<'a> {
    let (d, m) = (ctx.features as usize, ctx.rows as usize);
    let indptr = std::slice::from_raw_parts(ctx.indptr, m + 1);
    let nnz = indptr[m];
    let indices = crate::data::store::indices_from_raw_parts(ctx.indices, nnz, ctx.index_shift as u32 - 2);
    let values = std::slice::from_raw_parts(ctx.values, nnz);
    let columns = columns(&indices);
    crate::exec::DataView::with_known_columns(indptr, indices, values, &[], d, columns)
        .with_threads(ctx.threads as usize)
}

pub fn newton_symbol() -> *const u8 {
    optc_newton as *const u8
}

pub fn dictionary_symbol() -> *const u8 {
    optc_dictionary as *const u8
}

/// SMM's ℓ1 catch-up (`runtime::smm::l1_catch_up`) over two history buffers.
///
/// # Safety (why this is sound)
/// Only kernels call it, with the base pointers of two vectors that a verified `smm_catch_up`
/// names as vec[m] and `len` = m; [`check_shapes`] checked before the call that every vec[m]
/// has m entries. The runtime clamps the positions into 0..=len.
#[allow(clippy::too_many_arguments)]
extern "C" fn optc_smm_catch_up(
    value: f64,
    from: f64,
    to: f64,
    sums: *const f64,
    logs: *const f64,
    len: i64,
    sums_to: f64,
    logs_to: f64,
    tau: f64,
) -> f64 {
    let len = usize::try_from(len).unwrap_or(0);
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let (sums, logs) = unsafe { (std::slice::from_raw_parts(sums, len), std::slice::from_raw_parts(logs, len)) };
    crate::runtime::smm::l1_catch_up(value, from, to, sums, logs, sums_to, logs_to, tau)
}

pub fn catch_up_symbol() -> *const u8 {
    optc_smm_catch_up as *const u8
}

/// The group-shrink entry point: `target_g ← max(0, 1 − γ/‖target_g‖)·target_g` for each group
/// of the bound operator, the target named by its index among the plan's vectors.
///
/// # Safety (why this is sound)
/// Only kernels call it, passing the context [`call`] built (valid for the whole call) and the
/// index of the target of a verified `group_shrink` statement: in range, a state vec[d] (not
/// the labels). [`check_shapes`] checked before the call that the vector has d entries, that
/// an operator is bound when the plan uses one, and that it `fits` d columns, so every feature
/// the routine indexes is inside the slice.
extern "C" fn optc_group_shrink(ctx: *mut KernelCtx, gamma: f64, target: i64) {
    // SAFETY: see above.
    #[allow(unsafe_code)]
    let (op, x) = unsafe {
        let ctx = &*ctx;
        let op = &*ctx.operator;
        let x = std::slice::from_raw_parts_mut(*ctx.vectors.add(target as usize), ctx.features as usize);
        (op, x)
    };
    crate::runtime::groups::shrink(op, x, gamma);
}

pub fn group_shrink_symbol() -> *const u8 {
    optc_group_shrink as *const u8
}

/// Treats finalized code as a kernel.
///
/// # Safety (why this is sound)
/// Only called on pointers that `JITModule::get_finalized_function` returned for functions
/// `jit::define` declared with exactly this signature (`extern "C" fn(ptr) -> i64`, the
/// platform's default C calling convention). Calling it is still only done in [`call`].
pub(super) fn as_kernel(code: *const u8) -> KernelFn {
    // SAFETY: see above; a function pointer and a code pointer have the same size.
    #[allow(unsafe_code)]
    unsafe {
        std::mem::transmute::<*const u8, KernelFn>(code)
    }
}

/// Checks that `state`, `data` and `orders` have exactly the shapes the plan's code assumes.
/// Together with [`crate::plan::verify::verify`] this is what makes `call` sound.
pub fn check_shapes(plan: &Plan, state: &State, data: &DataView, orders: &Orders) -> Result<(), String> {
    let rows = data.rows();
    if data.indptr.is_empty() || data.indptr[0] != 0 {
        return Err("malformed row pointers".into());
    }
    let nnz = *data.indptr.last().unwrap_or(&0);
    if nnz != data.indices.len() || nnz != data.values.len() || data.indptr.windows(2).any(|w| w[0] > w[1]) {
        return Err("malformed CSR arrays".into());
    }
    if data.columns() > data.features {
        return Err(format!("the data has {} columns but the weights only {}", data.columns(), data.features));
    }
    if data.labels.len() != rows {
        return Err(format!("{} labels for {rows} rows", data.labels.len()));
    }
    if let Some(s) = data.weights.filter(|s| s.len() != rows) {
        return Err(format!("{} row weights for {rows} rows", s.len()));
    }
    // Positions in the order index vec[m] history (q < m).
    if orders.rows.len() > rows {
        return Err("the row order is longer than the data".into());
    }
    if orders.rows.iter().any(|&i| i as usize >= rows) {
        return Err("a row index in the order is out of range".into());
    }
    if orders.cols.iter().any(|&j| j as usize >= data.features) {
        return Err("a column index in the order is out of range".into());
    }
    if plan.reads_columns() {
        // The arrays' structure (pointers from 0 to the non-zeros, non-decreasing; every row
        // index below `row_count`) holds by construction: only `Columns::of` makes them and
        // nothing can change them. What is checked is that they fit this data: d columns, and
        // rows that exist here (a scan of every row index took ~4 ms per call on 8 M non-zeros).
        let c = data.csc().ok_or("the plan reads columns but none were bound")?;
        if c.count() != data.features {
            return Err(format!("the columns are {}, the weights {}", c.count(), data.features));
        }
        if c.row_count() > rows {
            return Err("the columns were built from more rows than the data has".into());
        }
    }
    if state.scalars.len() != plan.scalars.len() || state.vectors.len() != plan.vectors.len() {
        return Err("state does not match the plan".into());
    }
    let dims = data.dims();
    if plan.uses_operator() && !data.operator.is_some_and(|op| op.fits(data.features, op.rows)) {
        return Err("the plan uses the operator B but none of d columns is bound".into());
    }
    for (v, decl) in state.vectors.iter().zip(&plan.vectors) {
        let want = dims.size(decl);
        if v.len() != want {
            return Err(format!("vector `{}` has length {}, the plan needs {want}", decl.name, v.len()));
        }
    }
    Ok(())
}

/// Runs a kernel on the state and data. Returns 0 or the number of the guard that fired, with
/// the row and the value it saw.
///
/// # Safety (why this is sound)
/// `kernel` was produced by the translator from a plan that passed `verify`, and
/// `check_shapes` passed just above: every buffer axis the code indexes by `i` has m entries and
/// `i` comes from the row order (all < m), a counter below m, or a CSC row index (all < m);
/// every axis indexed by `j` has d entries and `j` is a counter below d, a column order entry
/// (all < d) or a CSR column index (all < columns ≤ d); every axis indexed by `c` has k entries
/// and `c` is a counter below k; a matrix `mat[n, k]` holds exactly n·k entries, so
/// `r·k + c` < n·k; `p` ranges over `indptr[i]..indptr[i+1]` ≤ nnz or
/// `col_ptr[j]..col_ptr[j+1]` ≤ nnz. The kernel writes only the state's scalars, the
/// state's vectors (not the labels: verify) and the two fault fields of `ctx`.
pub fn call(
    kernel: KernelFn,
    plan: &Plan,
    state: &mut State,
    data: &DataView,
    orders: &Orders,
) -> Result<Returned, String> {
    check_shapes(plan, state, data, orders)?;
    let dims = data.dims();
    let hook = orders.ranks.filter(|r| r.size() > 1).map(|ranks| RankHook {
        ranks,
        reductions: plan.reductions(),
        scalars: state.scalars.len(),
        lens: plan.vectors.iter().map(|v| dims.size(v)).collect(),
        failed: None.into(),
    });
    // The hook outlives the call; the kernel sees it as 'static only through the pointer.
    let ranks = hook.as_ref().map_or(std::ptr::null(), |h| h as *const RankHook as *const std::ffi::c_void);
    let (labels, row_weights) = (plan.labels().map(|l| l.0), plan.row_weights().map(|s| s.0));
    let mut bases: Vec<*mut f64> = state
        .vectors
        .iter_mut()
        .enumerate()
        .map(|(k, v)| match data.weights {
            _ if Some(k) == labels => data.labels.as_ptr() as *mut f64,
            // Read only, as the labels (the verifier refuses a plan that writes either).
            Some(s) if Some(k) == row_weights => s.as_ptr() as *mut f64,
            _ => v.as_mut_ptr(),
        })
        .collect();
    let mut ctx = KernelCtx {
        scalars: state.scalars.as_mut_ptr(),
        vectors: bases.as_mut_ptr(),
        indptr: data.indptr.as_ptr(),
        indices: data.indices.as_ptr(),
        index_shift: 2 + u64::from(data.indices.shift()),
        values: data.values.as_ptr(),
        order: orders.rows.as_ptr(),
        n_order: orders.rows.len() as u64,
        features: data.features as u64,
        rows: data.rows() as u64,
        classes: data.classes as u64,
        operator: data.operator.map_or(std::ptr::null(), |b| b as *const _),
        col_order: orders.cols.as_ptr(),
        n_col_order: orders.cols.len() as u64,
        col_ptr: data.csc().map_or(std::ptr::null(), |c| c.ptr().as_ptr()),
        col_rows: data.csc().map_or(std::ptr::null(), |c| c.rows().as_ptr()),
        col_values: data.csc().map_or(std::ptr::null(), |c| c.values().as_ptr()),
        fault_row: 0,
        fault_value: 0.0,
        threads: data.threads as u64,
        ranks,
    };
    // SAFETY: see the function documentation.
    #[allow(unsafe_code)]
    let code = unsafe { kernel(&mut ctx) };
    let ranks = hook.and_then(|h| h.failed.into_inner()).filter(|_| code == RANKS_FAILED);
    Ok(Returned { code, row: ctx.fault_row, value: ctx.fault_value, ranks })
}

/// How a kernel returned: 0, the number of the guard that fired (with the row and the value it
/// saw), or [`RANKS_FAILED`] with the reduction's error.
pub struct Returned {
    pub code: i64,
    pub row: u64,
    pub value: f64,
    pub ranks: Option<crate::exec::collective::CollectiveError>,
}
