"""Self-check of lab 7, the fault campaign, on a real SLURM of emulated nodes that it starts itself
(as root): scripts/slurm-cluster start --nodes 2 --spares 1 (n1, n2 and the spare n3), the node
health check as Prolog and every 5 s, lab 6's training with every automation on (job.sbatch,
train.py), and a seeded schedule of faults injected into it while it trains (campaign.py).

    python labs/07-fault-campaign/check.py                 # the short campaign (CI): NaN, spike, preemption
    python labs/07-fault-campaign/check.py --full          # all seven faults, one every 3 to 5 minutes
    python labs/07-fault-campaign/check.py --full --seed 7 --gap 60 120
    python labs/07-fault-campaign/check.py --automations off --person-delay 60   # the baseline: a person

At the end it prints goodput (kept step time over wall time), the time and steps each fault cost,
how long until the run trained past where it was, and the human actions. With the automations on it
verifies: no human action (between the injections the campaign only looked: sinfo, squeue,
scontrol show); every fault became exactly one incident of its failure mode, ``handled_by`` the
automation that handled it; the run record's timeline tells the story (each requeue and resume,
the drain linking its incident, the end); ``tooling validate`` passes; nothing is left running.
Its cluster has a folder and ports of its own (LAB7_CLUSTER_DIR, default /tmp/playbook-lab7;
LAB7_CLUSTER_PORT, default 18710). The short campaign takes 3 to 6 minutes on a busy 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from campaign import FAULTS, RUN, SHORT, Campaign, Planned, plan  # noqa: E402
from goodput import Injection, Report, measure  # noqa: E402
from inject import run_faults  # noqa: E402
from person import Person  # noqa: E402
from tooling.records.load import load_file  # noqa: E402
from tooling.slurm.wrap import HANG_REQUEUED  # noqa: E402

HANDLED = {"xid": ("gpu.fell-off-bus", "gpu-xid-drain"), "full-fs": ("storage.disk-full", "storage-capacity-guard"),
           "nan": ("training.nan", "nan-guard"), "spike": ("training.divergence", "divergence-rollback"),
           "preemption": ("scheduler.preemption", "preemption-auto-resume"),
           "hang": ("training.hang", "collective-hang-watchdog"),
           "corrupt": ("checkpoint.partial-write", "atomic-checkpoints")}
LOOKS = (("sinfo",), ("squeue",), ("scontrol", "show"))
INJECTORS = (("scancel", "--batch", "--signal=USR1"),)  # and scripts/slurm-cluster inject


@dataclass
class Outcome:
    campaign: Campaign
    injections: list[Injection]
    report: Report
    actions: list[tuple[str, str]]  # the person's, and any command after the start that is neither a look nor an injection


@contextmanager
def ran(planned: list[Planned], *, automations: bool, delay: float = 60.0) -> Iterator[Outcome]:
    """The whole campaign, in a folder and on a cluster of its own, stopped and cleaned after."""
    folder = Path(os.environ.get("LAB7_CLUSTER_DIR", "/tmp/playbook-lab7"))
    with tempfile.TemporaryDirectory(dir=os.environ.get("LAB7_TMP")) as work:
        campaign = Campaign(Path(work), folder=folder, port=int(os.environ.get("LAB7_CLUSTER_PORT", "18710")),
                            automations=automations)
        try:
            campaign.start()
            started = len(campaign.cluster.typed)
            person = None if automations else Person(campaign, delay)
            injections = run_faults(campaign, planned, person)
            typed = [" ".join(c) for c in campaign.cluster.typed[started:] if not _looks_or_injects(c)]
            campaign.stop()
            report = measure(campaign.timeline.read().text, injections)
            actions = (person.actions if person else []) + [("", command) for command in typed if automations]
            yield Outcome(campaign, injections, report, actions)
        except BaseException:
            _diagnose(campaign)
            raise
        finally:
            campaign.close()


def _looks_or_injects(command: tuple[str, ...]) -> bool:
    return (any(command[:len(w)] == w for w in LOOKS + INJECTORS)
            or (command[0].endswith("slurm-cluster") and command[1:2] == ("inject",)))


def table(outcome: Outcome) -> str:
    report = outcome.report
    lines = [f"goodput {report.goodput:.3f}: {report.kept:.1f} s of kept steps in {report.wall:.1f} s of wall time "
             f"(saving checkpoints {report.checkpoints:.1f} s, lost before the first fault {report.before:.1f} s)",
             f"{'fault':<11} {'injected (s)':>12} {'time lost (s)':>13} {'steps lost':>10} {'back after (s)':>14} "
             f"{'human actions':>13}"]
    start = outcome.campaign.timeline.first or 0.0
    for loss in report.losses:
        actions = sum(1 for kind, _ in outcome.actions if kind == loss.injection.kind)
        back = f"{loss.recovered:.1f}" if loss.recovered is not None else "never"
        lines.append(f"{loss.injection.kind:<11} {loss.injection.at - start:>12.1f} {loss.seconds:>13.1f} "
                     f"{loss.steps:>10} {back:>14} {actions:>13}")
    lines.append(f"human actions: {len(outcome.actions)}" + "".join(f"\n  {k or 'typed'}: {w}" for k, w in outcome.actions))
    return "\n".join(lines)


def verify(outcome: Outcome) -> None:
    """With the automations on: no person, each fault its incident, the timeline, validate."""
    campaign, injections = outcome.campaign, outcome.injections
    assert outcome.actions == [], f"human actions: {outcome.actions}"
    incidents = {path.stem: load_file(str(path)).data for path in sorted(campaign.records.glob("incidents/INC-*.yaml"))}
    found = {number: (data["failure_mode"], data.get("handled_by")) for number, data in incidents.items()}
    for injection in injections:
        mine = [number for number, filed in found.items() if filed == HANDLED[injection.kind]]
        assert len(mine) == 1, f"{injection.kind}: expected one incident {HANDLED[injection.kind]}, found {found}"
        print(f"{injection.kind}: {mine[0]} {found.pop(mine[0])[0]}, handled_by {HANDLED[injection.kind][1]}")
    benign = {number: filed for number, filed in found.items()
              if filed == ("training.loss-spike-recovered", "divergence-rollback")
              or (filed == ("storage.disk-full", None) and "full-fs" in {i.kind for i in injections})}
    assert found == benign, f"incidents no fault explains: {dict(found.items() - benign.items())}"
    for number, (mode, handled) in benign.items():
        print(f"also {number} {mode}{f', handled_by {handled}' if handled else ''}: "
              + ("a spike the guard logged and let recover" if handled else "the health check's warning of the full disk"))
    story = timeline(campaign, injections, incidents)
    checked = campaign.tooling("validate")
    print(f"run record: {story}; tooling validate passes{': ' + checked.strip() if checked.strip() else ''}")


def timeline(campaign: Campaign, injections: list[Injection], incidents: dict) -> str:  # type: ignore[type-arg]
    """The run record tells each restart in order (other events may come between)."""
    data = load_file(str(campaign.records / "runbooks" / "runs" / f"{RUN}.yaml")).data
    events = [e for e in data.get("feed", {}).get("events", []) if e["job_id"] == campaign.job]
    seen = [(e["kind"], e.get("state") or e.get("signal") or "", e) for e in events]
    expected: list[tuple[str, str]] = [("start", "")]
    for injection in injections:
        if injection.kind == "preemption":
            expected += [("signal", "USR1"), ("end", "REQUEUED"), ("requeue", ""), ("start", ""), ("resume", "")]
        elif injection.kind in ("xid", "hang"):
            expected += [("drain", "")] if injection.kind == "xid" else []
            expected += [("end", "REQUEUED"), ("requeue", ""), ("start", ""), ("resume", "")]
    expected.append(("end", "COMPLETED"))
    rest = iter(seen)
    assert all(any(kind == w[0] and (not w[1] or state == w[1]) for kind, state, _ in rest) for w in expected), \
        f"expected {expected} in order, the run record has {[(k, s) for k, s, _ in seen]}"
    for event in (e for k, _, e in seen if k == "drain"):
        xid = next(number for number, data in incidents.items() if data["failure_mode"] == "gpu.fell-off-bus")
        node = next(i.node for i in injections if i.kind == "xid")
        assert (event["incident"], event["host"]) == (xid, node), event
    hangs = [e for k, s, e in seen if k == "end" and e.get("detail") == HANG_REQUEUED]
    assert len(hangs) == sum(i.kind == "hang" for i in injections), hangs
    return " -> ".join(f"{kind} {state}".strip() for kind, state, _ in seen)


def keep(outcome: Outcome, path: Path) -> None:
    """The timeline and the injections, from which goodput.measure gives this report again."""
    path.write_text(json.dumps({"steps_log": outcome.campaign.timeline.text,
                                "injections": [asdict(i) for i in outcome.injections],
                                "actions": outcome.actions}, indent=0))


def _diagnose(campaign: Campaign) -> None:
    for path in [*sorted(campaign.out.glob("*.out")), campaign.out / "train.log",
                 campaign.cluster.folder / "log" / "health-check.log"]:
        if path.exists():
            print(f"--- {path}\n{path.read_text()[-3000:]}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help=f"all seven faults ({', '.join(FAULTS)})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gap", type=float, nargs=2, metavar=("MIN", "MAX"), help="seconds between faults")
    parser.add_argument("--automations", choices=["on", "off"], default="on")
    parser.add_argument("--person-delay", type=float, default=60.0, help="seconds before the person acts (off)")
    parser.add_argument("--keep-timeline", type=Path, metavar="FILE",
                        help="write the trainer's timeline and the injections there (JSON), to measure again")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("lab 7 starts its own SLURM daemons and mounts a tmpfs: run it as root", file=sys.stderr)
        return 2
    planned = plan(FAULTS if args.full else SHORT, seed=args.seed,
                   gap=tuple(args.gap) if args.gap else (180.0, 300.0) if args.full else (25.0, 40.0))
    print(f"schedule (seed {args.seed}): " + ", ".join(f"{p.kind} at {p.due:.0f} s" for p in planned), flush=True)
    with ran(planned, automations=args.automations == "on", delay=args.person_delay) as outcome:
        print(table(outcome))
        if args.keep_timeline:
            keep(outcome, args.keep_timeline)
        if args.automations == "on":
            verify(outcome)
    print("stopped the cluster: nothing of it is left running")
    print(f"lab 7 self-check{'' if args.automations == 'on' else ' (automations off)'}: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
