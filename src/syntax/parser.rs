//! pest pairs → AST, and pest errors → diagnostics that name the missing bracket.

use super::ast::*;
use crate::diagnostics::Problem;
use crate::source::{SourceFile, Span};
use pest::iterators::Pair;
use pest::Parser as _;

#[derive(pest_derive::Parser)]
#[grammar = "grammar/optc.pest"]
struct OptcParser;

/// Parses a whole model (or stdlib) file. A syntax error stops at the first problem: pest
/// cannot resynchronise, and the first error is the one worth fixing.
/// The most rule calls one parse may make: real models take thousands, and the bound turns a
/// pathological input (deeply nested brackets that never close) into a diagnostic within a
/// fraction of a second instead of a parse that backtracks for minutes.
const CALL_LIMIT: usize = 2_000_000;

fn limit_calls() {
    pest::set_call_limit(std::num::NonZeroUsize::new(CALL_LIMIT));
}

pub fn parse(file: &SourceFile) -> Result<Program, Problem> {
    limit_calls();
    let mut pairs = OptcParser::parse(Rule::program, &file.text).map_err(|e| syntax_problem(file, e))?;
    let program = pairs.next().map(build_program).unwrap_or(Program { items: vec![] });
    Ok(program)
}

/// Parses a single expression (for `--set NAME=EXPR` and tests).
pub fn parse_expr(file: &SourceFile) -> Result<Expr, Problem> {
    limit_calls();
    let mut pairs = OptcParser::parse(Rule::expr, &file.text).map_err(|e| syntax_problem(file, e))?;
    let pair = pairs
        .next()
        .ok_or_else(|| Problem::error("optc::syntax", "expected an expression", Span::new(0, 0), "here"))?;
    let end = pair.as_span().end();
    if file.text[end..].trim().is_empty() {
        Ok(build_expr(pair))
    } else {
        Err(Problem::error(
            "optc::syntax",
            "unexpected text after the expression",
            Span::new(end, file.text.len()),
            "not part of the value",
        ))
    }
}

fn span(p: &Pair<Rule>) -> Span {
    p.as_span().into()
}

fn ident(p: Pair<Rule>) -> Ident {
    Ident { name: p.as_str().to_string(), span: span(&p) }
}

fn build_program(p: Pair<Rule>) -> Program {
    let items = p.into_inner().filter(|p| p.as_rule() != Rule::EOI).flat_map(build_items).collect();
    Program { items }
}

/// A statement's items: one, or one per parameter of `param a = 1, b = 2`.
fn build_items(p: Pair<Rule>) -> Vec<Item> {
    if p.as_rule() != Rule::param_decl {
        return vec![build_item(p)];
    }
    let whole = span(&p);
    let bindings: Vec<Pair<Rule>> = p.into_inner().filter(|b| b.as_rule() == Rule::param_binding).collect();
    let single = bindings.len() == 1;
    bindings
        .into_iter()
        .map(|b| {
            // One parameter keeps the statement's span; of several, each its own binding's.
            let sp = if single { whole } else { span(&b) };
            let mut inner = b.into_inner();
            let name = ident(inner.next().expect("a binding has a name"));
            let value = build_expr(inner.next().expect("a binding has a value"));
            Item::Param(ParamDecl { name, value, span: sp })
        })
        .collect()
}

