"""Charts as inline SVG, drawn at build time: no JavaScript, no CDN, readable without colour.

Every chart has a visible title with the window of time it shows (UTC) under it, labelled axes
with round ticks, and its numbers written beside the marks (the pages put the full table under
it). It is drawn 1:1 and never shrunk: on a narrow page its frame scrolls sideways. Text and axes take their colour from the
page (CSS: ``.playbook-chart``), so they follow the light and the dark palette; the mark
colours below are fixed and chosen to keep at least 3:1 contrast against both backgrounds.
Titles come from the caller; every other word a chart writes comes from the edition ``t``.
"""
from __future__ import annotations

import math
from datetime import date, datetime, timedelta

from markupsafe import Markup

from tooling.site.escape import html_text
from tooling.site.filters import day, dt, fixed, month_day
from tooling.site.i18n import ENGLISH, Edition

# One colour per layer of the stack cross-section, each with a relative luminance between 0.16
# and 0.26, which keeps >= 3:1 contrast against both the light page (#ffffff) and the dark one
# (#1e2129) (tests/site/test_dark_mode.py measures both). In so narrow a band of lightness the
# twelve must differ by hue and saturation: picked greedily for the largest smallest CIE76
# distance between any two (47; the earlier set had driver, scheduler and gpu-hardware within
# reach of one another), tests/test_charts.py keeps every pair >= 40 apart.
PALETTE = {
    "model-code": "#0066ff", "framework": "#0088cc", "cuda-libraries": "#009900",
    "nccl": "#998800", "driver": "#ff2200", "gpu-hardware": "#aa22ff", "host": "#ff1166",
    "network-fabric": "#aa66bb", "storage": "#009977", "scheduler": "#ff00bb",
    "human-ops": "#bb5533", "unknown": "#887777",
}
OTHER = "#0066ff"  # a layer the palette does not know (a newer schema); same contrast band

TITLE_H = 46  # room for the title line and the date window under it, above every chart
PLOT_WIDTH = 600  # the most a chart's plot takes, so that no page scales a chart (and its ticks) down
CARD_PLOT_WIDTH = 540  # a chart in a run card on the home page, which leaves it ~620 px
FONT = 12  # ticks, labels and numbers
LEGEND_COLUMN = 150


def colour(layer: str) -> str:
    return PALETTE.get(layer, OTHER)


def number(value: float) -> str:
    """A tick or a count: thousands separated, whole numbers without a decimal."""
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _fixed(value: float, digits: int, t: Edition) -> str:
    return fixed(value, digits, grouping=True, t=t)


def ticks(peak: float, *, integer: bool = False, most: int = 5) -> list[float]:
    """Round tick values from 0 up to the first one at or above ``peak`` (at most ``most``
    steps of 1, 2 or 5 times a power of ten; whole steps for counts)."""
    if peak <= 0:
        return [0, 1]
    magnitude = 10 ** math.floor(math.log10(peak / most))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude * most >= peak)
    if integer:
        step = max(1, math.ceil(step))
    count = math.ceil(peak / step - 1e-9)
    return [round(i * step, 10) for i in range(count + 1)]


def window(start: date | datetime | None, end: date | datetime | None, *, t: Edition = ENGLISH) -> str:
    """The span of time a chart shows, in UTC: days, or days and hours when given times."""
    if start is None or end is None:
        return ""
    return t.gettext("%(start)s – %(end)s UTC") % {"start": _when(start, t), "end": _when(end, t)}


def _when(value: date | datetime, t: Edition) -> str:
    return f"{day(value.date(), t=t)} {value:%H:%M}" if isinstance(value, datetime) else str(day(value, t=t))


def _svg(width: float, height: float, title: str, span: str, body: list[str]) -> Markup:
    """The chart at its natural size (12 px text stays 12 px) in a frame that scrolls sideways
    where the page is narrower (playbook.css: .chart-frame); the frame takes the keyboard focus,
    so that it can be scrolled without a pointer, and is named after the chart."""
    name = html_text(f"{title} ({span})" if span else title)
    head = (f'<span class="chart-frame" tabindex="0" role="group" aria-label="{name}">'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'width="{width:.0f}" height="{height:.0f}" role="img" aria-label="{name}" class="playbook-chart">'
            f"<title>{name}</title>"
            f'<text class="chart-title" x="0" y="18" font-size="15" font-weight="bold">{html_text(title)}</text>'
            + (f'<text class="chart-window" x="0" y="37" font-size="{FONT}">{html_text(span)}</text>' if span else ""))
    return Markup(head + "".join(body) + "</svg></span>")


def _text(x: float, y: float, text: str, *, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{FONT}" text-anchor="{anchor}"{extra}>'
            f"{html_text(text)}</text>")


