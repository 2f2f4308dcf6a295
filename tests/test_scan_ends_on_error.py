"""A log whose last line is written at error or fatal severity by glog's prefix (TensorFlow, JAX,
XLA, the TPU runtime) ends on an error, whatever its words: an unclassified failure (issue 25,
item 1; raw-log sweep 7's TPU halt). Made-up logs: lines that must draft and lines that must not."""
from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from tooling.logs.scan import scan_logs

NOW = datetime(2026, 11, 29, 12, tzinfo=timezone.utc)
HALT = ("E1224 22:35:53.165575   26868 real_program_continuator.cc:1331] 0x0x0_TC0: *** Halt is unexpected, "
        "all pending programs will fail.")
STEP = "I1224 22:35:50.000000   26868 train.py:88] step 3200 | loss 2.31"


def drafted(tmp_path: Path, *lines: str) -> list[tuple[str, int]]:
    log = tmp_path / "tpu.log"
    log.write_text("".join(f"{text}\n" for text in lines), encoding="utf-8")
    return [(d.mode.id, min(where.first for where in d.logs.values())) for d in scan_logs([log], now=NOW).drafts]


def test_an_error_severity_line_that_ends_the_log_is_an_unclassified_failure(tmp_path: Path) -> None:
    assert drafted(tmp_path, HALT) == [("other.unclassified", 1)]
    assert drafted(tmp_path, STEP, HALT, "") == [("other.unclassified", 2)]  # trailing blank lines do not count
    fatal = "[1,0]<stderr>:F0120 12:29:19.847869   34285 fusion_emitter.cc:412] the tile is not what was expected"
    assert drafted(tmp_path, STEP, fatal) == [("other.unclassified", 2)]


def test_one_the_run_went_on_from_or_at_another_severity_is_not(tmp_path: Path) -> None:
    assert drafted(tmp_path, HALT, STEP) == []  # the run went on after it
    assert drafted(tmp_path, STEP, HALT.replace("E1224", "I1224", 1)) == []  # information
    assert drafted(tmp_path, STEP, HALT.replace("E1224", "W1224", 1)) == []  # a warning
    retrying = "E1224 22:35:53.165575   26868 grpc_client.cc:99] connection refused, will retry in 5 s"
    assert drafted(tmp_path, STEP, retrying) == []  # cut while it waited to retry
    assert drafted(tmp_path, STEP, "Error1224 22:35:53 on the dashboard") == []  # no prefix of glog's
    # a progress report written at error severity (a logger set to E for everything): the run went on
    assert drafted(tmp_path, STEP, STEP.replace("I1224", "E1224", 1)) == []


# TensorFlow's C++ logging writes the same severity after a date (raw-log sweep 8: XLA's client)
TF_ERROR = ("2022-04-04 00:27:49.642414: E tensorflow/compiler/xla/xla_client/xla_util.cc:88] Recent warning and "
            "error logs: the reservation was not possible")


def test_tensorflows_error_severity_after_a_date_ends_on_an_error_too(tmp_path: Path) -> None:
    assert drafted(tmp_path, STEP, TF_ERROR) == [("other.unclassified", 2)]
    with_thread = "2020-05-04 09:05:40.719343: E    1578 tensorflow/compiler/xla/xla_client/xla_util.cc:76] StackTrace:"
    assert drafted(tmp_path, STEP, with_thread) == [("other.unclassified", 2)]
    fatal = "2024-10-09 15:47:38.568412: F external/xla/xla/service/gpu/gpu_compiler.cc:12] the plan is not valid"
    assert drafted(tmp_path, STEP, fatal) == [("other.unclassified", 2)]


def test_tensorflows_information_and_warnings_after_a_date_are_not(tmp_path: Path) -> None:
    information = ("2018-10-23 20:08:23.135383: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1490] Adding "
                   "visible gpu devices: 1")
    assert drafted(tmp_path, STEP, information) == []
    assert drafted(tmp_path, STEP, TF_ERROR.replace(": E ", ": W ", 1)) == []
    assert drafted(tmp_path, TF_ERROR, STEP) == []  # the run went on after it
    assert drafted(tmp_path, STEP, "2022-04-04 00:27:49.642414: Epoch 3 done, E tensorflow is fine") == []
