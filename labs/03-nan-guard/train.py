"""Lab 3: the NaN guard and the grad-norm trend. A too-high learning rate provokes NaN; the guard
catches it before the optimizer step and the run recovers by the chosen policy.

Run (from the repository root, with the project's environment: . .venv/bin/activate):

    python labs/03-nan-guard/train.py --out /tmp/lab3                     # rollback, lower LR
    python labs/03-nan-guard/train.py --out /tmp/lab3 --policy skip       # skip bad steps
    python labs/03-nan-guard/train.py --out /tmp/lab3 --policy halt       # stop after 3 in a row
    python labs/03-nan-guard/train.py --out /tmp/lab3 --tensorboard /tmp/lab3/tb
    python labs/03-nan-guard/train.py --out /tmp/lab3 --log-every 10 > /tmp/lab3.log &
    tooling watch /tmp/lab3.log --run demo-7b                             # the NaN filed as it happens
    tensorboard --logdir /tmp/lab3/tb                                     # local, offline

It writes /tmp/lab3/metrics.jsonl (loss and grad norm of every step) and
/tmp/lab3/before-nan.svg, the chart of both in the steps before the first NaN: the grad norm
climbs for a while before anything breaks, which is why the trend is worth an alert.
Self-check: python labs/03-nan-guard/check.py
"""
from __future__ import annotations

import argparse
import html
import json
import math
import sys
from pathlib import Path
from typing import Callable

import torch

from tooling.resilience.checkpoint import CheckpointManager
from tooling.resilience.nan_guard import NaNGuard, Policy, TensorBoardSink, Verdict

STEPS = 400
PEAK_LR = 2.0  # reached after WARMUP steps; far too high for this model
WARMUP = 150
SAVE_EVERY = 10
SEED = 0
WINDOW = 40  # steps before the first NaN shown on the chart
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


def line_chart(series: dict[str, list[tuple[float, float]]], *, label: str, log_scale: bool = False) -> str:
    """An SVG of lines sharing one x axis (steps), each scaled to its own range, legend on top.
    Non-finite points are left out of the line (the legend still shows them)."""
    width, height, left, top = 560, 220, 40, 30
    colours = ["#ee6677", "#4477aa", "#228833", "#ccbb44"]  # colour-blind-friendly
    scale = (lambda y: math.log10(max(y, 1e-12))) if log_scale else (lambda y: y)
    xs = [x for points in series.values() for x, _ in points] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    body = [f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" stroke="#888"/>',
            f'<text x="{left}" y="{top + height + 16}" font-size="11">step {x0:g}</text>',
            f'<text x="{left + width}" y="{top + height + 16}" font-size="11" text-anchor="end">step {x1:g}</text>']
    for n, (name, points) in enumerate(series.items()):
        finite = [(x, y) for x, y in points if math.isfinite(y)]
        if not finite:
            continue
        values = [scale(y) for _, y in finite]
        lo, hi = min(values), max(values) if max(values) > min(values) else min(values) + 1
        path = " ".join(f"{'M' if i == 0 else 'L'}{left + (x - x0) / (x1 - x0) * width:.1f},"
                        f"{top + height - (scale(y) - lo) / (hi - lo) * height:.1f}" for i, (x, y) in enumerate(finite))
        colour = colours[n % len(colours)]
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        body.append(f'<text x="{left + n * 230}" y="16" font-size="12" fill="{colour}">{html.escape(name)}: '
                    f'{points[0][1]:.3g} → {points[-1][1]:.3g}{" (log scale)" if log_scale else ""}</text>')
    title = html.escape(label)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {left + width + 20} {top + height + 24}" '
            f'width="{left + width + 20}" height="{top + height + 24}" role="img" aria-label="{title}" '
            f'class="playbook-chart" style="max-width:100%;height:auto"><title>{title}</title>'
            + "".join(body) + "</svg>")


def chart(metrics: list[dict], out: Path) -> None:
    # log order, not step numbers: after a rollback the same steps are logged again
    first_bad = next((i for i, m in enumerate(metrics) if not m["finite"]), None)
    if first_bad is None:
        return
    window = metrics[max(0, first_bad - WINDOW):first_bad]
    series = {"grad norm": [(m["step"], float(m["grad_norm"])) for m in window],
              "loss": [(m["step"], float(m["loss"])) for m in window]}
    out.write_text(line_chart(series, label=f"Grad norm and loss in the {len(window)} steps before the "
                              f"first NaN (step {metrics[first_bad]['step']})", log_scale=True))


def progress_printer(every: int) -> Callable[[dict], None]:
    """A NaN-guard sink that prints a training log's step line every ``every`` steps (the finite
    ones: a bad step has its own line), the line tooling watch takes as progress."""
    def sink(record: dict) -> None:
        if record["finite"] and record["step"] % every == 0:
            print(f"step {record['step']} | loss {record['loss']:.4f} | grad norm {record['grad_norm']:.3f}", flush=True)
    return sink


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--policy", choices=[p.value for p in Policy], default="rollback")
    parser.add_argument("--peak-lr", type=float, default=PEAK_LR)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--tensorboard", type=Path, metavar="DIR", help="also write TensorBoard event files here")
    parser.add_argument("--log-every", type=int, default=0, metavar="N",
                        help="print a step line (loss, grad norm) every N steps, as a training log does")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "metrics.jsonl").unlink(missing_ok=True)

    torch.manual_seed(SEED)
    model = torch.nn.Sequential(torch.nn.Linear(16, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                                torch.nn.ReLU(), torch.nn.Linear(128, 1)).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.0)
    peak = args.peak_lr
    data = torch.Generator().manual_seed(SEED)
    manager = CheckpointManager(args.out / "checkpoints", keep=3)
    sinks: list[Callable[[dict], None]] = [TensorBoardSink(args.tensorboard)] if args.tensorboard else []
    if args.log_every > 0:
        sinks.append(progress_printer(args.log_every))
    guard = NaNGuard(policy=args.policy, max_bad_steps=3, lr_factor=0.3, log_path=args.out / "metrics.jsonl",
                     sinks=sinks)

    step = 0
    while step < args.steps:
        if step % SAVE_EVERY == 0:
            manager.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}, step)
        for group in optimizer.param_groups:  # linear warmup to the (too high) peak
            group["lr"] = peak * min(1.0, step / WARMUP)
        x = torch.randn(128, 16, generator=data).to(DEVICE)
        loss = torch.nn.functional.mse_loss(model(x), torch.sin(x).sum(dim=1, keepdim=True))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        verdict = guard.check(step, loss, model.parameters())
        if verdict is Verdict.STEP:
            optimizer.step()
        elif verdict is Verdict.ROLLBACK:
            state, good = manager.load_latest()  # type: ignore[misc]
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            peak *= guard.lr_factor
            print(f"step {step}: non-finite loss or grad norm; rolled back to step {good}, "
                  f"peak lr now {peak:g}", flush=True)
            step = good
            continue
        elif verdict is Verdict.HALT:
            print(f"step {step}: {guard.bad_in_a_row} bad steps in a row; halting without saving", flush=True)
            guard.close()
            return 3
        else:
            print(f"step {step}: non-finite loss or grad norm; step skipped", flush=True)
        step += 1
    guard.close()
    final = {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "step": step}
    manager.save(final, step)
    metrics = [json.loads(line) for line in (args.out / "metrics.jsonl").read_text().splitlines()]
    chart(metrics, args.out / "before-nan.svg")
    finite = all(math.isfinite(float(v.sum())) for v in model.state_dict().values())
    print(f"finished at step {step}; {guard.bad_total} bad steps caught; weights finite: {finite}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
