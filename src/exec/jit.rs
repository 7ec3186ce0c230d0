//! The Cranelift back end: compiles a plan's init, epoch and finish into native functions
//! specialised to the model, and runs them through the driver like the interpreter.
//!
//! A plan that fails verification, a target Cranelift does not support, or a code-generation
//! error gives a [`JitError`] — never a crash — and the caller falls back to the interpreter.

mod abi;
mod translate;

use super::{Backend, DataView, Fault, Orders, SharedEpoch, State};
use crate::plan::{Plan, ScalarRole, Stmt};

use abi::KernelFn;
use cranelift_codegen::ir::{types, AbiParam};
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{default_libcall_names, Linkage, Module};
use std::collections::HashMap;
use std::time::Instant;

pub use abi::check_shapes;

#[derive(Debug, thiserror::Error)]
pub enum JitError {
    #[error("the plan is malformed: {0}")]
    Malformed(String),
    #[error("this machine is not supported by the JIT: {0}")]
    Unsupported(String),
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// Native code for one plan, bound to its parameter values.
pub struct Kernel {
    /// Owns the executable memory the function pointers point into.
    _module: JITModule,
    /// init, epoch, finish.
    phases: [KernelFn; 3],
    /// What each guard number of each phase means, in translation order.
    guards: [Vec<String>; 3],
    /// The Cranelift IR of the functions, when asked for (`optc plan --emit clif`); else empty.
    pub clif: String,
    /// The machine code, when asked for (`optc plan --emit asm`).
    pub asm: Option<String>,
    pub compile_seconds: f64,
}

/// Compiles `plan` with its parameters fixed to `params` (the state's scalars after binding).
pub fn compile(plan: &Plan, params: &[f64]) -> Result<Kernel, JitError> {
    compile_with(plan, params, Emit::Nothing)
}

/// The text a compile keeps of the code it generates (`optc plan --emit clif|asm`). A run keeps
/// none: rendering the IR as text cost as much as a tenth of compiling a small plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Emit {
    Nothing,
    Clif,
    Asm,
}

