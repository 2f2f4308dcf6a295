"""Charts as inline SVG, drawn at build time: no JavaScript, no CDN, readable without colour."""
from __future__ import annotations

from datetime import date

from markupsafe import Markup

from tooling.site.escape import html_text

# One colour per layer of the stack cross-section (colour-blind-friendly order).
PALETTE = {
    "model-code": "#4477aa", "framework": "#66ccee", "cuda-libraries": "#228833",
    "nccl": "#ccbb44", "driver": "#ee6677", "gpu-hardware": "#aa3377", "host": "#bbbbbb",
    "network-fabric": "#332288", "storage": "#117733", "scheduler": "#882255",
    "human-ops": "#999933", "unknown": "#dddddd",
}


def _svg(width: int, height: int, label: str, body: list[str]) -> Markup:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{html_text(label)}" '
            f'class="playbook-chart" style="max-width:100%;height:auto">'
            f"<title>{html_text(label)}</title>")
    return Markup(head + "".join(body) + "</svg>")


def weekly_stacked(weeks: list[date], per_layer: dict[str, list[int]], *, label: str) -> Markup:
    """Incidents per week, one stacked bar per week, one colour per layer, legend below."""
    bar, gap, chart_h, left = 28, 10, 160, 30
    width = left + len(weeks) * (bar + gap) + 20
    peak = max([sum(col) for col in zip(*per_layer.values())] or [1]) or 1
    body = [f'<line x1="{left}" y1="{chart_h}" x2="{width - 10}" y2="{chart_h}" stroke="#888"/>',
            f'<text x="{left - 6}" y="16" font-size="11" text-anchor="end">{peak}</text>',
            f'<text x="{left - 6}" y="{chart_h}" font-size="11" text-anchor="end">0</text>']
    for i, week in enumerate(weeks):
        x, y = left + i * (bar + gap) + gap, chart_h
        for layer, counts in per_layer.items():
            if counts[i]:
                h = counts[i] / peak * (chart_h - 10)
                y -= h
                body.append(f'<rect x="{x}" y="{y:.1f}" width="{bar}" height="{h:.1f}" '
                            f'fill="{PALETTE.get(layer, "#777")}"><title>{html_text(layer)}: '
                            f'{counts[i]} in week of {week.isoformat()}</title></rect>')
        body.append(f'<text x="{x + bar / 2}" y="{chart_h + 14}" font-size="10" '
                    f'text-anchor="middle">{week.strftime("%m-%d")}</text>')
    legend_y = chart_h + 34
    for j, layer in enumerate(per_layer):
        lx, ly = left + (j % 4) * 150, legend_y + (j // 4) * 16
        body.append(f'<rect x="{lx}" y="{ly - 9}" width="10" height="10" fill="{PALETTE.get(layer, "#777")}"/>'
                    f'<text x="{lx + 14}" y="{ly}" font-size="11">{html_text(layer)}</text>')
    height = legend_y + ((len(per_layer) + 3) // 4) * 16 + 4
    return _svg(max(width, left + 4 * 150), height, label, body)


def horizontal_bars(values: list[tuple[str, float]], *, label: str, unit: str) -> Markup:
    """One bar per (name, value), largest first as given, the value printed at its end."""
    row, left, span = 22, 130, 360
    peak = max([v for _, v in values] or [1]) or 1
    digits = 0 if peak >= 100 else 1
    body = []
    for i, (name, value) in enumerate(values):
        y = i * row + 4
        w = value / peak * span
        body.append(f'<text x="{left - 6}" y="{y + 13}" font-size="11" text-anchor="end">{html_text(name)}</text>'
                    f'<rect x="{left}" y="{y}" width="{w:.1f}" height="16" fill="{PALETTE.get(name, "#4477aa")}"/>'
                    f'<text x="{left + w + 4:.1f}" y="{y + 13}" font-size="11">{value:,.{digits}f} {html_text(unit)}</text>')
    return _svg(left + span + 110, len(values) * row + 8, label, body)


def line_chart(series: dict[str, list[tuple[float, float]]], *, label: str, log_scale: bool = False) -> Markup:
    """Lines sharing one x axis (e.g. steps), each scaled to its own range, legend on top."""
    import math

    width, height, left, top = 560, 220, 40, 30
    colours = ["#ee6677", "#4477aa", "#228833", "#ccbb44"]
    xs = [x for points in series.values() for x, _ in points] or [0.0, 1.0]
    x0, x1 = min(xs), max(xs) if max(xs) > min(xs) else min(xs) + 1
    body = [f'<line x1="{left}" y1="{top + height}" x2="{left + width}" y2="{top + height}" stroke="#888"/>',
            f'<text x="{left}" y="{top + height + 16}" font-size="11">step {x0:g}</text>',
            f'<text x="{left + width}" y="{top + height + 16}" font-size="11" text-anchor="end">step {x1:g}</text>']
    for n, (name, points) in enumerate(series.items()):
        values = [math.log10(max(y, 1e-12)) if log_scale else y for _, y in points if math.isfinite(y)]
        if not values:
            continue
        lo, hi = min(values), max(values) if max(values) > min(values) else min(values) + 1
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{left + (x - x0) / (x1 - x0) * width:.1f},"
            f"{top + height - ((math.log10(max(y, 1e-12)) if log_scale else y) - lo) / (hi - lo) * height:.1f}"
            for i, (x, y) in enumerate(p for p in points if math.isfinite(p[1])))
        colour = colours[n % len(colours)]
        body.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="2"/>')
        first, last = points[0][1], points[-1][1]
        body.append(f'<text x="{left + n * 230}" y="16" font-size="12" fill="{colour}">{html_text(name)}: '
                    f'{first:.3g} → {last:.3g}{" (log scale)" if log_scale else ""}</text>')
    return _svg(left + width + 20, top + height + 24, label, body)


def stack_diagram(layers: list[tuple[str, str, int]], *, label: str) -> Markup:
    """The stack cross-section as boxes from top to bottom, each with its incident count and a bar."""
    row, width, bar_left, bar_span = 34, 640, 300, 260
    peak = max([count for _, _, count in layers] or [1]) or 1
    body = []
    for i, (layer, name, count) in enumerate(layers):
        y = 4 + i * row
        colour = PALETTE.get(layer, "#777")
        body.append(f'<rect x="4" y="{y}" width="{width - 8}" height="{row - 6}" rx="4" fill="none" '
                    f'stroke="{colour}" stroke-width="2"/>'
                    f'<rect x="4" y="{y}" width="10" height="{row - 6}" fill="{colour}"/>'
                    f'<text x="22" y="{y + 19}" font-size="13">{html_text(name)}</text>'
                    f'<rect x="{bar_left}" y="{y + 8}" width="{count / peak * bar_span:.1f}" height="12" fill="{colour}"/>'
                    f'<text x="{bar_left + count / peak * bar_span + 6:.1f}" y="{y + 19}" font-size="12">'
                    f'{count} incident{"s" if count != 1 else ""}</text>')
    return _svg(width, len(layers) * row + 8, label, body)