fn build_item(p: Pair<Rule>) -> Item {
    let sp = span(&p);
    let rule = p.as_rule();
    let mut inner = p.into_inner().filter(|p| !is_keyword(p.as_rule())).peekable();
    match rule {
        Rule::data_decl => Item::Data(DataDecl {
            bindings: inner
                .map(|b| {
                    let mut b = b.into_inner();
                    let name = ident(b.next().expect("data binding has a name"));
                    let kind = ident(b.next().expect("data binding has a kind"));
                    (name, kind)
                })
                .collect(),
            span: sp,
        }),
        Rule::var_decl => {
            let name = ident(inner.next().expect("var has a name"));
            let mut ty = inner.next().expect("var has a type").into_inner();
            let kind = ident(ty.next().expect("type has a name"));
            let dims = ty.filter(|p| p.as_rule() == Rule::expr).map(build_expr).collect();
            Item::Var(VarDecl { name, kind, dims, span: sp })
        }
        Rule::param_decl => unreachable!("build_items reads param statements"),
        Rule::objective => {
            let terms = inner.next().expect("objective has terms");
            let sum = build_expr(terms.into_inner().next().expect("terms hold an expression"));
            let constraints =
                inner.next().map(|cs| cs.into_inner().map(build_constraint).collect()).unwrap_or_default();
            Item::Minimize(Objective { sum, constraints, span: sp })
        }
        Rule::solve_stmt => {
            let solver = ident(inner.next().expect("solve names a solver"));
            let options = inner
                .filter(|p| p.as_rule() == Rule::option)
                .map(|o| {
                    let mut o = o.into_inner();
                    let name = ident(o.next().expect("option has a name"));
                    let value = build_expr(o.next().expect("option has a value"));
                    (name, value)
                })
                .collect();
            Item::Solve(SolveStmt { solver, options, span: sp })
        }
        Rule::loss_decl | Rule::reg_decl => {
            let name = ident(inner.next().expect("declaration has a name"));
            let params = build_typed_params(inner.next().expect("declaration has parameters"));
            let body = build_expr(inner.find(|p| p.as_rule() == Rule::expr).expect("declaration has a formula"));
            let attrs = build_attrs(inner.find(|p| p.as_rule() == Rule::attrs));
            let decl = FormulaDecl { name, params, body, attrs, span: sp };
            if rule == Rule::loss_decl {
                Item::Loss(decl)
            } else {
                Item::Regularizer(decl)
            }
        }
        Rule::set_decl => {
            let name = ident(inner.next().expect("set has a name"));
            let mut params = vec![];
            let mut attrs = vec![];
            for p in inner {
                match p.as_rule() {
                    Rule::typed_params => params = build_typed_params(p),
                    Rule::attrs => attrs = build_attrs(Some(p)),
                    _ => {}
                }
            }
            Item::Set(SetDecl { name, params, attrs, span: sp })
        }
        r => unreachable!("grammar produced an unexpected statement {r:?}"),
    }
}

fn is_keyword(r: Rule) -> bool {
    matches!(
        r,
        Rule::kw_data
            | Rule::kw_var
            | Rule::kw_param
            | Rule::kw_minimize
            | Rule::kw_st
            | Rule::kw_solve
            | Rule::kw_with
            | Rule::kw_loss
            | Rule::kw_regularizer
            | Rule::kw_set
            | Rule::rparen
            | Rule::rbracket
    )
}

fn build_typed_params(p: Pair<Rule>) -> Vec<TypedParam> {
    p.into_inner()
        .map(|tp| {
            let mut tp = tp.into_inner();
            let name = ident(tp.next().expect("parameter has a name"));
            let ty = tp.next().map(ident);
            TypedParam { name, ty }
        })
        .collect()
}

fn build_attrs(p: Option<Pair<Rule>>) -> Vec<Attr> {
    let Some(p) = p else { return vec![] };
    p.into_inner()
        .map(|a| {
            let mut a = a.into_inner();
            let name = ident(a.next().expect("attribute has a name"));
            let value = a.next().map(build_expr);
            Attr { name, value }
        })
        .collect()
}

fn build_constraint(p: Pair<Rule>) -> Constraint {
    let sp = span(&p);
    let mut inner = p.into_inner();
    let lhs = build_expr(inner.next().expect("constraint has a left side"));
    let rel = inner.next().expect("constraint has a relation");
    let relation = match rel.into_inner().next().map(|r| r.as_rule()) {
        Some(Rule::ge) => Relation::Ge,
        Some(Rule::le) => Relation::Le,
        _ => Relation::In,
    };
    let rhs = build_expr(inner.next().expect("constraint has a right side"));
    Constraint { lhs, relation, rhs, span: sp }
}

