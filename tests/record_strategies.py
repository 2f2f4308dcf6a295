"""Hypothesis strategies for sets of records, drawn from the JSON Schemas the package ships.

Each record is drawn from its kind's shipped schema, read as the validator reads it (objects
and arrays walked here, every other leaf drawn by hypothesis-jsonschema's ``from_schema``), with
these changes, which keep the draws inside what a repository can hold and make them worth
rendering:

- free text (any string without a pattern, a format or an enum) comes from :func:`text`:
  unicode, markdown, HTML and jinja2 metacharacters, line breaks, tabs, very long lines;
- dates and times are real ones within the validator's years, in every form the schema
  allows (a year, a month, a day, a time with ``T``, ``t`` or a space, seconds or not, fractions
  of up to nine digits, ``Z``, ``z`` and offsets from -23:59 to +23:59 with or without a colon);
- references name records of the same set (an incident's run, a postmortem's incidents, a
  run's known issues), failure modes name modes of the catalogue and handled_by an automation of it;
- whole numbers stay within what the loader reads (2**63 - 1; more is refused, as designed);
- a list holds at most four items more than it must.

What the validator refuses for reasons no schema states (times out of order, a resolved
incident without resolved_at) is mended after the draw, so that most sets validate; the tests
still validate every set and look only at those without errors.
"""
from __future__ import annotations

import json
import re
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from functools import lru_cache, partial
from typing import Any

from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from tooling.catalogue.automations import catalogue as automations
from tooling.catalogue.modes import catalogue
from tooling.records.characters import first_bad
from tooling.records.model import parse_time
from tooling.records.schema import resolve, schema_for
from tooling.records.yaml_loader import MAX_INTEGER
from tooling.rules.time_rules import EARLIEST, LATEST

# --- free text ---------------------------------------------------------------------------------

# Pieces that mean something to markdown, Python-Markdown's extensions, HTML, jinja2, %-formatting,
# YAML or a table, and characters that are easy to get wrong (right-to-left, zero width, Hangul).
NASTY = [
    "|", "||", "\\|", "`", "``", "```", "\\", "\\`", "*", "**", "_", "__", "#", "# ", "## h", "[", "]",
    "[x](y)", "[x](javascript:alert(1))", "![i](x.png)", "<", ">", "&", "&amp;", "&#96;", "&grave;",
    "<b>", "</p>", "<script>alert(1)</script>", "<!--", "-->", "{{", "}}", "{{ a }}", "{%", "%}",
    "{% raw %}", "{#", "#}", "{#id}", "{: .x }", "%", "%(x)s", "%s", "{}", "{0}", "$x", "~~~", "~~x~~",
    "---", "- ", "* ", "1. ", "> ", "    ", "!!! note", "??? x", ":", ": ", " :", "--8<--", '--8<-- "x.md"',
    "[[x]]", "^", "==", "+", "-", ".", "!", "'", '"', "\n", "\n\n", "\r\n", "\t", "\n| a | b |\n|---|---|\n",
    "\n    code\n", "\n- item\n", "\u00a0", "\u200b", "\u200d", "\u202e", "\ufeff", "é", "e\u0301",
    "😀", "👩‍🔧", "한국어", "日本", "ﬁ", "Ⅻ", "𝔘", "null", "~", "yes", "no", "on", "off", "true",
    "1e5", "0x1F", "1_000", "12:30", "0o17", ".inf", "-.nan", "&x", "*x", "!!str", "@", "?",
]
# Characters a record may hold (records.characters refuses the rest; a tab is written escaped).
_ALPHABET = st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\u2028\u2029") \
    | st.sampled_from("\t\n\r")


def _allowed(text: str) -> str:
    """``text`` without the characters no record may hold (noncharacters, C1 controls)."""
    while (bad := first_bad(text)) is not None:
        text = text[:bad[0]] + text[bad[0] + 1:]
    return text


_PIECE = st.sampled_from(NASTY) | st.text(_ALPHABET, max_size=12) | st.text(string.ascii_letters + " ", max_size=12)
_SHORT = st.lists(_PIECE, max_size=6).map("".join)
# a long line: a pasted traceback, a log line of thousands of characters
_LONG = st.tuples(_SHORT, st.sampled_from([*NASTY, "x", "word "]), st.integers(50, 1500)).map(
    lambda p: p[0] + p[1] * p[2])
