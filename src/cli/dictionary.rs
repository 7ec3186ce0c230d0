//! `optc run` on a dictionary-learning model (Mairal 2013 §4.3): the plan of
//! `plan::lower::dictionary` on the signals of DATA (their labels ignored), in memory or, with
//! `--stream`, a block at a time, for the passes the model or `--epochs` asks, then the report
//! and `--save` D as text.

use super::args::RunRequest;
use super::inputs::load_data;
use super::outputs::{commit_output, prepare_output};
use super::{model_dir, Failure};
use crate::data::stream::{scan, StreamSource, Streamed, DEFAULT_BLOCK_ROWS};
use crate::exec::stream::StreamStop;
use crate::exec::{driver, select_backend, State};
use crate::pipeline::CompiledDictionary;
use crate::stdlib::LabelKind;
use std::time::Instant;

/// Runs the dictionary model `compiled` (read from `args.model` and compiled by the caller since
/// `compile_start`).
pub fn run(
    args: &RunRequest,
    compiled: CompiledDictionary,
    ranks: usize,
    compile_start: Instant,
) -> Result<(), Failure> {
    let CompiledDictionary { model, choice, .. } = compiled;
    // Each rank would learn its own dictionary from the whole file and race to one --save.
    if ranks > 1 {
        return Err(Failure::Usage(format!(
            "dictionary learning does not run on {ranks} processes yet: each would learn from the whole file; run it as one process"
        )));
    }
    for (flag, given) in [
        ("--holdout", args.holdout.is_some()),
        ("--solver", args.solve.model.solver.is_some()),
        // No duality gap bounds a non-convex cost: the passes end the run.
        ("--tol", args.solve.tol.is_some()),
        ("--eager", args.solve.model.eager),
        ("--shards", args.solve.shards.is_some()),
    ] {
        if given {
            return Err(Failure::Usage(format!("{flag} does not take a dictionary model yet")));
        }
    }
    let plan = crate::plan::lower::dictionary::lower(&model, &choice);
    let save_out = prepare_output(args.save.as_ref())?;
    let trace_out = prepare_output(args.trace.as_ref())?;
    let plot_out = prepare_output(args.plot.as_ref())?;
    let k = model.atoms;
    let threads = args.solve.data.threads();
    // In memory, the data; streamed, the first pass's facts and the source later passes read.
    let (train, streamed, parse_seconds) = if args.stream {
        let reading = Instant::now();
        let mut source = StreamSource::new(&args.data, args.block_rows.unwrap_or(DEFAULT_BLOCK_ROWS), threads)
            .map_err(Failure::Usage)?
            .with_cache(args.solve.data.cache_dir());
        let scan = scan(&mut source, args.solve.seed.unwrap_or(1)).map_err(|e| Failure::Input(e.to_string()))?;
        let label_map = scan.label_map(LabelKind::Real).map_err(|e| Failure::Input(e.to_string()))?;
        let streamed = Streamed { source, label_map, features: scan.features, classes: k, weights: None };
        (None, Some((streamed, scan)), reading.elapsed().as_secs_f64())
    } else {
        let (train, parse_seconds, _) = load_data(&args.data, "data file", !args.quiet, &args.solve.data)?;
        (Some(train), None, parse_seconds)
    };
    let (features, rows) = match (&train, &streamed) {
        (Some(t), _) => (t.features(), t.rows()),
        (_, Some((_, scan))) => (scan.features, scan.rows),
        _ => unreachable!("one of the two was read"),
    };
    let facts = match (&train, &streamed) {
        (Some(t), _) => crate::data::DataFacts { classes: k, ..t.facts() },
        (_, Some((_, scan))) => scan.facts(features, k),
        _ => unreachable!("one of the two was read"),
    };
    let side = (features as f64).sqrt().round() as usize;
    if args.plot.is_some() && (side < 2 || side * side != features) {
        return Err(Failure::Usage(format!(
            "--plot draws the atoms as images of square signals (m = s², s > 1); these have m = {features}"
        )));
    }
    // The group term's operator, over the features, as a composite's would be bound.
    let group = crate::plan::lower::dictionary::atom_penalty(&model).group;
    let operator = match (crate::plan::lower::dictionary::groups_file(&model), group) {
        (Some(path), Some((omega, _))) => {
            let c = crate::plan::Composite {
                omega,
                coef: 0.0,
                operator: crate::plan::OperatorSpec::Groups(path.to_string()),
                group_blocks: true,
                prox: crate::plan::CompositeProx::Picard,
            };
            let op = crate::data::operator::bind(&c, features, &model_dir(&args.model))
                .map_err(|e| Failure::Usage(e.to_string()))?;
            Some(op)
        }
        _ => None,
    };
    let labels = vec![0.0; train.as_ref().map_or(0, |t| t.rows())];
    let test = match &args.solve.test {
        Some(p) => Some(load_data(p, "test file", !args.quiet, &args.solve.data)?.0),
        None => None,
    };
    let test_labels = test.as_ref().map(|t| vec![0.0; t.rows()]);
    let test_view = test
        .as_ref()
        .zip(test_labels.as_ref())
        .map(|(t, y)| t.view(y, features).with_classes(k).with_operator(operator.as_ref()).with_threads(threads));
    let epochs = args.solve.epochs.unwrap_or(choice.epochs);
    let mut settings = driver::RunSettings::fixed(epochs, args.solve.seed.unwrap_or(1));
    settings.trace = args.trace.is_some();
    settings.time_limit = args.solve.time_limit;
    settings.cancel = super::interrupt();
    let front_seconds = compile_start.elapsed().as_secs_f64();
    let mut selected = select_backend(&plan, &facts, !args.solve.no_jit);
    let backend_name = selected.backend.name();
    let mut start = State::new(&plan, &facts, &labels);
    if let Some(path) = &args.init {
        let d = read_saved(path, features, k)?;
        let slot = plan.weights().expect("a dictionary plan holds D");
        start.vectors[slot.0] = d;
        // The steps count from 1: the epoch does not start D from signals again.
        if let Some(crate::plan::Stmt::Dictionary(call)) = plan.epoch.first() {
            start.scalars[call.steps.0] = 1.0;
        }
    }
    let outcome = match (&train, &streamed) {
        (Some(train), _) => {
            let view =
                train.view(&labels, features).with_classes(k).with_operator(operator.as_ref()).with_threads(threads);
            let watch = driver::Watch { test: test_view.as_ref(), holdout: None };
            driver::run_watched(&plan, selected.backend.as_mut(), &view, &facts, &settings, Some(start), watch)
                .map_err(|stopped| match stopped {
                    driver::Stopped::Fault(f) => Failure::Usage(format!("the run stopped: {} is {}", f.what, f.value)),
                    driver::Stopped::Refused(why) => Failure::Usage(why),
                })?
        }
        (_, Some((streamed, _))) => {
            let backend = selected.backend.as_mut();
            crate::exec::stream::dictionary::run(
                &plan,
                backend,
                streamed,
                &settings,
                start,
                threads,
                test_view.as_ref(),
            )
            .map_err(|stop| match stop {
                StreamStop::Fault { fault, line } => Failure::Usage(format!(
                    "the run stopped: {} is {} (in the block from line {line})",
                    fault.what, fault.value
                )),
                other => super::wording::stopped(other),
            })?
        }
        _ => unreachable!("one of the two was read"),
    };
    let held_out = test_view.as_ref().map(|t| crate::exec::evaluate::evaluate(&plan, &outcome.state, t).loss);
    let d = outcome.state.weights(&plan).to_vec();
    let stopped_by = match outcome.status {
        driver::Status::TimeLimit | driver::Status::Interrupted => outcome.rule.clone(),
        _ => format!("the passes asked for ({epochs})"),
    };
    let eval = &outcome.eval;
    if args.json {
        let r = serde_json::json!({
            "model": args.model.display().to_string(),
            "data": args.data.display().to_string(),
            "solver": crate::solvers::SolverKind::Smm,
            "solver_reason": choice.reason,
            "atoms": k,
            "rows": rows,
            "streamed": args.stream,
            "features": features,
            "batch": choice.batch,
            "epochs": outcome.epochs,
            "objective": eval.objective,
            "loss": eval.loss,
            "gap": null,
            "nnz": eval.nnz,
            "status": outcome.status.name(),
            "stopped_by": format!("{stopped_by}; no certificate: the cost is not convex"),
            "seconds": outcome.seconds,
            "check_seconds": outcome.check_seconds,
            "test_loss": held_out,
            "parse_seconds": parse_seconds,
            "compile_seconds": front_seconds + selected.jit_seconds,
            "backend": backend_name,
        });
        println!("{}", serde_json::to_string_pretty(&r).unwrap_or_default());
    } else if !args.quiet {
        println!("optc: smm on {} — {} signals of dimension {}, {k} atoms", args.data.display(), rows, features);
        println!("  epochs       {} (seed {}), mini-batches of {}", outcome.epochs, settings.seed, choice.batch);
        println!(
            "  objective    F = {:.6}  (mean cost {:.6} + ϕ(D) {:.6})",
            eval.objective,
            eval.loss,
            eval.objective - model.coef.value * eval.loss
        );
        println!(
            "  status       {}: {stopped_by} (the cost is not convex, so no duality gap certifies it)",
            outcome.status.name()
        );
        println!("  nnz          {} of {} entries of D", eval.nnz, d.len());
        if let Some(t) = held_out {
            println!("  test cost    {t:.6}  (the mean ℓ(x, D) of the held-out signals)");
        }
        println!("  time         {:.3} s to solve", outcome.seconds);
        println!("  backend      {backend_name}");
    }
    commit_output(save_out, || saved_dictionary(&model, &d, features))?;
    match plot_out {
        Some(o) if args.plot.as_ref().is_some_and(|p| has_extension(p, "png")) => {
            let png = atoms_png(&d, side, k).map_err(|e| Failure::Input(format!("--plot: {e}")))?;
            o.commit(&png).map_err(|e| Failure::Input(e.to_string()))?;
        }
        o => commit_output(o, || atoms_svg(&d, side, k))?,
    }
    commit_output(trace_out, || {
        let mut csv = String::from("epoch,seconds,objective,loss,test_loss\n");
        for p in &outcome.trace {
            let test = p.test.as_ref().map_or(String::new(), |t| format!("{:.17e}", t.loss));
            csv.push_str(&format!(
                "{},{:.6},{:.17e},{:.17e},{test}\n",
                p.epoch, p.seconds, p.eval.objective, p.eval.loss
            ));
        }
        csv
    })?;
    super::unless_interrupted(outcome.status)
}

