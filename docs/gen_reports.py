"""The reliability page's last-run sections, generated from what a session just wrote.

    python docs/gen_reports.py fuzz        # results/fuzz.md     -> docs/data/reliability/fuzz.md
    python docs/gen_reports.py sanitize    # results/sanitize.md -> docs/data/reliability/sanitize.md
    python docs/gen_reports.py stress      # results/stress.md   -> docs/data/reliability/stress.md

`nox -s fuzz`, `nox -s sanitize` and `nox -s stress` run this after writing their report.  The
copy is stamped with this machine and the date, and its headings are moved two levels down so
that it sits under the page's own; docs/hooks/site.py shows it on the reliability page
(`<!-- reliability-data -->`).  Commit docs/data/reliability/ with the run you want to publish.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPORTS = ("fuzz", "sanitize", "stress")


def machine() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} CPUs, {platform.system()} {platform.machine()}"


def publish(name: str, results: Path, out: Path) -> Path:
    report = results / f"{name}.md"
    if not report.is_file():
        raise SystemExit(f"gen_reports: {report} does not exist: run `nox -s {name}` first")
    text = re.sub(r"^(#{1,4}) ", lambda m: "#" * (len(m[1]) + 2) + " ", report.read_text(), flags=re.M)
    when = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    stamp = f"Run of {when} on {machine()} (`nox -s {name}`, `results/{name}.md`).\n\n"
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{name}.md"
    target.write_text(stamp + text.strip() + "\n")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", choices=REPORTS)
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data" / "reliability")
    args = parser.parse_args(argv)
    print(f"gen_reports: wrote {publish(args.name, args.results, args.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
