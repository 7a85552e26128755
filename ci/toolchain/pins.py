"""The pinned toolchain (ci/toolchain/pins.toml): what nox, the build and the release workflow install.

    python ci/toolchain/pins.py build         # the build group as pip requirements, one per line
    python ci/toolchain/pins.py lint
    python ci/toolchain/pins.py docs
    python ci/toolchain/pins.py version ziglang

noxfile.py and ci/build_wheels.py import this module; the release workflow runs it.
"""

from __future__ import annotations

import argparse
import importlib.metadata as md
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # scikit-build-core depends on tomli below 3.11, so build environments have it
    import tomli as tomllib

PINS = Path(__file__).resolve().parent / "pins.toml"


def _groups() -> dict[str, dict[str, str]]:
    return tomllib.loads(PINS.read_text(encoding="utf-8"))


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def version(tool: str) -> str:
    """The pinned version of ``tool`` (a distribution name)."""
    for tools in _groups().values():
        for name, pinned in tools.items():
            if _normalized(name) == _normalized(tool):
                return pinned
    raise KeyError(f"{tool} is not pinned in {PINS}")


def group(name: str) -> list[str]:
    """The tools of a group (``build``, ``lint``, ``docs``) as pinned pip requirements."""
    groups = _groups()
    if name not in groups:
        raise KeyError(f"no group [{name}] in {PINS}; groups: {', '.join(groups)}")
    return [f"{tool}=={pinned}" for tool, pinned in groups[name].items()]


def requirement(tool: str) -> str:
    return f"{tool}=={version(tool)}"


def mismatches(group_name: str) -> list[str]:
    """Tools of a group installed in this Python at another version than the pin (or missing)."""
    found = []
    for tool, pinned in _groups()[group_name].items():
        try:
            installed = md.version(tool)
        except md.PackageNotFoundError:
            installed = None
        if installed != pinned:
            found.append(f"{tool} {installed or '(not installed)'} instead of {pinned}")
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", help="a group (build, lint) or `version`")
    parser.add_argument("tool", nargs="?", help="with `version`: the tool")
    args = parser.parse_args(argv)
    if args.what == "version" and args.tool:
        print(version(args.tool))
    elif args.what in _groups() and not args.tool:
        print("\n".join(group(args.what)))
    else:
        parser.error(f"expected one of {', '.join(_groups())}, or `version TOOL`")


if __name__ == "__main__":
    main()
