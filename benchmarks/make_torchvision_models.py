"""Compile real torchvision models with apache-tvm 0.27 for the load-path benchmark.

    python benchmarks/make_torchvision_models.py --out DIR [--models mobilenet_v3_small resnet10]

Run with a python that has apache-tvm 0.27, torch and torchvision (the `bench` session makes one).
Each model gets random weights (fixed seed), is exported with torch.export, imported by apache-tvm's
own Relax frontend with its weights embedded in the artifact (what a deploy script ships), compiled
for `llvm` and written as DIR/<model>.so, with DIR/<model>.npz holding an input and the output that
apache-tvm's runtime computes for it (the benchmark checks both runtimes against it before timing).
Existing files are kept: generating takes minutes, the benchmark seconds.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torchvision
from torchvision.models.resnet import BasicBlock, ResNet

import tvm
from tvm import relax
from tvm.relax.frontend.torch import from_exported_program


def _resnet10() -> torch.nn.Module:
    # The smallest member of the ResNet family: one basic block per stage (4.9M parameters).
    return ResNet(BasicBlock, [1, 1, 1, 1])


MODELS = {
    "mobilenet_v3_small": lambda: torchvision.models.mobilenet_v3_small(weights=None),
    "resnet10": _resnet10,
    "resnet18": lambda: torchvision.models.resnet18(weights=None),
    "resnet50": lambda: torchvision.models.resnet50(weights=None),
    "vit_b_16": lambda: torchvision.models.vit_b_16(weights=None),
}


def compile_model(name: str, out: Path) -> dict:
    torch.manual_seed(0)
    model = MODELS[name]().eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((1, 3, 224, 224), dtype=np.float32))
    with torch.no_grad():
        exported = torch.export.export(model, (x,))
        mod = from_exported_program(exported, keep_params_as_input=False)
    exe = tvm.compile(mod, target="llvm")
    so = out / f"{name}.so"
    exe.export_library(str(so))
    # The reference output comes from apache-tvm's runtime on the exported file.
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(so)), tvm.cpu())
    y = vm["main"](tvm.runtime.tensor(x.numpy()))
    y = y[0] if isinstance(y, (list, tuple)) or type(y).__name__ == "Array" else y
    np.savez(out / f"{name}.npz", x=x.numpy(), y=y.numpy())
    params = sum(p.numel() for p in model.parameters())
    return {"model": name, "parameters": int(params), "so_bytes": so.stat().st_size}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=list(MODELS))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.models:
        if (args.out / f"{name}.so").exists() and (args.out / f"{name}.npz").exists():
            continue
        info = compile_model(name, args.out)
        print(json.dumps(info), flush=True)


if __name__ == "__main__":
    main()
