"""The prepared GPU check's own logic (ci/gpu_check), on real pytest runs: the counts and reasons
it reads back from junit files and from a verbose log cut short by a time limit, the one-page
summary it writes, and a test selection that names only paths that exist.  The whole check runs
in `nox -s gpu-check` (on the fake driver here, on a GPU where one is lent)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from conftest import REPO

sys.path.insert(0, str(REPO / "ci" / "gpu_check"))
import phases  # noqa: E402
import run as gpu_check  # noqa: E402
import summary  # noqa: E402

SAMPLE = textwrap.dedent(
    """
    import pytest

    def test_ok():
        assert 1 + 1 == 2

    def test_broken():
        assert [1, 2] == [1, 3], "the device gave the wrong answer"

    def test_no_device():
        pytest.skip("no CUDA device: CUDA_ERROR_NO_DEVICE")

    @pytest.mark.parametrize("n", [1, 2])
    def test_more_skips(n):
        pytest.skip("no CUDA device: CUDA_ERROR_NO_DEVICE")
    """
)


def _pytest(tmp_path, *extra: str) -> tuple:
    test = tmp_path / "test_sample.py"
    test.write_text(SAMPLE)
    log = tmp_path / "log.txt"
    with open(log, "w") as sink:
        subprocess.run(
            [sys.executable, "-m", "pytest", str(test), "-v", "-p", "no:cacheprovider", *extra],
            stdout=sink,
            stderr=subprocess.STDOUT,
            cwd=tmp_path,
            timeout=120,
        )
    return tmp_path / "junit.xml", log


def test_counts_and_reasons_from_junit(tmp_path):
    xml, log = _pytest(tmp_path, "--junitxml", str(tmp_path / "junit.xml"))
    got = gpu_check.parse_pytest(xml, log)
    assert (got["passed"], got["failed"], got["skipped"]) == (1, 1, 3)
    assert [f["test"] for f in got["failures"]] == ["test_sample::test_broken"]
    assert "the device gave the wrong answer" in got["failures"][0]["message"]
    assert got["skips"] == {"no CUDA device: CUDA_ERROR_NO_DEVICE": 3}
    assert "note" not in got


def test_counts_from_the_verbose_log_when_stopped_early(tmp_path):
    xml, log = _pytest(tmp_path)  # no junit file: as when the phase hit its time limit
    got = gpu_check.parse_pytest(xml, log)
    assert (got["passed"], got["failed"], got["skipped"]) == (1, 1, 3)
    assert got["failures"][0]["test"].endswith("test_sample.py::test_broken")
    assert "time limit" in got["note"]


def test_summary_page(tmp_path):
    xml, log = _pytest(tmp_path, "--junitxml", str(tmp_path / "junit.xml"))
    results = {
        "mode": "GPU",
        "seconds": 412.5,
        "machine": {"gpus": ["NVIDIA H200, 580.159.04, 9.0, 143771 MiB"], "python": "3.12.3", "cpus": 16},
        "phases": {
            "install": {"rc": 0, "apache_rc": 0},
            "loaders": {"root": "/", "unpacked": ["libvulkan1"], "vulkan": "VK_DRIVER_FILES -> NVIDIA's ICD"},
            "pytest-cuda": {"rc": 1, "seconds": 80.0, **gpu_check.parse_pytest(xml, log)},
            "bench-cuda": {
                "rc": 0,
                "seconds": 60.0,
                "report": {
                    "results": {
                        "tvm-runtime": {"launch": {"median": 9.61}, "mlp": {"median": 30.0}},
                        "apache-tvm": {"launch": {"median": 9.9}, "mlp": {"median": 33.0}},
                        "cupy": {"launch+sync": {"median": 15.2}},
                    },
                    "ratio_ours_over_apache_tvm": {
                        "launch": 0.971,
                        "mlp": 0.909,
                        "launch+sync vs cupy": 0.61,
                    },
                    "runtimes": {"apache-tvm": {"runtime": "0.27.0.post1", "device": "NVIDIA H200"}},
                    "notes": {},
                },
            },
        },
    }
    backends = tmp_path / "backends.txt"
    backends.write_text("backend  status\ncuda     ok\n")
    page = tmp_path / "summary.md"
    summary.write_summary(results, page, backends)
    text = page.read_text()
    assert text.startswith("# Prepared GPU check (GPU): 412.5 s")
    assert "NVIDIA H200, 580.159.04" in text
    assert "### pytest cuda: 1 passed, 1 failed, 3 skipped" in text
    assert "- FAILED `test_sample::test_broken`" in text
    assert "- skipped ×3: no CUDA device: CUDA_ERROR_NO_DEVICE" in text
    assert "| launch | 9.6 | 9.9 | - | 0.971 |" in text
    assert "| launch+sync | - | - | 15.2 | - |" in text
    assert "- ratio launch+sync vs cupy: 0.61" in text
    assert "cuda     ok" in text and "VK_DRIVER_FILES" in text


def test_selection_names_existing_paths_and_fits_the_command_limit():
    for path in (*phases.CUDA_TESTS, *phases.OTHER_GPU_TESTS):
        assert (REPO / path.split("::")[0]).exists(), path
    # The device tool stops one command at 10 minutes; installation and probing need under one.
    assert sum(phases.PHASE_SECONDS.values()) <= 8 * 60
