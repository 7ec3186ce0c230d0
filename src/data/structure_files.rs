//! The files a model names with `load("...")`: graph edges for `incidence(...)` and feature
//! groups for `groups(...)`. Both are plain text with 1-based feature indices, `#` comments and
//! blank lines. A bad line is an error with the file, line and what was wrong, never skipped:
//! a silently dropped edge changes the model the user wrote.

use std::path::Path;

/// A problem in a `load(...)` file: which file, which line, and what is wrong there.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {file}: {}", crate::data::io_reason(.source))]
    Io { file: String, source: std::io::Error },
    #[error("{file}:{line}: {problem}")]
    Bad { file: String, line: usize, problem: LineProblem },
}

/// What is wrong with a line of a structure file, as data; worded in one place (its Display).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LineProblem {
    NotUtf8,
    /// An edge line with this many fields instead of two.
    EdgeFields(usize),
    SelfLoop(u32),
    /// A feature listed twice in one group.
    TwiceInGroup(u32),
    IndexZero,
    IndexTooLarge(u64),
    /// A field that is not a whole number, escaped for a terminal.
    NotAnIndex(String),
    NoEdges,
    NoGroups,
}

impl std::fmt::Display for LineProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LineProblem::NotUtf8 => write!(f, "not text: the file is not UTF-8"),
            LineProblem::EdgeFields(n) => {
                write!(f, "expected an edge `i j` (two feature indices), found {n} fields")
            }
            LineProblem::SelfLoop(i) => write!(f, "edge {i} {i} joins a feature to itself"),
            LineProblem::TwiceInGroup(j) => write!(f, "feature {j} appears twice in this group"),
            LineProblem::IndexZero => write!(f, "feature index 0: indices are 1-based"),
            LineProblem::IndexTooLarge(v) => write!(f, "feature index {v} is larger than {}", u32::MAX),
            LineProblem::NotAnIndex(shown) => write!(f, "`{shown}` is not a feature index (a whole number ≥ 1)"),
            LineProblem::NoEdges => write!(f, "no edges: the file has no `i j` lines"),
            LineProblem::NoGroups => write!(f, "no groups: the file has no lines of feature indices"),
        }
    }
}

/// Edges `i j` of a graph over features (0-based once read), in file order.
#[derive(Clone, Debug, PartialEq)]
pub struct Edges {
    pub edges: Vec<(u32, u32)>,
    /// The largest feature index named (1-based), so the caller can check it against dim(x).
    pub max_index: u32,
}

/// Groups of features (0-based once read); groups may overlap.
#[derive(Clone, Debug, PartialEq)]
pub struct Groups {
    pub groups: Vec<Vec<u32>>,
    pub max_index: u32,
}

/// A feature two groups share, 1-based: the feature and the numbers of the groups (in file
/// order, counting only lines that hold a group).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shared {
    pub feature: u32,
    pub first: usize,
    pub second: usize,
}

impl Groups {
    /// The smallest feature two groups share, with the first two groups that list it; None
    /// when the groups are disjoint (then `group_l2`'s prox is the ℓ2 shrink of each group).
    /// Sorting (feature, group) pairs keeps this O(n log n) in the indices listed, however
    /// large they are.
    pub fn first_shared(&self) -> Option<Shared> {
        let mut pairs: Vec<(u32, usize)> =
            self.groups.iter().enumerate().flat_map(|(g, members)| members.iter().map(move |&j| (j, g))).collect();
        pairs.sort_unstable();
        pairs.windows(2).find(|w| w[0].0 == w[1].0).map(|w| Shared {
            feature: w[0].0 + 1,
            first: w[0].1 + 1,
            second: w[1].1 + 1,
        })
    }
}

pub fn read_edges(path: &Path) -> Result<Edges, LoadError> {
    let (text, name) = read_text(path)?;
    parse_edges(&text, &name)
}

pub fn read_groups(path: &Path) -> Result<Groups, LoadError> {
    let (text, name) = read_text(path)?;
    parse_groups(&text, &name)
}

fn read_text(path: &Path) -> Result<(String, String), LoadError> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| LoadError::Io { file: name.clone(), source: e })?;
    let text = String::from_utf8(bytes).map_err(|e| LoadError::Bad {
        file: name.clone(),
        line: 1 + e.as_bytes()[..e.utf8_error().valid_up_to()].iter().filter(|&&b| b == b'\n').count(),
        problem: LineProblem::NotUtf8,
    })?;
    Ok((text, name))
}

