"""The skip audit itself: unexplained skips and skips over budget fail the run."""

from __future__ import annotations

import json
import re

import skip_audit

from conftest import REPO

CATEGORIES = [
    skip_audit.Category("a GPU", re.compile("no CUDA device"), 2),
    skip_audit.Category("fp16", re.compile("no cl_khr_fp16"), 0),
]


def test_skips_within_budget_pass():
    skips = [("t1", "no CUDA device: driver missing"), ("t2", "no CUDA device")]
    assert skip_audit.audit(skips, CATEGORIES) == []


def test_a_skip_that_is_not_a_missing_machine_feature_fails():
    (problem,) = skip_audit.audit([("t1", "not supported by this core")], CATEGORIES)
    assert "t1" in problem and "not something the machine lacks" in problem


def test_a_category_over_budget_fails():
    skips = [("t1", "no cl_khr_fp16")]
    (problem,) = skip_audit.audit(skips, CATEGORIES)
    assert "budget is 0" in problem and "fp16" in problem


def test_the_repository_budget_parses_and_names_what_is_lacking():
    categories = skip_audit.load_budget(REPO / "tests" / "skip_budget.json")
    assert categories and all(c.lacks and c.budget >= 0 for c in categories)


def test_only_the_known_upstream_bug_may_xfail():
    """conftest.py audits each xfail as "xfail: <reason>": the budget explains the known
    apache-tvm 0.27 OpenCL cumsum bug of the contrib manifest, and nothing else."""
    categories = skip_audit.load_budget(REPO / "tests" / "skip_budget.json")
    manifest = json.loads((REPO / "tests" / "artifacts" / "contrib" / "manifest.json").read_text())
    bugs = [(k, r) for c in manifest["cases"] for k, r in c.get("upstream_bugs", {}).items()]
    assert bugs
    known = [("test_known_upstream_kernel_bugs_still_present", f"xfail: {k}: {r}") for k, r in bugs]
    assert skip_audit.audit(known, categories) == []
    (problem,) = skip_audit.audit([("t", "xfail: something else went wrong")], categories)
    assert "not something the machine lacks" in problem
