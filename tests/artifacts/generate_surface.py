"""Record apache-tvm 0.27's runtime surface into ``tests/artifacts/surface/apache_tvm_0_27.json``.

Run it, like the other generators beside it, with a Python that has ``apache-tvm==0.27.0.post1``
and the packages apache-tvm's RPC tracker and proxy import (so their modules can be inspected)::

    python3 -m venv /tmp/venv-tvm027
    /tmp/venv-tvm027/bin/pip install apache-tvm==0.27.0.post1 numpy cloudpickle psutil tornado
    /tmp/venv-tvm027/bin/python tests/artifacts/generate_surface.py [--out FILE]

It also needs a C compiler (``cc``): apache-tvm's wheel ships its CUDA runtime
(``libtvm_runtime_cuda.so``), which ``import tvm`` loads only where ``libcuda.so.1`` exists; to
record what it registers on a machine without a CUDA driver, the generator links a stub
``libcuda.so.1`` (every function it needs returns an error; none is called while registering).

What it records (deterministic; ``tests/core/test_runtime_surface.py`` diffs the installed
tvm-runtime against it through ``tests/artifacts/surface/classification.toml``):

* ``globals``: every global function registered in a fresh interpreter after ``import tvm``,
  after loading each of apache-tvm's runtime libraries, and after importing the runtime-side
  Python modules. ``source`` says who registered it: ``tvm_ffi`` (apache-tvm-ffi itself),
  ``tvm`` (``import tvm``: libtvm_runtime, libtvm_compiler and the Python package),
  ``libtvm_runtime_extra.so`` / ``libtvm_runtime_cuda.so`` (loaded by ``import tvm``; the CUDA
  one where a driver exists), ``tvm.backend hooks`` (the in-tree backends' Python hooks) or the
  module whose import registered it. ``type`` is tvm-ffi's type schema of a C++ function as
  ``(args) -> result``; ``python`` names the module and parameters of one registered from Python;
* ``python``: the public names of the runtime-side Python modules (``tvm``, ``tvm.runtime``,
  ``tvm.runtime.vm``, ``tvm.runtime.disco``, ``tvm.rpc``, ``tvm.error``, ``tvm.contrib.tvmjs``,
  ...), one level into their classes (a class seen again under another name is recorded with
  ``alias_of``, its members once), with the parameters ``inspect.signature`` gives where Python
  has them;
* ``error_kinds``: tvm-ffi's map from an error's kind to the Python exception class after
  ``import tvm`` (``tvm.error``'s classes included), with each class's bases;
* ``exec``: the command-line options of every ``python -m tvm.exec.<name>`` script.
"""

from __future__ import annotations

import argparse
import ctypes
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "surface" / "apache_tvm_0_27.json"

# The runtime-side Python modules a deploy script may import, in the order they are inspected.
# Their public names (one level into classes) are recorded; the classification says which ones
# tvm-runtime provides.
PYTHON_MODULES = (
    "tvm",
    "tvm.runtime",
    "tvm.runtime.vm",
    "tvm.runtime.disco",
    "tvm.runtime.params",
    "tvm.runtime.module",
    "tvm.runtime.executable",
    "tvm.runtime.object_generic",
    "tvm.rpc",
    "tvm.rpc.client",
    "tvm.rpc.server",
    "tvm.rpc.tracker",
    "tvm.rpc.proxy",
    "tvm.rpc.base",
    "tvm.rpc.testing",
    "tvm.rpc.minrpc",
    "tvm.error",
    "tvm.contrib.tvmjs",
    "tvm.backend",
    "tvm.backend.loader",
    "tvm.target.detect_target",
)
# The globals a module registers when imported (not at `import tvm`) are recorded with it.
GLOBAL_IMPORTS = PYTHON_MODULES + ("tvm.exec.disco_worker",)
# apache-tvm's runtime libraries that `import tvm` loads beside libtvm_runtime (their backends).
RUNTIME_LIBRARIES = ("libtvm_runtime_extra.so", "libtvm_runtime_cuda.so")
# What libtvm_runtime_cuda.so needs from libcuda.so.1 (`nm -D --undefined-only`).
CUDA_DRIVER_SYMBOLS = (
    "cuDeviceGetName",
    "cuFuncSetAttribute",
    "cuGetErrorName",
    "cuGetErrorString",
    "cuLaunchKernelEx",
    "cuModuleGetFunction",
    "cuModuleLoadData",
    "cuModuleUnload",
    "cuTensorMapEncodeTiled",
)
# Values of these types are recorded as constants (other imported objects are not public API).
CONSTANT_TYPES = (bool, int, float, str)
# Memory addresses in reprs of default values would make the output differ from run to run.
ADDRESS = re.compile(r" at 0x[0-9a-f]+")