fn build_expr(p: Pair<Rule>) -> Expr {
    let sp = span(&p);
    match p.as_rule() {
        Rule::expr | Rule::paren => {
            build_expr(p.into_inner().find(|p| p.as_rule() != Rule::rparen).expect("non-empty"))
        }
        Rule::sum | Rule::product => {
            let mut inner = p.into_inner();
            let mut acc = build_expr(inner.next().expect("operand"));
            while let Some(op) = inner.next() {
                let rhs = build_expr(inner.next().expect("right operand"));
                let op = match op.as_rule() {
                    Rule::add => BinOp::Add,
                    Rule::sub => BinOp::Sub,
                    Rule::mul => BinOp::Mul,
                    _ => BinOp::Div,
                };
                let s = acc.span.join(rhs.span);
                acc = Expr { kind: ExprKind::Binary(op, Box::new(acc), Box::new(rhs)), span: s };
            }
            acc
        }
        Rule::unary => {
            let parts: Vec<_> = p.into_inner().collect();
            let (negs, rest) = parts.split_at(parts.len() - 1);
            let mut e = build_expr(rest[0].clone());
            for n in negs.iter().rev() {
                let s = span(n).join(e.span);
                e = Expr { kind: ExprKind::Neg(Box::new(e)), span: s };
            }
            e
        }
        Rule::power => {
            let mut inner = p.into_inner();
            let base = build_expr(inner.next().expect("base"));
            match inner.nth(1) {
                Some(exp) => {
                    let exp = build_expr(exp);
                    Expr { kind: ExprKind::Binary(BinOp::Pow, Box::new(base), Box::new(exp)), span: sp }
                }
                None => base,
            }
        }
        Rule::postfix => {
            let mut inner = p.into_inner();
            let mut e = build_expr(inner.next().expect("primary"));
            for post in inner {
                let s = e.span.join(span(&post));
                e = match post.as_rule() {
                    Rule::square => {
                        let two = Expr { kind: ExprKind::Number(2.0), span: span(&post) };
                        Expr { kind: ExprKind::Binary(BinOp::Pow, Box::new(e), Box::new(two)), span: s }
                    }
                    _ => {
                        let idx = build_expr(post.into_inner().next().expect("index expression"));
                        Expr { kind: ExprKind::Index(Box::new(e), Box::new(idx)), span: s }
                    }
                };
            }
            e
        }
        Rule::expectation => {
            let inner = build_expr(p.into_inner().next().expect("expectation body"));
            Expr { kind: ExprKind::Expect(Box::new(inner)), span: sp }
        }
        Rule::inner | Rule::transposed => {
            let mut inner = p.into_inner();
            let a = ident(inner.next().expect("left operand"));
            let b = ident(inner.next().expect("right operand"));
            Expr { kind: ExprKind::Inner(a, b), span: sp }
        }
        Rule::call => {
            let children: Vec<_> = p.into_inner().collect();
            let applied = children.iter().find(|c| c.as_rule() == Rule::applied).cloned();
            let mut inner = children.into_iter();
            let func = ident(inner.next().expect("function name"));
            let call_end =
                inner.clone().filter(|c| c.as_rule() == Rule::rparen).last().map_or(sp.end, |r| r.as_span().end());
            let args: Vec<Arg> = inner
                .filter(|a| a.as_rule() == Rule::arg)
                .map(|a| {
                    let mut parts: Vec<_> = a.into_inner().collect();
                    let value = build_expr(parts.pop().expect("argument value"));
                    let name = parts.pop().map(ident);
                    Arg { name, value }
                })
                .collect();
            let call = Expr { kind: ExprKind::Call { func, args }, span: Span::new(sp.start, call_end) };
            match applied {
                Some(v) => {
                    let mut parts = v.into_inner();
                    let var = ident(parts.next().expect("vector"));
                    if parts.next().is_some() {
                        Expr { kind: ExprKind::ApplyT(Box::new(call), var), span: sp }
                    } else {
                        Expr { kind: ExprKind::Apply(Box::new(call), var), span: sp }
                    }
                }
                None => call,
            }
        }
        Rule::number => {
            let v = match p.as_str() {
                "½" => 0.5,
                "∞" | "inf" => f64::INFINITY,
                s => s.parse().unwrap_or(f64::NAN),
            };
            Expr { kind: ExprKind::Number(v), span: sp }
        }
        Rule::string => {
            let s = p.as_str();
            Expr { kind: ExprKind::Str(s[1..s.len() - 1].to_string()), span: sp }
        }
        Rule::ident => Expr { kind: ExprKind::Name(p.as_str().to_string()), span: sp },
        r => unreachable!("grammar produced an unexpected expression node {r:?}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Syntax errors

fn syntax_problem(file: &SourceFile, e: pest::error::Error<Rule>) -> Problem {
    let pos = match e.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((s, _)) => s,
    };
    let text = &file.text;
    let found = describe_at(text, pos);
    let here = Span::new(pos, next_char_end(text, pos));
    let positives = match &e.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        pest::error::ErrorVariant::CustomError { message } if message.contains("limit reached") => {
            return Problem::error(
                "optc::syntax",
                "this model is nested too deeply to parse",
                here,
                "the parser gave up here",
            )
            .with_help("close the brackets that are open, or split the expression into parameters");
        }
        pest::error::ErrorVariant::CustomError { .. } => vec![],
    };

    for (closer, open, shown) in [(Rule::rbracket, '[', "]"), (Rule::rparen, '(', ")"), (Rule::rangle, '⟨', "⟩")] {
        if !positives.contains(&closer) {
            continue;
        }
        if let Some(open_span) = unclosed_opener(text, pos, open) {
            let opener = &text[open_span.start..open_span.end];
            return Problem::error(
                "optc::syntax",
                format!("expected `{shown}` to close `{opener}`, found {found}"),
                here,
                format!("expected `{shown}` here"),
            )
            .with_label(open_span, format!("`{opener}` opened here"))
            .with_help(format!("add `{shown}` to close `{opener}`"));
        }
    }

    let mut expected: Vec<&str> = positives.iter().filter_map(|r| rule_description(*r)).collect();
    expected.sort();
    expected.dedup();
    let message = if expected.is_empty() {
        format!("unexpected {found}")
    } else {
        format!("expected {}, found {found}", join_or(&expected))
    };
    let help = if found == "end of line" || found == "end of file" {
        "the statement is incomplete; a line may continue after `+`, `,` or a trailing `\\`"
    } else {
        "statements are `data`, `var`, `param`, `minimize ... st ...` and `solve with ...`, one per line"
    };
    Problem::error("optc::syntax", message, here, "unexpected here").with_help(help)
}

fn next_char_end(text: &str, pos: usize) -> usize {
    text[pos..].chars().next().map_or(pos, |c| pos + c.len_utf8())
}

fn describe_at(text: &str, pos: usize) -> String {
    match text[pos..].chars().next() {
        None => "end of file".into(),
        Some('\n') | Some('\r') => "end of line".into(),
        Some(_) => {
            let tok: String = text[pos..].chars().take_while(|c| !c.is_whitespace()).take(12).collect();
            format!("`{tok}`")
        }
    }
}

/// The innermost bracket of kind `open` still open at `pos` (skipping comments and strings).
fn unclosed_opener(text: &str, pos: usize, open: char) -> Option<Span> {
    let mut stack: Vec<(char, usize)> = vec![];
    let mut chars = text[..pos].char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '#' => {
                for (_, c) in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' => {
                for (_, c) in chars.by_ref() {
                    if c == '"' || c == '\n' {
                        break;
                    }
                }
            }
            '(' | '[' | '⟨' => stack.push((c, i)),
            ')' | ']' | '⟩' => {
                stack.pop();
            }
            _ => {}
        }
    }
    let (c, i) = stack.into_iter().rev().find(|(c, _)| *c == open)?;
    // Show `E[` rather than `[` when the bracket opens an expectation.
    let start = if c == '[' && text[..i].trim_end().ends_with('E') { text[..i].trim_end().len() - 1 } else { i };
    Some(Span::new(start, i + c.len_utf8()))
}

