"""apache-tvm 0.27's runtime surface against the installed tvm-runtime.

The reference (``tests/artifacts/surface/apache_tvm_0_27.json``, written by
``tests/artifacts/generate_surface.py`` in an apache-tvm venv) lists every global function, every
public name of the runtime-side Python modules, tvm-ffi's error kinds and the ``tvm.exec``
scripts' options.  ``tests/artifacts/surface/classification.toml`` says how tvm-runtime treats
each one; this module applies it to the installed packages and reports every difference the
classification does not explain.  ``tests/core/test_runtime_surface.py`` runs it in CI; by hand,
in a venv with all the wheels installed (``nox -s tests`` makes one in ``.nox/tests``)::

    .nox/tests/bin/python tests/runtime_surface.py      # prints the figure, exits 1 on a problem
"""

from __future__ import annotations

import fnmatch
import importlib
import inspect
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the test venvs run 3.11+
    import tomli as tomllib

REPO = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parent.parent))
SURFACE = REPO / "tests" / "artifacts" / "surface"
REFERENCE = SURFACE / "apache_tvm_0_27.json"
CLASSIFICATION = SURFACE / "classification.toml"
README = REPO / "README.md"

PROVIDED = "provided"
STATUSES = {
    PROVIDED: "reachable from compiled artifacts or runtime-side scripts; tvm-runtime has it",
    "not-applicable": "runtime-side, not provided for the reason given; using it fails clearly",
    "compiler-only": "part of apache-tvm's compiler; running an artifact never needs it",
    "internal": "an implementation detail of an apache-tvm runtime module, unused by scripts",
    "test-only": "apache-tvm's own test fixtures",
}
# Runtime-reachable: what the coverage figure counts (provided out of these).
REACHABLE = (PROVIDED, "not-applicable")
SECTIONS = ("global", "python", "error_kind", "exec")
# The modules whose import registers globals in apache-tvm (generate_surface.GLOBAL_IMPORTS);
# tvm-runtime's counterparts are imported before its registry is read.
RUNTIME_MODULES = ("tvm.runtime.vm", "tvm.runtime.disco", "tvm.rpc", "tvm.rpc.server", "tvm.error")


@dataclass
class Rule:
    section: str
    patterns: list[str]
    status: str
    why: str = ""
    by: str = ""
    source: str = ""
    where: str = ""  # "rpc-server": answered by an RPC server session, not the local registry
    placeholder: bool = False  # a not-applicable loader registered only to fail with `why`
    signature: str = ""  # why a provided name's signature deliberately differs (not compared)
    missing_options: list[str] = field(default_factory=list)  # exec: options deliberately absent
    matched: list[str] = field(default_factory=list)

    def matches(self, name: str, entry: dict[str, Any]) -> bool:
        if self.source and entry.get("source") != self.source:
            return False
        return any(fnmatch.fnmatchcase(name, pattern) for pattern in self.patterns)


@dataclass
class Report:
    problems: list[str] = field(default_factory=list)
    status_of: dict[str, dict[str, Rule]] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)

    def names(self, section: str, *statuses: str) -> list[str]:
        return sorted(n for n, r in self.status_of[section].items() if r.status in statuses)

    def figure(self) -> tuple[int, int, int]:
        """(provided, runtime-reachable) over globals and Python names of apache-tvm itself, and
        how many globals apache-tvm-ffi (shared by both runtimes) adds on top."""
        shared = sum(1 for r in self.status_of["global"].values() if r.source == "tvm_ffi")
        provided = reachable = 0
        for section in ("global", "python"):
            for rule in self.status_of[section].values():
                if rule.source == "tvm_ffi":
                    continue
                provided += rule.status == PROVIDED
                reachable += rule.status in REACHABLE
        return provided, reachable, shared

    def figure_text(self) -> str:
        provided, reachable, _ = self.figure()
        return f"{provided} of {reachable} runtime-reachable names of apache-tvm 0.27 provided"


def load_reference() -> dict[str, Any]:
    return json.loads(REFERENCE.read_text())


def load_rules() -> list[Rule]:
    data = tomllib.loads(CLASSIFICATION.read_text())
    rules = []
    for section in SECTIONS:
        for raw in data.get(section, []):
            patterns = raw["match"] if isinstance(raw["match"], list) else [raw["match"]]
            rules.append(
                Rule(
                    section=section,
                    patterns=patterns,
                    status=raw["status"],
                    why=raw.get("why", ""),
                    by=raw.get("by", ""),
                    source=raw.get("source", ""),
                    where=raw.get("where", ""),
                    placeholder=raw.get("placeholder", False),
                    signature=raw.get("signature", ""),
                    missing_options=raw.get("missing_options", []),
                )
            )
    return rules


