//! Source text and byte spans: the only place offsets into a model file are made.
//!
//! Every AST node carries a [`Span`] so that a diagnostic raised in any later stage (check,
//! analysis, plan lowering, even a runtime fault) can point back at the text the user wrote.

use std::sync::Arc;

/// A half-open byte range `[start, end)` into one [`SourceFile`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Self {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(s: Span) -> Self {
        (s.start, s.end - s.start).into()
    }
}

impl From<pest::Span<'_>> for Span {
    fn from(s: pest::Span<'_>) -> Self {
        Span::new(s.start(), s.end())
    }
}

/// A named piece of model text (a file, the embedded stdlib, or a REPL line).
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<Arc<str>>) -> Self {
        SourceFile { name: name.into(), text: text.into() }
    }

    /// What miette needs to render a snippet of this file.
    pub fn named_source(&self) -> miette::NamedSource<String> {
        miette::NamedSource::new(&self.name, self.text.to_string())
    }

    pub fn slice(&self, span: Span) -> &str {
        &self.text[span.start..span.end]
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
        (line, col)
    }
}
