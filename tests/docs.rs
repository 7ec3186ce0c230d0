//! The documents' relative links and images point at files that exist, offline: README.md,
//! ARCHITECTURE.md and every page of docs/; every figure in docs/ is drawn by a command of
//! docs/figures.sh that still runs; and every source file is on ARCHITECTURE.md's map.

use std::path::{Path, PathBuf};

/// The relative targets of `](target)` in a Markdown text, fragments dropped.
fn relative_links(text: &str) -> Vec<String> {
    let mut out = vec![];
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        let target = target.split('#').next().unwrap_or("");
        let external = ["http://", "https://", "mailto:"].iter().any(|p| target.starts_with(p));
        if !target.is_empty() && !external {
            out.push(target.to_string());
        }
    }
    out
}

fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn every_relative_link_and_image_exists() {
    let mut broken = vec![];
    for page in pages() {
        let text = std::fs::read_to_string(&page).expect("a page");
        for target in relative_links(&text) {
            let path = page.parent().expect("a folder").join(&target);
            if !path.exists() {
                broken.push(format!("{}: {target}", page.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_links_every_page_of_the_manual() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README");
    for page in ["docs/language.md", "docs/cli.md", "docs/solvers.md", "docs/library.md", "docs/testing.md"] {
        assert!(readme.contains(&format!("]({page})")), "README.md does not link {page}");
    }
    assert!(readme.contains("](ARCHITECTURE.md)"));
}

#[test]
fn the_link_finder_finds_links_and_skips_external_ones() {
    let found = relative_links("[a](docs/a.md#x) ![i](b.png \"t\") [w](https://x.org) [m](mailto:a@b)");
    assert_eq!(found, vec!["docs/a.md", "b.png"]);
}

/// One command of docs/figures.sh: the images it draws (its `# figure` lines) and its words.
#[derive(Debug)]
struct FigureCommand {
    figures: Vec<String>,
    words: Vec<String>,
}

/// The commands of docs/figures.sh that draw figures, in order.
fn figure_commands() -> Vec<FigureCommand> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let script = std::fs::read_to_string(root.join("docs/figures.sh")).expect("docs/figures.sh");
    let (mut out, mut figures) = (vec![], vec![]);
    for line in script.lines().map(str::trim) {
        if let Some(f) = line.strip_prefix("# figure ") {
            figures.push(f.trim().to_string());
        } else if !figures.is_empty() && !line.is_empty() && !line.starts_with('#') {
            let words = line.split_whitespace().map(|w| w.trim_matches('"').to_string()).collect();
            out.push(FigureCommand { figures: std::mem::take(&mut figures), words });
        }
    }
    out
}

/// The images in docs/.
fn images() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found: Vec<String> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "svg" || e == "png"))
        .map(|p| format!("docs/{}", p.file_name().expect("a name").to_string_lossy()))
        .collect();
    found.sort();
    found
}

/// Every image in docs/ is named by docs/figures.sh, and every image it names is in docs/ and
/// shown by some page: a figure with no command to draw it again goes stale unseen.
#[test]
fn every_figure_in_docs_has_its_command() {
    let commands = figure_commands();
    let named: Vec<String> = commands.iter().flat_map(|c| c.figures.clone()).collect();
    assert!(commands.len() >= 3, "{commands:?}");
    for image in images() {
        assert!(named.contains(&image), "{image} is drawn by no command of docs/figures.sh");
    }
    let shown: Vec<String> = pages()
        .iter()
        .flat_map(|p| relative_links(&std::fs::read_to_string(p).expect("a page")))
        .map(|l| format!("docs/{}", l.trim_start_matches("docs/")))
        .collect();
    for figure in &named {
        assert!(images().contains(figure), "docs/figures.sh names {figure}, which is not in docs/");
        assert!(shown.contains(figure), "{figure} is shown by no page");
    }
}

/// A Python with what the figures' scripts import, or None with a note: CI makes one and sets
/// OPTC_REQUIRE_FIGURES=1 (with OPTC_PYTHON) so that a lost install fails instead of skipping.
fn figures_python() -> Option<String> {
    let python = std::env::var("OPTC_PYTHON").unwrap_or_else(|_| "python3".into());
    let works = std::process::Command::new(&python)
        .args(["-c", "import matplotlib, sklearn, PIL, numpy"])
        .output()
        .is_ok_and(|o| o.status.success());
    if works {
        return Some(python);
    }
    let why = format!("`{python}` cannot import matplotlib, scikit-learn, pillow and numpy");
    if std::env::var("OPTC_REQUIRE_FIGURES").as_deref() == Ok("1") {
        panic!("OPTC_REQUIRE_FIGURES=1 but {why}");
    }
    let note = format!("note: the figures' Python commands were skipped: {why}; set OPTC_PYTHON to one that can\n");
    let _ = std::io::Write::write_all(&mut std::io::stderr(), note.as_bytes());
    None
}

/// Each command of docs/figures.sh runs, in its quick form, and draws the figures it names: the
/// optc command as it is, the Python scripts with --smoke on the repository's data; every
/// `docs/` output goes to a scratch directory instead.
#[test]
fn every_figures_command_still_runs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let python = figures_python();
    for command in figure_commands() {
        let scratch = tempfile::tempdir().expect("tmp");
        let at = |w: &str| match w.strip_prefix("docs/") {
            Some(rest) => scratch.path().join(rest).to_string_lossy().into_owned(),
            None if w == "docs" => scratch.path().to_string_lossy().into_owned(),
            None => w.to_string(),
        };
        let words: Vec<String> = command.words.iter().map(|w| at(w)).collect();
        let mut run = match words[0].as_str() {
            "$optc" => std::process::Command::new(env!("CARGO_BIN_EXE_optc")),
            "$python" => {
                let Some(p) = &python else { continue };
                let mut c = std::process::Command::new(p);
                c.env("OPTC", env!("CARGO_BIN_EXE_optc"));
                c
            }
            other => panic!("docs/figures.sh: a command of {other}, which the test does not know"),
        };
        run.current_dir(root).args(words[1..].iter().map(|w| if w == "$data" { "../shared/data" } else { w }));
        if words[0] == "$python" {
            run.arg("--smoke");
        }
        let out = run.output().expect("the command starts");
        let said = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{:?} failed:\n{said}", command.words);
        for figure in &command.figures {
            let made = std::fs::read(at(figure)).unwrap_or_else(|e| panic!("{figure} not drawn ({e}): {said}"));
            let looks = made.starts_with(b"\x89PNG") || String::from_utf8_lossy(&made).contains("<svg");
            assert!(looks, "{figure} is not an image");
        }
    }
}

