"""The model API: matrices in every form give one answer, a canonical CSR matrix is read in place,
parameters and warm starts, the texts of `optc check` and `optc plan`, traces, Ctrl-C, and the
errors a user meets."""

import os
import signal
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import optc
from conftest import FIXTURES, L1_LOGISTIC, read_svmlight


def with_index_width(X, width):
    """X with index arrays of `width`, as scipy keeps them for a matrix past 2³¹ entries
    (its constructor narrows small ones to int32)."""
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(width), X.indptr.astype(width)
    return X


@pytest.mark.parametrize("width", [np.int32, np.int64])
def test_a_canonical_csr_matrix_is_read_in_place(binary, width):
    X, y = binary
    X = with_index_width(X, width)
    assert X.indices.dtype == width and X.has_canonical_format
    native = optc.Model(L1_LOGISTIC)._native
    indices_at, values_at = native.addresses(optc._csr(X)[:3] + (y, X.shape[1]))
    assert indices_at == X.indices.ctypes.data
    assert values_at == X.data.ctypes.data


def test_every_form_of_the_matrix_gives_the_same_answer(binary):
    X, y = binary
    reference = optc.Model(L1_LOGISTIC).fit(X, y, tol=1e-8)
    # Rows with their entries reversed and one entry split in two: not canonical, so sorted
    # and summed on a copy.
    indptr, indices, values = [0], [], []
    for r in range(X.shape[0]):
        cols = list(X.indices[X.indptr[r]:X.indptr[r + 1]])[::-1]
        vals = list(X.data[X.indptr[r]:X.indptr[r + 1]])[::-1]
        if cols:
            cols.append(cols[0])
            vals[0] /= 2
            vals.append(vals[0])
        indices += cols
        values += vals
        indptr.append(len(indices))
    messy = sp.csr_matrix((np.array(values), np.array(indices, dtype=np.int32), np.array(indptr)), shape=X.shape)
    assert not messy.has_canonical_format
    forms = {
        "csc": X.tocsc(),
        "dense": X.toarray(),
        "int64 indices": with_index_width(X, np.int64),
        "float32": X.astype(np.float32),
        "not canonical": messy,
        "csr_array": sp.csr_array(X),
    }
    for name, form in forms.items():
        expected = X.astype(np.float32).astype(np.float64) if name == "float32" else X
        got = optc.Model(L1_LOGISTIC).fit(form, y, tol=1e-8)
        if name == "float32":
            same = optc.Model(L1_LOGISTIC).fit(expected, y, tol=1e-8)
            assert got.objective == same.objective, name
        else:
            assert abs(got.objective - reference.objective) <= 1e-12 * reference.objective, name
            assert np.allclose(got.coef_, reference.coef_, atol=1e-6), name
    # The matrix the caller passed is left as it was.
    assert not messy.has_canonical_format


def test_a_dense_array_mostly_of_non_zeros_is_read_whole():
    """Such an array goes over with its zeros stored and, C-ordered, its values read where they
    are: the fit is its CSR form's, in either order."""
    rng = np.random.default_rng(3)
    D = rng.normal(size=(200, 10))
    D[rng.random(D.shape) < 0.3] = 0.0
    y = np.where(D @ rng.normal(size=10) + 0.3 * rng.normal(size=200) > 0, 1.0, -1.0)
    indptr, indices, values, features = optc._csr(D)
    assert np.shares_memory(values, D) and len(values) == D.size and features == 10
    reference = optc.Model(L1_LOGISTIC).fit(sp.csr_matrix(D), y, tol=1e-10)
    for form in (D, np.asfortranarray(D)):
        got = optc.Model(L1_LOGISTIC).fit(form, y, tol=1e-10)
        assert abs(got.objective - reference.objective) <= 1e-12 * reference.objective
        assert np.allclose(got.coef_, reference.coef_, atol=1e-9)
    # Mostly zeros: converted, the zeros dropped.
    S = np.where(rng.random(D.shape) < 0.8, 0.0, D)
    assert len(optc._csr(S)[2]) == np.count_nonzero(S)
    # A value that is not finite is named by its row and column.
    bad = D.copy()
    bad[150, 7] = np.inf
    with pytest.raises(Exception, match="row 150, column 7"):
        optc.Model(L1_LOGISTIC).fit(bad, y)
    # A tall array is judged on evenly spaced rows, either way.
    T = rng.normal(size=(20_000, 3))
    assert len(optc._csr(np.where(rng.random(T.shape) < 0.3, 0.0, T))[2]) == T.size
    sparse = np.where(rng.random(T.shape) < 0.8, 0.0, T)
    assert len(optc._csr(sparse)[2]) == np.count_nonzero(sparse)


