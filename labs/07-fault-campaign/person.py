"""The scripted person of lab 7's baseline: with every automation off, each fault waits for someone
to notice it and act, here after a fixed delay (as lab 1's person.py stands for a person at an
editor). What the person does is what the automation would have done, by hand, and each command
or edit is counted as a human action:

    nan, spike   go back to the newest checkpoint from before the bad data and skip it: the batches
                 in OUT/person.json, the checkpoint in OUT/person-resume.json, then restart the job
    preemption   the job died on the signal: start it again (it resumes from its last checkpoint)
    hang         end the hung job (if the collective timeout has not) and start it again
    xid          drain the node (scontrol update ... state=drain), then restart the job on the spare
    full-fs      the job died at its save: prune the other job's checkpoints to its newest two
                 (tooling.resilience.retention, what the health check's retention does), restart
    corrupt      the restart died loading the torn newest checkpoint: restart from the one before

"Restart": ``scontrol requeue`` while the job is still in the queue, else a new ``sbatch`` (SLURM
forgets a finished job after MinJobAge). The delay runs from when the fault shows: the injection
for what only a look at the training shows (NaN, spike, hang, Xid), the job's death for the rest.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time

from campaign import SPIKE_LENGTH, Campaign, Planned, until
from goodput import Injection
from tooling.resilience.dcp_resume import committed_steps

PRUNE = "import sys; from tooling.resilience.retention import prune; prune(sys.argv[1], keep=2)"


class Person:
    def __init__(self, campaign: Campaign, delay: float) -> None:
        self.campaign, self.delay = campaign, delay
        self.actions: list[tuple[str, str]] = []  # (fault kind, what the person did)

    def handle(self, fault: Planned, injection: Injection) -> None:
        shows = injection.at
        if fault.kind in ("preemption", "full-fs", "corrupt"):  # seen when the job dies
            until(lambda: not self.campaign.running(), f"the job to die of the {fault.kind}", 600)
            shows = time.time()
        time.sleep(max(0.0, shows + self.delay - time.time()))
        getattr(self, fault.kind.replace("-", "_"))(injection)

    def did(self, kind: str, what: str, *command: str) -> None:
        self.actions.append((kind, what))
        if command:
            self.campaign.cluster.sh(*command)

    def restart(self, kind: str) -> None:
        if self.campaign.queued():
            self.did(kind, f"scontrol requeue {self.campaign.job}", "scontrol", "requeue", self.campaign.job)
        else:
            self.did(kind, f"sbatch job.sbatch (job {self.campaign.job} is gone)")
            self.campaign.submit()

    def back_before(self, kind: str, position: int, last: int) -> None:
        """Roll back to the newest checkpoint before the step that read ``position``; skip to ``last``."""
        read = re.search(rf"^restart \d+ step (\d+) batch {position} ", self.campaign.timeline.read().text, re.M)
        before = (int(read[1]) if read else self.campaign.timeline.step) - 1
        good = max(e.step for e in committed_steps(self.campaign.out / "fs" / "checkpoints") if e.step <= before)
        person = self.campaign.out / "person.json"
        asked = json.loads(person.read_text()) if person.exists() else {"skip": []}
        person.write_text(json.dumps({"skip": [*asked["skip"], [position, last]]}))
        (self.campaign.out / "person-resume.json").write_text(json.dumps({"resume_at_most": good}))
        self.did(kind, f"batches {position}-{last} skipped, back to the checkpoint of step {good}")
        self.restart(kind)

    def nan(self, injection: Injection) -> None:
        assert injection.position is not None
        self.back_before("nan", injection.position, injection.position)

    def spike(self, injection: Injection) -> None:
        assert injection.position is not None
        self.back_before("spike", injection.position, injection.position + (SPIKE_LENGTH - 1) * 2)

    def preemption(self, injection: Injection) -> None:
        self.restart("preemption")

    def hang(self, injection: Injection) -> None:
        self.restart("hang")

    def xid(self, injection: Injection) -> None:
        self.did("xid", f"drained {injection.node}", "scontrol", "update", f"nodename={injection.node}", "state=drain",
                 "reason=Xid 79, drained by hand")
        self.restart("xid")

    def full_fs(self, injection: Injection) -> None:
        old = self.campaign.out / "fs" / "old-run"
        self.did("full-fs", f"pruned {old} to its newest two")
        subprocess.run([sys.executable, "-c", PRUNE, str(old)], check=True, timeout=120)
        self.restart("full-fs")

    def corrupt(self, injection: Injection) -> None:
        assert injection.position is not None
        (self.campaign.out / "person-resume.json").write_text(json.dumps({"resume_at_most": injection.position - 1}))
        self.did("corrupt", f"back to the checkpoint before the torn step {injection.position}")
        self.restart("corrupt")
