"""CUDA events: GPU-side timestamps on a stream, for timing kernels without host syncs."""

from __future__ import annotations

from typing import Any

from ._ffi import cuda_global as _global


class Event:
    """A CUDA event on one device, like ``torch.cuda.Event``.

    >>> start, end = Event(dev), Event(dev)
    >>> start.record(); f(a, b, c); end.record()
    >>> start.elapsed_time(end)  # milliseconds, waits for ``end``
    """

    def __init__(self, dev: Any = None, enable_timing: bool = True):
        if dev is None:
            import tvm

            dev = tvm.cuda(0)
        self.device_id = int(dev.index)
        self.handle = int(_global("event_create")(self.device_id, bool(enable_timing)))

    def record(self, stream: int | None = None) -> None:
        """Record on ``stream`` (default: the device's current stream of this thread)."""
        _global("event_record")(self.handle, self.device_id, stream)

    def synchronize(self) -> None:
        """Wait until the work recorded before this event finished."""
        _global("event_synchronize")(self.handle)

    def elapsed_time(self, end: Event) -> float:
        """Milliseconds between this event and ``end`` (both recorded; waits for ``end``)."""
        return float(_global("event_elapsed_ms")(self.handle, end.handle))

    def __del__(self) -> None:
        handle, self.handle = getattr(self, "handle", 0), 0
        if handle:
            try:
                _global("event_destroy")(handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown: the driver may be gone
                pass
