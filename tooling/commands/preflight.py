"""`tooling preflight`: before a multi-node job trains, every node reports its versions and a tiny
gloo all-reduce runs across them; a node that differs or fails is named before any GPU-hour.

Run as one srun task per node at the top of the sbatch script, before the training's srun::

    srun --ntasks-per-node=1 tooling preflight --expect-same driver,cuda,nccl,torch,python,code,memlock || exit 1

Each task reads its node's driver and CUDA versions (nvidia-smi; on an emulated node of
scripts/slurm-cluster, its stand-in: --stand-ins DIR/%N), NCCL's (the torch build's, else the
stand-in's, else none), torch's, Python's and the code's (the git commit of the current folder,
or --code-version), and the task's locked-memory limit (``ulimit -l``: what RDMA may pin; SLURM
passes the submitting shell's, and ``--expect memlock=unlimited`` holds every node to it), meets
the others at the first node of the step (SLURM's environment: rank
SLURM_PROCID of SLURM_STEP_NUM_TASKS, the address scontrol gives that node, a port of the job),
and joins the all-reduce. Rank 0 says the verdict: exit 0 and one summary line when the nodes
agree and the all-reduce summed right; else one located line per failure on stderr and exit 1
on every rank: a node whose version differs from the majority's (or --expect's) is named as a
software mismatch (never drained); a tie is named as one; a rank that sends no report, or does
not finish the all-reduce, within --timeout is named by its node; a part summed wrong names the
rank it came from. nvidia-smi saying a GPU is lost is the node's hardware: with --drain the node
drains itself, as the health check does. Outside a SLURM job it checks this node alone.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from tooling import arguments
from tooling.errors import UsageError
from tooling.now import Clock

NAME = "preflight"
HELP = ("before a multi-node job trains (one srun task per node): every node's driver, CUDA, NCCL, torch, Python "
        "and code versions and locked-memory limit compared and a gloo all-reduce across them; the odd node out named")
# the versions a node reports (tooling.health.versions.LABELS's keys; not imported from there: a
# command's parser loads none of the work)
FIELDS = ("driver", "cuda", "nccl", "torch", "python", "code", "memlock")
TIMEOUT = 60.0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--expect-same", type=_fields, default=FIELDS, metavar="FIELD[,FIELD...]",
                        help=f"the versions every node must hold alike (default: {','.join(FIELDS)})")
    parser.add_argument("--expect", action="append", type=_pinned, default=[], metavar="FIELD=VERSION",
                        help="a version every node must hold, the run's pinned one (repeatable): --expect nccl=2.18.5; "
                             "--expect memlock=unlimited for RDMA")
    parser.add_argument("--code-version", metavar="VERSION",
                        help="the code's version (default: the git commit of the current folder, -dirty if changed)")
    parser.add_argument("--stand-ins", metavar="DIR",
                        help="an emulated node's stand-ins (scripts/slurm-cluster), %%N the node's name: "
                             "DIR/nvidia-smi read where nvidia-smi is not installed")
    parser.add_argument("--timeout", type=arguments.seconds, default=TIMEOUT, metavar="SECONDS",
                        help="seconds for each wait: nvidia-smi, the rendezvous, every node's report, the all-reduce "
                             "(default: %(default)g)")
    parser.add_argument("--port", type=_port, metavar="PORT",
                        help="the rendezvous port at the first node (default: one of the job, from its id)")
    parser.add_argument("--node", help="this node's name (default: $SLURMD_NODENAME, else the short host name)")
    parser.add_argument("--drain", action="store_true",
                        help="on a fault of this node's hardware (a GPU lost), drain it in SLURM as the health check "
                             "does (scontrol: an operator's or the Prolog's rights)")


def run(args: argparse.Namespace, *, root: Path, clock: Clock, argv: list[str]) -> int:
    from tooling.health.preflight import Settings, run as preflight
    from tooling.health.rendezvous import place
    from tooling.health.verdict import failures, summary

    # c10d logs each failed connection and timeout with its C++ frames on stderr: the verdict's
    # one line per failure says it, so only a fatal error of torch's own is let through
    os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "FATAL")
    pinned = dict(args.expect)
    if args.stand_ins is not None and not Path(args.stand_ins.replace("%N", "x")).parent.is_dir():
        raise UsageError(f"--stand-ins {args.stand_ins}: no such folder above it; expected an emulated cluster's "
                         "$SLURM_CLUSTER_DIR/faults/%N")
    where = place(os.environ, node=args.node, port=args.port, timeout=args.timeout)
    settings = Settings(stand_ins=args.stand_ins, code_dir=Path.cwd(), code_version=args.code_version,
                        fields=tuple(f for f in args.expect_same if f not in pinned) + tuple(pinned),
                        pinned=pinned, timeout=args.timeout, drain=args.drain)
    outcome = preflight(where, settings)
    found = failures(outcome)
    if where.rank == 0 or outcome.trouble is not None:  # rank 0 speaks for the job; another only of its trouble
        for failure in found:
            print(f"tooling: error: {failure.line}", file=sys.stderr, flush=True)
        if outcome.trouble is None:
            print(summary(outcome, found), flush=True)
    return 1 if found else 0


def _fields(text: str) -> tuple[str, ...]:
    named = tuple(dict.fromkeys(f.strip() for f in text.split(",") if f.strip()))
    unknown = [f for f in named if f not in FIELDS]
    if not named or unknown:
        raise argparse.ArgumentTypeError(f"expected fields among {','.join(FIELDS)} but received: {text!r}")
    return named


def _pinned(text: str) -> tuple[str, str]:
    field, equals, value = text.partition("=")
    value = value.strip()
    if not equals or field not in FIELDS or not value:
        raise argparse.ArgumentTypeError(f"expected FIELD=VERSION, FIELD among {','.join(FIELDS)}, "
                                         f"but received: {text!r}")
    if field == "memlock":  # as `ulimit -l` says it: KiB, or unlimited
        from tooling.health.versions import UNLIMITED, kib  # light, but the parser loads no work up front
        if value != UNLIMITED and not value.isdigit():
            raise argparse.ArgumentTypeError(f"expected memlock=KiB (a whole number, as ulimit -l prints it) or "
                                             f"memlock={UNLIMITED}, but received: {text!r}")
        return field, value if value == UNLIMITED else kib(value)
    return field, value


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"expected a port 1-65535 but received: {text!r}")
    return int(text)
