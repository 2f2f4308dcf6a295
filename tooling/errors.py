"""The one user-facing error type; main() maps it to an exit code and a message."""
from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: bad input, a missing option, a record that is not there.

    Printed as ``tooling: error: <message>`` without a traceback.
    """

    exit_code = 1


class UsageError(UserError):
    """The command line itself is wrong (exit 2, like argparse)."""

    exit_code = 2
