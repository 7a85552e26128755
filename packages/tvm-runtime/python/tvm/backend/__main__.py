"""``python -m tvm.backend [--json]``: what tvm-runtime backends are installed and working."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def _fmt_device(d: dict[str, Any]) -> str:
    parts = [d["device"]]
    if "device_name" in d:
        parts.append(str(d["device_name"]))
    if "target" in d:
        target = d["target"]
        parts.append(
            "target: "
            + " ".join([str(target.get("kind"))] + [f"-{k}={v}" for k, v in target.items() if k != "kind"])
        )
    return "  ".join(parts)


def _fmt_cache(c: dict[str, Any], what: str = "kernel cache") -> str:
    if "error" in c:
        return f"{what}: <error: {c['error']}>"
    if not c["enabled"]:
        return f"{what}: disabled ({c['env_prefix']}_DISABLE)"
    mib = 1 << 20
    return (
        f"{what}: {c['dir']}  {c['entries']} entries, {c['bytes'] / mib:.1f} of "
        f"{c['max_bytes'] / mib:.0f} MiB ({c['env_prefix']}_DIR, _MAX_SIZE, _DISABLE)"
    )


def render(report: dict[str, Any]) -> str:
    core = report["core"]
    lines = [
        f"tvm-runtime {core['version']}  (core ABI {core['abi_version']}, "
        f"apache-tvm-ffi {core['apache_tvm_ffi']}, {core['num_threads']} CPU threads)",
        f"  library: {core['library']}",
    ]
    if core.get("weight_cache"):
        lines.append(f"  {_fmt_cache(core['weight_cache'], 'weight cache')}")
    for d in core["devices"]:
        lines.append(f"  {_fmt_device(d)}")
    if report["conflicts"]:
        lines.append("")
        lines.append("CONFLICT:")
        lines.extend(f"  - {c}" for c in report["conflicts"])
    lines.append("")
    header = f"{'backend':<10} {'status':<12} {'distribution':<28} {'ABI':<5} devices"
    lines.append(header)
    lines.append("-" * len(header))
    if not report["backends"]:
        lines.append("(no backends installed: pip install tvm[opencl] / tvm[cuda] / ...)")
    for b in report["backends"]:
        dist = f"{b['distribution'] or '?'} {b['version'] or ''}".strip()
        count = sum(len(t["devices"]) for t in b.get("device_types", []))
        lines.append(f"{b['name']:<10} {b['status']:<12} {dist:<28} {b['abi_version'] or '-':<5} {count}")
        if b.get("protocol") == "callable":
            lines.append(f"    plugin (apache-tvm protocol): {b['name']} = {b['entry_point']}")
        if b.get("library"):
            lines.append(f"    library: {b['library']}")
        if b["reason"]:
            lines.append(f"    reason: {b['reason']}")
        if b["fix"]:
            lines.append(f"    fix: {b['fix']}")
        if b.get("deprecation"):
            lines.append(f"    deprecated: {b['deprecation']}")
        if b.get("kernel_cache"):
            lines.append(f"    {_fmt_cache(b['kernel_cache'])}")
        for t in b.get("device_types", []):
            if t["driver"] != "ok":
                lines.append(f"    {t['name']} driver: {t['driver']}")
            for d in t["devices"]:
                lines.append(f"    {_fmt_device(d)}")
    if report["autoload"].strip().lower() in ("0", "false", "no", "off"):
        lines.append("\nbackend autoload is disabled (TVM_DEVICE_BACKEND_AUTOLOAD=0)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm.backend", description=__doc__)
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    args = parser.parse_args(argv)
    try:
        import tvm  # noqa: F401 - runs discovery
        from tvm.backend._report import collect
    except ImportError as err:
        # E.g. apache-tvm installed over tvm-runtime: its `tvm` imports, our core does not.
        print(f"error: tvm-runtime cannot load: {err}", file=sys.stderr)
        return 2
    report = collect()
    if args.json:
        json.dump(report, sys.stdout, indent=2, default=str)
        sys.stdout.write("\n")
    else:
        print(render(report))
    return 1 if report["conflicts"] else 0


if __name__ == "__main__":
    sys.exit(main())
