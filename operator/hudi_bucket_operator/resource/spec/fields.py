"""The field types and checks several sections share: durations, schedules, Kubernetes names (no I/O)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hudi_bucket_operator.errors import ScheduleError
from hudi_bucket_operator.resource.schedule import DURATION, Schedule, parse_duration

# The CRD's patterns: durations, the shape of a cron expression (the operator checks each field and says
# what is wrong), Kubernetes names.
DURATION_PATTERN = f"^({DURATION.pattern})$"
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
