//! K-fold cross-validation along warm-started paths (glmnet's `cv.glmnet`): the path on all of
//! the data first, whose grid every fold then follows, so that the folds' held-out losses line
//! up value by value; λ_min (the least mean held-out loss) and λ_1se (the largest value whose
//! mean is within one standard error of it); and the model refitted on all of the data at the
//! chosen one, which is the full path's point there, certified as every point is. `optc cv` and
//! the Python package's cross-validation solve through [`cross_validate`].

use super::path::{solve_path, PathError, PathEvent, PathPoint, PathSpec, SolvedPath};
use crate::data::Dataset;
use crate::exec::passes;
use crate::pipeline;
use crate::source::SourceFile;
use crate::stdlib::{LabelKind, Library};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::time::Instant;

/// Which value the refit takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choose {
    /// The least mean held-out loss.
    Min,
    /// The largest value whose mean held-out loss is within one standard error of the least
    /// (glmnet's default: the sparsest model the folds cannot tell from the best).
    OneSe,
}

/// A cross-validation: the path's own settings, the folds and the choice.
#[derive(Clone, Debug)]
pub struct CvSpec {
    pub path: PathSpec,
    pub folds: usize,
    pub choose: Choose,
    /// Each row's fold, given (a scikit-learn splitter's test sets): 0..folds, every fold
    /// holding a row. None: drawn from the seed, stratified for labels.
    pub fold_of: Option<Vec<usize>>,
    /// Keep each fold's path, its weights at every value (for a caller's own scoring).
    pub keep_folds: bool,
}

/// One value of the grid, over the folds.
#[derive(Clone, Debug)]
pub struct CvPoint {
    pub value: f64,
    /// The mean held-out loss over the folds whose point converged, and its standard error
    /// (the folds' standard deviation over √folds).
    pub loss: f64,
    pub loss_se: f64,
    /// The same for the held-out error (classification) or mean squared error (real labels).
    pub error: Option<f64>,
    pub error_se: Option<f64>,
    /// The folds averaged in: those whose point converged.
    pub folds: usize,
    /// The folds whose point did not converge (or whose path stopped before it): left out of
    /// the means, and the value out of the choice.
    pub unconverged: usize,
}

/// What a cross-validation found.
pub struct CrossValidated {
    pub points: Vec<CvPoint>,
    /// Indices into `points` (and into `full.points`, the same grid) of λ_min and λ_1se, and of
    /// the one the spec chose.
    pub min: usize,
    pub one_se: usize,
    pub chosen: usize,
    /// The path on all of the data: its point at `chosen` is the refit.
    pub full: SolvedPath,
    pub folds: usize,
    /// The rows' folds were drawn within each label's rows.
    pub stratified: bool,
    /// A fold whose path failed (a point diverged), and why; its points are out of the means.
    pub failures: Vec<(usize, String)>,
    /// Each fold's path when the spec kept them (None for a fold that failed), and each row's
    /// fold.
    pub fold_paths: Vec<Option<SolvedPath>>,
    pub fold_of: Vec<usize>,
    pub seconds: f64,
}

impl CrossValidated {
    /// The refitted model: the full path's point at the chosen value.
    pub fn refit(&self) -> &PathPoint {
        &self.full.points[self.chosen]
    }
}

/// What a cross-validation says while it runs.
pub enum CvEvent<'a> {
    /// A point of the path on all of the data (`PathEvent`'s words on where it starts too).
    Full(PathEvent<'a>),
    /// Fold k's path is done: its points, or why it failed.
    Fold(usize, Result<&'a SolvedPath, &'a str>),
}

fn usage(m: String) -> PathError {
    PathError::Failed(super::Error::Usage(m))
}