/// As [`compile`], keeping the text `emit` asks for in [`Kernel::clif`] or [`Kernel::asm`].
pub fn compile_with(plan: &Plan, params: &[f64], emit: Emit) -> Result<Kernel, JitError> {
    let start = Instant::now();
    crate::plan::verify::verify(plan).map_err(JitError::Malformed)?;
    if params.len() != plan.scalars.len() {
        return Err(JitError::Malformed("parameter values do not match the plan".into()));
    }
    if let Some((k, _)) =
        plan.scalars.iter().enumerate().find(|(k, s)| s.role == ScalarRole::Param && !params[*k].is_finite())
    {
        return Err(JitError::Malformed(format!("parameter `{}` is {}", plan.scalars[k].name, params[k])));
    }
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| JitError::Codegen(e.to_string()));
    // No mid-end optimisation: the plan already places every computation where it belongs
    // (per run, per row, per non-zero) with constants folded, and Cranelift's e-graph pass
    // sinks pure values to their uses — it moved η = η₀/√t, a sqrt and a divide per row, into
    // the per-non-zero loop, costing 30% on the benchmark. Instruction selection and register
    // allocation are unaffected.
    set(&mut flags, "opt_level", "none")?;
    // Cranelift checks its IR before compiling it unless told not to. The tests (debug builds)
    // keep the check; a release build skips it: with the IR no longer rendered as text, the
    // lasso's SCD kernel compiles in 2.1 ms instead of 2.5.
    set(&mut flags, "enable_verifier", if cfg!(debug_assertions) { "true" } else { "false" })?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    let isa = cranelift_native::builder()
        .map_err(|e| JitError::Unsupported(e.to_string()))?
        .finish(settings::Flags::new(flags))
        .map_err(|e| JitError::Unsupported(e.to_string()))?;
    let ptr = isa.pointer_type();
    if ptr != types::I64 {
        return Err(JitError::Unsupported("kernels assume 64-bit pointers".into()));
    }
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    for (name, addr, _) in abi::runtime_symbols() {
        jb.symbol(name, addr);
    }
    for (name, addr, _) in abi::routine_symbols() {
        jb.symbol(name, addr);
    }
    jb.symbol("optc_picard", abi::picard_symbol());
    jb.symbol("optc_dictionary", abi::dictionary_symbol());
    jb.symbol("optc_smm_catch_up", abi::catch_up_symbol());
    jb.symbol("optc_group_shrink", abi::group_shrink_symbol());
    jb.symbol("optc_reduce", abi::reduce_symbol());
    jb.symbol("optc_newton", abi::newton_symbol());
    jb.symbol("optc_alm", abi::alm_symbol());
    let mut module = JITModule::new(jb);

    let mut text = Listing { clif: (emit == Emit::Clif).then(String::new), asm: (emit == Emit::Asm).then(String::new) };
    let mut ids = vec![];
    for (name, body) in [("optc_init", &plan.init), ("optc_epoch", &plan.epoch), ("optc_finish", &plan.finish)] {
        // An empty init still gets a function (it returns 0) but is left out of the listing.
        let mut hidden = Listing { clif: None, asm: None };
        let listing = if body.is_empty() && name == "optc_init" { &mut hidden } else { &mut text };
        ids.push(define(&mut module, plan, params, name, body, listing)?);
    }
    module.finalize_definitions().map_err(|e| JitError::Codegen(e.to_string()))?;
    // Each was defined by `define` with the kernel signature; `_module` below keeps the code
    // alive as long as the Kernel.
    let kernel = |k: usize| abi::as_kernel(module.get_finalized_function(ids[k]));
    let phases = [kernel(0), kernel(1), kernel(2)];
    let guards = [
        crate::plan::walk::guards(&plan.init),
        crate::plan::walk::guards(&plan.epoch),
        crate::plan::walk::guards(&plan.finish),
    ];
    Ok(Kernel {
        _module: module,
        phases,
        guards,
        clif: text.clif.unwrap_or_default(),
        asm: text.asm,
        compile_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The text forms of the generated code.
struct Listing {
    clif: Option<String>,
    asm: Option<String>,
}

fn define(
    module: &mut JITModule,
    plan: &Plan,
    params: &[f64],
    name: &str,
    body: &[Stmt],
    text: &mut Listing,
) -> Result<cranelift_module::FuncId, JitError> {
    let ptr = module.target_config().pointer_type();
    let mut ctx = module.make_context();
    ctx.func.signature.params.push(AbiParam::new(ptr));
    ctx.func.signature.returns.push(AbiParam::new(types::I64));
    let mut fbc = FunctionBuilderContext::new();
    let builder = FunctionBuilder::new(&mut ctx.func, &mut fbc);

    let mut runtime = HashMap::new();
    for (sym, _, func) in abi::runtime_symbols() {
        let mut sig = module.make_signature();
        sig.params.push(AbiParam::new(types::F64));
        sig.returns.push(AbiParam::new(types::F64));
        let id = module.declare_function(sym, Linkage::Import, &sig).map_err(|e| JitError::Codegen(e.to_string()))?;
        let fref: cranelift_codegen::ir::FuncRef = module.declare_func_in_func(id, builder.func);
        runtime.insert(func, fref);
    }
    // Only the routines this body calls: an import is a line in the listing.
    let mut used = vec![];
    crate::plan::walk::stmts(body, &mut |s| {
        if let Stmt::Call(r, _, _) = s {
            used.push(*r);
        }
    });
    let mut routines = HashMap::new();
    for (sym, _, routine) in abi::routine_symbols().into_iter().filter(|(_, _, r)| used.contains(r)) {
        let mut sig = module.make_signature();
        sig.params.extend([AbiParam::new(ptr), AbiParam::new(types::I64), AbiParam::new(types::I64)]);
        sig.params.push(AbiParam::new(types::F64));
        let id = module.declare_function(sym, Linkage::Import, &sig).map_err(|e| JitError::Codegen(e.to_string()))?;
        routines.insert(routine, module.declare_func_in_func(id, builder.func));
    }
    // The runtime's entry points this body calls, each declared once with its signature.
    let calls = |test: fn(&Stmt) -> bool| {
        let mut found = false;
        crate::plan::walk::stmts(body, &mut |s| found |= test(s));
        found
    };
    let mut catches_up = false;
    crate::plan::walk::exprs(body, &mut |e| catches_up |= matches!(e, crate::plan::Expr::CatchUp(_)));
    let (f64, i64) = (types::F64, types::I64);
    let mut import = |used: bool, name: &str, params: &[types::Type], returns: &[types::Type]| {
        if !used {
            return Ok(None);
        }
        let mut sig = module.make_signature();
        sig.params.extend(params.iter().map(|&t| AbiParam::new(t)));
        sig.returns.extend(returns.iter().map(|&t| AbiParam::new(t)));
        let id = module.declare_function(name, Linkage::Import, &sig).map_err(|e| JitError::Codegen(e.to_string()))?;
        Ok::<_, JitError>(Some(module.declare_func_in_func(id, builder.func)))
    };
    let picard =
        import(calls(|s| matches!(s, Stmt::Picard(_))), "optc_picard", &[ptr, f64, f64, i64, i64, i64, i64], &[])?;
    let group_shrink =
        import(calls(|s| matches!(s, Stmt::GroupShrink(..))), "optc_group_shrink", &[ptr, f64, i64], &[])?;
    let catch_up = import(catches_up, "optc_smm_catch_up", &[f64, f64, f64, ptr, ptr, i64, f64, f64, f64], &[f64])?;
    let mut dictionary_params = vec![ptr];
    dictionary_params.extend([i64; 6]);
    dictionary_params.extend([f64; 7]);
    let dictionary = import(calls(|s| matches!(s, Stmt::Dictionary(_))), "optc_dictionary", &dictionary_params, &[])?;
    let reduce = import(calls(|s| matches!(s, Stmt::Reduce(_))), "optc_reduce", &[ptr, i64], &[i64])?;
    let newton_params = [ptr, f64, f64, f64, f64, i64, i64, i64, i64, i64, i64];
    let newton = import(calls(|s| matches!(s, Stmt::Newton(_))), "optc_newton", &newton_params, &[])?;
    let alm_params = [ptr, f64, f64, i64, i64, i64, i64, i64, i64, i64];
    let alm = import(calls(|s| matches!(s, Stmt::Alm(_))), "optc_alm", &alm_params, &[])?;
    let imports = translate::Imports {
        funcs: runtime,
        routines,
        picard,
        group_shrink,
        catch_up,
        dictionary,
        reduce,
        newton,
        alm,
    };
    translate::PlanTranslator::new(builder, plan, params, imports, ptr).translate_body(body);

    if let Some(clif) = text.clif.as_mut() {
        clif.push_str(&format!("; {name}\n{}\n", ctx.func.display()));
    }
    let id = module
        .declare_function(name, Linkage::Local, &ctx.func.signature)
        .map_err(|e| JitError::Codegen(e.to_string()))?;
    ctx.set_disasm(text.asm.is_some());
    module.define_function(id, &mut ctx).map_err(|e| JitError::Codegen(format!("{e:?}")))?;
    if let (Some(asm), Some(code)) = (text.asm.as_mut(), ctx.compiled_code().and_then(|c| c.vcode.clone())) {
        asm.push_str(&format!("; {name}\n{code}\n"));
    }
    module.clear_context(&mut ctx);
    Ok(id)
}

/// Runs compiled kernels.
pub struct JitBackend<'p> {
    pub plan: &'p Plan,
    pub kernel: Kernel,
}

impl JitBackend<'_> {
    fn phases(&self) -> Phases<'_> {
        Phases { plan: self.plan, code: self.kernel.phases, guards: &self.kernel.guards }
    }
}