def classify(reference: dict[str, Any], rules: list[Rule]) -> Report:
    """Every reference name to its first matching rule; problems for gaps and bad rules."""
    report = Report(rules=rules)
    for rule in rules:
        if rule.status not in STATUSES:
            report.problems.append(f"[{rule.section}] {rule.patterns}: unknown status {rule.status!r}")
        if rule.status != PROVIDED and not rule.why:
            report.problems.append(f"[{rule.section}] {rule.patterns}: a {rule.status} rule needs `why`")
    for section, key in (("global", "globals"), ("python", "python"), ("error_kind", "error_kinds")):
        report.status_of[section] = {}
        candidates = [r for r in rules if r.section == section]
        for name, entry in reference[key].items():
            rule = next((r for r in candidates if r.matches(name, entry)), None)
            if rule is None:
                report.problems.append(f"[{section}] {name}: not classified")
                continue
            rule.matched.append(name)
            report.status_of[section][name] = rule
    report.status_of["exec"] = {}
    for name in reference["exec"]:
        rule = next((r for r in rules if r.section == "exec" and r.matches(name, {})), None)
        if rule is None:
            report.problems.append(f"[exec] {name}: not classified")
            continue
        rule.matched.append(name)
        report.status_of["exec"][name] = rule
    for rule in rules:
        if not rule.matched:
            report.problems.append(f"[{rule.section}] {rule.patterns}: matches no name (stale rule)")
    return report


# --------------------------------------------------------------------------------------------
# The installed tvm-runtime
# --------------------------------------------------------------------------------------------


def installed_globals(report: Report) -> set[str]:
    """Global function names after `import tvm` and the runtime-side modules (all backends load
    at `import tvm`)."""
    import tvm_ffi

    import tvm  # noqa: F401

    for module in RUNTIME_MODULES:
        try:
            importlib.import_module(module)
        except ImportError as err:
            report.problems.append(f"[python] {module}: cannot be imported ({err})")
    return set(tvm_ffi.registry.list_global_func_names())


def rpc_server_functions() -> set[str]:
    """What tvm-runtime's RPC server answers a client's GetGlobalFunc with, beyond the registry."""
    import tempfile

    from tvm.rpc._workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        workspace = Workspace(tmp)
        try:
            return set(workspace.functions())
        finally:
            workspace.remove()


def check_globals(report: Report, reference: dict[str, Any], ours: set[str]) -> None:
    server = rpc_server_functions()
    for name, rule in report.status_of["global"].items():
        if rule.where == "rpc-server":
            if rule.status == PROVIDED and name not in server:
                report.problems.append(f"[global] {name}: the RPC server does not answer it")
            continue
        if rule.status == PROVIDED and name not in ours:
            report.problems.append(f"[global] {name}: classified provided, but not registered")
        elif rule.placeholder:
            check_placeholder(report, name, rule)
        elif rule.status == "not-applicable" and name in ours:
            report.problems.append(f"[global] {name}: classified not-applicable, but registered")
    check_advice_table(report)


def check_placeholder(report: Report, name: str, rule: Rule) -> None:
    """A placeholder loader exists and fails with the classification's reason."""
    import tvm_ffi

    loader = tvm_ffi.get_global_func(name, allow_missing=True)
    if loader is None:
        report.problems.append(f"[global] {name}: the placeholder loader is not registered")
        return
    try:
        loader(b"")
    except Exception as err:  # noqa: BLE001  (any error type; its message is what matters)
        if rule.why not in str(err):
            report.problems.append(f"[global] {name}: the placeholder fails without the reason: {err}")
        return
    report.problems.append(f"[global] {name}: the placeholder loader accepted an empty payload")


# The core's reasons for the runtime functions it does not provide, which its "Cannot find
# function" errors quote (src/core/missing_function_advice.cc, kUnprovided).
ADVICE_SOURCE = REPO / "src" / "core" / "missing_function_advice.cc"
_ADVICE_ENTRY = re.compile(r'\{\s*"([^"]+)",\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\}')


def advice_table() -> dict[str, str]:
    text = ADVICE_SOURCE.read_text()
    table = text[text.index("kUnprovided[]") : text.index("};", text.index("kUnprovided[]"))]
    return {
        pattern: "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', literals))
        for pattern, literals in _ADVICE_ENTRY.findall(table)
    }


