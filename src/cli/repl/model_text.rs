//! The model a REPL session edits, kept as its source text, one statement at a time. An edit
//! produces new text that goes through the usual front end, so what the user sees of a model
//! typed line by line (diagnostics, `:check`, `:plan`) is what `optc` shows for a file.

use crate::diagnostics::Problem;
use crate::source::SourceFile;
use crate::syntax::ast::Item;
use std::path::PathBuf;

/// Where a statement goes in the text: declarations keep their order, then the objective, then
/// the solver (the order a model file is written in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Declaration,
    Objective,
    Solver,
}

#[derive(Clone, Debug)]
struct Statement {
    place: Place,
    /// `param` statements: their values are not part of the model's shape.
    param: bool,
    /// The names it declares: a later statement declaring one of them replaces it.
    names: Vec<String>,
    text: String,
}

/// What an edit did, for the line the REPL prints back.
#[derive(Debug, PartialEq)]
pub(crate) enum Edit {
    /// A parameter's value: (name, old text if it had one, new text).
    Param(String, Option<String>, String),
    Objective {
        replaced: bool,
    },
    Solver {
        replaced: bool,
    },
    /// Another declaration (data, var, loss, regularizer, set): its first name.
    Declaration {
        name: String,
        replaced: bool,
    },
}

impl std::fmt::Display for Edit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Edit::Param(name, Some(old), new) => write!(f, "{name} = {new} (was {old})"),
            Edit::Param(name, None, new) => write!(f, "{name} = {new} (new parameter)"),
            Edit::Objective { replaced: true } => f.write_str("objective replaced"),
            Edit::Objective { replaced: false } => f.write_str("objective set"),
            Edit::Solver { replaced: true } => f.write_str("solver replaced"),
            Edit::Solver { replaced: false } => f.write_str("solver set"),
            Edit::Declaration { name, replaced: true } => write!(f, "`{name}` redeclared"),
            Edit::Declaration { name, replaced: false } => write!(f, "`{name}` declared"),
        }
    }
}

/// The model being edited.
#[derive(Clone, Debug, Default)]
pub(crate) struct ModelText {
    statements: Vec<Statement>,
    /// The file it was loaded from, while it is unedited: diagnostics then point into the file
    /// as written (with its comments and line numbers), not into the text rebuilt from it.
    pristine: Option<SourceFile>,
    /// Where the model's `load("...")` paths are relative to.
    pub dir: PathBuf,
    /// The name diagnostics show for the text.
    pub name: String,
}

impl ModelText {
    /// An empty model, its `load` paths relative to the working directory.
    pub fn empty() -> ModelText {
        ModelText { statements: vec![], pristine: None, dir: PathBuf::from("."), name: "<repl>".into() }
    }

    /// The model in `file`, split into statements; `dir` is where its `load` files are.
    pub fn from_file(file: SourceFile, dir: PathBuf) -> Result<ModelText, Problem> {
        let mut model = ModelText { statements: vec![], pristine: None, dir, name: format!("{} (edited)", file.name) };
        let program = crate::syntax::parse(&file)?;
        for item in &program.items {
            model.put(statement(item, &file));
        }
        model.pristine = Some(file);
        Ok(model)
    }

    /// The model with the statements of `line` applied, and what each did. A line that does
    /// not parse is a problem in `line`'s own text (named `<input>`).
    pub fn edited(&self, line: &SourceFile) -> Result<(ModelText, Vec<Edit>), Problem> {
        let program = crate::syntax::parse(line)?;
        let mut model = self.clone();
        let mut edits = vec![];
        for item in &program.items {
            let mut s = statement(item, line);
            if let Item::Param(p) = item {
                // `param lambda = ...` sets the `λ` the model declares: keep the model's spelling,
                // so the text (and its shape) names the parameter one way.
                if let Some(old) = model.statements.iter().find(|o| clashes(&s, o)) {
                    s.names.clone_from(&old.names);
                    s.text = format!("param {} = {}", old.names[0], line.slice(p.value.span));
                }
            }
            let old = model.put(s.clone());
            edits.push(match (item, old) {
                (Item::Param(p), old) => {
                    let value = line.slice(p.value.span).to_string();
                    let old = old.and_then(|o| o.text.split_once('=').map(|(_, v)| v.trim().to_string()));
                    Edit::Param(s.names.first().cloned().unwrap_or_else(|| p.name.name.clone()), old, value)
                }
                (Item::Minimize(_), old) => Edit::Objective { replaced: old.is_some() },
                (Item::Solve(_), old) => Edit::Solver { replaced: old.is_some() },
                (_, old) => {
                    Edit::Declaration { name: s.names.first().cloned().unwrap_or_default(), replaced: old.is_some() }
                }
            });
        }
        if !edits.is_empty() {
            model.pristine = None;
        }
        Ok((model, edits))
    }

