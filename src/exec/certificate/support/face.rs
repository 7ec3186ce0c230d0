//! Exact steps on a face: the Newton system of a round's coordinates through one Cholesky
//! factor, bordered as coordinates enter, and the face where the coordinates that cross zero sit
//! at zero (see the module above).

use super::*;
use crate::exec::certificate::tuning::TUNING;

#[cfg(test)]
mod tests;

/// The exact Newton step on the free coordinates, H = scale·X_Vᵀ·diag(curvature)·X_V + l2·I
/// (plus a relative 1e-12 on the diagonal, as [`Subspace::hessian`] adds), in the face where
/// every coordinate the step would carry across zero is at zero: such coordinates move to zero
/// (d_c = −v_c) and the others solve H_FF·d_F = −g_F − H_FC·d_C, again until none crosses. One
/// step so drops every coordinate that leaves the support; stopping at each crossing in turn
/// took 14 steps of t ≤ 1e-2 on debian-files at C = 10.
///
/// `held` is the Cholesky factor of an earlier step's H on the same V, when there is one: the
/// step is then solved by conjugate gradients on today's H, preconditioned by that factor. Near
/// the optimum the curvature moves little between steps, so a handful of products with X_V
/// (about 7 ms each at 4,200 columns on debian-files) replace forming H and factoring it (0.4 s
/// and 0.6 s). H is formed and factored again when they do not converge. None when no ridge up
/// to 1e-6 of the largest diagonal entry makes H positive definite.
pub(super) fn exact_direction(
    system: &Newton,
    held: &mut Option<FaceSystem>,
    cols: &[usize],
    v: &[f64],
    sign: &[f64],
) -> Option<Vec<f64>> {
    let (n, free) = (system.g.len(), system.free);
    if let Some(d) = held.as_mut().and_then(|old| held_step(old, system, v, sign)) {
        return d.iter().any(|&x| x != 0.0).then_some(d);
    }
    let idx: Vec<usize> = (0..n).filter(|&k| free[k]).collect();
    let form = |idx: &[usize]| lower_hessian(system.sub, &system.now.curvature, system.scale, system.cert.l2, idx);
    let fresh = FaceSystem::factor(form, idx, cols, &system.now.curvature)?;
    let (d, _) = face_step(&fresh.idx, free, v, sign, &[], |zeroed| fresh.solve(system.g, free, v, zeroed))?;
    *held = Some(fresh);
    d.iter().any(|&x| x != 0.0).then_some(d)
}

/// The step by a held factor: its face found by direct solves with P (the factor's H, bordered
/// on the coordinates new to V), then the step in that face by conjugate gradients on today's
/// H preconditioned by P. One run of them a step: run for each face instead, a step with four
/// faces cost 1.5 s on debian-files at C = 10, as much as a fresh factor.
pub(super) fn held_step(old: &mut FaceSystem, system: &Newton, v: &[f64], sign: &[f64]) -> Option<Vec<f64>> {
    if !old.take_in(system) {
        return None;
    }
    let pre = old.preconditioner();
    let (_, start) = face_step(&old.idx, system.free, v, sign, &[], |zeroed| pre.direct(system, v, zeroed))?;
    face_step(&old.idx, system.free, v, sign, &start, |zeroed| pre.refined(system, v, zeroed)).map(|(d, _)| d)
}

/// The step in its face: `solve` gives d on the factor's coordinates for a set of positions
/// sent to zero, and every coordinate it carries across zero joins that set, up to
/// `TUNING.face_solves` times. Coordinates of the factor that are no longer free are in that set
/// from the start, and stay put.
fn face_step(
    idx: &[usize],
    free: &[bool],
    v: &[f64],
    sign: &[f64],
    start: &[usize],
    solve: impl Fn(&[usize]) -> Option<Vec<f64>>,
) -> Option<(Vec<f64>, Vec<usize>)> {
    let mut zeroed: Vec<usize> = (0..idx.len()).filter(|&p| !free[idx[p]]).collect();
    let held = zeroed.len();
    zeroed.extend(start.iter().filter(|&&p| free[idx[p]]));
    let mut d = vec![0.0_f64; v.len()];
    for _ in 0..TUNING.face_solves {
        let solved = solve(&zeroed)?;
        d.iter_mut().for_each(|x| *x = 0.0);
        for (&k, &x) in idx.iter().zip(&solved) {
            d[k] = x;
        }
        for &p in &zeroed {
            d[idx[p]] = target(free, v, idx[p]);
        }
        let crossing: Vec<usize> =
            (0..idx.len()).filter(|&p| !zeroed.contains(&p) && (v[idx[p]] + d[idx[p]]) * sign[idx[p]] < 0.0).collect();
        if crossing.is_empty() {
            break;
        }
        if zeroed.len() + crossing.len() - held > TUNING.face_crossings {
            return None;
        }
        zeroed.extend(crossing);
    }
    Some((d, zeroed))
}

