"""What followed a failure whose line reads the same whatever came after it, told by an incident's words.

A job killed at its time limit prints the same "CANCELLED ... DUE TO TIME LIMIT" whether its requeue then
failed or nobody noticed it: the remedies differ. A requeue that could not run ``scontrol`` (a container or a
compute node without it) needs the command made reachable; a requeue that failed for no reason the incident
gives needs its handler looked at; a time limit the workflow runner took for a success needs the runner to
read the scheduler's state. Without any of these the job simply ran out of time with nothing saved.

Heat reads the same too ("overheating", "thermal"), and what it did tells the failures apart: a GPU that
throttles is a slowdown a straggler check sees; a card that hangs when hot, or a machine that powers off,
lose the run and call for cooling or lower clocks first. Each kind is read from all of an incident's lines
and words, as :mod:`tooling.catalogue.phases` reads its kinds, and goes into the key (``distinguish``).
"""
from __future__ import annotations

import re
from typing import Any, Callable

from tooling.catalogue.evidence import kinds_told

REQUEUE_UNREACHABLE, REQUEUE_FAILED, LIMIT_UNNOTICED = "requeue-unreachable", "requeue-failed", "limit-unnoticed"
HEAT_SHUTDOWN, HEAT_HANG = "heat-shutdown", "heat-hang"

_REQUEUE = r"(?:re-?queu\w*|re-?submi\w*)"
_SAYS = {
    # the command the handler runs is not there: its shell's or Python's words, or a person's
    REQUEUE_UNREACHABLE: re.compile(r"No such file or directory: '(?:scontrol|sbatch|qsub)'"
                                    r"|\b(?:scontrol|sbatch|qsub): (?:command )?not found"
                                    r"|\b(?:scontrol|sbatch|qsub)\b\W{0,2} (?:is |was )?"
                                    r"(?:not available|not found|missing)"
                                    r"|\b(?:does not|doesn't|do not|don't) (?:contain|have|include) [`'\"]?"
                                    r"(?:scontrol|sbatch)\b", re.I),
    # the requeue or resubmission did not happen, whatever the reason (a requeue "on node failure" is a setting)
    REQUEUE_FAILED: re.compile(rf"\b(?:unable|fail\w*|cannot|can't|could not|couldn't) to {_REQUEUE}"
                               rf"|\b{_REQUEUE}.{{0,30}}\b(?:not work\w*|n't work\w*|fail(?:s|ed|ing)?\b|broken)", re.I),
    # the time limit went unseen: taken for a success, or never detected
    LIMIT_UNNOTICED: re.compile(r"\b(?:not|never|n't) (?:be )?(?:detect\w*|notic\w*|register\w*|report\w*)\b"
                                r"|\bappears? to have succeeded\b", re.I),
    # the machine went down: "reboot the node" is a remedy, not what the heat did
    HEAT_SHUTDOWN: re.compile(r"\bshut ?(?:s|ting)? ?(?:down|off)\b|\bshutdown\b|\bpower(?:s|ed)? off\b"
                              r"|\bturns? off\b|\bcold boots?\b|\b(?:reboots?|restarts?) (?:it)?self\b"
                              r"|\b(?:auto(?:matically)?[ -])?reboots?\b(?! (?:the|it|them)\b)", re.I),
    HEAT_HANG: re.compile(r"\bhang\w*|\bhung\b|\bfreez\w*|\bfroze\b|\bunresponsive\b|\block ?up\b", re.I),
}
# a kind the other one explains: a requeue that could not run scontrol failed for that reason; a machine that
# powered off did more than hang
_UNLESS = {REQUEUE_FAILED: REQUEUE_UNREACHABLE, HEAT_HANG: HEAT_SHUTDOWN}


_told = kinds_told(_SAYS, _UNLESS)


# kind -> (the key's name, the test), merged into tooling.catalogue.phases.TOLD_BY_WORDS
AFTERMATH: dict[str, tuple[str, Callable[[dict[str, Any]], bool]]] = {
    REQUEUE_UNREACHABLE: ("after-limit", _told(REQUEUE_UNREACHABLE)),  # scontrol not where the handler runs
    REQUEUE_FAILED: ("after-limit", _told(REQUEUE_FAILED)),  # the requeue did not happen, no reason given
    LIMIT_UNNOTICED: ("after-limit", _told(LIMIT_UNNOTICED)),  # the runner took the kill for a success
    HEAT_SHUTDOWN: ("heat", _told(HEAT_SHUTDOWN)),  # the machine powered off
    HEAT_HANG: ("heat", _told(HEAT_HANG)),  # the card hung until cooled or clocked down
}
