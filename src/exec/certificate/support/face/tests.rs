use super::*;

/// A small problem whose plain Newton step flips a sign, and H formed from X directly. X has
/// a column more than V = 0..D, which an earlier V held.
struct Case {
    x: Vec<Vec<f64>>,
    indptr: Vec<usize>,
    indices: Vec<u32>,
    values: Vec<f64>,
    labels: Vec<f64>,
}

const M: usize = 7;
const D: usize = 4;
const SCALE: f64 = 1.0 / M as f64;
const L2: f64 = 1e-3;
const V: [f64; D] = [0.8, 0.01, -0.02, 0.5];
const SIGN: [f64; D] = [1.0, 1.0, -1.0, 1.0];
const G: [f64; D] = [0.01, 0.2, -0.15, -0.02];

impl Case {
    fn new() -> Case {
        let x: Vec<Vec<f64>> =
            (0..M).map(|i| (0..=D).map(|j| (((i * 7 + j * 3) % 5) as f64 - 1.5) / (1 + j) as f64).collect()).collect();
        let (indptr, indices, values) = crate::exec::certificate::tests::rows_of(&x);
        Case { x, indptr, indices, values, labels: vec![1.0; M] }
    }

    fn data(&self) -> DataView<'_> {
        DataView::new(&self.indptr, &self.indices, &self.values, &self.labels, D + 1)
    }

    fn h(&self, curvature: &[f64], r: usize, c: usize) -> f64 {
        let sum: f64 = (0..M).map(|i| SCALE * curvature[i] * self.x[i][r] * self.x[i][c]).sum();
        sum + if r == c { L2 } else { 0.0 }
    }

    /// P is the Hessian at `curvature` on the columns of X its rows are, in `order`:
    /// P⁻¹·H·x gives x back.
    fn assert_inverts(&self, pre: &Bordered, curvature: &[f64], order: &[usize]) {
        let n = order.len();
        let x: Vec<f64> = (1..=n).map(|k| k as f64).collect();
        let hx = faer::Mat::<f64>::from_fn(n, 1, |r, _| {
            (0..n).map(|c| self.h(curvature, order[r], order[c]) * x[c]).sum::<f64>()
        });
        let back = pre.solve(hx);
        for (r, &xr) in x.iter().enumerate() {
            assert!((back[(r, 0)] - xr).abs() < 1e-8 * xr, "P⁻¹·H·x = {back:?}, not x");
        }
    }

    /// Asserts that `step` keeps every sign, lands at least one coordinate at zero, and
    /// solves H·d = −g on the rest.
    fn assert_face_step(&self, curvature: &[f64], step: &[f64], tol: f64) {
        let zeroed: Vec<usize> = (0..D).filter(|&k| V[k] + step[k] == 0.0).collect();
        assert!(!zeroed.is_empty(), "nothing landed at zero: {step:?}");
        for k in 0..D {
            assert!((V[k] + step[k]) * SIGN[k] >= 0.0, "coordinate {k} crossed zero: {step:?}");
            if !zeroed.contains(&k) {
                let residual = (0..D).map(|c| self.h(curvature, k, c) * step[c]).sum::<f64>() + G[k];
                assert!(residual.abs() <= tol * G[k].abs().max(1e-3), "row {k} of H·d + g is {residual}");
            }
        }
    }
}

fn curvature(shift: f64) -> Vec<f64> {
    (0..M).map(|i| 0.05 + shift + 0.03 * i as f64).collect()
}

/// Rows whose ℓ″ is `curvature` (nothing else of them is read by a Newton system's solves).
fn rows(curvature: Vec<f64>) -> Rows {
    Rows { a: vec![0.0; M], u: vec![0.0; M], curvature, loss: 0.0 }
}

/// The Newton system of a step on `sub` at `now`, scaled as every case here is.
fn system<'a>(
    cert: &'a Certificate,
    data: &'a DataView<'a>,
    sub: &'a Subspace<'a>,
    now: &'a Rows,
    g: &'a [f64],
    free: &'a [bool],
) -> Newton<'a> {
    Newton { cert, data, sub, now, scale: SCALE, g, free }
}

fn ridge_only() -> Certificate {
    crate::exec::certificate::tests::cert(0.0, L2, f64::NEG_INFINITY, f64::INFINITY)
}