/// Where a coordinate sent to zero moves: to zero when it is free, nowhere when it is held (at
/// zero or at a bound of the box).
fn target(free: &[bool], v: &[f64], k: usize) -> f64 {
    if free[k] {
        -v[k]
    } else {
        0.0
    }
}

/// The Newton system of one step on V at the rows `now`: H = scale·X_Vᵀ·diag(ℓ″)·X_V + l2·I and
/// the gradient g, on the coordinates still free.
#[derive(Clone, Copy)]
pub(super) struct Newton<'a> {
    pub(super) cert: &'a Certificate,
    pub(super) data: &'a DataView<'a>,
    pub(super) sub: &'a Subspace<'a>,
    pub(super) now: &'a Rows,
    pub(super) scale: f64,
    pub(super) g: &'a [f64],
    pub(super) free: &'a [bool],
}

impl Newton<'_> {
    /// H·p, p on all of V, with `ridge` more on the diagonal.
    pub(super) fn times(&self, p: &[f64], ridge: f64) -> Vec<f64> {
        hessian_times(self.sub, &self.now.curvature, self.scale, self.cert.l2 + ridge, p)
    }
}

/// H on the coordinates I, factored once: the face where the coordinates Z go to zero is
/// solved through this one factor. H_II·d = −g_I + E_Z·μ with d_Z = −v_Z fixes μ by the small
/// system (E_Zᵀ·H_II⁻¹·E_Z)·μ = −v_Z − (H_II⁻¹·(−g_I))_Z, so the rows outside Z are exactly
/// H_FF·d_F = −g_F − H_FZ·d_Z. Refactoring H_FF for each set of crossings instead cost a factor
/// apiece (0.3–0.6 s at 4,200 columns).
///
/// The factor outlives its round: on the next round's V ([`FaceSystem::carried`]) it is
/// bordered by the columns that entered ([`FaceSystem::take_in`]) and preconditions that
/// round's steps. A round takes one or two steps and brings in 5–170 columns, and a fresh
/// Hessian and factor cost 1.2–1.5 s a round at 4,400 columns.
///
/// The borders are kept too, one a round, so P grows by the columns that are new to it: a
/// round borders only the columns that entered since the last. With one border from the factor
/// instead, every round formed and solved again the 200–250 columns that had entered since
/// the factor (0.16–0.36 s a round on debian-desc at C = 100).
pub(super) struct FaceSystem {
    /// The positions in V of the step's coordinates, and the row of P each one is: a row of the
    /// factor, or one of a border's after them.
    idx: Vec<usize>,
    row: Vec<usize>,
    /// The columns of X of P's rows, in order: the factor's, then each border's.
    columns: Vec<usize>,
    /// The positions in V that are not yet rows of P (the next border's, in order), and V's
    /// columns.
    new: Vec<usize>,
    cols: Vec<usize>,
    factor: Factor,
    /// The borders of the factor, in the order they were added: each holds its rows against
    /// every row before it.
    borders: Vec<Border>,
    /// Columns of P⁻¹ by row, as faces asked for them. They outlive the step: the rows that
    /// left V are held at zero in every later face (200–230 of them by the fourth round on
    /// debian-desc at C = 100, a solve with P each), and a border extends each column by its
    /// rows instead ([`FaceSystem::take_in`]).
    inverse: std::cell::RefCell<std::collections::HashMap<usize, Vec<f64>>>,
    /// The rows' curvature H was formed at: a border is formed at it too, so the bordered
    /// matrix is a Hessian, positive definite. Bordered with today's curvature instead, the
    /// Schur complement of the new coordinates went negative (−0.015 against a diagonal of
    /// 5e-8 on debian-desc at C = 100): rows that were confidently right move by orders of
    /// magnitude of ℓ″ between steps.
    curvature: Vec<f64>,
    /// About the relative ridge H carries on its diagonal (1e-12 of its largest entry, see
    /// [`Subspace::hessian`]), for the products of a later step's H.
    ridge: f64,
}

