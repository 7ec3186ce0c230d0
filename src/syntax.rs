//! Stage 1: model text → untyped AST with spans. No IO, no panics on user input.

pub mod ast;
mod parser;

pub use parser::{parse, parse_expr};