/// The atoms as a grid of s × s images (Mairal 2013's Figure 3): each atom scaled by its own
/// largest |value|, 0 mid-grey, positive lighter; SVG, a square per pixel (`--plot atoms.svg`;
/// `atoms.png` writes [`atoms_png`]).
pub fn atoms_svg(d: &[f64], side: usize, k: usize) -> String {
    const PIXEL: usize = 4;
    let cols = (k as f64).sqrt().ceil().max(1.0) as usize;
    let rows = k.div_ceil(cols);
    let cell = side * PIXEL + 2;
    let (width, height) = (cols * cell, rows * cell);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" shape-rendering=\"crispEdges\">\n<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>\n"
    );
    for c in 0..k {
        let grey = grey(d, k, c, side * side);
        let (x0, y0) = ((c % cols) * cell + 1, (c / cols) * cell + 1);
        for j in 0..side * side {
            let g = grey(j);
            let (x, y) = (x0 + (j % side) * PIXEL, y0 + (j / side) * PIXEL);
            out.push_str(&format!(
                "<rect x=\"{x}\" y=\"{y}\" width=\"{PIXEL}\" height=\"{PIXEL}\" fill=\"rgb({g},{g},{g})\"/>\n"
            ));
        }
    }
    out.push_str("</svg>\n");
    out
}

