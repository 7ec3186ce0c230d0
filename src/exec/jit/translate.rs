//! Plan → Cranelift IR, one `translate_*` method per IR construct.
//!
//! The kernel is specialised to the model: parameters are constants in the code (λ, η₀, box
//! bounds), the loss derivative is inlined op by op, soft-thresholding and clamps are inlined
//! as compares and selects, and only exp/log/log1p/sigmoid/softplus are calls (to the same Rust
//! functions the interpreter uses, so both back ends produce the same bits). State scalars live
//! in Cranelift variables (registers) for the whole call and are stored back on exit.

use super::abi::offsets;
use crate::plan::{BinOp, Expr, Index, Intrinsic, Len, Plan, Range, Routine, ScalarId, ScalarRole, Slice, Stmt, VecId};
use crate::symbolic::{Cmp, Func};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{types, FuncRef, InstBuilder, MemFlags, Value};
use cranelift_frontend::{FunctionBuilder, Variable};
use std::collections::HashMap;

mod expr;

/// What the translator needs from outside: the plan, bound parameter values, imported runtime
/// functions, and the pointer type of the target.
pub struct PlanTranslator<'a, 'b> {
    pub b: FunctionBuilder<'b>,
    pub plan: &'a Plan,
    pub params: &'a [f64],
    pub imports: Imports,
    pub ptr: types::Type,
    ctx: Value,
    /// Cranelift variables for state and local scalars (None for parameters: they are folded).
    scalars: Vec<Option<Variable>>,
    /// Base pointers of the vectors, loaded once in the entry block.
    bases: Vec<Value>,
    data: DataPtrs,
    /// Loop variables in scope.
    i: Option<Value>,
    j: Option<Value>,
    c: Option<Value>,
    /// The position in the epoch's order, in loops over the rows.
    q: Option<Value>,
    v: Option<Value>,
    /// Guards seen so far; the k-th returns k.
    guards: i64,
    /// Values stored to `vec[idx]` in the current straight-line stretch of code, so a load
    /// that follows the store reuses the value (`w[j] = catch_up; a += v·w[j]`). Sound because
    /// a vector is only ever indexed by one loop variable (verify), which is fixed within a
    /// stretch; cleared at every block boundary.
    stored: HashMap<(usize, Index, Option<Index>), Value>,
    /// Inside a loop over the classes: the address of row r of matrix W (W + r·k·8), for each
    /// `W[r, c]` the loop's body reads or writes, computed once before the loop so an entry
    /// is one add. A softmax Hessian pass does k of them per non-zero.
    class_rows: HashMap<(usize, Index), Value>,
}

/// The functions of the runtime library the body calls, declared in the kernel's module.
pub struct Imports {
    /// exp, log, log1p, sigmoid, softplus: the same Rust functions the interpreter calls.
    pub funcs: HashMap<Func, FuncRef>,
    /// The vector routines of `crate::runtime`, by their C-ABI entry points.
    pub routines: HashMap<Routine, FuncRef>,
    /// `optc_picard`, for `picard` (reads the operator B through the context).
    pub picard: Option<FuncRef>,
    /// `optc_group_shrink`, for `group_shrink` (reads B's groups through the context).
    pub group_shrink: Option<FuncRef>,
    /// SMM's ℓ1 catch-up, when the body uses it.
    pub catch_up: Option<FuncRef>,
    /// `optc_dictionary`, for `dictionary` (reads the data, the order and B through the context).
    pub dictionary: Option<FuncRef>,
    /// `optc_reduce`, for `ranks: …` (reads the ranks and the state through the context).
    pub reduce: Option<FuncRef>,
    /// `optc_newton`, for `newton` (reads the data and the buffers through the context).
    pub newton: Option<FuncRef>,
    /// `optc_alm`, for `alm` (reads the data and moves the buffers through the context).
    pub alm: Option<FuncRef>,
}

#[derive(Clone, Copy)]
struct DataPtrs {
    indptr: Value,
    indices: Value,
    values: Value,
    order: Value,
    n_order: Value,
    features: Value,
    rows: Value,
    classes: Option<Value>,
    col_order: Value,
    n_col_order: Value,
    col_ptr: Value,
    col_rows: Value,
    col_values: Value,
    scalars: Value,
}

