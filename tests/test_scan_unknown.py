"""Failures the catalogue does not know still become drafts (issue 25, item 1): a fatal line or a
process's death that no mode names, where it ends the log or kills a rank, is drafted as
``other.unclassified`` with its verbatim lines, its place and its codes; a log cut inside a
traceback says so; the same unknown error with other numbers, addresses and paths is one failure
(in one scan, and for `tooling repeats`), two different ones are two; healthy noise, warnings that
recover, retries that succeed and a stop someone asked for draft nothing. Every log is made up."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from support import tooling
from tooling.logs.scan import scan_logs
from tooling.logs.unknown import CUT, TAIL

NOW = "2026-11-29T12:00:00+00:00"
STEP = "2026-11-02 03:{m:02d}:00,000 INFO [train.py:214] step {s} | loss 2.51 | lr 3.00e-04"


def _log(tmp_path: Path, name: str, lines: list[str]) -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


def _drafts(tmp_path: Path, *names: str) -> list[dict[str, Any]]:
    done = tooling("--now", NOW, "scan", "--json", *names, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _steps(count: int) -> list[str]:
    return [STEP.format(m=s % 60, s=s) for s in range(count)]


def test_a_fatal_line_no_mode_names_that_ends_the_log_is_drafted_with_its_place_and_codes(tmp_path: Path) -> None:
    _log(tmp_path, "build.log", [*_steps(3), "sh: libtinfo.so.6: no version information available (required by sh)",
                                 "cc1plus: fatal error: fused_kernels.h: No such file or directory",
                                 "compilation terminated."])
    [draft] = _drafts(tmp_path, "build.log")
    assert (draft["failure_mode"], draft["layer"], draft["symptom"]) == ("other.unclassified", "unknown", "crash")
    assert draft["title"] == ("A failure the catalogue does not know "
                              "(cc1plus: fatal error: fused_kernels.h: No such file or directory)")
    assert draft["signatures"] == ["cc1plus: fatal error: fused_kernels.h: No such file or directory"]
    assert draft["logs"] == [{"log": "build.log", "first_line": 5, "last_line": 5, "count": 1}]
    assert draft["codes"] == ["errno 2 (ENOENT)"]


def test_an_error_followed_by_a_death_no_mode_owns_killed_its_rank(tmp_path: Path) -> None:
    # the run goes on elsewhere for longer than TAIL lines: only the death tells that it was fatal
    _log(tmp_path, "job.log", ["[2026-11-02 03:00:01] [ERROR] [engine.py:88] shard index 7 has no owner",
                               "srun: error: node017: task 3: Exited with exit code 3",
                               *[f"node001: INFO heartbeat {n}" for n in range(TAIL + 5)]])
    [draft] = _drafts(tmp_path, "job.log")
    assert draft["failure_mode"] == "other.unclassified"
    assert draft["signatures"] == ["[2026-11-02 03:00:01] [ERROR] [engine.py:88] shard index 7 has no owner",
                                   "srun: error: node017: task 3: Exited with exit code 3"]
    assert draft["logs"] == [{"log": "job.log", "first_line": 1, "last_line": 2, "count": 2}]
    assert draft["codes"] == ["exit 3"]


def test_the_same_unknown_error_with_other_numbers_addresses_and_paths_is_one_failure(tmp_path: Path) -> None:
    _log(tmp_path, "a.log", ["F1102 03:14:00.123456 48301 pjrt_future.h:229] Check failed: IsValid() "
                             "buffer 0x7f3bb1913669 of /scratch/run-17/step-003000"])
    _log(tmp_path, "b.log", ["F0301 09:00:00.999999 71 pjrt_future.h:231] Check failed: IsValid() "
                             "buffer 0x9a00 of /data/other-run/step-000010"])
    _log(tmp_path, "c.log", ["F0301 09:00:00.999999 71 fusion_emitter.cc:6694] Check failed: "
                             "fusion_util::IsFusibleUnalignedDUS(user, target_)"])
    same, other = _drafts(tmp_path, "a.log", "b.log", "c.log")
    assert [entry["log"] for entry in same["logs"]] == ["a.log", "b.log"]
    assert [entry["log"] for entry in other["logs"]] == ["c.log"]
    assert {same["failure_mode"], other["failure_mode"]} == {"other.unclassified"}


def test_an_unknown_failure_seen_twice_is_a_repeat(repo: Path) -> None:
    for name, line in (("a.log", "FATAL: shard 0x7f3b missing from /scratch/run-17/index after 3 attempts"),
                       ("b.log", "FATAL: shard 0x91aa missing from /data/run-2/index after 12 attempts")):
        _log(repo, name, ["INFO start", line])
        assert tooling("--now", NOW, "scan", name, "--write", "--run", "demo-7b", cwd=repo).returncode == 0
    done = tooling("repeats", "--json", cwd=repo)
    [group] = [g for g in json.loads(done.stdout)["candidates"] if g["occurrences"] > 1]
    assert (group["reason"], sorted(group["incidents"])) == ("error 'fatal shard missing from after attempts'",
                                                              ["INC-0003", "INC-0004"])


def test_a_log_cut_inside_a_traceback_says_so(tmp_path: Path) -> None:
    _log(tmp_path, "cut.log", [*_steps(2), "Traceback (most recent call last):",
                               '  File "/app/engine/core.py", line 1073, in run_engine_core',
                               "    engine_core = EngineCoreProc(*args, **kwargs)"])
    [draft] = _drafts(tmp_path, "cut.log")
    assert draft["failure_mode"] == "other.unclassified"
    assert draft["signatures"] == ["Traceback (most recent call last):", "    engine_core = EngineCoreProc(*args, **kwargs)"]
    assert draft["logs"] == [{"log": "cut.log", "first_line": 3, "last_line": 5, "count": 2}]
    assert draft["notes"][0] == CUT


HEALTHY = [
    # an error that a retry got past, the run going on
    ["[2026-11-02 03:00:01] [ERROR] [upload.py:40] failed to push metrics, retrying in 5 s", *_steps(2)],
    ["ERROR:root:checkpoint upload failed", "INFO:root:checkpoint upload succeeded on the second attempt"],
    ["[2026-11-02 03:00:01] [ERROR] [callbacks.py:12] visdom server not reachable", *_steps(3)],
    # metrics, warnings and a stop an operator asked for
    [*_steps(2), "epoch 3 | val error: 0.12 | top-1 error: 0.31"],
    ["UserWarning: The dataloader does not have many workers", "  warnings.warn(*args, **kwargs)", *_steps(1)],
    ["WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers",
     "Traceback (most recent call last):", '  File "main.py", line 84, in <module>', "    main()"],
    # a traceback whose exception line the paste lost, the run going on after it
    ["Traceback (most recent call last):", '  File "visdom/__init__.py", line 711, in _send',
     " object at 0x7f1a8f4b1ad0>: Failed to establish a new connection: [Errno 111] Connection refused'))",
     "MSN_TRAIN train [0: 0/9]  emd1: 0"],
]


def test_healthy_noise_and_errors_the_run_got_past_draft_nothing(tmp_path: Path) -> None:
    for n, lines in enumerate(HEALTHY):
        _log(tmp_path, f"h{n}.log", lines)
    assert _drafts(tmp_path, *(f"h{n}.log" for n in range(len(HEALTHY)))) == []


BASES = [
    _steps(6),
    [*_steps(4), "srun: error: node017: task 3: Exited with exit code 3"],
    [*_steps(4), "[2026-11-02 03:09:00] [ERROR] [engine.py:88] shard index 7 has no owner",
     "Floating point exception (core dumped)"],
    [*_steps(3), "Nov  2 03:14:02 node042 kernel: NVRM: Xid (PCI:0000:ca:00): 79, pid=1, GPU has fallen off the bus."],
]
NOISE = [
    ["2026-11-02 03:05:00,000 INFO [data.py:10] prefetching shard 12"],
    ["2026-11-02 03:05:00,000 WARNING [train.py:250] slow step 17: 7.3 s"],
    ["/usr/lib/python3/torch/utils/data.py:37: UserWarning: a bottleneck", "  warnings.warn(*args, **kwargs)"],
    ["[2026-11-02 03:05:00] [ERROR] [ckpt.py:7] upload of step 17 failed, retrying", STEP.format(m=5, s=17)],
    ["ERROR:root:metrics sink refused the connection", STEP.format(m=5, s=18)],
]


def _kinds(lines: list[str], tmp_path: Path) -> Counter[str]:
    """How many drafts of each mode (noise may change which line of a failure keys it, not add one)."""
    path = _log(tmp_path, "noisy.log", lines)
    return Counter(d.mode.id for d in scan_logs([path], now=datetime(2026, 11, 29, 12, tzinfo=timezone.utc)).drafts)


@given(base=st.sampled_from(range(len(BASES))),
       inserts=st.lists(st.tuples(st.integers(0, 10), st.sampled_from(range(len(NOISE)))), max_size=6))
def test_noise_that_recovers_never_adds_a_draft(tmp_path_factory: Any, base: int, inserts: list[tuple[int, int]]) -> None:
    tmp_path = tmp_path_factory.mktemp("noise")
    lines = list(BASES[base])
    before = _kinds(lines, tmp_path)
    for at, noise in inserts:  # never after the base's last line: noise there would be where the log ends
        spot = min(at, len(lines) - 1)
        lines[spot:spot] = NOISE[noise]
    after = _kinds(lines, tmp_path)
    assert all(after[mode] <= before[mode] for mode in after), (before, after)
    assert base != 0 or not before
