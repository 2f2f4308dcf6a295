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


class FieldError(UsageError):
    """Bad values for fields of a record being made, by field name (dotted for nested).

    The code that checks values knows fields, not options: the dispatcher
    (:func:`tooling.commands.dispatch`) words them with the option (or argument) each field came
    from, read from the command's parser, with :meth:`naming`.
    """

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{field}: {message}" for field, message in problems))

    def naming(self, sources: dict[str, str]) -> UsageError:
        """The same problems worded with the option each field came from (``run`` -> ``--run``)."""
        return UsageError("; ".join(f"{sources.get(field.split('.')[0], field)}: {message}"
                                    for field, message in self.problems))
