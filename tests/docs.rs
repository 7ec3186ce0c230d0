//! The documents' relative links and images point at files that exist, offline: README.md,
//! ARCHITECTURE.md and every page of docs/.

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
