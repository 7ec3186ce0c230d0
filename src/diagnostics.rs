//! Problems found in model text, and their rendering as miette diagnostics.
//!
//! Stages produce [`Problem`]s (data: spans, a message, a hint); this module is the one place
//! that turns them into what the user sees. A model with problems exits with code 1.

use crate::source::{SourceFile, Span};
use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One thing wrong (or suspicious) in a model, pointing at where it was written.
#[derive(Clone, Debug)]
pub struct Problem {
    /// A stable code, e.g. `optc::syntax`, `optc::shape`.
    pub code: &'static str,
    pub message: String,
    /// The primary label first; further labels point at related places.
    pub labels: Vec<(Span, String)>,
    pub help: Option<String>,
    pub severity: Severity,
}

impl Problem {
    pub fn error(code: &'static str, message: impl Into<String>, span: Span, label: impl Into<String>) -> Self {
        Problem {
            code,
            message: message.into(),
            labels: vec![(span, label.into())],
            help: None,
            severity: Severity::Error,
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Self {
        self.labels.push((span, label.into()));
        self
    }

    /// Helps with the closest of `candidates` ("did you mean `x`?"), or with `otherwise` when
    /// none is close.
    pub fn suggest<'a>(
        self,
        name: &str,
        candidates: impl IntoIterator<Item = &'a str>,
        otherwise: impl Into<String>,
    ) -> Self {
        match did_you_mean(name, candidates) {
            Some(s) => self.with_help(format!("did you mean `{s}`?")),
            None => self.with_help(otherwise),
        }
    }

    pub fn warning(mut self) -> Self {
        self.severity = Severity::Warning;
        self
    }

    pub fn primary_span(&self) -> Span {
        self.labels.first().map(|l| l.0).unwrap_or_default()
    }
}

/// A problem together with the text it points into: what miette renders.
#[derive(Debug)]
pub struct SourceDiagnostic {
    pub problem: Problem,
    pub source: miette::NamedSource<String>,
}

impl SourceDiagnostic {
    pub fn new(problem: Problem, file: &SourceFile) -> Self {
        SourceDiagnostic { problem, source: file.named_source() }
    }
}

impl fmt::Display for SourceDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.problem.message)
    }
}

impl std::error::Error for SourceDiagnostic {}

impl miette::Diagnostic for SourceDiagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.problem.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.problem.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.problem.help.as_ref().map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        Some(Box::new(self.problem.labels.iter().enumerate().map(|(k, (span, text))| {
            let label = (!text.is_empty()).then(|| text.clone());
            if k == 0 {
                miette::LabeledSpan::new_primary_with_span(label, *span)
            } else {
                miette::LabeledSpan::new_with_span(label, *span)
            }
        })))
    }
}

/// Renders problems as text without colour (for files, snapshots and non-terminals).
pub fn render_plain(problems: &[Problem], file: &SourceFile) -> String {
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode_nocolor())
        .with_width(100)
        .without_syntax_highlighting();
    let mut out = String::new();
    for p in problems {
        let d = SourceDiagnostic::new(p.clone(), file);
        let _ = handler.render_report(&mut out, &d);
    }
    out
}

/// Renders problems for a terminal (colour when stderr is a terminal).
pub fn render_terminal(problems: &[Problem], file: &SourceFile) -> String {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return render_plain(problems, file);
    }
    let handler = miette::GraphicalReportHandler::new_themed(miette::GraphicalTheme::unicode()).with_width(100);
    let mut out = String::new();
    for p in problems {
        let d = SourceDiagnostic::new(p.clone(), file);
        let _ = handler.render_report(&mut out, &d);
    }
    out
}

/// The closest known name, for "did you mean" hints.
pub fn did_you_mean<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::damerau_levenshtein(name, c), c))
        .filter(|(d, c)| *d <= 2.max(c.chars().count() / 3) && *d < c.chars().count())
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}