/// Lines `i j` (1-based, i ≠ j); a repeated edge is kept, as it doubles that edge's weight.
pub fn parse_edges(text: &str, file: &str) -> Result<Edges, LoadError> {
    let mut edges = vec![];
    let mut max_index = 0;
    for (n, fields) in content_lines(text) {
        let bad = |problem: LineProblem| LoadError::Bad { file: file.into(), line: n, problem };
        let idx: Vec<u32> = fields.iter().map(|f| index(f).map_err(bad)).collect::<Result<_, _>>()?;
        let [i, j] = idx[..] else {
            return Err(bad(LineProblem::EdgeFields(idx.len())));
        };
        if i == j {
            return Err(bad(LineProblem::SelfLoop(i)));
        }
        max_index = max_index.max(i).max(j);
        edges.push((i - 1, j - 1));
    }
    if edges.is_empty() {
        return Err(LoadError::Bad { file: file.into(), line: 1, problem: LineProblem::NoEdges });
    }
    Ok(Edges { edges, max_index })
}

/// One group per line: 1-based feature indices, each at most once in its group.
pub fn parse_groups(text: &str, file: &str) -> Result<Groups, LoadError> {
    let mut groups = vec![];
    let mut max_index = 0;
    for (n, fields) in content_lines(text) {
        let bad = |problem: LineProblem| LoadError::Bad { file: file.into(), line: n, problem };
        let mut g: Vec<u32> = fields.iter().map(|f| index(f).map_err(bad)).collect::<Result<_, _>>()?;
        g.sort_unstable();
        if let Some(w) = g.windows(2).find(|w| w[0] == w[1]) {
            return Err(bad(LineProblem::TwiceInGroup(w[0])));
        }
        max_index = max_index.max(*g.last().unwrap_or(&0));
        groups.push(g.into_iter().map(|i| i - 1).collect());
    }
    if groups.is_empty() {
        return Err(LoadError::Bad { file: file.into(), line: 1, problem: LineProblem::NoGroups });
    }
    Ok(Groups { groups, max_index })
}

/// Non-blank lines with comments cut, split on whitespace, with their 1-based numbers.
fn content_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(k, line)| {
        let line = line.split('#').next().unwrap_or("");
        let fields: Vec<&str> = line.split_whitespace().collect();
        (!fields.is_empty()).then_some((k + 1, fields))
    })
}

fn index(field: &str) -> Result<u32, LineProblem> {
    match field.parse::<u64>() {
        Ok(0) => Err(LineProblem::IndexZero),
        Ok(v) if v > u32::MAX as u64 => Err(LineProblem::IndexTooLarge(v)),
        Ok(v) => Ok(v as u32),
        Err(_) => Err(LineProblem::NotAnIndex(super::escape_for_message(field.as_bytes(), 40))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_are_read_zero_based_with_comments_and_blank_lines() {
        let e = parse_edges("# a path graph\n1 2\n\n2 3  # second\n", "e.txt").expect("valid");
        assert_eq!(e, Edges { edges: vec![(0, 1), (1, 2)], max_index: 3 });
    }

    #[test]
    fn bad_edge_files_say_line_and_problem() {
        let err = |t: &str| parse_edges(t, "e.txt").unwrap_err().to_string();
        assert_eq!(err("1 2\n3\n"), "e.txt:2: expected an edge `i j` (two feature indices), found 1 fields");
        assert_eq!(err("1 2 3\n"), "e.txt:1: expected an edge `i j` (two feature indices), found 3 fields");
        assert_eq!(err("0 2\n"), "e.txt:1: feature index 0: indices are 1-based");
        assert_eq!(err("4 4\n"), "e.txt:1: edge 4 4 joins a feature to itself");
        assert_eq!(err("1 x\n"), "e.txt:1: `x` is not a feature index (a whole number ≥ 1)");
        assert_eq!(err("1 99999999999\n"), "e.txt:1: feature index 99999999999 is larger than 4294967295");
        assert_eq!(err("# nothing\n"), "e.txt:1: no edges: the file has no `i j` lines");
    }

    #[test]
    fn groups_may_overlap_but_not_repeat_inside() {
        let g = parse_groups("1 2 3\n3 4\n", "g.txt").expect("valid");
        assert_eq!(g, Groups { groups: vec![vec![0, 1, 2], vec![2, 3]], max_index: 4 });
        let e = parse_groups("1 2\n5 3 5\n", "g.txt").unwrap_err().to_string();
        assert_eq!(e, "g.txt:2: feature 5 appears twice in this group");
    }

    #[test]
    fn the_first_shared_feature_names_the_first_two_groups_that_list_it() {
        let g = parse_groups("# c\n1 2\n9 7\n3 4\n7 5\n8 7 2\n", "g.txt").expect("valid");
        assert_eq!(g.first_shared(), Some(Shared { feature: 2, first: 1, second: 5 }));
        let g = parse_groups("1 2\n9 7\n3 4\n7 5\n", "g.txt").expect("valid");
        assert_eq!(g.first_shared(), Some(Shared { feature: 7, first: 2, second: 4 }));
        let g = parse_groups("1 2\n4294967295\n3\n", "g.txt").expect("valid");
        assert_eq!(g.first_shared(), None);
    }
}