def check_advice_table(report: Report) -> None:
    """Every not-applicable global has the classification's reason in the core's table (but those
    registered to fail with it, and those a wheel owns: the error names the wheel), and the
    table has nothing else."""
    wanted = {}
    for rule in report.rules:
        if rule.section == "global" and rule.status == "not-applicable" and not (rule.placeholder or rule.by):
            for pattern in rule.patterns:
                wanted[pattern] = rule.why
    table = advice_table()
    for pattern, why in wanted.items():
        if table.get(pattern) != why:
            report.problems.append(
                f"[global] {pattern}: {ADVICE_SOURCE.name} gives {table.get(pattern)!r}, "
                f"the classification says {why!r}"
            )
    for pattern in sorted(set(table) - set(wanted)):
        report.problems.append(
            f"[global] {pattern}: in {ADVICE_SOURCE.name} but not classified not-applicable"
        )


def _resolve(qualified: str) -> Any:
    """The object a dotted name of the reference denotes in the installed packages: attributes
    first (``tvm.runtime.device`` is the function, not the submodule of that name), importing a
    submodule only where no attribute exists yet."""
    parts = qualified.split(".")
    obj = importlib.import_module(parts[0])
    for i, attr in enumerate(parts[1:], start=1):
        if inspect.isclass(obj):
            obj = inspect.getattr_static(obj, attr)
            continue
        if inspect.ismodule(obj) and not hasattr(obj, attr):
            importlib.import_module(".".join(parts[: i + 1]))
        obj = getattr(obj, attr)
    return obj


@dataclass
class Param:
    name: str
    kind: str  # "positional-only", "positional", "keyword-only", "*", "**"
    has_default: bool


def parse_params(params: list[str]) -> list[Param]:
    """The reference's parameter notation (generate_surface._signature) back into parameters."""
    out: list[Param] = []
    slash = "/" in params
    keyword_only = False
    for text in params:
        if text == "/":
            slash = False
            continue
        if text == "*":
            keyword_only = True
            continue
        name, _, default = text.partition("=")
        if name.startswith("**"):
            out.append(Param(name[2:], "**", False))
        elif name.startswith("*"):
            out.append(Param(name[1:], "*", False))
            keyword_only = True
        else:
            kind = "keyword-only" if keyword_only else ("positional-only" if slash else "positional")
            out.append(Param(name, kind, bool(default)))
    return out


def our_params(obj: Any) -> list[Param] | None:
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    kinds = {
        inspect.Parameter.POSITIONAL_ONLY: "positional-only",
        inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
        inspect.Parameter.KEYWORD_ONLY: "keyword-only",
        inspect.Parameter.VAR_POSITIONAL: "*",
        inspect.Parameter.VAR_KEYWORD: "**",
    }
    return [
        Param(p.name, kinds[p.kind], p.default is not inspect.Parameter.empty)
        for p in sig.parameters.values()
    ]


def incompatibilities(ref: list[Param], ours: list[Param]) -> list[str]:
    """Why a call written against ``ref`` may fail against ``ours`` (empty: compatible)."""
    why = []
    ours_positional = [p for p in ours if p.kind in ("positional-only", "positional")]
    ours_by_name = {p.name: p for p in ours if p.kind in ("positional", "keyword-only")}
    var_args = any(p.kind == "*" for p in ours)
    var_kwargs = any(p.kind == "**" for p in ours)
    ref_positional = [p for p in ref if p.kind in ("positional-only", "positional")]
    for i, p in enumerate(ref_positional):
        mine = ours_positional[i] if i < len(ours_positional) else None
        if mine is None and not var_args:
            why.append(f"no positional parameter #{i} ({p.name})")
        elif mine is not None and p.kind == "positional" and mine.name != p.name and not var_kwargs:
            why.append(f"parameter #{i} is {mine.name!r}, 0.27 calls it {p.name!r}")
        elif mine is not None and p.has_default and not mine.has_default:
            why.append(f"{mine.name!r} is required, 0.27's {p.name!r} has a default")
    for p in ref:
        if p.kind == "keyword-only" and p.name not in ours_by_name and not var_kwargs:
            why.append(f"no keyword parameter {p.name!r}")
        if p.kind == "*" and not var_args:
            why.append(f"no *{p.name}")
        if p.kind == "**" and not var_kwargs:
            why.append(f"no **{p.name}")
    ref_names = {p.name for p in ref}
    for i, p in enumerate(ours):
        if p.kind in ("*", "**") or p.has_default:
            continue
        positional_twin = i < len(ref_positional) and p.kind != "keyword-only"
        if not positional_twin and p.name not in ref_names:
            why.append(f"requires {p.name!r}, which 0.27 does not have")
    return why