/// Whether any buffer or loop of the plan has the class dimension k.
fn uses_classes(plan: &Plan) -> bool {
    plan.vectors.iter().any(|v| v.len == Len::Classes || v.cols == Some(Len::Classes))
        || plan.phases().any(|body| crate::plan::walk::any_loop(body, |r| r == Range::Upto(Len::Classes)))
}

/// Whether a loop body has no loop and calls nothing (the functions of the runtime symbols are
/// calls; max, abs, soft and clamp are inline): straight-line arithmetic on its index.
fn innermost(body: &[Stmt]) -> bool {
    let runtime = super::abi::runtime_symbols().map(|(_, _, f)| f);
    let mut plain = true;
    crate::plan::walk::stmts(body, &mut |s| {
        plain &= !matches!(
            s,
            Stmt::For(..)
                | Stmt::Repeat(..)
                | Stmt::Call(..)
                | Stmt::Picard(_)
                | Stmt::GroupShrink(..)
                | Stmt::Dictionary(_)
                | Stmt::Newton(_)
                | Stmt::Alm(_)
                | Stmt::Reduce(_)
        );
    });
    crate::plan::walk::exprs(body, &mut |e| {
        plain &= match e {
            Expr::Call(Intrinsic::Func(f), _) => !runtime.contains(f),
            Expr::CatchUp(_) => false,
            _ => true,
        }
    });
    plain
}

/// Loads and stores the kernel makes into memory it owns exclusively and that is aligned.
fn trusted() -> MemFlags {
    MemFlags::trusted()
}

impl<'a, 'b> PlanTranslator<'a, 'b> {
    /// Sets up the entry block (reads the context) and returns a translator positioned in it.
    pub fn new(
        mut b: FunctionBuilder<'b>,
        plan: &'a Plan,
        params: &'a [f64],
        imports: Imports,
        ptr: types::Type,
    ) -> Self {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        b.seal_block(entry);
        let ctx = b.block_params(entry)[0];
        let load_ptr = |b: &mut FunctionBuilder, off: i32| b.ins().load(ptr, trusted(), ctx, off);
        let data = DataPtrs {
            scalars: load_ptr(&mut b, offsets::SCALARS),
            indptr: load_ptr(&mut b, offsets::INDPTR),
            indices: load_ptr(&mut b, offsets::INDICES),
            values: load_ptr(&mut b, offsets::VALUES),
            order: load_ptr(&mut b, offsets::ORDER),
            n_order: b.ins().load(types::I64, trusted(), ctx, offsets::N_ORDER),
            features: b.ins().load(types::I64, trusted(), ctx, offsets::FEATURES),
            rows: b.ins().load(types::I64, trusted(), ctx, offsets::ROWS),
            // Loaded only by plans with a class dimension, so the others' code is unchanged.
            classes: uses_classes(plan).then(|| b.ins().load(types::I64, trusted(), ctx, offsets::CLASSES)),
            col_order: load_ptr(&mut b, offsets::COL_ORDER),
            n_col_order: b.ins().load(types::I64, trusted(), ctx, offsets::N_COL_ORDER),
            col_ptr: load_ptr(&mut b, offsets::COL_PTR),
            col_rows: load_ptr(&mut b, offsets::COL_ROWS),
            col_values: load_ptr(&mut b, offsets::COL_VALUES),
        };
        let vectors = load_ptr(&mut b, offsets::VECTORS);
        let bases = (0..plan.vectors.len())
            .map(|k| b.ins().load(ptr, trusted(), vectors, (k * ptr.bytes() as usize) as i32))
            .collect();
        // State scalars start from memory; locals start at 0.
        let mut scalars = vec![];
        for (k, s) in plan.scalars.iter().enumerate() {
            scalars.push(match s.role {
                ScalarRole::Param => None,
                ScalarRole::State => {
                    let var = b.declare_var(types::F64);
                    let x = b.ins().load(types::F64, trusted(), data.scalars, (k * 8) as i32);
                    b.def_var(var, x);
                    Some(var)
                }
                ScalarRole::Local => {
                    let var = b.declare_var(types::F64);
                    let zero = b.ins().f64const(0.0);
                    b.def_var(var, zero);
                    Some(var)
                }
            });
        }
        PlanTranslator {
            b,
            plan,
            params,
            imports,
            ptr,
            ctx,
            scalars,
            bases,
            data,
            i: None,
            j: None,
            c: None,
            q: None,
            v: None,
            guards: 0,
            stored: HashMap::new(),
            class_rows: HashMap::new(),
        }
    }

