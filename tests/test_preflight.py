"""`tooling preflight`'s logic, fast: the odd node out by majority rule (ties named as such, a
pinned version held to), the all-reduce whose wrong sum names the rank it came from, the blame of
an all-reduce that failed, nvidia-smi's header read from a stand-in, and the command line's
refusals. On the emulated cluster, as srun runs it: tests/slurm/test_preflight_cluster.py."""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from support import PROJECT, tooling
from tooling.commands import preflight
from tooling.commands.preflight import FIELDS
from tooling.health.allreduce import Summed, part, wrong_slots
from tooling.health.majority import Odd, Tie, compare
from tooling.health.preflight import Outcome, Settings
from tooling.health.rendezvous import Place, job_port
from tooling.health.verdict import failures
from tooling.health.versions import LABELS, Hardware, Report, Value, gpu_header

NODES = [f"n{i}" for i in range(1, 9)]
held = st.lists(st.sampled_from(["2.18.5", "2.19.3", "2.20.1"]), min_size=1, max_size=8)


def _values(versions: list[str], field: str = "nccl") -> dict[str, dict[str, str]]:
    return {NODES[i]: {field: v} for i, v in enumerate(versions)}


@given(held)
def test_the_odd_nodes_are_those_off_the_one_most_held_value_else_a_tie(versions: list[str]) -> None:
    found = compare(_values(versions), ["nccl"])
    counts = Counter(versions)
    top = max(counts.values())
    leaders = [v for v, n in counts.items() if n == top]
    if len(counts) == 1:
        assert found == []
    elif len(leaders) > 1:  # no reference to hold a node to: one tie, every value with its nodes
        [tie] = found
        assert isinstance(tie, Tie) and tie.field == "nccl"
        assert sorted(n for _, nodes in tie.groups for n in nodes) == sorted(NODES[:len(versions)])
        assert [len(nodes) for _, nodes in tie.groups] == sorted((len(n) for _, n in tie.groups), reverse=True)
        assert all(versions[NODES.index(n)] == value for value, nodes in tie.groups for n in nodes)
    else:
        assert all(isinstance(f, Odd) for f in found)
        named = {f.node for f in found if isinstance(f, Odd)}
        assert named == {NODES[i] for i, v in enumerate(versions) if v != leaders[0]}
        for odd in found:
            assert isinstance(odd, Odd)
            assert (odd.reference, odd.value, odd.pinned) == (leaders[0], versions[NODES.index(odd.node)], False)
            assert set(odd.holders) == {NODES[i] for i, v in enumerate(versions) if v == leaders[0]}
            assert odd.majority == (2 * top > len(versions))


@given(held, st.randoms(use_true_random=False))
def test_the_verdict_does_not_depend_on_the_order_the_nodes_came_in(versions: list[str], rnd) -> None:  # type: ignore[no-untyped-def]
    given_order = _values(versions)
    shuffled = list(given_order.items())
    rnd.shuffle(shuffled)

    def key(f: Odd | Tie) -> object:  # nodes are listed in the order they came: compared as sets
        return (f.node, f.value, f.reference, sorted(f.holders)) if isinstance(f, Odd) else \
            [(value, sorted(nodes)) for value, nodes in f.groups]
    assert sorted(map(str, map(key, compare(given_order, ["nccl"])))) == \
        sorted(map(str, map(key, compare(dict(shuffled), ["nccl"]))))


@given(st.integers(3, 8), st.data())
def test_one_node_with_another_version_is_the_one_named(nodes: int, data: st.DataObject) -> None:
    odd = data.draw(st.integers(0, nodes - 1))
    versions = ["2.18.5"] * nodes
    versions[odd] = "2.19.3"
    [found] = compare(_values(versions), ["driver", "nccl", "torch"])  # fields no node reports: nothing
    assert found == Odd("nccl", NODES[odd], "2.19.3", "2.18.5", tuple(n for i, n in enumerate(NODES[:nodes]) if i != odd),
                        pinned=False, majority=True)


@given(held)
def test_a_pinned_version_is_held_to_even_when_every_node_agrees(versions: list[str]) -> None:
    found = compare(_values(versions), ["nccl"], {"nccl": "2.18.5"})
    assert [f.node for f in found if isinstance(f, Odd)] == [NODES[i] for i, v in enumerate(versions) if v != "2.18.5"]
    assert all(isinstance(f, Odd) and f.pinned and f.reference == "2.18.5" for f in found)


