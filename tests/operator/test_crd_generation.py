"""The CRD in crds/ (and the chart's copy) is the one generated from the models, and the generation turns
pydantic's JSON schema into the structural schema Kubernetes takes.

test_crd.py holds the generated CRD to Kubernetes' rules and plays admission with it.
"""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from hudi_bucket_operator.cli import main
from hudi_bucket_operator.resource import crd
from hudi_bucket_operator.resource.crd_schema import FILLED, NULLABLE, Cel, Int32, MatchedByCel, list_map
from lib.hbt_admission import CRD_PATH, SCHEMA
from lib.paths import REPO

CHART_CRD = REPO / "charts" / "hudi-bucket-operator" / "crds" / CRD_PATH.name
REGENERATE = f"hudi-bucket-operator crd > crds/{CRD_PATH.name} && cp crds/{CRD_PATH.name} {CHART_CRD.parent.relative_to(REPO)}/"


def test_the_committed_crd_is_the_one_the_models_generate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["crd"]) == 0
    printed = capsys.readouterr().out
    assert printed == crd.render()
    for path in (CRD_PATH, CHART_CRD):
        assert path.read_text() == printed, (
            f"{path.relative_to(REPO)} is not what the models generate: run `{REGENERATE}`"
        )


class _Item(BaseModel):
    """An item."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    name: Annotated[str, Field(max_length=8, pattern="^[a-z]+$"), MatchedByCel("name must be lower case")]
    """Its name."""


class _Toy(BaseModel):
    model_config = ConfigDict(use_attribute_docstrings=True)

    count: Annotated[Int32, Field(ge=1), Cel("self != 7", "not 7")] = 1
    """A count, the operator's default left out."""
    mode: Annotated[str, FILLED] = "fast"
    """A mode the API server fills in."""
    item: Annotated[_Item, FILLED] | None = None
    """An item, filled in as {}."""
    items: Annotated[list[_Item], list_map("name")] = []
    """Items by name."""
    old: Annotated[int | None, NULLABLE] = None
    """Null kept."""
    gone: int | None = None
    """Null dropped."""
    size: int | Annotated[str, Field(max_length=4)] = 1
    """A number or a quantity."""
    factor: Annotated[float, Field(gt=1, lt=9)] = 2.0
    """Above 1, below 9."""
    free: dict[str, Any] = {}
    """Anything."""
    counts: dict[str, int] = {}
    """Counts by name."""


def test_the_json_schema_becomes_a_structural_schema() -> None:
    properties = crd.structural(_Toy.model_json_schema(by_alias=True))["properties"]
    assert properties["count"] == {
        "type": "integer",
        "format": "int32",
        "description": "A count, the operator's default left out.",
        "minimum": 1,
        "x-kubernetes-validations": [{"rule": "self != 7", "message": "not 7"}],
    }
    assert properties["mode"]["default"] == "fast"
    assert properties["item"]["default"] == {}
    assert properties["item"]["description"] == "An item, filled in as {}."  # the field's, over the model's
    assert properties["items"]["items"]["description"] == "An item."
    assert properties["items"]["x-kubernetes-list-map-keys"] == ["name"]
    assert properties["items"]["items"]["properties"]["name"] == {
        "type": "string",
        "description": "Its name.",
        "maxLength": 8,
        "x-kubernetes-validations": [
            {"rule": "self.matches('^[a-z]+$')", "message": "name must be lower case"}
        ],
    }
    assert properties["old"] == {"type": "integer", "description": "Null kept.", "nullable": True}
    assert properties["gone"] == {"type": "integer", "description": "Null dropped."}
    assert properties["size"] == {
        "description": "A number or a quantity.",
        "x-kubernetes-int-or-string": True,
        "maxLength": 4,
    }
    factor = properties["factor"]
    assert (factor["minimum"], factor["exclusiveMinimum"], factor["maximum"], factor["exclusiveMaximum"]) == (
        1,
        True,
        9,
        True,
    )
    assert properties["free"] == {
        "type": "object",
        "description": "Anything.",
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert properties["counts"]["additionalProperties"] == {"type": "integer"}


def test_no_schema_keeps_what_kubernetes_refuses_or_pydantic_adds() -> None:
    text = str(SCHEMA)
    for word in ("$ref", "$defs", "anyOf", "'title'", "x-filled-in", "'const'"):
        assert word not in text, word
