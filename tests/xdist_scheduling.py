"""pytest-xdist's loadscope scheduling for this suite: named groups of modules share a worker,
and a worker that dies (a crash, or pytest-timeout ending a hung test) costs its one test, never
the run.

pytest-xdist 3.8's loadscope deadlocks when a worker dies: it puts the dead worker's finished
groups back on the queue as empty units no one ever completes, runs the test that killed the
worker again on its replacement, and leaves a worker that was given a single last test waiting
for a second one (pytest-xdist issues 1323, 1327 and 1378; no release has the fixes).  CI then
sits until its time limit instead of reporting the crash.
"""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any


def make_scheduler(config: Any, log: Any, groups: dict[str, str]) -> Any:
    """Loadscope where ``groups`` maps a module path (relative to tests/) to a group name."""
    from xdist.scheduler import LoadScopeScheduling

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            relative = module.split("tests/", 1)[-1] if module.startswith("tests/") else module
            return groups.get(relative, module)

        def remove_node(self, node: Any) -> str | None:
            workload = self.assigned_work.pop(node)
            unfinished = {scope: unit for scope, unit in workload.items() if not all(unit.values())}
            if not unfinished:
                return None
            crashed = next(
                nodeid for unit in unfinished.values() for nodeid, done in unit.items() if not done
            )
            # xdist reports it failed; run again, it would take the replacement down too.
            unfinished[self._split_scope(crashed)][crashed] = True
            self.workqueue.update((s, u) for s, u in unfinished.items() if not all(u.values()))
            for other in self.assigned_work:
                self._reschedule(other)
            return crashed

        def _assign_work_unit(self, node: Any) -> None:
            try:
                super()._assign_work_unit(node)
            except OSError:
                # The worker died after its last report and before this send (stock xdist ends
                # the whole run with an INTERNALERROR here).  The unit stays assigned to it, and
                # its node-down event (remove_node) puts the unit back on the queue.
                pass

        def _reschedule(self, node: Any) -> None:
            super()._reschedule(node)
            # A worker starts a test only once it knows the next one (or that none follows):
            # when the queue has just run dry, tell it so.
            if not self.workqueue and not node.shutting_down:
                node.shutdown()

    return SharedFixtureScheduling(config, log)


def report_dead_worker(node: Any, error: object | None) -> None:
    """How a worker that died mid-run ended, which xdist leaves at "Not properly terminated": a
    signal with no Python traceback above it (SIGKILL) came from outside (the kernel's OOM killer
    or a kill); an exit status means native code called exit()."""
    if error is None:
        return
    popen = getattr(getattr(node.gateway, "_io", None), "popen", None)
    status = None
    if popen is not None:
        try:
            status = popen.wait(timeout=10)
        except Exception:  # noqa: BLE001 - a diagnostic only; never break the run over it
            status = None
    how = (
        f"killed by {signal.Signals(-status).name}"
        if status is not None and status < 0
        else f"exit status {status}"
    )
    meminfo = Path("/proc/meminfo")
    available = "?"
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable"):
                available = line.split(":", 1)[1].strip()
    reporter = node.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(f"worker {node.gateway.id} went down ({how}); memory available now: {available}")