/// The line search says whether the step passed at its full length: a step of an exact round
/// that had to be shortened ends the check's rounds. On squared loss a short step along −g
/// passes whole, and one ten thousand times the length of −g overshoots the minimum along it
/// and is shortened, yet lowers F.
#[test]
fn the_line_search_says_whether_it_shortened_the_step() {
    let case = Case::new();
    let data = case.data();
    let cert = ridge_only();
    let cols: Vec<usize> = (0..D).collect();
    let sub = Subspace::new(&data, D + 1, &cols);
    let now = Rows::at(cert.conjugate, &case.labels, None, &sub.times(&V), None, 1);
    let g: Vec<f64> = sub.transpose_times(&now.u).iter().zip(&V).map(|(x, v)| SCALE * x + L2 * v).collect();
    let free = [true; D];
    let system = system(&cert, &data, &sub, &now, &g, &free);
    let f = |rows: &Rows, v: &[f64]| SCALE * rows.loss + regularizer(&cert, v);
    for (length, whole) in [(1e-3, true), (1e4, false)] {
        let d: Vec<f64> = g.iter().map(|x| -length * x).collect();
        let (point, trial, full) = line_search(&system, &V, &SIGN, &d, false).expect("a descent direction");
        assert_eq!(full, whole, "a step of {length} times −g");
        assert!(f(&trial, &point) < f(&now, &V), "F did not fall along {length} times −g");
    }
}

/// H_II summed by columns is the Hessian the rows' outer products give, on any positions I
/// of V, with one thread or two: its lower triangle, the upper left at zero.
#[test]
fn the_hessian_by_columns_is_the_hessian_by_rows() {
    let case = Case::new();
    let data = case.data();
    let cols: Vec<usize> = (0..=D).collect();
    let mut sub = Subspace::new(&data, D + 1, &cols);
    let d = curvature(0.0);
    let by_rows = sub.hessian(&d, SCALE, L2);
    for threads in [1, 2] {
        sub.threads = threads;
        assert!(lower_hessian(&sub, &d, SCALE, L2, &[]).is_empty());
        for idx in [vec![0, 1, 2, 3, 4], vec![1, 3, 4], vec![2]] {
            let f = idx.len();
            let h = lower_hessian(&sub, &d, SCALE, L2, &idx);
            for c in 0..f {
                for r in 0..f {
                    let want = if r >= c { by_rows[idx[r] * (D + 1) + idx[c]] } else { 0.0 };
                    let got = h[c * f + r];
                    assert!(
                        (got - want).abs() <= 1e-12 * want.abs().max(1e-3),
                        "H[{r}, {c}] on {idx:?}: {got} against {want}"
                    );
                }
            }
        }
    }
}

/// The exact step solves the Newton system in its face: coordinates the plain step would
/// carry across zero land exactly at zero, and on the rest H·d = −g holds.
#[test]
fn an_exact_step_lands_the_coordinates_that_leave_the_support_at_zero() {
    let case = Case::new();
    let data = case.data();
    let cols: Vec<usize> = (0..D).collect();
    let sub = Subspace::new(&data, D + 1, &cols);
    let curvature = curvature(0.0);
    // The plain Newton step flips a sign: the face matters.
    let full = nalgebra::DMatrix::from_fn(D, D, |r, c| case.h(&curvature, r, c))
        .cholesky()
        .expect("H is positive definite")
        .solve(&nalgebra::DVector::from_iterator(D, G.iter().map(|x| -x)));
    assert!((0..D).any(|k| (V[k] + full[k]) * SIGN[k] < 0.0), "no coordinate crosses zero: {full}");

    let (free, cert, now) = ([true; D], ridge_only(), rows(curvature.clone()));
    let system = system(&cert, &data, &sub, &now, &G, &free);
    let mut held = None;
    let step = exact_direction(&system, &mut held, &cols, &V, &SIGN).expect("a step");
    assert!(held.is_some(), "the step's factor is not kept for the next one");
    case.assert_face_step(&curvature, &step, 1e-9);
}

/// A later step on the same V solves its own H, by conjugate gradients preconditioned with
/// the factor an earlier step's H left: the same face conditions, to the same accuracy.
#[test]
fn a_held_factor_preconditions_the_next_exact_step() {
    let case = Case::new();
    let data = case.data();
    let cols: Vec<usize> = (0..D).collect();
    let sub = Subspace::new(&data, D + 1, &cols);
    let (free, cert) = ([true; D], ridge_only());
    let before = rows(curvature(0.0));
    let mut held = None;
    let first = system(&cert, &data, &sub, &before, &G, &free);
    exact_direction(&first, &mut held, &cols, &V, &SIGN).expect("a first step");
    let mut old = held.expect("a factor");

    let after = curvature(0.02);
    let now = rows(after.clone());
    let next = system(&cert, &data, &sub, &now, &G, &free);
    let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the held factor");
    case.assert_face_step(&after, &step, 1e-7);
}

