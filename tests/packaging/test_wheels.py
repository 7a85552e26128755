"""The wheelhouse built by `nox -s build` follows the packaging rules (ci/check_wheels.py)."""

from __future__ import annotations

import importlib.metadata as md
import os
import sys
from pathlib import Path

import pytest

from conftest import REPO

WHEELHOUSE = os.environ.get("TVM_WHEELHOUSE")
pytestmark = pytest.mark.skipif(not WHEELHOUSE, reason="TVM_WHEELHOUSE unset: run through `nox -s tests`")


def test_wheelhouse_rules():
    sys.path.insert(0, str(REPO / "ci"))
    from check_wheels import check

    assert check(Path(WHEELHOUSE)) == []


def test_installed_distributions_are_ours():
    # The meta-package came from our wheelhouse, not PyPI's unrelated `tvm`.
    meta = md.distribution("tvm")
    assert meta.version == "0.1.0"
    assert "tvm-runtime==0.1.0" in (meta.requires or [])
    assert md.version("tvm-runtime") == "0.1.0"
    import tvm

    assert Path(tvm.__file__).parent == Path(md.distribution("tvm-runtime").locate_file("tvm"))
