"""What machines write into a run record: the one home of every machine write.

The training loop (:class:`tooling.resilience.RunReporter`, ``tooling report``), the SLURM hooks
(``tooling job``, the Prolog/Epilog in scripts/slurm/) and log watchers all call
:func:`feed_run`. It owns only the machine fields, ``progress.*`` (those given),
``last_good_checkpoint`` and ``feed.*``, and goes through the same locked, compare-and-swap
round-trip edit as ``tooling set`` (:func:`tooling.writers.edit.rewrite`): under the record's
lock the file is read afresh and only those fields change, so a person's edit to any other field,
saved before or while it runs, is kept. It never touches ``updated_at``, which says when a
*person* last brought the page up to date. The result is validated as ``set`` validates (its
errors: a machine write shows no warning); a refused write leaves the file as it was. A write
parses the page once (ruamel) and dumps it once, checks the result once, and reads of the other
records only those its rules name (:class:`tooling.rules.others.Repository`).

Bounds, so that a run of months keeps a page a person can still read: ``feed.samples`` keeps one
sample per sampling interval (the newest of each interval, by its ``at``) from the last 48 hours,
``feed.events`` the last 200 events (the run's first ``start`` and its latest always among them).
Samples and events are written one per line (flow style).

What a step says is worded here once (:func:`step_values`), for the reporter's writer process
(:mod:`tooling.writers.feed_server`) and ``tooling report`` alike: ``tokens_seen`` as people write
token counts (``412B``, as the run schema's example and the bundled records have it),
``throughput`` as ``3,900 tokens/s``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from tooling.records import roundtrip
from tooling.records.layout import path_of
from tooling.records.model import parse_time, record_time
from tooling.records.runs import SAMPLE_EVERY
from tooling.records.schema import schema_for
from tooling.rules.others import Repository
from tooling.writers.edit import rewrite

# SAMPLE_EVERY (records/runs.py) keeps the page short: every write re-reads and rewrites it
# through ruamel (pure Python, ~1 ms a line)
SAMPLES_KEPT = timedelta(hours=48)
EVENTS_KEPT = 200
_FEED = schema_for("run")["properties"]["feed"]
_ORDER = {"": list(schema_for("run")["properties"]), "feed": list(_FEED["properties"]),
          "progress": list(schema_for("run")["properties"]["progress"]["properties"]),
          "sample": list(_FEED["properties"]["samples"]["items"]["properties"]),
          "event": list(_FEED["properties"]["events"]["items"]["properties"]),
          "last_good_checkpoint": list(schema_for("run")["properties"]["last_good_checkpoint"]["properties"])}


def tokens_text(tokens: float) -> str:
    """412_000_000_000 -> '412B': three significant digits and the size's letter."""
    for size, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if abs(tokens) >= size:
            return f"{tokens / size:.3g}{suffix}"
    return f"{tokens:.0f}"