/// Cross-validates `file`'s model on `data` along the grid of `spec.path`.
pub fn cross_validate(
    file: &SourceFile,
    data: &Dataset,
    spec: &CvSpec,
    mut on: impl FnMut(CvEvent),
) -> Result<CrossValidated, PathError> {
    let started = Instant::now();
    let k = spec.folds;
    if k < 2 {
        return Err(usage(format!("--folds {k}: give at least 2")));
    }
    let mut opts = spec.path.compile.clone();
    opts.overrides.push((spec.path.param.clone(), 1.0));
    let c = pipeline::front_end(file, &Library::standard(), &opts).map_err(PathError::Compile)?;
    let stratified = matches!(c.model.label_kind, LabelKind::Labels | LabelKind::Classes);
    let fold_of = match &spec.fold_of {
        Some(given) => given_folds(given, k, data.rows())?,
        None => folds(&data.labels, k, stratified, spec.path.seed)?,
    };
    let full = solve_path(file, data, None, &spec.path, |e| on(CvEvent::Full(e)))?;
    if full.points.is_empty() {
        return Err(usage("the path on all of the data has no point".into()));
    }
    // Every fold follows the full path's grid (to its last point, if an interrupt cut it short).
    let (at_once, per_fold) = super::ovr::split_threads(spec.path.threads, k);
    let grid = PathSpec {
        values: Some(full.points.iter().map(|p| p.value).collect()),
        threads: per_fold,
        ..spec.path.clone()
    };
    let paths = passes::queued(k, at_once, |f| {
        let (train, test) = data.fold(&fold_of, f);
        solve_path(file, &train, Some(&test), &grid, |_| {})
    });
    let mut fold_paths = vec![];
    let mut failures = vec![];
    for (f, path) in paths.into_iter().enumerate() {
        match path {
            Ok(p) => {
                on(CvEvent::Fold(f, Ok(&p)));
                fold_paths.push(Some(p));
            }
            Err(PathError::Failed(e)) => {
                let why = e.to_string();
                on(CvEvent::Fold(f, Err(&why)));
                failures.push((f, why));
                fold_paths.push(None);
            }
            Err(e) => return Err(e),
        }
    }
    let solved: Vec<&SolvedPath> = fold_paths.iter().flatten().collect();
    let points: Vec<CvPoint> = full
        .points
        .iter()
        .enumerate()
        .map(|(at, p)| {
            let held: Vec<&PathPoint> = solved
                .iter()
                .filter_map(|s| s.points.get(at))
                .filter(|q| q.status == crate::exec::driver::Status::Converged.name())
                .collect();
            let (loss, loss_se) = mean_and_se(held.iter().filter_map(|q| q.test_loss));
            let error = mean_and_se(held.iter().filter_map(|q| q.test_error));
            let has_error = held.iter().any(|q| q.test_error.is_some());
            CvPoint {
                value: p.value,
                loss,
                loss_se,
                error: has_error.then_some(error.0),
                error_se: has_error.then_some(error.1),
                folds: held.len(),
                unconverged: k - held.len(),
            }
        })
        .collect();
    let (min, one_se) = choose(&points).ok_or_else(|| {
        usage(format!("no value of {} converged on every fold: nothing to choose from", spec.path.param))
    })?;
    let chosen = match spec.choose {
        Choose::Min => min,
        Choose::OneSe => one_se,
    };
    if !spec.keep_folds {
        fold_paths.clear();
    }
    Ok(CrossValidated {
        points,
        min,
        one_se,
        chosen,
        full,
        folds: k,
        stratified,
        failures,
        fold_paths,
        fold_of,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Each row's fold, 0..k: a seeded shuffle dealt round-robin, within each label's rows when
/// `stratified` (the labels taken one after another, so the folds' sizes differ by at most one).
pub fn folds(labels: &[f64], k: usize, stratified: bool, seed: u64) -> Result<Vec<usize>, PathError> {
    let m = labels.len();
    if k > m {
        return Err(usage(format!("--folds {k}: the data has {m} rows")));
    }
    let mut groups: Vec<(f64, Vec<usize>)> = vec![];
    if stratified {
        let mut sorted: Vec<usize> = (0..m).collect();
        sorted.sort_by(|&a, &b| labels[a].total_cmp(&labels[b]));
        for i in sorted {
            match groups.last_mut() {
                Some((label, rows)) if label.total_cmp(&labels[i]).is_eq() => rows.push(i),
                _ => groups.push((labels[i], vec![i])),
            }
        }
        if let Some((label, rows)) = groups.iter().find(|(_, rows)| rows.len() < k) {
            return Err(usage(format!(
                "--folds {k}: label {} has {} rows, fewer than the folds (each fold holds some of every label)",
                crate::symbolic::fmt_num(*label),
                rows.len()
            )));
        }
    } else {
        groups.push((0.0, (0..m).collect()));
    }
    // A stream apart from the epochs' row orders and the holdout's, which start from the same seed.
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed ^ 0xc0ff_01d5_u64);
    let mut fold_of = vec![0; m];
    let mut dealt = 0;
    for (_, rows) in &mut groups {
        rows.shuffle(&mut rng);
        for &i in rows.iter() {
            fold_of[i] = dealt % k;
            dealt += 1;
        }
    }
    Ok(fold_of)
}

/// Folds given by the caller, checked: one a row, each below `k`, and every fold holding a row.
fn given_folds(given: &[usize], k: usize, rows: usize) -> Result<Vec<usize>, PathError> {
    if given.len() != rows {
        return Err(usage(format!("{} folds given for {rows} rows", given.len())));
    }
    let mut held = vec![0usize; k];
    for &f in given {
        match held.get_mut(f) {
            Some(n) => *n += 1,
            None => return Err(usage(format!("fold {f} given, for {k} folds (0 to {})", k - 1))),
        }
    }
    if let Some(f) = held.iter().position(|&n| n == 0) {
        return Err(usage(format!("fold {f} holds no row")));
    }
    Ok(given.to_vec())
}

/// The mean of `values` and its standard error (the sample standard deviation over √n; 0 for
/// one value, NaN for none).
fn mean_and_se(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let v: Vec<f64> = values.collect();
    let n = v.len() as f64;
    if v.is_empty() {
        return (f64::NAN, f64::NAN);
    }
    let mean = v.iter().sum::<f64>() / n;
    if v.len() < 2 {
        return (mean, 0.0);
    }
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    (mean, (var / n).sqrt())
}

/// (λ_min, λ_1se) among the values every fold converged at: the least mean loss, and the
/// largest value (the grid runs from large to small, so the first) within one standard error
/// of it. None when no value converged on every fold.
fn choose(points: &[CvPoint]) -> Option<(usize, usize)> {
    let eligible = |p: &CvPoint| p.unconverged == 0 && p.loss.is_finite();
    let min = (0..points.len())
        .filter(|&i| eligible(&points[i]))
        .min_by(|&a, &b| points[a].loss.total_cmp(&points[b].loss))?;
    let bound = points[min].loss + points[min].loss_se;
    let one_se = (0..=min).find(|&i| eligible(&points[i]) && points[i].loss <= bound).unwrap_or(min);
    Some((min, one_se))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(value: f64, loss: f64, loss_se: f64, unconverged: usize) -> CvPoint {
        CvPoint { value, loss, loss_se, error: None, error_se: None, folds: 5 - unconverged, unconverged }
    }

    #[test]
    fn one_se_is_the_largest_value_within_a_standard_error_of_the_least_loss() {
        let points = [
            point(1.0, 0.70, 0.01, 0),
            point(0.5, 0.505, 0.01, 0),
            point(0.25, 0.50, 0.03, 0),
            point(0.1, 0.49, 0.02, 0),
            point(0.05, 0.495, 0.02, 0),
        ];
        assert_eq!(choose(&points), Some((3, 1)));
        // A tighter standard error at the minimum moves λ_1se toward it.
        let mut tight = points.to_vec();
        tight[3].loss_se = 0.005;
        assert_eq!(choose(&tight), Some((3, 3)));
        // A value some fold did not converge at is out of both choices.
        let mut p = points.to_vec();
        p[3].unconverged = 1;
        assert_eq!(choose(&p), Some((4, 1)));
        p.iter_mut().for_each(|q| q.unconverged = 2);
        assert_eq!(choose(&p), None);
    }

    #[test]
    fn folds_are_seeded_balanced_and_stratified() {
        let labels: Vec<f64> = (0..103).map(|i| if i % 4 == 0 { 1.0 } else { -1.0 }).collect();
        let f = folds(&labels, 5, true, 7).expect("folds");
        assert_eq!(f, folds(&labels, 5, true, 7).expect("folds"), "the same seed, the same folds");
        assert_ne!(f, folds(&labels, 5, true, 8).expect("folds"), "another seed, other folds");
        for k in 0..5 {
            let size = f.iter().filter(|&&x| x == k).count();
            assert!((20..=21).contains(&size), "fold {k}: {size} rows");
            let positives = (0..103).filter(|&i| f[i] == k && labels[i] > 0.0).count();
            assert!((5..=6).contains(&positives), "fold {k}: {positives} of 26 positives");
        }
        assert!(folds(&labels, 104, false, 1).is_err(), "more folds than rows");
        let rare: Vec<f64> = (0..50).map(|i| if i < 3 { 1.0 } else { -1.0 }).collect();
        assert!(folds(&rare, 5, true, 1).is_err(), "a label with fewer rows than folds");
        assert!(folds(&rare, 5, false, 1).is_ok());
    }

    #[test]
    fn given_folds_hold_a_row_each_and_stay_below_k() {
        assert_eq!(given_folds(&[0, 1, 2, 1], 3, 4).expect("folds"), [0, 1, 2, 1]);
        for (given, why) in [
            (&[0, 1, 1][..], "3 folds given for 4 rows"),
            (&[0, 1, 1, 1], "fold 2 holds no row"),
            (&[0, 1, 2, 3], "fold 3 given"),
        ] {
            let e = given_folds(given, 3, 4).expect_err(why);
            assert!(format!("{e:?}").contains(why), "{e:?}");
        }
    }

    #[test]
    fn the_standard_error_is_the_deviation_over_the_root_of_the_count() {
        let (mean, se) = mean_and_se([1.0, 2.0, 3.0, 4.0].into_iter());
        assert_eq!(mean, 2.5);
        assert!((se - (5.0_f64 / 3.0 / 4.0).sqrt()).abs() < 1e-15);
        assert_eq!(mean_and_se([2.0].into_iter()), (2.0, 0.0));
        assert!(mean_and_se(std::iter::empty()).0.is_nan());
    }
}
