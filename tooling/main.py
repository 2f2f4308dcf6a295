"""The `tooling` command line: parse arguments and dispatch, nothing else."""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import NoReturn, Sequence

from tooling.slurm.signals import catch_early

# first of all, before the imports that take most of starting up: a `tooling job` wrapping a
# trainer catches the scheduler's signals from its first moments (a USR1 must not kill it)
catch_early(sys.argv)

from tooling import arguments  # noqa: E402
from tooling.error_handler import run_handled  # noqa: E402
from tooling.errors import UsageError  # noqa: E402
from tooling.records.runs import SAMPLE_EVERY, STALL_AFTER_MINUTES  # noqa: E402


class _Parser(argparse.ArgumentParser):
    """argparse, answering a bad command line in one line (no usage block; `--help` has it) and
    a wrong choice in the house's words; a command's parser too begins ``tooling: error:`` (not
    argparse's ``tooling report: error:``), the command named where the error is."""

    def error(self, message: str) -> NoReturn:
        choice = _INVALID_CHOICE.search(message)
        if choice:
            message = (f"{message[:choice.start()]}Expected one of: [{choice['choices']}] "
                       f"but received: {choice['value']}")
        command = self.prog.removeprefix(PROG).strip()  # a command's parser is named 'tooling report'
        self.exit(2, f"{PROG}: error: {command + ': ' if command else ''}{message}\n")


PROG = "tooling"


