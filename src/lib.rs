//! optc: a modeling language and solver compiler for regularized loss minimization.
//!
//! The pipeline, one module per stage:
//!
//! ```text
//! text ─syntax→ ast::Program ─check→ check::Model ─analysis→ analysis::Structure
//!      ─plan→ plan::Plan ─exec→ (interpreter) → solved weights + report
//! ```
//!
//! `syntax`, `check`, `analysis` and `plan` do no IO. `exec` sees only the plan and the data.

// Native code is entered in exactly one audited place: src/exec/jit/abi.rs.
#![deny(unsafe_code)]

pub mod analysis;
pub mod check;
pub mod cli;
pub mod data;
pub mod diagnostics;
pub mod exec;
#[doc(hidden)]
pub mod fuzz_harness;
pub mod memory;
pub mod model_file;
pub mod output;
pub mod pipeline;
pub mod plan;
pub mod plot;
pub mod runtime;
pub mod session;
pub mod solvers;
pub mod source;
pub mod stdlib;
pub mod symbolic;
pub mod syntax;
pub mod temporary;