def check_python(report: Report, reference: dict[str, Any]) -> None:
    for name, rule in report.status_of["python"].items():
        if rule.status != PROVIDED:
            continue
        entry = reference["python"][name]
        try:
            obj = _resolve(name)
        except (ImportError, AttributeError) as err:
            report.problems.append(f"[python] {name}: classified provided, but missing ({err})")
            continue
        kind = entry["kind"]
        if kind == "property" and not isinstance(obj, property):
            # A plain attribute or a descriptor of tvm-ffi's types reads the same way.
            if callable(obj) and not inspect.ismethoddescriptor(obj) and inspect.isfunction(obj):
                report.problems.append(f"[python] {name}: 0.27 has a property, ours is a method")
            continue
        if kind in ("class", "function", "method", "staticmethod", "classmethod"):
            target = obj.__func__ if isinstance(obj, (staticmethod, classmethod)) else obj
            if not callable(target):
                report.problems.append(f"[python] {name}: 0.27 has a {kind}, ours is not callable")
                continue
            if kind == "class" and not inspect.isclass(obj):
                report.problems.append(f"[python] {name}: 0.27 has a class, ours is {type(obj).__name__}")
                continue
            if "params" in entry and not rule.signature:
                mine = our_params(target)
                if mine is not None:
                    ref = parse_params(entry["params"])
                    if kind == "classmethod" or kind == "staticmethod":
                        mine = [p for p in mine if p.name not in ("cls",)]
                    for reason in incompatibilities(ref, mine):
                        report.problems.append(f"[python] {name}: signature differs: {reason}")


def check_error_kinds(report: Report, reference: dict[str, Any]) -> None:
    from tvm_ffi import core

    import tvm  # noqa: F401

    for kind, rule in report.status_of["error_kind"].items():
        if rule.status != PROVIDED:
            continue
        expected = reference["error_kinds"][kind]
        cls = core.ERROR_NAME_TO_TYPE.get(kind)
        if cls is None:
            report.problems.append(f"[error_kind] {kind}: no Python class is registered for it")
            continue
        qualname = f"{cls.__module__}.{cls.__qualname__}"
        bases = [f"{b.__module__}.{b.__qualname__}" for b in cls.__bases__]
        if qualname != expected["class"] or bases != expected["bases"]:
            report.problems.append(
                f"[error_kind] {kind}: arrives as {qualname}{tuple(bases)}, 0.27 raises "
                f"{expected['class']}{tuple(expected['bases'])}"
            )


def check_exec(report: Report, reference: dict[str, Any]) -> None:
    for name, rule in report.status_of["exec"].items():
        if rule.status != PROVIDED:
            continue
        options = reference["exec"][name].get("options")
        proc = subprocess.run(
            [sys.executable, "-m", name, "--help"], capture_output=True, text=True, timeout=120
        )
        if proc.returncode != 0:
            report.problems.append(f"[exec] {name} --help failed: {proc.stderr.strip()[-300:]}")
            continue
        missing = [o for o in options or () if o not in proc.stdout and o not in rule.missing_options]
        if missing:
            report.problems.append(f"[exec] {name}: lacks the options {missing}")


def check_readme(report: Report) -> None:
    if report.figure_text() not in " ".join(README.read_text().split()):
        report.problems.append(f"README.md does not state the current figure: {report.figure_text()!r}")


def run(check_installed: bool = True) -> Report:
    reference = load_reference()
    report = classify(reference, load_rules())
    if check_installed:
        check_globals(report, reference, installed_globals(report))
        check_python(report, reference)
        check_error_kinds(report, reference)
        check_exec(report, reference)
    check_readme(report)
    return report


def main() -> int:
    report = run()
    provided, reachable, shared = report.figure()
    print(f"{report.figure_text()} (globals and Python names; apache-tvm-ffi's {shared} globals")
    print("are shared by both runtimes and not counted); the rest, with the reason for each:")
    for section in ("global", "python"):
        for name in report.names(section, "not-applicable"):
            print(f"  {section} {name}: {report.status_of[section][name].why}")
    for problem in report.problems:
        print(f"PROBLEM: {problem}")
    return 1 if report.problems else 0


if __name__ == "__main__":
    sys.exit(main())
