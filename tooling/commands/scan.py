"""`tooling scan LOG...`: one draft incident per distinct failure in raw logs; `--write` files them.

Without --write nothing is written: the drafts are shown (or printed as JSON) for a person to
confirm. With --write each becomes incidents/INC-NNNN.yaml, status open, severity unknown (a log
shows what failed, not what it cost the run), for the run (--run) or the cluster (--cluster);
either without --write is refused, as it would change nothing.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tooling.errors import FieldError, UsageError
from tooling.messages import counted
from tooling.now import Clock
from tooling.records.findings import excerpt
from tooling.records.schema import field_spec

if TYPE_CHECKING:
    from tooling.logs.drafts import Draft
    from tooling.logs.scan import ScanResult

NAME = "scan"
HELP = "find failures in raw logs and draft one incident per distinct failure"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", type=Path, metavar="LOG", help="log files (- for standard input)")
    parser.add_argument("--write", action="store_true", help="file the drafts as incidents (default: only show them)")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--run", help="the run the drafts belong to (runbooks/runs/<id>.yaml)")
    where.add_argument("--cluster", help="file the drafts with scope cluster, under this cluster name")
    parser.add_argument("--json", action="store_true", help="machine-readable output")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return scan_command(root=root, now=clock(), logs=args.logs, write=args.write, run=args.run,
                        cluster=args.cluster, as_json=args.json)


def placement(root: Path, *, run: str | None, cluster: str | None) -> dict[str, Any]:
    """Where filed incidents go, checked before the logs are read (a long scan is not lost)."""
    from tooling.writers.scaffold import require_run

    if cluster is not None:
        spec = field_spec("incident", "cluster")
        if not re.fullmatch(spec["pattern"], cluster):
            raise FieldError([("cluster", "expected lower-case letters, digits and dashes, such as rsc-1, "
                                          f"but received {excerpt(cluster)}")])
        return {"run": None, "extra": {"scope": "cluster", "cluster": cluster}}
    if run is None:
        raise UsageError("--write: expected --run RUN or --cluster NAME: where the incidents belong")
    require_run(root, run)
    return {"run": run, "extra": {}}


def _nowhere_to_file(*, run: str | None, cluster: str | None) -> None:
    """Drafts do not depend on where they would be filed: a --run silently ignored would let a
    person believe the incidents were filed for it."""
    for option, value, metavar in (("--run", run, "RUN"), ("--cluster", cluster, "NAME")):
        if value is not None:
            raise UsageError(f"{option} has no effect without --write; expected --write {option} {metavar} "
                             f"to file the drafts, or no {option} to only show them")


def report(result: ScanResult) -> list[str]:
    from tooling.writers.filing import summary

    lines = [f"{log.name}: {counted(log.lines, 'line')}, {log.hits} naming a failure" for log in result.logs]
    lines.append(f"{counted(len(result.drafts), 'distinct failure') if result.drafts else 'no failure found'}" +
                 (f"; {counted(result.consequences, 'more line')} taken as their aftermath (a rank that aborts "
                  "or raises, torchrun reporting it)" if result.consequences else ""))
    for number, draft in enumerate(result.drafts, 1):
        lines += ["", *summary(number, draft)]
    return lines


def scan_command(*, root: Path, now: datetime, logs: list[Path], write: bool, run: str | None,
                 cluster: str | None, as_json: bool) -> int:
    from tooling.logs.draft_book import MAX_DRAFTS
    from tooling.logs.scan import scan_logs
    from tooling.writers.filing import file_all, values_for

    if not write:
        _nowhere_to_file(run=run, cluster=cluster)
    where = placement(root, run=run, cluster=cluster) if write else None
    result = scan_logs(logs, now=now)
    if result.dropped:
        print(f"tooling: warning: more than {MAX_DRAFTS} distinct failures; {result.dropped} lines of "
              "further ones were not drafted", file=sys.stderr)
    created = file_all([values_for(d, where) for d in result.drafts], root=root, now=now) if where else []
    if as_json:
        drafts = [as_json_with(d, created[i] if created else None, root) for i, d in enumerate(result.drafts)]
        print(json.dumps(drafts, indent=2, ensure_ascii=False))
    else:
        print("\n".join(report(result)))
    out = sys.stderr if as_json else sys.stdout
    for path in created:
        print(f"created {path.relative_to(root)}", file=out)
    if where is None and result.drafts and not as_json:
        print("\nnothing written; to file these as incidents: tooling scan LOG... --write --run RUN "
              "(or --cluster NAME)")
    return 0


def as_json_with(draft: Draft, path: Path | None, root: Path) -> dict[str, Any]:
    from tooling.writers.filing import as_json

    data = as_json(draft)
    return {**data, "incident": str(path.relative_to(root))} if path else data
