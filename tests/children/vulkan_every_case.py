"""Every Vulkan fixture the device supports, run with numpy-checked outputs in a fresh process
(whatever the TVM_VULKAN_* switches in its environment select), then one more step:

    python -m children.vulkan_every_case staging      # a 72 MiB round trip (two staging pieces)
    python -m children.vulkan_every_case validation   # overlapping views; the layer's messages

Prints ``ALL OK <cases>`` (staging) or ``MESSAGES: <n>`` and the messages (validation).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "vulkan"))

import numpy as np  # noqa: E402
from vk_support import missing_features, vk_cases  # noqa: E402

import tvm  # noqa: E402
from conftest import run_kernel_call  # noqa: E402


def run_every_case(dev) -> None:
    for c in vk_cases():
        if missing_features(c, dev):
            continue
        for call in c["calls"]:
            for key, out, expected in run_kernel_call(tvm, c, call, dev):
                np.testing.assert_allclose(
                    out.numpy().astype("float64"),
                    expected.astype("float64"),
                    rtol=c["rtol"],
                    atol=c["atol"],
                    err_msg=c["name"] + key,
                )


def staging(dev) -> None:
    run_every_case(dev)
    x = np.arange(18 << 20, dtype="float32")  # 72 MiB: copied through staging in two pieces
    np.testing.assert_array_equal(tvm.runtime.tensor(x, dev).numpy(), x)
    print("ALL OK", len(vk_cases()))


def validation(dev) -> None:
    from tvm.backend.vulkan import validation_messages

    assert tvm.get_global_func("tvm_runtime.vulkan.validation_enabled")(), validation_messages()
    run_every_case(dev)
    x = tvm.runtime.tensor(np.arange(100, dtype="float32"), dev)
    x._create_view((50,), "float32", 0).copyto(x._create_view((50,), "float32", 40))
    x.copyto(dev).numpy()
    dev.sync()
    print("MESSAGES:", len(validation_messages()))
    for m in validation_messages():
        print(m)


if __name__ == "__main__":
    {"staging": staging, "validation": validation}[sys.argv[1]](tvm.vulkan(0))
