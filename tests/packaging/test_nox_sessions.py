"""Every nox session is listed where people look for it: the noxfile's summary (what `nox -l`
shows above the list) and docs/getting-started.md.  Read from noxfile.py statically (no nox
needed), so a new session cannot be forgotten in either place."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

ROOT = Path(os.environ.get("TVM_REPO_ROOT", Path(__file__).resolve().parents[2]))
NOXFILE = ROOT / "noxfile.py"


def _session_names() -> list[str]:
    """The names of the functions decorated with @nox.session (its name= when given)."""
    names = []
    for node in ast.parse(NOXFILE.read_text()).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            call = dec if isinstance(dec, ast.Call) else None
            target = call.func if call else dec
            if ast.unparse(target) != "nox.session":
                continue
            name = node.name
            for kw in call.keywords if call else []:
                if kw.arg == "name":
                    name = ast.literal_eval(kw.value)
            names.append(name)
    return names


def test_noxfile_has_sessions() -> None:
    names = _session_names()
    assert {"build", "tests", "lint", "docs", "macos"} <= set(names), names


def test_summary_lists_every_session() -> None:
    summary = ast.get_docstring(ast.parse(NOXFILE.read_text())) or ""
    listed = set(re.findall(r"^\s*nox -s ([\w-]+)", summary, re.MULTILINE))
    missing = [n for n in _session_names() if n not in listed]
    assert not missing, f"noxfile.py's docstring does not list these sessions: {missing}"


def test_getting_started_lists_every_session() -> None:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    missing = [n for n in _session_names() if not re.search(rf"(nox -s |`){re.escape(n)}\b", text)]
    assert not missing, f"docs/getting-started.md does not mention these sessions: {missing}"
