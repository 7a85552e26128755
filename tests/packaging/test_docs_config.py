"""The README's two commands are what CI runs, and the docs' own checks hold without a build.

`.ci/run` must run exactly the test command README.md states, `nox` with no session runs the same
sessions, and every link of README.md and of the wheels' READMEs (their PyPI pages) names a file
and heading that exist (ci/check_doc_links.py; the site's own links are checked by the strict
`nox -s docs` build).
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys

from conftest import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
NOX_COMMAND = re.compile(
    r"^ {4}(python3 -m pip install \"nox>=2024\.4\" && python3 -m nox -s [a-z0-9 -]+)$", re.M
)


def _readme_commands() -> dict[str, str]:
    commands = NOX_COMMAND.findall(README)
    assert len(commands) == 2, f"README.md should state the main job and the test command, found {commands}"
    main_job, tests = commands
    return {"main": main_job, "tests": tests}


def test_ci_runs_exactly_the_readme_test_command():
    run = (REPO / ".ci" / "run").read_text(encoding="utf-8").strip().splitlines()
    assert run[-1].strip() == _readme_commands()["tests"]


def test_the_main_job_is_the_demo_session():
    assert _readme_commands()["main"].endswith("python3 -m nox -s demo")


def test_nox_default_sessions_are_the_readme_test_sessions():
    noxfile = (REPO / "noxfile.py").read_text(encoding="utf-8")
    default = ast.literal_eval(re.search(r"^nox\.options\.sessions = (\[.*\])$", noxfile, re.M)[1])
    assert default == _readme_commands()["tests"].split(" -s ", 1)[1].split()
    assert "docs" in default


def test_readme_and_wheel_readme_links_resolve():
    proc = subprocess.run(
        [sys.executable, str(REPO / "ci" / "check_doc_links.py")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