fn has_extension(path: &std::path::Path, ext: &str) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case(ext))
}

/// The grey level of pixel j of atom c (D a mat[s², k]): the atom scaled by its own largest
/// |value|, 0 mid-grey, positive lighter.
fn grey(d: &[f64], k: usize, c: usize, pixels: usize) -> impl Fn(usize) -> u8 + '_ {
    let top = (0..pixels).map(|j| d[j * k + c].abs()).fold(0.0, f64::max);
    move |j| {
        let v = if top > 0.0 { d[j * k + c] / top } else { 0.0 };
        (127.5 + 127.5 * v).round().clamp(0.0, 255.0) as u8
    }
}

/// The same grid as [`atoms_svg`] as an 8-bit grey PNG, each pixel of an atom 4 × 4 on a
/// white ground.
pub fn atoms_png(d: &[f64], side: usize, k: usize) -> Result<Vec<u8>, png::EncodingError> {
    const PIXEL: usize = 4;
    let cols = (k as f64).sqrt().ceil().max(1.0) as usize;
    let rows = k.div_ceil(cols).max(1);
    let cell = side * PIXEL + 2;
    let (width, height) = (cols * cell, rows * cell);
    let mut image = vec![255u8; width * height];
    for c in 0..k {
        let g = grey(d, k, c, side * side);
        let (x0, y0) = ((c % cols) * cell + 1, (c / cols) * cell + 1);
        for y in 0..side * PIXEL {
            for x in 0..side * PIXEL {
                image[(y0 + y) * width + x0 + x] = g((y / PIXEL) * side + x / PIXEL);
            }
        }
    }
    let mut out = vec![];
    {
        let mut encoder = png::Encoder::new(&mut out, width as u32, height as u32);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header()?;
        writer.write_image_data(&image)?;
    }
    Ok(out)
}