    /// Translates a statement list as the whole function body, then returns 0.
    pub fn translate_body(mut self, body: &[Stmt]) {
        self.translate_stmts(body);
        self.store_state();
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.ins().return_(&[zero]);
        self.b.finalize();
    }

    /// Starts emitting into `block`; what was stored before is no longer known here.
    fn enter(&mut self, block: cranelift_codegen::ir::Block) {
        self.stored.clear();
        self.b.switch_to_block(block);
    }

    /// The runtime moves D, B, A and n: the state scalars go to memory before the call, and n
    /// comes back from it after.
    fn translate_dictionary(&mut self, call: &crate::plan::DictionaryCall) {
        self.store_state();
        let int = |t: &mut Self, v: i64| t.b.ins().iconst(types::I64, v);
        let group = call.settings.penalty.group.map_or(-1, |(omega, _)| crate::runtime::picard::Omega::code(omega));
        let ints = [
            call.atoms.0 as i64,
            call.surrogate.0 as i64,
            call.curvature.0 as i64,
            call.steps.0 as i64,
            call.settings.batch as i64,
            group,
            call.settings.majorizer.code(),
        ];
        let floats = [
            call.settings.lambda1,
            call.settings.lambda2,
            call.settings.n0,
            call.settings.penalty.l1,
            call.settings.penalty.l2,
            call.settings.penalty.group.map_or(0.0, |(_, g)| g),
            call.settings.penalty.ball.unwrap_or(-1.0),
        ];
        let mut args = vec![self.ctx];
        for v in ints {
            args.push(int(self, v));
        }
        for v in floats {
            args.push(self.b.ins().f64const(v));
        }
        let fref = self.imports.dictionary.expect("imported for plans that learn a dictionary");
        self.b.ins().call(fref, &args);
        self.stored.clear();
        if let Some(var) = self.scalars[call.steps.0] {
            let x = self.b.ins().load(types::F64, trusted(), self.data.scalars, (call.steps.0 * 8) as i32);
            self.b.def_var(var, x);
        }
    }

