//! The one walker over plan statements and expressions; analyses of a plan (which loops it
//! has, which guards, whether it reads a scalar) are folds over it instead of hand-written
//! recursions that each must learn every new statement.

use super::{Expr, Range, Stmt};

/// Calls `f` on every statement, outer before inner, in program order.
pub fn stmts<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::For(_, b) | Stmt::If(_, _, _, b) | Stmt::Repeat(_, _, _, _, b) => stmts(b, f),
            Stmt::Set(..)
            | Stmt::Store(..)
            | Stmt::StoreAt(..)
            | Stmt::Guard(..)
            | Stmt::Call(..)
            | Stmt::Picard(_)
            | Stmt::GroupShrink(..)
            | Stmt::Dictionary(_)
            | Stmt::Newton(_)
            | Stmt::Alm(_)
            | Stmt::Reduce(_) => {}
        }
    }
}

/// Calls `f` on every expression node of every statement (sub-expressions after their parent).
pub fn exprs<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Expr)) {
    stmts(body, &mut |s| match s {
        Stmt::Set(_, e)
        | Stmt::Store(_, _, e)
        | Stmt::StoreAt(_, _, _, e)
        | Stmt::Guard(e, _)
        | Stmt::Call(_, _, e)
        | Stmt::GroupShrink(_, e) => expr(e, f),
        Stmt::If(_, l, r, _) | Stmt::Repeat(_, _, l, r, _) => {
            expr(l, f);
            expr(r, f);
        }
        Stmt::Picard(call) => expr(&call.gamma, f),
        Stmt::Newton(call) => {
            expr(&call.ridge, f);
            expr(&call.ridge_b, f);
            expr(&call.cg_steps, f);
        }
        Stmt::Alm(call) => {
            expr(&call.ridge_b, f);
            expr(&call.cap, f);
        }
        Stmt::For(..) | Stmt::Dictionary(_) | Stmt::Reduce(_) => {}
    });
}

/// Calls `f` on `e` and every sub-expression.
pub fn expr<'a>(e: &'a Expr, f: &mut impl FnMut(&'a Expr)) {
    f(e);
    match e {
        Expr::Neg(a) => expr(a, f),
        Expr::Bin(_, a, b) => {
            expr(a, f);
            expr(b, f);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| expr(a, f)),
        Expr::Select(_, l, r, a, b) => [l, r, a, b].into_iter().for_each(|x| expr(x, f)),
        Expr::CatchUp(c) => c.operands().into_iter().for_each(|x| expr(x, f)),
        Expr::Const(_) | Expr::Scalar(_) | Expr::Load(..) | Expr::LoadAt(..) | Expr::Idx(_) | Expr::Value => {}
    }
}

/// Whether some loop's range satisfies `test`.
pub fn any_loop(body: &[Stmt], test: impl Fn(Range) -> bool) -> bool {
    let mut found = false;
    stmts(body, &mut |s| {
        if let Stmt::For(r, _) = s {
            found |= test(*r);
        }
    });
    found
}

/// The guards in translation order, by what they watch.
pub fn guards(body: &[Stmt]) -> Vec<String> {
    let mut out = vec![];
    stmts(body, &mut |s| {
        if let Stmt::Guard(_, what) = s {
            out.push(what.clone());
        }
    });
    out
}