# --------------------------------------------------------------------------------------------
# Global functions (collected in a child interpreter: see main)
# --------------------------------------------------------------------------------------------


def _signature(obj: Any) -> list[str] | None:
    """The parameters in Python's notation without annotations (``["self", "n=10", "*",
    "key=None", "**kwargs"]``, ``/`` and ``*`` marking positional-only and keyword-only ones),
    or None where Python has no signature."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    params: list[str] = []
    kinds = inspect.Parameter
    for i, p in enumerate(sig.parameters.values()):
        previous = list(sig.parameters.values())[i - 1].kind if i else None
        if previous == kinds.POSITIONAL_ONLY and p.kind != kinds.POSITIONAL_ONLY:
            params.append("/")
        if p.kind == kinds.KEYWORD_ONLY and previous not in (kinds.KEYWORD_ONLY, kinds.VAR_POSITIONAL):
            params.append("*")
        text = {kinds.VAR_POSITIONAL: "*", kinds.VAR_KEYWORD: "**"}.get(p.kind, "") + p.name
        if p.default is not inspect.Parameter.empty:
            text += "=" + ADDRESS.sub("", repr(p.default))
        params.append(text)
    if params and list(sig.parameters.values())[-1].kind == kinds.POSITIONAL_ONLY:
        params.append("/")
    return params


def _schema_text(schema: dict[str, Any]) -> str:
    """tvm-ffi's type schema of a C++ function as ``(arg, ...) -> result``."""

    def render(t: dict[str, Any]) -> str:
        args = t.get("args")
        return t["type"] + (f"<{', '.join(render(a) for a in args)}>" if args else "")

    args = schema.get("args")
    if schema.get("type") != "ffi.Function" or not args:
        return render(schema)
    return f"({', '.join(render(a) for a in args[1:])}) -> {render(args[0])}"


def _record_python_registrations() -> dict[str, dict[str, Any]]:
    """Wrap tvm_ffi.register_global_func before tvm is imported, so every global registered
    from Python is recorded with its module and signature."""
    import tvm_ffi
    import tvm_ffi.registry

    recorded: dict[str, dict[str, Any]] = {}
    original = tvm_ffi.registry.register_global_func

    def note(name: str, func: Any) -> None:
        entry: dict[str, Any] = {"module": getattr(func, "__module__", None)}
        sig = _signature(func)
        if sig is not None:
            entry["params"] = sig
        recorded[name] = entry

    def register_global_func(func_name: Any, f: Any = None, override: bool = False) -> Any:
        if callable(func_name) and f is None:  # bare decorator: the name is the function's
            note(func_name.__name__, func_name)
            return original(func_name, f, override)
        if f is not None:
            note(func_name, f)
            return original(func_name, f, override)
        register = original(func_name, f, override)

        def decorate(func: Any) -> Any:
            note(func_name, func)
            return register(func)

        return decorate

    tvm_ffi.registry.register_global_func = register_global_func
    tvm_ffi.register_global_func = register_global_func
    return recorded


def collect_globals() -> dict[str, Any]:
    """Runs in the child: every global function name and where it came from."""
    python_registered = _record_python_registrations()
    import tvm_ffi

    def names() -> set[str]:
        return set(tvm_ffi.registry.list_global_func_names())

    sources: dict[str, str] = {}

    def note(source: str, before: set[str]) -> set[str]:
        now = names()
        for name in now - before:
            sources[name] = source
        return now

    seen = note("tvm_ffi", set())
    import tvm  # noqa: F401  (TVM_DEVICE_BACKEND_AUTOLOAD=0: the libraries come next)

    seen = note("tvm", seen)
    lib_dir = Path(tvm.__file__).resolve().parent / "lib"
    for lib in RUNTIME_LIBRARIES:
        # RTLD_LOCAL, as apache-tvm's own backend autoload does.
        ctypes.CDLL(str(lib_dir / lib), mode=os.RTLD_LOCAL)
        seen = note(lib, seen)
    from tvm.backend import _autoload_backends

    _autoload_backends._load_builtin_backends()
    seen = note("tvm.backend hooks", seen)
    for module in GLOBAL_IMPORTS:
        importlib.import_module(module)
        seen = note(module, seen)

    metadata = tvm_ffi.get_global_func("ffi.GetGlobalFuncMetadata")
    result: dict[str, Any] = {}
    for name in sorted(seen):
        entry: dict[str, Any] = {"source": sources[name]}
        meta = metadata(name)
        if meta:
            schema = json.loads(str(meta)).get("type_schema")
            if schema:
                entry["type"] = _schema_text(json.loads(schema))
        if name in python_registered:
            entry["python"] = python_registered[name]
        result[name] = entry
    return result


