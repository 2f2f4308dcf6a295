"""What an import reads is bounded in bytes as well as in count, each refused before the work
it would cost (a 50 MB JSONL line took three minutes to refuse; a number of 5,000 digits was an
internal error): the file, a row (a JSONL line, a CSV row, a table's line: what one record
file may hold), the columns of a header, the nesting of a JSON value and a number's digits."""
from __future__ import annotations

from pathlib import Path

from tooling.errors import UserError
from tooling.records.reading import MAX_FILE_BYTES

MAX_BYTES = 64 << 20  # 100,000 incidents are about 50 MB: anything larger is not a logbook
MAX_ROW_BYTES = MAX_FILE_BYTES  # a row becomes one record file, which may hold no more
MAX_COLUMNS = 1000  # each column is a line of the report; no logbook has this many
MAX_DEPTH = 16  # a record nests three deep (a timeline entry's fields); JSON deeper is no logbook's
# far past any count or amount (2**63 has 19 digits), and refused before int(), which is
# quadratic in the digits and refuses more than 4,300 with an error of its own
MAX_DIGITS = 40


def size(text: str) -> int:
    """Bytes of ``text`` in UTF-8, without encoding it where it is ASCII."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def within(path: Path, line: int, found: int) -> None:
    """A row of ``found`` bytes starting on ``line``, refused when past the bound."""
    if found > MAX_ROW_BYTES:
        raise UserError(f"{path}:{line}:1: [row-too-large] a row of {found:,} bytes; expected at most "
                        f"{MAX_ROW_BYTES:,} bytes, what one record file may hold")


def wide(path: Path, line: int, columns: int) -> None:
    if columns > MAX_COLUMNS:
        raise UserError(f"{path}:{line}:1: [too-many-columns] {columns:,} columns; expected at most {MAX_COLUMNS:,}")



def long_number(what: str, digits: int) -> str:
    """Why a number of ``digits`` digits (in a column, at a JSON key) is refused."""
    return (f"[number-too-long] {what}: a number of {digits:,} digits; expected at most {MAX_DIGITS} digits, "
            "more than any count or amount has")
