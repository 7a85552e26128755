"""Install the out-of-tree plugin packages of tests/plugins into a temporary sys.path entry.

Each gets its own ``<name>-<version>.dist-info`` (METADATA, entry_points.txt, RECORD), as pip
would write it, so discovery sees a real distribution without a wheel build.
"""

from __future__ import annotations

import shutil
from pathlib import Path

PLUGINS = Path(__file__).resolve().parent


def install_plugin(site: Path, package: str, distribution: str, version: str, entry_points: str) -> None:
    """Copy tests/plugins/<package> into ``site`` and write its dist-info."""
    site.mkdir(parents=True, exist_ok=True)
    shutil.copytree(PLUGINS / package, site / package, dirs_exist_ok=True)
    dist_info = site / f"{distribution.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir(exist_ok=True)
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist_info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    files = [p.relative_to(site).as_posix() for p in (site / package).rglob("*.py")]
    files += [f"{dist_info.name}/{name}" for name in ("METADATA", "entry_points.txt", "RECORD")]
    (dist_info / "RECORD").write_text("".join(f"{f},,\n" for f in files), encoding="utf-8")
