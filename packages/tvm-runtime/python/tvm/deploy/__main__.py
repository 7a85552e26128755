"""python -m tvm.deploy bundle [--backends a,b] [--wheels DIR --platform linux-aarch64] OUT"""

from __future__ import annotations

import argparse
import sys

from . import BundleError, bundle
from ._sources import PLATFORMS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tvm.deploy")
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("bundle", help="write a deploy bundle for a C++ application")
    make.add_argument("out", help="the folder to write (new or empty)")
    make.add_argument("--backends", default="", help="comma-separated backend names, e.g. opencl,vulkan")
    make.add_argument("--wheels", help="take the files from the wheel files in this directory")
    make.add_argument("--platform", choices=sorted(PLATFORMS), help="the wheels' platform (with --wheels)")
    args = parser.parse_args(argv)
    backends = [b for b in args.backends.split(",") if b.strip()]
    try:
        out = bundle(args.out, backends, wheels=args.wheels, platform=args.platform)
    except BundleError as err:
        print(f"python -m tvm.deploy: {err}", file=sys.stderr)
        return 2
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