def _legend(layers: list[str], x: float, y: float) -> tuple[list[str], float]:
    """Swatch and name per layer, four to a row; returns the marks and the height used."""
    body = []
    for j, layer in enumerate(layers):
        lx, ly = x + (j % 4) * LEGEND_COLUMN, y + (j // 4) * 18
        body.append(f'<rect x="{lx}" y="{ly - 10}" width="12" height="12" fill="{colour(layer)}"/>'
                    + _text(lx + 17, ly, layer))
    return body, ((len(layers) + 3) // 4) * 18


def weekly_stacked(weeks: list[date], per_layer: dict[str, list[int]], *, label: str,
                   t: Edition = ENGLISH) -> Markup:
    """Incidents per week, one stacked bar per week, one colour per layer, each week's total
    above its bar, the legend below. A long history narrows the bars instead of widening the
    chart (a wider one is scaled down on the page, ticks and all): past ~16 weeks the totals
    are left to the table under the chart and only every n-th week is labelled."""
    left, plot_h = 58, 160
    pitch = min(38.0, PLOT_WIDTH / max(len(weeks), 1))  # one bar and the gap after it
    bar, label_every = pitch * 0.74, math.ceil(36 / pitch)  # a label is ~34 px wide
    plot_top = TITLE_H + 18  # room for the totals above the tallest bar
    bottom = plot_top + plot_h
    right = left + len(weeks) * pitch + pitch * 0.26
    totals = [sum(column) for column in zip(*per_layer.values())] or [0] * len(weeks)
    marks = ticks(max(totals, default=0), integer=True)
    scale = plot_h / marks[-1]
    body = _y_axis(marks, scale, left, right, bottom, t.gettext("Incidents"))
    for i, week in enumerate(weeks):
        x, y = left + pitch * 0.26 + i * pitch, float(bottom)
        for layer, counts in per_layer.items():
            if counts[i]:
                h = counts[i] * scale
                y -= h
                body.append(f'<rect class="segment" x="{x:.1f}" y="{y:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                            f'fill="{colour(layer)}"><title>{html_text(layer)}: '
                            + str(html_text(t.gettext("%(count)s in the week of %(week)s")
                                            % {"count": counts[i], "week": day(week, t=t)})) + "</title></rect>")
        if label_every == 1:
            body.append(_text(x + bar / 2, y - 5, number(totals[i]), anchor="middle"))
        if i % label_every == 0:
            body.append(_text(x + bar / 2, bottom + 17, month_day(week, t=t), anchor="middle"))
    body.append(_text((left + right) / 2, bottom + 36, t.gettext("Week starting (month-day)"), anchor="middle"))
    width = max(right + 10, left + 4 * LEGEND_COLUMN)
    legend, legend_h = _legend(list(per_layer), left, bottom + 62)
    span = window(weeks[0], weeks[-1] + timedelta(days=6), t=t) if weeks else ""
    return _svg(width, bottom + 62 + legend_h, label, span, body + legend)


def _y_axis(marks: list[float], scale: float, left: float, right: float, bottom: float, name: str) -> list[str]:
    """Horizontal grid lines at each tick, tick labels, the axis line and its rotated name."""
    body = []
    for value in marks:
        y = bottom - value * scale
        body.append(f'<line class="grid" x1="{left}" y1="{y:.1f}" x2="{right}" y2="{y:.1f}" '
                    f'stroke="currentColor" stroke-opacity="0.3"/>'
                    + _text(left - 7, y + 4, number(value), anchor="end"))
    top = bottom - marks[-1] * scale
    body.append(f'<line class="axis" x1="{left}" y1="{top:.1f}" x2="{left}" y2="{bottom}" stroke="currentColor"/>'
                f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="currentColor"/>'
                + _text(-(top + bottom) / 2, 16, name, anchor="middle", extra=' transform="rotate(-90)"'))
    return body


def _x_axis(marks: list[float], scale: float, left: float, top: float, bottom: float, name: str) -> list[str]:
    """Vertical grid lines at each tick, tick labels under the axis line, the axis name."""
    body = []
    for value in marks:
        x = left + value * scale
        body.append(f'<line class="grid" x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{bottom}" '
                    f'stroke="currentColor" stroke-opacity="0.3"/>'
                    + _text(x, bottom + 16, number(value), anchor="middle"))
    right = left + marks[-1] * scale
    body.append(f'<line class="axis" x1="{left}" y1="{bottom}" x2="{right:.1f}" y2="{bottom}" stroke="currentColor"/>'
                f'<line class="axis" x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="currentColor"/>'
                + _text((left + right) / 2, bottom + 36, name, anchor="middle"))
    return body


def horizontal_bars(values: list[tuple[str, float]], *, label: str, unit: str, axis: str,
                    category: str | None = None, between: tuple[date, date] | None = None,
                    t: Edition = ENGLISH) -> Markup:
    """One bar per (name, value) in the order given, the value printed at its end; ``axis``
    names the quantity on the horizontal axis, ``category`` the names down the side,
    ``between`` the first and the last day of what the values count."""
    row, left, span = 24, 140, 340
    top = TITLE_H + 22  # the category heading sits between the title and the first bar
    marks = ticks(max([v for _, v in values], default=0))
    scale = span / marks[-1]
    digits = 0 if marks[-1] >= 100 else 1
    bottom = top + max(len(values), 1) * row + 4
    body = [_text(left - 8, top - 8, category or t.gettext("Layer"), anchor="end", extra=' font-weight="bold"')]
    body += _x_axis(marks, scale, left, top - 2, bottom, f"{axis} ({unit})")
    for i, (name, value) in enumerate(values):
        y, w = top + i * row + 2, value * scale
        body.append(_text(left - 8, y + 14, name, anchor="end")
                    + f'<rect x="{left}" y="{y}" width="{w:.1f}" height="18" fill="{colour(name)}"/>'
                    + _text(left + w + 5, y + 14, f"{_fixed(value, digits, t)} {unit}"))
    if not values:
        body.append(_text(left + 8, top + 16, t.gettext("No incidents with these times yet.")))
    return _svg(left + span + 130, bottom + 46, label, window(*(between or (None, None)), t=t), body)


def stack_diagram(layers: list[tuple[str, str, int]], *, label: str, between: tuple[date, date] | None = None,
                  t: Edition = ENGLISH) -> Markup:
    """The stack cross-section as boxes from top to bottom, each with its incident count and a
    bar on a shared count axis; ``between``: the first and the last day of the incidents counted."""
    row, width, bar_left, bar_span = 34, 660, 300, 240
    top = TITLE_H + 22
    marks = ticks(max([count for _, _, count in layers], default=0), integer=True)
    scale = bar_span / marks[-1]
    bottom = top + len(layers) * row
    body = [_text(22, top - 8, t.gettext("Layer (top of the stack first)"), extra=' font-weight="bold"'),
            *_x_axis(marks, scale, bar_left, top - 2, bottom, t.gettext("Incidents in the log"))]
    for i, (layer, name, count) in enumerate(layers):
        y, hue, w = top + i * row, colour(layer), count * scale
        body.append(f'<rect x="4" y="{y + 2}" width="{width - 8}" height="{row - 6}" rx="4" fill="none" '
                    f'stroke="{hue}" stroke-width="2"/>'
                    f'<rect x="4" y="{y + 2}" width="10" height="{row - 6}" fill="{hue}"/>'
                    + _text(22, y + 20, name)
                    + f'<rect x="{bar_left}" y="{y + 9}" width="{w:.1f}" height="14" fill="{hue}"/>'
                    + _text(bar_left + w + 6, y + 20, t.ngettext("%(num)s incident", "%(num)s incidents", count) % {"num": count}))
    return _svg(width, bottom + 46, label, window(*(between or (None, None)), t=t), body)


def hourly_bars(starts: list[datetime], values: list[int], *, label: str, axis: str, hours_axis: str,
                t: Edition = ENGLISH) -> Markup:
    """One bar per hour (``starts``: consecutive, UTC), its value written upright above it (a
    day of hours leaves each bar 22 px, too narrow for a number laid flat), every other hour
    named under the axis; ``axis`` names the quantity, ``hours_axis`` the hours. Sized to fit a
    run card on the home page without being scaled down. An hour with nothing shows its 0."""
    left, plot_h, headroom = 58, 120, 46  # headroom: the upright value above the tallest bar
    pitch = min(38.0, CARD_PLOT_WIDTH / max(len(starts), 1))
    bar, label_every = pitch * 0.74, math.ceil(40 / pitch)  # an hour label is ~35 px wide
    bottom = TITLE_H + headroom + plot_h
    right = left + len(starts) * pitch + pitch * 0.26
    marks = ticks(max(values, default=0), integer=True)
    scale = plot_h / marks[-1]
    body = _y_axis(marks, scale, left, right, bottom, axis)
    for i, (start, value) in enumerate(zip(starts, values)):
        x, h = left + pitch * 0.26 + i * pitch, value * scale
        if value:
            body.append(f'<rect class="bar" x="{x:.1f}" y="{bottom - h:.1f}" width="{bar:.1f}" height="{h:.1f}" '
                        f'fill="{OTHER}"><title>'
                        + str(html_text(t.gettext("%(count)s in the hour from %(start)s")
                                        % {"count": number(value), "start": dt(start, t=t)})) + "</title></rect>")
        cx, top = x + bar / 2 + 4, bottom - h - 4  # +4: the glyphs sit left of the turned baseline
        body.append(_text(cx, top, number(value), extra=f' transform="rotate(-90 {cx:.1f} {top:.1f})"'))
        if i % label_every == 0:
            body.append(_text(x + bar / 2, bottom + 17, start.strftime("%H:%M"), anchor="middle"))
    body.append(_text((left + right) / 2, bottom + 36, hours_axis, anchor="middle"))
    span = window(starts[0], starts[-1] + timedelta(hours=1), t=t) if starts else ""
    return _svg(right + 10, bottom + 46, label, span, body)
