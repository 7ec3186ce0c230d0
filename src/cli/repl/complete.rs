//! Tab completion for the terminal REPL: `:commands`, `:run`'s flags, file names after the
//! commands that read or write a file, and in statements the language's keywords, the stdlib's
//! names, the solvers and the current model's own names.

use super::commands::{run_flags, COMMANDS};
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::Context;

const KEYWORDS: [&str; 9] = ["data", "var", "param", "minimize", "solve", "with", "subject", "to", "st"];
/// Functions and types a statement may name besides the stdlib's.
const BUILTINS: [&str; 14] = [
    "dim",
    "classes",
    "diff",
    "incidence",
    "groups",
    "load",
    "sparse",
    "labels",
    "real",
    "vec",
    "mat",
    "scalar",
    "sqrt",
    "exp",
];

pub(crate) struct ReplHelper {
    /// The built-in names: keywords, losses, regularizers, sets, solvers.
    builtins: Vec<String>,
    /// The names of the model being edited; the REPL refreshes them after each edit.
    pub model_names: Vec<String>,
    files: FilenameCompleter,
}

impl ReplHelper {
    pub fn new() -> ReplHelper {
        let lib = crate::stdlib::Library::standard();
        let mut builtins: Vec<String> = KEYWORDS.iter().chain(&BUILTINS).map(|s| s.to_string()).collect();
        builtins.extend(lib.losses.iter().map(|l| l.name.clone()));
        builtins.extend(lib.regularizers.iter().map(|r| r.name.clone()));
        builtins.extend(lib.sets.iter().map(|s| s.name.clone()));
        builtins.extend(crate::solvers::names().iter().map(|s| s.to_string()));
        builtins.sort();
        builtins.dedup();
        ReplHelper { builtins, model_names: vec![], files: FilenameCompleter::new() }
    }

    /// Where the word under the cursor starts and what could finish it; None when the word is
    /// a file name (left to the file-name completer).
    pub fn candidates(&self, line: &str, pos: usize) -> Option<(usize, Vec<String>)> {
        let before = line.get(..pos)?;
        if let Some(command) = before.strip_prefix(':') {
            let Some((name, _)) = command.split_once(char::is_whitespace) else {
                let found = COMMANDS.iter().map(|c| c.0).filter(|c| c.starts_with(before)).map(str::to_string);
                return Some((0, found.collect()));
            };
            return match name {
                "load" | "l" | "data" | "d" | "test" | "save" => None,
                "run" | "r" => {
                    let start = before.rfind(char::is_whitespace).map_or(0, |i| i + 1);
                    let word = &before[start..];
                    // The value of the flag before the word: a solver's name, or a file.
                    match before[..start].split_whitespace().last() {
                        Some("--solver") => {
                            let names = crate::solvers::names().into_iter().filter(|s| s.starts_with(word));
                            return Some((start, names.map(str::to_string).collect()));
                        }
                        Some("--test") => return None,
                        _ => {}
                    }
                    let mut flags: Vec<String> =
                        run_flags().into_iter().filter(|f| word.starts_with('-') && f.starts_with(word)).collect();
                    flags.sort();
                    Some((start, flags))
                }
                _ => Some((pos, vec![])),
            };
        }
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| c.is_alphanumeric() || *c == '_')
            .last()
            .map_or(pos, |(i, _)| i);
        let word = &before[start..];
        if word.is_empty() {
            return Some((pos, vec![]));
        }
        let mut found: Vec<String> =
            self.model_names.iter().chain(&self.builtins).filter(|n| n.starts_with(word)).cloned().collect();
        found.sort();
        found.dedup();
        Some((start, found))
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        match self.candidates(line, pos) {
            Some((start, names)) => {
                Ok((start, names.into_iter().map(|n| Pair { display: n.clone(), replacement: n }).collect()))
            }
            None => self.files.complete(line, pos, ctx),
        }
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}
impl Highlighter for ReplHelper {}
impl Validator for ReplHelper {}
impl rustyline::Helper for ReplHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn complete(h: &ReplHelper, line: &str) -> (usize, Vec<String>) {
        h.candidates(line, line.len()).expect("not a file name")
    }

    #[test]
    fn completes_commands_flags_builtins_and_the_models_names() {
        let mut h = ReplHelper::new();
        h.model_names = vec!["λ".into(), "lam2".into(), "w".into()];
        assert_eq!(complete(&h, ":sh"), (0, vec![":show".to_string()]));
        assert_eq!(complete(&h, ":p").1, vec![":plan", ":path"]);
        assert_eq!(
            complete(&h, ":run --epochs 3 --t"),
            (16, vec!["--test".into(), "--threads".into(), "--time-limit".into(), "--tol".into()])
        );
        // Every solve option of `optc run` is completed, --shards among them.
        assert_eq!(complete(&h, ":run --sh").1, vec!["--shards"]);
        // A flag's value: a solver's name, or a file for --test.
        assert_eq!(complete(&h, ":run --solver sc").1, vec!["scd"]);
        assert_eq!(complete(&h, ":run --epochs 3 --solver ").1.len(), crate::solvers::names().len());
        assert!(h.candidates(":run --test exa", 15).is_none());
        assert_eq!(complete(&h, "minimize E[logis"), (11, vec!["logistic".to_string()]));
        assert_eq!(complete(&h, "solve with sc").1, vec!["scalar", "scd"]);
        assert!(complete(&h, "minimize E[logistic(y, <x, w>)] + la").1.contains(&"lam2".to_string()));
        assert_eq!(complete(&h, "param λ").1, vec!["λ"]);
        assert!(complete(&h, "minimize E[logistic(y, <x, w>)] + λ·l").1.contains(&"l1".to_string()));
        assert!(complete(&h, "").1.is_empty());
        assert!(h.candidates(":load exa", 9).is_none());
    }
}