_TEXT = st.one_of(*[_SHORT] * 9, _LONG)


def _fit(low: int, high: int | None, value: str) -> str:
    value = _allowed(value)
    value += "x" * max(0, low - len(value))
    return value if high is None else value[:high]


@lru_cache(maxsize=None)
def text(min_size: int = 0, max_size: int | None = None) -> st.SearchStrategy[str]:
    """Free text of ``min_size``..``max_size`` characters: pieces of markup and plain words,
    now and then a very long run of one of them."""
    return _TEXT.map(partial(_fit, min_size, max_size))


def _person(value: str) -> str:
    name = value.replace("\n", " ").strip()
    return name if name and not name[0].isspace() else "dana"


person = text(1, 60).map(_person)  # a name or handle without surrounding spaces, as the schema asks
# an http(s) URL or a repository-relative path, the rest of it anything (on one line)
url = st.tuples(st.sampled_from(["http://", "https://", "/", "./", "../"]),
                st.sampled_from(["", "runbooks/runs/", "../runbooks/runs/", "incidents/", "x?a=1&b=<2>", "a%20b",
                                 "(x)", "[x]", "`x`", "|", "#frag", "%20"]),
                text(0, 40)).map(lambda p: "".join("".join(p).split()))


# --- dates and times ---------------------------------------------------------------------------

_SPAN = int((datetime(LATEST.year, 12, 31, tzinfo=timezone.utc)
             - datetime(EARLIEST.year, 1, 1, tzinfo=timezone.utc)).total_seconds()) - 2 * 86400


def _zone(draw: st.DrawFn) -> tuple[timezone, str]:
    form = draw(st.sampled_from(["Z", "z", "+00:00", "-00:00", "offset", "offset-no-colon"]))
    if form in ("Z", "z", "+00:00", "-00:00"):
        return timezone.utc, form
    minutes = draw(st.integers(-(23 * 60 + 59), 23 * 60 + 59))
    sign, size = ("-" if minutes < 0 else "+"), abs(minutes)
    colon = "" if form == "offset-no-colon" else ":"
    return timezone(timedelta(minutes=minutes)), f"{sign}{size // 60:02d}{colon}{size % 60:02d}"


@st.composite
def timestamp(draw: st.DrawFn) -> str:
    """A real time with an offset, inside the years a record may hold, in any form the schema allows."""
    zone, written = _zone(draw)
    start = datetime(EARLIEST.year, 1, 2, tzinfo=timezone.utc)
    when = (start + timedelta(seconds=draw(st.integers(0, _SPAN)))).astimezone(zone)
    sep = draw(st.sampled_from("TT t"))
    text_ = when.strftime(f"%Y-%m-%d{sep}%H:%M")
    if draw(st.booleans()):
        text_ += when.strftime(":%S")
        if draw(st.booleans()):
            text_ += "." + "".join(draw(st.lists(st.sampled_from(string.digits), min_size=1, max_size=9)))
    return text_ + written


@st.composite
def when(draw: st.DrawFn) -> str:
    """A timestamp, or as much of a date as is known (2022, 2022-06, 2022-06-14)."""
    full = draw(timestamp())
    cut = draw(st.sampled_from([None, None, None, 4, 7, 10]))
    return full if cut is None else full[:cut]


@st.composite
def day(draw: st.DrawFn) -> str:
    return draw(timestamp())[:10]


# --- the shipped schemas, made into generators -------------------------------------------------

