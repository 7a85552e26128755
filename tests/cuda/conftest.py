"""Fixtures of the CUDA tests that compile with NVRTC."""

from __future__ import annotations

import pytest
from cuda_support import nvrtc_or_skip


@pytest.fixture(scope="module")
def nvrtc():
    """The NVRTC the runtime would use (a skip naming what to install without one)."""
    return nvrtc_or_skip()


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    """A fresh, empty compile cache for one test."""
    monkeypatch.setenv("TVM_CUDA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("TVM_CUDA_CACHE_DISABLE", raising=False)
    return tmp_path / "cache"