@given(st.integers(1, 64), st.data())
def test_a_part_lost_or_changed_on_its_way_names_its_rank(world: int, data: st.DataObject) -> None:
    parts = [part(rank, world) for rank in range(world)]
    summed = [sum(column) for column in zip(*parts)]
    assert wrong_slots(summed) == {}
    rank = data.draw(st.integers(0, world - 1))
    change = data.draw(st.sampled_from([0.0, 0.5, -1.0, 2.0]))  # lost (0), or corrupted on the way
    parts[rank] = [value * change for value in parts[rank]]
    assert wrong_slots([sum(column) for column in zip(*parts)]) == {rank: (rank + 1) * change}


def _outcome(world: int, sums: dict[int, Summed], timeout: float = 10) -> Outcome:
    nodes = tuple(NODES[:world])
    where = Place(0, world, nodes[0], nodes, "127.0.0.1", 20024, "7")
    same = {f: Value("1", "x", n) for f in LABELS for n in nodes[:1]}
    reports = {r: Report(nodes[r], r, same) for r in range(world)}
    settings = Settings(None, Path("."), "1", tuple(LABELS), {}, timeout, False)
    return Outcome(where, settings, reports, sums, reduced=True)


def test_an_all_reduce_failure_names_the_rank_with_no_result_else_the_one_the_others_waited_for() -> None:
    died = _outcome(3, {0: Summed(0.2, error="Connection closed by peer [127.0.0.1]:5"), 2: Summed(10.0, error="x")})
    assert [f.line for f in failures(died)] == [
        "n2: [preflight-allreduce] rank 1 on n2 did not finish the gloo all-reduce within 10 s (rank 0: Connection "
        "closed by peer [127.0.0.1]:5); expected every rank to finish it"]
    fast = _outcome(3, {0: Summed(10.01, error="wait timeout"), 1: Summed(0.01, error="Unable to find address for: ib9"),
                        2: Summed(10.02, error="wait timeout")})
    assert [f.line for f in failures(fast)] == [
        "n2: [preflight-allreduce] the gloo all-reduce failed on rank 1 (n2) after 0.01 s: Unable to find address for: "
        "ib9; the others waited for it until the timeout; expected it to complete on every rank"]
    wrong = _outcome(2, {0: Summed(0.1, {1: 0.0}), 1: Summed(0.1, {1: 0.0})})
    assert [f.line for f in failures(wrong)] == [
        "n2: [preflight-allreduce] rank 1's part of the gloo all-reduce summed to 0 on rank 0, 0 on rank 1, not 2; "
        "expected every part summed intact"]
    assert failures(_outcome(3, {r: Summed(0.1) for r in range(3)})) == []


def _inject(cluster: Path, *args: str) -> None:
    done = subprocess.run([str(PROJECT / "scripts" / "slurm-cluster"), "inject", *args], capture_output=True, text=True,
                          env={"SLURM_CLUSTER_DIR": str(cluster), "PATH": "/usr/bin:/bin"}, timeout=30)
    assert done.returncode == 0, done.stderr


def test_an_injected_nccl_version_is_read_from_the_stand_in_at_its_line_and_a_lost_gpu_is_hardware(
        tmp_path: Path) -> None:
    folder = tmp_path / "faults" / "n1"
    folder.mkdir(parents=True)  # inject writes files only: the node's folder is enough
    _inject(tmp_path, "n1", "clear")
    _inject(tmp_path, "n1", "nccl", "2.19.3")
    _inject(tmp_path, "n1", "ecc", "2", "1")  # the counters change, the NCCL version stays
    smi = folder / "nvidia-smi"
    found, hardware, problems = gpu_header("n1", folder, timeout=5)
    if not found["driver"].source.startswith(str(smi)):
        pytest.skip("nvidia-smi is installed: the real one is read, not the stand-in")
    assert {k: (v.value, v.where) for k, v in found.items()} == {
        "driver": ("535.183.01", f"{smi}:5:1"), "cuda": ("12.2", f"{smi}:6:1"), "nccl": ("2.19.3", f"{smi}:7:1")}
    assert (hardware, problems) == ([], [])
    assert "            DRAM Uncorrectable            : 2\n" in smi.read_text()
    smi.write_text("Unable to determine the device handle for GPU 0000:18:00.0: GPU is lost. Reboot the system to "
                   "recover this GPU\n")
    found, hardware, problems = gpu_header("n1", folder, timeout=5)
    assert found == {} and problems == []
    assert [(h.mode, h.where) for h in hardware] == [("gpu.fell-off-bus", f"{smi}:1:1")]


