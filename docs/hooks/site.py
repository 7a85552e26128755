"""MkDocs hook of the docs site (mkdocs.yml `hooks:`): what the stock configuration cannot do.

1. Reserved pages.  The nav names pages that other branches add (docs/gpu-check.md,
   docs/gpu-check-results.md).  A nav entry whose file is missing is a warning, which fails the
   strict build, so until such a file exists its entry is dropped here; once it is merged it
   appears with no change to mkdocs.yml.
2. One `tvm` package for the API reference.  The core wheel and tvm-runtime-extra each ship part
   of the `tvm` package (Disco lives in `tvm.backend.extra.disco`); installed, they are one
   package, but mkdocstrings reads sources statically and stops at the first `tvm/__init__.py`.
   The hook copies both source trees into build/docs-python (what mkdocs.yml's mkdocstrings
   `paths` names), so nothing compiled is needed to render the reference.
3. Notes.  Other branches write short pages into docs/notes/*.md.  A page that says
   `<!-- notes: GLOB -->` gets every matching note's text in that place (sorted by name), and
   `<!-- notes: * except GLOB,GLOB -->` takes the rest; docs/notes/ itself is excluded from the
   site (mkdocs.yml `exclude_docs`), so a note is rendered once, where it belongs.
4. Generated evidence.  `<!-- perf-data -->` on the performance page becomes one section per
   docs/data/perf/<area>.json (written with its SVG chart by docs/gen_perf.py, which
   `nox -s bench` runs): the chart, the targets as a table, the machine and the date.
5. The last reliability runs.  `<!-- reliability-data -->` on the reliability page becomes the
   reports that `nox -s fuzz`, `sanitize` and `stress` last published into
   docs/data/reliability/ (docs/gen_reports.py), each stamped with its machine and date.
6. The compatibility figure.  `<!-- surface -->` on the compatibility page becomes the figure and
   every runtime-reachable name not provided, with its reason, computed from
   tests/artifacts/surface/ by tests/runtime_surface.py's own classifier (pure Python; the
   check against the installed wheels stays in the test suite).
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON_SOURCES = ["packages/tvm-runtime/python", "packages/tvm-runtime-extra/python"]
MERGED_SOURCES = ROOT / "build" / "docs-python"

RESERVED = {"gpu-check.md", "gpu-check-results.md"}
NOTES_MARKER = re.compile(r"<!--\s*notes:\s*(?P<glob>\S+)(?:\s+except\s+(?P<except>\S+))?\s*-->")


def _drop_missing_reserved(entries: list, docs_dir: Path) -> list:
    kept = []
    for entry in entries:
        if isinstance(entry, dict):
            ((title, value),) = entry.items()
            if isinstance(value, list):
                kept.append({title: _drop_missing_reserved(value, docs_dir)})
                continue
            if value in RESERVED and not (docs_dir / value).is_file():
                continue
        kept.append(entry)
    return kept


def _merge_python_sources() -> None:
    shutil.rmtree(MERGED_SOURCES, ignore_errors=True)
    for tree in PYTHON_SOURCES:
        skip = shutil.ignore_patterns("*.so", "__pycache__")
        shutil.copytree(ROOT / tree, MERGED_SOURCES, dirs_exist_ok=True, ignore=skip)


# At import: MkDocs imports hooks while it reads mkdocs.yml, before mkdocstrings looks at `paths`.
_merge_python_sources()


def on_config(config, **kwargs):
    config["nav"] = _drop_missing_reserved(config["nav"], Path(config["docs_dir"]))
    return config


def _notes(docs_dir: Path, glob: str, excluded: str | None) -> str:
    skip = excluded.split(",") if excluded else []
    texts = []
    for note in sorted((docs_dir / "notes").glob("*.md")):
        if fnmatch.fnmatch(note.name, glob) and not any(fnmatch.fnmatch(note.name, s) for s in skip):
            texts.append(note.read_text(encoding="utf-8").strip())
    return "\n\n".join(texts)


def on_page_markdown(markdown, page, config, **kwargs):
    docs_dir = Path(config["docs_dir"])
    markdown = NOTES_MARKER.sub(lambda m: _notes(docs_dir, m["glob"], m["except"]), markdown)
    return _render_surface(_render_reliability(_render_perf(markdown, config), config))


PERF_MARKER = "<!-- perf-data -->"
NO_PERF_DATA = (
    "No generated data yet: `nox -s bench` (all benchmarks, or `nox -s bench -- vm llm` for some)"
    " writes `results/*.json`, then `docs/gen_perf.py` turns them into `docs/data/perf/` (JSON +"
    " SVG charts), which this section renders."
)


def _perf_sections(docs_dir: Path) -> str:
    summaries = sorted((docs_dir / "data" / "perf").glob("*.json"))
    if not summaries:
        return NO_PERF_DATA
    sections = []
    for path in summaries:
        s = json.loads(path.read_text(encoding="utf-8"))
        lines = [f"### {s['area']}", "", f"Run of {s['date']} on {s['machine']} (`{s['source']}`).", ""]
        if s.get("chart"):
            lines += [f"![{s['area']}: ours against the peer, the limit marked](data/perf/{s['chart']})", ""]
        if s["targets"]:
            lines += ["| measurement | measured | target | met |", "|---|---|---|---|"]
        for target in s["targets"]:
            unit = " " + target["unit"] if target["unit"] else ""
            verdict = "yes" if target["pass"] else "**no**"
            goal = f"{target['comparison']} {target['limit']:g}{unit}"
            lines.append(f"| {target['label']} | {target['measured']:g} | {goal} | {verdict} |")
        if s.get("checks"):
            lines += ["", "| check | met |", "|---|---|"]
            lines += [f"| {c['label']} | {'yes' if c['pass'] else '**no**'} |" for c in s["checks"]]
        table = s.get("table")
        if table and (docs_dir / "data" / "perf" / table).is_file():
            lines += ["", (docs_dir / "data" / "perf" / table).read_text(encoding="utf-8").strip()]
        sections.append("\n".join(lines))
    return "\n\n".join(sections)


def _render_perf(markdown: str, config) -> str:
    if PERF_MARKER not in markdown:
        return markdown
    return markdown.replace(PERF_MARKER, _perf_sections(Path(config["docs_dir"])))


SURFACE_MARKER = "<!-- surface -->"


def _surface_module():
    source = ROOT / "tests" / "runtime_surface.py"
    spec = importlib.util.spec_from_file_location("_docs_runtime_surface", source)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _surface_section() -> str:
    surface = _surface_module()
    report = surface.classify(surface.load_reference(), surface.load_rules())
    provided, reachable, shared = report.figure()
    lines = [
        f"**{report.figure_text()}; the rest listed with reasons.** apache-tvm-ffi's own {shared}"
        " global functions come with the shared dependency and are not counted.",
        "",
        "| kind | provided | not provided (runtime-reachable) | compiler-only | internal | test-only |",
        "|---|---|---|---|---|---|",
    ]
    for section in ("global", "python"):
        statuses = ("provided", "not-applicable", "compiler-only", "internal", "test-only")
        counts = [len(report.names(section, s)) for s in statuses]
        kind = "global functions" if section == "global" else "Python names"
        lines.append(f"| {kind} | " + " | ".join(str(c) for c in counts) + " |")
    lines += ["", "### Not provided, and why", "", "| kind | name | why |", "|---|---|---|"]
    for section in ("global", "python"):
        for name in report.names(section, "not-applicable"):
            why = report.status_of[section][name].why.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {section} | `{name}` | {why} |")
    return "\n".join(lines)


def _render_surface(markdown: str) -> str:
    if SURFACE_MARKER not in markdown:
        return markdown
    return markdown.replace(SURFACE_MARKER, _surface_section())


RELIABILITY_MARKER = "<!-- reliability-data -->"
RELIABILITY_REPORTS = {
    "fuzz": "Fuzzing (`nox -s fuzz`)",
    "sanitize": "Sanitizers (`nox -s sanitize`)",
    "stress": "Threads (`nox -s stress`)",
}


def _render_reliability(markdown: str, config) -> str:
    if RELIABILITY_MARKER not in markdown:
        return markdown
    folder = Path(config["docs_dir"]) / "data" / "reliability"
    sections = []
    for name, title in RELIABILITY_REPORTS.items():
        report = folder / f"{name}.md"
        if report.is_file():
            sections.append(f"### {title}\n\n" + report.read_text(encoding="utf-8").strip())
        else:
            sections.append(
                f"### {title}\n\nNot published yet: `nox -s {name}` writes `results/{name}.md` and"
                f" then `docs/data/reliability/{name}.md`, shown here."
            )
    return markdown.replace(RELIABILITY_MARKER, "\n\n".join(sections))
