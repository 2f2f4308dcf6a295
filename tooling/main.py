"""The `tooling` command line: parse arguments and dispatch, nothing else."""
from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Sequence

from tooling.errors import UserError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tooling", description=(
        "Resilience playbook: records of incidents, postmortems and training runs, "
        "validated and rendered into a site."))
    parser.add_argument("--root", type=Path, help="repository root (default: found upward from here)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = sub.add_parser("validate", help="check records against their schemas and each other")
    check.add_argument("paths", nargs="*", help="files or folders (default: incidents/ and runbooks/)")
    check.add_argument("--strict", action="store_true", help="treat warnings as errors")
    check.add_argument("-j", "--jobs", type=int, help="worker processes (default: one per core)")

    incident = sub.add_parser("new-incident", help="scaffold incidents/INC-NNNN.yaml")
    incident.add_argument("--title")
    incident.add_argument("--run", help="id of the training run (runbooks/runs/<id>.yaml)")
    incident.add_argument("--severity", help="sev1 | sev2 | sev3 | sev4")
    incident.add_argument("--symptom", help="nan | hang | divergence | crash | slowdown | data | infra | checkpoint | other")
    incident.add_argument("--layer", help="layer of the stack where the cause sat (default: unknown)")
    incident.add_argument("--signature", action="append", dest="signatures", metavar="TEXT",
                          help="verbatim error signature from the logs (repeatable)")
    incident.add_argument("--node", action="append", dest="nodes", metavar="HOST", help="affected node (repeatable)")
    incident.add_argument("--rank", action="append", dest="ranks", type=int, metavar="N", help="affected rank (repeatable)")
    incident.add_argument("--detected-at", help="when it was noticed (default: now), e.g. 2026-03-14T02:47:00+00:00")
    incident.add_argument("--reported-by", help="who files it (default: $USER)")

    postmortem = sub.add_parser("new-postmortem", help="scaffold incidents/PM-NNNN.yaml for incidents")
    postmortem.add_argument("incidents", nargs="+", metavar="INCIDENT-ID")
    postmortem.add_argument("--title")
    postmortem.add_argument("--author", action="append", dest="authors", metavar="NAME")

    run = sub.add_parser("new-run", help="scaffold runbooks/runs/NAME.yaml, the live page of a training run")
    run.add_argument("name", metavar="NAME", help="run id: lower-case letters, digits and dashes")
    run.add_argument("--title")
    run.add_argument("--owner")

    build = sub.add_parser("build", help="validate, render the generated pages and build the site (strict)")
    build.add_argument("--site-dir", type=Path, help="where to write the site (default: site/)")
    build.add_argument("--render-only", action="store_true", help="only write docs/generated/, skip mkdocs")
    build.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)  # reproducible builds and tests

    serve = sub.add_parser("serve", help="build, serve with live reload, re-render when a record changes")
    serve.add_argument("--dev-addr", default="127.0.0.1:8000", help="host:port (default: %(default)s)")
    serve.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)

    publish = sub.add_parser("publish", help="deploy a version of the site with mike (gh-pages branch)")
    publish.add_argument("version", help="version name, e.g. 0.3 or 2026-11-29")
    publish.add_argument("--alias", default="latest", help="alias to point at it (default: %(default)s)")
    publish.add_argument("--branch", default="gh-pages", help="branch holding the versions (default: %(default)s)")
    publish.add_argument("--push", action="store_true", help="push the branch to its remote")
    publish.add_argument("--no-set-default", dest="set_default", action="store_false",
                         help="leave the site's default version as it is")
    publish.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)

    repeats = sub.add_parser("repeats", help="failures seen more than once, ranked as automation candidates")
    repeats.add_argument("--json", action="store_true", help="machine-readable output")
    repeats.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)

    check = sub.add_parser("review", help="check a postmortem is complete and blameless; submit or approve it")
    check.add_argument("postmortem", metavar="POSTMORTEM-ID")
    step = check.add_mutually_exclusive_group()
    step.add_argument("--submit", action="store_true", help="draft -> in-review, if there are no findings")
    step.add_argument("--approve", action="store_true", help="in-review -> reviewed, if there are no findings")
    check.add_argument("--reviewer", action="append", dest="reviewers", metavar="NAME",
                       help="who approves (repeatable; with --approve)")
    check.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)

    stacks = sub.add_parser("stacks", help="py-spy every rank, group identical stacks, name the hung rank")
    where = stacks.add_mutually_exclusive_group(required=True)
    where.add_argument("--pid", type=int, help="PID of torchrun: its children are the ranks")
    where.add_argument("--pids", type=lambda t: [int(p) for p in t.split(",")], help="rank PIDs, comma-separated")
    where.add_argument("--slurm-job", metavar="JOBID", help="the job's rank processes on this node")
    where.add_argument("--dumps", nargs="+", type=Path, metavar="FILE",
                       help="saved py-spy dumps (text or --json), one per rank, e.g. rank-3.json")
    stacks.add_argument("--save-dumps", type=Path, metavar="DIR", help="also keep each rank's dump here")
    stacks.add_argument("--json", action="store_true", help="machine-readable output")
    stacks.add_argument("--incident", metavar="RUN", help="draft a hang incident for this run from the result")

    budget = sub.add_parser("budget", help="a run's budget: GPU time with the failure buffer, storage, egress, people")
    budget.add_argument("run", nargs="?", metavar="RUN", help="run id (default: every run with a budget)")
    budget.add_argument("--now", type=_timestamp, help=argparse.SUPPRESS)

    tri = sub.add_parser("triage", help="walk a diagnostic ladder on this machine, cheapest check first")
    tri.add_argument("symptom", choices=["nan", "hang", "divergence"])
    tri.add_argument("--pid", type=int, help="PID of a training process, for the py-spy checks")
    tri.add_argument("--timeout", type=float, default=5.0, help="seconds per check (default: %(default)s)")
    tri.add_argument("--incident", metavar="RUN", help="draft an incident for this run carrying the results")

    edit = sub.add_parser("set", help="change fields of a record in place, keeping its comments")
    edit.add_argument("record", metavar="RECORD-ID")
    edit.add_argument("assignments", nargs="+", metavar="FIELD=VALUE",
                      help="a field (dotted for nested) and a YAML value, e.g. status=resolved")
    return parser


