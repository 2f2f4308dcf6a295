"""Resilience primitives to lift into your own PyTorch training loop.

- :class:`CheckpointManager`: atomic, checksummed checkpoints; keeps the last N; resumes from
  the newest one that verifies; optionally saves in the background. One writer per folder (a
  lock, taken by the first save); readers such as an evaluation job need none and delete
  nothing; a lost or damaged manifest is rebuilt from the files that verify. Its parts:
  :mod:`~tooling.resilience.manifest` (what the folder holds) and
  :mod:`~tooling.resilience.saving` (how the bytes get there).
- :class:`KillSwitch`: ``touch STOP`` saves and exits after the current step, ``touch SAVE``
  saves and carries on.
- :class:`NaNGuard`: catches non-finite loss or gradient norm before the optimizer step.
- :func:`set_determinism`: fast mode or strict debugging mode.
- :func:`tooling.resilience.ranks.any_rank` / :func:`~tooling.resilience.ranks.shutdown`: one
  rank's stop flag reaches every rank; a process-group teardown that cannot abort at exit.
- :mod:`tooling.resilience.compare`: where two runs first diverge; reproducibility check.

Each imports torch lazily enough that ``tooling`` itself never needs it.
"""