def _within(name: str, strategy: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """``strategy``, held to the pattern of the schemas' definition ``name`` as it is today."""
    spec = next(s["$defs"][name] for s in map(schema_for, ("incident", "postmortem", "run")) if name in s["$defs"])
    pattern = re.compile(spec["pattern"])
    return strategy.filter(lambda value: pattern.search(value) is not None)


# Definitions of the schemas drawn by the strategies above rather than from their patterns.
_DEFS: dict[str, st.SearchStrategy[str]] = {name: _within(name, strategy) for name, strategy in (
    ("when", when()), ("timestamp", timestamp()), ("date", day()), ("person", person), ("url", url))}
LONGEST = 4  # items of a list: more cost time and find nothing that four do not (a long list is a long text)
REF = "INC-REF"  # stands for an incident of the set, named once the set is drawn
# Fields that name other records: drawn by record_sets() from the set's ids, not from the schema.
_LINKS = {"incident": ("id", "run", "scope", "cluster", "repeat_of", "not_repeat_of", "related", "failure_mode",
                       "handled_by"),
          "postmortem": ("id", "incidents"), "run": ("id",)}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _strategy(node: dict[str, Any], defs: dict[str, Any]) -> st.SearchStrategy[Any]:
    """What ``node`` of a schema allows. Objects and arrays are walked here, each value drawn
    from its own leaf strategy built once: hypothesis-jsonschema rebuilds an object's member
    strategies at every draw, which costs a record a third of a second. Leaves other than the
    free text and the definitions above come from hypothesis-jsonschema's ``from_schema``."""
    name = node.get("$ref", "").rsplit("/", 1)[-1]
    if name in _DEFS:
        return _DEFS[name]
    if name == "incident_id":
        return st.just(REF)
    node = resolve(node, defs)
    if node.get("type") == "object" and "properties" in node:
        properties, required = node["properties"], node.get("required", [])
        optional = {k: _strategy(v, defs) for k, v in properties.items() if k not in required}
        return st.fixed_dictionaries({k: _strategy(properties[k], defs) for k in required}, optional=optional)
    if node.get("type") == "array":
        low = node.get("minItems", 0)
        return st.lists(_strategy(node.get("items", {}), defs), min_size=low,
                        max_size=node.get("maxItems", low + LONGEST),
                        unique_by=_canonical if node.get("uniqueItems") else None)
    if node.get("type") == "string" and not {"pattern", "format", "enum", "const"} & set(node):
        return text(node.get("minLength", 0), node.get("maxLength"))
    leaf = {k: v for k, v in node.items() if k != "description"}
    if leaf.get("type") == "integer":  # the loader refuses more, as designed
        leaf.setdefault("maximum", MAX_INTEGER)
        leaf.setdefault("minimum", -MAX_INTEGER)
    return from_schema(leaf)


def record_strategy(kind: str) -> st.SearchStrategy[dict[str, Any]]:
    """Records of ``kind`` as its shipped schema allows them, without the fields that name
    other records (and the scope rule that says which of them an incident needs)."""
    schema = schema_for(kind)
    top = {**schema, "properties": {k: v for k, v in schema["properties"].items() if k not in _LINKS[kind]},
           "required": [r for r in schema["required"] if r not in _LINKS[kind]]}
    return _strategy(top, schema.get("$defs", {}))


def settable_fields(kind: str) -> list[list[str]]:
    """Fields of ``kind`` that `tooling set` can be given a value of without naming another
    record: each top-level one, and each one inside a top-level mapping."""
    schema = schema_for(kind)
    fields: list[list[str]] = []
    for name, spec in schema["properties"].items():
        if name in _LINKS[kind] or name == "kind":
            continue
        fields.append([name])
        inner = resolve(spec, schema.get("$defs", {}))
        if inner.get("type") == "object":
            fields += [[name, key] for key in inner.get("properties", {})]
    return fields


@lru_cache(maxsize=None)
def _field_strategy(kind: str, keys: tuple[str, ...]) -> st.SearchStrategy[Any]:
    schema = schema_for(kind)
    defs, spec = schema.get("$defs", {}), schema
    for key in keys:
        spec = resolve(spec, defs)["properties"][key]
    return _strategy(spec, defs)


def field_strategy(kind: str, keys: list[str]) -> st.SearchStrategy[Any]:
    """Values of the field at ``keys`` of ``kind`` as its schema allows them (incident ids: INC-REF)."""
    return _field_strategy(kind, tuple(keys))


RECORDS = {kind: record_strategy(kind) for kind in ("incident", "postmortem", "run")}
MODES = sorted(catalogue().ids())
AUTOMATIONS = sorted(a.id for a in automations())


# --- a set of records that refer to each other -------------------------------------------------

@dataclass
class RecordSet:
    """Records of one repository: (kind, id) -> data, in the order they were drawn."""

    records: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [d for (k, _), d in self.records.items() if k == kind]


run_ids = st.from_regex(r"[a-z0-9][a-z0-9-]{0,63}", fullmatch=True)
incident_ids = st.integers(0, 10**12 - 1).flatmap(
    lambda n: st.integers(max(4, len(str(n))), 12).map(lambda width: f"INC-{n:0{width}d}"))
postmortem_ids = st.integers(0, 10**12 - 1).map(lambda n: f"PM-{n:04d}")


def _in_order(data: dict[str, Any], keys: list[str]) -> None:
    """The times at ``keys`` of ``data`` (those present) rearranged to go forwards."""
    present = [k for k in keys if k in data]
    values = sorted((data[k] for k in present), key=_instant)
    data.update(zip(present, values))


def _instant(value: str) -> datetime:
    found = parse_time(value)
    assert found is not None, f"the strategy drew an unreal time: {value!r}"
    return found


def _sorted_by_time(items: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return sorted(items, key=lambda item: _instant(item[key]))


def _incident(draw: st.DrawFn, incident_id: str, runs: list[str], incidents: list[str]) -> dict[str, Any]:
    data = {"kind": "incident", "id": incident_id, **draw(RECORDS["incident"])}
    others = [i for i in incidents if i != incident_id]
    earlier = incidents[:incidents.index(incident_id)]  # repeat_of leads back to a first occurrence
    if draw(st.integers(0, 5)) == 0:
        data["scope"] = "cluster"
        data["cluster"] = draw(run_ids)
    else:
        if draw(st.booleans()):
            data["scope"] = "run"
        data["run"] = draw(st.sampled_from(runs))
    if earlier and draw(st.booleans()):
        data["repeat_of"] = draw(st.sampled_from(earlier))
    for name in ("not_repeat_of", "related"):
        if others and draw(st.booleans()):
            data[name] = draw(st.lists(st.sampled_from(others), unique=True, max_size=3))
    if draw(st.booleans()):
        data["failure_mode"] = draw(st.sampled_from(MODES))
    if draw(st.booleans()):
        data["handled_by"] = draw(st.sampled_from(AUTOMATIONS))
    _in_order(data, ["started_at", "detected_at", "mitigated_at", "resolved_at"])
    if data["status"] == "resolved" and "resolved_at" not in data:
        data["resolved_at"] = data.get("mitigated_at", data["detected_at"])
    if "timeline" in data:
        data["timeline"] = _sorted_by_time(data["timeline"], "at")
    return data


def _postmortem(draw: st.DrawFn, postmortem_id: str, incidents: list[str]) -> dict[str, Any]:
    data = {"kind": "postmortem", "id": postmortem_id, **draw(RECORDS["postmortem"])}
    data["incidents"] = draw(st.lists(st.sampled_from(incidents), min_size=1, max_size=3, unique=True))
    if "timeline" in data:
        data["timeline"] = _sorted_by_time(data["timeline"], "at")
    return data


def _run(draw: st.DrawFn, run_id: str, incidents: list[str]) -> dict[str, Any]:
    data = {"kind": "run", "id": run_id, **draw(RECORDS["run"])}
    feed = data.get("feed", {})
    if not incidents:  # nothing to name: an issue without its incident is not a known issue
        data.pop("known_issues", None)
    for item in [*data.get("known_issues", []), *data.get("debugging", []), *feed.get("events", [])]:
        if "incident" in item:
            if incidents:
                item["incident"] = draw(st.sampled_from(incidents))
            else:
                del item["incident"]
    for shift in data.get("oncall", {}).get("shifts", []):
        _in_order(shift, ["start", "end"])
    return data


@st.composite
def record_sets(draw: st.DrawFn, *, max_incidents: int = 4) -> RecordSet:
    """One to three runs, up to ``max_incidents`` incidents of them and postmortems of those."""
    runs = draw(st.lists(run_ids, min_size=1, max_size=3, unique=True))
    incidents = draw(st.lists(incident_ids, max_size=max_incidents, unique=True))
    postmortems = draw(st.lists(postmortem_ids, max_size=2 if incidents else 0, unique=True))
    found = RecordSet()
    for run_id in runs:
        found.records[("run", run_id)] = _run(draw, run_id, incidents)
    for incident_id in incidents:
        found.records[("incident", incident_id)] = _incident(draw, incident_id, runs, incidents)
    for postmortem_id in postmortems:
        found.records[("postmortem", postmortem_id)] = _postmortem(draw, postmortem_id, incidents)
    return found