fn rule_description(r: Rule) -> Option<&'static str> {
    Some(match r {
        Rule::ident => "a name",
        Rule::number => "a number",
        Rule::expr | Rule::sum | Rule::product | Rule::unary | Rule::power | Rule::postfix => "an expression",
        Rule::expectation => "`E[...]`",
        Rule::inner => "`⟨x, w⟩`",
        Rule::call => "a function call",
        Rule::add | Rule::sub => "`+`",
        Rule::mul | Rule::div => "`·` or `/`",
        Rule::pow => "`^`",
        Rule::relation | Rule::ge | Rule::le | Rule::kw_in => "`∈`, `≥` or `≤`",
        Rule::kw_st => "`st`",
        Rule::kw_with => "`with`",
        Rule::data_decl | Rule::var_decl | Rule::param_decl | Rule::objective | Rule::solve_stmt => "a statement",
        Rule::kw_data | Rule::kw_var | Rule::kw_param | Rule::kw_minimize | Rule::kw_solve => "a statement",
        Rule::EOI => "end of file",
        Rule::option => "an option `name = value`",
        Rule::data_binding => "`name: kind`",
        Rule::param_binding => "`name = value`",
        Rule::rparen => "`)`",
        Rule::rbracket => "`]`",
        Rule::rangle => "`⟩`",
        Rule::attr | Rule::attr_name => "an attribute",
        _ => return None,
    })
}

fn join_or(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [a] => a.to_string(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}