/// The compiled phases apart from the module that owns their memory (which the back end keeps
/// alive): plain function pointers, which threads may call at once on states of their own.
struct Phases<'a> {
    plan: &'a Plan,
    code: [KernelFn; 3],
    guards: &'a [Vec<String>; 3],
}

impl Phases<'_> {
    fn run(&self, phase: usize, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        let abi::Returned { code, row, value, ranks } = abi::call(self.code[phase], self.plan, state, data, orders)
            .map_err(|e| Fault { what: format!("the kernel's inputs ({e})"), value: f64::NAN, step: 0.0, row: 0 })?;
        if code == 0 {
            return Ok(());
        }
        if let Some(e) = ranks {
            return Err(Fault::across_ranks(&e));
        }
        let what = self.guards[phase].get(code as usize - 1).cloned().unwrap_or_else(|| "a guarded value".into());
        let step = self.plan.step_counter.map_or(0.0, |t| state.scalars[t.0]);
        Err(Fault { what, value, step, row: row as usize })
    }
}

impl SharedEpoch for Phases<'_> {
    fn epoch(&self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        self.run(1, state, data, orders)
    }

    fn finish(&self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        self.run(2, state, data, &Orders::NONE)
    }
}

impl Backend for JitBackend<'_> {
    fn name(&self) -> &'static str {
        "jit"
    }

    fn init(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        self.phases().run(0, state, data, &Orders::NONE)
    }

    fn epoch(&mut self, state: &mut State, data: &DataView, orders: &Orders) -> Result<(), Fault> {
        SharedEpoch::epoch(&self.phases(), state, data, orders)
    }

    fn finish(&mut self, state: &mut State, data: &DataView) -> Result<(), Fault> {
        SharedEpoch::finish(&self.phases(), state, data)
    }

    fn shared(&self) -> Option<Box<dyn SharedEpoch + '_>> {
        Some(Box::new(self.phases()))
    }
}
