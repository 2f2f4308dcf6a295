"""`tooling watch LOG...`: follow logs like `tail -F` and file each failure as it happens.

Each failure the catalogue recognises becomes a draft incident (the drafts of `tooling scan
--write`: status open, severity unknown) for the run (--run) or the cluster (--cluster); the same
failure again while its incident is open adds to the incident's `occurrences` instead. No
progress line for --stall-after minutes (default: the run record's feed.stall_after_minutes,
else 30) drafts a hang, once per stall. Offsets are kept in an offset file (--state; default in
$XDG_STATE_HOME/tooling/watch/), so a restart goes on where the last run stopped.

Output: a line per incident created or updated, or with --json one JSON object per line (JSON
Lines, flushed at once) of the form
``{"action": "created" | "occurrence", "incident": "INC-0004", "path": "incidents/INC-0004.yaml",
"added": 1, "occurrences": 11, ...}``, where ``...`` is the failure as `tooling scan --json`
gives it (title, failure_mode, layer, symptom, signatures, codes, nodes, ranks, detected_at,
count, logs, notes), or for a hang its title, failure_mode, layer, symptom, detected_at,
started_at, stall_after_minutes and last_progress ({log, line, text, seen_at}).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from tooling import arguments
from tooling.commands.scan import placement
from tooling.errors import UsageError
from tooling.messages import counted
from tooling.now import Clock
from tooling.records.findings import shown_path
from tooling.records.runs import STALL_AFTER_MINUTES

if TYPE_CHECKING:
    from tooling.watch.occurrences import Outcome

NAME = "watch"
HELP = ("follow logs like tail -F; file each failure as it happens, a recurrence as an occurrence, a stall as "
        "a hang")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("logs", nargs="+", type=Path, metavar="LOG", help="log files (followed across rotation)")
    place = parser.add_mutually_exclusive_group(required=True)
    place.add_argument("--run", help="the run the incidents belong to (runbooks/runs/<id>.yaml)")
    place.add_argument("--cluster", help="file the incidents with scope cluster, under this cluster name")
    parser.add_argument("--stall-after", type=arguments.minutes, metavar="MINUTES", help="no progress line for this "
                        f"long is a hang (default: the run record's feed.stall_after_minutes, else {STALL_AFTER_MINUTES})")
    parser.add_argument("--once", action="store_true", help="read what the logs hold now, file it, exit")
    parser.add_argument("--interval", type=arguments.seconds, default=1.0, metavar="SECONDS",
                        help="between polls (default: %(default)g)")
    parser.add_argument("--state", type=Path, metavar="FILE", help="the offset file (default: one per repository, "
                        "run and logs in $XDG_STATE_HOME/tooling/watch/)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line per incident created or updated")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    return watch_command(root=root, now=clock(), logs=args.logs, run_id=args.run, cluster=args.cluster,
                         stall_after=args.stall_after, state=args.state, once=args.once,
                         interval=args.interval, as_json=args.json)


def watch_command(*, root: Path, now: datetime, logs: list[Path], run_id: str | None, cluster: str | None,
                  stall_after: float | None, state: Path | None, once: bool, interval: float,
                  as_json: bool) -> int:
    from tooling.analysis.incidents import where_of
    from tooling.watch import state as offsets
    from tooling.watch.files import check_log
    from tooling.watch.watcher import StallRule, Watcher, loop, stall_text

    where = placement(root, run=run_id, cluster=cluster)
    logs = list({str(path.absolute()): path for path in logs}.values())  # a log named twice is followed once
    place = where_of({"run": run_id, "cluster": cluster})
    present = {path: check_log(path, must_exist=False) for path in logs}
    rule = StallRule(root, run_id, stall_after)
    threshold = rule.read(now)  # a run record that does not load is said now, not at the first stall
    if state is not None and not state.parent.is_dir():  # a typo in --state must not make folders
        raise UsageError(f"--state {state}: no folder {state.parent}; expected a file in a folder that exists")
    state_path = state or offsets.default_path(root, place, logs)
    saved = offsets.load(state_path, place)
    for path, exists in present.items():
        if once and not exists and not saved.logs.get(str(path.absolute()), offsets.LogOffsets()).files:
            check_log(path, must_exist=True)
    start = time.monotonic()  # the watch's clock: its start's now moved on as time passes (under --now too)
    with offsets.held(state_path):
        watcher = Watcher(root=root, logs=logs, where=where, state=saved, rule=rule,
                          clock=lambda: now + timedelta(seconds=time.monotonic() - start),
                          emit=_printer(root, as_json), once=once)
        if not once:
            _say(f"following {counted(len(logs), 'log')} for {place}; {stall_text(threshold)}; "
                 f"offsets in {state_path}")
            for path, exists in present.items():
                if not exists:
                    _say(f"{path}: not there yet; waiting for it to appear")
        status = loop(watcher, state_path, once=once, interval=interval, notice=_say)
    if status:
        _say(f"stopped; offsets saved in {state_path}")
    return status


def _say(text: str) -> None:
    print(f"tooling watch: {text}", file=sys.stderr, flush=True)


def _printer(root: Path, as_json: bool) -> Callable[[Outcome], None]:
    def emit(outcome: Outcome) -> None:
        shown = shown_path(outcome.path, root)
        if as_json:
            print(json.dumps({"action": outcome.action, "incident": outcome.incident, "path": str(shown),
                              "added": outcome.added, "occurrences": outcome.occurrences, **outcome.details},
                             ensure_ascii=False), flush=True)
        elif outcome.action == "created":
            many = f" ({outcome.occurrences} occurrences)" if outcome.occurrences > 1 else ""
            print(f"created {shown}: {outcome.details['title']}{many}", flush=True)
        else:
            print(f"updated {shown}: {outcome.occurrences} occurrences (+{outcome.added}): "
                  f"{outcome.details['title']}", flush=True)
    return emit
