"""A line of raw-log sweep 18 (tests/corpus/heldout-16) that was not read: Kubernetes' pod status
CrashLoopBackOff, its word for a container that keeps exiting and is restarted with a growing
back-off, in `kubectl get pods` (READY, then the status, then the restart count) and as the
waiting reason of `kubectl describe pod` or the pod's YAML: the scheduler's view of a failed
child, whose own log says why (process.child-failed). Public lines of threads no set cites
(pachyderm/pachyderm#2213, kubernetes/kubernetes#93575 and #22005, kubeflow/trainer#1717,
canonical/bundle-kubeflow#158, open-edge-platform/geti_v2#532; the table is kubeflow/katib#1112's,
in the sweep), with lines that must not be read so."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

ROWS = ("NAME                                         READY   STATUS             RESTARTS   AGE\n"
        "pytorchjob-example-82cjcqdz-master-0         0/2     CrashLoopBackOff   8          2m32s\n"
        "pytorchjob-example-82cjcqdz-worker-0         0/1     Init:1/2           0          2m31s\n"
        "pytorchjob-example-random-754f4df755-k8sv4   1/1     Running            0          3m1s\n")


@pytest.mark.parametrize("line", [
    "pytorchjob-example-bq7fbhnb-master-0         0/2     CrashLoopBackOff   8          2m33s",
    "      Reason:           CrashLoopBackOff",  # kubectl describe pod
    "          reason: CrashLoopBackOff",  # the pod's status in YAML
])
def test_a_pod_in_crashloopbackoff_is_a_failed_child(line: str) -> None:
    assert mode(line) == "process.child-failed"


@pytest.mark.parametrize("line", [
    "ambassador-79574bd65b-654hx                    1/1     Running            0          57m",
    "ex-685ab5fbdee5d4889cdef111-n0-0-dn0-0   0/3     Pending   0          16h",
    # an image that cannot be pulled: the container never ran, so no child failed
    "kube-system   fluentd-elasticsearch-e2e-test-mml-minion-siao   0/1       ImagePullBackOff    0          32m",
    "      Reason:           ImagePullBackOff",
    # a person's words about it, not the pod's status
    'Master pods keep crashing with "CrashLoopBackOff"',
])
def test_other_pod_states_and_words_about_it_are_not(line: str) -> None:
    assert mode(line) is None


def test_the_pods_table_is_drafted_at_its_crashing_row(tmp_path: Path) -> None:
    found = [(d["failure_mode"], d["logs"][0]["first_line"]) for d in drafts(tmp_path, ROWS)]
    assert found == [("process.child-failed", 2)]
