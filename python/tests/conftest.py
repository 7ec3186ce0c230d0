"""Shared pieces of the Python package's tests: the repository's fixtures (tests/fixtures, the
CVXPY + Clarabel optima of tests/fixtures/make.py) read into scipy matrices."""

import json
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp

FIXTURES = pathlib.Path(__file__).resolve().parents[2] / "tests" / "fixtures"


def read_svmlight(path):
    """A LIBSVM file as (CSR matrix, labels), 1-based indices as optc reads them; its own reader
    so the tests need no scikit-learn."""
    labels, indptr, indices, values = [], [0], [], []
    for line in open(path):
        parts = line.split("#")[0].split()
        if not parts:
            continue
        labels.append(float(parts[0]))
        for item in parts[1:]:
            j, v = item.split(":")
            indices.append(int(j) - 1)
            values.append(float(v))
        indptr.append(len(indices))
    width = max(indices) + 1 if indices else 0
    X = sp.csr_matrix((np.array(values), np.array(indices, dtype=np.int32), np.array(indptr)),
                      shape=(len(labels), width))
    return X, np.array(labels)


def optima():
    return json.loads((FIXTURES / "optima.json").read_text())["fixtures"]


@pytest.fixture
def binary():
    return read_svmlight(FIXTURES / "binary.svm")


L1_LOGISTIC = """data x: sparse, y: labels
var w: vec[dim(x)]
param λ = 0.01
minimize E[logistic(y, <x, w>)] + λ·l1(w)
"""