def test_a_report_and_a_result_cross_the_store_unchanged() -> None:
    value = Value("2.18.5", "/f/n2/nvidia-smi (stand-in for nvidia-smi -q)", "/f/n2/nvidia-smi:7:1")
    report = Report("n2", 1, {f: value for f in LABELS}, (Hardware("gpu.fell-off-bus", "nvidia-smi: lost", "n2"),),
                    (("/usr/bin/nvidia-smi", "exit 9: no"),), ("driver", "cuda"), "gpu.fell-off-bus x", "denied")
    assert Report.from_json(json.loads(json.dumps(report.as_json()))) == report
    summed = Summed(0.25, {2: 0.0}, "Connection closed by peer")
    assert Summed.from_json(json.loads(json.dumps(summed.as_json()))) == summed


LINE = "srun --ntasks-per-node=1 tooling preflight --expect-same driver,cuda,nccl,torch,python,code,memlock"
DOCS = ["README.md", "docs/playbook/divide-and-conquer.md", "docs/playbook/divide-and-conquer.ko.md"]


@pytest.mark.parametrize("doc", DOCS)
def test_the_docs_give_the_documented_line_and_the_message_the_code_writes(doc: str) -> None:
    from tooling.catalogue.automations import by_id
    from tooling.commands import preflight

    assert LINE in (preflight.__doc__ or "")
    shipped = by_id("preflight-versions").implementation
    assert shipped is not None and shipped.ref == "tooling preflight" and f"`{LINE}`" in shipped.enable
    text = (PROJECT / doc).read_text(encoding="utf-8")
    assert LINE in text and "scripts/slurm-cluster inject n2 nccl 2.19.3" in text
    if doc.startswith("docs/"):  # the example is what the code writes for it
        smi = "/tmp/playbook-cluster/faults/n2/nvidia-smi"
        outcome = _outcome(3, {r: Summed(0.1) for r in range(3)})
        n2 = outcome.reports[1]
        outcome.reports[1] = Report("n2", 1, {**n2.values, "nccl": Value("2.19.3", f"{smi} (stand-in)", f"{smi}:7:1")})
        for rank, report in outcome.reports.items():
            if rank != 1:
                outcome.reports[rank] = Report(report.node, rank, {**report.values, "nccl": Value("2.18.5", "x", "y")})
        [said] = failures(outcome)
        assert f"\ntooling: error: {said.line}\n" in text


def test_the_reported_fields_are_the_command_lines() -> None:
    assert tuple(LABELS) == FIELDS


def _lab_ports(script: str, jobs: tuple[int, ...], confs: tuple[str, ...], restarts: range) -> set[int]:
    """MASTER_PORT as the lab's batch script computes it (its own lines, run by bash)."""
    lines = [line for line in (PROJECT / script).read_text().splitlines()
             if line.startswith(("cluster=", "export MASTER_PORT="))]
    loop = (f"for SLURM_JOB_ID in {' '.join(map(str, jobs))}; do for SLURM_CONF in {' '.join(confs)}; do "
            f"for SLURM_RESTART_COUNT in {' '.join(map(str, restarts))}; do "
            + "; ".join(lines) + '; echo "$MASTER_PORT"; done; done; done')
    done = subprocess.run(["bash", "-c", loop], capture_output=True, text=True, check=True)
    return {int(port) for port in done.stdout.split()}


