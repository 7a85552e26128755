"""A deploy script written for apache-tvm 0.27 (nothing tvm-runtime specific).

    python deploy_apache_style.py MODEL.so INPUTS.npz DEVICE in_key,... out_key,...

Loads an exported Relax model, runs ``main`` on the npz inputs, compares with the npz outputs
and times it, using only apache-tvm 0.27's public API.
"""

import sys

import numpy as np

import tvm
from tvm import relax


def main():
    so_path, npz_path, device = sys.argv[1], sys.argv[2], sys.argv[3]
    in_keys, out_keys = sys.argv[4].split(","), sys.argv[5].split(",")
    dev = tvm.device(device, 0)
    ex = tvm.runtime.load_module(so_path)
    vm = relax.VirtualMachine(ex, dev)
    data = np.load(npz_path)
    inputs = [tvm.runtime.tensor(data[k], dev) for k in in_keys]
    out = vm["main"](*inputs)
    outs = list(out) if len(out_keys) > 1 else [out]
    for key, tensor in zip(out_keys, outs):
        np.testing.assert_allclose(tensor.numpy(), data[key], rtol=1e-4, atol=1e-4)
        print(f"MATCH {key} {tuple(tensor.shape)}")

    # The stateful API and the timer of the same release.
    vm2 = tvm.runtime.vm.VirtualMachine(ex, dev, memory_cfg="naive")
    vm2.set_input("main", *inputs)
    vm2.invoke_stateful("main")
    result = vm2.get_outputs("main")
    first = result[0] if isinstance(result, tuple) else result
    np.testing.assert_allclose(first.numpy(), data[out_keys[0]], rtol=1e-4, atol=1e-4)
    timer = vm.time_evaluator("main", dev, number=5, repeat=3)
    print(f"TIME {timer(*inputs).median * 1e6:.1f} us")


if __name__ == "__main__":
    main()
