"""What of a job's own words may go into its table's status and events (pure: no I/O).

A table's author reads its conditions and events, not its jobs' logs nor their reports. A job's error
text may hold what the author must not read: a setting's value as Spark or Hadoop echo it when they
cannot parse it (``For input string: "<value>"``), after replacing ``${env.NAME}`` in it with the job's
environment, which holds the Secrets the job was given; a credential in a URI or after its name. The
operator refuses ``${`` in a table's settings, and copies a job's words only redacted: each value of
the spec's own settings, what parsers echo of a value, what follows a credential's name or sits before
a URI's host; and bounded.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_JOB_WORDS = 2000  # characters of a job's words in a condition or an event
REDACTED = "<redacted>"
# A setting's value that says nothing (a number, a size, a duration, a boolean, a short word) and is
# everywhere in a message: never a secret, and left alone.
_PLAIN = re.compile(r"(?i)true|false|-?[0-9]+(\.[0-9]+)?[a-z]{0,3}|\w{1,4}")

# (what a parser or a log line echoes, and the part of it to keep).
_ECHOES = (
    re.compile(r'(For input string: )"[^"]*"'),  # Java's NumberFormatException
    re.compile(r"(should be [\w ]+, but was )\S+"),  # Spark's ConfigBuilder
    re.compile(r"(No enum constant [\w.$]+\.)\S+"),  # Java's Enum.valueOf
    re.compile(
        r"(?i)(?<![a-z])((?:password|passwd|secret|token|credentials?|access[._-]?key|secret[._-]?key)\w*"
        r"\s*[=:]\s*)(\"[^\"]*\"|'[^']*'|\S+)"
    ),
    re.compile(r"(://)[^@\s/:]*:[^@\s]*@"),  # user:password@host
)


def job_words(text: str, values: Iterable[str]) -> str:
    """``text``, a job's words, with ``values`` (its spec's settings') and whatever parsers echo of a
    value replaced by <redacted>, on one line and at most MAX_JOB_WORDS characters."""
    for value in sorted({v for v in values if not _PLAIN.fullmatch(v)}, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    for echo in _ECHOES:
        text = echo.sub(lambda m: m.group(1) + REDACTED, text)
    text = " ".join(text.split())  # a stack trace's lines, one line
    if len(text) <= MAX_JOB_WORDS:
        return text
    more = f" ... ({len(text) - MAX_JOB_WORDS} more characters: see the job's driver log)"
    return text[: MAX_JOB_WORDS - len(more)] + more