/// The `.rs` files under `dir`, at any depth.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// Whether ARCHITECTURE.md names the source file at `path` (`src/…`, with slashes): by that path
/// anywhere, or in a row of the code map whose first cell names one of its directories
/// (`src/exec/certificate/`) by its path below that directory (`support/face.rs`).
fn on_the_map(map: &str, path: &str) -> bool {
    if map.contains(&format!("`{path}`")) {
        return true;
    }
    map.lines().filter(|l| l.starts_with("| `")).any(|row| {
        let first = row.split('|').nth(1).unwrap_or("");
        path.match_indices('/').any(|(at, _)| {
            first.contains(&format!("`{}`", &path[..=at])) && row.contains(&format!("`{}`", &path[at + 1..]))
        })
    })
}

/// A newcomer reads ARCHITECTURE.md to find where a job is done: a file it does not name is a
/// file nobody can find that way.
#[test]
fn every_source_file_is_on_the_map() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let map = std::fs::read_to_string(root.join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    assert!(files.len() > 100, "the walk found {} source files", files.len());
    let mut unnamed: Vec<String> = files
        .iter()
        .map(|f| f.strip_prefix(root).expect("under the root").to_string_lossy().replace('\\', "/"))
        .filter(|path| !on_the_map(&map, path))
        .collect();
    unnamed.sort();
    assert!(unnamed.is_empty(), "ARCHITECTURE.md does not name {unnamed:?}");
}

#[test]
fn the_map_finds_a_file_by_its_path_or_by_its_row() {
    let map = "| `src/a.rs` | a |\n| `src/b/` | `c.rs` and `d/e.rs` |\nthe text names `src/f.rs`\n";
    for named in ["src/a.rs", "src/b/c.rs", "src/b/d/e.rs", "src/f.rs"] {
        assert!(on_the_map(map, named), "{named}");
    }
    for unnamed in ["src/b/x.rs", "src/c.rs", "src/b/e.rs", "src/a/c.rs"] {
        assert!(!on_the_map(map, unnamed), "{unnamed}");
    }
}

/// The layers of `src/`, lowest first: a module may import only from the layers below its own
/// (never from its own layer, never from above). The pipeline reads bottom to top: the front end
/// (source text to a plan) does no IO, so the files and the memory guard sit above it; the data
/// binds a plan; the back ends run one on the data; the library and the commands sit on top.
/// This list is the one statement of the order; ARCHITECTURE.md points here.
const LAYERS: &[&[&str]] = &[
    &["source", "symbolic", "solvers"],
    &["diagnostics"],
    &["syntax"],
    &["stdlib"],
    &["check"],
    &["runtime"],
    &["analysis"],
    &["plan"],
    &["memory", "temporary"],
    &["output", "plot"],
    &["data"],
    &["model_file", "exec"],
    &["pipeline"],
    &["session"],
    &["cli"],
    &["fuzz_harness", "lib", "main", "bin"],
];

