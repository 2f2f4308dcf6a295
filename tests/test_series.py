"""What only the numbers show (issue 25, item 2): from the series of a log's progress lines,
`tooling scan`, `new-incident --from-log` and `tooling watch` draft a loss scale halved to its
floor, a loss spike that recovered or not, a plateau, a throughput drop or slow steps, a NaN that is
only a value and a stall seen as a gap in the timestamps, each with its numbers as evidence; and
healthy runs (noise, warm-up, a learning-rate decay, a checkpoint's pause) draft nothing."""
from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml
from hypothesis import given, strategies as st

from support import tooling
from tooling.logs import sampling
from tooling.logs.scan import scan_logs

NOW = "2026-11-29T12:00:00+00:00"
T0 = datetime(2026, 11, 2, 3, 0, tzinfo=timezone.utc)
UTC = "the log gives no time zone: taken as UTC"


def line(step: int, loss: float, *, at: datetime | None = None, norm: float | None = None,
         speed: float | None = None) -> str:
    """A progress line as train.py logs it: ``2026-11-02 03:00:00,000 INFO [train.py:214] step 10 | loss 2.5 | ...``."""
    parts = [f"step {step}", f"loss {loss:.4f}"]
    parts += [f"grad_norm {norm:.3f}"] if norm is not None else []
    parts += [f"tokens/s {speed:,.0f}"] if speed is not None else []
    stamp = f"{at:%Y-%m-%d %H:%M:%S},000 INFO [train.py:214] " if at is not None else ""
    return stamp + " | ".join(parts) + "\n"


def run(count: int, *, seed: int = 7, loss: Callable[[int], float] = lambda i: 2.5, every: float = 10.0,
        speed: Callable[[int], float] = lambda i: 400_000.0, pause: Callable[[int], float] = lambda i: 0.0) -> str:
    """``count`` progress lines, 10 steps apart: a loss and a throughput with 1% of noise (seeded)."""
    rnd = random.Random(seed)
    text, at = [], T0
    for i in range(count):
        at += timedelta(seconds=every + pause(i))
        text.append(line(i * 10, loss(i) * (1 + rnd.uniform(-0.01, 0.01)), at=at, norm=1.0 + rnd.uniform(-0.1, 0.1),
                         speed=speed(i) * (1 + rnd.uniform(-0.02, 0.02))))
    return "".join(text)