/// A factor carried onto the next round's V, where a column of its own has left and one
/// has entered, preconditions the step there once bordered with the new column: the face
/// found by its direct solves, then conjugate gradients on today's H, give the same face
/// conditions as a step solved from H built from X.
#[test]
fn a_factor_carried_to_the_next_support_preconditions_its_step() {
    let case = Case::new();
    let data = case.data();
    let (cert, before) = (ridge_only(), rows(curvature(0.0)));
    // The earlier round: V = {0, 1, 3, D}, column 2 not yet in it.
    let earlier: Vec<usize> = vec![0, 1, 3, D];
    let sub = Subspace::new(&data, D + 1, &earlier);
    let (g, v, sign) = ([G[0], G[1], G[3], 0.05], [V[0], V[1], V[3], 0.3], [1.0; 4]);
    let first = system(&cert, &data, &sub, &before, &g, &[true; 4]);
    let mut held = None;
    exact_direction(&first, &mut held, &earlier, &v, &sign).expect("a first step");

    let cols: Vec<usize> = (0..D).collect();
    let mut old = held.expect("a factor").carried(&cols).expect("V keeps three of its columns");
    assert_eq!((old.new.as_slice(), old.row.as_slice()), (&[2][..], &[0, 1, 4, 2][..]));
    let sub = Subspace::new(&data, D + 1, &cols);
    let after = curvature(0.02);
    let (now, free) = (rows(after.clone()), [true; D]);
    let next = system(&cert, &data, &sub, &now, &G, &free);
    // P is the Hessian at the factor's curvature on its columns and the new one.
    assert!(old.take_in(&next), "the border is not positive definite");
    let pre = old.preconditioner();
    case.assert_inverts(&pre, &before.curvature, &[0, 1, 3, D, 2]);
    let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the bordered factor");
    case.assert_face_step(&after, &step, 1e-7);
}

/// Borders pile up one a round: a factor on {0, 3, D}, bordered by column 1 on the next
/// V and by column 2 on the one after (which column D has left), is the Hessian at the
/// factor's curvature on all five rows, and the last step keeps its face conditions.
#[test]
fn a_factor_bordered_twice_is_the_hessian_on_all_its_rows() {
    let case = Case::new();
    let data = case.data();
    let (cert, before) = (ridge_only(), rows(curvature(0.0)));
    let first: Vec<usize> = vec![0, 3, D];
    let sub = Subspace::new(&data, D + 1, &first);
    let (g, v, sign) = ([G[0], G[3], 0.05], [V[0], V[3], 0.3], [1.0; 3]);
    let mut held = None;
    exact_direction(&system(&cert, &data, &sub, &before, &g, &[true; 3]), &mut held, &first, &v, &sign)
        .expect("a first step");

    let second: Vec<usize> = vec![0, 1, 3, D];
    let mut old = held.expect("a factor").carried(&second).expect("V keeps three of its columns");
    let sub = Subspace::new(&data, D + 1, &second);
    let (g, v, sign) = ([G[0], G[1], G[3], 0.05], [V[0], V[1], V[3], 0.3], [1.0; 4]);
    let now = rows(curvature(0.01));
    let step = held_step(&mut old, &system(&cert, &data, &sub, &now, &g, &[true; 4]), &v, &sign);
    assert!(step.is_some(), "no step on the first border");
    assert_eq!((old.borders.len(), old.columns.as_slice()), (1, &[0, 3, D, 1][..]));

    // Two columns of P⁻¹ a face asked for, which the next border extends.
    old.preconditioner().face(vec![0, 2]);

    let cols: Vec<usize> = (0..D).collect();
    let mut old = old.carried(&cols).expect("V keeps three of its columns");
    assert_eq!((old.new.as_slice(), old.row.as_slice()), (&[2][..], &[0, 3, 4, 1][..]));
    let sub = Subspace::new(&data, D + 1, &cols);
    let after = curvature(0.02);
    let (now, free) = (rows(after.clone()), [true; D]);
    let next = system(&cert, &data, &sub, &now, &G, &free);
    assert!(old.take_in(&next), "the second border is not positive definite");
    let pre = old.preconditioner();
    assert_eq!(pre.base.borders.len(), 2, "the first border was formed again");
    case.assert_inverts(&pre, &before.curvature, &[0, 3, D, 1, 2]);
    for q in [0, 2] {
        let column = pre.solve(faer::Mat::<f64>::from_fn(5, 1, |r, _| if r == q { 1.0 } else { 0.0 }));
        let kept = &pre.base.inverse.borrow()[&q];
        for r in 0..5 {
            let tol = 1e-9 * column[(r, 0)].abs().max(1.0);
            assert!((kept[r] - column[(r, 0)]).abs() < tol, "kept P⁻¹·e_{q} {kept:?}, solved {column:?}");
        }
    }
    let step = held_step(&mut old, &next, &V, &SIGN).expect("conjugate gradients converge on the bordered factor");
    case.assert_face_step(&after, &step, 1e-7);
}
