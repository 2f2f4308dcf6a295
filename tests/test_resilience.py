"""The resilience primitives at unit level: switch, NaN guard, run comparison (checkpoints: test_checkpoint.py)."""
from __future__ import annotations

import json
import math
import os
import warnings
from pathlib import Path

import pytest
import torch

from tooling.resilience.compare import RunRecorder, first_divergence, reproducible
from tooling.resilience.determinism import set_determinism
from tooling.resilience.nan_guard import NaNGuard, TensorBoardSink, Verdict
from tooling.resilience.switch import Action, KillSwitch


def test_kill_switch(tmp_path: Path) -> None:
    switch = KillSwitch(tmp_path)
    assert switch.check() is Action.CONTINUE
    (tmp_path / "SAVE").touch()
    assert switch.check() is Action.SAVE
    switch.saved()
    assert switch.check() is Action.CONTINUE and not (tmp_path / "SAVE").exists()
    (tmp_path / "STOP").touch()
    (tmp_path / "SAVE").touch()
    assert switch.check() is Action.STOP  # STOP wins


def _model_with_grad(value: float) -> torch.nn.Module:
    model = torch.nn.Linear(4, 1)
    for p in model.parameters():
        p.grad = torch.full_like(p, value)
    return model


@pytest.mark.parametrize("policy, verdicts", [
    ("skip", [Verdict.STEP, Verdict.SKIP, Verdict.SKIP, Verdict.SKIP, Verdict.STEP]),
    ("rollback", [Verdict.STEP, Verdict.ROLLBACK, Verdict.ROLLBACK, Verdict.ROLLBACK, Verdict.STEP]),
    ("halt", [Verdict.STEP, Verdict.SKIP, Verdict.SKIP, Verdict.HALT, Verdict.STEP]),
])
def test_nan_guard_policies(tmp_path: Path, policy: str, verdicts: list[Verdict]) -> None:
    guard = NaNGuard(policy=policy, max_bad_steps=3, log_path=tmp_path / "m.jsonl")
    losses = [1.0, math.nan, 2.0, 3.0, 1.0]
    grads = [0.1, 0.1, math.inf, math.nan, 0.1]
    got = [guard.check(i, torch.tensor(loss), _model_with_grad(g).parameters())
           for i, (loss, g) in enumerate(zip(losses, grads))]
    guard.close()
    assert got == verdicts
    log = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [entry["finite"] for entry in log] == [True, False, False, False, True]
    assert log[1]["loss"] == "nan" and log[2]["grad_norm"] == "inf"


def test_nan_guard_judges_the_jobs_gradient_norm_as_it_judges_the_parameters() -> None:
    # a sharded or all-reduced loop has the norm of the whole job, not whole parameters on a rank
    by_parameters, by_norm = NaNGuard(policy="halt", max_bad_steps=3), NaNGuard(policy="halt", max_bad_steps=3)
    losses, grads = [1.0, math.nan, 2.0, 3.0, 1.0], [0.1, 0.1, math.inf, math.nan, 0.1]
    for step, (loss, g) in enumerate(zip(losses, grads)):
        model = _model_with_grad(g)
        norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in model.parameters()]))
        assert by_parameters.check(step, torch.tensor(loss), model.parameters()) == \
            by_norm.check(step, torch.tensor(loss), grad_norm=norm)
        assert str(by_parameters.last) == str(by_norm.last)  # NaN == NaN as text
    with pytest.raises(ValueError, match="either the parameters or their gradient norm"):
        by_norm.check(5, torch.tensor(1.0))
    with pytest.raises(ValueError, match="either the parameters or their gradient norm"):
        by_norm.check(5, torch.tensor(1.0), _model_with_grad(0.1).parameters(), grad_norm=0.1)


def test_nan_guard_sinks_get_every_step_and_tensorboard_keeps_the_nan(tmp_path: Path) -> None:
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    seen: list[dict] = []
    guard = NaNGuard(sinks=[seen.append, TensorBoardSink(tmp_path / "tb")])
    # steps 0, 1, 2 (NaN), then a rollback to step 1 and on
    for step, (loss, g) in zip([0, 1, 2, 1, 2], [(1.0, 0.1), (0.5, 4.0), (math.nan, 0.1), (0.25, 0.1), (0.2, 0.1)]):
        guard.check(step, torch.tensor(loss), _model_with_grad(g).parameters())
    guard.close()
    assert [r["step"] for r in seen] == [0, 1, 2, 1, 2]
    assert [r["finite"] for r in seen] == [True, True, False, True, True]
    events = EventAccumulator(str(tmp_path / "tb"))
    events.Reload()
    losses = [(e.step, e.value) for e in events.Scalars("nan_guard/loss")]
    assert [x for x, _ in losses] == [0, 1, 2, 3, 4], "a rollback must not hide the NaN"
    assert math.isnan(losses[2][1]) and losses[3][1] == 0.25
    assert [e.value for e in events.Scalars("nan_guard/step")] == [0, 1, 2, 1, 2]
    assert [e.value for e in events.Scalars("nan_guard/bad_steps")] == [0, 0, 1, 1, 1]
    norms = [e.value for e in events.Scalars("nan_guard/grad_norm")]
    assert norms[1] == pytest.approx(seen[1]["grad_norm"]) and norms[1] > norms[0]


def _train(directory: Path, *, poison_at: int | None = None) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    recorder = RunRecorder(directory)
    data = torch.Generator().manual_seed(0)
    for step in range(6):
        x = torch.randn(16, 8, generator=data)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        if step == poison_at:
            model[2].weight.grad[0, 3] += 1e-3  # a divergence injected on purpose, in the last layer
        recorder.record(step, loss, model)
        optimizer.step()


def test_run_comparison_names_the_step_and_layer_of_an_injected_divergence(tmp_path: Path) -> None:
    _train(tmp_path / "a")
    _train(tmp_path / "b", poison_at=3)
    divergence = first_divergence(tmp_path / "a", tmp_path / "b", tolerance=1e-7)
    assert divergence is not None
    assert (divergence.step, divergence.what, divergence.layer) == (3, "grads", "2.weight")
    assert str(divergence).startswith("first divergence at step 3 in grads of 2.weight")
    _train(tmp_path / "c")
    assert first_divergence(tmp_path / "a", tmp_path / "c") is None


def test_reproducibility_is_final_loss_within_a_thousandth() -> None:
    assert reproducible(lambda seed: 1.0 + seed * 0.0004, seeds=(1, 2))[0] is True
    assert reproducible(lambda seed: 1.0 + seed * 0.002, seeds=(1, 2))[0] is False


def test_strict_determinism_sets_the_debugging_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("CUBLAS_WORKSPACE_CONFIG", "NCCL_ALGO"):  # restored after the test, whatever it sets
        monkeypatch.delenv(name, raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CUDA here: nothing is too late
        seeds = set_determinism(True, seed=7, rank=3)
    try:
        assert (seeds.model, seeds.data) == (7, 10)
        assert torch.are_deterministic_algorithms_enabled()
        assert os.environ["CUBLAS_WORKSPACE_CONFIG"] == ":4096:8" and os.environ["NCCL_ALGO"] == "Ring"
    finally:
        set_determinism(False)
    assert not torch.are_deterministic_algorithms_enabled()
