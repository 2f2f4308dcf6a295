"""What made a loss read zero, or ranks run out of step, told by an incident's words: the cause behind a symptom
whose numbers read the same whatever caused it.

A loss of exactly zero is the same ``'loss': 0.0`` whether half precision overflowed (the trainer filters the NaN
steps out of what it logs and averages nothing), the samples were cut at the maximum length before their labels,
or the preprocessing's tokenization disagreed with the conversation template and ignored every sample. The
remedies differ: train in bf16 or fp32, raise the length or drop the overlong samples, fix the template or the
tokenizer's version. A person's words say which: a precision named with what it did ("fp16 gives loss=0",
"switching to float16", "bf16 and the loss is normal"), a truncation, a tokenization mismatch.

Ranks that stop in step with each other the same way whether the data ran out or one rank was given more batches
than another: uneven batches across ranks (uneven shards, streamed data, no ``drop_last``) hang the first
collective the shorter rank never joins, and are fixed by evening the batches out, not by more data. Each kind
is read from all of an incident's lines and words, as :mod:`tooling.catalogue.aftermath` reads its kinds, and goes
into the key (``distinguish``).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from tooling.catalogue.evidence import kinds_told

HALF_PRECISION, TRUNCATED, TEMPLATE_MISMATCH = "half-precision", "truncated", "template-mismatch"
UNEVEN_BATCHES = "uneven-batches"

_HALF = r"(?:fp16|float16|half[- ]?precision|半精度)"
_FULL = r"(?:bf16|bfloat16|fp32|float32|tf32|full[- ]?precision|全精度)"
_ZERO = r"\bloss\w{0,2}\s?(?:=|:|为|是|is|was|will be)?\s?0(?![.0-9])"  # "loss=0", "loss值为0", not "loss 0.6"
_CLAUSE = r"[^,，.。;；!！?？\n]"  # within one clause: "fp16 ... loss=0", not a clause apart
_SAYS = {
    # half precision named with the zero it gave, a switch to it, or a wider precision as what made the loss
    # normal again ("bf16 and the loss is normal", "can use fp32"); a precision only tried ("bf16 false fp16
    # true") says none of these
    HALF_PRECISION: re.compile(rf"{_HALF}{_CLAUSE}{{0,30}}{_ZERO}"
                               rf"|\b(?:switch|chang|mov|set)\w*(?: [\w ]{{1,20}})? to [`'\"]?{_HALF}"
                               rf"|{_FULL}{_CLAUSE}{{0,20}}(?:正常|就好了|就可以了|\bwork(?:s|ed)?\b|\bfixe[sd]\b)"
                               rf"|(?:可以|只能)(?:使用|用|采用)\s?{_FULL}", re.I),
    # the samples cut before their labels: a truncation, or the maximum length raised as the fix
    TRUNCATED: re.compile(r"\btruncat\w*|截断|超长"
                          r"|max\w*len\w*`? (?:was |is )?(?:adjusted|increased|raised|changed) to \d", re.I),
    # the preprocessing and the tokenizer disagree, so each sample's labels are ignored
    TEMPLATE_MISMATCH: re.compile(r"\btokeni[sz](?:ation|er)(?: version)? mismatch", re.I),
    # one rank given more batches than another: the shorter one never joins the rest's collectives
    UNEVEN_BATCHES: re.compile(r"\buneven (?:\w+ )?(?:batch(?:es)?|inputs?)\b"
                               r"|(?<![a-z])different numbers? of (?:\w+ ){0,2}batch(?:es)?\b"
                               r"|\b(?:rank|gpu|worker|process)[- ]dependent (?:\w+ )?lengths?\b", re.I),
}

_told = kinds_told(_SAYS, {})


# kind -> (the key's name, the test), merged into tooling.catalogue.phases.TOLD_BY_WORDS
CAUSES: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    HALF_PRECISION: ("zeroed-by", _told(HALF_PRECISION)),  # the NaN steps of fp16 logged as a zero loss
    TRUNCATED: ("zeroed-by", _told(TRUNCATED)),  # no label left after the cut
    TEMPLATE_MISMATCH: ("zeroed-by", _told(TEMPLATE_MISMATCH)),  # every sample ignored by the preprocessing
    UNEVEN_BATCHES: ("batches", _told(UNEVEN_BATCHES)),  # the ranks were not given as many batches
}
