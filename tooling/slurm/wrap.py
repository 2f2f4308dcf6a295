"""``tooling job RUN -- TRAINER...``: the batch script's trainer, with its job in the run's timeline.

Used by an ordinary user in an sbatch script, no root needed (``exec`` it, so that it is the
batch shell and gets ``--signal=B:USR1@...`` itself):

- at start: a ``requeue`` event when SLURM_RESTART_COUNT says the job came back from the queue,
  then ``start`` (job id, array task, node; a job of several nodes names them all);
- each signal the scheduler sends (USR1 before the time limit, TERM on scancel, preemption or the
  limit itself): passed on to the trainer at once, and a ``signal`` event stamped when it arrived
  (:mod:`tooling.slurm.signals`); the events of a poll are one write, and a burst of the same
  signal one event with its count, so a storm costs a few writes, not one per signal;
- with ``--node-watch SECONDS``: a look at the job's nodes every SECONDS, and once more when the
  trainer fails; a node the health check drained for a hardware fault gets a ``drain`` event
  (the node, the drain reason, its incident) and the job is requeued, so that SLURM starts it
  again on a spare (:mod:`tooling.slurm.nodes` says why the job does it, not SLURM), its ``end``
  (REQUEUED) written as soon as it asked, before SLURM's TERM and KILL;
- when the trainer is the hang watchdog that ended a hung job (``tooling watchdog``, exit 75: it
  kept every rank's stack, drafted the hang incident and killed the job for auto-resume): the job
  is requeued, to start again from its last checkpoint, and its end says so;
- at the trainer's exit: ``end``, stamped then, with its exit code, the job's state (scontrol)
  and the run's last reported step; for a failure (FAILED, NODE_FAIL, OUT_OF_MEMORY) a draft
  incident, linked from the event; or, when the trainer still runs ``END_BEFORE_KILL`` seconds
  after the scheduler's TERM (a long save on the way out), ``end`` then, without the exit code,
  so that SLURM's KILL cannot take the wrapper before its record says how the job ended.

The job always comes first: a record that cannot be written is said once on stderr and the
trainer runs, and the wrapper exits with the trainer's status, whatever happened to the record.
"""
from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tooling.fs.lock import LockTimeout
from tooling.records.layout import path_of
from tooling.records.load import load_file
from tooling.records.model import record_time
from tooling.resilience.watchdog import EXIT_HANG
from tooling.slurm.ending import end_event, incident_of
from tooling.slurm.job import Job, end_state, exit_status, show
from tooling.slurm.nodes import Lost, NodeWatch, requeue
from tooling.slurm.signals import Arrival, Catcher, signal_events
from tooling.writers.edit import StillChanging
from tooling.writers.feed_writes import feed_run

POLL_SECONDS = 0.2
HANG_REQUEUED = (f"the hang watchdog ended the job (exit {EXIT_HANG}; its incident has every rank's stack): "
                 "requeued, to resume from the last checkpoint")
RETRY_SECONDS, RETRY_PAUSE = 30.0, 0.5
END_BEFORE_KILL = 5.0  # seconds after the scheduler's TERM: the end is written, whether the trainer has exited or not
STILL_STOPPING = (f"the trainer still ran {END_BEFORE_KILL:g} s after the scheduler's TERM: this end was written "
                  "then, before SLURM's KILL, without the trainer's exit code")


