"""The links MkDocs does not see: README.md and each wheel's README (its PyPI page) into the repo.

    python ci/check_doc_links.py     # run by `nox -s docs`, before the strict site build

A relative link must name a file of this repository; a link into docs/*.md#anchor must name a
heading of that page (slugged as MkDocs' toc extension does).  The wheels' READMEs are shown on
PyPI, where relative links break, so they link to the repository's pages on GitHub
(REPO_URL/blob/main/<path>); those are checked against the working tree the same way.  Other
external links are not checked: the build machines reach no network beyond the package index.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPO_URL = "https://github.com/tvm-runtime/tvm-runtime"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def slug(heading: str) -> str:
    """MkDocs' default toc slug: markup dropped, lowercase, punctuation removed, spaces to '-'."""
    text = re.sub(r"[`*_]|<[^>]+>", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def anchors(page: Path) -> set[str]:
    found, fenced = set(), False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := HEADING.match(line)):
            found.add(slug(m[1]))
    return found


def prose(text: str) -> str:
    """The text without code: fenced and indented blocks and inline code spans hold no links."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    text = re.sub(r"^(?: {4}|\t).*$", "", text, flags=re.M)
    return re.sub(r"`[^`]*`", "", text)


def problems_of(source: Path) -> list[str]:
    found = []
    for target in LINK.findall(prose(source.read_text(encoding="utf-8"))):
        if target.startswith(REPO_URL + "/blob/main/") or target.startswith(REPO_URL + "/tree/main/"):
            path, _, anchor = target.split("/main/", 1)[1].partition("#")
            resolved = ROOT / path
        elif re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue  # external (unchecked, see above) or an anchor of the README itself
        else:
            path, _, anchor = target.partition("#")
            resolved = (source.parent / path).resolve()
        where = f"{source.relative_to(ROOT)}: link {target!r}"
        if not resolved.exists():
            found.append(f"{where} names no file of the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            found.append(f"{where}: {resolved.relative_to(ROOT)} has no heading with the anchor #{anchor}")
    return found


def main() -> int:
    sources = [ROOT / "README.md", *sorted(ROOT.glob("packages/*/README.md"))]
    problems = [p for source in sources for p in problems_of(source)]
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"checked the links of {len(sources)} READMEs: {len(problems)} broken")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