def test_the_job_port_is_its_own_slot_beside_the_labs_torchrun_and_below_the_ephemeral_ports() -> None:
    # ports of 32768 up are Linux's ephemeral ports: an outgoing connection held lab 6's restart port
    jobs, restarts = (1, 2, 15, 1249, 10**6), range(12)
    labs = set().union(*(_lab_ports(script, jobs, ("/a/slurm.conf", "/tmp/b/etc/slurm.conf"), restarts)
                         for script in ("labs/06-spare-nodes/job.sbatch", "labs/07-fault-campaign/job.sbatch")))
    ours = {job_port(job, restart) for job in jobs for restart in restarts}
    assert len(labs) > 40 and not ours & labs and all(20000 <= port < 32768 for port in ours | labs)


@pytest.mark.parametrize(("env", "said"), [
    ({"SLURM_JOB_ID": "7"}, "tooling: error: SLURM_STEP_ID is not set: this is the batch script itself, one task on "
                            "one node; expected one srun task per node: srun --ntasks-per-node=1 tooling preflight ...\n"),
    ({"SLURM_JOB_ID": "7", "SLURM_STEP_ID": "0", "SLURM_STEP_NUM_TASKS": "4", "SLURM_STEP_NUM_NODES": "2"},
     "tooling: error: the step has 4 tasks on 2 nodes; expected one task per node: srun --ntasks-per-node=1 tooling "
     "preflight ...\n"),
])
def test_a_preflight_not_run_as_one_srun_task_per_node_is_refused(tmp_path: Path, env: dict[str, str],
                                                                   said: str) -> None:
    done = tooling("preflight", "--timeout", "1", cwd=tmp_path, env=env)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", said)


def test_the_locked_memory_limit_is_the_tasks_own_as_ulimit_says_it(tmp_path: Path) -> None:
    """A task started under a lower limit (a node whose slurmd caps it, a login shell's passed on)
    reports that limit; a node that differs from the others is named by it."""
    read = "from tooling.health.versions import memlock; print(memlock('n2').value)"
    done = subprocess.run(["bash", "-c", f'ulimit -l 16 && exec "{sys.executable}" -c "{read}"'],
                          cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "16 KiB\n", "")
    outcome = _outcome(3, {r: Summed(0.1) for r in range(3)})
    for rank, report in outcome.reports.items():
        limit = Value("16 KiB" if rank == 1 else "unlimited", "ulimit -l", report.node)
        outcome.reports[rank] = Report(report.node, rank, {**report.values, "memlock": limit})
    assert (preflight._pinned("memlock=64"), preflight._pinned("memlock=unlimited")) == \
        (("memlock", "64 KiB"), ("memlock", "unlimited"))  # --expect as `ulimit -l` prints it
    with pytest.raises(argparse.ArgumentTypeError, match=r"^expected memlock=KiB \(a whole number, as ulimit -l "
                       r"prints it\) or memlock=unlimited, but received: 'memlock=12x'$"):
        preflight._pinned("memlock=12x")
    [said] = failures(replace(outcome, settings=replace(outcome.settings, fields=("memlock",))))
    assert said.line == ("n2: [preflight-version] n2's locked-memory limit 16 KiB (read from ulimit -l) differs from "
                         "unlimited on n1, n3 (the majority); expected one locked-memory limit on every node of the "
                         "job: a software mismatch, named, not drained")


def test_unknown_fields_are_refused_by_the_parser(tmp_path: Path) -> None:
    done = tooling("preflight", "--expect-same", "nccl,cudnn", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.endswith(
        "argument --expect-same: expected fields among driver,cuda,nccl,torch,python,code,memlock but received: "
        "'nccl,cudnn'\n")
    done = tooling("preflight", "--expect", "nccl", cwd=tmp_path)
    assert done.returncode == 2 and "argument --expect: expected FIELD=VERSION" in done.stderr


@pytest.mark.slow  # torch imported by the executable
def test_outside_a_job_it_checks_this_node_alone(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM")}
    hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)[1]
    assert hard == resource.RLIM_INFINITY or hard >= 48 * 1024

    def limited() -> None:  # the task's limit, as `ulimit -l 48` before it starts
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (48 * 1024, hard))

    done = subprocess.run([sys.executable, "-m", "tooling", "preflight", "--node", "solo", "--code-version", "v1"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, preexec_fn=limited)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("preflight: solo agree: driver ")
    assert ", code v1, locked-memory limit 48 KiB; gloo all-reduce across 1 rank in " in done.stdout
    assert done.stdout.count("\n") == 1
