"""What ``tooling preflight`` says of a job's nodes: one located line per failure (the house's
``WHERE: [rule] what is wrong; what was expected``, ``tooling: error:`` put before it by the
command), the nodes each names, and the one-line summary.

WHERE is the file and line a version was read from where it was a file (an emulated node's
stand-in), else the node; a tie has no node to blame and is located at the job.
"""
from __future__ import annotations

from dataclasses import dataclass

from tooling.health.majority import Odd, Tie, compare
from tooling.health.preflight import Outcome
from tooling.health.versions import LABELS, Report, Value

SOFTWARE = "a software mismatch, named, not drained"
EARLY = 0.9  # of the timeout: an all-reduce that failed sooner did not wait for a peer to its end


@dataclass(frozen=True)
class Failure:
    line: str
    nodes: tuple[str, ...]  # the nodes it names


def failures(o: Outcome) -> list[Failure]:
    """Every failure this rank knows of, in the order: its own trouble (then nothing else: it has
    no verdict), nodes that never reported, hardware, sources that failed, versions, all-reduce."""
    if o.trouble is not None:
        return [_trouble(o)]
    found = [_missing(o, rank) for rank in range(o.place.world) if rank not in o.reports]
    for report in o.reports.values():
        found += _hardware(report)
        found += [Failure(f"{where}: [preflight-probe] {report.node}: {said}; expected nvidia-smi to answer with its "
                          "Driver Version", (report.node,)) for where, said in report.problems]
    values = {r.node: {f: v.value for f, v in r.values.items() if f not in r.unread} for r in o.reports.values()}
    by_node = {r.node: r for r in o.reports.values()}
    for finding in compare(values, o.settings.fields, o.settings.pinned):
        found.append(_odd(finding, by_node[finding.node].values[finding.field]) if isinstance(finding, Odd) else
                     _tie(finding, o))
    return found + (_reduce(o) if o.reduced else [])


def _trouble(o: Outcome) -> Failure:
    p, said = o.place, o.trouble
    if o.trouble_kind == "listen":
        return Failure(f"{p.node}: [preflight-rendezvous] could not listen at {p.host}:{p.port} for the job's tasks: "
                       f"{said}; expected the port free (another with --port)", (p.node,))
    if o.trouble_kind == "reach":
        return Failure(f"{p.node}: [preflight-rendezvous] could not reach the rendezvous at {p.at} within "
                       f"{o.settings.timeout:g} s: {said}; expected rank 0's task listening there", (p.node, p.nodes[0]))
    return Failure(f"{p.node}: [preflight-rendezvous] the rendezvous at {p.at} stopped answering: {said}; expected "
                   "rank 0's task to hold it until every rank has its verdict", (p.nodes[0],))


def _missing(o: Outcome, rank: int) -> Failure:
    node = o.place.nodes[rank]
    return Failure(f"{node}: [preflight-rendezvous] rank {rank} on {node} sent no report within "
                   f"{o.settings.timeout:g} s (its task did not start, died, or could not reach the rendezvous at "
                   f"{o.place.at}); expected every node of the job to report", (node,))


def _hardware(report: Report) -> list[Failure]:
    done = (f'drained ("{report.drained}")' if report.drained else f"not drained: {report.drain_error}"
            if report.drain_error else "not drained (no --drain)")
    return [Failure(f"{h.where}: [preflight-hardware] {report.node}: {h.mode} {h.evidence}; {done}; expected its "
                    "GPUs to answer", (report.node,)) for h in report.hardware]


def _odd(odd: Odd, value: Value) -> Failure:
    # located at the file it was read from, else at the node: then the message says what was read
    label, read = LABELS[odd.field], "" if value.where != odd.node else f" (read from {value.source})"
    held = (f"the expected {odd.reference} (--expect {odd.field}={odd.reference})" if odd.pinned else
            f"{odd.reference} on {', '.join(odd.holders)} ({'the majority' if odd.majority else 'the most nodes'})")
    return Failure(f"{value.where}: [preflight-version] {odd.node}'s {label} {odd.value}{read} differs from {held}; "
                   f"expected one {label} on every node of the job: {SOFTWARE}", (odd.node,))