def _timestamp(text: str) -> datetime:
    when = datetime.fromisoformat(text)
    if when.tzinfo is None:
        raise argparse.ArgumentTypeError(f"expected a timestamp with a timezone offset but received: {text!r}")
    return when


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _dispatch(args, argv)
    except UserError as exc:
        print(f"tooling: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _dispatch(args: argparse.Namespace, argv: Sequence[str] | None = None) -> int:
    from tooling.repo import find_root

    root = args.root.resolve() if args.root else find_root()
    if args.command == "validate":
        from tooling.commands.validate import validate_command
        return validate_command(args.paths, root=root, strict=args.strict, jobs=args.jobs)
    if args.command == "new-incident":
        from tooling.commands.new_incident import new_incident_command
        return new_incident_command(
            root=root, title=args.title, run=args.run, severity=args.severity,
            symptom=args.symptom, layer=args.layer, signatures=args.signatures, nodes=args.nodes,
            ranks=args.ranks, detected_at=args.detected_at, reported_by=args.reported_by)
    if args.command == "new-postmortem":
        from tooling.commands.new_postmortem import new_postmortem_command
        return new_postmortem_command(args.incidents, root=root, title=args.title, authors=args.authors)
    if args.command == "new-run":
        from tooling.commands.new_run import new_run_command
        return new_run_command(args.name, root=root, title=args.title, owner=args.owner)
    if args.command == "build":
        from tooling.commands.build import build_command
        return build_command(root=root, now=args.now or _now(), site_dir=args.site_dir,
                             render_only=args.render_only)
    if args.command == "serve":
        from tooling.commands.serve import serve_command
        return serve_command(root=root, dev_addr=args.dev_addr, now=args.now)
    if args.command == "publish":
        from tooling.commands.publish import publish_command
        return publish_command(args.version, root=root, alias=args.alias, now=args.now or _now(),
                               push=args.push, branch=args.branch, set_default=args.set_default)
    if args.command == "repeats":
        from tooling.commands.repeats import repeats_command
        return repeats_command(root=root, now=args.now or _now(), as_json_output=args.json)
    if args.command == "review":
        from tooling.commands.review import review_command
        return review_command(args.postmortem, root=root, now=args.now or _now(), submit=args.submit,
                              approve=args.approve, reviewers=args.reviewers)
    if args.command == "stacks":
        from tooling.commands.stacks import stacks_command
        return stacks_command(root=root, pid=args.pid, pids=args.pids, slurm_job=args.slurm_job, dumps=args.dumps,
                              save_dir=args.save_dumps, as_json=args.json, incident_run=args.incident,
                              argv=list(sys.argv[1:] if argv is None else argv))
    if args.command == "budget":
        from tooling.commands.budget import budget_command
        return budget_command(args.run, root=root, now=args.now or _now())
    if args.command == "triage":
        from tooling.commands.triage import triage_command
        return triage_command(args.symptom, root=root, pid=args.pid, timeout=args.timeout,
                              incident_run=args.incident, argv=list(sys.argv[1:] if argv is None else argv))
    if args.command == "set":
        from tooling.commands.set_fields import set_command
        return set_command(args.record, args.assignments, root=root)
    raise AssertionError(f"unhandled command {args.command}")


if __name__ == "__main__":
    sys.exit(main())
