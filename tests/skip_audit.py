"""The skip audit: every skip must be explained by what the machine lacks, and never grow silently.

A skip that depends on what the code fails to do turns a regression into a quiet "s". So each
skip reason must match one category of ``tests/skip_budget.json`` (a GPU, an fp16 device, ...),
and each category may not skip more tests than its recorded budget for the CI machine. Raising a
budget is a reviewed change of that file. `nox -s tests` turns the audit on
(``TVM_TEST_SKIP_AUDIT=1``); conftest.py feeds it every skipped test.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Category:
    lacks: str  # what the machine lacks, in words
    pattern: re.Pattern[str]
    budget: int


def load_budget(path: Path) -> list[Category]:
    data = json.loads(path.read_text(encoding="utf-8"))
    return [Category(c["lacks"], re.compile(c["pattern"]), int(c["max"])) for c in data["categories"]]


def audit(skips: list[tuple[str, str]], categories: list[Category]) -> list[str]:
    """Problems with ``skips`` (test id, reason): unexplained skips and categories over budget."""
    problems: list[str] = []
    counts = {c.lacks: 0 for c in categories}
    for test_id, reason in skips:
        category = next((c for c in categories if c.pattern.search(reason)), None)
        if category is None:
            problems.append(
                f"{test_id} skipped for a reason that is not something the machine lacks: {reason!r} "
                "(fix the test, or add a category to tests/skip_budget.json if the machine truly lacks it)"
            )
            continue
        counts[category.lacks] += 1
    for c in categories:
        if counts[c.lacks] > c.budget:
            problems.append(
                f"{counts[c.lacks]} tests skipped because the machine lacks {c.lacks}, but the budget is "
                f"{c.budget}: a new skip hides something; make it run, or raise the budget in "
                "tests/skip_budget.json with the reason"
            )
    return problems


def summary(skips: list[tuple[str, str]], categories: list[Category]) -> str:
    counts = {c.lacks: 0 for c in categories}
    for _, reason in skips:
        for c in categories:
            if c.pattern.search(reason):
                counts[c.lacks] += 1
                break
    parts = [
        f"{n}/{c.budget} for lack of {c.lacks}" for c in categories if (n := counts[c.lacks]) or c.budget
    ]
    return f"skip audit: {len(skips)} skipped ({'; '.join(parts) or 'none'})"
