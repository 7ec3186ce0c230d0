//! What the files a model loads say about its structure. The analysis reads no files: the
//! pipeline reads them next to the model before analysis and hands over these facts, so
//! `optc check`, `optc plan` and `optc run` decide from the same reading.

/// How the groups of one `groups(load(...))` file lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GroupLayout {
    /// No feature is in two groups: `group_l2` is separable per group.
    Disjoint,
    /// `feature` (1-based) is in groups `first` and `second` (1-based, in file order): the
    /// smallest shared feature, the witness `optc check` shows.
    Overlap { feature: u32, first: usize, second: usize },
}

/// The facts, by the path as the model writes it. Empty when no file was read (a model
/// compiled from its text alone): then nothing is assumed of any file.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FileFacts {
    groups: Vec<(String, GroupLayout)>,
}

impl FileFacts {
    /// Records how the groups of `path` lie (a path loaded twice is read once).
    pub fn add_groups(&mut self, path: &str, layout: GroupLayout) {
        if self.groups(path).is_none() {
            self.groups.push((path.to_string(), layout));
        }
    }

    /// How the groups of `path` lie, if the file was read.
    pub fn groups(&self, path: &str) -> Option<GroupLayout> {
        self.groups.iter().find(|(p, _)| p == path).map(|(_, layout)| *layout)
    }
}
