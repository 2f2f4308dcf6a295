"""How each fault of lab 7's campaign is injected into the running job (campaign.py says what each
one stands for). Every command goes through the campaign's cluster, which keeps what was typed;
an injection returns the moment the fault was there, and what it hit."""
from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import replace
from typing import TYPE_CHECKING

from campaign import AHEAD, SPIKE_LENGTH, STALE, Campaign, Planned, until
from goodput import Injection
from tooling.resilience.dcp_resume import committed_steps

if TYPE_CHECKING:
    from person import Person


def inject(campaign: Campaign, fault: Planned) -> Injection:
    return {"xid": xid, "full-fs": full_fs, "nan": planted, "spike": planted, "preemption": preemption,
            "hang": planted, "corrupt": corrupt}[fault.kind](campaign, fault)


def fired(campaign: Campaign, injection: Injection) -> Injection:
    """A fault planted ahead, once the trainer got there: at the start of the step that read it (a
    hang: the last step's end, before the run stalled), then 40 steps more, so that its handling is
    done before anything else comes (a spike's rollback at its eleventh step)."""
    if injection.kind not in ("nan", "spike", "hang"):
        return injection
    timeline, at = campaign.timeline, injection.position
    assert at is not None

    def reached() -> float | None:
        read = next((t0 for p, t0 in reversed(timeline.read().read_at) if p >= at and t0 >= injection.at), None)
        stalled = time.time() - timeline.last > 3 and timeline.position >= at - 2
        return read if read is not None else timeline.last if stalled else None
    moment = until(reached, f"the trainer to reach the {injection.kind}", 300)
    count = len(timeline.read_at)
    until(lambda: len(timeline.read().read_at) >= count + 40 or time.time() - timeline.last > 3,
          f"the {injection.kind} to be handled", 300)
    return replace(injection, at=moment)


def settled(campaign: Campaign, kind: str, starts: int) -> None:
    """Wait until the fault is over before the next may come: a restart's job trains again (a
    start more in the timeline), a full disk has let a save through again."""
    timeline = campaign.timeline
    if kind in ("xid", "preemption", "hang"):
        until(lambda: timeline.read().starts > starts, f"the job to start again after the {kind}", 900)
    elif kind == "full-fs":
        until(lambda: timeline.read().saves[-1][0] == "saved" or timeline.starts > starts,
              "a save to go through again", 900)


def xid(campaign: Campaign, fault: Planned) -> Injection:
    node = campaign.nodes()[int(fault.target)]  # the job's first or second node (the spare, after a swap)
    at = time.time()  # before the command: what it does may come before it returns
    campaign.cluster.script("inject", node, "xid", "79")
    return Injection("xid", at, f"Xid 79 on {node}", node=node)


def planted(campaign: Campaign, fault: Planned) -> Injection:
    """A fault the trainer reads at a data position a few steps ahead (faults.py)."""
    at = campaign.timeline.read().position + AHEAD * 2  # two ranks read two batches a step
    what = {"kind": fault.kind, "at": at, "rank": int(fault.target or 0), "length": SPIKE_LENGTH}
    inject = campaign.out / "inject"
    temporary = inject / f".{fault.kind}-{at}.tmp"
    temporary.write_text(json.dumps(what))
    planted = time.time()  # fired() moves it to when the trainer got there
    temporary.rename(inject / f"{fault.kind}-{at}.json")  # whole, or not at all
    said = {"nan": f"NaN in rank {fault.target}'s batch at position {at}",
            "spike": f"a bad shard of {SPIKE_LENGTH} steps from position {at}",
            "hang": f"rank {fault.target} stops at position {at}"}[fault.kind]
    return Injection(fault.kind, planted, said, position=at)


def preemption(campaign: Campaign, fault: Planned) -> Injection:
    at = time.time()  # before the command: the signal may end the trainer before scancel returns
    campaign.cluster.sh("scancel", "--batch", "--signal=USR1", campaign.job)
    return Injection("preemption", at, f"USR1 to job {campaign.job}")


def corrupt(campaign: Campaign, fault: Planned) -> Injection:
    """Just after a save: the newest step's largest shard cut to half, as a crash mid-write leaves it
    on a file system that lies about fsync (the pair's crash comes at once)."""
    saves = len(campaign.timeline.read().saves)
    until(lambda: len(campaign.timeline.read().saves) > saves and campaign.timeline.saves[-1][0] == "saved",
          "a save to tear", 120)
    folder = campaign.out / "fs" / "checkpoints"
    newest = committed_steps(folder)[-1]
    shard = max(newest.shards, key=lambda s: s.bytes)
    path, at = folder / newest.folder / shard.file, time.time()
    with path.open("r+b") as torn:
        torn.truncate(shard.bytes // 2)
    return Injection("corrupt", at, f"step {newest.step}'s {shard.file} cut to {shard.bytes // 2} bytes",
                     position=newest.step)


def full_fs(campaign: Campaign, fault: Planned) -> Injection:
    """Another job fills the file system up to its own guard, with checkpoints a little smaller than
    this run's (so that its guard stops where this run's next one cannot fit), and holds its folder
    until this run's next save met the full disk; then it ends, and the retention may prune it."""
    newest = committed_steps(campaign.out / "fs" / "checkpoints")[-1]
    size = sum(s.bytes for s in newest.shards) - 8192
    release = campaign.work / "stale-release"
    release.unlink(missing_ok=True)
    campaign.stale = subprocess.Popen([sys.executable, "-c", STALE, str(campaign.out / "fs" / "old-run"), str(size),
                                       str(release)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert campaign.stale.stdout is not None
    said = campaign.stale.stdout.readline().strip()
    assert said.startswith("full after"), f"the other job: {said!r}"
    filled = time.time()
    saves = len(campaign.timeline.read().saves)
    until(lambda: len(campaign.timeline.read().saves) > saves or not campaign.running(), "the next save", 300)
    release.touch()
    campaign.stale.wait(60)
    return Injection("full-fs", filled, f"another job's {said.removeprefix('full after ')} of {size} bytes")


def run_faults(campaign: Campaign, planned: list[Planned], person: Person | None = None) -> list[Injection]:
    """Each fault once its time has come and the job trains, each followed, with the automations
    off, by the person's handling; returns once the run trains past the last one."""
    until(campaign.ready, "the job to train", 900)
    injections: list[Injection] = []
    paired: tuple[Planned, Injection] | None = None
    reached = 0
    for number, fault in enumerate(planned, 1):
        until(lambda: campaign.training_time() >= fault.due and campaign.ready(), f"fault {number}'s time", 3600)
        reached, starts = campaign.timeline.read().step, campaign.timeline.starts
        injections.append(fired(campaign, inject(campaign, fault)))
        print(f"fault {number} at {campaign.training_time():.0f} s of training, step {reached}: {fault.kind} "
              f"({injections[-1].detail})", flush=True)
        if fault.kind == "corrupt":  # its pair comes at once; the person sees the torn one after the pair's
            paired = (fault, injections[-1])
            continue
        if person is not None:
            person.handle(fault, injections[-1])
            if paired is not None:
                person.handle(*paired)
        settled(campaign, fault.kind, starts)
        paired = None
    # past the last fault and the data planted for any (a spike's bad shard and its rollback included)
    planted = max((i.position + (SPIKE_LENGTH + 40) * 2 for i in injections if i.kind in ("nan", "spike", "hang")
                   and i.position is not None), default=0)
    until(lambda: campaign.ready() and campaign.timeline.step > reached and campaign.timeline.position > planted,
          "the run to train past the last fault", 900)
    return injections