/// The layer of a top-level module (`src/NAME.rs` or `src/NAME/…`).
fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The text of a Rust file without its comments (line comments, doc comments and block
/// comments; string literals are kept, and a `//` inside one is rare enough in `src/` that
/// cutting the rest of that line loses no path).
fn code_of(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if rest.starts_with("/*") {
            rest = rest.find("*/").map_or("", |end| &rest[end + 2..]);
        } else if rest.starts_with("//") {
            rest = rest.find('\n').map_or("", |end| &rest[end..]);
        } else {
            let c = rest.chars().next().expect("not empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

/// The imports that run sideways or up the layers: "file: module → module".
fn imports_against_the_layers(root: &Path) -> Vec<String> {
    let files = module_files(root);
    let known: std::collections::BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let mut wrong = vec![];
    for (path, file) in &files {
        let (module, relative) = (&path[0], format!("src/{}.rs", path.join("/")));
        let Some(own) = layer(module) else {
            wrong.push(format!("{relative}: `{module}` is in no layer"));
            continue;
        };
        let code = code_of(&std::fs::read_to_string(file).expect("a source file"));
        for named in modules_named(path, &code, &known).iter().map(|n| &n[0]).filter(|n| *n != module) {
            match layer(named) {
                Some(l) if l < own => {}
                Some(_) => wrong.push(format!("{relative}: {module} → {named}")),
                None => wrong.push(format!("{relative}: names `crate::{named}`, in no layer")),
            }
        }
    }
    wrong.sort();
    wrong.dedup();
    wrong
}

/// Every import runs down the layers of [`LAYERS`]: no module reaches up a floor, and so no
/// two modules import each other.
#[test]
fn every_import_runs_down_the_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let wrong = imports_against_the_layers(root);
    assert!(wrong.is_empty(), "imports against the layer order (tests/docs.rs, LAYERS):\n{}", wrong.join("\n"));
}

#[test]
fn the_layer_check_reads_paths_groups_and_skips_comments() {
    let code = code_of(
        "use crate::{data::{A, B}, plan};\n// crate::cli in a comment\n/* crate::session */ let x = crate::exec::run();\n",
    );
    let known =
        ["data", "plan", "exec", "cli", "session", "fuzz_harness"].map(|m| vec![m.to_string()]).into_iter().collect();
    let tops: Vec<String> =
        modules_named(&["fuzz_harness".to_string()], &code, &known).into_iter().map(|m| m[0].clone()).collect();
    assert_eq!(tops, ["data", "exec", "plan"]);
    assert!(layer("plan") < layer("data") && layer("data") < layer("exec"));
    assert_eq!(layer("nowhere"), None);
}

/// The modules of `src/` by path (`exec/certificate/refine.rs` → `["exec", "certificate",
/// "refine"]`), the crate's root files left out.
fn module_files(root: &Path) -> Vec<(Vec<String>, PathBuf)> {
    let mut files = vec![];
    rust_files(&root.join("src"), &mut files);
    files
        .into_iter()
        .filter_map(|f| {
            let relative = f.strip_prefix(root.join("src")).ok()?.to_string_lossy().replace('\\', "/");
            let path: Vec<String> = relative.trim_end_matches(".rs").split('/').map(String::from).collect();
            (path != ["lib"] && path != ["main"]).then_some((path, f))
        })
        .collect()
}

/// The modules `code` (of the module at `own`) names through `crate::…` and `super::…` paths,
/// each resolved to the longest prefix that is a module of `known`; a module's own ancestors
/// and descendants left out (a parent declares its children, a child reads its parent). A use
/// group (`super::{a, b}`) counts as its prefix: the files of `src/` name siblings by path.
fn modules_named(own: &[String], code: &str, known: &std::collections::BTreeSet<Vec<String>>) -> Vec<Vec<String>> {
    let mut named = vec![];
    for (at, _) in code.match_indices("crate::").chain(code.match_indices("super::")) {
        if at > 0 && code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let mut path: Vec<String> =
            if code[at..].starts_with("crate") { vec![] } else { own[..own.len() - 1].to_vec() };
        let mut rest = &code[at + code[at..].find("::").expect("a path") + 2..];
        while let Some(more) = rest.strip_prefix("super::") {
            path.pop();
            rest = more;
        }
        let mut group = None;
        for segment in rest.split("::") {
            let name: String = segment.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let last = name.len() != segment.len();
            if !name.is_empty() {
                path.push(name);
            } else if segment.starts_with('{') {
                group = Some(&rest[rest.find(segment).expect("a segment of rest") + 1..]);
            }
            if last {
                break;
            }
        }
        // A use group names each of its items below the path: `super::{a, b::C}`.
        let paths = match group {
            Some(inside) => group_heads(inside).into_iter().map(|head| [path.clone(), head].concat()).collect(),
            None => vec![path],
        };
        for path in paths {
            let Some(module) = (1..=path.len()).rev().map(|k| path[..k].to_vec()).find(|p| known.contains(p)) else {
                continue;
            };
            let related = module.len() <= own.len() && own[..module.len()] == module[..]
                || own.len() <= module.len() && module[..own.len()] == own[..];
            if !related {
                named.push(module);
            }
        }
    }
    named.sort();
    named.dedup();
    named
}

/// The leading path of each top-level item of a use group, from just after its `{` to its
/// closing brace (`a, b::{C, D}, e::F` gives `a`, `b`, `e::F`).
fn group_heads(inside: &str) -> Vec<Vec<String>> {
    let (mut depth, mut item, mut heads) = (0, String::new(), vec![]);
    for c in inside.chars() {
        match c {
            '{' => depth += 1,
            '}' | ',' if depth == 0 => {
                let head: Vec<String> = item
                    .trim()
                    .split("::")
                    .map(|s| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>())
                    .take_while(|s| !s.is_empty())
                    .collect();
                if !head.is_empty() {
                    heads.push(head);
                }
                item.clear();
                if c == '}' {
                    break;
                }
                continue;
            }
            '}' => depth -= 1,
            _ => {}
        }
        item.push(c);
    }
    heads
}

/// The circles of `edges` (module → modules it names): the strongly connected components of
/// more than one module, each sorted.
fn circles(edges: &std::collections::BTreeMap<Vec<String>, Vec<Vec<String>>>) -> Vec<Vec<String>> {
    // Two modules share a circle when each reaches the other.
    let reach = |from: &Vec<String>| {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(m) = stack.pop() {
            for next in edges.get(&m).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reached: std::collections::BTreeMap<_, _> = edges.keys().map(|m| (m.clone(), reach(m))).collect();
    let mut found: Vec<Vec<String>> = vec![];
    for (m, r) in &reached {
        let mut circle: Vec<String> =
            r.iter().filter(|n| reached.get(*n).is_some_and(|back| back.contains(m))).map(|n| n.join("/")).collect();
        circle.sort();
        if circle.len() > 1 && !found.contains(&circle) {
            found.push(circle);
        }
    }
    found
}

/// No two modules of `src/` reach each other through their imports, at any depth: the layers
/// order the top-level modules, and this the files inside each.
#[test]
fn no_module_imports_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = module_files(root);
    let known: std::collections::BTreeSet<Vec<String>> = files.iter().map(|(m, _)| m.clone()).collect();
    let edges = files
        .iter()
        .map(|(m, f)| (m.clone(), modules_named(m, &code_of(&std::fs::read_to_string(f).expect("a file")), &known)))
        .collect();
    let found = circles(&edges);
    assert!(found.is_empty(), "modules that import each other: {found:?}");
}

#[test]
fn the_circle_check_resolves_paths_and_finds_circles() {
    let module = |s: &str| s.split('/').map(String::from).collect::<Vec<_>>();
    let known = ["exec", "exec/driver", "exec/stopping", "exec/certificate", "exec/certificate/refine", "plan"]
        .map(module)
        .into_iter()
        .collect();
    let code = "use super::stopping::Status;\nuse crate::plan::Plan;\nuse super::super::plan;\nlet x = super::certificate::refine::run();\nuse super::Exec;";
    assert_eq!(
        modules_named(&module("exec/driver"), code, &known),
        [module("exec/certificate/refine"), module("exec/stopping"), module("plan")]
    );
    let grouped = "use super::{certificate::refine, stopping::{Status, Settings}};";
    assert_eq!(
        modules_named(&module("exec/driver"), grouped, &known),
        [module("exec/certificate/refine"), module("exec/stopping")]
    );
    let edges = [
        (module("a/x"), vec![module("a/y")]),
        (module("a/y"), vec![module("a/x"), module("b")]),
        (module("b"), vec![]),
    ]
    .into_iter()
    .collect();
    assert_eq!(circles(&edges), [vec!["a/x".to_string(), "a/y".to_string()]]);
}

/// A file a newcomer can read in one sitting does one job: past 800 lines, split it by job.
#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut long: Vec<String> = module_files(root)
        .into_iter()
        .filter_map(|(m, f)| {
            let lines = std::fs::read_to_string(&f).expect("a file").lines().count();
            (lines > 800).then(|| format!("src/{}.rs: {lines} lines", m.join("/")))
        })
        .collect();
    long.sort();
    assert!(long.is_empty(), "split by job: {long:?}");
}