# --------------------------------------------------------------------------------------------
# Python names
# --------------------------------------------------------------------------------------------


def _defined_by_tvm(obj: Any) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return module == "tvm" or module.startswith(("tvm.", "tvm_ffi"))


def _describe(obj: Any) -> dict[str, Any]:
    if inspect.isclass(obj):
        entry: dict[str, Any] = {"kind": "class", "bases": [_qualname(b) for b in obj.__bases__]}
    elif inspect.ismodule(obj):
        return {"kind": "module"}
    elif callable(obj):
        entry = {"kind": "function"}
    else:
        return {"kind": "constant", "type": type(obj).__name__}
    sig = _signature(obj)
    if sig is not None:
        entry["params"] = sig
    return entry


def _qualname(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _class_members(cls: type) -> dict[str, dict[str, Any]]:
    """Public members a class defines or inherits from tvm's classes (not from object or a
    builtin exception)."""
    members: dict[str, dict[str, Any]] = {}
    for name in sorted(dir(cls)):
        if name.startswith("_"):
            continue
        owner = next((k for k in cls.__mro__ if name in vars(k)), None)
        if owner is None or not _defined_by_tvm(owner):
            continue
        raw = vars(owner)[name]
        if isinstance(raw, property):
            members[name] = {"kind": "property"}
        elif isinstance(raw, (staticmethod, classmethod)):
            kind = "staticmethod" if isinstance(raw, staticmethod) else "classmethod"
            members[name] = {"kind": kind, **_signature_entry(getattr(cls, name))}
        elif inspect.isfunction(raw) or inspect.ismethoddescriptor(raw) or callable(raw):
            members[name] = {"kind": "method", **_signature_entry(raw)}
        else:
            members[name] = {"kind": "attribute", "type": type(raw).__name__}
    return members


def _signature_entry(obj: Any) -> dict[str, Any]:
    sig = _signature(obj)
    return {"params": sig} if sig is not None else {}


def _public_names() -> list[tuple[str, Any]]:
    """(qualified name, object) of every public name of PYTHON_MODULES, in order."""
    found: list[tuple[str, Any]] = []
    for module_name in PYTHON_MODULES:
        module = importlib.import_module(module_name)
        found.append((module_name, module))
        for name in sorted(dir(module)):
            if name.startswith("_"):
                continue
            obj = getattr(module, name)
            qualified = f"{module_name}.{name}"
            if inspect.ismodule(obj):
                # A submodule of this module is public API; a module it merely imported is not.
                if obj.__name__ == qualified:
                    found.append((qualified, obj))
                continue
            if _defined_by_tvm(obj) or isinstance(obj, CONSTANT_TYPES):
                found.append((qualified, obj))
    return found


def collect_python() -> dict[str, Any]:
    """Every public name of PYTHON_MODULES, classes one level deep, keyed by qualified name."""
    found = _public_names()
    # A class seen under several names is described (members included) once, under the name of
    # the module that defines it when that one is recorded, else under the first name.
    homes: dict[int, str] = {}
    for qualified, obj in found:
        if inspect.isclass(obj):
            defining = f"{obj.__module__}.{obj.__name__}" == qualified
            if defining or id(obj) not in homes:
                homes[id(obj)] = qualified if defining else homes.get(id(obj), qualified)
    out: dict[str, Any] = {}
    for qualified, obj in found:
        entry = _describe(obj)
        if entry["kind"] == "class" and homes[id(obj)] != qualified:
            entry["alias_of"] = homes[id(obj)]
        out[qualified] = entry
        if entry["kind"] == "class" and "alias_of" not in entry:
            for member, info in _class_members(obj).items():
                out[f"{qualified}.{member}"] = info
    return out


def collect_error_kinds() -> dict[str, Any]:
    """tvm-ffi's kind -> exception class map after `import tvm` (tvm.error registers its
    classes there), with each class's bases."""
    from tvm_ffi import core

    import tvm  # noqa: F401

    out = {}
    for kind, cls in sorted(core.ERROR_NAME_TO_TYPE.items()):
        out[kind] = {"class": _qualname(cls), "bases": [_qualname(b) for b in cls.__bases__]}
    return out


def collect_exec_options() -> dict[str, Any]:
    """The options each `python -m tvm.exec.<name>` script accepts (from its --help)."""
    import tvm.exec

    out = {}
    for path in sorted(Path(tvm.exec.__file__).parent.glob("*.py")):
        if path.name == "__init__.py":
            continue
        name = f"tvm.exec.{path.stem}"
        proc = subprocess.run(
            [sys.executable, "-m", name, "--help"], capture_output=True, text=True, timeout=120
        )
        text = proc.stdout + proc.stderr
        if text.startswith("Usage: <"):
            # A worker started by another program with positional file descriptors etc.
            out[name] = {"usage": text.strip()}
        elif proc.returncode == 0:
            out[name] = {"options": sorted(set(re.findall(r"(?<![\w-])--[a-z][a-z0-9_-]*", text)))}
        else:
            out[name] = {"fails": text.strip().splitlines()[-1]}
    return out


# --------------------------------------------------------------------------------------------
# Driver
# --------------------------------------------------------------------------------------------


def _stub_cuda_driver(directory: Path) -> None:
    source = directory / "stub_cuda.c"
    source.write_text("".join(f"int {sym}(void) {{ return 999; }}\n" for sym in CUDA_DRIVER_SYMBOLS))
    cmd = ["cc", "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", str(directory / "libcuda.so.1")]
    subprocess.run([*cmd, str(source)], check=True)


def _child(mode: str) -> Any:
    if mode == "globals":
        return collect_globals()
    if mode == "python":
        return collect_python()
    if mode == "errors":
        return collect_error_kinds()
    raise ValueError(mode)


def _run_child(mode: str, env: dict[str, str]) -> Any:
    proc = subprocess.run(
        [sys.executable, __file__, "--child", mode],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )
    if proc.returncode != 0:
        raise SystemExit(f"collecting {mode} failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def dump(reference: dict[str, Any]) -> str:
    """JSON with one line per recorded name, so a regenerated file diffs name by name."""
    lines = ["{"]
    keys = sorted(reference)
    for i, key in enumerate(keys):
        value = reference[key]
        comma = "," if i + 1 < len(keys) else ""
        if not isinstance(value, dict):
            lines.append(f" {json.dumps(key)}: {json.dumps(value)}{comma}")
            continue
        lines.append(f" {json.dumps(key)}: {{")
        names = sorted(value)
        for j, name in enumerate(names):
            inner = "," if j + 1 < len(names) else ""
            entry = json.dumps(value[name], sort_keys=True, separators=(",", ":"))
            lines.append(f"  {json.dumps(name)}: {entry}{inner}")
        lines.append(f" }}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        result = _child(args.child)
        sys.stdout.write(json.dumps(result))
        return

    import tvm_ffi

    import tvm

    with tempfile.TemporaryDirectory() as tmp:
        _stub_cuda_driver(Path(tmp))
        # The libraries are loaded one at a time by collect_globals, to know who registered what.
        env = {"TVM_DEVICE_BACKEND_AUTOLOAD": "0", "LD_LIBRARY_PATH": tmp}
        globals_ = _run_child("globals", env)
    reference = {
        "schema_version": 1,
        "generator": "tests/artifacts/generate_surface.py",
        "tvm_version": tvm.__version__,
        "tvm_ffi_version": tvm_ffi.__version__,
        "globals": globals_,
        "python": _run_child("python", {}),
        "error_kinds": _run_child("errors", {}),
        "exec": collect_exec_options(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(dump(reference))
    print(f"wrote {args.out}: {len(globals_)} globals, {len(reference['python'])} Python names")


if __name__ == "__main__":
    main()
