//! Binding a composite term's operator B: built for the data's d features from the plan's
//! spec, `load("...")` files read relative to the model file's directory. A file that does not
//! fit (an index beyond d, a malformed line) is an error naming the file and line. A plan that
//! shrinks each group in closed form was compiled for disjoint groups: a groups file that
//! overlaps by the time the data is bound (edited in between) is an error too, not a wrong prox.

use crate::plan::{Composite, CompositeProx, OperatorSpec};
use crate::runtime::picard::{Omega, Operator};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    #[error(transparent)]
    Load(#[from] super::structure_files::LoadError),
    #[error("{file}: feature {index} is beyond the data's {features} features")]
    Beyond { file: String, index: u32, features: usize },
    #[error("`diff({n})` needs the variable to have {n} entries, and the data has {features} features")]
    DiffSize { n: usize, features: usize },
    #[error(
        "{file}: feature {feature} is in groups {first} and {second}, but the plan was compiled for disjoint groups (was the file changed?)"
    )]
    NoLongerDisjoint { file: String, feature: u32, first: usize, second: usize },
}

/// B for `composite` over `features` coordinates; `base` is the model file's directory.
pub fn bind(composite: &Composite, features: usize, base: &Path) -> Result<Operator, OperatorError> {
    let mut op = match &composite.operator {
        OperatorSpec::Diff(Some(n)) if *n != features => return Err(OperatorError::DiffSize { n: *n, features }),
        OperatorSpec::Diff(_) => Operator::diff(features),
        OperatorSpec::Incidence(path) => {
            let file = base.join(path);
            let edges = super::structure_files::read_edges(&file)?;
            check_range(&file, edges.max_index, features)?;
            Operator::incidence(&edges.edges, features)
        }
        OperatorSpec::Groups(path) => {
            let file = base.join(path);
            let groups = super::structure_files::read_groups(&file)?;
            check_range(&file, groups.max_index, features)?;
            if let (CompositeProx::GroupShrink, Some(s)) = (composite.prox, groups.first_shared()) {
                let file = file.display().to_string();
                return Err(OperatorError::NoLongerDisjoint {
                    file,
                    feature: s.feature,
                    first: s.first,
                    second: s.second,
                });
            }
            Operator::groups(&groups.groups, features)
        }
    };
    // ℓ2 of all of B w at once (`l2(B w)`): one block of every row.
    if composite.omega == Omega::BlockL2 && !composite.group_blocks {
        op.blocks = vec![(0, op.rows)];
    }
    Ok(op)
}

fn check_range(file: &Path, max_index: u32, features: usize) -> Result<(), OperatorError> {
    if max_index as usize > features {
        return Err(OperatorError::Beyond { file: file.display().to_string(), index: max_index, features });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plan compiled for disjoint groups does not run on a groups file that overlaps by the
    /// time the data is bound: the closed-form shrink would not be the prox of the model.
    #[test]
    fn a_group_shrink_plan_refuses_groups_that_overlap_at_binding() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::write(dir.path().join("g.txt"), "1 2\n3 4\n").expect("write");
        let mut c = Composite {
            omega: Omega::BlockL2,
            coef: 0.1,
            operator: OperatorSpec::Groups("g.txt".into()),
            group_blocks: true,
            prox: CompositeProx::GroupShrink,
        };
        let op = bind(&c, 5, dir.path()).expect("disjoint groups bind");
        assert_eq!((op.rows, op.blocks.clone()), (4, vec![(0, 2), (2, 4)]));
        std::fs::write(dir.path().join("g.txt"), "1 2\n3 4\n5 2\n").expect("write");
        let err = bind(&c, 5, dir.path()).expect_err("overlap").to_string();
        assert!(err.ends_with("g.txt: feature 2 is in groups 1 and 3, but the plan was compiled for disjoint groups (was the file changed?)"), "{err}");
        c.prox = CompositeProx::Picard;
        assert!(bind(&c, 5, dir.path()).is_ok(), "Picard is right for any groups");
    }
}
