"""Every fixture of tests/fixtures/optima.json that needs no side file, solved from Python: the
answer is within the tolerance of CVXPY's optimum and its gap is a true bound, to the accuracy
the Rust tests ask (tests/solvers.rs)."""

import numpy as np
import pytest

import optc
from conftest import FIXTURES, optima, read_svmlight

TOL = 1e-6


def model_text(name, f):
    data = f["data"]
    if data.startswith("multiclass") and not name.startswith("ovr_"):
        offsets = "var b: vec[classes(y)]\n" if "+ b" in f["model"] else ""
        return (f"data x: sparse, y: classes\nvar W: mat[dim(x), classes(y)]\n{offsets}"
                f"param λ = {f['lambda']}\n{f['model']}\n")
    kind = "real" if "regression" in data else "labels"
    if "weights" in f:
        kind += ", s: weights"
    text = f"data x: sparse, y: {kind}\nvar w: vec[dim(x)]\nparam λ = {f['lambda']}\n{f['model']}\n"
    if isinstance(f.get("b"), float) and "var b" not in f["model"]:
        text = text.replace("var w: vec[dim(x)]\n", "var w: vec[dim(x)]\nvar b: scalar\n")
    return text


CASES = {name: f for name, f in optima().items()
         if "load(" not in f["model"] and f["data"].endswith(".svm")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_fixture_reaches_its_optimum_with_a_true_certificate(name):
    f = CASES[name]
    X, y = read_svmlight(FIXTURES / f["data"])
    # A weighted fixture's rows' weights, one a line beside it (`E[s·loss]`).
    weights = np.loadtxt(FIXTURES / f["weights"]) if "weights" in f else None
    result = optc.Model(model_text(name, f)).fit(X, y, tol=TOL, epochs=200_000, sample_weight=weights)
    assert result.status == "converged", f"{name}: {result.rule}"
    if name.startswith("ovr_"):
        # One problem a class, each against its own CVXPY optimum.
        best_of = dict(zip(f["classes"], f["objectives"]))
        assert sorted(best_of) == sorted(c["label"] for c in result.report["classes"]), name
        for got in result.report["classes"]:
            best = best_of[got["label"]]
            assert got["objective"] - got["gap"] <= best * (1 + 1e-12), name
            assert (got["objective"] - best) / best <= TOL + 2e-8, name
        return
    best, F, gap = f["objective"], result.objective, result.gap
    if gap is None:
        # A composite regularizer (ω∘B) has no closed-form dual: the run stops on F's relative
        # change and says so; at tol 1e-8 it lands within 1e-6 of the optimum (tests/solvers.rs).
        assert "no certificate" in result.rule or "no penalty" in result.rule, f"{name}: {result.rule}"
        rel = (optc.Model(model_text(name, f)).fit(X, y, tol=1e-8, epochs=20_000).objective - best) / abs(best)
        assert -1e-7 <= rel <= 1e-6, f"{name}: relative {rel:.2e}"
        return
    assert gap is not None and gap <= TOL * abs(F), f"{name}: gap {gap}"
    assert F - gap <= best * (1 + 1e-12), f"{name}: F − gap = {F - gap} above F* = {best}"
    rel = (F - best) / abs(best)
    assert -1e-7 <= rel <= TOL + 2e-8, f"{name}: F = {F}, F* = {best} (relative {rel:.2e})"
