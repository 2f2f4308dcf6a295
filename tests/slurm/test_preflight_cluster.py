"""`tooling preflight` as the top of an sbatch script runs it on the emulated cluster: one srun
task per node (n1-n3), driver, CUDA and NCCL read from each node's stand-in, a gloo all-reduce
across the three. The nodes agree: exit 0 and one line. One node's NCCL differs: it is named in
one line, every task exits 1, and nothing drains it. A node that cannot reach the rendezvous or
cannot do its part of the all-reduce is named within the timeout. A lost GPU drains its node."""
from __future__ import annotations

import platform
import re
import resource
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from emulated import Cluster, until

from tooling.health.rendezvous import job_port

REAL_SMI = subprocess.run(["which", "nvidia-smi"], capture_output=True).returncode == 0
pytestmark = pytest.mark.skipif(REAL_SMI, reason="nvidia-smi is installed: its versions are read, not the stand-ins'")
TIMEOUT = 5
SUMMARY_FAILED = "preflight: 1 problem on 1 of 3 nodes (n2): do not start the training on this allocation"
# the jobs' locked-memory limit: SLURM passes the submitting process's (PropagateResourceLimits)
_SOFT = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
LIMIT = "unlimited" if _SOFT == resource.RLIM_INFINITY else f"{_SOFT // 1024} KiB"
SRUN_FAILED = [f"srun: error: n{i + 1}: task {i}: Exited with exit code 1" for i in range(3)]


def preflight(cluster: Cluster, tmp_path: Path, task: str = "exec \"$@\"", *options: str) -> tuple[str, list[str], float]:
    """Submit a job whose script is the documented line (``task``: how n2's task differs, as a
    bash line run with the preflight command as its arguments); its id, output lines and the
    step's seconds."""
    script = tmp_path / "job.sh"
    script.write_text(
        "#!/bin/bash\nstarted=$(date +%s.%N)\n"
        f"srun --ntasks-per-node=1 bash -c '{task}' task {sys.executable} -m tooling preflight "
        f"--stand-ins {cluster.dir}/faults/%N --timeout {TIMEOUT} {' '.join(options)}\n"
        'echo "srun exit $? after $(python3 -c "import time; print(round(time.time() - $started, 1))") s"\n')
    job = cluster.sh("sbatch", "--parsable", "--nodes=3", f"--chdir={tmp_path}", f"--output={tmp_path}/out.txt",
                     str(script))
    until(lambda: re.search(r"JobState=(COMPLETED|FAILED|CANCELLED)", cluster.sh("scontrol", "show", "job", job)),
          f"job {job} to end", seconds=240)
    lines = (tmp_path / "out.txt").read_text().splitlines()
    last = re.fullmatch(r"srun exit (\d+) after ([\d.]+) s", lines[-1])
    assert last, lines
    # srun's own lines come as its tasks end, among theirs: put after them
    ours, sruns = [line for line in lines[:-1] if not line.startswith("srun: ")], \
        sorted(line for line in lines[:-1] if line.startswith("srun: "))
    return job, [*ours, *sruns, f"srun exit {last[1]}"], float(last[2])


def git_tree(folder: Path) -> str:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, text=True,
                              env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
                                   "GIT_COMMITTER_EMAIL": "t@x", "PATH": "/usr/bin:/bin"}).stdout.strip()
    git("init", "-q")
    (folder / "train.py").write_text("print('train')\n")
    git("add", "train.py")
    git("commit", "-q", "-m", "the code")
    return git("rev-parse", "HEAD")


