//! optc as a library: a model compiled from text, data built in code as CSR arrays, a solve,
//! a parameter change and a warm solve, and the reports as JSON.
//!
//!     cargo run --release --example library

use optc::session::{Data, Options, Problem, Session};

fn main() -> Result<(), optc::session::Error> {
    let problem = Problem::from_text(
        "data x: sparse, y: labels\n\
         var w: vec[dim(x)]\n\
         param λ = 0.05\n\
         minimize E[logistic(y, <x, w>)] + λ·l1(w)\n",
    )?;
    // 400 rows of 20 features: the label is the sign of x₀ + x₁ − x₂, two features in three
    // set per row, from a fixed linear congruential sequence (no dependencies).
    let (rows, features) = (400, 20);
    let mut state: u64 = 7;
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as f64 / (1u64 << 31) as f64) * 2.0 - 1.0
    };
    let (mut indptr, mut indices, mut values, mut labels) = (vec![0u32], vec![], vec![], vec![]);
    for _ in 0..rows {
        let mut score = 0.0;
        for j in 0..features as u32 {
            let v = next();
            if v.abs() > 1.0 / 3.0 {
                indices.push(j);
                values.push(v);
                score += match j {
                    0 | 1 => v,
                    2 => -v,
                    _ => 0.0,
                };
            }
        }
        indptr.push(indices.len() as u32);
        labels.push(if score >= 0.0 { 1.0 } else { -1.0 });
    }
    let data = Data::from_csr(&indptr, &indices, &values, &labels, Some(features))?;
    let mut session = Session::new(problem, data);
    let first = session.solve(&Options::default())?;
    println!("{}", serde_json::to_string_pretty(&first).expect("a report serializes"));
    session.set("λ", 0.01)?;
    let second = session.solve(&Options::default())?;
    println!(
        "λ = 0.01, warm from λ = 0.05: F = {:.6}, gap {:.1e}, {} in {} epochs, {} of {features} weights non-zero",
        second.objective,
        second.gap.unwrap_or(f64::NAN),
        second.status,
        second.epochs,
        second.nnz
    );
    Ok(())
}
