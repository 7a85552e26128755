"""The table `nox -s bench` runs: every benchmark, the venvs it runs in and what must run first.

Read by noxfile.py (the `bench` session iterates it) and checked by
tests/packaging/test_bench_table.py; standard library only.  A benchmark is one row: its script
under benchmarks/, the venvs whose interpreters it takes (``--<option>-python``) or the venv it
runs in, extra arguments, and steps before it (making the models it loads).  Each venv is declared
once, below; what the backends' benchmarks need beside the wheels (pyopencl, ...) comes from the
packages' declarations (``bench-requirements`` in ``[tool.tvm-runtime]``, packages/release_train.py).

Arguments may name ``{results}`` (the results folder) and ``{artifacts}`` (tests/artifacts).
Every row writes ``results/<script stem>.json`` and ``.md`` (its ``outputs``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT / "packages"))
import release_train  # noqa: E402

APACHE_TVM = "apache-tvm==0.27.0.post1"
# What apache-tvm's own RPC server and tracker import beyond its declared dependencies.
APACHE_RPC_EXTRAS = ("cloudpickle", "psutil", "tornado")
# The CPU machines here pin these two (a matching pair; PyPI's newest torch would be a CUDA build).
TORCHVISION = ("torch==2.14.1", "torchvision==0.29.1")
# torch.distributed's gloo, the CPU collectives Disco's are measured against (the CPU build).
GLOO_TORCH = "torch==2.13.0"


@dataclass(frozen=True)
class Venv:
    """A venv under .nox/bench-<name>: requirements from the index, then our wheels (``wheels``,
    requirement strings resolved in the wheelhouse only)."""

    name: str
    requirements: tuple[str, ...]
    wheels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Step:
    """A script run before a benchmark, by the python of ``venv`` (e.g. compiling its models)."""

    venv: str
    script: str
    args: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bench:
    """One row: ``nox -s bench -- <name>`` runs every row of that name, in table order."""

    name: str
    script: str
    # --<option>-python -> venv: the script runs in nox's interpreter and starts children there.
    pythons: dict[str, str] = field(default_factory=dict)
    # Or the venv whose python runs the script itself (benchmarks measured in-process).
    runs_in: str | None = None
    args: tuple[str, ...] = ()
    # Arguments added only when the path they name exists (a previous row's output).
    if_exists: tuple[tuple[str, str], ...] = ()
    before: tuple[Step, ...] = ()
    outputs: tuple[str, ...] = ("--out", "{json}", "--markdown", "{markdown}")

    @property
    def venvs(self) -> list[str]:
        named = [*self.pythons.values(), *([self.runs_in] if self.runs_in else [])]
        return [*named, *(s.venv for s in self.before)]


def _tvm_ffi() -> str:
    return release_train.tvm_ffi_requirement()


def venvs() -> dict[str, Venv]:
    """Every venv a benchmark names, declared once."""
    ffi = _tvm_ffi()
    declared = [
        Venv("ours", (ffi, "numpy"), ("tvm",)),
        Venv("apache", (APACHE_TVM, "numpy", *APACHE_RPC_EXTRAS)),
        Venv("floor", (ffi, "numpy")),
        # Every backend, with what tvm[all] pulls from the index and the peers the device
        # benchmarks measure against (bench-requirements of the declarations).
        Venv(
            "ours-all",
            (ffi, "numpy", *release_train.bench_requirements(), *release_train.index_requirements("all")),
            ("tvm[all]",),
        ),
        Venv("ours-extra", (ffi, "numpy"), ("tvm[extra]",)),
        Venv("ours-dnnl", (ffi, "numpy"), ("tvm[dnnl]",)),
        # torch and torchvision live only in this generator venv (apache-tvm compiles the models).
        Venv("models", (APACHE_TVM, "numpy", *TORCHVISION)),
        Venv("gloo", (GLOO_TORCH, "numpy")),
    ]
    return {v.name: v for v in declared}


OURS_VS_APACHE = {"ours": "ours", "apache": "apache"}


def device_benches() -> list[Bench]:
    """One row per backend with a benchmarks/<name>_bench.py: it runs in the venv with every
    backend and its peers and compares in-process (cuda's keeps its own --json)."""
    rows = []
    for package in release_train.backends():
        script = f"{package.name}_bench.py"
        if package.name == "extra" or not (HERE / script).is_file():
            continue
        outputs = ("--json", "{json}") if package.name == "cuda" else Bench.outputs
        rows.append(Bench(package.name, script, runs_in="ours-all", outputs=outputs))
    return rows


TORCHVISION_MODELS = ("resnet10", "resnet18", "resnet50")


def benches() -> list[Bench]:
    """Every row, in the order a full `nox -s bench` runs them (load makes the torchvision models
    that profile then measures too)."""
    return [
        Bench(
            "core",
            "core_bench.py",
            {"ours": "ours", "ours-backends": "ours-all", "floor": "floor", "apache": "apache"},
            args=("--artifact", "{artifacts}/cpu/tiny_add.so", "--npz", "{artifacts}/cpu/tiny_add.npz"),
        ),
        *device_benches(),
        # Fresh processes per first call, cold and warm kernel caches, on PoCL and lavapipe.
        Bench("firstcall", "firstcall_bench.py", runs_in="ours-all"),
        Bench("vm", "vm_bench.py", OURS_VS_APACHE),
        # Real torchvision models (random weights) compiled by apache-tvm 0.27, cached in results/models:
        # the three ResNets (22-103 MB). mobilenet_v3_small and vit_b_16 (347 MB: about an hour of
        # reload cycles and N-process runs on 2 CPUs) are made and measured by hand (--models).
        Bench(
            "load",
            "load_bench.py",
            OURS_VS_APACHE,
            args=(
                "--models-dir",
                "{results}/models",
                "--models",
                *TORCHVISION_MODELS,
                "--rounds",
                "2",
                "--rss-cycles",
                "100",
                "--min-rss-cycles",
                "10",
            ),
            before=(
                Step(
                    "models",
                    "make_torchvision_models.py",
                    ("--out", "{results}/models", "--models", *TORCHVISION_MODELS),
                ),
            ),
        ),
        # Runtime overhead (wall - kernel time) per model with the VM profiler; the torchvision
        # models join when `load` made them.
        Bench(
            "profile",
            "profile_bench.py",
            runs_in="ours-all",
            if_exists=(("--models-dir", "{results}/models"),),
        ),
        Bench("llm", "llm_bench.py", OURS_VS_APACHE),
        Bench("tensor_cache", "tensor_cache_bench.py", OURS_VS_APACHE),
        Bench("extra", "extra_bench.py", {"ours": "ours-extra", "apache": "apache"}),
        Bench("disco", "disco_bench.py", {"ours": "ours-extra", "torch": "gloo"}),
        # The same models with and without the dnnl_json offload, built by apache-tvm 0.27.
        Bench(
            "byoc",
            "byoc_bench.py",
            {"ours": "ours-dnnl", "apache": "apache"},
            args=("--models-dir", "{results}/byoc_models"),
            before=(Step("apache", "make_byoc_models.py", ("--out", "{results}/byoc_models")),),
        ),
        Bench("rpc", "rpc_bench.py", OURS_VS_APACHE),
        Bench("rpc", "rpc_proxy_bench.py", OURS_VS_APACHE),
    ]


def names() -> list[str]:
    """The names `nox -s bench -- NAME ...` accepts, in table order."""
    return list(dict.fromkeys(b.name for b in benches()))


def expand(args: tuple[str, ...], results: Path, script: str) -> list[str]:
    """``args`` with the table's placeholders filled in for one run."""
    stem = Path(script).stem
    values = {
        "results": str(results),
        "artifacts": str(ROOT / "tests" / "artifacts"),
        "json": str(results / f"{stem}.json"),
        "markdown": str(results / f"{stem}.md"),
    }
    return [a.format(**values) for a in args]


def command(bench: Bench, pythons: dict[str, str], results: Path) -> list[str]:
    """The command line of one row, given the interpreter of every venv (``pythons[name]``) and
    ``pythons[""]``, the interpreter that starts children (nox's)."""
    argv = [pythons[bench.runs_in or ""], str(HERE / bench.script)]
    for option, venv in bench.pythons.items():
        argv += [f"--{option}-python", pythons[venv]]
    argv += expand(bench.args, results, bench.script)
    for option, path in bench.if_exists:
        (value,) = expand((path,), results, bench.script)
        if Path(value).exists():
            argv += [option, value]
    return argv + expand(bench.outputs, results, bench.script)