impl FaceSystem {
    /// The Cholesky factor of H_II (`form(I)`: its lower triangle, column-major, as
    /// [`lower_hessian`] forms it), with a ridge of up to 1e-6 of the largest diagonal entry
    /// when rounding leaves H_II not positive definite. The factor is made where H_II was
    /// formed, so a ridge forms H_II again.
    fn factor(form: impl Fn(&[usize]) -> Vec<f64>, idx: Vec<usize>, cols: &[usize], curvature: &[f64]) -> Option<Self> {
        if idx.is_empty() {
            return None;
        }
        let f = idx.len();
        let h = form(&idx);
        let largest = (0..f).map(|p| h[p * f + p]).fold(0.0_f64, f64::max);
        let ridge = 1e-12 / (1.0 + 1e-12) * largest;
        let mut first = Some(h);
        let factor = TUNING.face_ridges.into_iter().find_map(|extra| {
            let mut a = first.take().unwrap_or_else(|| form(&idx));
            for p in 0..f {
                a[p * f + p] += extra * largest;
            }
            Factor::new(a, f)
        })?;
        let columns = idx.iter().map(|&k| cols[k]).collect();
        let row = (0..f).collect();
        let cols = cols.to_vec();
        let curvature = curvature.to_vec();
        let (new, borders, inverse) = (vec![], vec![], Default::default());
        Some(FaceSystem { idx, row, columns, new, cols, factor, borders, inverse, ridge, curvature })
    }

    /// This system on another V (`cols`, in column order): its coordinates still in V keep
    /// their rows, and the coordinates new to V get the next border's rows after them. None
    /// when V keeps none of them or brings in more than `TUNING.face_border_max`.
    pub(super) fn carried(self, cols: &[usize]) -> Option<Self> {
        let f = self.columns.len();
        let rows: std::collections::HashMap<usize, usize> =
            self.columns.iter().enumerate().map(|(q, &j)| (j, q)).collect();
        let mut row = Vec::with_capacity(cols.len());
        let mut new = vec![];
        for (k, j) in cols.iter().enumerate() {
            match rows.get(j) {
                Some(&r) => row.push(r),
                None => {
                    row.push(f + new.len());
                    new.push(k);
                }
            }
        }
        let idx = (0..cols.len()).collect();
        let cols = cols.to_vec();
        (new.len() < cols.len() && new.len() <= TUNING.face_border_max).then_some(FaceSystem {
            idx,
            row,
            new,
            cols,
            ..self
        })
    }

    /// The step on I by this factor's H: d_Z = −v_Z, H_FF·d_F = −g_F − H_FZ·d_Z (a factor
    /// just made, whose rows are `idx`).
    fn solve(&self, g: &[f64], free: &[bool], v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let rhs: Vec<f64> = self.idx.iter().map(|&k| -g[k]).collect();
        let plain = self.preconditioner();
        let face = plain.face(zeroed.to_vec());
        plain.solve_in(&face, &rhs, |p| target(free, v, self.idx[p]))
    }

    /// Borders P once more by the columns new to V, at the curvature the factor was formed
    /// at, so that P is the Hessian there on all of its rows. false, and this system
    /// unchanged, when rounding leaves the new Schur complement indefinite.
    fn take_in(&mut self, system: &Newton) -> bool {
        if self.new.is_empty() {
            return true;
        }
        use faer::linalg::solvers::Solve;
        let Some(border) = self.border(system) else { return false };
        // P⁻¹·e_q on the bordered P: x₂ = −S⁻¹·Bᵀ·y and x₁ = y − P⁻¹·B·x₂ for y = P⁻¹·e_q.
        let inverse = self.inverse.get_mut();
        if !inverse.is_empty() {
            let (f, k) = (self.columns.len(), self.new.len());
            // In order: a product's rounding can depend on a column's place in the batch, and
            // the same run gives the same numbers.
            let mut rows: Vec<usize> = inverse.keys().copied().collect();
            rows.sort_unstable();
            let y = faer::Mat::<f64>::from_fn(f, rows.len(), |r, c| inverse[&rows[c]][r]);
            let x2 = border.s.solve(-(border.b.transpose() * &y));
            let x1 = y - &border.z * &x2;
            for (c, q) in rows.into_iter().enumerate() {
                inverse.insert(q, (0..f + k).map(|r| if r < f { x1[(r, c)] } else { x2[(r - f, c)] }).collect());
            }
        }
        self.columns.extend(self.new.iter().map(|&p| self.cols[p]));
        self.borders.push(border);
        self.new.clear();
        true
    }

