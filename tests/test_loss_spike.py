"""The loss-spike guard (tooling/resilience/loss_spike.py): a robust running baseline, warm-up aware;
noise and a falling loss never trigger it, a jump past its patience gets the remedy, a spike that
recovers within its patience is only logged; every decision logged with its numbers, in words the
catalogue files as the right failure mode."""
from __future__ import annotations

import dataclasses
import json
import math
import random
import statistics
from pathlib import Path

import pytest
import torch
from hypothesis import given, strategies as st

from tooling.catalogue.automations import by_id, handled_by
from tooling.catalogue.recognise import recognise
from tooling.resilience.baseline import NORMAL_SCALE, RobustBaseline, median_deviation
from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.loss_spike import AUTOMATION, Decision, LossSpikeGuard, Remedy, SpikeConfig, Verdict
from tooling.resilience.manifest import checkpoint_name
from tooling.resilience.nan_guard import NaNGuard, grad_norm

CONFIG = SpikeConfig()
# healthy steps past the warm-up and a full window of them; a multiple of 3, so that
# [1.0, 1.1, 0.9] * (CALM // 3) is CALM steps
CALM = 3 * -(-(CONFIG.warmup + CONFIG.window) // 3)
# the properties' guard: a shorter warm-up and window, so that each example is a few dozen steps
SMALL = SpikeConfig(window=30, min_history=20, warmup=10)
SMALL_CALM = SMALL.warmup + SMALL.window


def run(guard: LossSpikeGuard, losses: list[float], norms: list[float] | None = None, start: int = 0) -> list[Decision]:
    return [guard.check(start + i, loss, None if norms is None else norms[i]) for i, loss in enumerate(losses)]


def uniform(rng: random.Random, level: float, spread: float, n: int) -> list[float]:
    """``n`` values within ``spread`` of ``level`` (bounded noise: its largest deviation is known)."""
    return [level + rng.uniform(-spread, spread) for _ in range(n)]


def test_median_and_deviation_of_a_sliding_window() -> None:
    baseline = RobustBaseline(5)
    for value in [1.0, 2.0, 3.0, 4.0, 100.0, 5.0]:  # 1.0 slides out
        baseline.add(value)
    assert baseline.median() == 4.0  # of 2, 3, 4, 100, 5: the outlier moves nothing
    assert baseline.deviation() == pytest.approx(NORMAL_SCALE * 1.0)  # |2-4|, 1, 0, 96, 1 -> median 1
    assert baseline.score(10.0, floor=0.0) == (4.0, pytest.approx(NORMAL_SCALE), pytest.approx(6 / NORMAL_SCALE))
    assert baseline.score(math.nan, floor=0.0)[2] == math.inf
    with pytest.raises(ValueError, match="finite values only"):
        baseline.add(math.inf)


@given(st.lists(st.floats(-1e6, 1e6) | st.integers(-3, 3).map(float), min_size=1, max_size=60))
def test_the_median_deviation_by_bisection_is_the_sorted_one(values: list[float]) -> None:
    ordered = sorted(values)
    middle = statistics.median(ordered)
    assert median_deviation(ordered) == statistics.median(sorted(abs(v - middle) for v in ordered))


@given(seed=st.integers(0, 2**32 - 1), level=st.floats(0.05, 20.0), noise=st.floats(0.0, 0.1),
       decay=st.floats(0.0, 0.005), gaussian=st.booleans())
def test_noise_and_a_slowly_falling_loss_never_trigger(seed: int, level: float, noise: float, decay: float,
                                                       gaussian: bool) -> None:
    # bounded noise never makes even a spike; normal noise may, once in millions of steps, go six
    # sigma out: a spike watched and over at the next step, never a remedy (that takes patience)
    rng = random.Random(seed)
    draw = (lambda: rng.gauss(0.0, noise)) if gaussian else (lambda: rng.uniform(-noise, noise))
    losses = [level * math.exp(-decay * step) * (1 + draw()) for step in range(200)]
    norms = [2.0 * (1 + draw()) for _ in range(200)]
    guard = LossSpikeGuard(SMALL)
    verdicts = {d.verdict for d in run(guard, losses, norms)}
    assert verdicts <= {Verdict.STEP, Verdict.WATCH} if gaussian else verdicts == {Verdict.STEP}
    assert guard.spikes == 0 or gaussian


def test_a_flat_loss_is_no_hair_trigger() -> None:
    # deviation 0: the floor (1% of the median) stands in, so a change in the last digit is nothing
    guard = LossSpikeGuard()
    decisions = run(guard, [2.0] * CALM + [2.0001, 2.1, 2.0])
    assert {d.verdict for d in decisions} == {Verdict.STEP}
    assert guard.check(CALM + 3, 2.2).event == "spike"  # 10 floors above: a spike after all


def test_nothing_is_judged_in_the_warmup() -> None:
    guard = LossSpikeGuard(SpikeConfig(warmup=50))
    losses = [1.0 + 0.01 * (i % 3) for i in range(49)] + [1000.0]  # the 50th step: still warm-up
    assert {d.verdict for d in run(guard, losses)} == {Verdict.STEP}
    assert guard.check(50, 1000.0).verdict is Verdict.WATCH


@given(seed=st.integers(0, 2**32 - 1), level=st.floats(0.1, 10.0), spread=st.floats(0.001, 0.2),
       k=st.floats(10.0, 10_000.0), patience=st.integers(0, 30), remedy=st.sampled_from(list(Remedy)))
def test_a_jump_that_lasts_past_its_patience_gets_the_remedy(seed: int, level: float, spread: float, k: float,
                                                              patience: int, remedy: Remedy) -> None:
    rng = random.Random(seed)
    config = dataclasses.replace(SMALL, patience=patience, remedy=remedy)
    guard = LossSpikeGuard(config)
    calm = uniform(rng, level, spread * level, SMALL_CALM)
    assert {d.verdict for d in run(guard, calm)} == {Verdict.STEP}
    deviation = guard.losses.deviation()
    jump = [level + k * max(deviation, config.min_deviation * level) + rng.uniform(-1, 1) * spread * level
            for _ in range(patience + 1)]
    decisions = run(guard, jump, start=SMALL_CALM)
    assert [d.event for d in decisions[:-1]] == (["spike"] + ["watch"] * (patience - 1) if patience else [])
    assert all(d.verdict is Verdict.WATCH for d in decisions[:-1])
    last = decisions[-1]
    start, now = SMALL_CALM, SMALL_CALM + patience
    if remedy is Remedy.LOWER_LR:
        assert (last.verdict, last.rollback_to, last.skip) == (Verdict.LOWER_LR, None, None)
    else:  # back to before the batches that led to it, which are skipped: from skip_before before the spike to now
        assert (last.verdict, last.rollback_to, last.skip) == (
            Verdict.ROLLBACK, start - config.skip_before, (start - config.skip_before, now))
    lowered = remedy is not Remedy.ROLLBACK
    assert (last.lr_factor, last.lr_steps) == ((config.lr_factor, config.lr_steps) if lowered else (None, None))
    assert last.message is not None and last.message.endswith(f"[handled_by: {AUTOMATION}]")
    assert recognise(last.message).mode.id == "training.divergence"  # type: ignore[union-attr]


@given(seed=st.integers(0, 2**32 - 1), level=st.floats(0.1, 10.0), spread=st.floats(0.001, 0.2),
       k=st.floats(10.0, 10_000.0), lasting=st.integers(1, 10))
def test_a_spike_that_recovers_within_its_patience_is_only_logged(seed: int, level: float, spread: float, k: float,
                                                                  lasting: int) -> None:
    rng = random.Random(seed)
    logged: list[dict[str, object]] = []  # what the log file gets (test_every_decision_... reads the file)
    guard = LossSpikeGuard(dataclasses.replace(SMALL, patience=10), sinks=[logged.append])
    run(guard, uniform(rng, level, spread * level, SMALL_CALM))
    deviation = max(guard.losses.deviation(), 0.01 * level)
    spike = [level + k * deviation for _ in range(lasting)]
    decisions = run(guard, spike + uniform(rng, level, spread * level, 10), start=SMALL_CALM)
    assert [d.verdict for d in decisions] == [Verdict.WATCH] * lasting + [Verdict.STEP] * 10
    assert [d.event for d in decisions][:lasting + 2] == ["spike"] + ["watch"] * (lasting - 1) + ["recovered", "step"]
    assert [r["decision"] for r in logged] == ["spike"] + ["watch"] * (lasting - 1) + ["recovered"]
    recovered = logged[-1]
    message, first = str(recovered["message"]), str(logged[0]["message"])
    assert message.startswith(f"loss-spike guard: step {SMALL_CALM + lasting}: not a persistent loss spike: ")
    assert recognise(message).mode.id == "training.loss-spike-recovered"  # type: ignore[union-attr]
    assert recognise(first).mode is None  # a spike being watched is no failure yet


def test_every_decision_is_logged_with_the_numbers_behind_it(tmp_path: Path) -> None:
    guard = LossSpikeGuard(SpikeConfig(patience=2, skip_before=3), log_path=tmp_path / "d.jsonl")
    losses = [1.0, 1.1, 0.9] * (CALM // 3) + [5.0, 5.0, 5.0]
    decisions = [guard.check(i, torch.tensor(loss), torch.tensor(2.0), batch=1000 + i) for i, loss in enumerate(losses)]
    guard.close()
    rollback = decisions[-1]
    assert (rollback.verdict, rollback.rollback_to, rollback.skip) == (
        Verdict.ROLLBACK, CALM - 3, (1000 + CALM - 3, 1002 + CALM))
    logged = [json.loads(line) for line in (tmp_path / "d.jsonl").read_text().splitlines()]
    assert [r["decision"] for r in logged] == ["spike", "watch", "rollback"]
    assert logged[-1] == {
        "step": CALM + 2, "decision": "rollback", "loss": 5.0, "loss_median": 1.0,
        "loss_deviation": pytest.approx(0.1 * NORMAL_SCALE), "loss_z": pytest.approx(4.0 / (0.1 * NORMAL_SCALE)),
        "grad_norm": 2.0, "grad_norm_median": 2.0, "grad_norm_deviation": 0.0, "grad_norm_z": 0.0,
        "threshold": 6.0, "patience": 2, "spike_start": CALM, "spike_steps": 3, "spikes": 1, "remedies_in_window": 1,
        "rollback_to": CALM - 3,
        "skip": [1000 + CALM - 3, 1002 + CALM], "message": rollback.message}
    assert rollback.message == (
        f"loss-spike guard: step {CALM + 2}: loss spike detected for 3 steps (patience 2): loss 5, 27.0 deviations "
        f"above its median 1 (deviation 0.148); grad norm 2, 0.0 above its median 2; rolling back to the newest "
        f"checkpoint at or before step {CALM - 3}, skipping batches {1000 + CALM - 3}-{1002 + CALM} "
        f"[handled_by: divergence-rollback]")


def test_a_gradient_norm_spike_alone_counts_and_can_be_switched_off() -> None:
    calm_losses, calm_norms = [1.0, 1.1, 0.9] * (CALM // 3), [2.0, 2.2, 1.8] * (CALM // 3)
    for threshold, verdicts in ((10.0, [Verdict.WATCH, Verdict.ROLLBACK]), (None, [Verdict.STEP, Verdict.STEP])):
        guard = LossSpikeGuard(SpikeConfig(patience=1, grad_threshold=threshold))
        run(guard, calm_losses, calm_norms)
        assert [d.verdict for d in run(guard, [1.0, 1.0], [50.0, 50.0], start=CALM)] == verdicts


def test_the_max_spikes_th_remedy_within_the_window_halts(tmp_path: Path) -> None:
    guard = LossSpikeGuard(SpikeConfig(patience=0, max_spikes=3, halt_window=500))
    calm = [1.0, 1.1, 0.9] * (CALM // 3)
    run(guard, calm)
    verdicts = []
    for spike in range(3):
        verdicts.append(guard.check(CALM + 10 * spike, 50.0).verdict)
        run(guard, [1.0, 1.1, 0.9] * 3, start=CALM + 10 * spike + 1)
    assert verdicts == [Verdict.ROLLBACK, Verdict.ROLLBACK, Verdict.HALT]
    halt = guard.check(CALM + 40, 50.0)  # the remedies stay within the window: halt again
    assert halt.verdict is Verdict.HALT and halt.message is not None
    assert "halting, a person is needed" in halt.message and "handled_by" not in halt.message
    assert recognise(halt.message).mode.id == "training.divergence"  # type: ignore[union-attr]
    spaced = LossSpikeGuard(SpikeConfig(patience=0, max_spikes=2, halt_window=20))
    run(spaced, calm)
    assert spaced.check(CALM, 50.0).verdict is Verdict.ROLLBACK
    run(spaced, [1.0] * 30, start=CALM + 1)
    assert spaced.check(CALM + 31, 50.0).verdict is Verdict.ROLLBACK  # the first fell out of the window


def test_a_non_finite_loss_is_a_spike_and_never_joins_the_baseline() -> None:
    guard = LossSpikeGuard(SpikeConfig(patience=0))
    run(guard, [1.0, 1.1, 0.9] * (CALM // 3))
    assert guard.check(CALM, math.nan).verdict is Verdict.ROLLBACK
    assert len(guard.losses) == CONFIG.window and guard.losses.median() == 1.0


@pytest.mark.parametrize("change, message", [
    ({"window": 2}, "SpikeConfig.window must be at least 3, got 2"),
    ({"min_history": 200}, "SpikeConfig.min_history must be between 3 and window, got 200"),
    ({"recover": 0.0}, "SpikeConfig.recover must be in (0, 1], got 0.0"),
    ({"lr_factor": 1.5}, "SpikeConfig.lr_factor must be in (0, 1], got 1.5"),
    ({"patience": -1}, "SpikeConfig.patience must be at least 0, got -1"),
    ({"remedy": "rollback"},
     "SpikeConfig.remedy must be a Remedy (rollback, lower-lr, rollback-lower-lr), got 'rollback'"),
])
def test_a_setting_out_of_range_is_named(change: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as error:
        LossSpikeGuard(SpikeConfig(**change))  # type: ignore[arg-type]
    assert str(error.value) == message


def test_the_guard_signs_with_an_automation_of_the_catalogue() -> None:
    assert by_id(AUTOMATION) is not None
    assert handled_by([f"loss-spike guard: step 9: ... [handled_by: {AUTOMATION}]"]) == AUTOMATION


def test_a_rollback_loads_the_newest_verified_checkpoint_at_or_before_a_step(tmp_path: Path) -> None:
    with CheckpointManager(tmp_path / "ckpt", keep=4) as manager:
        for step in (0, 10, 20, 30):
            manager.save({"step": step}, step)
        (tmp_path / "ckpt" / checkpoint_name(10)).write_bytes(b"torn")  # fails its checksum
        assert [manager.load_latest(at_most=n)[1] for n in (30, 29, 20, 15)] == [30, 20, 20, 0]  # type: ignore[index]
        assert manager.load_latest(at_most=-1) is None


def test_the_nan_guard_hands_its_numbers_to_the_spike_guard() -> None:
    # one gradient norm and one host sync a step for both guards: the NaN guard's, read from .last
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 1)
    loss = model(torch.ones(2, 4)).pow(2).mean()
    loss.backward()
    nan_guard = NaNGuard()
    nan_guard.check(7, loss, model.parameters())
    last = nan_guard.last
    assert last is not None and last["step"] == 7 and last["loss"] == pytest.approx(float(loss.detach()))
    assert last["grad_norm"] == pytest.approx(float(grad_norm(model.parameters())))
    decision = LossSpikeGuard().check(7, last["loss"], last["grad_norm"])
    assert (decision.verdict, decision.loss, decision.grad_norm) == (Verdict.STEP, last["loss"], last["grad_norm"])
