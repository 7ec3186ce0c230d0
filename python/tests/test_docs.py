"""docs/python.md's walkthrough, run: every ```python block in order, in one namespace, from a
scratch directory that sees the repository's examples/ (the figure it saves lands there)."""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]

pytest.importorskip("sklearn")
pytest.importorskip("matplotlib")


def test_every_block_of_the_python_page_runs(tmp_path, monkeypatch):
    page = (ROOT / "docs" / "python.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", page, flags=re.S)
    assert len(blocks) >= 5
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "docs_python"}
    for k, block in enumerate(blocks):
        exec(compile(block, f"docs/python.md block {k + 1}", "exec"), namespace)
    assert (tmp_path / "a9a_path.png").stat().st_size > 10_000
