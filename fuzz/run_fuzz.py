"""Build the fuzz targets, run each for a bounded time, write results/fuzz.md.

    python fuzz/run_fuzz.py --site SITE_PACKAGES --work DIR [--seconds 60] [--targets T ...]

SITE_PACKAGES holds the instrumented `tvm` (ci/instrumented_build.py --fuzz) and `tvm_ffi`.
Each native target is a libFuzzer executable (clang -fsanitize=fuzzer,address,undefined) seeded
from the real artifacts (fuzz/seeds.py); the Python targets (PY_HARNESSES) run under atheris, the
same engine over Python's coverage, with this interpreter.  Each corpus grows in
DIR/corpus/<target> and is kept between runs.  Inputs that crash, hang, exhaust memory or end in
an unclear error are saved under DIR/findings/<target>/ and listed in the report; the run fails
if there is any.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
sys.path.insert(0, str(FUZZ))
sys.path.insert(0, str(ROOT / "ci"))
import instrumented_build  # noqa: E402  (ours, found through the lines above)
import seeds  # noqa: E402

# target -> (harness source, extra compile definitions)
HARNESSES = {
    "library_bin": ("fuzz_library_bin.cc", []),
    "params": ("fuzz_params.cc", []),
    "tensor_cache": ("fuzz_tensor_cache.cc", []),
    "vm_executable": ("fuzz_vm_executable.cc", []),
    "opencl_module": ("fuzz_device_module.cc", ['-DFUZZ_MODULE_KIND="opencl"']),
    "vulkan_module": ("fuzz_device_module.cc", ['-DFUZZ_MODULE_KIND="vulkan"']),
    "cuda_module": ("fuzz_device_module.cc", ['-DFUZZ_MODULE_KIND="cuda"']),
    "webgpu_module": ("fuzz_device_module.cc", ['-DFUZZ_MODULE_KIND="webgpu"']),
    "rocm_module": ("fuzz_device_module.cc", ['-DFUZZ_MODULE_KIND="hip"', '-DFUZZ_BACKEND="rocm"']),
    "cache_entry": ("fuzz_cache_entry.cc", []),
    # External-codegen payloads: the JSON runtimes and the core's const_loader.
    "dnnl_json_module": ("fuzz_json_module.cc", ['-DFUZZ_MODULE_KIND="dnnl_json"', '-DFUZZ_BACKEND="dnnl"']),
    "cublas_json_module": (
        "fuzz_json_module.cc",
        ['-DFUZZ_MODULE_KIND="cublas_json"', '-DFUZZ_BACKEND="cuda"'],
    ),
    "cudnn_json_module": (
        "fuzz_json_module.cc",
        ['-DFUZZ_MODULE_KIND="cudnn_json"', '-DFUZZ_BACKEND="cuda"'],
    ),
    "const_loader_module": ("fuzz_json_module.cc", ['-DFUZZ_MODULE_KIND="const_loader"']),
    # The RPC server's native session (src/core/rpc), one packet body per input.
    "rpc_session": ("fuzz_rpc_session.cc", []),
}
# Python targets (atheris): target -> script; each writes its own seeds (--write-seeds DIR).
PY_HARNESSES = {
    "rpc_packet": "fuzz_rpc_packet.py",
}
# Native targets seeded by a Python harness's seed writer (the same packet bodies).
SEEDED_BY_SCRIPT = {"rpc_session": "fuzz_rpc_packet.py"}
# Per-input limits: a hang or a runaway allocation is a finding too.
LIBFUZZER_FLAGS = ["-timeout=10", "-rss_limit_mb=3072", "-print_final_stats=1"]
NATIVE_FLAGS = ["-malloc_limit_mb=2048"]  # needs the sanitizer's malloc hooks


@dataclass
class Result:
    target: str
    seeds: int
    seconds: float = 0.0
    execs: int = 0
    coverage: int = 0
    features: int = 0
    corpus: int = 0
    findings: list[str] = field(default_factory=list)
    summary: str = ""


def build_harnesses(site: Path, work: Path, targets: list[str]) -> dict[str, Path]:
    _, cxx = instrumented_build.find_clang()
    cc = cxx.replace("clang++", "clang")
    runtime_dir = str(Path(instrumented_build.asan_runtime(cc)).parent)
    ffi_lib = site / "tvm_ffi" / "lib"
    out = work / "bin"
    out.mkdir(parents=True, exist_ok=True)
    flags = [
        "-std=c++17",
        "-O1",
        "-g",
        "-Wall",
        "-Wextra",
        "-Wno-unused-parameter",
        "-fsanitize=fuzzer,address,undefined",
        "-fno-sanitize-recover=undefined",
        "-shared-libasan",
        f"-I{site / 'tvm_ffi' / 'include'}",
        f"-I{ROOT / 'src' / 'include'}",
        f"-L{ffi_lib}",
        "-ltvm_ffi",
        "-ldl",
        f"-Wl,-rpath,{ffi_lib}",
        f"-Wl,-rpath,{runtime_dir}",
    ]
    binaries = {}
    for target in targets:
        if target in PY_HARNESSES:
            continue
        source, defines = HARNESSES[target]
        binary = out / f"fuzz_{target}"
        cmd = [cxx, str(FUZZ / source), *defines, *flags, "-o", str(binary)]
        print("[fuzz] $ " + " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True)
        binaries[target] = binary
    carrier = out / "library_bin_carrier.so"
    subprocess.run(
        [cc, "-shared", "-fPIC", "-O1", str(FUZZ / "library_bin_carrier.c"), "-o", str(carrier)], check=True
    )
    return binaries


def carrier_offset(carrier: Path) -> int:
    """File offset of the carrier's `__tvm_ffi__library_bin` (the harness writes inputs there)."""
    offset, _ = seeds.elf.find_symbol(carrier.read_bytes(), seeds.payloads.LIBRARY_BIN)
    return offset