def _tie(tie: Tie, o: Outcome) -> Failure:
    label = LABELS[tie.field]
    groups = "; ".join(f"{value} on {', '.join(nodes)}" for value, nodes in tie.groups)
    where = f"job {o.place.job}" if o.place.job else o.place.node
    return Failure(f"{where}: [preflight-version] no majority for {label}, a tie: {groups}; expected one {label} on "
                   f"every node of the job: {SOFTWARE}", tuple(n for _, nodes in tie.groups for n in nodes))


def _reduce(o: Outcome) -> list[Failure]:
    """The all-reduce: a rank with no result is the one that failed (the others' errors are what
    its going did to them); else the ranks whose all-reduce failed before the timeout (the others
    timed out waiting for them), or all that failed; then any part summed wrong."""
    nodes, timeout = o.place.nodes, o.settings.timeout
    said = next((f" (rank {r}: {s.error})" for r, s in sorted(o.sums.items()) if s.error), "")
    found = [Failure(f"{nodes[r]}: [preflight-allreduce] rank {r} on {nodes[r]} did not finish the gloo all-reduce "
                     f"within {timeout:g} s{said}; expected every rank to finish it", (nodes[r],))
             for r in range(o.place.world) if r not in o.sums]
    if not found:
        failed = {r: s for r, s in sorted(o.sums.items()) if s.error}
        # a rank whose own all-reduce failed before the timeout is the one the others waited for until theirs
        first = {r: s for r, s in failed.items() if s.seconds < EARLY * timeout} or failed
        waited = "; the others waited for it until the timeout" if len(first) < len(failed) else ""
        found = [Failure(f"{nodes[r]}: [preflight-allreduce] the gloo all-reduce failed on rank {r} ({nodes[r]}) "
                         f"after {s.seconds:.2f} s: {s.error}{waited}; expected it to complete on every rank",
                         (nodes[r],)) for r, s in first.items()]
    wrong: dict[int, dict[int, float]] = {}
    for seen_on, summed in sorted(o.sums.items()):
        for rank, value in summed.wrong.items():
            wrong.setdefault(rank, {})[seen_on] = value
    for rank, seen in sorted(wrong.items()):
        read = ", ".join(f"{value:g} on rank {on}" for on, value in seen.items())
        found.append(Failure(f"{nodes[rank]}: [preflight-allreduce] rank {rank}'s part of the gloo all-reduce summed to "
                             f"{read}, not {rank + 1}; expected every part summed intact", (nodes[rank],)))
    return found


def summary(o: Outcome, found: list[Failure]) -> str:
    nodes = [r.node for _, r in sorted(o.reports.items())] if o.reports else list(o.place.nodes)
    if found:
        named = sorted({n for f in found for n in f.nodes}, key=list(o.place.nodes).index)
        return (f"preflight: {len(found)} problem{'s' if len(found) != 1 else ''} on {len(named)} of {o.place.world} "
                f"nodes ({', '.join(named)}): do not start the training on this allocation")
    first = o.reports[min(o.reports)].values
    held = ", ".join(f"{LABELS[f]} {_short(first[f].value) if f == 'code' else first[f].value}"
                     for f in o.settings.fields)
    seconds = max((s.seconds for s in o.sums.values()), default=0.0)
    return (f"preflight: {', '.join(nodes)} agree: {held}; gloo all-reduce across {o.place.world} "
            f"rank{'s' if o.place.world != 1 else ''} in {seconds:.2f} s; {_sources(first)}")


def _short(code: str) -> str:
    commit, dash, rest = code.partition("-")
    return commit[:12] + dash + rest if len(commit) == 40 else code


def _sources(values: dict[str, Value]) -> str:
    """Where rank 0's node read its driver, CUDA and NCCL (the other nodes read theirs alike)."""
    def kind(value: Value) -> str:
        return ("the nodes' nvidia-smi stand-ins" if "stand-in for" in value.source else
                "none" if value.value == "none" else value.source.split(" -")[0])
    kinds: dict[str, list[str]] = {}
    for name in ("driver", "cuda", "nccl"):
        kinds.setdefault(kind(values[name]), []).append(LABELS[name])
    return "; ".join(f"{', '.join(labels)} {'none here' if k == 'none' else 'from ' + k}" for k, labels in kinds.items())