    /// P, to solve with: the factor and its borders.
    fn preconditioner(&self) -> Bordered<'_> {
        Bordered { base: self }
    }

    /// The border of P's rows by the columns new to V: B (P's rows against them), P⁻¹·B, and
    /// the factor of S = C − Bᵀ·P⁻¹·B.
    fn border(&self, system: &Newton) -> Option<Border> {
        let (f, k) = (self.columns.len(), self.new.len());
        // Every row of P by column of X: P's columns (those that left V too: their entries of
        // B keep P a Hessian), then the new ones.
        let mut place = vec![u32::MAX; system.data.features];
        for (q, &j) in self.columns.iter().enumerate() {
            place[j] = q as u32;
        }
        for (c, &p) in self.new.iter().enumerate() {
            place[self.cols[p]] = (f + c) as u32;
        }
        let cross = cross(system.data, &self.curvature, system.scale, &place, f, k);
        let b = faer::Mat::<f64>::from_fn(f, k, |q, c| cross[c * (f + k) + q]);
        let z = self.solve_rows(b.as_ref(), self.borders.len());
        let diagonal = system.cert.l2 + self.ridge;
        let bz = b.transpose() * &z;
        // S is H's Schur complement, positive semi-definite; near-duplicate columns leave it
        // near zero, and rounding then a ridge of up to 1e-6 of C's largest diagonal entry.
        let largest = (0..k).map(|r| cross[r * (f + k) + f + r]).fold(0.0_f64, f64::max);
        let s = TUNING.face_ridges.into_iter().find_map(|extra| {
            let s = faer::Mat::<f64>::from_fn(k, k, |r, c| {
                cross[c * (f + k) + f + r] - bz[(r, c)] + if r == c { diagonal + extra * largest } else { 0.0 }
            });
            s.llt(faer::Side::Lower).ok()
        })?;
        Some(Border { b, z, s })
    }

    /// P⁻¹·rhs for P made of the factor and its first `borders` borders (rhs has their rows),
    /// each border solved through the ones before it: t = A⁻¹·b₁, x₂ = S⁻¹·(b₂ − Bᵀ·t),
    /// x₁ = t − A⁻¹·B·x₂, with A the factor and the borders before.
    fn solve_rows(&self, rhs: faer::MatRef<'_, f64>, borders: usize) -> faer::Mat<f64> {
        use faer::linalg::solvers::Solve;
        let Some(border) = borders.checked_sub(1).map(|last| &self.borders[last]) else {
            return self.factor.solve(rhs);
        };
        let (f, k) = (border.b.nrows(), border.b.ncols());
        let t = self.solve_rows(rhs.subrows(0, f), borders - 1);
        let u = rhs.subrows(f, k).to_owned() - border.b.transpose() * &t;
        let x2 = border.s.solve(&u);
        let x1 = t - &border.z * &x2;
        faer::Mat::from_fn(f + k, rhs.ncols(), |r, c| if r < f { x1[(r, c)] } else { x2[(r - f, c)] })
    }
}

