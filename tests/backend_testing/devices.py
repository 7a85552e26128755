"""A device of the backend under test, or a skip saying why it is missing (a failure where CI
requires the device)."""

from __future__ import annotations

import os
from typing import Any

import pytest


def device_or_skip(tvm: Any, dev: Any, device_type: int, api: str, fallback_reason: str = "") -> Any:
    """`dev`, or a skip with the driver's reason.

    CI sets TVM_TEST_REQUIRE_<API>=1 where the driver is installed on purpose, so a device that
    silently went missing there fails instead of skipping the whole backend.
    """
    if dev.exist:
        return dev
    reason = tvm.get_global_func("runtime.DeviceDriverStatus")(device_type) or fallback_reason
    require = f"TVM_TEST_REQUIRE_{api.upper()}"
    if os.environ.get(require) == "1":
        pytest.fail(f"{require}=1 but no {api} device: {reason}")
    pytest.skip(f"no {api} device: {reason}")
