"""The performance page's data and charts, generated from the last `nox -s bench` run.

    python docs/gen_perf.py [--results results] [--out docs/data/perf]

`nox -s bench` runs this after the benchmarks.  For every `results/<area>_bench.json` that holds
a `targets` list (the verdicts each benchmark computes: measured value, limit, comparison, pass),
it writes

* `docs/data/perf/<area>.json`: the area's targets (and pass/fail checks), with the machine and
  the date of the run (the results file's own time when it records none);
* `docs/data/perf/<area>.md`: the tables the benchmark itself wrote (`results/<area>_bench.md`),
  headings moved under the area's, so every area shows its measurements, targets or not;
* `docs/data/perf/<area>.svg`: a bar chart of its ratio targets (ours / the peer, apache-tvm 0.27
  or the native library, or / the floor), one bar per measurement, the limit drawn as a line,
  stamped with the machine and the date (matplotlib, never drawn by hand).

docs/hooks/site.py renders those files into the performance page (`<!-- perf-data -->`), so the
site build needs no matplotlib and no benchmark run.  An area whose benchmark did not run this
time keeps its previous files: each one carries its own date.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# Keys of a target that are its verdict rather than its label.
VERDICT_KEYS = {"measured", "value", "limit", "comparison", "unit", "pass", "name"}


def label_of(target: dict[str, Any]) -> str:
    parts = [str(target.get("name", ""))]
    parts += [str(v) for k, v in target.items() if k not in VERDICT_KEYS and isinstance(v, (str, int))]
    return " / ".join(p for p in parts if p)


def is_ratio(target: dict[str, Any]) -> bool:
    unit = str(target.get("unit", "")).strip().lower()
    return unit.startswith("x") or unit.startswith("ratio") or " x " in f" {unit} "


def stamp(results: dict[str, Any], written: float | None = None) -> dict[str, Any]:
    machine = results.get("machine") or results.get("env") or {}
    created = results.get("created_unix") or written
    when = "unknown"
    if created:
        when = dt.datetime.fromtimestamp(created, dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    cpu = machine.get("cpu_model") or machine.get("processor") or machine.get("machine") or "unknown CPU"
    cpus = machine.get("cpus") or machine.get("cpu_count")
    load = machine.get("loadavg_1_5_15_before")
    text = f"{cpu}, {cpus} CPUs" if cpus else str(cpu)
    if load:
        text += f", load average {load[0]} before the run"
    return {"date": when, "machine": text}


def checks_of(results: dict[str, Any]) -> list[dict[str, Any]]:
    """Pass/fail verdicts without a number (e.g. firstcall's {"what": ..., "ok": ...})."""
    return [
        {"label": str(t["what"]), "pass": bool(t.get("ok"))}
        for t in results.get("targets", [])
        if isinstance(t, dict) and "what" in t and "measured" not in t
    ]


def demoted(markdown: str, levels: int = 2) -> str:
    """A benchmark's own markdown with its headings moved `levels` down, under the area's."""
    return re.sub(r"(?m)^(#{1,4}) ", lambda m: "#" * (len(m.group(1)) + levels) + " ", markdown)


def summarize(
    area: str, results: dict[str, Any], written: float | None = None, has_table: bool = False
) -> dict[str, Any] | None:
    # A target's number is `measured` (most benchmarks) or `value` (load_bench).
    targets = [
        {**t, "measured": t.get("measured", t.get("value"))}
        for t in results.get("targets", [])
        if isinstance(t, dict)
        and isinstance(t.get("measured", t.get("value")), (int, float))
        and "limit" in t
    ]
    checks = checks_of(results)
    if not targets and not checks and not has_table:
        return None
    return {
        "area": area,
        **stamp(results, written),
        "source": f"results/{area}_bench.json",
        "checks": checks,
        "targets": [
            {
                "label": label_of(t),
                "measured": t["measured"],
                "limit": t["limit"],
                "comparison": t.get("comparison", "<="),
                "unit": t.get("unit", ""),
                "pass": bool(t.get("pass")),
                "ratio": is_ratio(t),
            }
            for t in targets
        ],
    }


def chart(summary: dict[str, Any], path: Path) -> bool:
    ratios = [t for t in summary["targets"] if t["ratio"]]
    if not ratios:
        return False
    import matplotlib

    matplotlib.use("svg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = summary["area"]  # stable ids: reruns diff cleanly
    height = 2.0 + 0.35 * len(ratios)
    fig, ax = plt.subplots(figsize=(8, height))
    labels = [t["label"] for t in ratios][::-1]
    values = [t["measured"] for t in ratios][::-1]
    colors = ["#2e7d32" if t["pass"] else "#c62828" for t in ratios][::-1]
    ax.barh(labels, values, color=colors)
    for limit in sorted({t["limit"] for t in ratios}):
        ax.axvline(limit, color="black", linestyle="--", linewidth=1, label=f"target limit {limit:g}x")
    ax.axvline(1.0, color="grey", linewidth=0.8, label="parity (1.0x)")  # with the peer or the floor
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.35 / height * 4), ncol=3, fontsize=8, frameon=False)
    ax.set_xlabel("ours / peer (lower is better; green: target met)")
    ax.set_title(f"{summary['area']}: {summary['date']}, {summary['machine']}", fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "results")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "data" / "perf")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    written = 0
    for results_file in sorted(args.results.glob("*_bench.json")):
        area = results_file.name.removesuffix("_bench.json")
        table = results_file.with_suffix(".md")
        try:
            summary = summarize(
                area,
                json.loads(results_file.read_text()),
                written=results_file.stat().st_mtime,
                has_table=table.is_file(),
            )
        except (ValueError, TypeError) as err:
            print(f"gen_perf: skipping {results_file}: {err}", file=sys.stderr)
            continue
        if summary is None:
            continue
        summary["table"] = None
        if table.is_file():
            (args.out / f"{area}.md").write_text(demoted(table.read_text()))
            summary["table"] = f"{area}.md"
        summary["chart"] = f"{area}.svg" if chart(summary, args.out / f"{area}.svg") else None
        (args.out / f"{area}.json").write_text(json.dumps(summary, indent=1) + "\n")
        written += 1
    print(f"gen_perf: {written} areas written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
