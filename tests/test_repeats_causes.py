"""Repeat grouping by what caused a symptom whose numbers read the same whatever caused it (heldout-repeats-14,
issue 25), with made-up incidents. A loss of exactly zero: half precision (its NaN steps logged as 0), samples cut
at the maximum length before their labels, a tokenization that does not match the conversation template; none of
these named, the zero alone tells no failure. Ranks given different numbers of batches hang as the data running
out does not. The reporters' words for a zero loss ("loss=0", "loss为0", "the loss was always 0.") name the mode."""
from __future__ import annotations

import pytest

from test_repeats import _groups, _incident
from tooling.analysis.identity import identify
from tooling.analysis.incidents import incident_views

MISMATCH = "WARNING: tokenization mismatch: 210 vs. 224. (ignored)"


def _zero(n: int, **fields: object):  # type: ignore[no-untyped-def]
    return _incident(n, symptom="other", layer="unknown", **fields)


def _keys(records: list) -> dict[str, tuple[str, ...] | None]:  # type: ignore[type-arg]
    return {v.id: identify(v).key for v in incident_views(records)}


@pytest.mark.parametrize("words", ["the loss was always 0.", "loss=0 from the second step", "训练 loss 一直是 0",
                                   "微调过程loss为0，grad_norm为nan", "loss 在第二个step就变成了0",
                                   "Zero loss values during finetuning", "train loss 0 throughout all epochs"])
def test_the_reporters_words_for_a_zero_loss_name_the_mode(words: str) -> None:
    mode = identify(incident_views([_zero(1, title=words)])[0]).mode
    assert mode is not None and mode.id == "training.zero-loss"


@pytest.mark.parametrize("words", ["the loss was 0.5 at the end", "loss=0.0063 after five epochs",
                                   "the loss is close to zero, as a model that fits its data reaches"])
def test_a_small_loss_is_not_a_zero_loss(words: str) -> None:
    mode = identify(incident_views([_zero(1, title=words)])[0]).mode
    assert mode is None or mode.id != "training.zero-loss"


def test_what_zeroed_a_loss_tells_three_failures_apart() -> None:
    records = [_zero(1, title="fp16 finetune gives loss=0", keywords=["the same run in fp32 trains"]),
               _zero(2, title="loss is 0 when switching to float16"),
               _zero(3, title="loss为0", keywords=["换成bf16就好了"]),
               _zero(4, title="the loss stays at 0", keywords=["the samples are truncated before the answer"]),
               _zero(5, title="loss=0 with llava-onevision", keywords=["Resolved MODEL_MAX_LEN adjusted to 4096"]),
               _zero(6, title="loss is 0 and tokenization mismatch warnings"),
               _zero(7, title="the loss was always 0.", signatures=[MISMATCH])]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004", "INC-0005"],
                                        ["INC-0006", "INC-0007"]]
    assert _keys(records)["INC-0001"] == ("mode", "training.zero-loss", "zeroed-by=half-precision")


def test_a_zero_loss_with_no_cause_named_meets_nothing() -> None:
    # a precision only tried, or a question about it, names no cause; nor does a suggested max_seq_length
    records = [_zero(1, title="the loss is 0", keywords=["i have tried bf16 false fp16 true, it did not help"]),
               _zero(2, title="loss一直是0", keywords=["--fp16 会不会是这个原因？"]),
               _zero(3, title="reported loss is zero", keywords=["consider increasing the `max_seq_length`"])]
    assert _groups(records) == [["INC-0001"], ["INC-0002"], ["INC-0003"]]


def test_the_mismatch_line_alone_is_routine_not_a_failure() -> None:
    # LLaVA prints it for any sample it ignores: questions about the line meet each other, not the runs that failed
    records = [_zero(1, title="tokenization mismatch", signatures=[MISMATCH]),
               _zero(2, title="many warnings while fine-tuning", signatures=[MISMATCH.replace("210", "55")]),
               _zero(3, title="the loss was always 0.", signatures=[MISMATCH])]
    keys = _keys(records)
    assert keys["INC-0001"] == keys["INC-0002"] == ("routine", "training.zero-loss")
    assert keys["INC-0003"] == ("mode", "training.zero-loss", "zeroed-by=template-mismatch")


def test_ranks_given_uneven_batches_are_one_failure_and_data_that_ran_out_another() -> None:
    records = [_incident(1, symptom="hang", layer="unknown", title="DDP hangs with uneven batches"),
               _incident(2, symptom="hang", layer="unknown",
                         title="training hangs when workers have different number of training batches"),
               _incident(3, symptom="hang", layer="unknown", keywords=["rank-dependent dataloader lengths hang"]),
               _incident(4, symptom="hang", layer="unknown", title="the input ran out of data mid-epoch",
                         signatures=["tensorflow: Your input ran out of data; interrupting training."]),
               _incident(5, symptom="hang", layer="unknown", title="data ran out before the last step",
                         signatures=["tensorflow: Your input ran out of data; interrupting training."])]
    assert sorted(_groups(records)) == [["INC-0001", "INC-0002", "INC-0003"], ["INC-0004", "INC-0005"]]
    assert _keys(records)["INC-0001"] == ("mode", "data.exhausted", "batches=uneven-batches")