    /// Adds a statement, replacing the ones it redeclares; returns the first replaced.
    fn put(&mut self, s: Statement) -> Option<Statement> {
        let hits: Vec<usize> = (0..self.statements.len()).filter(|&i| clashes(&s, &self.statements[i])).collect();
        match hits.first() {
            Some(&i) => {
                let old = std::mem::replace(&mut self.statements[i], s);
                // A `data` line naming the bindings of two earlier lines replaces both.
                for &j in hits[1..].iter().rev() {
                    self.statements.remove(j);
                }
                Some(old)
            }
            None => {
                let at = self.statements.iter().position(|t| t.place > s.place).unwrap_or(self.statements.len());
                self.statements.insert(at, s);
                None
            }
        }
    }

    /// The text the front end reads.
    pub fn source(&self) -> SourceFile {
        if let Some(f) = &self.pristine {
            return f.clone();
        }
        SourceFile::new(self.name.clone(), self.text())
    }

    fn text(&self) -> String {
        self.statements.iter().map(|s| format!("{}\n", s.text)).collect()
    }

    /// Everything but the parameters' values: a run of a model with the same shape can start
    /// from the last one's solution.
    pub fn shape(&self) -> String {
        let mut out = String::new();
        for s in &self.statements {
            match (s.param, s.names.first()) {
                (true, Some(name)) => out += &format!("param {name}\n"),
                _ => out += &format!("{}\n", s.text),
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.statements.is_empty()
    }

    pub fn has_objective(&self) -> bool {
        self.statements.iter().any(|s| s.place == Place::Objective)
    }

    /// The names the model declares, for completion.
    pub fn names(&self) -> Vec<String> {
        self.statements.iter().flat_map(|s| s.names.iter().cloned()).collect()
    }

    /// The model as text, one statement a line (`:model`).
    pub fn listing(&self) -> String {
        self.text()
    }
}

/// Whether `new` replaces `old`: one objective, one solver, one declaration of each name
/// (parameters under either spelling, `lambda` for `λ`).
fn clashes(new: &Statement, old: &Statement) -> bool {
    match new.place {
        Place::Objective | Place::Solver => old.place == new.place,
        Place::Declaration => {
            old.place == Place::Declaration
                && old.names.iter().any(|o| {
                    new.names.iter().any(|n| {
                        o == n
                            || (new.param
                                && old.param
                                && crate::check::resolve_param(std::slice::from_ref(o), n).is_some())
                    })
                })
        }
    }
}

fn statement(item: &Item, file: &SourceFile) -> Statement {
    let (place, names, span) = match item {
        Item::Data(d) => (Place::Declaration, d.bindings.iter().map(|(n, _)| n.name.clone()).collect(), d.span),
        Item::Var(v) => (Place::Declaration, vec![v.name.name.clone()], v.span),
        Item::Param(p) => (Place::Declaration, vec![p.name.name.clone()], p.span),
        Item::Loss(d) | Item::Regularizer(d) => (Place::Declaration, vec![d.name.name.clone()], d.span),
        Item::Set(d) => (Place::Declaration, vec![d.name.name.clone()], d.span),
        Item::Minimize(o) => (Place::Objective, vec![], o.span),
        Item::Solve(s) => (Place::Solver, vec![], s.span),
    };
    Statement { place, param: matches!(item, Item::Param(_)), names, text: file.slice(span).trim_end().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> ModelText {
        let text = "# a comment\ndata x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l1(w)\n";
        ModelText::from_file(SourceFile::new("m.opt", text), PathBuf::from(".")).unwrap()
    }

    fn edit(m: &ModelText, line: &str) -> (ModelText, Vec<Edit>) {
        m.edited(&SourceFile::new("<input>", line)).unwrap()
    }

    #[test]
    fn a_parameter_line_replaces_its_value_under_either_spelling() {
        let m = model();
        let (m2, edits) = edit(&m, "param lambda = 1e-3");
        assert_eq!(edits, vec![Edit::Param("λ".into(), Some("1e-4".into()), "1e-3".into())]);
        assert!(m2.listing().contains("param λ = 1e-3\nminimize"), "{}", m2.listing());
        assert!(!m2.listing().contains("1e-4"));
        assert_eq!(m.shape(), m2.shape());
    }

    #[test]
    fn objective_and_solver_are_replaced_and_kept_last() {
        let (m, e) = edit(&model(), "solve with scd(epochs = 3)");
        assert_eq!(e, vec![Edit::Solver { replaced: false }]);
        let (m, e) = edit(&m, "minimize E[hinge(y, <x, w>)] + λ·l2sq(w)");
        assert_eq!(e, vec![Edit::Objective { replaced: true }]);
        let (m, _) = edit(&m, "param μ = 2");
        let text = m.listing();
        assert!(
            text.ends_with("param μ = 2\nminimize E[hinge(y, <x, w>)] + λ·l2sq(w)\nsolve with scd(epochs = 3)\n"),
            "{text}"
        );
        assert_ne!(m.shape(), model().shape());
    }

    #[test]
    fn a_line_that_does_not_parse_leaves_the_model_alone() {
        let m = model();
        assert!(m.edited(&SourceFile::new("<input>", "param = 3")).is_err());
        let (same, edits) = edit(&m, "   # only a comment");
        assert!(edits.is_empty());
        assert_eq!(same.source().text, m.source().text);
    }
}
