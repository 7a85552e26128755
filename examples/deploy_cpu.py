"""A deploy script written for apache-tvm 0.27's runtime API; runs unchanged on tvm-runtime.

Usage: python examples/deploy_cpu.py path/to/matmul.so
(tests/artifacts/cpu/matmul.so was exported by apache-tvm 0.27: C[64,48] = A[64,32] @ B[32,48])
"""

import sys

import numpy as np

import tvm

dev = tvm.cpu(0)
lib = tvm.runtime.load_module(sys.argv[1])
a_np = np.random.uniform(size=(64, 32)).astype("float32")
b_np = np.random.uniform(size=(32, 48)).astype("float32")
a = tvm.runtime.tensor(a_np, dev)
b = tvm.runtime.tensor(b_np, dev)
c = tvm.runtime.empty((64, 48), "float32", dev)
lib["matmul"](a, b, c)
np.testing.assert_allclose(c.numpy(), a_np @ b_np, rtol=1e-5)
evaluator = lib.time_evaluator("matmul", dev, number=20, repeat=3)
print("matmul OK,", evaluator(a, b, c))