def step_values(step: int, *, total_steps: int | None = None, loss: float | None = None, tokens: float | None = None,
                tokens_per_s: float | None = None, at: Any = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ``progress`` fields and the ``feed.samples`` item that one step's numbers make (keyword
    arguments of :func:`feed_run`); a value not given is left out (``at``: the write's now)."""
    progress = {"step": step, "total_steps": total_steps, "loss": loss,
                "tokens_seen": tokens_text(tokens) if tokens is not None else None,
                "throughput": f"{tokens_per_s:,.0f} tokens/s" if tokens_per_s is not None else None}
    sample = {"at": at, "step": step, "loss": loss,
              # a rate the reporter worked out from counts that went down (a resume) is no sample's
              "tokens_per_s": round(tokens_per_s, 1) if tokens_per_s is not None and tokens_per_s >= 0 else None}
    return ({k: v for k, v in progress.items() if v is not None},
            {k: v for k, v in sample.items() if v is not None})


def feed_run(root: Path, run: str, *, now: datetime, progress: Mapping[str, Any] | None = None,
             checkpoint: Mapping[str, Any] | None = None, sample: Mapping[str, Any] | None = None,
             events: Sequence[Mapping[str, Any]] = (), sample_every: float = SAMPLE_EVERY,
             lock_timeout: float = 30.0) -> Path:
    """Write machine fields of the run record ``run`` under ``root``; returns its path.

    ``progress``: fields of ``progress`` to set (others stay); ``checkpoint``: the whole
    ``last_good_checkpoint``; ``sample``: one ``feed.samples`` item (``at`` defaults to ``now``);
    ``events``: ``feed.events`` items to append (``at`` defaults to ``now``). Progress or a
    sample also sets ``feed.heartbeat_at`` (to the sample's time, else ``now``). Raises
    :class:`~tooling.errors.UserError` (no such run, a result that would not validate),
    :class:`~tooling.fs.lock.LockTimeout` or ``OSError``; the file is then unchanged.
    """
    path = path_of(root, run, kinds=["run"])
    item = _item(sample, "sample", now) if sample is not None else None
    added = [_item(event, "event", now) for event in events]

    def change(text: str) -> str:
        document, yaml = roundtrip.load(text)
        if progress:
            node = _mapping(document, "progress", "")
            for key, value in progress.items():
                _put(node, key, value, "progress")
        if checkpoint is not None:
            _put(document, "last_good_checkpoint", _ordered(checkpoint, "last_good_checkpoint"), "")
        if progress or item is not None or added:
            feed = _mapping(document, "feed", "")
            if progress or item is not None:
                # a fresh object each time: one object in two places would be written as a YAML alias
                _put(feed, "heartbeat_at", _time(item["at"] if item is not None else now), "feed")
            if added:
                _add_events(_sequence(feed, "events"), added)
            if item is not None:
                _add_sample(_sequence(feed, "samples"), item, every=sample_every, began=_began(feed))
        return roundtrip.dump(document, yaml)

    # the records the rules ask for, by name, not every record: a write costs the same in any repository
    rewrite(path, change, universe=Repository(root), now=now, lock_timeout=lock_timeout, warnings=False)
    return path


def _time(value: Any) -> Any:
    """A timestamp as ruamel writes it plain (to the second, with its offset)."""
    if isinstance(value, datetime):
        value = record_time(value)
    return roundtrip.load_value(str(value))


def _item(values: Mapping[str, Any], kind: str, stamp: Any) -> CommentedMap:
    """A sample or an event, its keys in schema order, on one line."""
    item = _ordered({**values, "at": _time(values.get("at") or stamp)}, kind)
    item.fa.set_flow_style()
    return item


def _ordered(values: Mapping[str, Any], kind: str) -> CommentedMap:
    order = _ORDER[kind]
    keys = sorted(values, key=lambda k: order.index(k) if k in order else len(order))
    mapping = CommentedMap((k, values[k]) for k in keys if values[k] is not None)
    if "saved_at" in mapping:
        mapping["saved_at"] = _time(mapping["saved_at"])
    return mapping


def _put(mapping: Any, key: str, value: Any, kind: str) -> None:
    """Set ``key``; a new key goes where the schema puts it, not at the end."""
    if key in mapping:
        mapping[key] = value
        return
    order = _ORDER[kind]
    before = [k for k in order[: order.index(key)] if k in mapping] if key in order else list(mapping)
    mapping.insert(list(mapping).index(before[-1]) + 1 if before else 0, key, value)


def _mapping(parent: Any, key: str, kind: str) -> Any:
    if not isinstance(parent.get(key), dict):
        _put(parent, key, CommentedMap(), kind)
    return parent[key]


def _sequence(feed: Any, key: str) -> Any:
    if not isinstance(feed.get(key), list):
        _put(feed, key, CommentedSeq(), "feed")
    return feed[key]


def _when(value: Any) -> datetime | None:
    return value if isinstance(value, datetime) and value.tzinfo else parse_time(str(value))


def _began(feed: Any) -> datetime | None:
    """When the newest run of the record started (its newest ``start`` event), if the feed says."""
    starts = [_when(e.get("at")) for e in feed.get("events") or () if isinstance(e, dict) and e.get("kind") == "start"]
    return max((s for s in starts if s is not None), default=None)


def _add_sample(samples: Any, item: CommentedMap, *, every: float, began: datetime | None = None) -> None:
    """The newest sample of each interval of ``every`` seconds, of the last 48 hours; the last sample
    of a run before a restart (``began``) is kept whatever interval it shares with the next run's
    first: it is where the old run stopped, the point a resume is measured from."""
    at = _when(item["at"])
    assert at is not None, "a sample's time is a timestamp"
    last = _when(samples[-1].get("at")) if samples and isinstance(samples[-1], dict) else None
    crossed = began is not None and last is not None and last < began <= at
    if last is not None and not crossed and int(last.timestamp() // every) == int(at.timestamp() // every):
        samples[-1] = item
    else:
        samples.append(item)
    horizon = at - SAMPLES_KEPT
    while samples and isinstance(samples[0], dict) and (first := _when(samples[0].get("at"))) and first < horizon:
        del samples[0]


def _add_events(events: Any, added: list[CommentedMap]) -> None:
    """The last EVENTS_KEPT events, and the run's first start and the latest start among them
    whatever came after: a flood of signals must not push out when the run, or its job, began."""
    events.extend(added)
    starts = [i for i, event in enumerate(events) if isinstance(event, dict) and event.get("kind") == "start"]
    kept = {starts[0], starts[-1]} if starts else set()
    excess = len(events) - EVENTS_KEPT
    for i in reversed([i for i in range(len(events)) if i not in kept][:max(excess, 0)]):
        del events[i]
