"""Determinism as a debugging mode: fast by default, strict while hunting a regression.

Strict mode makes two runs bit-identical where the hardware allows (deterministic kernels,
cuBLAS workspace config, NCCL ring algorithm, seeded RNGs). It costs throughput, so it is a
switch, not a default. Every rank gets the same model seed; data loaders get a per-rank offset
so ranks still read different samples. :func:`rng_states` and :func:`set_rng_states` carry a
rank's generators across a checkpoint, so that a resumed run draws what it would have drawn.
"""
from __future__ import annotations

import os
import random
import sys
import warnings
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Seeds:
    model: int
    data: int  # for this rank's data loader / sampler


def set_determinism(strict: bool, *, seed: int = 42, rank: int = 0) -> Seeds:
    """Switch between fast mode and strict debugging mode; return the seeds to use."""
    if not strict:
        torch.backends.cudnn.benchmark = True
        torch.use_deterministic_algorithms(False)
        return Seeds(seed, seed + rank)
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        # cuBLAS reads its workspace setting when CUDA starts; NCCL reads NCCL_ALGO at init
        warnings.warn("set_determinism(strict=True) called after CUDA was initialised: "
                      "CUBLAS_WORKSPACE_CONFIG and NCCL_ALGO take effect only in a new process; "
                      "call it before any CUDA work", RuntimeWarning, stacklevel=2)
    os.environ["CUBLAS_WORKSPACE_CONFIG"] = ":4096:8"
    os.environ["NCCL_ALGO"] = "Ring"
    torch.use_deterministic_algorithms(True)
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    random.seed(seed)
    torch.manual_seed(seed)  # also seeds every CUDA device
    try:
        import numpy
        numpy.random.seed(seed)
    except ImportError:
        pass
    return Seeds(seed, seed + rank)


def rng_states() -> dict[str, Any]:
    """This process's random generators as they are now (Python, NumPy if present, torch's CPU
    generator and every CUDA device's): saved per rank, they make a resumed rank draw the same
    dropout masks and samples as a run that never stopped."""
    states: dict[str, Any] = {"python": random.getstate(), "torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states["cuda"] = torch.cuda.get_rng_state_all()
    numpy = sys.modules.get("numpy")  # only if the program uses it: importing it costs ~0.1 s
    if numpy is not None:
        states["numpy"] = numpy.random.get_state()
    return states


def set_rng_states(states: dict[str, Any]) -> None:
    """Restore what :func:`rng_states` returned (a generator it did not record is left as it is)."""
    random.setstate(states["python"])
    torch.set_rng_state(states["torch"])
    if "cuda" in states and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])
    if "numpy" in states:
        import numpy
        numpy.random.set_state(states["numpy"])