def test_the_answer_is_optc_runs(binary):
    X, y = binary
    result = optc.Model(L1_LOGISTIC).fit(X, y)
    assert result.status == "converged" and result.solver == "scd"
    assert result.gap <= 1e-4 * result.objective
    assert "duality gap" in result.rule
    assert result.nnz == int(np.count_nonzero(result.coef_))
    assert result.coef_.shape == (X.shape[1],)
    # The record's weights are the answer's, handed over as an array.
    assert np.array_equal(result.report["weights"], result.coef_)
    # F recomputed here from the weights.
    margins = X @ result.coef_
    F = np.mean(np.logaddexp(0, -y * margins)) + 0.01 * np.abs(result.coef_).sum()
    assert abs(F - result.objective) <= 1e-12 * F


def test_parameters_set_and_warm_starts(binary):
    X, y = binary
    model = optc.Model(L1_LOGISTIC, lam=0.05)
    sparse = model.fit(X, y, tol=1e-8)
    model.set(λ=0.01)
    warm = model.fit(X, y, tol=1e-8)
    cold = optc.Model(L1_LOGISTIC).fit(X, y, tol=1e-8)
    assert sparse.nnz < warm.nnz
    # Parameters set together are set in order: of two names for λ the last counts.
    both = optc.Model(L1_LOGISTIC).set(lam=0.05, λ=0.01).fit(X, y, tol=1e-8)
    assert abs(both.objective - cold.objective) <= 1e-7 * cold.objective
    assert abs(warm.objective - cold.objective) <= 1e-7 * cold.objective
    # A second fit at the same λ starts at the answer: no more epochs than the first.
    again = model.fit(X, y, tol=1e-8)
    assert again.epochs <= warm.epochs
    # init: starting at the optimum, the first check certifies it.
    start = optc.Model(L1_LOGISTIC).fit(X, y, init=cold.coef_, tol=1e-6)
    assert start.epochs <= 2 and start.status == "converged"
    fresh = model.fit(X, y, tol=1e-8, warm_start=False)
    assert fresh.epochs >= again.epochs
    # The last answer continues only where it fits: on wider rows the fit starts from zero,
    # as optc run does, where init= of the wrong size is an error (test_bad_data...).
    wider = sp.hstack([X, sp.csr_matrix(np.ones((X.shape[0], 1)))], format="csr")
    wide = model.fit(wider, y, tol=1e-8)
    assert wide.coef_.shape == (X.shape[1] + 1,) and wide.status == "converged"


def test_models_of_one_text_and_parameters_are_independent(binary, tmp_path, monkeypatch):
    # A compiled model is shared between Models of the same text and parameters, not their
    # parameters set later or their last answers.
    X, y = binary
    first = optc.Model(L1_LOGISTIC, lam=0.05)
    second = optc.Model(L1_LOGISTIC, lam=0.05)
    at_005 = first.fit(X, y, tol=1e-8)
    second.set(lam=0.01)
    at_001 = second.fit(X, y, tol=1e-8)
    assert at_001.nnz > at_005.nnz
    again = optc.Model(L1_LOGISTIC, lam=0.05).fit(X, y, tol=1e-8)
    assert abs(again.objective - at_005.objective) <= 1e-12 * at_005.objective
    assert first.fit(X, y, tol=1e-8, warm_start=False).objective == at_005.objective
    # A model that loads a file is read again: its text alone does not say what it means.
    monkeypatch.chdir(tmp_path)
    text = ("data x: sparse, y: labels\nvar w: vec[dim(x)]\nparam λ = 0.1\n"
            "minimize E[logistic(y, <x, w>)] + λ·group_l2(groups(load(\"g.txt\")), w)\n")
    (tmp_path / "g.txt").write_text("1 2\n3 4\n")
    optc.Model(text)
    (tmp_path / "g.txt").write_text("0 1\n")
    with pytest.raises(optc.ModelError, match="1-based"):
        optc.Model(text)


def test_a_model_file_and_its_texts(tmp_path, binary):
    path = tmp_path / "m.opt"
    path.write_text(L1_LOGISTIC)
    model = optc.Model(str(path))
    assert model.text == L1_LOGISTIC
    assert "solver" in model.check() and "scd" in model.check()
    assert "epoch" in model.plan()
    X, y = binary
    traced = model.fit(X, y, trace=True, tol=1e-8)
    # A point a check: at the end of each epoch, and at epoch 0 where the check before the first
    # epoch solves this small problem.
    assert traced.trace["epoch"][-1] == traced.epochs
    assert len(traced.trace["objective"]) <= traced.epochs + 1
    assert np.all(np.diff(traced.trace["epoch"]) > 0)
    assert np.all(traced.trace["objective"] >= traced.objective - 1e-15)


