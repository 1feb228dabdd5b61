"""The field types and checks several sections share: durations, schedules, Kubernetes names (no I/O)."""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from hudi_bucket_operator.errors import ScheduleError
from hudi_bucket_operator.resource.crd_schema import Cel, cel_string
from hudi_bucket_operator.resource.schedule import DURATION, Schedule, parse_duration
from hudi_bucket_operator.resource.spec.problems import problem

# The CRD's patterns: durations, the shape of a cron expression (the operator checks each field and says
# what is wrong), Kubernetes names.
DURATION_PATTERN = f"^({DURATION.pattern})$"
MAX_DURATION_LENGTH = 23  # 999d9999h999999m999999s
CRON_SHAPE = r"@[A-Za-z]+|[0-9A-Za-z*?/,#-]+( +[0-9A-Za-z*?/,#-]+){4}"
MAX_SCHEDULE_LENGTH = 100
DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
DNS_SUBDOMAIN_MAX = 253


def check_duration(text: str) -> str:
    if parse_duration(text) is None:
        raise ValueError("not a duration")
    return text


def check_schedule(text: str) -> str:
    try:
        Schedule.parse(text)
    except ScheduleError:
        raise ValueError("not a schedule") from None
    return text


DnsName = Annotated[str, Field(max_length=DNS_SUBDOMAIN_MAX, pattern=f"^{DNS_SUBDOMAIN}$")]


def duration_seconds(duration: str) -> int:
    seconds = parse_duration(duration)
    assert seconds is not None, duration  # the model checked it
    return seconds


# Text of the spec that reaches a job or a view (a table URI, a pattern, a field name): no '${', which Spark
# SQL, Spark and Hadoop replace with the job's environment (its Secrets) or a setting, and no control
# character, which a terminal obeys (ESC sequences) and a log or message would carry.
_UNSAFE = re.compile(r"\$\{|[\x00-\x1f\x7f-\x9f]")
_UNSAFE_SAID = (
    "must not hold '${' (Spark SQL, Spark and Hadoop replace ${...} with the job's environment, its "
    "Secrets) nor control characters"
)


def _plain(text: str) -> str:
    # Inner text only: whitespace at either end, tabs and line breaks among it, is trimmed or said by
    # the field's own checks.
    if _UNSAFE.search(text.strip()):
        raise problem(f" {_UNSAFE_SAID}")  # the field's path, never the value
    return text


def plain_text(field: str) -> tuple[Cel, AfterValidator]:
    """The checks of a spec string that reaches a job or a view, as a CEL rule naming ``field`` (the API
    server's) and a validator (the operator's, for a cluster without CEL and for the local mode)."""
    rule = f"!self.contains('${{') && !self.matches({cel_string(_UNSAFE.pattern.partition('|')[2])})"
    return Cel(rule, f"{field} {_UNSAFE_SAID}"), AfterValidator(_plain)