/// A saved dictionary: λ₁, λ₂ from its header, and D (mat[m, K], row-major) from its rows.
pub struct SavedDictionary {
    pub lambda1: f64,
    pub lambda2: f64,
    pub dim: usize,
    pub atoms: usize,
    pub d: Vec<f64>,
}

impl SavedDictionary {
    /// Whether `text` is what [`saved_dictionary`] writes.
    pub fn is(text: &str) -> bool {
        text.starts_with("# optc dictionary")
    }

    /// Reads `text` (from `path`, for messages): a bad line is an error naming it.
    pub fn parse(text: &str, path: &std::path::Path) -> Result<SavedDictionary, Failure> {
        let bad = |line: usize, what: String| Failure::Input(format!("{}:{line}: {what}", path.display()));
        let (mut lambda1, mut lambda2, mut atoms) = (None, None, None);
        let mut d = vec![];
        let mut rows = 0;
        for (n, line) in text.lines().enumerate() {
            if let Some(h) = line.strip_prefix('#') {
                let mut parts = h.split_whitespace();
                let (key, value) = (parts.next(), parts.next().and_then(|v| v.parse::<f64>().ok()));
                match key {
                    Some("lambda1") => lambda1 = value,
                    Some("lambda2") => lambda2 = value,
                    Some("atoms") => atoms = value.map(|v| v as usize),
                    _ => {}
                }
                continue;
            }
            let row: Vec<f64> = line
                .split_whitespace()
                .map(|v| v.parse::<f64>().ok().filter(|x| x.is_finite()))
                .collect::<Option<_>>()
                .ok_or_else(|| bad(n + 1, "not a row of finite numbers".into()))?;
            if atoms.is_some_and(|k| k != row.len()) {
                return Err(bad(
                    n + 1,
                    format!("{} values where the header says {} atoms", row.len(), atoms.unwrap_or(0)),
                ));
            }
            d.extend(row);
            rows += 1;
        }
        match (lambda1, lambda2, atoms) {
            (Some(lambda1), Some(lambda2), Some(atoms)) if atoms > 0 => {
                Ok(SavedDictionary { lambda1, lambda2, dim: rows, atoms, d })
            }
            _ => Err(bad(1, "a dictionary file's header names lambda1, lambda2 and atoms".into())),
        }
    }
}

/// `--init`: D from a saved dictionary, which must have the model's shape.
fn read_saved(path: &std::path::Path, features: usize, k: usize) -> Result<Vec<f64>, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| Failure::Input(format!("{}: {e}", path.display())))?;
    if !SavedDictionary::is(&text) {
        return Err(Failure::Input(format!(
            "{}: not a saved dictionary (`optc run --save` writes one, starting `# optc dictionary`)",
            path.display()
        )));
    }
    let s = SavedDictionary::parse(&text, path)?;
    if (s.dim, s.atoms) != (features, k) {
        return Err(Failure::Usage(format!(
            "--init {}: a dictionary of {} × {} where the model and data have {features} × {k}",
            path.display(),
            s.dim,
            s.atoms
        )));
    }
    Ok(s.d)
}

/// `optc predict` on a saved dictionary: each signal's code as `j:αⱼ` pairs (1-based atoms),
/// one line a signal, and the mean ℓ(x, D) on standard error (unless quiet).
pub fn predict(saved: &SavedDictionary, data: &crate::data::Dataset, quiet: bool) -> String {
    use crate::runtime::dictionary::{Dictionary, Signals, CODE_TOL};
    let (m, k) = (saved.dim, saved.atoms);
    let mut d = vec![0.0; m * k];
    for j in 0..m {
        for c in 0..k {
            d[c * m + j] = saved.d[j * k + c];
        }
    }
    let dict = Dictionary::new(k, m, d);
    let coder = dict.coder();
    let (indptr, indices, values) = data.csr();
    let x = Signals { indptr, indices, values };
    let mut out = String::new();
    let mut total = 0.0;
    for i in 0..data.rows() {
        let (idx, val) = x.row(i);
        let (alpha, cost) = coder.code(idx, val, (saved.lambda1, saved.lambda2), CODE_TOL);
        total += cost;
        let pairs: Vec<String> =
            alpha.iter().enumerate().filter(|(_, a)| **a != 0.0).map(|(j, a)| format!("{}:{a}", j + 1)).collect();
        out.push_str(&pairs.join(" "));
        out.push('\n');
    }
    if !quiet {
        eprintln!("mean cost ℓ(x, D) = {:.6} over {} signals", total / data.rows().max(1) as f64, data.rows());
    }
    out
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