def test_nodes_that_agree_exit_0_with_one_line_naming_what_was_read(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    commit = git_tree(tmp_path)  # the job's working tree: the code's version (its output, untracked, leaves it clean)
    _, lines, _ = preflight(cluster, tmp_path)
    assert len(lines) == 2 and lines[1] == "srun exit 0", lines
    assert re.fullmatch(
        re.escape(f"preflight: n1, n2, n3 agree: driver 535.183.01, CUDA 12.2, NCCL 2.18.5, torch {version('torch')}, "
                  f"Python {platform.python_version()}, code {commit[:12]}, locked-memory limit {LIMIT}; gloo all-reduce "
                  "across 3 ranks in ")
        + r"\d+\.\d\d" + re.escape(" s; driver, CUDA, NCCL from the nodes' nvidia-smi stand-ins"), lines[0]), lines[0]


def test_one_node_with_another_nccl_is_named_in_one_line_and_not_drained(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    cluster.inject("n2", "nccl", "2.19.3")
    try:
        _, lines, _ = preflight(cluster, tmp_path, 'exec "$@"', "--code-version", "v1")
    finally:
        cluster.inject("n2", "clear")
    assert sorted(lines[:2]) == [SUMMARY_FAILED,  # n2's line and rank 0's verdict, in whichever order they came
        f"tooling: error: {cluster.dir}/faults/n2/nvidia-smi:7:1: [preflight-version] n2's NCCL 2.19.3 differs from "
        "2.18.5 on n1, n3 (the majority); expected one NCCL on every node of the job: a software mismatch, named, "
        "not drained"]
    assert lines[2:-1] == SRUN_FAILED and lines[-1] == "srun exit 1"  # every task exits 1
    assert cluster.node("n2")["State"] == "IDLE"  # software: named, not drained


def test_a_node_whose_tasks_run_under_a_lower_locked_memory_limit_is_named(cluster: Cluster, tmp_path: Path) -> None:
    """n2's task under 16 KiB of locked memory (its slurmd capped, a shell's limit passed on): too
    little for RDMA to register its buffers (network.locked-memory), named before the training."""
    cluster.reset("n1", "n2", "n3", "n4")
    _, lines, _ = preflight(cluster, tmp_path, '[ "$SLURMD_NODENAME" = n2 ] && ulimit -l 16; exec "$@"',
                            "--code-version", "v1")
    assert sorted(lines[:2]) == [SUMMARY_FAILED,
        f"tooling: error: n2: [preflight-version] n2's locked-memory limit 16 KiB (read from ulimit -l) differs from "
        f"{LIMIT} on n1, n3 (the majority); expected one locked-memory limit on every node of the job: a software "
        "mismatch, named, not drained"], lines
    assert lines[2:-1] == SRUN_FAILED and lines[-1] == "srun exit 1"


def test_a_node_that_cannot_reach_the_rendezvous_is_named_within_the_timeout(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    # n2's task is told another port: it never reaches rank 0's store, rank 0 never hears from it
    bad = '[ "$SLURMD_NODENAME" = n2 ] && set -- "$@" --port 1; exec "$@"'
    job, lines, seconds = preflight(cluster, tmp_path, bad, "--code-version", "v1")
    said = sorted(lines[:3])  # rank 0's verdict and n2's own line, in whichever order they came
    assert said[0] == SUMMARY_FAILED, lines
    assert re.fullmatch(re.escape("tooling: error: n2: [preflight-rendezvous] could not reach the rendezvous at "
                                  f"127.0.0.1:1 (n1, rank 0) within {TIMEOUT} s: ") + r"[^;]+" +
                        re.escape("; expected rank 0's task listening there"), said[1]), lines
    assert said[2] == (f"tooling: error: n2: [preflight-rendezvous] rank 1 on n2 sent no report within {TIMEOUT} s (its "
                       f"task did not start, died, or could not reach the rendezvous at 127.0.0.1:{job_port(int(job), 0)} "
                       "(n1, rank 0)); expected every node of the job to report")
    assert lines[3:-1] == SRUN_FAILED and lines[-1] == "srun exit 1"
    # bounded by its own timeouts (gloo's own default would be half an hour): three interpreters
    # importing torch on a busy two-core machine take most of it
    assert seconds < 4 * TIMEOUT + 60


def test_a_node_whose_all_reduce_cannot_complete_is_the_one_named(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    # n2 reports, then its gloo cannot open its transport (no such network interface there): the
    # others wait for it until their timeout
    bad = '[ "$SLURMD_NODENAME" = n2 ] && export GLOO_SOCKET_IFNAME=ib9; exec "$@"'
    _, lines, seconds = preflight(cluster, tmp_path, bad, "--code-version", "v1")
    said = sorted(lines[:2])  # n2's own line and rank 0's verdict, in whichever order they came
    assert said[0] == SUMMARY_FAILED, lines
    assert re.fullmatch(r"tooling: error: n2: \[preflight-allreduce\] the gloo all-reduce failed on rank 1 \(n2\) "
                        r"after \d+\.\d\d s: .*ib9; the others waited for it until the timeout; expected it to "
                        r"complete on every rank", said[1]), lines
    assert lines[2:-1] == SRUN_FAILED and lines[-1] == "srun exit 1"
    assert seconds < 4 * TIMEOUT + 60


def test_a_lost_gpu_drains_its_node_through_the_health_checks_path(cluster: Cluster, tmp_path: Path) -> None:
    cluster.reset("n1", "n2", "n3", "n4")
    smi = cluster.dir / "faults" / "n2" / "nvidia-smi"
    lost = "Unable to determine the device handle for GPU 0000:18:00.0: GPU is lost. Reboot the system to recover this GPU"
    smi.write_text(lost + "\n")  # what nvidia-smi -q prints of a GPU that fell off the bus
    try:
        _, lines, _ = preflight(cluster, tmp_path, 'exec "$@"', "--code-version", "v1", "--drain")
        reason = cluster.node("n2")["Reason"]
        state = cluster.node("n2")["State"]
    finally:
        cluster.reset("n2")
    evidence = f"nvidia-smi: {lost[:80]}".rstrip()  # the health check's cut
    assert reason == f"gpu.fell-off-bus {evidence}" and "DRAIN" in state
    assert sorted(lines[:2]) == [SUMMARY_FAILED,  # n2's own line and rank 0's verdict, in whichever order
        f'tooling: error: {smi}:1:1: [preflight-hardware] n2: gpu.fell-off-bus {evidence}; drained ("{reason}"); '
        "expected its GPUs to answer"]  # its driver, CUDA and NCCL unread: not compared
    assert lines[2:-1] == SRUN_FAILED and lines[-1] == "srun exit 1"
