"""`tooling stacks`: py-spy on every rank, stacks grouped, the odd rank out named."""
from __future__ import annotations

import argparse
import json
import shlex
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tooling import arguments
from tooling.errors import UsageError
from tooling.now import Clock
from tooling.records.findings import excerpt

if TYPE_CHECKING:
    from tooling.diagnose.stacks import RankStack

NAME = "stacks"
HELP = "py-spy every rank, group identical stacks, name the hung rank"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--pid", type=arguments.natural, help="PID of torchrun: its children are the ranks")
    where.add_argument("--pids", type=arguments.pid_list, help="rank PIDs, comma-separated")
    where.add_argument("--slurm-job", metavar="JOBID", help="the job's rank processes on this node")
    where.add_argument("--dumps", nargs="+", type=Path, metavar="FILE",
                       help="saved py-spy dumps (text or --json), one per rank, e.g. rank-3.json")
    parser.add_argument("--save-dumps", type=Path, metavar="DIR", help="also keep each rank's dump here")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--incident", dest="run", metavar="RUN", help="draft a hang incident for this run from the result")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return stacks_command(root=root, now=clock(), pid=args.pid, pids=args.pids, slurm_job=args.slurm_job,
                          dumps=args.dumps, save_dir=args.save_dumps, as_json=args.json,
                          incident_run=args.run, argv=argv)


def collect(*, pid: int | None, pids: list[int] | None, slurm_job: str | None, dumps: list[Path] | None,
            save_dir: Path | None) -> list[RankStack]:
    from tooling.diagnose import rank_dumps

    if dumps:
        return rank_dumps.from_files(dumps)
    if pid is not None:
        found = rank_dumps.children(pid) if pid > 0 else []  # the kernel's own threads have parent 0
        if not found:
            raise UsageError(f"--pid {pid}: no child processes; expected the PID of torchrun (or use --pids)")
        return rank_dumps.dump_all(found, save_dir=save_dir)
    if pids:
        gone = [p for p in pids if not Path(f"/proc/{p}").is_dir()]
        if gone:
            raise UsageError(f"--pids: no process {gone[0]} on this machine; expected the PIDs of running ranks")
        return rank_dumps.dump_all(pids, save_dir=save_dir)
    if slurm_job is not None:
        found = rank_dumps.slurm_job_ranks(slurm_job)
        if not found:
            raise UsageError(f"--slurm-job {excerpt(slurm_job)}: no process with that SLURM_JOB_ID and a RANK on "
                             "this machine; expected a job with ranks running here")
        return rank_dumps.dump_all(found, save_dir=save_dir)
    raise UsageError("expected one of --pid, --pids, --slurm-job or --dumps")


def stacks_command(*, root: Path, now: datetime, pid: int | None, pids: list[int] | None, slurm_job: str | None,
                   dumps: list[Path] | None, save_dir: Path | None, as_json: bool, incident_run: str | None,
                   argv: list[str]) -> int:
    from tooling.diagnose.stacks import classes, outliers, report
    from tooling.writers.scaffold import require_run

    if incident_run is not None:
        require_run(root, incident_run)
    stacks = collect(pid=pid, pids=pids, slurm_job=slurm_job, dumps=dumps, save_dir=save_dir)
    found = outliers(stacks)
    if as_json:
        print(json.dumps({
            "classes": [{"ranks": c.ranks, "frames": [str(f) for f in c.frames]} for c in classes(stacks)],
            "outliers": [{"rank": o.rank, "depth": o.depth, "frame": str(o.frame) if o.frame else None,
                          "majority_frame": str(o.majority_frame) if o.majority_frame else None} for o in found],
        }, indent=2))
    else:
        print(report(stacks))
    if incident_run is not None:
        if not found:
            raise UsageError("--incident: every rank has the same stack, so there is no hung rank to report")
        path = _draft(root, now, stacks, incident_run, argv)
        print(f"drafted {path.relative_to(root)}", file=sys.stderr)
    return 0


def _draft(root: Path, now: datetime, stacks: list[RankStack], run: str, argv: list[str]) -> Path:
    from tooling.diagnose.stacks import incident_values
    from tooling.writers.scaffold import new_incident

    return new_incident(root=root, now=now, run=run, actions=[f"tooling {shlex.join(argv)}"],
                        **incident_values(stacks))
