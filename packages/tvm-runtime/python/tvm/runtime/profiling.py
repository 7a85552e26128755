"""What a profiled Relax VM run spent its time on: ``vm.profile("main", *args)`` returns a Report.

Every call instruction of the run is one :class:`Call` (a kernel of the artifact, an allocation, a
copy, another runtime builtin, or a nested VM function). The report aggregates them per kernel,
splits the run's total into kernel time and runtime overhead, prints a table, and exports a Chrome
trace (open it in https://ui.perfetto.dev or chrome://tracing)::

    report = vm.profile("main", x)
    print(report)                       # the table
    print(report.overhead_fraction)     # share of the run that was not kernel time
    report.save_chrome_trace("run.json")

Calls on an accelerator are timed to completion (the device is synchronised around each), with the
backend's own timer where it has one (CUDA, ROCm, Metal events); profiling therefore serialises
the device, and the profiled total is not the unprofiled speed.
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import tvm_ffi

__all__ = ["Call", "Report", "Row"]

# In step with CallProfiler::Category (src/core/vm/call_profiler.h).
_CATEGORIES = ("kernel", "alloc", "copy", "builtin", "vm_function")
_RECORD_FIELDS = 8


@dataclass(frozen=True)
class Call:
    """One call instruction of the profiled run (times in microseconds from the run's start)."""

    name: str
    category: str  # one of kernel, alloc, copy, builtin, vm_function
    device: str  # "cpu:0", "opencl:0", ...: where the call's tensors live
    start_us: float
    duration_us: float  # host time, including the wait for the device
    device_us: float  # the device timer's time where there is one, else duration_us
    depth: int  # nesting: calls made inside a called VM function are one deeper


@dataclass(frozen=True)
class Row:
    """The calls of one function on one device, summed."""

    name: str
    category: str
    device: str
    calls: int
    total_us: float
    mean_us: float
    percent: float  # of the run's total


class Report:
    """A profiled run: its calls, their aggregation, and the split kernel time / overhead."""

    def __init__(self, total_us: float, calls: list[Call]) -> None:
        self.total_us = total_us
        self.calls = calls

    @classmethod
    def _from_vm(cls, raw: Any) -> Report:
        total_ns, names, packed = raw[0], list(raw[1]), bytes(raw[2])
        records = np.frombuffer(packed, dtype=np.int64).reshape(-1, _RECORD_FIELDS)
        calls = [
            Call(
                name=names[int(r[0])],
                category=_CATEGORIES[int(r[1])],
                device=str(tvm_ffi.Device(int(r[2]), int(r[3]))),
                start_us=int(r[4]) / 1e3,
                duration_us=int(r[5]) / 1e3,
                device_us=int(r[6]) / 1e3,
                depth=int(r[7]),
            )
            for r in records
        ]
        calls.sort(key=lambda c: c.start_us)
        return cls(int(total_ns) / 1e3, calls)

    # Leaf calls: everything but VM functions, whose time is that of the calls they contain.
    def _leaves(self) -> list[Call]:
        return [c for c in self.calls if c.category != "vm_function"]

    def _sum(self, category: str) -> float:
        return sum(
            c.device_us if category == "kernel" else c.duration_us
            for c in self._leaves()
            if c.category == category
        )

    @property
    def kernel_us(self) -> float:
        """Time in the artifact's kernels (device time where the backend has a timer)."""
        return self._sum("kernel")

    @property
    def alloc_us(self) -> float:
        return self._sum("alloc")

    @property
    def copy_us(self) -> float:
        return self._sum("copy")

    @property
    def builtin_us(self) -> float:
        return self._sum("builtin")

    @property
    def interpreter_us(self) -> float:
        """The run's time outside every call: the VM's own instructions (and the profiler's)."""
        return max(self.total_us - sum(c.duration_us for c in self._leaves()), 0.0)

    @property
    def overhead_us(self) -> float:
        """Runtime overhead: the run's total minus kernel time."""
        return max(self.total_us - self.kernel_us, 0.0)

    @property
    def overhead_fraction(self) -> float:
        return self.overhead_us / self.total_us if self.total_us > 0 else 0.0

    def rows(self, sort: bool = True) -> list[Row]:
        """One row per (function, category, device), heaviest first when ``sort``."""
        groups: dict[tuple[str, str, str], list[Call]] = {}
        for c in self.calls:
            groups.setdefault((c.name, c.category, c.device), []).append(c)
        rows = []
        for (name, category, device), calls in groups.items():
            total = sum(c.device_us if category == "kernel" else c.duration_us for c in calls)
            rows.append(
                Row(
                    name=name,
                    category=category,
                    device=device,
                    calls=len(calls),
                    total_us=total,
                    mean_us=total / len(calls),
                    percent=100.0 * total / self.total_us if self.total_us > 0 else 0.0,
                )
            )
        if sort:
            rows.sort(key=lambda r: (r.category == "vm_function", -r.total_us))
        return rows

    def summary(self) -> dict[str, float]:
        """The run's total and its split, in microseconds."""
        return {
            "total_us": self.total_us,
            "kernel_us": self.kernel_us,
            "alloc_us": self.alloc_us,
            "copy_us": self.copy_us,
            "builtin_us": self.builtin_us,
            "interpreter_us": self.interpreter_us,
            "overhead_us": self.overhead_us,
            "overhead_fraction": self.overhead_fraction,
        }

    def table(self, sort: bool = True) -> str:
        """A text table: one row per function, then the split of the total."""
        header = ("Name", "Category", "Device", "Calls", "Total (us)", "Mean (us)", "Percent")
        body = [
            (
                r.name,
                r.category,
                r.device,
                str(r.calls),
                f"{r.total_us:.2f}",
                f"{r.mean_us:.2f}",
                f"{r.percent:.1f}",
            )
            for r in self.rows(sort)
        ]
        widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]

        def fmt(line: tuple[str, ...]) -> str:
            return "  ".join(
                cell.ljust(w) if i < 3 else cell.rjust(w) for i, (cell, w) in enumerate(zip(line, widths))
            )

        out = [fmt(header), "-" * len(fmt(header)), *(fmt(line) for line in body), ""]
        s = self.summary()
        out.append(
            f"Total {s['total_us']:.2f} us: kernels {s['kernel_us']:.2f}, "
            f"allocations {s['alloc_us']:.2f}, copies {s['copy_us']:.2f}, "
            f"other builtins {s['builtin_us']:.2f}, interpreter {s['interpreter_us']:.2f} "
            f"(runtime overhead {100 * s['overhead_fraction']:.1f}%)"
        )
        return "\n".join(out)

    def csv(self) -> str:
        """The rows as CSV."""
        buf = io.StringIO()
        writer = csv.DictWriter(buf, fieldnames=list(Row.__dataclass_fields__))
        writer.writeheader()
        for r in self.rows():
            writer.writerow(asdict(r))
        return buf.getvalue()

    def json(self) -> str:
        """Everything: the split, the rows and every call."""
        return json.dumps(
            {
                "summary": self.summary(),
                "rows": [asdict(r) for r in self.rows()],
                "calls": [asdict(c) for c in self.calls],
            }
        )

    def chrome_trace(self) -> dict[str, Any]:
        """The calls as Chrome trace events (one track per nesting depth)."""
        events: list[dict[str, Any]] = [
            {"name": "run", "cat": "run", "ph": "X", "ts": 0.0, "dur": self.total_us, "pid": 0, "tid": 0}
        ]
        for c in self.calls:
            events.append(
                {
                    "name": c.name,
                    "cat": c.category,
                    "ph": "X",
                    "ts": c.start_us,
                    "dur": c.duration_us,
                    "pid": 0,
                    "tid": c.depth + 1,
                    "args": {"device": c.device, "device_us": c.device_us},
                }
            )
        return {"traceEvents": events, "displayTimeUnit": "ns"}

    def save_chrome_trace(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.chrome_trace(), f)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (
            f"<Report: {len(self.calls)} calls, {self.total_us:.1f} us, "
            f"overhead {100 * self.overhead_fraction:.1f}%>"
        )
