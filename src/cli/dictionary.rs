//! `optc run` on a dictionary-learning model (Mairal 2013 §4.3): the plan of
//! `plan::lower::dictionary` on the signals of DATA (their labels ignored), for the passes the
//! model or `--epochs` asks, then the report and `--save` D as text.

use super::run::{commit_output, load_data, prepare_output, RunArgs};
use super::{model_dir, parse_sets, read_model, report_compile_error, Failure};
use crate::exec::{driver, select_backend, State};
use crate::pipeline::{self, CompileOptions, CompiledDictionary};
use std::time::Instant;

/// Runs the dictionary model in `args.model`; Ok(false) when the file holds another kind of
/// model (the caller runs it).
pub fn run(args: &RunArgs) -> Result<bool, Failure> {
    let compile_start = Instant::now();
    let file = read_model(&args.model)?;
    let opts = CompileOptions {
        overrides: parse_sets(&args.solve.set)?,
        solver: None,
        eager: false,
        epochs: args.solve.epochs,
        files: Some(model_dir(&args.model)),
    };
    let Some(CompiledDictionary { model, choice, .. }) =
        pipeline::dictionary(&file, &opts).map_err(|e| report_compile_error(e, &file))?
    else {
        return Ok(false);
    };
    for (flag, given) in [
        ("--stream", args.stream),
        ("--holdout", args.holdout.is_some()),
        ("--init", args.init.is_some()),
        ("--test", args.solve.test.is_some()),
        ("--trace", args.trace.is_some()),
        ("--plot", args.plot.is_some()),
        ("--solver", args.solve.solver.is_some()),
        ("--shards", args.solve.shards.is_some()),
    ] {
        if given {
            return Err(Failure::Usage(format!("{flag} does not take a dictionary model yet")));
        }
    }
    let plan = crate::plan::lower::dictionary::lower(&model, &choice);
    let save_out = prepare_output(args.save.as_ref())?;
    let (train, parse_seconds, _) = load_data(&args.data, !args.quiet, &args.solve.data)?;
    let features = train.features();
    let k = model.atoms;
    let facts = crate::data::DataFacts { classes: k, ..train.facts() };
    // The group term's operator, over the features, as a composite's would be bound.
    let operator = match crate::plan::lower::dictionary::groups_file(&model) {
        Some(path) => {
            let c = crate::plan::Composite {
                omega: crate::runtime::picard::Omega::BlockLinf,
                coef: 0.0,
                operator: crate::plan::OperatorSpec::Groups(path.to_string()),
                group_blocks: true,
                prox: crate::plan::CompositeProx::Picard,
            };
            let op = crate::data::operator::bind(&c, features, &model_dir(&args.model))
                .map_err(|e| Failure::Usage(e.to_string()))?;
            Some(op)
        }
        None => None,
    };
    let labels = vec![0.0; train.rows()];
    let view = train.view(&labels, features).with_classes(k).with_operator(operator.as_ref());
    let epochs = args.solve.epochs.unwrap_or(choice.epochs);
    let settings = driver::RunSettings::fixed(epochs, args.solve.seed.unwrap_or(1));
    let front_seconds = compile_start.elapsed().as_secs_f64();
    let mut selected = select_backend(&plan, &facts, !args.solve.no_jit);
    let backend_name = selected.backend.name();
    let start = State::new(&plan, &facts, &labels);
    let outcome = driver::run(&plan, selected.backend.as_mut(), &view, &facts, &settings, Some(start))
        .map_err(|f| Failure::Usage(format!("the run stopped: {} is {}", f.what, f.value)))?;
    let d = outcome.state.weights(&plan).to_vec();
    let eval = &outcome.eval;
    if args.json {
        let r = serde_json::json!({
            "model": args.model.display().to_string(),
            "data": args.data.display().to_string(),
            "solver": "smm",
            "solver_reason": choice.reason,
            "atoms": k,
            "rows": train.rows(),
            "features": features,
            "batch": choice.batch,
            "epochs": outcome.epochs,
            "objective": eval.objective,
            "loss": eval.loss,
            "gap": null,
            "nnz": eval.nnz,
            "status": "max_epochs",
            "stopped_by": format!("the passes asked for ({epochs}); no certificate: the cost is not convex"),
            "seconds": outcome.seconds,
            "parse_seconds": parse_seconds,
            "compile_seconds": front_seconds + selected.jit_seconds,
            "backend": backend_name,
        });
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else if !args.quiet {
        println!(
            "optc: smm on {} — {} signals of dimension {}, {k} atoms",
            args.data.display(),
            train.rows(),
            features
        );
        println!("  epochs       {} (seed {}), mini-batches of {}", outcome.epochs, settings.seed, choice.batch);
        println!(
            "  objective    F = {:.6}  (mean cost {:.6} + ϕ(D) {:.6})",
            eval.objective,
            eval.loss,
            eval.objective - model.coef.value * eval.loss
        );
        println!(
            "  status       stopped after the passes asked for: the cost is not convex, so no duality gap certifies it"
        );
        println!("  nnz          {} of {} entries of D", eval.nnz, d.len());
        println!("  time         {:.3} s to solve", outcome.seconds);
        println!("  backend      {backend_name}");
    }
    commit_output(save_out, || saved_dictionary(&model, &d, features))?;
    Ok(true)
}

/// D as text: `#` header lines (the model's λ₁, λ₂ and K among them), then one row of D (one
/// feature, K values) per line.
pub fn saved_dictionary(model: &crate::check::Dictionary, d: &[f64], features: usize) -> String {
    let k = model.atoms;
    let mut out = String::new();
    out.push_str("# optc dictionary: one row of D per line, one column per atom\n");
    out.push_str(&format!("# lambda1 {}\n# lambda2 {}\n", model.lambda1, model.lambda2));
    out.push_str(&format!("# atoms {k}\n# dim {features}\n"));
    for j in 0..features {
        let row: Vec<String> = (0..k).map(|c| format!("{}", d[j * k + c])).collect();
        out.push_str(&row.join(" "));
        out.push('\n');
    }
    out
}