/// scale·Σᵢ dᵢ·xᵢ_P·xᵢ_Nᵀ: the rows of X by `place` (column of X → row of P, u32::MAX for none),
/// against the last `k` of P's `f + k` rows; column-major (f + k) × k. A row of X costs its
/// entries times its entries among those k.
///
/// By new column: one pass over X finds each new column's rows, and each column is then summed
/// from them into its own run of the output, a thread taking the next column when it is free.
/// Summed by blocks of rows instead, every block of 4,096 rows filled a whole (f + k) × k matrix
/// of its own, and the blocks were added: on debian-desc at C = 100, 161 new columns against
/// 4,336 rows took 0.23 s, most of it zeroing and adding 25 matrices of 5.8 MB.
fn cross(data: &DataView, d: &[f64], scale: f64, place: &[u32], f: usize, k: usize) -> Vec<f64> {
    let row_of = |e: usize| place.get(data.indices[e] as usize).copied().filter(|&q| q != u32::MAX);
    // The new columns' entries (column, row, value), in row order.
    let found: Vec<Vec<(u32, u32, f64)>> = crate::exec::passes::blocks(d.len(), data.threads, |rows| {
        let mut out = vec![];
        for i in rows.filter(|&i| d[i] != 0.0) {
            for e in data.indptr[i]..data.indptr[i + 1] {
                if let Some(q) = row_of(e).filter(|&q| q as usize >= f) {
                    out.push((q - f as u32, i as u32, data.values[e]));
                }
            }
        }
        out
    });
    // By column, each column's rows still in row order.
    let mut ptr = vec![0usize; k + 1];
    for &(c, _, _) in found.iter().flatten() {
        ptr[c as usize + 1] += 1;
    }
    for c in 0..k {
        ptr[c + 1] += ptr[c];
    }
    let mut next = ptr.clone();
    let mut rows = vec![(0u32, 0.0); ptr[k]];
    for &(c, i, v) in found.iter().flatten() {
        rows[next[c as usize]] = (i, v);
        next[c as usize] += 1;
    }
    crate::exec::passes::queued(k, data.threads, |c| {
        let mut out = vec![0.0; f + k];
        for &(i, x) in &rows[ptr[c]..ptr[c + 1]] {
            let i = i as usize;
            let a = scale * d[i] * x;
            for e in data.indptr[i]..data.indptr[i + 1] {
                if let Some(q) = row_of(e) {
                    out[q as usize] += a * data.values[e];
                }
            }
        }
        out
    })
    .concat()
}

/// A held factor of A with its borders: P = [A B; Bᵀ C] for each border in turn, solved
/// through the factor and the Schur complements S = C − Bᵀ·A⁻¹·B ([`FaceSystem::solve_rows`]).
struct Bordered<'a> {
    base: &'a FaceSystem,
}

/// A border's B (the rows before it against its columns), P⁻¹·B and the factor of S.
struct Border {
    b: faer::Mat<f64>,
    z: faer::Mat<f64>,
    s: faer::linalg::solvers::Llt<f64>,
}

