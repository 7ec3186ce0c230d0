//! The front end never panics on user input: random token soup and mutated valid models
//! either check or come back as diagnostics.

use optc::pipeline::{self, CompileOptions};
use optc::source::SourceFile;
use optc::stdlib::Library;
use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "data",
    "var",
    "param",
    "minimize",
    "st",
    "subject to",
    "solve",
    "with",
    "loss",
    "regularizer",
    "set",
    "E[",
    "]",
    "(",
    ")",
    "<",
    ">",
    "⟨",
    "⟩",
    ",",
    ":",
    "=",
    "+",
    "-",
    "·",
    "*",
    "/",
    "^",
    "²",
    "∈",
    "in",
    "≥",
    "<=",
    "x",
    "y",
    "w",
    "W",
    "λ",
    "lambda",
    "sparse",
    "labels",
    "classes",
    "real",
    "vec",
    "mat",
    "dim(x)",
    "classes(y)",
    "logistic",
    "hinge",
    "squared",
    "softmax",
    "l1",
    "l2sq",
    "elastic",
    "l1inf",
    "logeps",
    "Box",
    "NonNeg",
    "L1Ball",
    "diff",
    "load",
    "\"f.txt\"",
    "fobos",
    "scd",
    "smm",
    "epochs",
    "step",
    "t",
    "1e-4",
    "0",
    "2",
    "-1",
    "½",
    "inf",
    "\n",
    "\\\n",
    "#c\n",
    " ",
    "\u{0}",
    "é",
];

fn compile(text: &str) {
    let file = SourceFile::new("fuzz.opt", text);
    let opts = CompileOptions::default();
    if let Ok(c) = pipeline::front_end(&file, &Library::standard(), &opts) {
        let _ = pipeline::plan(&c, &opts);
        let _ = optc::analysis::report(&c.model, &c.structure, "fuzz.opt");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..40)) {
        compile(&tokens.join(" "));
    }

    #[test]
    fn mutated_models_never_panic(cut in 0usize..200, insert in proptest::sample::select(TOKENS)) {
        let base = "data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 1e-4\nminimize E[logistic(y, <x, w>)] + λ·l1(w) st w ∈ Box(-1, 1)\nsolve with fobos(step = 0.5/sqrt(t), epochs = 3)\n";
        let mut at = cut.min(base.len());
        while !base.is_char_boundary(at) { at -= 1; }
        compile(&format!("{}{insert}{}", &base[..at], &base[at..]));
        compile(&base[..at]);
    }
}
