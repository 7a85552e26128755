"""Generate ``tests/vm/artifacts/working_memory_cpu.so`` with apache-tvm 0.27.

A model whose working memory is large and known, for ``tvm.runtime.release_idle_memory``:
``main(x[1, 16, 256, 256])`` (4 MB) is two 3x3 max-pools (stride 1, padding 1) in a row. Two
pools do not fuse, so the VM holds the first one's result in a storage of its own (4 MB), and
each pool's padded input is a kernel workspace (4.2 MB); the result is the returned tensor. Run
with a Python that has ``apache-tvm==0.27.0.post1``::

    /work/venvs/tvm027/bin/python tests/vm/make_working_memory_fixture.py [--out DIR]

The artifact is run once with apache-tvm's own VM and compared with numpy before it is written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import tvm
from tvm import relax
from tvm.script import ir as I  # noqa: N812
from tvm.script import relax as R  # noqa: N812

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vm_models import WORKING_MEMORY_SHAPE, expected_working_memory  # noqa: E402


@I.ir_module
class WorkingMemory:
    @R.function
    def main(x: R.Tensor(WORKING_MEMORY_SHAPE, "float32")):  # noqa: N805
        a = R.nn.max_pool2d(x, pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1])
        b = R.nn.max_pool2d(a, pool_size=[3, 3], strides=[1, 1], padding=[1, 1, 1, 1])
        return b


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "artifacts")
    args = parser.parse_args(argv)
    path = args.out / "working_memory_cpu.so"
    relax.build(WorkingMemory, target="llvm").export_library(str(path))

    x = np.random.default_rng(0).standard_normal(WORKING_MEMORY_SHAPE).astype("float32")
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(path)), tvm.cpu())
    got = vm["main"](tvm.runtime.tensor(x)).numpy()
    np.testing.assert_array_equal(got, expected_working_memory(x))
    print(f"wrote {path} ({path.stat().st_size} bytes), checked against numpy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
