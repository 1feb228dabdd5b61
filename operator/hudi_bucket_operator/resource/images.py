"""Container image references, and which of them an entry of the image allowlist admits (pure: no I/O).

An image a table names must be a well-formed reference, ``name[:tag][@digest]`` in the distribution
grammar that container runtimes parse, in ASCII with a lower-case name: no whitespace, no ``..``, no upper
case in the name, no look-alike letters of other alphabets, which a runtime would refuse or could read as
another name. The allowlist's entries (Helm value ``jobs.allowedImages``) admit:

- ``registry.example/team/`` (ending in '/'): every image under it, e.g. ``registry.example/team/job:1``
  and ``registry.example/team/sub/job@sha256:...``, not ``registry.example/teamwork/job``;
- ``registry.example/job`` (a name): that repository and those under it, with any tag or digest, e.g.
  ``registry.example/job:1``, not ``registry.example/job-other`` nor ``registry.example:5000/job``;
- ``registry.example/job:1.2`` or ``registry.example/job@sha256:...`` (with a tag or a digest): exactly
  that reference; not ``registry.example/job:1.2@sha256:...``, whose digest could name any image of the
  repository.

References are compared as written (``python:3`` is not ``docker.io/library/python:3``): two spellings of
one image may be refused, never one spelling of two.
"""

from __future__ import annotations

import re

_ALNUM = r"[a-z0-9]+"
_PATH_COMPONENT = rf"{_ALNUM}(?:(?:[._]|__|-+){_ALNUM})*"  # ".." is no separator
_HOST_LABEL = r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?"
_DOMAIN = rf"{_HOST_LABEL}(?:\.{_HOST_LABEL})*(?::[0-9]+)?"
# The first component is a registry (with a port) only when a path follows it, as the runtimes read it.
_NAME = rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"  # not \w, which takes any alphabet's letters
_DIGEST = r"sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128}"
REFERENCE = re.compile(rf"(?P<name>{_NAME})(?::(?P<tag>{_TAG}))?(?:@(?P<digest>{_DIGEST}))?")
MAX_NAME_LENGTH = 255  # the distribution spec's bound on a name


def reference(image: str) -> re.Match[str] | None:
    """The parts of a well-formed image reference (name, tag, digest), or None."""
    match = REFERENCE.fullmatch(image)
    return match if match and len(match["name"]) <= MAX_NAME_LENGTH else None


def valid_entry(entry: str) -> bool:
    """Whether ``entry`` can be an allowlist entry: a reference, or a prefix ending in '/' that names
    can continue (a registry, with or without a port, or a path on one)."""
    if entry.endswith("/"):
        under = reference(entry + "x")
        return under is not None and under["name"] == entry + "x"
    return reference(entry) is not None


def admits(entry: str, image: str) -> bool:
    """Whether the allowlist entry ``entry`` admits ``image`` (see the module's docstring)."""
    parts = reference(image)
    if parts is None or not valid_entry(entry):
        return False
    name = parts["name"]
    if entry.endswith("/"):
        return name.startswith(entry)
    entry_parts = reference(entry)
    if entry_parts is not None and entry_parts["name"] != entry:
        return image == entry  # a tag or a digest: exactly that
    return name == entry or name.startswith(entry + "/")
