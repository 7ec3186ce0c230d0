//! The files a model loads (`load("...")`), read before analysis, relative to the model file's
//! directory. Each is checked — a bad line is a diagnostic at the term that loads it, naming the
//! file, the line and what is wrong — and the facts the analysis needs are taken from it:
//! whether a groups file's groups are disjoint, which decides `group_l2`'s prox. Reading here
//! keeps the analysis free of IO, and reading for every command keeps `check`, `plan` and `run`
//! in agreement about the model.

use crate::analysis::{FileFacts, GroupLayout};
use crate::check::{Model, Operator, RegTerm};
use crate::data::structure_files::{read_edges, read_groups, Groups, LoadError};
use crate::diagnostics::Problem;
use crate::source::Span;
use std::path::Path;

/// Reads every file `model` loads from `dir`; the facts, or a problem per bad file.
pub fn facts(model: &Model, dir: &Path) -> Result<FileFacts, Vec<Problem>> {
    terms_facts(&model.regs, dir)
}

/// Whether the terms name a file (`load("...")`): their facts, and the model's meaning, then
/// depend on more than its text.
pub fn reads_files(regs: &[RegTerm]) -> bool {
    regs.iter().any(|r| r.operator.iter().chain(&r.groups).any(|op| op.file().is_some()))
}

/// [`facts`] for the terms of any model (a dictionary's penalties too).
pub fn terms_facts(regs: &[RegTerm], dir: &Path) -> Result<FileFacts, Vec<Problem>> {
    let mut facts = FileFacts::default();
    let mut problems = vec![];
    for r in regs {
        for op in r.operator.iter().chain(&r.groups) {
            let read = match op {
                Operator::Groups(path) => read_groups(&dir.join(path)).map(|g| facts.add_groups(path, layout(&g))),
                Operator::Incidence(path) => read_edges(&dir.join(path)).map(|_| ()),
                Operator::Diff(_) | Operator::Center(_) => Ok(()),
            };
            if let Err(e) = read {
                problems.push(load_problem(&e, op, r.span));
            }
        }
    }
    if problems.is_empty() {
        Ok(facts)
    } else {
        Err(problems)
    }
}

fn layout(groups: &Groups) -> GroupLayout {
    match groups.first_shared() {
        None => GroupLayout::Disjoint,
        Some(s) => GroupLayout::Overlap { feature: s.feature, first: s.first, second: s.second },
    }
}

/// A file that cannot be read or has a bad line, blamed on the term that loads it.
fn load_problem(e: &LoadError, op: &Operator, term: Span) -> Problem {
    let (path, format) = match op {
        Operator::Groups(p) => (p, "a groups file has one group per line: 1-based feature indices, `#` comments"),
        Operator::Incidence(p) => {
            (p, "an edges file has one edge `i j` per line: two 1-based feature indices, `#` comments")
        }
        Operator::Diff(_) | Operator::Center(_) => unreachable!("only groups and incidence load files"),
    };
    let help = match e {
        LoadError::Io { .. } => "`load` paths are relative to the model file's directory".to_string(),
        LoadError::Bad { .. } => format.to_string(),
    };
    Problem::error("optc::load", e.to_string(), term, format!("loads \"{path}\"")).with_help(help)
}
