"""scripts/slurm-cluster itself: nodes and spares under one controller, the health check run by
slurmd every few seconds (HealthCheckProgram), and a stop that leaves nothing running."""
from __future__ import annotations

from pathlib import Path

from emulated import start, until

from tooling.records.load import load_file


def test_the_periodic_health_check_drains_an_idle_node_and_stop_leaves_nothing_running(tmp_path: Path) -> None:
    # a cluster of its own (folder, ports): the session's runs its checks only when a test says
    cluster = start(tmp_path / "cluster", 17410, "--nodes", "2", "--spares", "1", "--health-interval", "5")
    try:
        nodes = cluster.sh("sinfo", "-h", "-N", "-o", "%N %t %f %P")
        assert nodes.splitlines() == ["n1 idle (null) nodes*", "n2 idle (null) nodes*", "n3 idle spare nodes*"]
        assert "HealthCheckProgram      = " + str(cluster.dir / "hooks" / "health-check") in \
            cluster.sh("scontrol", "show", "config")
        cluster.inject("n2", "xid", "79")  # no job, no person: slurmd's next check finds it
        until(lambda: "DRAIN" in cluster.node("n2")["State"], "n2 drained by the HealthCheckProgram", seconds=30)
        reason = cluster.node("n2")["Reason"]
        assert reason.startswith("gpu.fell-off-bus Xid 79 GPU 0, INC-"), reason
        filed = load_file(str(cluster.dir / "records" / "incidents" / f"{reason.rpartition(', ')[2]}.yaml")).data
        assert (filed["failure_mode"], filed["nodes"]) == ("gpu.fell-off-bus", ["n2"])
        job = cluster.sh("sbatch", "--parsable", "--nodes=2", "--output=/dev/null", "--wrap", "srun sleep 300")
        until(lambda: "JobState=RUNNING" in cluster.sh("scontrol", "show", "job", job), f"job {job} to run")
        assert " NodeList=n[1,3]" in cluster.sh("scontrol", "show", "job", job)  # the spare took n2's place
        # its Prolog (the health check of n1 and n3) done, its steps run: stop must end them too
        until(lambda: sum("slurmstepd" in process for process in cluster.leftovers()) >= 3, "the job's steps")
    finally:
        stopped = cluster.script("stop")
    assert stopped.returncode == 0, stopped.stderr
    assert cluster.leftovers() == []  # no slurmctld, slurmd, slurmstepd or job step of this cluster
