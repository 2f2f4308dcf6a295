"""Lines of raw-log sweep 17 (tests/corpus/heldout-15) that were read wrongly or not at all: Ray's
exception line, which names the cause's class in parentheses ("ray.exceptions.RayTaskError(
DistBackendError): ray::_Inner.train() ..."), is a Python exception that ended a task even where
no traceback header is in the log; a traceback that ends in KeyboardInterrupt is a person's Ctrl-C
unwinding the process, not a bug of the code it was running. Public lines of threads no set cites
(ray-project/ray#30648, #43137, #43753; the Ctrl-C lines are axolotl-ai-cloud/axolotl#2688's, in
the sweep), with lines that must not be read so."""
from __future__ import annotations

from pathlib import Path

import pytest

from scan_support import drafts, mode

RAY_TASK = ("ray.exceptions.RayTaskError(AttributeError): ray::TrainALL.train() (pid=35968, ip=127.0.0.1, "
            "actor_id=a40ed1244b3633a795d5b82f01000000, repr=<__main__.TrainALL object at 0x000001E6F5BBE4F0>)")
CTRL_C = ("Aborted!\n"
          "^CException ignored in: <function Dataset.__del__ at 0x7f81332b8ea0>\n"
          "Traceback (most recent call last):\n"
          '  File "/root/miniconda3/envs/py3.11/lib/python3.11/site-packages/datasets/arrow_dataset.py", line 1410, '
          "in __del__\n"
          "    def __del__(self):\n"
          "\n"
          "KeyboardInterrupt:\n")


@pytest.mark.parametrize("line", [
    RAY_TASK,
    "RayTaskError(ValueError): ray::_Inner.train() (pid=1855, ip=127.0.0.1, repr=TorchTrainer)",
])
def test_rays_exception_with_its_cause_is_an_exception(line: str) -> None:
    assert mode(line) == "software.bug"


@pytest.mark.parametrize("line", [
    # Jupyter's header above Ray's traceback (no colon: the exception's own line comes below it)
    "RayTaskError(ValueError)                  Traceback (most recent call last)",
    "(RayTrainWorker pid=2285, ip=172.31.1.71) NCCL version 2.19.3+cuda12.3",
])
def test_lines_that_only_name_rays_exception_are_not_one(line: str) -> None:
    assert mode(line) is None


def test_rays_exception_is_drafted_without_its_traceback_header(tmp_path: Path) -> None:
    text = ('  File "/home/ray/anaconda3/lib/python3.9/site-packages/ray/_private/worker.py", line 2547, in get\n'
            "    raise value.as_instanceof_cause()\n" + RAY_TASK + "\n")
    assert [(d["failure_mode"], d["logs"][0]["first_line"]) for d in drafts(tmp_path, text)] == [("software.bug", 3)]


@pytest.mark.parametrize("prefix", ["", "[rank0]: "])
def test_a_traceback_ended_by_ctrl_c_is_no_failure(tmp_path: Path, prefix: str) -> None:
    text = "".join(prefix + line + "\n" for line in CTRL_C.splitlines())
    assert drafts(tmp_path, text) == []


def test_an_error_after_the_ctrl_c_is_still_one(tmp_path: Path) -> None:
    # a different exception that ended a later traceback is judged as any other
    text = CTRL_C + "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n" \
                    "RuntimeError: CUDA error: invalid argument\n"
    assert [d["failure_mode"] for d in drafts(tmp_path, text)] == ["software.bug"]
