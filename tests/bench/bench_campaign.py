"""Benchmark of lab 7's fault campaign (issue 24 item 6): the goodput of the full campaign (all seven
faults, seeded) with every automation on, beside the same campaign (same seed: the same faults in
the same order at the same times) with every automation off, each fault handled by a scripted
person after a fixed delay (labs/07-fault-campaign/person.py).

Run (as root: it starts lab 7's emulated cluster, in a folder and on ports of its own,
/tmp/playbook-bench-campaign and 18810 unless LAB7_CLUSTER_DIR and LAB7_CLUSTER_PORT say otherwise):
    ./dev bench   (or .venv/bin/python tests/bench/bench_campaign.py [--seed N] [--gap MIN MAX]
                   [--person-delay SECONDS] [--record FILE] [--tiny])

About an hour for the two campaigns at the default gap (a fault every 3 to 5 minutes). Printed
for each: the goodput with a line per fault (time and steps lost, time until back, human actions),
then both goodputs and their ratio. Figures, never asserted (lab 7's self-check asserts).

--tiny, the smoke test's size, runs no campaign: even a short one takes minutes (a cluster, and
interpreters importing torch at every restart). It measures a recorded pair of campaigns again
(tests/bench/campaign-timeline.json.gz: each one's timeline, injection times and human actions,
written by --record from this script's full run at the defaults on 2026-12-06: on 0.909, off
0.641, 1.42x, at a load average of 2 to 5 on two cores), so the arithmetic and the report stay
exercised.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
from dataclasses import asdict
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "labs" / "07-fault-campaign"))
from campaign import FAULTS, plan  # noqa: E402  (lab 7's, as its self-check runs it)
from goodput import Injection, Report, measure  # noqa: E402

RECORDED = Path(__file__).with_name("campaign-timeline.json.gz")


def summary(mode: str, report: Report, actions: int) -> str:
    lost = ", ".join(f"{loss.injection.kind} {loss.seconds:.0f} s" for loss in report.losses)
    return (f"automations {mode}: goodput {report.goodput:.3f} ({report.kept:.0f} s kept of {report.wall:.0f} s; "
            f"lost: {lost}; human actions {actions})")


def recorded() -> dict[str, tuple[Report, int]]:
    with gzip.open(RECORDED, "rt") as kept:
        runs = json.load(kept)
    return {mode: (measure(run["steps_log"], [Injection(**i) for i in run["injections"]]), len(run["actions"]))
            for mode, run in runs.items()}


def live(args: argparse.Namespace) -> dict[str, tuple[Report, int]]:
    from check import ran, table  # lab 7's: the campaign in a cluster of its own

    # Not lab 7's own folder and ports: its self-check (tests/labs) stops that cluster, and a
    # benchmark of an hour must survive a test run beside it, as bench_swap's does beside lab 6's.
    os.environ.setdefault("LAB7_CLUSTER_DIR", "/tmp/playbook-bench-campaign")
    os.environ.setdefault("LAB7_CLUSTER_PORT", "18810")

    planned = plan(FAULTS, seed=args.seed, gap=tuple(args.gap))
    print(f"schedule (seed {args.seed}): " + ", ".join(f"{p.kind} at {p.due:.0f} s" for p in planned), flush=True)
    found, kept = {}, {}
    for mode in ("on", "off"):
        with ran(planned, automations=mode == "on", delay=args.person_delay) as outcome:
            print(f"--- automations {mode}\n{table(outcome)}", flush=True)
            found[mode] = (outcome.report, len(outcome.actions))
            kept[mode] = {"steps_log": outcome.campaign.timeline.text,
                          "injections": [asdict(i) for i in outcome.injections], "actions": outcome.actions}
    if args.record:
        with gzip.open(args.record, "wt") as out:
            json.dump(kept, out)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gap", type=float, nargs=2, default=[180.0, 300.0], metavar=("MIN", "MAX"))
    parser.add_argument("--person-delay", type=float, default=60.0)
    parser.add_argument("--record", type=Path, help="write both campaigns' timelines there (gzip JSON)")
    parser.add_argument("--tiny", action="store_true")
    args = parser.parse_args()
    if not args.tiny and os.geteuid() != 0:
        print("bench_campaign: lab 7's campaign starts SLURM daemons and mounts a tmpfs: run it as root "
              "(or --tiny)", file=sys.stderr)
        return 2
    if args.tiny:
        print(f"--tiny: measuring the campaigns recorded in {RECORDED.name} again, running none")
    found = recorded() if args.tiny else live(args)
    for mode, (report, actions) in found.items():
        print(summary(mode, report, actions))
    on, off = found["on"][0].goodput, found["off"][0].goodput
    delay = "a person after a fixed delay" if args.tiny else f"a person after {args.person_delay:g} s"
    print(f"goodput, automations on against off ({delay}): {on:.3f} / {off:.3f} = {on / off:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