def test_a_bad_model_raises_a_located_model_error():
    with pytest.raises(optc.ModelError) as caught:
        optc.Model("data x: sparse, y: labels\nvar w: vec[dim(x)]\nminimize E[logistc(y, <x, w>)]\n")
    assert (caught.value.line, caught.value.column) == (3, 12)
    assert "logistc" in str(caught.value) and "logistic" in str(caught.value)
    with pytest.raises(ValueError, match="no parameter|unknown|param"):
        optc.Model(L1_LOGISTIC).set(mu=1.0)
    with pytest.raises(ValueError, match="no parameter|unknown|param"):
        optc.Model(L1_LOGISTIC, lam=0.05, mu=1.0)
    with pytest.raises(FileNotFoundError, match="missing.opt"):
        optc.Model("missing.opt")


def test_bad_data_raises_value_errors_naming_the_row(binary):
    X, y = binary
    model = optc.Model(L1_LOGISTIC)
    bad = X.copy()
    bad.data[bad.indptr[3]] = np.nan
    with pytest.raises(ValueError, match="row 3"):
        model.fit(bad, y)
    with pytest.raises(ValueError, match="labels for"):
        model.fit(X, y[:-1])
    labels = y.copy()
    labels[5] = np.inf
    with pytest.raises(ValueError, match="row 5"):
        model.fit(X, labels)
    # Counted from 0, as every other message about the arrays counts rows.
    labels = np.ones_like(y)
    labels[3], labels[7] = -1.0, 0.5
    with pytest.raises(ValueError, match=r"^row 7: a third distinct label `0.5` \(seen: 1, -1\)"):
        model.fit(X, labels)
    with pytest.raises(ValueError, match="solver"):
        model.fit(X, y, solver="no-such-solver")
    with pytest.raises(ValueError):
        model.fit(np.zeros((2, 2, 2)), y)
    with pytest.raises(ValueError, match="starting weights have 5 entries; this model on this data has 30"):
        model.fit(X, y, init=np.zeros(5))
    # Indices read in place are checked there: an int64 index past 2³² whose low half is a
    # column of the matrix (3) is refused, not read as 3. Each keeps row 4 increasing.
    first, last = X.indptr[4], X.indptr[5] - 1
    for width, at, wrong in [(np.int32, first, -1), (np.int64, first, -1), (np.int64, last, 2**32 + 3)]:
        bad = with_index_width(X, width)
        bad.indices[at] = wrong
        with pytest.raises(ValueError, match=f"row 4, position {at}: column index {wrong} is not in 0..30"):
            model.fit(bad, y)


def test_ctrl_c_ends_a_fit_interrupted_with_its_last_iterate():
    rng = np.random.default_rng(0)
    X = sp.random(20_000, 2_000, density=0.01, format="csr", random_state=1)
    y = np.sign(rng.standard_normal(20_000))
    model = optc.Model(L1_LOGISTIC.replace("0.01", "1e-7"))
    timer = threading.Timer(0.5, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    result = model.fit(X, y, tol=1e-15, epochs=10_000_000, solver="fobos")
    timer.join()
    assert result.status == "interrupted", result.rule
    assert np.isfinite(result.objective) and result.epochs >= 1


def test_a_path_is_optc_paths_from_lambda_max(binary):
    X, y = binary
    model = optc.Model(L1_LOGISTIC)
    path = model.path(X, y, param="lam", steps=8, tol=1e-8)
    assert len(path) == 8 and path.coef_.shape == (8, X.shape[1])
    assert np.all(np.diff(path.values) < 0)
    # λ_max: w = 0 is optimal there (no solve), and just below it a weight moves; it is the
    # largest |∇f(0)| (mean of −y·x/2 for the logistic at w = 0), computed here.
    lam_max = np.abs(X.T @ (-y / 2)).max() / X.shape[0]
    assert abs(path.values[0] - lam_max) <= 1e-12 * lam_max
    assert path.nnz[0] == 0 and path.epochs[0] == 0
    assert path.nnz[-1] > 0 and all(s == "converged" for s in path.status)
    # Each point is the answer of a fit at its value.
    for k in (2, 7):
        alone = optc.Model(L1_LOGISTIC, lam=path.values[k]).fit(X, y, tol=1e-8)
        assert abs(alone.objective - path.objective[k]) <= 1e-7 * alone.objective
    assert np.all(path.gap <= 1e-8 * np.abs(path.objective))
    Xs, ys = read_svmlight(FIXTURES / "sparse_binary.svm")
    warm = model.path(Xs, ys, steps=8, tol=1e-8)
    cold = model.path(Xs, ys, steps=8, tol=1e-8, warm_start=False)
    assert warm.epochs.sum() < cold.epochs.sum(), (warm.epochs, cold.epochs)
    assert np.allclose(warm.objective, cold.objective, rtol=1e-7)
    with pytest.raises(ValueError, match="no parameter"):
        model.path(X, y, param="mu")
