"""Run the test suite over the ASan + UBSan build (ci/instrumented_build.py) and write a report.

    python ci/sanitized_tests.py --python VENV/bin/python --work DIR [--report results/sanitize.md]
        [PYTEST_ARGS...]

The venv's Python is not instrumented: the sanitizer runtime is preloaded (LD_PRELOAD, inherited
by every interpreter the tests start), `halt_on_error=1` ends a process at its first report, and
every report is also written under DIR/reports (ASan's and UBSan's `log_path`), so one hidden in a
subprocess a test expected to fail is still counted.  Suppressions (ci/sanitizers/) cover only
code outside this repository.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "ci"))
import instrumented_build  # noqa: E402  (ours, found through the line above)

SUPPRESSIONS = ROOT / "ci" / "sanitizers"
# Not run under the sanitizers, and why (everything else in tests/ is).
EXCLUDED = {
    "tests/packaging": "builds and inspects the release wheels (zig toolchain), no runtime C++ runs",
    "tests/release": "builds wheels of two versions and pip-installs them: packaging, not runtime",
}
DESELECTED = {
    "tests/core/test_module_lifetime.py::test_reload_cycles_hold_rss_flat": "RSS bounds: ASan keeps "
    "freed memory in its quarantine, so RSS grows by design (the leak tests measure it unsanitized)",
    "tests/core/test_module_lifetime.py::test_device_cycles_hold_rss_flat": "the same",
}


# Reports from code outside this repository that no suppressions file can match (ASan-internal
# CHECKs): listed, with the reason, but not counted as findings.
KNOWN_EXTERNAL = {
    '"unable to unmap"': "PoCL: a thread that created an OpenCL context trips this ASan CHECK when "
    "it exits; reproduced with ctypes and PoCL alone (ci/sanitizers/pocl_thread_exit_repro.py)",
}
# Tests whose child process such a report ends (exit code 1): not run under the sanitizers.
DESELECTED_EXTERNAL = {
    "tests/faults/test_fault_threads.py::test_first_use_from_many_threads[opencl": "PoCL thread-exit CHECK",
    "tests/faults/test_fault_threads.py::test_one_vm_shared_by_threads[opencl]": "PoCL thread-exit CHECK",
    "tests/faults/test_fault_threads.py::test_concurrent_loads_and_kernel_calls[opencl]": "PoCL thread-exit "
    "CHECK",
}


def _known_external(report: Path) -> str:
    text = report.read_text(errors="replace")
    return next((why for sign, why in KNOWN_EXTERNAL.items() if sign in text), "")


def _vendor_library_dirs(python: str) -> list[str]:
    """The pip-installed NVIDIA library folders of the test venv.  NVRTC opens its builtins
    library through its own $ORIGIN RUNPATH, which ASan's dlopen interceptor defeats (the
    caller becomes the sanitizer runtime): those folders go on LD_LIBRARY_PATH instead."""
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    site = Path(
        subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    )
    return sorted(str(p) for p in site.glob("nvidia/**/lib") if p.is_dir())


def run(python: str, work: Path, report: Path, pytest_args: list[str]) -> int:
    reports = work / "reports"
    reports.mkdir(parents=True, exist_ok=True)
    for old in reports.iterdir():
        old.unlink()
    cc, _ = instrumented_build.find_clang()
    env = dict(os.environ, **instrumented_build.sanitizer_env(cc, SUPPRESSIONS))
    env["ASAN_OPTIONS"] += f":log_path={reports / 'asan'}:suppressions={SUPPRESSIONS / 'asan.supp'}"
    env["UBSAN_OPTIONS"] += f":log_path={reports / 'ubsan'}"
    library_path = [*_vendor_library_dirs(python), env.get("LD_LIBRARY_PATH", "")]
    env.update(
        LD_LIBRARY_PATH=os.pathsep.join(p for p in library_path if p),
        TVM_REPO_ROOT=str(ROOT),
        TVM_TEST_REQUIRE_OPENCL="1",
        TVM_TEST_REQUIRE_NVRTC="1",
        # One worker thread keeps the run within the 2 cores it shares with everything else.
        TVM_NUM_THREADS=env.get("TVM_NUM_THREADS", "2"),
    )
    targets = pytest_args or [str(ROOT / "tests")]
    ignores = [f"--ignore={ROOT / path}" for path in EXCLUDED]
    ignores += [f"--deselect={node}" for node in {**DESELECTED, **DESELECTED_EXTERNAL}]
    cache = ["-o", f"cache_dir={work / 'pytest_cache'}"]
    cmd = [python, "-m", "pytest", "-q", "-rfEs", *cache, *ignores, *targets]
    print("[sanitize] $ " + " ".join(cmd), flush=True)
    start = time.monotonic()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True)
    seconds = time.monotonic() - start
    log = work / "pytest.log"
    log.write_text(proc.stdout + proc.stderr)
    print(proc.stdout[-6000:], proc.stderr[-3000:], sep="\n")
    findings = sorted(p for p in reports.iterdir() if _is_finding(p))
    external = sorted(p for p in reports.iterdir() if _known_external(p))
    write_report(report, proc, seconds, findings, external, targets, log)
    return 0 if proc.returncode == 0 and not findings else 1


def _is_finding(report: Path) -> bool:
    """A sanitizer log that reports an error (logs also hold warnings, e.g. ASan declining an
    absurd allocation that our code then turns into a clean out-of-memory error)."""
    text = report.read_text(errors="replace")
    if _known_external(report):
        return False
    return "ERROR:" in text or "runtime error:" in text or "CHECK failed" in text


def _relative(target: str) -> str:
    path = Path(target)
    return str(path.relative_to(ROOT)) if path.is_absolute() and path.is_relative_to(ROOT) else target


def _summary(text: str) -> str:
    lines = [ln.strip("= ") for ln in text.splitlines() if re.search(r"\d+ (passed|failed|error)", ln)]
    return lines[-1] if lines else "no pytest summary (the run was killed: see the log)"


def write_report(
    report: Path,
    proc: subprocess.CompletedProcess,
    seconds: float,
    findings: list[Path],
    external: list[Path],
    targets: list[str],
    log: Path,
) -> None:
    lines = [
        "# Sanitizers (ASan + UBSan)",
        "",
        "Reproduce: `nox -s sanitize` (core and every backend built with clang "
        f"`{' '.join(instrumented_build.COMPILE_FLAGS)}`, the runtime preloaded into the test "
        "interpreters, `halt_on_error=1`, leaks left to the leak session).",
        "",
        f"- tests: {' '.join(_relative(t) for t in targets)}",
        *[
            f"- not run: `{path}`: {why}"
            for path, why in {**EXCLUDED, **DESELECTED, **DESELECTED_EXTERNAL}.items()
        ],
        f"- pytest: {_summary(proc.stdout)} (exit code {proc.returncode}), wall time {seconds:.0f} s",
        f"- sanitizer reports: {len(findings)}",
    ]
    for path in findings:
        text = path.read_text(errors="replace")
        first = next((ln for ln in text.splitlines() if "ERROR" in ln or "runtime error" in ln), text[:200])
        lines.append(f"  - `{path.name}`: {first.strip()}")
    lines.append(f"- reports from code outside this repository (not counted): {len(external)}")
    for why in sorted({_known_external(p) for p in external}):
        lines.append(f"  - {why}")
    lines.append(f"- full log: `{log}`")
    instrumented_build.write_report(report, lines)


def main() -> int:
    parser = instrumented_build.script_parser(
        __doc__, "logs and sanitizer reports", "the venv's python with the instrumented build"
    )
    parser.add_argument("--report", type=Path, default=ROOT / "results" / "sanitize.md")
    args, pytest_args = parser.parse_known_args()
    return run(args.python, args.work.resolve(), args.report, pytest_args)


if __name__ == "__main__":
    sys.exit(main())
