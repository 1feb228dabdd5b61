"""The spec's models (manifest.py) and the CRD's schema declare the same resource.

Both schemas are walked side by side (crd_models.py): every object has the same properties (by the
manifest's names) and the same required ones, and each property the same enum, default and bounds where
the CRD declares them. Either side gaining a field the other lacks fails here, naming the field.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from crd_models import ModelSchema
from hbt_admission import SPEC_SCHEMA
from hudi_bucket_operator.manifest import TableSpecSection

MODEL_SCHEMA = ModelSchema(TableSpecSection.model_json_schema(by_alias=True))


def test_the_walk_reaches_every_object_of_the_spec() -> None:
    assert {where for where, _, _ in MODEL_SCHEMA.objects(SPEC_SCHEMA, MODEL_SCHEMA.schema, "spec")} == {
        "spec", "spec.table", "spec.buckets", "spec.buckets.rules[]", "spec.buckets.sizing", "spec.apply",
        "spec.apply.window", "spec.writers", "spec.writers.workloads[]",
        "spec.verify", "spec.spark", "spec.spark.driver", "spec.spark.executor", "spec.spark.envFromSecrets[]",
    }  # fmt: skip


def test_the_models_declare_what_the_crd_declares() -> None:
    assert MODEL_SCHEMA.differences(SPEC_SCHEMA, "spec") == []


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda crd: crd["properties"]["table"]["properties"].update(owner={"type": "string"}),
         "spec.table.owner: only the CRD declares it"),
        (lambda crd: crd["properties"]["spark"]["properties"].pop("ttlSeconds"),
         "spec.spark.ttlSeconds: only the model declares it"),
        (lambda crd: crd["properties"]["buckets"]["required"].append("convert"), "spec.buckets: required"),
        (lambda crd: crd["properties"]["engine"]["enum"].append("Flink"), "spec.engine: enum"),
        (lambda crd: crd["properties"]["apply"]["properties"]["policy"].update(default="Automatic"),
         "spec.apply.policy: default 'Manual' != 'Automatic'"),
        (lambda crd: crd["properties"]["buckets"]["properties"]["rules"]["items"]["required"].pop(),
         "spec.buckets.rules[]: required"),
        (lambda crd: crd["properties"]["spark"]["properties"]["driver"]["properties"]["cores"].update(maximum=64),
         "spec.spark.driver.cores: maximum 256 != 64"),
    ],
    ids=["crd-only", "model-only", "required", "enum", "default", "required-in-items", "bound"],
)  # fmt: skip
def test_a_difference_is_found_and_named(change: Callable[[dict[str, Any]], object], said: str) -> None:
    crd = copy.deepcopy(SPEC_SCHEMA)
    change(crd)
    assert any(said in difference for difference in MODEL_SCHEMA.differences(crd, "spec"))
