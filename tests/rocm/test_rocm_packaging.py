"""The installed tvm-runtime-rocm distribution, beyond what tests/conformance checks of every
backend: it needs no ROCm wheel and the core's extras name it."""

from __future__ import annotations

import importlib.metadata as md

import tvm.backend.rocm as hook


def test_needs_no_rocm_wheel():
    requires = md.distribution("tvm-runtime-rocm").requires or []
    assert [r for r in requires if not r.startswith("tvm-runtime")] == [], requires


def test_core_extras_include_rocm():
    requires = md.distribution("tvm-runtime").requires or []
    assert any(r.startswith("tvm-runtime-rocm==") and 'extra == "rocm"' in r for r in requires)
    assert any(r.startswith("tvm-runtime-rocm==") and 'extra == "all"' in r for r in requires)


def test_hook_api():
    assert callable(hook.register_backend) and callable(hook.detect_target)
