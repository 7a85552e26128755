"""torch.distributed's gloo allreduce timed like benchmarks/_disco_bench_worker.py times ours:
``python _gloo_allreduce_child.py WORKERS SIZES_JSON REPEATS`` prints
``{"<bytes>": [seconds per call, ...]}`` (rank 0's loop, one value per repeat)."""

from __future__ import annotations

import json
import os
import socket
import sys
import time


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(rank: int, world: int, port: int, plan: list, repeats: int, queue) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    out = {}
    for nbytes, iters in plan:
        t = torch.ones(nbytes // 4, dtype=torch.float32)
        for _ in range(2):
            dist.all_reduce(t)
        samples = []
        for _ in range(repeats):
            dist.all_reduce(t)  # lines the ranks up
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t)
            samples.append((time.perf_counter() - t0) / iters)
        out[str(nbytes)] = samples
    if rank == 0:
        queue.put(out)
    dist.destroy_process_group()


def main() -> None:
    import torch.multiprocessing as mp

    world, plan, repeats = int(sys.argv[1]), json.loads(sys.argv[2]), int(sys.argv[3])
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    port = _free_port()
    procs = [
        ctx.Process(target=_rank_main, args=(r, world, port, plan, repeats, queue)) for r in range(world)
    ]
    for p in procs:
        p.start()
    result = queue.get()
    for p in procs:
        p.join()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
