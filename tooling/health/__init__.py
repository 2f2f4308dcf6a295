"""The node health check (``tooling health-check``): the cheap checks of the diagnostic ladders
on one node, a drain and an incident when one finds a fault.

- :mod:`~tooling.health.faults`: what a probe found (a :class:`~tooling.health.faults.Fault`:
  failure mode, evidence, lines) and how a probe ended (:class:`~tooling.health.faults.Probe`);
- :mod:`~tooling.health.gpus`: ECC counters, retired pages and remapped rows from
  ``nvidia-smi -q``, processes still holding a GPU;
- :mod:`~tooling.health.kernel`: the kernel's lines since the last check, read through the
  failure-mode catalogue (the scan of ``tooling scan``);
- :mod:`~tooling.health.host`: free space and inodes of the checkpoint and log file systems,
  shared-memory segments no process holds;
- :mod:`~tooling.health.probes`: each probe with its source (the real command, or a stand-in
  file of an emulated node) and its own timeout;
- :mod:`~tooling.health.state`: what a node's checks remember (the kernel line read to, the
  standing faults filed);
- :mod:`~tooling.health.check`: the probes in order, the incidents filed, the node drained.
"""