_INVALID_CHOICE = re.compile(r"invalid choice: (?P<value>.*) \(choose from (?P<choices>.*)\)\Z")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog=PROG, description=(
        "Resilience playbook: records of incidents, postmortems and training runs, "
        "validated and rendered into a site."))
    parser.add_argument("--root", type=Path, help="repository root (default: found upward from here)")
    parser.add_argument("--now", type=arguments.timestamp, metavar="TIME",
                        help="the time every command takes as now, e.g. 2026-11-29T12:00:00+00:00 "
                             "(default: the clock; for reproducible builds and tests)")
    # --now is also accepted after the command; SUPPRESS keeps the top-level value when it is not
    common = _Parser(add_help=False)
    common.add_argument("--now", type=arguments.timestamp, default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add in (_records, _feeds, _logs, _site, _analyses, _diagnosis):
        add(sub, common)
    return parser


def _records(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    check = sub.add_parser("validate", parents=[common], help="check records against their schemas and each other")
    check.add_argument("paths", nargs="*", help="files or folders (default: incidents/ and runbooks/)")
    check.add_argument("--strict", action="store_true", help="treat warnings as errors")
    check.add_argument("-j", "--jobs", type=arguments.positive, help="worker processes (default: one per core)")

    incident = sub.add_parser("new-incident", parents=[common], help="scaffold incidents/INC-NNNN.yaml")
    incident.add_argument("--title")
    incident.add_argument("--run", help="id of the training run (runbooks/runs/<id>.yaml)")
    incident.add_argument("--severity", help="sev1 | sev2 | sev3 | sev4")
    incident.add_argument("--symptom", help="nan | hang | divergence | crash | slowdown | data | infra | checkpoint | other")
    incident.add_argument("--layer", help="layer of the stack where the cause sat (default: unknown)")
    incident.add_argument("--signature", action="append", dest="signatures", metavar="TEXT",
                          help="verbatim error signature from the logs (repeatable)")
    incident.add_argument("--node", action="append", dest="nodes", metavar="HOST", help="affected node (repeatable)")
    incident.add_argument("--rank", action="append", dest="ranks", type=arguments.natural, metavar="N",
                          help="affected rank (repeatable)")
    incident.add_argument("--detected-at", help="when it was noticed (default: now), e.g. 2026-03-14T02:47:00+00:00")
    incident.add_argument("--reported-by", help="who files it (default: $USER)")
    incident.add_argument("--from-log", type=Path, metavar="FILE",
                          help="fill signatures, failure mode, nodes, ranks and times from a log (dmesg, NCCL, "
                               "SLURM output, tracebacks); one incident per distinct failure found")

    postmortem = sub.add_parser("new-postmortem", parents=[common], help="scaffold incidents/PM-NNNN.yaml for incidents")
    postmortem.add_argument("incidents", nargs="+", metavar="INCIDENT-ID")
    postmortem.add_argument("--title")
    postmortem.add_argument("--author", action="append", dest="authors", metavar="NAME")

    run = sub.add_parser("new-run", parents=[common], help="scaffold runbooks/runs/NAME.yaml, the live page of a training run")
    run.add_argument("name", metavar="NAME", help="run id: lower-case letters, digits and dashes")
    run.add_argument("--title")
    run.add_argument("--owner")

    edit = sub.add_parser("set", parents=[common], help="change fields of a record in place, keeping its comments")
    edit.add_argument("record", metavar="RECORD-ID")
    edit.add_argument("assignments", nargs="+", metavar="FIELD=VALUE",
                      help="a field (dotted for nested) and a YAML value, e.g. status=resolved")
    edit.add_argument("--strict", action="store_true",
                      help="refuse an edit that brings a warning too, as validate --strict would fail it")


def _feeds(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    report = sub.add_parser("report", parents=[common], help="record a run's progress, checkpoint or scheduler event "
                            "in its run record (for non-Python loops and hooks)")
    report.add_argument("run", metavar="RUN", help="run id (runbooks/runs/<id>.yaml)")
    report.add_argument("--step", type=arguments.natural, help="the step reached")
    report.add_argument("--loss", type=arguments.finite, help="training loss at that step")
    report.add_argument("--tokens", type=arguments.natural, help="tokens seen so far")
    report.add_argument("--tokens-per-s", type=arguments.non_negative, help="throughput, tokens per second for the whole job")
    report.add_argument("--total-steps", type=arguments.positive, help="planned steps")
    report.add_argument("--checkpoint-step", type=arguments.natural, help="step of the newest good checkpoint")
    report.add_argument("--checkpoint-path", help="where that checkpoint is")
    report.add_argument("--checkpoint-verified", action="store_true", help="its checksum was verified after writing")
    report.add_argument("--event", choices=["start", "signal", "requeue", "end"], help="a scheduler event")
    report.add_argument("--job-id", help="the job's id (default: $SLURM_JOB_ID, or ARRAY_TASK for an array task)")
    report.add_argument("--host", help="node of the event")
    report.add_argument("--exit-code", type=int, help="exit code, for --event end (128+N for signal N)")
    report.add_argument("--state", help="SLURM state, for --event end (COMPLETED, FAILED, TIMEOUT, ...)")
    report.add_argument("--signal", help="signal name, for --event signal (USR1, TERM)")
    report.add_argument("--incident", help="the incident drafted for a failed end, for --event end")
    report.add_argument("--detail", help="anything else worth one line, for --event")
    report.add_argument("--sample-every", type=arguments.seconds, default=SAMPLE_EVERY, metavar="SECONDS",
                        help="keep one progress sample per this many seconds (default: %(default)g)")

    job = sub.add_parser("job", parents=[common], help="run a SLURM job's trainer; its start, signals, requeue, "
                         "end and a failure's draft incident go into the run record")
    job.add_argument("run", metavar="RUN", help="run id (runbooks/runs/<id>.yaml)")
    job.add_argument("--log", type=Path, metavar="FILE",
                     help="the job's output, read for the failure when it fails (default: its StdOut, from scontrol)")
    hook = job.add_mutually_exclusive_group()
    hook.add_argument("--prolog", dest="hook", action="store_const", const="prolog",
                      help="record the job's start, as slurmd's Prolog (scripts/slurm/prolog)")
    hook.add_argument("--epilog", dest="hook", action="store_const", const="epilog",
                      help="record the job's end, as slurmd's Epilog (scripts/slurm/epilog)")
    job.add_argument("trainer", nargs="*", metavar="-- COMMAND", help="the trainer and its arguments, after --")


def _logs(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    scan = sub.add_parser("scan", parents=[common], help="find failures in raw logs and draft one incident per distinct failure")
    scan.add_argument("logs", nargs="+", type=Path, metavar="LOG", help="log files (- for standard input)")
    scan.add_argument("--write", action="store_true", help="file the drafts as incidents (default: only show them)")
    where = scan.add_mutually_exclusive_group()
    where.add_argument("--run", help="the run the drafts belong to (runbooks/runs/<id>.yaml)")
    where.add_argument("--cluster", help="file the drafts with scope cluster, under this cluster name")
    scan.add_argument("--json", action="store_true", help="machine-readable output")

    watch = sub.add_parser("watch", parents=[common], help="follow logs like tail -F; file each failure as it happens, "
                           "a recurrence as an occurrence, a stall as a hang")
    watch.add_argument("logs", nargs="+", type=Path, metavar="LOG", help="log files (followed across rotation)")
    place = watch.add_mutually_exclusive_group(required=True)
    place.add_argument("--run", help="the run the incidents belong to (runbooks/runs/<id>.yaml)")
    place.add_argument("--cluster", help="file the incidents with scope cluster, under this cluster name")
    watch.add_argument("--stall-after", type=arguments.minutes, metavar="MINUTES", help="no progress line for this long is a "
                       f"hang (default: the run record's feed.stall_after_minutes, else {STALL_AFTER_MINUTES})")
    watch.add_argument("--once", action="store_true", help="read what the logs hold now, file it, exit")
    watch.add_argument("--interval", type=arguments.seconds, default=1.0, metavar="SECONDS",
                       help="between polls (default: %(default)g)")
    watch.add_argument("--state", type=Path, metavar="FILE", help="the offset file (default: one per repository, "
                       "run and logs in $XDG_STATE_HOME/tooling/watch/)")
    watch.add_argument("--json", action="store_true", help="one JSON object per line per incident created or updated")

    imports = sub.add_parser("import", parents=[common], help="bring a team's incident history in from CSV, JSONL or a markdown table")
    imports.add_argument("file", type=Path, metavar="FILE")
    imports.add_argument("--mapping", type=Path, metavar="MAP.yaml", help="which column is which field, and how values map")
    imports.add_argument("--format", choices=["csv", "jsonl", "markdown"], help="(default: from the file name)")
    imports.add_argument("--dry-run", action="store_true", help="report what would be written, write nothing")

    export = sub.add_parser("export", parents=[common], help="write every incident as one JSON object per line")
    export.add_argument("--jsonl", action="store_true", required=True, help="JSON Lines (the only format so far)")
    export.add_argument("--output", "-o", type=Path, metavar="FILE", help="(default, or -: standard output)")


def _site(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    build = sub.add_parser("build", parents=[common], help="validate, render the generated pages and build the site (strict)")
    build.add_argument("--site-dir", type=Path, help="where to write the site (default: site/)")
    build.add_argument("--render-only", action="store_true", help="only write docs/generated/, skip mkdocs")

    serve = sub.add_parser("serve", parents=[common], help="build, serve with live reload, re-render when a record changes")
    serve.add_argument("--dev-addr", default="127.0.0.1:8000", type=arguments.address, help="host:port (default: %(default)s)")

    publish = sub.add_parser("publish", parents=[common], help="deploy a version of the site with mike (gh-pages branch)")
    publish.add_argument("version", type=arguments.version, help="version name, e.g. 0.3 or 2026-11-29")
    publish.add_argument("--alias", default="latest", type=arguments.version, help="alias to point at it (default: %(default)s)")
    publish.add_argument("--branch", default="gh-pages", help="branch holding the versions (default: %(default)s)")
    publish.add_argument("--push", action="store_true", help="push the branch to its remote")
    publish.add_argument("--no-set-default", dest="set_default", action="store_false",
                         help="leave the site's default version as it is")


def _analyses(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    repeats = sub.add_parser("repeats", parents=[common], help="failures seen more than once, ranked as automation candidates")
    repeats.add_argument("--json", action="store_true", help="machine-readable output")

    check = sub.add_parser("review", parents=[common], help="check a postmortem is complete and blameless; submit or approve it")
    check.add_argument("postmortem", metavar="POSTMORTEM-ID")
    step = check.add_mutually_exclusive_group()
    step.add_argument("--submit", action="store_true", help="draft -> in-review, if there are no findings")
    step.add_argument("--approve", action="store_true", help="in-review -> reviewed, if there are no findings")
    check.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                       help="who approves (repeatable; with --approve)")

    budget = sub.add_parser("budget", parents=[common], help="a run's budget: GPU time with the failure buffer, storage, egress, people")
    budget.add_argument("run", nargs="?", metavar="RUN", help="run id (default: every run with a budget)")


def _diagnosis(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    stacks = sub.add_parser("stacks", parents=[common], help="py-spy every rank, group identical stacks, name the hung rank")
    where = stacks.add_mutually_exclusive_group(required=True)
    where.add_argument("--pid", type=arguments.natural, help="PID of torchrun: its children are the ranks")
    where.add_argument("--pids", type=arguments.pid_list, help="rank PIDs, comma-separated")
    where.add_argument("--slurm-job", metavar="JOBID", help="the job's rank processes on this node")
    where.add_argument("--dumps", nargs="+", type=Path, metavar="FILE",
                       help="saved py-spy dumps (text or --json), one per rank, e.g. rank-3.json")
    stacks.add_argument("--save-dumps", type=Path, metavar="DIR", help="also keep each rank's dump here")
    stacks.add_argument("--json", action="store_true", help="machine-readable output")
    stacks.add_argument("--incident", metavar="RUN", help="draft a hang incident for this run from the result")

    tri = sub.add_parser("triage", parents=[common], help="walk a diagnostic ladder on this machine, cheapest check first")
    tri.add_argument("symptom", choices=["nan", "hang", "divergence", "crash", "checkpoint", "slowdown"])
    tri.add_argument("--pid", type=arguments.natural, help="PID of a training process, for the py-spy checks")
    tri.add_argument("--timeout", type=arguments.seconds, default=5.0, help="seconds per check (default: %(default)s)")
    tri.add_argument("--incident", metavar="RUN", help="draft an incident for this run carrying the results")

    dog = sub.add_parser("watchdog", parents=[common], help="run a job under the hang watchdog: when its ranks stop "
                         "beating, dump every rank's stack, draft a hang incident, kill the job, exit 75")
    dog.add_argument("--run", required=True, help="the run a hang incident is for (runbooks/runs/<id>.yaml)")
    dog.add_argument("--timeout", type=arguments.seconds, default=600.0, metavar="SECONDS",
                     help="longest time without a beat from some rank (default: %(default)g)")
    dog.add_argument("--startup-timeout", type=arguments.seconds, default=900.0, metavar="SECONDS",
                     help="longest time from the start to every rank's first beat (default: %(default)g)")
    dog.add_argument("--stacks", choices=["auto", "py-spy", "faulthandler"], default="auto",
                     help="how to take the stacks (default: py-spy, faulthandler where py-spy cannot attach)")
    dog.add_argument("--dir", type=Path, help="folder of the heartbeats (default: a temporary one, removed after)")
    dog.add_argument("job", nargs=argparse.REMAINDER, metavar="-- COMMAND...", help="the job: torchrun and its arguments")


def _check_text(argv: Sequence[str]) -> None:
    """Arguments hold text a record may hold: invalid UTF-8 or a control character is refused
    here, before it can reach a file (where YAML would mangle it or refuse it)."""
    from tooling.records.characters import first_bad

    for number, arg in enumerate(argv, 1):
        bad = first_bad(arg)
        if bad is not None:
            index, message = bad
            if "surrogate" in message:
                message = "bytes that are not valid UTF-8; expected UTF-8 text"
            raise UsageError(f"argument {number} ({arg[:index]!r}...): {message}")


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    return run_handled(lambda: _parse_and_dispatch(arguments))


def _parse_and_dispatch(arguments: list[str]) -> int:
    _check_text(arguments)
    parser = _parser()
    args, extra = parser.parse_known_args(arguments)
    if extra[:1] == ["--"] and args.command == "job" and not args.trainer:
        # `tooling job RUN --log F -- TRAINER...`: argparse gives a positional list only the words
        # before the first option, so the trainer after an option comes back unparsed
        args.trainer, extra = extra, []
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    from tooling.commands import dispatch
    return dispatch(args, arguments)


if __name__ == "__main__":
    sys.exit(main())
