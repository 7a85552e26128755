"""Entry-point discovery of backends (group ``tvm.backends``): it finds, the loader activates.

:func:`discover` creates one record (:mod:`tvm.backend._registry`) per entry point: one that
names a module (``opencl = "tvm.backend.opencl"``) is a hook of ours (protocol ``hook``), one
that names a callable (``tvm_foo = "tvm_foo:_autoload"``) an apache-tvm 0.27 plugin (protocol
``callable``).  It imports nothing the entry points name and sets no status: that is
:mod:`tvm.backend.loader`'s job.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import pathlib
import sys
import warnings

from . import _registry
from ._registry import BackendRecord

GROUP = "tvm.backends"


def _entry_points() -> list[md.EntryPoint]:
    """Entry points of GROUP, in sys.path order.

    ``importlib.metadata.entry_points()`` builds a Distribution for every installed package and
    parses all their entry_points.txt (several ms in a large environment, paid by every
    ``import tvm``).  For plain directories on sys.path we read only the metadata folders whose
    entry_points.txt mentions our group, then let importlib parse those; anything else on
    sys.path (zip files, custom finders) goes through importlib.metadata as usual.
    """
    found: list[md.EntryPoint] = []
    seen: set[str] = set()
    needs_importlib = False
    for entry in sys.path:
        directory = entry or os.getcwd()
        if not os.path.isdir(directory):
            needs_importlib = needs_importlib or bool(entry)
            continue
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            if not name.endswith((".dist-info", ".egg-info")):
                continue
            path = os.path.join(directory, name)
            try:
                with open(os.path.join(path, "entry_points.txt"), encoding="utf-8") as f:
                    text = f.read()
            except OSError:
                continue
            if f"[{GROUP}]" not in text:
                continue
            dist = md.PathDistribution(pathlib.Path(path))
            key = (dist.metadata["Name"] or name).lower().replace("_", "-")
            if key in seen:  # the first one on sys.path wins, as for imports
                continue
            seen.add(key)
            found.extend(ep for ep in dist.entry_points if ep.group == GROUP)
    if needs_importlib:
        known = {(ep.name, ep.value) for ep in found}
        for ep in _importlib_entry_points():
            if (ep.name, ep.value) not in known:
                found.append(ep)
    return found


def _importlib_entry_points() -> list[md.EntryPoint]:
    if sys.version_info >= (3, 10):
        return list(md.entry_points(group=GROUP))
    return list(md.entry_points().get(GROUP, []))


def _dist_of(ep: md.EntryPoint) -> tuple[str | None, str | None]:
    dist = getattr(ep, "dist", None)
    if dist is None:
        return None, None
    return dist.metadata["Name"], dist.version


def discover() -> list[BackendRecord]:
    """Create a record for every entry point of the group that has none yet; returns the new ones.

    The first provider of a name on ``sys.path`` wins, as for imports; another distribution that
    provides the same name is one ``RuntimeWarning`` (and is never imported).
    """
    created: list[BackendRecord] = []
    for ep in _entry_points():
        name = ep.name.lower()
        dist, version = _dist_of(ep)
        existing = _registry.record_of(name)
        if existing is not None:
            if existing.module != ep.value and dist not in existing.shadowed:
                existing.shadowed.append(dist)
                _warn_second_provider(existing, dist)
            continue
        record = BackendRecord(
            name=name,
            module=ep.value,
            distribution=dist,
            version=version,
            # `module:attr` names a callable (apache-tvm's protocol), a bare module our hook.
            protocol="callable" if ep.attr else "hook",
            entry_point=ep,
        )
        created.append(_registry.add(record))
    return created


def _warn_second_provider(existing: BackendRecord, dist: str | None) -> None:
    warnings.warn(
        f"two distributions provide tvm backend '{existing.name}': "
        f"{existing.distribution} and {dist}; using {existing.distribution}. "
        f"Uninstall one of them.",
        RuntimeWarning,
        stacklevel=3,
    )
