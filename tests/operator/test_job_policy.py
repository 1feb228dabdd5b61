"""The image allowlist, attacked: tags and digests, '..', upper case, a registry or path that an entry is a
prefix of, whitespace and look-alike letters; each is allowed by the rule as documented (images.py) or
refused, by the operator and, where no entry could admit it, by the CRD's CEL rule at admission.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from hbt_admission import ADMISSION, CRD_PATH, SMALL, with_spec
from hudi_bucket_operator import images
from hudi_bucket_operator.job_policy import ImageNotAllowedError, JobDefaults, image_allowed, job_settings
from hudi_bucket_operator.spec import SparkSettings

DEFAULTS = JobDefaults(image="registry.example/hudi-job:1.0", spark_version="3.5.8")


def table(spark: dict[str, Any]) -> dict[str, Any]:
    """The manifest of a small table with this spec.spark."""
    return with_spec(SMALL, "spark", spark)


def _crd_rule(field: str) -> str:
    crd = yaml.safe_load(CRD_PATH.read_text())
    spark = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"][
        "spark"
    ]
    (validation,) = spark["properties"][field]["x-kubernetes-validations"]
    return str(validation["rule"])


# --- the image allowlist ----------------------------------------------------------------------------------

IMAGE_POLICY = replace(
    DEFAULTS,
    allowed_images=("registry.example/hudi-job", "mirror.example/lake/", "pinned.example/job:1.0"),
)
DIGEST = "sha256:" + "0123456789abcdef" * 4
# (image, allowed?, why): each attack on the rule, and what the rule says of it (images.py's docstring).
IMAGES_TRIED = [
    ("registry.example/hudi-job:1.0", True, "the default image"),
    ("registry.example/hudi-job:2.0", True, "a repository entry admits any tag"),
    (f"registry.example/hudi-job@{DIGEST}", True, "and any digest"),
    (f"registry.example/hudi-job:2.0@{DIGEST}", True, "and a tag pinned by a digest"),
    ("registry.example/hudi-job", True, "and no tag"),
    ("registry.example/hudi-job/spark:1", True, "and the repositories under it"),
    ("mirror.example/lake/anything:1", True, "an entry ending in '/' admits what is under it"),
    (f"mirror.example/lake/a/b@{DIGEST}", True, "however deep"),
    ("pinned.example/job:1.0", True, "an entry with a tag admits exactly it"),
    ("pinned.example/job:1.1", False, "another tag"),
    ("pinned.example/job", False, "no tag"),
    (f"pinned.example/job:1.0@{DIGEST}", False, "a digest could name any image of the repository"),
    ("registry.example/hudi-job-evil:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-jobs:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-job.evil:1", False, "a name the entry is a prefix of"),
    ("registry.example/hudi-job__x:1", False, "a name the entry is a prefix of"),
    ("registry.example.evil.com/hudi-job:1", False, "a registry the entry's registry is a prefix of"),
    ("registry.example:5000/hudi-job:1", False, "another port of the entry's registry"),
    ("mirror.example/lakehouse/x:1", False, "a path the entry is a prefix of"),
    ("mirror.example/lake", False, "the prefix itself is no image under it"),
    ("registry.example/hudi-job/../evil:1", False, "'..' in a name"),
    ("registry.example/hudi-job/..:1", False, "'..' as a name"),
    ("mirror.example/lake/../../evil/x:1", False, "'..' climbing out of the prefix"),
    ("mirror.example/lake//x:1", False, "an empty path component"),
    ("registry.example/hudi-job/./x:1", False, "'.' as a name"),
    ("REGISTRY.EXAMPLE/hudi-job:1", False, "upper case in the registry"),
    ("Registry.example/hudi-job:1", False, "upper case in the registry"),
    ("registry.example/Hudi-Job:1", False, "upper case in the path"),
    (" registry.example/hudi-job:1", False, "whitespace"),
    ("registry.example/hudi-job:1 ", False, "whitespace"),
    ("registry.example/hudi-job:1\n", False, "whitespace"),
    ("registry.example/hudi-job :1", False, "whitespace"),
    ("registry.example/hudi-job:1\u00a0", False, "a no-break space"),
    ("registry.example/hudi-job:1\u200b", False, "a zero-width space"),
    ("registr\u0443.example/hudi-job:1", False, "a Cyrillic look-alike in the registry"),
    ("registry.example/hudi-j\u043eb:1", False, "a Cyrillic look-alike in the path"),
    ("registry.example/hudi\u2010job:1", False, "a Unicode hyphen"),
    ("registry.example/hudi-job:\uff11", False, "a full-width digit in the tag"),
    ("registry.example/hudi-job:1\u0301", False, "a combining accent"),
    ("registry.example/hudi-job:-1", False, "a tag must start with a letter, digit or '_'"),
    ("registry.example/hudi-job:1:2", False, "two tags"),
    ("registry.example/hudi-job:" + "1" * 129, False, "a tag longer than 128"),
    ("registry.example/hudi-job@sha256:abc", False, "a digest too short"),
    ("registry.example/hudi-job@sha256:" + "A" * 64, False, "a digest in upper case"),
    ("registry.example/hudi-job@md5:" + "0" * 32, False, "an unknown digest algorithm"),
    ("docker.io/library/python:3", False, "not on the allowlist"),
]


@pytest.mark.parametrize(("image", "allowed", "why"), IMAGES_TRIED, ids=[repr(i) for i, _, _ in IMAGES_TRIED])
def test_each_image_tried_is_allowed_by_the_rule_as_documented_or_refused(
    image: str, allowed: bool, why: str
) -> None:
    assert image_allowed(image, IMAGE_POLICY) is allowed, why
    if not allowed:
        with pytest.raises(ImageNotAllowedError, match=re.escape(repr(image))):
            job_settings(SparkSettings(image=image), IMAGE_POLICY)


@pytest.mark.parametrize(("image", "allowed", "why"), IMAGES_TRIED, ids=[repr(i) for i, _, _ in IMAGES_TRIED])
def test_admission_refuses_each_image_that_is_no_reference(image: str, allowed: bool, why: str) -> None:
    refused = ADMISSION.errors(table({"image": image}))
    assert bool(refused) is (images.reference(image) is None), (why, refused)


def test_the_crds_image_rule_is_the_operators_grammar() -> None:
    assert _crd_rule("image") == f"self == '' || self.matches('^{images.REFERENCE.pattern}$')".replace(
        "\\", "\\\\"
    )


LOOK_ALIKES = (
    "\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\uff41\uff4f\u2010\u2011\u2212\u00b7\u0131"
)
WHITESPACE = " \t\n\r\x0b\x0c\u00a0\u2000\u2028\u200b\u3000\ufeff"


@settings(max_examples=300, deadline=None)
@given(
    image=st.sampled_from([image for image, allowed, _ in IMAGES_TRIED if allowed]),
    where=st.integers(min_value=0),
    inserted=st.sampled_from(LOOK_ALIKES + WHITESPACE),
)
def test_an_allowed_image_with_any_look_alike_or_whitespace_is_refused(
    image: str, where: int, inserted: str
) -> None:
    at = where % (len(image) + 1)
    for attack in (image[:at] + inserted + image[at:], image[:at] + inserted + image[at + 1 :]):
        assert not image_allowed(attack, IMAGE_POLICY), attack


@settings(max_examples=300, deadline=None)
@given(image=st.sampled_from([image for image, allowed, _ in IMAGES_TRIED if allowed]), where=st.integers(0))
def test_an_allowed_image_with_upper_case_in_its_name_is_refused(image: str, where: int) -> None:
    parts = images.reference(image)
    assert parts is not None
    name = parts["name"]
    letters = [i for i, c in enumerate(name) if c.isalpha()]
    at = letters[where % len(letters)]
    assert not image_allowed(image[:at] + image[at].upper() + image[at + 1 :], IMAGE_POLICY)


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80))
def test_whatever_the_text_an_admitted_image_is_a_lower_case_ascii_reference_under_an_entry(
    text: str,
) -> None:
    for image in (text, f"registry.example/hudi-job{text}", f"mirror.example/lake/{text}"):
        if not image_allowed(image, IMAGE_POLICY) or image == IMAGE_POLICY.image:
            continue
        assert image.isascii()
        assert not any(c.isspace() for c in image)
        assert unicodedata.normalize("NFKC", image) == image
        parts = images.reference(image)
        assert parts is not None
        name = parts["name"]
        assert name == name.lower()
        assert ".." not in name
        assert "//" not in name
        assert (
            name == "registry.example/hudi-job"
            or name.startswith(("registry.example/hudi-job/", "mirror.example/lake/"))
            or image == "pinned.example/job:1.0"
        )


@pytest.mark.parametrize(
    "entry",
    [
        "Registry.example/job",
        "registry.example/job ",
        "registry.example/../job",
        "mirror.example/lake//",
        "/",
    ],
)
def test_an_allowlist_entry_that_admits_no_reference_stops_the_operator(entry: str) -> None:
    with pytest.raises(ValueError, match="allowedImages"):
        replace(DEFAULTS, allowed_images=(entry,))
