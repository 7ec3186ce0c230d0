//! The `:` commands of the REPL, parsed from one line.

use crate::cli::path::PathOptions;
use crate::cli::session::SolveOptions;
use clap::Parser;
use std::path::PathBuf;

/// The options of `:run`: those of `optc run` that change a solve, not where its output goes.
#[derive(Parser, Debug, Default, Clone, PartialEq)]
#[command(name = ":run", disable_version_flag = true, no_binary_name = true)]
pub(crate) struct RunOpts {
    #[command(flatten)]
    pub solve: SolveOptions,
}

/// The options of `:path`: those of `optc path` after the model and the data.
#[derive(Parser, Debug)]
#[command(name = ":path", disable_version_flag = true, no_binary_name = true)]
struct PathCmd {
    #[command(flatten)]
    options: PathOptions,
}

/// The flags `:run` takes, for completion: read from its declaration ([`RunOpts`]), so a flag
/// added to `optc run`'s solve options is completed too.
pub(crate) fn run_flags() -> Vec<String> {
    use clap::CommandFactory;
    RunOpts::command().get_arguments().filter_map(|a| a.get_long()).map(|l| format!("--{l}")).collect()
}

#[derive(Debug, PartialEq)]
pub(crate) enum Command {
    Load(PathBuf),
    Data(PathBuf),
    Test(PathBuf),
    Check,
    Plan,
    Run(RunOpts),
    Show(usize),
    Path(Box<PathOptions>),
    Save(PathBuf),
    Model,
    Help,
    Quit,
}

/// Every command with its one-line help, in the order `:help` lists them.
pub(crate) const COMMANDS: [(&str, &str); 13] = [
    (":load", ":load MODEL        read a model file (replaces the current model)"),
    (":data", ":data FILE         read training data (kept between runs)"),
    (":test", ":test FILE         read held-out data; runs report its error and loss"),
    (":check", ":check             typecheck the model; print the structure optc recognised"),
    (":plan", ":plan              print the update plan (bound to the data when loaded)"),
    (":run", ":run [OPTIONS]     solve (optc run's --epochs --tol --solver --set --seed --shards ...; :run --help)"),
    (":show", ":show [K]          objective, gap, status, nnz and the K (10) largest weights"),
    (
        ":path",
        ":path --param λ [--from A --to B --steps N --out F.csv --plot F.svg ...]  a warm-started regularization path",
    ),
    (":save", ":save FILE         write the last solution as a LIBLINEAR model file"),
    (":model", ":model             print the current model text"),
    (":help", ":help              this list"),
    (":quit", ":quit              leave (also :q, :exit, end of input)"),
    (":exit", ""),
];

/// Parses a line that starts with `:`. The error is the message to print; clap's own (with
/// `:run --help`, its help) comes back as it renders it.
pub(crate) fn parse(line: &str) -> Result<Command, String> {
    let line = line.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let rest = rest.trim();
    let path = |what: &str| {
        if rest.is_empty() {
            Err(format!(
                "{name} needs {what}, e.g. `{name} {}`",
                if what == "a model file" { "model.opt" } else { "data.svm" }
            ))
        } else {
            Ok(PathBuf::from(unquote(rest)))
        }
    };
    let none = |c: Command| {
        if rest.is_empty() {
            Ok(c)
        } else {
            Err(format!("{name} takes no arguments"))
        }
    };
    match name {
        ":load" | ":l" => path("a model file").map(Command::Load),
        ":data" | ":d" => path("a data file").map(Command::Data),
        ":test" => path("a data file").map(Command::Test),
        ":save" => path("a file name").map(Command::Save),
        ":check" => none(Command::Check),
        ":plan" => none(Command::Plan),
        ":model" => none(Command::Model),
        ":help" | ":h" | ":?" => Ok(Command::Help),
        ":quit" | ":q" | ":exit" => none(Command::Quit),
        ":path" => {
            PathCmd::try_parse_from(rest.split_whitespace()).map(|p| Command::Path(Box::new(p.options))).map_err(|e| {
                let text = e.render().to_string();
                text.trim_end().to_string()
            })
        }
        ":run" | ":r" => RunOpts::try_parse_from(rest.split_whitespace()).map(Command::Run).map_err(|e| {
            let text = e.render().to_string();
            text.trim_end().to_string()
        }),
        ":show" | ":s" => match rest {
            "" => Ok(Command::Show(10)),
            k => k
                .parse()
                .map(Command::Show)
                .map_err(|_| format!(":show {k}: expected a number of weights, e.g. `:show 5`")),
        },
        _ => {
            let hint = crate::diagnostics::did_you_mean(name, COMMANDS.iter().map(|c| c.0))
                .map(|c| format!("; did you mean `{c}`?"))
                .unwrap_or_else(|| "; `:help` lists the commands".into());
            Err(format!("unknown command `{name}`{hint}"))
        }
    }
}

/// A path typed in quotes because it has spaces.
fn unquote(s: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = s.strip_prefix(q).and_then(|s| s.strip_suffix(q)) {
            return inner;
        }
    }
    s
}

/// The `:help` text.
pub(crate) fn help() -> String {
    let mut s = String::from("Commands:\n");
    for (_, line) in COMMANDS.iter().filter(|c| !c.1.is_empty()) {
        s += &format!("  {line}\n");
    }
    s += "Any other line is a statement that edits the model:\n";
    s += "  param λ = 1e-3              a parameter's value (the next :run starts from the last solution)\n";
    s += "  minimize E[...] + ...       a new objective\n";
    s += "  solve with scd(epochs = 20) the solver\n";
    s += "  data ..., var ...           declarations, replacing those of the same names\n";
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(parse(":load examples/svm.opt"), Ok(Command::Load("examples/svm.opt".into())));
        assert_eq!(parse(":data \"my data.svm\""), Ok(Command::Data("my data.svm".into())));
        assert_eq!(parse(":show"), Ok(Command::Show(10)));
        assert_eq!(parse(":show 3"), Ok(Command::Show(3)));
        assert!(parse(":show many").is_err());
        let Ok(Command::Run(o)) = parse(":run --epochs 5 --set lambda=1e-3 --no-jit") else { panic!() };
        assert_eq!(
            (o.solve.epochs, o.solve.model.set, o.solve.no_jit),
            (Some(5), vec!["lambda=1e-3".to_string()], true)
        );
        assert!(parse(":run --bogus").unwrap_err().contains("--bogus"));
        assert!(parse(":shwo").unwrap_err().contains("did you mean `:show`?"));
        assert!(parse(":load").is_err());
        assert_eq!(parse(":quit"), Ok(Command::Quit));
    }
}
