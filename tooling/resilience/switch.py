"""The kill/save switch: control a running training with files, from any shell on any node.

``touch STOP``: save after the current step and exit cleanly. ``touch SAVE``: save now and keep
training (the file is removed once saved). Checked once per step with two stat calls, and
before the first step, so a job that was queued after someone asked it to stop exits at once.
"""
from __future__ import annotations

import enum
import os
from pathlib import Path


# The file names a run's directory is watched for; the run page's first-response block shows them
# (tooling.analysis.status), so the commands it hands out are the ones this loop acts on.
STOP_FILE = "STOP"
SAVE_FILE = "SAVE"


class Action(enum.Enum):
    CONTINUE = "continue"
    SAVE = "save"
    STOP = "stop"


class KillSwitch:
    def __init__(self, directory: str | Path, *, stop_name: str = STOP_FILE, save_name: str = SAVE_FILE) -> None:
        self.stop_path = Path(directory) / stop_name
        self.save_path = Path(directory) / save_name

    def check(self) -> Action:
        if os.path.exists(self.stop_path):
            return Action.STOP
        if os.path.exists(self.save_path):
            return Action.SAVE
        return Action.CONTINUE

    def saved(self) -> None:
        """Acknowledge a SAVE request so the next step does not save again."""
        self.save_path.unlink(missing_ok=True)
