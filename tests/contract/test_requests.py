"""Every job kind's request survives its own command line: what the operator writes, the job reads.

Each option is declared once (contract.requests); these tests hold its two readings together: a request
with every option set, and one with none, go to an argument list and parse back equal.
"""

from __future__ import annotations

import argparse
from dataclasses import fields

import pytest

from hudi_bucket.contract.requests import (
    REQUESTS,
    ApplyOptions,
    ApplyRequest,
    JobKind,
    JobRequest,
    PlanRequest,
    RescaleOptions,
    RollbackRequest,
    ShowFormat,
    ShowRequest,
    VerifyRequest,
    WriteOptions,
    WriteRequest,
    build_parser,
    parse_argv,
)
from hudi_bucket.core.engine import Engine
from hudi_bucket.core.recordkeys import KeyStyle
from hudi_bucket.core.rules import BucketRules
from hudi_bucket.core.sizing import SizingPolicy
from hudi_bucket.errors import InvalidRuleError, SizingError

PLAN_ID = "sha256:" + "ab" * 32
EVERY_TABLE_OPTION = {
    "table": "s3a://lake/warehouse/orders",
    "report": "configmap://lake/orders-apply-0123456789",
    "master": "local[2]",
    "hash_fields": ("order_id", "region"),
    "key_style": KeyStyle.HUDI_0X,
}
# A pattern may start with '-': written as --expressions=..., it is never taken for an option.
RULES = BucketRules.parse(r"-11-11$,32;\d{4}-06,8", 4)
SIZING = SizingPolicy(512 << 20, min_buckets=2, max_buckets=512, partitions="^day=", tolerance=1.5)
EVERY_OPTION: dict[JobKind, JobRequest] = {
    JobKind.SHOW: ShowRequest(**EVERY_TABLE_OPTION, sizing=SIZING, format=ShowFormat.JSON),
    JobKind.PLAN: PlanRequest(
        **EVERY_TABLE_OPTION,
        rescale=RescaleOptions(
            RULES,
            current_buckets=8,
            convert=True,
            disable_metadata_table=True,
            engine=Engine.NATIVE,
            sizing=SIZING,
            check_records=True,
            keep_duplicates=True,
        ),
    ),
    JobKind.APPLY: ApplyRequest(
        **EVERY_TABLE_OPTION,
        rescale=ApplyOptions(
            RULES,
            8,
            convert=True,
            disable_metadata_table=True,
            engine=Engine.HUDI,
            sizing=SIZING,
            check_records=True,
            keep_duplicates=True,
            approved_plan=PLAN_ID,
            full_shuffle=True,
        ),
    ),
    JobKind.VERIFY: VerifyRequest(**EVERY_TABLE_OPTION),
    JobKind.ROLLBACK: RollbackRequest(**EVERY_TABLE_OPTION, instant="20261121093000123"),
    JobKind.WRITE: WriteRequest(
        **EVERY_TABLE_OPTION,
        write=WriteOptions(
            source="s3a://lake/landing/orders",
            format="csv",
            operation="insert",
            record_key=("order_id",),
            partition_fields=("day", "region"),
            ordering_field="updated_at",
            create=True,
            table_name="orders",
            table_version=8,
            hive_style=True,
            url_encode_partitions=True,
            expressions="day=.*-11-11,32",
            default_buckets=4,
        ),
    ),
}
NO_OPTION: dict[JobKind, JobRequest] = {
    JobKind.SHOW: ShowRequest(table="/data/orders"),
    JobKind.PLAN: PlanRequest(table="/data/orders", rescale=RescaleOptions(BucketRules.parse("x,2", 1))),
    JobKind.APPLY: ApplyRequest(table="/data/orders", rescale=ApplyOptions(BucketRules.parse("x,2", 1))),
    JobKind.VERIFY: VerifyRequest(table="/data/orders"),
    JobKind.ROLLBACK: RollbackRequest(table="/data/orders", instant="1"),
    JobKind.WRITE: WriteRequest(table="/data/orders", write=WriteOptions(source="in", record_key=("id",))),
}


def test_every_job_kind_is_a_command_with_a_request() -> None:
    assert set(REQUESTS) == set(JobKind) == set(EVERY_OPTION) == set(NO_OPTION)
    assert all(REQUESTS[kind].kind is kind for kind in JobKind)


@pytest.mark.parametrize("request_", [*EVERY_OPTION.values(), *NO_OPTION.values()], ids=lambda r: r.kind)
def test_a_request_parses_back_from_its_arguments(request_: JobRequest) -> None:
    argv = request_.to_argv()
    assert argv[0] == request_.kind.value
    assert parse_argv(argv) == request_


@pytest.mark.parametrize("kind", list(JobKind))
def test_every_option_a_command_accepts_carries_a_field(kind: JobKind) -> None:
    # The requests above set every field (the job, not its command line, refuses convert with a
    # current bucket count), so their arguments name every option.
    request = EVERY_OPTION[kind]
    for part in (request, getattr(request, "rescale", None), getattr(request, "write", None)):
        if part is not None:
            assert all(getattr(part, f.name) not in (None, "", (), False) for f in fields(part)), part
    parser = argparse.ArgumentParser()
    REQUESTS[kind].add_arguments(parser)
    accepted = {flag for action in parser._actions for flag in action.option_strings} - {"-h", "--help"}
    assert {arg.partition("=")[0] for arg in request.to_argv()[1:]} == accepted


def test_sizing_takes_a_kubernetes_quantity_and_needs_a_target() -> None:
    request = parse_argv(["show", "--table=/t", "--target-file-size=1.5Gi", "--sizing-partitions=^day="])
    assert request.sizing == SizingPolicy(3 << 29, partitions="^day=")
    args = build_parser().parse_args(
        ["plan", "--table=/t", "--expressions=x,2", "--default=2", "--tolerance=3"]
    )
    with pytest.raises(SizingError, match="tolerance given without --target-file-size"):
        PlanRequest.from_args(args)


def test_rules_that_hudi_would_refuse_are_the_jobs_failure_not_a_usage_error() -> None:
    args = build_parser().parse_args(["plan", "--table=/t", "--expressions=x", "--default=2"])
    with pytest.raises(InvalidRuleError):
        PlanRequest.from_args(args)


@pytest.mark.parametrize(
    "argv",
    [
        ["plan", "--table=/t"],  # rules are required
        ["apply", "--table=/t", "--expressions=x,2", "--default=two"],
        ["show", "--table=/t", "--key-style=HUDI_2X"],
        ["write", "--table=/t", "--source=in", "--record-key=id", "--table-version=7"],
        ["rollback", "--table=/t"],
        ["verify"],
    ],
)
def test_bad_usage_exits_with_2(argv: list[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        build_parser().parse_args(argv)
    assert exited.value.code == 2
