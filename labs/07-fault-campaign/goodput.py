"""Goodput of a fault campaign, from the trainer's timeline (OUT/steps.log) and the injections.

Goodput is the share of wall-clock time spent on steps that were kept: the steps of the model that
came out of the run, each once. Wall time runs from the first step's start to the last item's end.
Each logged item lasts from its start to the start of the next item of the same process (the
loop's own bookkeeping between steps belongs to the step), the last of a process to its own end.
Everything else is lost, and each loss is put down to its cause:

- a step trained and later thrown away: to the fault whose window (from its injection to the
  next one's) holds the moment it was thrown away (a resume from an older checkpoint, a rollback);
  of the steps a resume threw away, those after the checkpoint it loaded and up to the newest one
  it passed over (a torn newest checkpoint) go to the ``corrupt`` fault injected before it;
- a batch the NaN guard skipped, a rollback's load, and the time between two processes (the job
  stopped, back in the queue, interpreters importing torch, the checkpoint loaded): to the fault
  whose window holds it;
- saves, refused ones included: ``checkpoints``, the price of being able to resume at all.

A fault's steps lost are its thrown-away steps and skipped batches; the run is back once it has
taken a step after the fault's last loss (the first step of the restart, after the rollback, after
the skipped batch). Pure functions of text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

LINE = re.compile(r"restart \d+ (?:(?P<resumed>resumed) (?P<to>\d+) newest (?P<newest>\d+) batch \d+ at (?P<at>[\d.]+)"
                  r"|(?P<kind>step|saved|refused|rollback|skipped) (?:(?P<step>\d+) )?(?:batch \d+ )?"
                  r"(?P<t0>[\d.]+) (?P<t1>[\d.]+)|stopped \d+ at [\d.]+)")


@dataclass
class Item:
    kind: str  # step, saved, refused, rollback, skipped
    step: int | None  # the step a step line reached, or the one a rollback went back to
    start: float
    end: float
    process: int  # which start of the trainer it belongs to
    kept: bool = False
    left: tuple[float, int, int] = (0.0, 0, 0)  # a thrown-away step: when, back to which step, the newest then


@dataclass(frozen=True)
class Injection:
    kind: str
    at: float  # time.time() of the injection
    detail: str = ""
    position: int | None = None  # the data position of a planted fault; the torn step of a corrupt one
    node: str = ""  # the node of an Xid


@dataclass
class Loss:
    injection: Injection
    seconds: float = 0.0
    steps: int = 0
    recovered: float | None = None  # seconds from the injection to the end of the first step after its last loss
    settled: float = 0.0  # when its last loss ended: a restart's first step, a rollback's load, a skipped batch


@dataclass
class Report:
    wall: float
    kept: float
    checkpoints: float
    losses: list[Loss] = field(default_factory=list)
    before: float = 0.0  # lost before the first fault (there should be none)
    items: list[Item] = field(default_factory=list)  # the timeline, each item marked kept or not

    @property
    def goodput(self) -> float:
        return self.kept / self.wall if self.wall > 0 else 0.0


def parse(text: str) -> tuple[list[Item], list[tuple[int, float, int, int]]]:
    """The items and each start's (process, time, step loaded, newest step it could have loaded)."""
    items: list[Item] = []
    starts: list[tuple[int, float, int, int]] = []
    for line in text.splitlines():
        found = LINE.fullmatch(line)
        if found is None or found["kind"] is None and found["resumed"] is None:
            continue
        if found["resumed"]:
            starts.append((len(starts), float(found["at"]), int(found["to"]), int(found["newest"])))
        elif starts:
            step = int(found["step"]) if found["step"] else None
            items.append(Item(found["kind"], step, float(found["t0"]), float(found["t1"]), len(starts) - 1))
    return items, starts


def _window(injections: list[Injection], moment: float) -> int | None:
    """The index of the fault whose window holds ``moment``; None before the first."""
    held = [i for i, injection in enumerate(injections) if injection.at <= moment]
    return held[-1] if held else None


def measure(text: str, injections: list[Injection]) -> Report:
    items, starts = parse(text)
    injections = sorted(injections, key=lambda i: i.at)
    losses = [Loss(i) for i in injections]
    report = Report(0.0, 0.0, 0.0, losses, items=items)
    if not items:
        return report

    def lose(moment: float, seconds: float, steps: int = 0, to: int | None = None, until: float = 0.0) -> None:
        index = _window(injections, moment) if to is None else to
        if index is None:
            report.before += seconds
        else:
            losses[index].seconds += seconds
            losses[index].steps += steps
            losses[index].settled = max(losses[index].settled, until or moment)

    for n, item in enumerate(items):  # durations: to the next item of the same process
        follower = items[n + 1] if n + 1 < len(items) and items[n + 1].process == item.process else None
        item.end = follower.start if follower else item.end
    lineage = _lineage(items, starts)
    for item in lineage:
        item.kept = True
    report.wall = items[-1].end - items[0].start
    report.kept = sum(i.end - i.start for i in lineage)
    report.checkpoints = sum(i.end - i.start for i in items if i.kind in ("saved", "refused"))
    for item in items:
        if item.kind == "step" and not item.kept:  # thrown away when it last left the lineage
            moment, to, newest = item.left
            torn = _torn(injections, moment) if to < (item.step or 0) <= newest else None
            lose(moment, item.end - item.start, steps=1, to=torn, until=moment)
        if item.kind in ("skipped", "rollback"):
            lose(item.start, item.end - item.start, steps=1 if item.kind == "skipped" else 0, until=item.end)
    for before, after in zip(items, items[1:]):
        if after.process != before.process:
            lose(before.end, after.start - before.end, until=after.start)
    for loss in losses:
        back = next((i for i in items if i.kind == "step" and i.start >= max(loss.settled, loss.injection.at)), None)
        loss.recovered = None if back is None else back.end - loss.injection.at
    return report


def _lineage(items: list[Item], starts: list[tuple[int, float, int, int]]) -> list[Item]:
    """The steps the run kept: a step joins the lineage when it is taken; a resume or a rollback to
    step N puts back the lineage that checkpoint N holds (as it was when N was saved, a step thrown
    away since included: a later resume may go back to a checkpoint an earlier one passed over),
    and every step it drops is marked with when it left, to where, and the newest checkpoint there
    was then (``Item.left``)."""
    lineage: list[Item] = []
    saved: dict[int, list[Item]] = {}  # step -> the lineage its checkpoint holds
    begun = {process: (at, to, newest) for process, at, to, newest in starts}

    def back_to(to: int, moment: float, newest: int) -> None:
        target = saved.get(to, [i for i in lineage if i.step is not None and i.step <= to])
        keep = {id(i) for i in target}
        for gone in lineage:
            if id(gone) not in keep:
                gone.left = (moment, to, newest)
        lineage[:] = target

    seen: set[int] = set()
    for item in items:
        if item.process not in seen:
            seen.add(item.process)
            at, to, newest = begun[item.process]
            back_to(to, at, newest)
        if item.kind == "step":
            lineage.append(item)
        elif item.kind == "saved" and item.step is not None:
            saved[item.step] = list(lineage)
        elif item.kind == "rollback" and item.step is not None:
            back_to(item.step, item.start, item.step)
    return lineage


def _torn(injections: list[Injection], moment: float) -> int | None:
    """The corrupt checkpoint injected last before ``moment``: a resume that passed over the newest
    checkpoint threw away its steps because of it."""
    return next((i for i in range(len(injections) - 1, -1, -1)
                 if injections[i].kind == "corrupt" and injections[i].at <= moment), None)
