//! `solve with NAME(option = value, ...)`: the name against the solver registry; the options'
//! values (which may mention the step counter t) are checked against the solver by analysis.

use super::*;

impl Checker<'_> {
    pub(super) fn solver(&mut self, s: &ast::SolveStmt) -> Option<SolverRequest> {
        let solvers = crate::solvers::names();
        if !solvers.contains(&s.solver.name.as_str()) {
            let candidates = solvers.iter().map(|s| s.to_string()).collect();
            self.err(CheckError::UnknownSolver { name: s.solver.name.clone(), span: s.solver.span, candidates });
            return None;
        }
        let mut options = vec![];
        for (name, value) in &s.options {
            let sym = match to_sym(value) {
                Ok(s) => s,
                Err(p) => {
                    self.err(CheckError::Formula(p));
                    continue;
                }
            };
            let Some(folded) = self.fold_params(&sym, value, &["t"]) else {
                continue;
            };
            options.push(SolverOption {
                name: name.name.clone(),
                value: symbolic::simplify(&folded),
                text: expr_text(value),
                span: name.span.join(value.span),
            });
        }
        Some(SolverRequest { name: s.solver.name.clone(), options, span: s.span })
    }
}
