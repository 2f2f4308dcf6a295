"""Plain scalars typed as the records' loader types them, for ruamel (tooling.records.roundtrip).

ruamel reads and writes YAML 1.2, but records are read by libyaml's YAML 1.1
(tooling.records.yaml_loader, timestamps kept as text): a plain ``on`` is true there, ``12:30``
is 750, ``1e+16`` is text. A file is read here as the validator reads it, and what is written
reads back as written: text that would read as another type is quoted, a number is written in a
form that reads as the same number, a time keeps its text. A value typed on the command line is
read as YAML 1.2, as a person expects.
"""
from __future__ import annotations

import re
from typing import Any

import yaml
from ruamel.yaml.emitter import RoundTripEmitter
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.tag import Tag

from tooling.records.yaml_loader import RecordLoader

_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"


def records_tag(text: str) -> str:
    """The type the records' loader gives ``text`` written as a plain scalar."""
    table = RecordLoader.yaml_implicit_resolvers
    for tag, pattern in [*table.get(text[:1], []), *table.get(None, [])]:
        if pattern.match(text):
            return str(tag)
    return "tag:yaml.org,2002:str"


class RecordsResolver(VersionedResolver):
    """Plain scalars typed by the records' loader (YAML 1.1, no timestamps), read and written."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0]:
            return Tag(suffix=records_tag(value))
        return super().resolve(kind, value, implicit)

    @property
    def processing_version(self) -> Any:
        return (1, 1)  # so that ruamel's constructors read 017 and 1:30 as YAML 1.1 numbers


class TypedResolver(VersionedResolver):
    """A value typed on the command line is read as YAML 1.2, as a person expects (``1e-5`` is a
    number, ``on`` is text), a time kept as its text; it is written for the records' loader."""

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        tag = super().resolve(kind, value, implicit)
        return Tag(suffix="tag:yaml.org,2002:str") if str(tag) == "tag:yaml.org,2002:timestamp" else tag


class Representer(RoundTripRepresenter):
    """ruamel's, with numbers in a form the records' loader reads as the same numbers: ``1e+16``
    and ``0o17`` are text to YAML 1.1, ``1.0e+16`` and ``15`` are not."""

    def represent_data(self, data: Any) -> Any:
        node = super().represent_data(data)
        if isinstance(node, ScalarNode) and str(node.tag) == _INT and not _reads_as(node.value, int(data)):
            node.value = str(int(data))  # 0o17 is text to YAML 1.1, and 017 typed as 17 would read as 15
        elif isinstance(node, ScalarNode) and str(node.tag) == _FLOAT and not _reads_as(node.value, float(data)):
            node.value = _float_text(float(data))  # ruamel's kept format may also round: 5.854692995234413e+307
        return node


class Emitter(RoundTripEmitter):
    """ruamel's, with no plain scalar in a flow collection that libyaml (the records' loader)
    does not read: one that starts with ``?`` or ``:``, or has a ``:`` at its end or before a flow
    indicator (ruamel's plain ``[{a: ?x}]`` or ``{a: :y}`` did not load: found by the record
    property test). Such a value is quoted in flow style, and written as before in block style."""

    def analyze_scalar(self, scalar: Any) -> Any:
        analysis = super().analyze_scalar(scalar)
        if _NOT_FLOW_PLAIN.search(scalar):
            analysis.allow_flow_plain = False
        return analysis


_NOT_FLOW_PLAIN = re.compile(r"\A[?:]|:(?:[,\[\]{}]|\Z)")


def _reads_as(text: str, value: int | float) -> bool:
    """Whether the records' loader reads ``text`` as ``value``, exactly and as its type."""
    if records_tag(text) != (_INT if isinstance(value, int) else _FLOAT):
        return False
    try:
        read = yaml.load(text, Loader=RecordLoader)
    except yaml.YAMLError:
        return False
    return type(read) is type(value) and (read == value or value != value)


def _float_text(value: float) -> str:
    mantissa, e, exponent = repr(value).partition("e")
    return f"{mantissa}{'' if '.' in mantissa else '.0'}{e}{exponent}"