    /// The runtime writes the step and `solved` (and b's step, only when it takes the step)
    /// through the context: those scalars go to memory first, so that a step not taken reads
    /// back what they held, and no stored vector value is reused after the call.
    fn translate_newton(&mut self, call: &crate::plan::NewtonCall) {
        for id in call.step_b.into_iter().chain([call.solved]) {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.use_var(var);
                self.b.ins().store(trusted(), x, self.data.scalars, (id.0 * 8) as i32);
            }
        }
        let ridge = self.translate_expr(&call.ridge);
        let ridge_b = self.translate_expr(&call.ridge_b);
        let g_b = self.translate_expr(&call.gradient_b.map_or(Expr::Const(0.0), Expr::Scalar));
        let cg_steps = self.translate_expr(&call.cg_steps);
        let int = |t: &mut Self, v: i64| t.b.ins().iconst(types::I64, v);
        let slot = |id: Option<crate::plan::ScalarId>| id.map_or(-1, |s| s.0 as i64);
        let ints = [
            call.curvature.0 as i64,
            call.gradient.0 as i64,
            slot(call.gradient_b),
            call.step.0 as i64,
            slot(call.step_b),
            call.solved.0 as i64,
        ];
        let mut args = vec![self.ctx, ridge, ridge_b, g_b, cg_steps];
        for v in ints {
            args.push(int(self, v));
        }
        let fref = self.imports.newton.expect("imported for plans that take a dense Newton step");
        self.b.ins().call(fref, &args);
        self.stored.clear();
        for id in call.step_b.into_iter().chain([call.solved]) {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.ins().load(types::F64, trusted(), self.data.scalars, (id.0 * 8) as i32);
                self.b.def_var(var, x);
            }
        }
    }

    /// The runtime moves w and α in memory and b and σ through the context: those scalars go to
    /// memory before the call and are read back after it, and no stored vector value is reused.
    fn translate_alm(&mut self, call: &crate::plan::AlmCall) {
        let moved: Vec<crate::plan::ScalarId> = call.intercept.into_iter().chain([call.sigma, call.estimate]).collect();
        for id in &moved {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.use_var(var);
                self.b.ins().store(trusted(), x, self.data.scalars, (id.0 * 8) as i32);
            }
        }
        let ridge_b = self.translate_expr(&call.ridge_b);
        let cap = self.translate_expr(&call.cap);
        let int = |t: &mut Self, v: i64| t.b.ins().iconst(types::I64, v);
        let ints = [
            call.weights.0 as i64,
            call.intercept.map_or(-1, |s| s.0 as i64),
            call.multipliers.0 as i64,
            call.sigma.0 as i64,
            call.estimate.0 as i64,
            call.labels.0 as i64,
            call.row_weights.map_or(-1, |v| v.0 as i64),
        ];
        let mut args = vec![self.ctx, ridge_b, cap];
        for v in ints {
            args.push(int(self, v));
        }
        let fref = self.imports.alm.expect("imported for plans that take an alm epoch");
        self.b.ins().call(fref, &args);
        self.stored.clear();
        for id in moved {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.ins().load(types::F64, trusted(), self.data.scalars, (id.0 * 8) as i32);
                self.b.def_var(var, x);
            }
        }
    }

    fn store_state(&mut self) {
        for (k, var) in self.scalars.iter().enumerate() {
            if let (Some(var), ScalarRole::State) = (var, self.plan.scalars[k].role) {
                let x = self.b.use_var(*var);
                self.b.ins().store(trusted(), x, self.data.scalars, (k * 8) as i32);
            }
        }
    }

    fn translate_stmts(&mut self, body: &[Stmt]) {
        for s in body {
            self.translate_stmt(s);
        }
    }

    fn translate_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Picard(call) => {
                // The runtime reads the operator and both buffers through the context.
                let gamma = self.translate_expr(&call.gamma);
                let tol = self.b.ins().f64const(call.tol);
                let cap = self.b.ins().iconst(types::I64, i64::from(call.cap));
                let omega = self.b.ins().iconst(types::I64, crate::runtime::picard::Omega::code(call.omega));
                let target = self.b.ins().iconst(types::I64, call.target.0 as i64);
                let dual = self.b.ins().iconst(types::I64, call.dual.0 as i64);
                let fref = self.imports.picard.expect("imported for plans that call picard");
                let ctx = self.ctx;
                self.b.ins().call(fref, &[ctx, gamma, tol, cap, omega, target, dual]);
                self.stored.clear();
            }
            Stmt::GroupShrink(target, gamma) => self.translate_group_shrink(*target, gamma),
            Stmt::Reduce(r) => self.translate_reduce(r),
            Stmt::Dictionary(call) => self.translate_dictionary(call),
            Stmt::Newton(call) => self.translate_newton(call),
            Stmt::Alm(call) => self.translate_alm(call),
            Stmt::Set(id, e) => {
                let x = self.translate_expr(e);
                let var = self.scalars[id.0].expect("verify: parameters are never assigned");
                self.b.def_var(var, x);
            }
            Stmt::StoreAt(v, r, c, e) => {
                let x = self.translate_expr(e);
                let addr = self.entry(*v, *r, *c);
                self.b.ins().store(trusted(), x, addr, 0);
                self.stored.insert((v.0, *r, Some(*c)), x);
            }
            Stmt::Store(v, idx, e) => {
                let x = self.translate_expr(e);
                let addr = self.element(self.bases[v.0], *idx, 8);
                self.b.ins().store(trusted(), x, addr, 0);
                self.stored.insert((v.0, *idx, None), x);
            }
            Stmt::For(Range::Perm(len), body) => self.translate_for_perm(*len, body),
            Stmt::For(Range::Upto(len), body) => self.translate_for_upto(*len, body),
            Stmt::For(Range::RowNonZeros, body) => self.translate_for_row_nonzeros(body),
            Stmt::For(Range::ColNonZeros, body) => self.translate_for_col_nonzeros(body),
            Stmt::If(cmp, l, r, body) => self.translate_if(*cmp, l, r, body),
            Stmt::Repeat(cap, cmp, l, r, body) => self.translate_repeat(*cap, *cmp, l, r, body),
            Stmt::Guard(e, _) => self.translate_guard(e),
            Stmt::Call(routine, slice, arg) => self.translate_routine(*routine, *slice, arg),
        }
    }

    /// `ranks: …`: the reduced scalars go to memory, the runtime reduces them and the buffers
    /// there, and they come back; a failed reduction returns [`super::abi::RANKS_FAILED`].
    fn translate_reduce(&mut self, r: &crate::plan::Reduction) {
        for id in &r.scalars {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.use_var(var);
                self.b.ins().store(trusted(), x, self.data.scalars, (id.0 * 8) as i32);
            }
        }
        let fref = self.imports.reduce.expect("imported for plans that reduce");
        let id = self.b.ins().iconst(types::I64, r.id as i64);
        let ctx = self.ctx;
        let call = self.b.ins().call(fref, &[ctx, id]);
        let failed = self.b.inst_results(call)[0];
        let (ok, fault) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(failed, fault, &[], ok, &[]);

        self.enter(fault);
        self.b.seal_block(fault);
        let code = self.b.ins().iconst(types::I64, super::abi::RANKS_FAILED);
        self.b.ins().return_(&[code]);

        self.enter(ok);
        self.b.seal_block(ok);
        for id in &r.scalars {
            if let Some(var) = self.scalars[id.0] {
                let x = self.b.ins().load(types::F64, trusted(), self.data.scalars, (id.0 * 8) as i32);
                self.b.def_var(var, x);
            }
        }
    }

    /// `group_shrink(target, γ)`: the runtime reads the operator and the target through the
    /// context; what was stored before may have changed.
    fn translate_group_shrink(&mut self, target: VecId, gamma: &Expr) {
        let gamma = self.translate_expr(gamma);
        let target = self.b.ins().iconst(types::I64, target.0 as i64);
        let fref = self.imports.group_shrink.expect("imported for plans that shrink groups");
        let ctx = self.ctx;
        self.b.ins().call(fref, &[ctx, gamma, target]);
        self.stored.clear();
    }

    /// `call routine(vec[0..n], arg)` or `call routine(W[r, 0..k], arg)`: the routine's entry
    /// point with the base pointer and length of the buffer or of its row r (lengths from the
    /// dimensions `check_shapes` verified the buffer against).
    fn translate_routine(&mut self, routine: Routine, slice: Slice, arg: &Expr) {
        let a = self.translate_expr(arg);
        let decl = self.plan.vector(slice.buf);
        let one = self.b.ins().iconst(types::I64, 1);
        let (base, len, width) = match (slice.row, decl.cols) {
            (Some(r), Some(cols)) => {
                let width = self.dim(cols);
                let row = self.index_value(r);
                let first = self.b.ins().imul(row, width);
                (self.offset(self.bases[slice.buf.0], first, 8), width, one)
            }
            _ => {
                let n = self.dim(decl.len);
                match decl.cols {
                    Some(c) => {
                        let w = self.dim(c);
                        (self.bases[slice.buf.0], self.b.ins().imul(n, w), w)
                    }
                    None => (self.bases[slice.buf.0], n, one),
                }
            }
        };
        let fref = self.imports.routines[&routine];
        self.b.ins().call(fref, &[base, len, width, a]);
        // The routine rewrote the buffer: values stored before the call are stale.
        self.stored.clear();
    }

    /// `base + index·size`, the index being the loop variable `i`, `j` or `c` (an i64).
    fn element(&mut self, base: Value, idx: Index, size: i64) -> Value {
        let k = self.index_value(idx);
        self.offset(base, k, size)
    }

    /// The loop variable of `idx` (verify puts it in scope wherever it is used).
    fn index_value(&self, idx: Index) -> Value {
        match idx {
            Index::Row => self.i.expect("verify: i in scope"),
            Index::Feature => self.j.expect("verify: j in scope"),
            Index::Class => self.c.expect("verify: c in scope"),
            Index::Step => self.q.expect("verify: q in scope"),
            Index::OpRow => unreachable!("verify: p is walked by the runtime only"),
        }
    }

    /// The bound size of a dimension (an i64 read from the context).
    fn dim(&self, len: Len) -> Value {
        match len {
            Len::Rows => self.data.rows,
            Len::Features => self.data.features,
            Len::Classes => self.data.classes.expect("loaded for plans with a class dimension"),
            Len::OpRows => unreachable!("verify: p is walked by the runtime only"),
        }
    }

    /// The address of `W[r, c]`: base + (r·width + c)·8, row-major.
    fn entry(&mut self, v: VecId, r: Index, c: Index) -> Value {
        if let Some(&row) = self.class_rows.get(&(v.0, r)).filter(|_| c == Index::Class) {
            let c = self.index_value(c);
            return self.offset(row, c, 8);
        }
        let width = self.dim(self.plan.vector(v).cols.expect("verify: a matrix"));
        let (r, c) = (self.index_value(r), self.index_value(c));
        let row = self.b.ins().imul(r, width);
        let k = self.b.ins().iadd(row, c);
        self.offset(self.bases[v.0], k, 8)
    }

    /// Fresh copies of the data and vector pointers for an inner loop. Values loaded once in
    /// the entry block would be live across the per-row runtime calls, and the register
    /// allocator would keep them on the stack and reload them on every non-zero; loading them
    /// again here (from L1) keeps their live ranges inside the loop, in registers.
    fn reload_pointers(&mut self) -> (DataPtrs, Vec<Value>) {
        let saved = (self.data, self.bases.clone());
        let (ptr, ctx) = (self.ptr, self.ctx);
        let load = |b: &mut FunctionBuilder, off: i32| b.ins().load(ptr, trusted(), ctx, off);
        self.data.indices = load(&mut self.b, offsets::INDICES);
        self.data.values = load(&mut self.b, offsets::VALUES);
        self.data.col_rows = load(&mut self.b, offsets::COL_ROWS);
        self.data.col_values = load(&mut self.b, offsets::COL_VALUES);
        self.data.features = self.b.ins().load(types::I64, trusted(), ctx, offsets::FEATURES);
        self.data.rows = self.b.ins().load(types::I64, trusted(), ctx, offsets::ROWS);
        if self.data.classes.is_some() {
            self.data.classes = Some(self.b.ins().load(types::I64, trusted(), ctx, offsets::CLASSES));
        }
        let vectors = load(&mut self.b, offsets::VECTORS);
        for k in 0..self.bases.len() {
            self.bases[k] = self.b.ins().load(ptr, trusted(), vectors, (k * ptr.bytes() as usize) as i32);
        }
        saved
    }

    /// `base + k·size` with size a power of two, written as a shift so the x64 back end can
    /// fold it into one addressing mode.
    fn offset(&mut self, base: Value, k: Value, size: i64) -> Value {
        let bytes = self.b.ins().ishl_imm(k, size.trailing_zeros() as i64);
        self.b.ins().iadd(base, bytes)
    }

    /// A counted loop `for k in start..end`: a header block tests the counter, the body runs,
    /// the counter steps. Cranelift's frontend turns the variable into block parameters (SSA)
    /// once all predecessors of the header are known, which is why the header is sealed last.
    fn counted_loop(&mut self, start: Value, end: Value, body: impl FnOnce(&mut Self, Value)) {
        let counter = self.b.declare_var(types::I64);
        self.b.def_var(counter, start);
        let header = self.b.create_block();
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, &[]);

        self.enter(header);
        let k = self.b.use_var(counter);
        let more = self.b.ins().icmp(IntCC::UnsignedLessThan, k, end);
        self.b.ins().brif(more, body_block, &[], exit, &[]);

        self.enter(body_block);
        self.b.seal_block(body_block);
        body(self, k);
        let next = self.b.ins().iadd_imm(k, 1);
        self.b.def_var(counter, next);
        self.b.ins().jump(header, &[]);

        self.b.seal_block(header);
        self.enter(exit);
        self.b.seal_block(exit);
    }

    /// Binds the loop index of `idx` to `k` while `body` is translated.
    fn with_index(&mut self, idx: Index, k: Value, body: impl FnOnce(&mut Self)) {
        let saved = self.slot(idx).replace(k);
        body(self);
        *self.slot(idx) = saved;
    }

    fn slot(&mut self, idx: Index) -> &mut Option<Value> {
        match idx {
            Index::Row => &mut self.i,
            Index::Feature => &mut self.j,
            Index::Class => &mut self.c,
            Index::Step => &mut self.q,
            Index::OpRow => unreachable!("verify: p is walked by the runtime only"),
        }
    }

    /// `for i in perm(m)` / `for j in perm(d)`: the index is order[k].
    fn translate_for_perm(&mut self, len: Len, body: &[Stmt]) {
        let zero = self.b.ins().iconst(types::I64, 0);
        let (order, n) = match len {
            Len::Rows => (self.data.order, self.data.n_order),
            Len::Features => (self.data.col_order, self.data.n_col_order),
            Len::Classes | Len::OpRows => unreachable!("verify: perm over m or d only"),
        };
        self.counted_loop(zero, n, |t, k| {
            let at = t.offset(order, k, 4);
            let x32 = t.b.ins().load(types::I32, trusted(), at, 0);
            let x = t.b.ins().uextend(types::I64, x32);
            let saved = t.q;
            if len == Len::Rows {
                t.q = Some(k);
            }
            t.with_index(len.index(), x, |t| t.translate_stmts(body));
            t.q = saved;
        });
    }

    /// `for i in 0..m` / `for j in 0..d` / `for c in 0..k`
    fn translate_for_upto(&mut self, len: Len, body: &[Stmt]) {
        if len == Len::Classes && innermost(body) {
            return self.translate_for_classes(body);
        }
        let saved = self.reload_pointers();
        let zero = self.b.ins().iconst(types::I64, 0);
        let n = self.dim(len);
        self.counted_loop(zero, n, |t, k| {
            let saved = t.q;
            if len == Len::Rows {
                t.q = Some(k);
            }
            t.with_index(len.index(), k, |t| t.translate_stmts(body));
            t.q = saved;
        });
        (self.data, self.bases) = saved;
    }

    /// `for c in 0..k` with no loop or runtime call inside: the body runs once per non-zero in
    /// a softmax pass, so the pointers are not reloaded (nothing in it spills them), and each
    /// matrix row it touches is addressed once, before the loop.
    fn translate_for_classes(&mut self, body: &[Stmt]) {
        let mut rows = vec![];
        crate::plan::walk::exprs(body, &mut |e| {
            if let Expr::LoadAt(v, r, Index::Class) = e {
                rows.push((*v, *r));
            }
        });
        crate::plan::walk::stmts(body, &mut |s| {
            if let Stmt::StoreAt(v, r, Index::Class, _) = s {
                rows.push((*v, *r));
            }
        });
        let saved = self.class_rows.clone();
        for (v, r) in rows {
            if r == Index::Class || self.class_rows.contains_key(&(v.0, r)) {
                continue;
            }
            let width = self.dim(self.plan.vector(v).cols.expect("verify: a matrix"));
            let row = self.index_value(r);
            let first = self.b.ins().imul(row, width);
            let at = self.offset(self.bases[v.0], first, 8);
            self.class_rows.insert((v.0, r), at);
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        let n = self.dim(Len::Classes);
        self.counted_loop(zero, n, |t, k| t.with_index(Index::Class, k, |t| t.translate_stmts(body)));
        self.class_rows = saved;
    }

    /// `for (i, v) in col(Xc, j)`: p in col_ptr[j]..col_ptr[j+1].
    fn translate_for_col_nonzeros(&mut self, body: &[Stmt]) {
        let saved = self.reload_pointers();
        let j = self.j.expect("verify: col(Xc, j) inside a loop binding j");
        let word = self.ptr.bytes() as i64;
        let at = self.offset(self.data.col_ptr, j, word);
        let lo = self.b.ins().load(self.ptr, trusted(), at, 0);
        let hi = self.b.ins().load(self.ptr, trusted(), at, word as i32);
        let (rows, values) = (self.data.col_rows, self.data.col_values);
        self.counted_loop(lo, hi, |t, p| {
            let at = t.offset(rows, p, 4);
            let i32v = t.b.ins().load(types::I32, trusted(), at, 0);
            let i = t.b.ins().uextend(types::I64, i32v);
            let at = t.offset(values, p, 8);
            let v = t.b.ins().load(types::F64, trusted(), at, 0);
            let (si, sv) = (t.i.replace(i), t.v.replace(v));
            t.translate_stmts(body);
            (t.i, t.v) = (si, sv);
        });
        (self.data, self.bases) = saved;
    }

    /// `for (j, v) in row(X, i)`: p in indptr[i]..indptr[i+1]. Unlike the interpreter, no
    /// test `j < d` per non-zero: the ABI guarantees every column is below d.
    fn translate_for_row_nonzeros(&mut self, body: &[Stmt]) {
        let saved = self.reload_pointers();
        self.translate_row_loop(body);
        (self.data, self.bases) = saved;
    }

    fn translate_row_loop(&mut self, body: &[Stmt]) {
        let i = self.i.expect("verify: row(X, i) inside a loop binding i");
        let word = self.ptr.bytes() as i64;
        let at = self.offset(self.data.indptr, i, word);
        let lo = self.b.ins().load(self.ptr, trusted(), at, 0);
        let hi = self.b.ins().load(self.ptr, trusted(), at, word as i32);
        let (indices, values) = (self.data.indices, self.data.values);
        let shift = self.b.ins().load(types::I64, trusted(), self.ctx, offsets::INDEX_SHIFT);
        self.counted_loop(lo, hi, |t, p| {
            let bytes = t.b.ins().ishl(p, shift);
            let at = t.b.ins().iadd(indices, bytes);
            let j32 = t.b.ins().load(types::I32, trusted(), at, 0);
            let j = t.b.ins().uextend(types::I64, j32);
            let at = t.offset(values, p, 8);
            let v = t.b.ins().load(types::F64, trusted(), at, 0);
            let (sj, sv) = (t.j.replace(j), t.v.replace(v));
            t.translate_stmts(body);
            (t.j, t.v) = (sj, sv);
        });
    }

    /// `repeat at most cap until l ⋈ r`: a do-while whose exit also counts the trips.
    fn translate_repeat(&mut self, cap: u32, cmp: Cmp, l: &Expr, r: &Expr, body: &[Stmt]) {
        let counter = self.b.declare_var(types::I64);
        let zero = self.b.ins().iconst(types::I64, 0);
        self.b.def_var(counter, zero);
        let body_block = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(body_block, &[]);
        self.enter(body_block);
        self.translate_stmts(body);
        let n = self.b.use_var(counter);
        let n = self.b.ins().iadd_imm(n, 1);
        self.b.def_var(counter, n);
        let done = self.compare(cmp, l, r);
        let capped = self.b.ins().icmp_imm(IntCC::UnsignedGreaterThanOrEqual, n, cap as i64);
        let stop = self.b.ins().bor(done, capped);
        self.b.ins().brif(stop, exit, &[], body_block, &[]);
        self.b.seal_block(body_block);
        self.enter(exit);
        self.b.seal_block(exit);
    }

    fn translate_if(&mut self, cmp: Cmp, l: &Expr, r: &Expr, body: &[Stmt]) {
        let c = self.compare(cmp, l, r);
        let then = self.b.create_block();
        let merge = self.b.create_block();
        self.b.ins().brif(c, then, &[], merge, &[]);
        self.enter(then);
        self.b.seal_block(then);
        self.translate_stmts(body);
        self.b.ins().jump(merge, &[]);
        self.enter(merge);
        self.b.seal_block(merge);
    }

    /// Continues if |x| < ∞ (false for NaN too); otherwise stores the state, the row and x,
    /// and returns the guard's number.
    fn translate_guard(&mut self, e: &Expr) {
        let x = self.translate_expr(e);
        self.guards += 1;
        let abs = self.b.ins().fabs(x);
        let inf = self.b.ins().f64const(f64::INFINITY);
        let finite = self.b.ins().fcmp(FloatCC::LessThan, abs, inf);
        let ok = self.b.create_block();
        let fault = self.b.create_block();
        self.b.ins().brif(finite, ok, &[], fault, &[]);

        self.enter(fault);
        self.b.seal_block(fault);
        self.store_state();
        let row = match self.i {
            Some(i) => i,
            None => self.b.ins().iconst(types::I64, 0),
        };
        self.b.ins().store(trusted(), row, self.ctx, offsets::FAULT_ROW);
        self.b.ins().store(trusted(), x, self.ctx, offsets::FAULT_VALUE);
        let code = self.b.ins().iconst(types::I64, self.guards);
        self.b.ins().return_(&[code]);

        self.enter(ok);
        self.b.seal_block(ok);
    }
}