def run_target(target: str, binary: Path | None, work: Path, seconds: int, env: dict[str, str]) -> Result:
    seed_dir = work / "seeds" / target
    corpus = work / "corpus" / target
    findings = work / "findings" / target
    corpus.mkdir(parents=True, exist_ok=True)
    findings.mkdir(parents=True, exist_ok=True)
    before = set(findings.iterdir())
    result = Result(target, seeds=len(list(seed_dir.glob("*"))))
    log = work / "logs" / f"{target}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    if target in PY_HARNESSES:
        engine = [sys.executable, str(FUZZ / PY_HARNESSES[target])]
        # the interpreter is not instrumented: no sanitizer runtime in it
        env = {k: v for k, v in env.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS")}
    else:
        engine = [str(binary), *NATIVE_FLAGS]
    cmd = [
        *engine,
        str(corpus),
        str(seed_dir),
        f"-max_total_time={seconds}",
        f"-artifact_prefix={findings}/",
        *LIBFUZZER_FLAGS,
    ]
    print(f"[fuzz] {target}: {seconds} s", flush=True)
    start = time.monotonic()
    with log.open("w") as f:
        proc = subprocess.run(cmd, env=env, stdout=f, stderr=subprocess.STDOUT, timeout=seconds + 300)
    result.seconds = time.monotonic() - start
    text = log.read_text(errors="replace")
    if m := re.search(r"stat::number_of_executed_units:\s*(\d+)", text):
        result.execs = int(m.group(1))
    cov_lines = re.findall(r"cov: (\d+) ft: (\d+) corp: (\d+)", text)
    if cov_lines:
        result.coverage, result.features, result.corpus = map(int, cov_lines[-1])
    result.findings = sorted(str(p) for p in set(findings.iterdir()) - before)
    if proc.returncode != 0:
        lines = [
            ln for ln in text.splitlines() if "ERROR:" in ln or "SUMMARY:" in ln or "unclear error" in ln
        ]
        result.summary = "; ".join(lines[:3]) or f"exit code {proc.returncode}: see {log}"
    return result


def write_report(results: list[Result], seconds: int, out: Path, command: str) -> None:
    lines = [
        "# Fuzzing (libFuzzer + ASan + UBSan; atheris for Python targets)",
        "",
        f"Reproduce: `{command}`. {seconds} s per target, one process each, seeds from tests/artifacts.",
        "`cov` = code edges covered (libFuzzer's count, our instrumented DSOs and the harness), "
        "`ft` = coverage features, `corpus` = inputs kept.",
        "",
        "| target | seeds | time (s) | execs | execs/s | cov | ft | corpus | findings |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        rate = r.execs / r.seconds if r.seconds else 0
        lines.append(
            f"| {r.target} | {r.seeds} | {r.seconds:.0f} | {r.execs} | {rate:.0f} | {r.coverage} | "
            f"{r.features} | {r.corpus} | {len(r.findings)} |"
        )
    lines.append("")
    for r in results:
        if r.findings or r.summary:
            lines.append(f"- **{r.target}**: {r.summary} ({', '.join(r.findings) or 'no input saved'})")
    total = sum(r.execs for r in results)
    lines.append(f"Total: {total} inputs executed, {sum(len(r.findings) for r in results)} findings.")
    instrumented_build.write_report(out, lines)


def main() -> int:
    parser = instrumented_build.script_parser(__doc__, "binaries, seeds, corpora, findings, logs")
    parser.add_argument("--site", required=True, type=Path, help="site-packages with the instrumented tvm")
    parser.add_argument("--seconds", type=int, default=60, help="fuzzing time per target")
    every = [*HARNESSES, *PY_HARNESSES]
    parser.add_argument("--targets", nargs="*", default=every, choices=every)
    parser.add_argument("--report", type=Path, default=ROOT / "results" / "fuzz.md")
    args = parser.parse_args()
    work = args.work.resolve()
    binaries = build_harnesses(args.site.resolve(), work, args.targets)
    print("[fuzz] seeds:", seeds.write_seeds(work / "seeds"), flush=True)
    for target in set(args.targets) & {*PY_HARNESSES, *SEEDED_BY_SCRIPT}:
        script = FUZZ / {**PY_HARNESSES, **SEEDED_BY_SCRIPT}[target]
        subprocess.run(
            [sys.executable, str(script), "--write-seeds", str(work / "seeds" / target)], check=True
        )
    cc, _ = instrumented_build.find_clang()
    env = dict(
        os.environ,
        TVMRT_FUZZ_SITE=str(args.site.resolve()),
        TVMRT_FUZZ_ARTIFACTS=str(seeds.ARTIFACTS),
        TVMRT_FUZZ_CARRIER=str(work / "bin" / "library_bin_carrier.so"),
        TVMRT_FUZZ_CARRIER_OFFSET=str(carrier_offset(work / "bin" / "library_bin_carrier.so")),
        **instrumented_build.sanitizer_env(cc, ROOT / "ci" / "sanitizers"),
    )
    results = [run_target(t, binaries.get(t), work, args.seconds, env) for t in args.targets]
    command = "nox -s fuzz -- " + str(args.seconds)
    write_report(results, args.seconds, args.report, command)
    return 1 if any(r.findings or r.summary for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
