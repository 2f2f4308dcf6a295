"""Resilience primitives to lift into your own PyTorch training loop.

- :class:`CheckpointManager`: atomic, checksummed checkpoints; keeps the last N; resumes from
  the newest one that verifies; optionally saves in the background. One writer per folder (a
  lock, taken by the first save); readers such as an evaluation job need none and delete
  nothing; a lost or damaged manifest is rebuilt from the files that verify. Its parts:
  :mod:`~tooling.resilience.manifest` (what the folder holds) and
  :mod:`~tooling.resilience.saving` (how the bytes get there).
- :class:`~tooling.resilience.distributed_checkpoint.DistributedCheckpointManager`: the same
  promises for sharded (FSDP2, DTensor) state through torch.distributed.checkpoint, on every
  rank: a step is committed only once every rank's shards are durable, all ranks fall back
  together, a checkpoint reshards on load, async saves block only for staging. Its parts:
  :mod:`~tooling.resilience.dcp_manifest`, :mod:`~tooling.resilience.dcp_shards` and
  :mod:`~tooling.resilience.dcp_resume` (which step to resume from). Both check room for one
  more checkpoint before writing a byte (:mod:`~tooling.resilience.capacity`: ``StorageFull``);
  :func:`tooling.resilience.retention.prune` keeps a folder's newest N from outside the run.
- :class:`KillSwitch`: ``touch STOP`` saves and exits after the current step, ``touch SAVE``
  saves and carries on.
- :class:`NaNGuard`: catches non-finite loss or gradient norm before the optimizer step.
- :class:`LossSpikeGuard`: a finite loss spike or divergence, from the loss and gradient-norm
  trend (a running median and MAD, warm-up aware); watched for its patience, then rolled back
  to a checkpoint from before it with its data skipped, or the learning rate lowered, or halted
  after repeated spikes; each decision logged with its numbers, in words ``tooling watch`` files.
- :func:`set_determinism`: fast mode or strict debugging mode.
- :func:`tooling.resilience.ranks.any_rank` / :func:`~tooling.resilience.ranks.shutdown` /
  :func:`~tooling.resilience.ranks.exit_rank`: one rank's stop flag reaches every rank; a
  process-group teardown that cannot abort at exit; and for a job whose group outlives it
  (FSDP2, torch.distributed.checkpoint), an exit without the interpreter's teardown.
- :mod:`tooling.resilience.compare`: where two runs first diverge; reproducibility check.
- :mod:`tooling.resilience.data_check`: before launch, the dataset's files as their manifest
  records them, and one batch through the loader (``tooling data-check``).
- :class:`RunReporter`: the training loop's step, loss, throughput and last verified checkpoint
  in the run record, once a minute, from a daemon thread and a writer process that never stall
  training (rank 0).
- :class:`StragglerDetector`: each rank's own step time, compared across ranks every few steps;
  names the rank and node that fell behind in one log line, which ``tooling watch`` files.
- :class:`Watchdog`: each rank's heartbeat for the hang watchdog (``tooling watchdog``), and
  the ways in (faulthandler, the flight recorder) that still work while the rank is stuck.

Each imports torch lazily enough that ``tooling`` itself never needs it; the names above are
imported on first use (``from tooling.resilience import Watchdog``), so importing one
primitive does not import the others. None imports anything of the package but the small file
helpers (:mod:`tooling.fs`): the run reporter's writes go to a process started by name
(``python -m tooling.writers.feed_server``, or another environment's ``tooling report --serve``
where this one has the package without its ``wiki`` extra), so this package lifts into a training
loop alone, beside torch and nothing of the docs stack (tests/test_floors.py says so).
"""
from __future__ import annotations

from importlib import import_module
from typing import Any

_LAZY = {  # name -> module
    "CheckpointManager": "tooling.resilience.checkpoint",
    "DistributedCheckpointManager": "tooling.resilience.distributed_checkpoint",
    "KillSwitch": "tooling.resilience.switch",
    "LossSpikeGuard": "tooling.resilience.loss_spike",
    "NaNGuard": "tooling.resilience.nan_guard",
    "RunReporter": "tooling.resilience.reporter",
    "StragglerDetector": "tooling.resilience.stragglers",
    "Watchdog": "tooling.resilience.watchdog",
    "set_determinism": "tooling.resilience.determinism",
}
__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