class Recorder:
    """Writes events of one job into one run record; a failure is said once and never raised.

    An event happens once, unlike the reporter's progress: a write that lost a race (the lock
    held by the trainer's reporter, a person's editor saving meanwhile) is tried again for up to
    ``RETRY_SECONDS``.
    """

    def __init__(self, *, root: Path, run: str, clock: Callable[[], datetime]) -> None:
        self.root, self.run, self.clock = root, run, clock
        self._said: set[str] = set()

    def events(self, *events: dict[str, Any]) -> None:
        """Write ``events`` in one locked write; those without an ``at`` happen now."""
        now, deadline = self.clock(), time.monotonic() + RETRY_SECONDS  # a retried event keeps its time
        items = [{k: v for k, v in {"at": now, **e}.items() if v is not None} for e in events]
        while True:
            try:
                feed_run(self.root, self.run, now=now, events=items, lock_timeout=5.0)
                return
            except Exception as exc:  # the job goes on whatever the record does
                if not isinstance(exc, (LockTimeout, StillChanging)) or time.monotonic() > deadline:
                    self.warn(f"could not write run record {self.run} under {self.root} (the job goes on): {exc}")
                    return
            time.sleep(RETRY_PAUSE)

    def warn(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            print(f"tooling job: {message}", file=sys.stderr, flush=True)

    def last_step(self) -> int | None:
        """The step the run record last heard of (from the reporter), if any."""
        try:
            data = load_file(str(path_of(self.root, self.run, kinds=["run"]))).data
        except Exception:  # only a nicety of the end event
            return None
        step = data.get("progress", {}).get("step") if isinstance(data, dict) else None
        return step if isinstance(step, int) else None


def run_job(command: list[str], *, root: Path, run: str, log: Path | None = None,
            clock: Callable[[], datetime], catcher: Catcher, job: Job | None = None,
            watch_every: float = 0.0) -> int:
    """Run ``command`` as the job's trainer, recording the job; returns the trainer's exit status.
    ``catcher`` has caught the job's signals since the process began; its caller, which installed
    it, gives the handlers back (or, about to exit, ignores what comes late: Catcher.retire).
    ``watch_every``: seconds between looks at the job's nodes (:mod:`tooling.slurm.nodes`; 0: none)."""
    recorder = Recorder(root=root, run=run, clock=clock)
    job = job or Job.from_environment()
    if job is None:
        recorder.warn("not inside a SLURM job (no SLURM_JOB_ID): running the command without recording it")
        catcher.started(subprocess.Popen(command))
        return _wait(catcher, lambda batch: None)[0]  # a trainer killed by SIGKILL: 137, as inside a job
    recorder.events(*job.started())
    catcher.started(subprocess.Popen(command))
    watch = NodeWatch(job.nodes, watch_every) if watch_every > 0 and job.nodes else None
    ending = _Ending()
    status, written = _wait(catcher, lambda batch: recorder.events(*_signals(job, batch)),
                            lambda force: _while_running(recorder, job, ending, watch, catcher, log, force=force))
    if ending.written:  # while the trainer ran: the signals not written yet (SLURM's TERM), after it
        recorder.events(*_signals(job, catcher.arrived[written:]))
        return status
    hung = status == EXIT_HANG and not ending.requeued and _requeue_after_hang(recorder, job)
    _end(recorder, job, status, catcher, written=written, ended=clock(), log=log,
         requeued=ending.requeued or hung, detail=HANG_REQUEUED if hung else None)
    return status


def _wait(catcher: Catcher, write: Callable[[list[Arrival]], None],
          look: Callable[[bool], object] = lambda force: None) -> tuple[int, int]:
    """Wait for the trainer, handing ``write`` the signals as they come: all that arrived since
    the last write at once, and calling ``look`` at each poll (with True once, when the trainer
    failed on its own). Returns its exit status and how many arrivals were written (those after
    go with the end event)."""
    child, written = catcher.child, 0
    assert child is not None
    while True:
        try:
            status = exit_status(child.wait(timeout=POLL_SECONDS))
            if status != 0 and "TERM" not in catcher.names():
                look(True)  # a rank that died with its GPU: its node may be drained by now
            return status, written
        except subprocess.TimeoutExpired:
            pass
        catcher.pass_waiting()
        batch = catcher.arrived[written:]
        if batch:
            written += len(batch)
            write(batch)
        look(False)


@dataclass
class _Ending:
    """What the wrapper knows of the job's end while its trainer runs."""
    requeued: bool = False  # it asked SLURM to requeue the job (a drained node): the end is that
    written: bool = False  # the end is in the record already, written before the trainer exited
    term_since: float | None = None  # when it first saw the scheduler's TERM (monotonic)


def _while_running(recorder: Recorder, job: Job, ending: _Ending, watch: NodeWatch | None, catcher: Catcher,
                   log: Path | None, *, force: bool) -> None:
    """At each poll: a look at the job's nodes, and the job's end written before SLURM's KILL.

    SLURM kills the job KillWait seconds after its TERM (30 s by default; some sites set less),
    and a trainer's shutdown, then a record written after it, did not always fit in them on a
    busy machine. So the end is written at once when this wrapper asked for the requeue, and
    ``END_BEFORE_KILL`` seconds after the scheduler's TERM when the trainer still runs; that end
    has no exit code. ``force``: the trainer has exited (failed), its end is left to the caller."""
    if ending.written or ending.requeued:
        return
    if _look(recorder, job, watch, force=force):
        ending.requeued, ending.written = True, not force
        if not force:
            recorder.events(job.event("end", state="REQUEUED", step=recorder.last_step()))
        return
    if force or "TERM" not in catcher.names():
        return
    ending.term_since = ending.term_since or time.monotonic()
    if time.monotonic() - ending.term_since >= END_BEFORE_KILL:
        _end(recorder, job, None, catcher, written=len(catcher.arrived), ended=recorder.clock(), log=log,
             detail=STILL_STOPPING)
        ending.written = True


def _look(recorder: Recorder, job: Job, watch: NodeWatch | None, *, force: bool) -> bool:
    """When the watch finds nodes of the job drained for a hardware fault: their drains in the
    record (each with its incident), then the job's requeue, so that SLURM starts it again on
    nodes in service (the spares). True when it asked for the requeue."""
    found = watch.look(force=force) if watch is not None else []
    if watch is not None and watch.problem:
        recorder.warn(f"could not look at the job's nodes ({watch.problem}); looking again later")
    if not found:
        return False
    requeueable = show(job.slurm_id).get("Requeue") == "1"
    then = ("requeueing the job, so that it starts again without it" if requeueable else
            "the job cannot be requeued (sbatch --no-requeue): it goes on without a swap")
    recorder.events(*(_drain_event(recorder.root, job, gone, then) for gone in found))
    error = requeue(job.slurm_id) if requeueable else None
    if error is not None:
        recorder.warn(f"could not requeue job {job.job_id} after the drain of {found[0].node}: {error}")
    return requeueable and error is None


def _requeue_after_hang(recorder: Recorder, job: Job) -> bool:
    """The hang watchdog ended the trainer: back to the queue, to resume from the last checkpoint
    (a ``--no-requeue`` job ends as it is). True when it asked for the requeue."""
    if show(job.slurm_id).get("Requeue") != "1":
        return False
    error = requeue(job.slurm_id)
    if error is not None:
        recorder.warn(f"could not requeue job {job.job_id} after the hang watchdog ended it: {error}")
    return error is None


def _drain_event(root: Path, job: Job, gone: Lost, then: str) -> dict[str, Any]:
    """A ``drain`` event of node ``gone``, at the time SLURM says it was drained, linking its
    incident where the run's repository holds it."""
    incident = gone.failure.incident
    held = incident is not None and (root / "incidents" / f"{incident}.yaml").is_file()
    return {**job.event("drain", host=gone.node, detail=f"{gone.reason}; {then}", incident=incident if held else None),
            **({"at": gone.since} if gone.since is not None else {})}


def _signals(job: Job, batch: list[Arrival]) -> list[dict[str, Any]]:
    return [job.event(**event) for event in signal_events(batch, time_text=record_time)]


def _end(recorder: Recorder, job: Job, status: int | None, catcher: Catcher, *, written: int, ended: datetime,
         log: Path | None, requeued: bool = False, detail: str | None = None) -> None:
    """The end event, at ``ended``, in one write with the signals not written yet. ``requeued``:
    this wrapper asked for the job's requeue (scontrol may not show it yet while the job ends);
    ``detail``: why, where the event should say it; ``status`` None: the trainer still runs."""
    info = show(job.slurm_id)
    state = "REQUEUED" if requeued else end_state(job, info, exit_code=status, terminated="TERM" in catcher.names())
    incident = incident_of(state, root=recorder.root, now=ended, run=recorder.run, job=job, exit_code=status,
                           log=log or (Path(info["StdOut"]) if info.get("StdOut") else None), warn=recorder.warn)
    last = {**end_event(job, exit_code=status, state=state, step=recorder.last_step(), incident=incident),
            "detail": detail}
    # a signal that came after the end (while scontrol answered) is listed after it
    recorder.events(*sorted([*_signals(job, catcher.arrived[written:]), {**last, "at": ended}], key=lambda e: e["at"]))
