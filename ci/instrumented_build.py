"""Build the core and the backends with sanitizers (and optionally libFuzzer coverage) into a venv.

    python ci/instrumented_build.py --python VENV/bin/python --work DIR [--fuzz] [--only DIST...]

Used by `nox -s sanitize` (ASan + UBSan) and `nox -s fuzz` (the same plus
`-fsanitize=fuzzer-no-link`, so libFuzzer sees the coverage of our DSOs).  It compiles with the
host's clang (Debian `clang`), not the release toolchain: these builds are never shipped.  Each
distribution is pip-installed from its package folder without build isolation, so the backends
build against the instrumented core just installed, exactly as the release build does with the
real one.  The sanitizer runtime is linked as a shared library (`-shared-libasan`): the Python
interpreter that loads our DSOs must preload it (see `sanitizer_env()`).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packages"))
import release_train  # noqa: E402  (the repository's own module, found through the line above)

SANITIZERS = "address,undefined"
# UBSan findings stop the process like ASan's do: a report that scrolls by is a report missed.
COMPILE_FLAGS = [
    f"-fsanitize={SANITIZERS}",
    "-fno-sanitize-recover=undefined",
    "-fno-omit-frame-pointer",
    "-g",
]
LINK_FLAGS = [f"-fsanitize={SANITIZERS}", "-shared-libasan"]
FUZZ_FLAG = "-fsanitize=fuzzer-no-link"


def find_clang() -> tuple[str, str]:
    """(clang, clang++) of the host: $TVMRT_CLANG (e.g. clang-14) if set, else plain `clang`
    (Debian's default), else the newest versioned one whose ASan and libFuzzer runtimes are
    installed.  Every DSO and harness of one build must use the same one."""
    wanted = os.environ.get("TVMRT_CLANG")
    names = [wanted] if wanted else ["clang", *(f"clang-{v}" for v in range(21, 13, -1))]
    for name in names:
        cc, cxx = shutil.which(name), shutil.which(name.replace("clang", "clang++", 1))
        if cc and cxx and (wanted or _has_runtimes(cc)):
            return cc, cxx
    raise SystemExit("no clang with its sanitizer runtimes: apt-get install clang libclang-rt-dev")


def _has_runtimes(clang: str) -> bool:
    for lib in ("libclang_rt.asan-x86_64.so", "libclang_rt.fuzzer-x86_64.a"):
        out = subprocess.run([clang, f"-print-file-name={lib}"], capture_output=True, text=True).stdout
        if not os.path.isfile(out.strip()):
            return False
    return True


def asan_runtime(clang: str) -> str:
    """Path of clang's shared ASan runtime (it contains UBSan's handlers too)."""
    out = subprocess.run(
        [clang, "-print-file-name=libclang_rt.asan-x86_64.so"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if not os.path.isfile(out):
        raise SystemExit(f"{clang} has no shared ASan runtime ({out}): apt-get install libclang-rt-dev")
    return out


def find_symbolizer(clang: str) -> str | None:
    """llvm-symbolizer (any version reads our DWARF): next to clang, on PATH, or Debian's."""
    candidates = [Path(os.path.realpath(clang)).parent / "llvm-symbolizer"]
    candidates += [Path(p) for p in [shutil.which("llvm-symbolizer")] if p]
    candidates += sorted(Path("/usr/lib").glob("llvm-*/bin/llvm-symbolizer"), reverse=True)
    return next((str(c) for c in candidates if c.is_file()), None)


def sanitizer_env(clang: str, suppressions_dir: Path, halt_on_error: bool = True) -> dict[str, str]:
    """Environment for running uninstrumented Python over the instrumented DSOs."""
    halt = "1" if halt_on_error else "0"
    symbolizer = find_symbolizer(clang)
    return {
        **({"ASAN_SYMBOLIZER_PATH": symbolizer} if symbolizer else {}),
        "LD_PRELOAD": asan_runtime(clang),
        # Leaks belong to the leak session (and CPython leaks by design at exit); the allocator
        # returns NULL on absurd sizes so our code's own bad_alloc handling is what gets tested.
        "ASAN_OPTIONS": ":".join(
            [
                f"halt_on_error={halt}",
                "detect_leaks=0",
                "allocator_may_return_null=1",
                "detect_odr_violation=0",
                "handle_segv=1",
                "abort_on_error=0",
            ]
        ),
        "UBSAN_OPTIONS": ":".join(
            [
                f"halt_on_error={halt}",
                "print_stacktrace=1",
                f"suppressions={suppressions_dir / 'ubsan.supp'}",
            ]
        ),
    }


def build(python: str, work: Path, fuzz: bool, only: list[str]) -> None:
    cc, cxx = find_clang()
    compile_flags = [*COMPILE_FLAGS, *([FUZZ_FLAG] if fuzz else [])]
    env = dict(
        os.environ,
        CC=cc,
        CXX=cxx,
        CXXFLAGS=" ".join(compile_flags),
        LDFLAGS=" ".join(LINK_FLAGS),
        CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", "2"),
    )
    dists = [release_train.core(), *release_train.backends()]
    for dist in dists:
        if only and dist.distribution not in only:
            continue
        build_dir = work / "build" / dist.distribution
        cmd = [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-build-isolation",
            "--no-deps",
            "--force-reinstall",
            # Unstripped, so sanitizer reports name our functions and lines.
            *("-C", "install.strip=false"),
            "-C",
            f"build-dir={build_dir}",
            str(dist.directory),
        ]
        print("[instrumented_build] $ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, env=env)


def script_parser(doc: str, work_help: str, python_help: str | None = None) -> argparse.ArgumentParser:
    """The command line every instrumented-run script starts from (this one, ci/sanitized_tests.py,
    fuzz/run_fuzz.py): the module docstring as help, ``--work``, and ``--python`` where it runs one."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    if python_help:
        parser.add_argument("--python", default=sys.executable, help=python_help)
    parser.add_argument("--work", required=True, type=Path, help=work_help)
    return parser


def write_report(report: Path, lines: list[str]) -> None:
    """Write a Markdown report (and show it)."""
    report.parent.mkdir(parents=True, exist_ok=True)
    report.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


def main() -> None:
    parser = script_parser(
        __doc__, "build trees go under WORK/build", "the venv's python (has scikit-build-core, tvm-ffi)"
    )
    parser.add_argument("--fuzz", action="store_true", help="add libFuzzer coverage instrumentation")
    parser.add_argument("--only", nargs="*", default=[], help="distribution names to (re)build")
    args = parser.parse_args()
    build(args.python, args.work.resolve(), args.fuzz, args.only)


if __name__ == "__main__":
    main()
