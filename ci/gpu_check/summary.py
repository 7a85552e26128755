"""The one-page summary of a prepared GPU check (summary.md), from its results.json data."""

from __future__ import annotations

from pathlib import Path


def _machine(results: dict) -> list[str]:
    m = results.get("machine", {})
    lines = ["## Machine", ""]
    lines.append(f"- GPUs: {'; '.join(m.get('gpus') or ['none found by nvidia-smi'])}")
    lines.append(f"- {m.get('platform', '?')}, {m.get('cpus', '?')} CPUs, Python {m.get('python', '?')}")
    pkgs = ", ".join(f"{k} {v}" for k, v in m.get("packages", {}).items()) or "none"
    lines.append(f"- Python packages: {pkgs}")
    nvidia = ", ".join(f"{k} {v}" for k, v in m.get("nvidia_pip", {}).items()) or "none"
    lines.append(f"- NVIDIA pip libraries: {nvidia}")
    libs = [name for name in ("libcuda", "libOpenCL", "libvulkan", "nvidia_opencl") if m.get(name)]
    lines.append(f"- system libraries before the check: {', '.join(libs) or 'none'}")
    lines.append(f"- C compiler: {m.get('cc') or 'none'}; nvcc: {m.get('nvcc') or 'none'}")
    return lines + [""]


def _pytest(name: str, r: dict) -> list[str]:
    head = f"### pytest {name}: {r.get('passed', 0)} passed, {r.get('failed', 0)} failed"
    head += f", {r.get('skipped', 0)} skipped ({r.get('seconds', '?')} s, rc {r.get('rc')})"
    lines = [head, ""]
    if r.get("note"):
        lines += [f"_{r['note']}_", ""]
    for f in r.get("failures", []):
        msg = f["message"].splitlines()[0] if f["message"] else ""
        lines.append(f"- FAILED `{f['test']}`: {msg}")
    for reason, n in sorted(r.get("skips", {}).items(), key=lambda kv: -kv[1]):
        lines.append(f"- skipped ×{n}: {reason}")
    return lines + [""]


def _bench(r: dict) -> list[str]:
    report = r.get("report") or {}
    lines = [f"## CUDA benchmark (rc {r.get('rc')}, {r.get('seconds', '?')} s)", ""]
    if "skipped" in report:
        return lines + [f"skipped: {report['skipped']}", ""]
    results = report.get("results", {})
    if not results:
        return lines + ["no results (see bench-cuda.log)", ""]
    impls = list(results)
    series = sorted({s for per in results.values() for s in per})
    lines.append("| µs per call (median) | " + " | ".join(impls) + " | ours / apache-tvm |")
    lines.append("|---|" + "---|" * (len(impls) + 1))
    ratios = report.get("ratio_ours_over_apache_tvm", {})
    for s in series:
        cells = [f"{results[i][s]['median']:.1f}" if s in results[i] else "-" for i in impls]
        lines.append(f"| {s} | " + " | ".join(cells) + f" | {ratios.get(s, '-')} |")
    for key, value in ratios.items():
        if key not in series:
            lines.append(f"- ratio {key}: {value}")
    for name, meta in report.get("runtimes", {}).items():
        lines.append(f"- {name}: {meta.get('runtime')} on {meta.get('device')}")
    for name, note in report.get("notes", {}).items():
        lines.append(f"- {name}: {note}")
    return lines + [""]


def write_summary(results: dict, path: Path, backends: Path) -> None:
    phases = results.get("phases", {})
    lines = [f"# Prepared GPU check ({results.get('mode')}): {results.get('seconds', '?')} s", ""]
    if results.get("error"):
        lines += [f"**The check stopped early**: {results['error']}", ""]
    lines += _machine(results)
    lines += ["## Installed", ""]
    inst = phases.get("install", {})
    lines.append(
        f"- carried wheels: rc {inst.get('rc')}; apache-tvm runtime-only: rc {inst.get('apache_rc')}"
    )
    loaders = phases.get("loaders", {})
    lines.append(
        f"- Debian loaders unpacked into {loaders.get('root')}: {', '.join(loaders.get('unpacked', []))}"
    )
    for key in ("opencl_icd", "vulkan"):
        if key in loaders:
            lines.append(f"- {loaders[key]}")
    lines.append("")
    if backends.exists():
        lines += ["## python -m tvm.backend", "", "```", backends.read_text().rstrip(), "```", ""]
    lines += ["## Tests", ""]
    for name in ("cuda", "other"):
        if f"pytest-{name}" in phases:
            lines += _pytest(name, phases[f"pytest-{name}"])
    if "bench-cuda" in phases:
        lines += _bench(phases["bench-cuda"])
    path.write_text("\n".join(lines) + "\n")
