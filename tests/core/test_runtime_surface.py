"""The installed tvm-runtime against apache-tvm 0.27's whole runtime surface.

tests/artifacts/surface/apache_tvm_0_27.json records every global function, every public name of
the runtime-side Python modules, tvm-ffi's error kinds and the ``tvm.exec`` scripts of apache-tvm
0.27 (tests/artifacts/generate_surface.py); classification.toml beside it says how tvm-runtime
treats each.  Any difference the classification does not explain fails here (the logic is
tests/runtime_surface.py, which also prints the README's coverage figure).
"""

from __future__ import annotations

import pytest
import runtime_surface as surface


@pytest.fixture(scope="module")
def report() -> surface.Report:
    return surface.run()


def problems(report: surface.Report, section: str) -> list[str]:
    return [p for p in report.problems if p.startswith(f"[{section}]")]


def test_every_name_is_classified_by_a_live_rule():
    report = surface.classify(surface.load_reference(), surface.load_rules())
    assert not report.problems, "\n".join(report.problems)
    assert report.status_of["global"]["relax.run.unique"].status == surface.PROVIDED
    assert report.status_of["global"]["relax.transform.LegalizeOps"].status == "compiler-only"


@pytest.mark.parametrize("section", surface.SECTIONS)
def test_installed_runtime_has_every_provided_name(report, section):
    found = problems(report, section)
    assert not found, "\n".join(found)


def test_readme_states_the_coverage_figure(report):
    assert not [p for p in report.problems if p.startswith("README")], report.figure_text()
    provided, reachable, _ = report.figure()
    assert 0 < provided <= reachable


def test_signature_check_catches_incompatible_calls():
    """The signature comparison itself: what a 0.27 call needs, ours must accept."""
    ref = surface.parse_params(["self", "func_name", "dev", "number=10", "*", "key=None"])
    ok = surface.our_params(lambda self, func_name, dev, number=10, key=None, extra=1: None)
    assert surface.incompatibilities(ref, ok) == []
    renamed = surface.our_params(lambda self, name, dev, number=10, key=None: None)
    assert surface.incompatibilities(ref, renamed) == ["parameter #1 is 'name', 0.27 calls it 'func_name'"]
    stricter = surface.our_params(lambda self, func_name, dev, number, key=None, flag=None: None)
    assert surface.incompatibilities(ref, stricter) == ["'number' is required, 0.27's 'number' has a default"]
    no_key = surface.our_params(lambda self, func_name, dev, number=10: None)
    assert surface.incompatibilities(ref, no_key) == ["no keyword parameter 'key'"]