def scanned(repo: Path, text: str, name: str = "train.log") -> list[dict[str, Any]]:
    (repo / name).write_text(text, encoding="utf-8")
    result = tooling("--now", NOW, "scan", name, "--json", cwd=repo)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def only(drafts: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(drafts) == 1, [d["title"] for d in drafts]
    return drafts[0]


def spike(until: int) -> Callable[[int], float]:
    """A loss of 2.5 that jumps to 8 at line 200 and stays up until line ``until``."""
    return lambda i: 8.0 if 200 <= i < until else 2.5


def test_a_loss_spike_that_came_back_is_drafted_with_its_numbers(repo: Path) -> None:
    draft = only(scanned(repo, run(400, loss=spike(215))))
    start = "2026-11-02 03:33:30,000 INFO [train.py:214] step 2000 | loss 7.9468 | grad_norm 0.932 | tokens/s 395,326"
    assert draft == {
        "title": "Loss spike that recovered (loss 2.499 to 8.073)", "failure_mode": "training.loss-spike-recovered",
        "layer": "training-dynamics", "symptom": "loss-spike", "signatures": [start], "codes": [], "nodes": [],
        "ranks": [], "detected_at": "2026-11-02T03:33:30+00:00", "count": 1,
        "logs": [{"log": "train.log", "first_line": 201, "last_line": 201, "count": 1}], "notes": [UTC],
        "evidence": [
            "loss rose from its median 2.499 (robust deviation 0.01883, over the 100 progress lines before) to 8.073 "
            "at line 213 (step 2120): 3.2x the median, 223 deviations above it",
            "recovered: back to 2.475 at line 216 (step 2150), 150 steps after it started at line 201 (step 2000)",
            f"start: line 201 (step 2000): {start}",
            "peak: line 213 (step 2120): 2026-11-02 03:35:30,000 INFO [train.py:214] step 2120 | loss 8.0726 | "
            "grad_norm 1.070 | tokens/s 405,966",
            "end: line 216 (step 2150): 2026-11-02 03:36:00,000 INFO [train.py:214] step 2150 | loss 2.4750 | "
            "grad_norm 0.978 | tokens/s 406,829"]}


def test_a_spike_that_stays_up_past_its_patience_is_a_divergence(repo: Path) -> None:
    draft = only(scanned(repo, run(400, loss=spike(400))))
    assert (draft["title"], draft["failure_mode"], draft["logs"][0]["first_line"]) == (
        "Loss diverged (loss 2.499 to 8.075)", "training.divergence", 201)
    assert draft["evidence"][1] == ("not recovered: still 8.052 at line 252 (step 2510), 510 steps after it started "
                                    "at line 201 (step 2000) (patience 500 steps)")
    assert draft["evidence"][4].startswith("latest: line 252 (step 2510): ")


def test_a_log_that_ends_in_a_spike_is_a_divergence_for_scan(repo: Path) -> None:
    draft = only(scanned(repo, run(210, loss=spike(210))))
    assert draft["failure_mode"] == "training.divergence"
    assert draft["evidence"][1] == ("not recovered: the log ends 90 steps after it started at line 201 (step 2000), "
                                    "still up")
    assert draft["evidence"][4].startswith("latest: line 210 (step 2090): ")


def test_a_gradient_norm_that_blows_up_alone_is_a_divergence_too(repo: Path) -> None:
    text = "".join(line(i * 10, 2.5 + 0.01 * (i % 3), norm=40.0 if i >= 200 else 1.0 + 0.05 * (i % 5))
                   for i in range(300))
    draft = only(scanned(repo, text))
    assert (draft["title"], draft["failure_mode"]) == ("Loss diverged (grad norm 1.1 to 40)", "training.divergence")


def test_a_loss_scale_halved_down_to_its_floor_is_an_fp16_collapse(repo: Path) -> None:
    """Megatron's progress lines say the scale; DeepSpeed's overflow lines say each halving."""
    text, scale = [], 65536.0
    for i in range(300):
        if i >= 100 and i % 5 == 0 and scale > 1:
            text.append(f"[2026-11-02 03:10:00,000] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! "
                        f"Rank 0 Skipping step. Attempted loss scale: {scale:g}, reducing to {scale / 2:g}\n")
            scale /= 2
        text.append(f" iteration {i:>8}/  100000 | lm loss: {2.5 + 0.01 * (i % 7):.6E} | loss scale: {scale:.1f} |"
                    f" grad norm: 1.000 |\n")
    draft = only(scanned(repo, "".join(text)))
    assert (draft["title"], draft["failure_mode"], draft["logs"][0]["first_line"]) == (
        "Loss scale collapsed (fp16 gradient overflow) (loss scale 65,536 to 1)", "training.fp16-overflow", 191)
    assert draft["evidence"][0] == ("loss scale fell from 65,536 at line 1 (step 0) to 1 at line 191: halved 16 times, "
                                    "16 reductions seen; at 1 or below it has no room left to absorb an fp16 overflow")
    assert draft["evidence"][2] == ("floor: line 191: [2026-11-02 03:10:00,000] [INFO] [loss_scaler.py:183:update_scale]"
                                    " [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1")


def test_a_bf16_runs_constant_loss_scale_and_early_overflows_draft_nothing(repo: Path) -> None:
    bf16 = "".join(f" iteration {i:>8}/  100000 | lm loss: {2.5 + 0.01 * (i % 7):.6E} | loss scale: 1.0 |\n"
                   for i in range(300))
    early = "".join(f"[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {2 ** k}, reducing to "
                    f"{2 ** (k - 1)}\n" for k in (16, 15, 14, 13))
    assert scanned(repo, bf16) == []
    assert scanned(repo, early + run(100)) == []


def test_a_loss_that_stopped_moving_is_a_plateau_and_a_noisy_one_is_not(repo: Path) -> None:
    frozen = "".join(f" iteration {i * 10:>8}/  100000 | lm loss: {6.4039 if i >= 300 else 8 - i * 0.005:.6E} |\n"
                     for i in range(450))
    draft = only(scanned(repo, frozen))
    assert (draft["title"], draft["failure_mode"], draft["logs"][0]["first_line"]) == (
        "Loss plateau (lm loss 6.403900e+00 for 1000 steps)", "training.plateau", 301)
    assert draft["evidence"][0] == ("lm loss stayed at 6.403900e+00, to its last digit, over 101 progress lines, "
                                    "1000 steps from line 301 (step 3000) to line 401 (step 4000): not even its "
                                    "noise moved")
    assert scanned(repo, run(450)) == []  # flat, but noisy: what late training looks like
    assert scanned(repo, "".join(f"step {i * 10} | loss 2.31\n" for i in range(450))) == []  # 3 digits say too little


def test_a_persistent_throughput_drop_is_drafted_and_one_slow_step_is_not(repo: Path) -> None:
    draft = only(scanned(repo, run(300, speed=lambda i: 400_000.0 if i < 200 else 180_000.0)))
    assert (draft["title"], draft["failure_mode"], draft["logs"][0]["first_line"]) == (
        "Throughput dropped (straggler) (tokens/s 0.44x its median)", "training.throughput-drop", 201)
    assert draft["evidence"][0] == (
        "tokens/s fell to 178,122 at line 205 (step 2040), 0.45x its median 399,236 over the 100 progress lines before, "
        "and stayed below 0.7x for 5 progress lines in a row from line 201 (step 2000); lowest 177,053 at line 204 "
        "(step 2030) (0.44x)")
    assert scanned(repo, run(300, speed=lambda i: 100_000.0 if i == 150 else 400_000.0)) == []


def test_slow_steps_are_a_throughput_drop_where_a_line_gives_only_its_step_time(repo: Path) -> None:
    text = "".join(f" iteration {i:>8}/  100000 | elapsed time per iteration (ms): "
                   f"{(3100.0 if i >= 150 else 1500.0) + (i % 9) * 5:.1f} | lm loss: {2.5 + 0.01 * (i % 7):.6E} |\n"
                   for i in range(200))
    draft = only(scanned(repo, text))
    assert draft["title"] == "Throughput dropped (straggler) (elapsed time per iteration (ms) 2.07x its median)"
    assert draft["evidence"][0] == (
        "elapsed time per iteration (ms) rose to 3105 at line 155 (step 154), 2.04x its median 1520 over the 100 "
        "progress lines before, and stayed above 1.43x for 5 progress lines in a row from line 151 (step 150); "
        "slowest 3140 at line 153 (step 152) (2.07x)")


def test_a_nan_that_is_only_a_value_is_training_nan(repo: Path) -> None:
    text = "".join(f"| epoch 001 | step {i}, loss=3.2, gnorm={'nan' if i == 60 else '1.1'}, loss_scale=128\n"
                   for i in range(100))
    draft = only(scanned(repo, text))
    assert (draft["title"], draft["failure_mode"], draft["signatures"]) == (
        "Loss or gradients became NaN or Inf (gnorm nan)", "training.nan",
        ["| epoch 001 | step 60, loss=3.2, gnorm=nan, loss_scale=128"])
    assert "evidence" not in draft  # its line says it: no series needed


def test_a_gap_in_the_timestamps_is_a_stall(repo: Path) -> None:
    draft = only(scanned(repo, run(200, pause=lambda i: 45 * 60.0 if i == 120 else 0.0)))
    assert (draft["title"], draft["failure_mode"], draft["detected_at"]) == (
        "Training hung (cause not yet known) (no progress for 45 minutes)", "training.hang", "2026-11-02T03:20:00+00:00")
    assert draft["evidence"][0] == ("no progress line for 45 minutes between line 120 (step 1190) and line 121 "
                                    "(step 1200); they came every 10 s before (the median of the last 50 "
                                    "intervals): 271x the usual interval, past the stall rule's 30 minutes")


def test_a_pause_shorter_than_the_stall_rule_or_a_failure_in_the_gap_is_no_stall(repo: Path) -> None:
    assert scanned(repo, run(200, pause=lambda i: 5 * 60.0 if i == 120 else 0.0)) == []  # a checkpoint save
    lines = run(200, pause=lambda i: 45 * 60.0 if i == 120 else 0.0).splitlines(keepends=True)
    crash = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB.\n"
    drafts = scanned(repo, "".join(lines[:120] + [crash] + lines[120:]))
    assert [d["failure_mode"] for d in drafts] == ["cuda.oom"]  # the run died and came back: no stall of its own


def test_a_healthy_run_drafts_nothing(repo: Path) -> None:
    """Warm-up (the loss falling from 10), a learning-rate decay, 1% noise, a checkpoint save every
    500 steps pausing 3 minutes, an evaluation line, throughput noise."""
    def loss(i: int) -> float:
        return 10 * max(0.0, 1 - i / 100) ** 2 + 2.6 - 0.0003 * i

    lines = run(2000, loss=loss, pause=lambda i: 180.0 if i % 50 == 49 else 0.0).splitlines(keepends=True)
    lines.insert(1000, " validation loss at iteration 10000 | lm loss value: 3.1E+00 | lm loss PPL: 2.2E+01 |\n")
    assert scanned(repo, "".join(lines)) == []


def test_new_incident_from_log_files_the_finding_with_its_numbers(repo: Path) -> None:
    (repo / "train.log").write_text(run(400, loss=spike(215)), encoding="utf-8")
    result = tooling("--now", NOW, "new-incident", "--from-log", "train.log", "--run", "demo-7b", "--severity", "sev3",
                     cwd=repo)
    assert result.returncode == 0, result.stderr
    record = yaml.safe_load((repo / "incidents" / "INC-0003.yaml").read_text())
    assert record["failure_mode"] == "training.loss-spike-recovered"
    assert "What else shows it: loss rose from its median 2.499 (robust deviation 0.01883" in record["notes"]
    assert "; recovered: back to 2.475 at line 216 (step 2150), 150 steps after it started at line 201" in record["notes"]


def test_watch_once_files_the_same_finding(repo: Path, tmp_path: Path) -> None:
    text = run(400, loss=spike(215))
    drafted = only(scanned(repo, text, "whole.log"))
    (repo / "train.log").write_text(text, encoding="utf-8")
    result = tooling("--now", NOW, "watch", "train.log", "--run", "demo-7b", "--once", "--json",
                     "--state", str(tmp_path / "offsets.json"), cwd=repo)
    assert result.returncode == 0, result.stderr
    filed = [json.loads(out) for out in result.stdout.splitlines()]
    assert [(f["action"], f["failure_mode"], f["title"]) for f in filed] == [
        ("created", "training.loss-spike-recovered", drafted["title"])]
    assert (filed[0]["evidence"], filed[0]["signatures"]) == (drafted["evidence"], drafted["signatures"])


def test_a_dense_log_is_sampled_within_its_budget_and_the_same_in_any_chunks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past CAPACITY progress lines, one per RATE bytes (both made small here): the scan's cost
    stays bounded, and the lines sampled (so the drafts) do not depend on where chunks (or a
    watch's polls) end."""
    monkeypatch.setattr(sampling, "CAPACITY", 100)
    monkeypatch.setattr(sampling, "RATE", 1000)
    log = tmp_path / "dense.log"
    log.write_text(run(3000, speed=lambda i: 400_000.0 if i < 2000 else 150_000.0), encoding="utf-8")
    data = bytearray(log.read_bytes())
    samples = sampling.Sampler().read(data, 0, len(data), 0)
    assert 100 + len(data) // 1000 - 2 <= len(samples) <= 100 + len(data) // 1000 + 1
    now = datetime.fromisoformat(NOW)
    drafts = {size: [(d.mode.id, d.evidence) for d in scan_logs([log], now=now, chunk=size).drafts]
              for size in (1000, 4096, 65536, 1 << 23)}
    assert drafts[1 << 23][0][0] == "training.throughput-drop"
    assert drafts[1000] == drafts[4096] == drafts[65536] == drafts[1 << 23]


@st.composite
def healthy_runs(draw: st.DrawFn) -> str:
    """A noisy but stable run: warm-up, a slow decay, noise of 0.5-10% (seeded: always noise),
    steady throughput within 10%, progress every 5-60 s (within 20%), pauses of 1-28 minutes: never
    30 minutes between two progress lines, the stall rule."""
    rnd = random.Random(draw(st.integers(0, 2 ** 32)))
    count, base = draw(st.integers(50, 300)), draw(st.floats(0.5, 8.0))
    noise, decay = draw(st.floats(0.005, 0.1)), draw(st.floats(0.0, 1e-4))
    warmup, every, speed = draw(st.integers(0, 60)), draw(st.floats(5, 60)), draw(st.floats(1e3, 1e6))
    pauses = draw(st.lists(st.integers(0, count), max_size=3))
    text, at = [], T0
    for i in range(count):
        at += timedelta(seconds=every * rnd.uniform(0.8, 1.2) + (rnd.uniform(60, 28 * 60) if i in pauses else 0))
        loss = base * (1 - decay * i) * (1 + rnd.uniform(-noise, noise)) + (3 * base * (1 - i / warmup) if i < warmup else 0)
        text.append(line(i, loss, at=at, norm=rnd.uniform(0.5, 1.5), speed=speed * rnd.uniform(0.9, 1.1)))
    return "".join(text)


@pytest.mark.slow  # ~5 s for the default profile's examples
@given(healthy_runs())
def test_random_noisy_stable_runs_never_draft(text: str) -> None:
    import tempfile
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "train.log"
        log.write_text(text, encoding="utf-8")
        assert [d.mode.id for d in scan_logs([log], now=datetime.fromisoformat(NOW)).drafts] == []


@pytest.mark.parametrize("text", [
    "step 5 | loss nan | grad norm 1.0\n",  # the catalogue's words say it: one draft, the recogniser's
    "number of nan iterations:   0 |\n" * 3,  # Megatron's counter: a word, not a value
])
def test_non_finite_values_draft_once_or_not_at_all(repo: Path, text: str) -> None:
    assert len(scanned(repo, text)) == (1 if "loss nan" in text else 0)


def test_a_run_started_again_in_the_same_log_warms_up_again(repo: Path) -> None:
    """A second run appended to the log (its step counter back at 0, its loss at 10 again) is a
    new baseline, not a spike."""
    again = run(150, loss=lambda i: 10 * max(0.0, 1 - i / 60) ** 2 + 2.5)
    assert scanned(repo, run(300) + again) == []


def test_one_jump_of_the_loss_scale_is_no_collapse(repo: Path) -> None:
    """Halved down to its floor, not one line of another run (a bf16 run's "loss scale: 1.0"
    after a line that said 8,388,608): three reductions at least on the way down."""
    text = (" iteration 10/ 100 | lm loss: 2.504220E+00 | loss scale: 8388608.0 | grad norm: 0.231 |\n"
            " iteration 11/ 100 | lm loss: 2.504220E+00 | loss scale: 1.0 | grad norm: 0.231 |\n")
    assert scanned(repo, text) == []