impl Bordered<'_> {
    /// The step in the face `zeroed` (positions in `idx`) for P instead of today's H, by
    /// direct solves: where a step with today's H will land, near enough.
    fn direct(&self, system: &Newton, v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let (moves, face) = self.layout(zeroed)?;
        let mut at = vec![None; self.rows()];
        for (p, &q) in self.base.row.iter().enumerate() {
            at[q] = Some(p);
        }
        let rhs: Vec<f64> = at.iter().map(|a| a.map_or(0.0, |p| -system.g[self.base.idx[p]])).collect();
        let fixed = |q: usize| at[q].filter(|&p| !moves[p]).map_or(0.0, |p| target(system.free, v, self.base.idx[p]));
        let x = self.solve_in(&face, &rhs, fixed)?;
        Some(self.base.row.iter().map(|&q| x[q]).collect())
    }

    /// Which positions of `idx` move, and the face of P that holds the rest at zero with the
    /// rows no position is (the factor's coordinates that left V). None past `TUNING.face_held`.
    fn layout(&self, zeroed: &[usize]) -> Option<(Vec<bool>, Face)> {
        let mut moves = vec![true; self.base.idx.len()];
        for &p in zeroed {
            moves[p] = false;
        }
        let mut held = vec![true; self.rows()];
        for (p, &q) in self.base.row.iter().enumerate() {
            held[q] = !moves[p];
        }
        let held: Vec<usize> = (0..held.len()).filter(|&q| held[q]).collect();
        (held.len() <= TUNING.face_held).then(|| (moves, self.face(held)))
    }

    /// The step for today's H (`system`'s), by conjugate gradients in the face `zeroed`
    /// preconditioned by P's solve in the same face. None when they do not converge within
    /// `TUNING.face_held_steps`. The coordinates no longer free are among `zeroed`.
    fn refined(&self, system: &Newton, v: &[f64], zeroed: &[usize]) -> Option<Vec<f64>> {
        let (f, n) = (self.base.idx.len(), system.g.len());
        let (moves, face) = self.layout(zeroed)?;
        let spread = |x: &[f64]| -> Vec<f64> {
            let mut full = vec![0.0; n];
            for (&k, &xk) in self.base.idx.iter().zip(x) {
                full[k] = xk;
            }
            full
        };
        let product = |x: &[f64]| -> Vec<f64> {
            let hx = system.times(&spread(x), self.base.ridge);
            self.base.idx.iter().map(|&k| hx[k]).collect()
        };
        let mut d: Vec<f64> =
            (0..f).map(|p| if moves[p] { 0.0 } else { target(system.free, v, self.base.idx[p]) }).collect();
        let hd = product(&d);
        let mut r: Vec<f64> =
            (0..f).map(|p| if moves[p] { -system.g[self.base.idx[p]] - hd[p] } else { 0.0 }).collect();
        let precondition = |r: &[f64]| {
            let mut rhs = vec![0.0; self.rows()];
            for (p, &q) in self.base.row.iter().enumerate() {
                if moves[p] {
                    rhs[q] = r[p];
                }
            }
            let x = self.solve_in(&face, &rhs, |_| 0.0)?;
            Some((0..f).map(|p| if moves[p] { x[self.base.row[p]] } else { 0.0 }).collect())
        };
        let ok = conjugate_gradients(
            &mut d,
            &mut r,
            &moves,
            (TUNING.face_held_steps, TUNING.face_held_tol),
            |p| Some(product(p)),
            precondition,
        );
        ok.then_some(d)
    }

    /// P's order: the factor's rows and its borders'.
    fn rows(&self) -> usize {
        self.base.columns.len()
    }

    /// P⁻¹·rhs.
    fn solve(&self, rhs: faer::Mat<f64>) -> faer::Mat<f64> {
        self.base.solve_rows(rhs.as_ref(), self.base.borders.len())
    }

    /// The face of P where its rows `zeroed` are held: Y = P⁻¹·E_Z and the LU of E_Zᵀ·Y,
    /// computed once for every solve in that face.
    fn face(&self, zeroed: Vec<usize>) -> Face {
        let (f, z) = (self.rows(), zeroed.len());
        if z == 0 {
            return Face { zeroed, y: faer::Mat::zeros(f, 0), lu: None };
        }
        // The columns of P⁻¹ a face needs, solved once: a step's later faces add the
        // coordinates its last solve carried across zero to the same rows, and later steps hold
        // the same rows that left V.
        let mut solved = self.base.inverse.borrow_mut();
        let missing: Vec<usize> = zeroed.iter().copied().filter(|q| !solved.contains_key(q)).collect();
        if !missing.is_empty() {
            let y =
                self.solve(faer::Mat::<f64>::from_fn(f, missing.len(), |r, c| if missing[c] == r { 1.0 } else { 0.0 }));
            for (c, &q) in missing.iter().enumerate() {
                solved.insert(q, (0..f).map(|r| y[(r, c)]).collect());
            }
        }
        let columns: Vec<&Vec<f64>> = zeroed.iter().map(|q| &solved[q]).collect();
        let y = faer::Mat::<f64>::from_fn(f, z, |r, c| columns[c][r]);
        let s = faer::Mat::<f64>::from_fn(z, z, |r, c| y[(zeroed[r], c)]);
        let lu = Some(s.partial_piv_lu());
        Face { zeroed, y, lu }
    }

    /// x over P's rows with x_Z = `fixed` on the face's rows Z, and P_FF·x_F = rhs_F − P_FZ·x_Z
    /// on the rest.
    fn solve_in(&self, face: &Face, rhs: &[f64], fixed: impl Fn(usize) -> f64) -> Option<Vec<f64>> {
        use faer::linalg::solvers::Solve;
        let f = self.rows();
        let x0 = self.solve(faer::Mat::<f64>::from_fn(f, 1, |r, _| rhs[r]));
        let mut x: Vec<f64> = (0..f).map(|r| x0[(r, 0)]).collect();
        if let Some(lu) = &face.lu {
            let z = face.zeroed.len();
            let b = faer::Mat::<f64>::from_fn(z, 1, |r, _| fixed(face.zeroed[r]) - x[face.zeroed[r]]);
            let mu = lu.solve(&b);
            for (r, v) in x.iter_mut().enumerate() {
                *v += (0..z).map(|c| face.y[(r, c)] * mu[(c, 0)]).sum::<f64>();
            }
        }
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}

/// A face of P, ready for solves (see [`Bordered::face`]).
struct Face {
    zeroed: Vec<usize>,
    y: faer::Mat<f64>,
    lu: Option<faer::linalg::solvers::PartialPivLu<f64>>,
}
