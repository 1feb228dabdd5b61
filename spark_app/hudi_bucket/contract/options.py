"""Command-line options of `hudi-bucket-job`, each declared once: its flag, its help, how its value is
written into an argument list and read back from argparse.

An option fills one field (``dest``) of a request. Options are written as ``--flag=value``: a value that
starts with '-' (a rule pattern may) would otherwise read as an option. A value that is not set (None,
"", (), False) is not written at all, and argparse leaves an option that was not given out of the
namespace (``SUPPRESS``), so the request's own default applies: defaults are stated once, on the request.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from hudi_bucket.core.rules import REGEX, BucketRules
from hudi_bucket.core.sizing import QUANTITY_FORMAT, SizingPolicy, parse_size
from hudi_bucket.errors import SizingError

NOT_GIVEN: Any = object()  # what `read` returns for an option absent from the command line


class Option(Protocol):
    """The fragment of a command line that carries one field of a request."""

    @property
    def dest(self) -> str: ...

    def add_to(self, parser: argparse.ArgumentParser) -> None: ...

    def argv(self, value: Any) -> list[str]: ...

    def read(self, namespace: argparse.Namespace) -> Any: ...


def _is_set(value: Any) -> bool:
    return value is not None and value is not False and value not in ("", ())


@dataclass(frozen=True)
class Value:
    """``--flag=value``; ``parse`` turns the text into the field's type (a ValueError is a usage error)."""

    flag: str
    dest: str
    help: str
    required: bool = False
    parse: Callable[[str], Any] = str
    render: Callable[[Any], str] = str
    choices: tuple[Any, ...] | None = None
    metavar: str | None = None

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            self.flag,
            dest=self.dest,
            help=self.help,
            required=self.required,
            type=self.parse,
            choices=self.choices,
            metavar=self.metavar,
            default=argparse.SUPPRESS,
        )

    def argv(self, value: Any) -> list[str]:
        return [f"{self.flag}={self.render(value)}"] if _is_set(value) else []

    def read(self, namespace: argparse.Namespace) -> Any:
        return getattr(namespace, self.dest, NOT_GIVEN)


@dataclass(frozen=True)
class Switch:
    """``--flag`` with no value: True when given."""

    flag: str
    dest: str
    help: str

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            self.flag, dest=self.dest, help=self.help, action="store_true", default=argparse.SUPPRESS
        )

    def argv(self, value: Any) -> list[str]:
        return [self.flag] if value else []

    def read(self, namespace: argparse.Namespace) -> Any:
        return getattr(namespace, self.dest, NOT_GIVEN)


def names(text: str) -> tuple[str, ...]:
    """A comma-separated list of field names, as a tuple (blanks dropped)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())


def names_option(flag: str, dest: str, help: str, *, required: bool = False) -> Value:
    return Value(flag, dest, help, required=required, parse=names, render=",".join, metavar="FIELD[,FIELD]")


@dataclass(frozen=True)
class Rules:
    """The bucket rules as Hudi writes them, in three options: ``--expressions 'regex,N;regex,N'``,
    ``--default N`` and ``--rule``. Reading them parses the rules exactly as Hudi does, which may refuse
    them (InvalidRuleError: the job then fails with a report, not a usage error)."""

    dest: str = "rules"

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--expressions", required=True, help="rules as Hudi writes them: 'regex,N;regex,N'"
        )
        parser.add_argument(
            "--default", type=int, required=True, help="bucket count of partitions no rule matches"
        )
        parser.add_argument("--rule", default=REGEX, help=f"rule engine (Hudi has only {REGEX!r})")

    def argv(self, value: BucketRules) -> list[str]:
        return [
            f"--expressions={value.render()}",
            f"--default={value.default}",
            f"--rule={value.rule_type}",
        ]

    def read(self, namespace: argparse.Namespace) -> BucketRules:
        if not namespace.expressions:  # no explicit rules: sizing's alone (plan refuses them without it)
            return BucketRules((), namespace.default, namespace.rule)
        return BucketRules.parse(namespace.expressions, namespace.default, namespace.rule)


@dataclass(frozen=True)
class Sizing:
    """The sizing policy, in five options led by ``--target-file-size`` (without it, no sizing: the
    field keeps its default, None). The other four alone are the job's failure (SizingError), as
    rules Hudi would refuse are."""

    dest: str = "sizing"
    # (flag, SizingPolicy field, parse, help)
    FLAGS: ClassVar[tuple[tuple[str, str, Callable[[str], Any], str], ...]] = (
        (
            "--target-file-size",
            "target_file_size",
            parse_size,
            f"size each partition's files to this ({QUANTITY_FORMAT})",
        ),
        ("--min-buckets", "min_buckets", int, "sizing gives no partition fewer buckets"),
        ("--max-buckets", "max_buckets", int, "sizing gives no partition more buckets"),
        (
            "--sizing-partitions",
            "partitions",
            str,
            "a Java regex: the partitions sizing may touch (default: all)",
        ),
        (
            "--tolerance",
            "tolerance",
            float,
            "files within this factor of the target are left alone (default 2)",
        ),
    )

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        for flag, name, parse, help in self.FLAGS:
            parser.add_argument(flag, dest=f"sizing_{name}", type=parse, help=help, default=argparse.SUPPRESS)

    def argv(self, value: SizingPolicy | None) -> list[str]:
        if value is None:
            return []
        given = [(flag, getattr(value, name)) for flag, name, _, _ in self.FLAGS]
        return [f"{flag}={setting}" for flag, setting in given if _is_set(setting)]

    def read(self, namespace: argparse.Namespace) -> SizingPolicy | None:
        given = {
            name: getattr(namespace, f"sizing_{name}")
            for _, name, _, _ in self.FLAGS
            if hasattr(namespace, f"sizing_{name}")
        }
        if not given:
            absent: SizingPolicy | None = NOT_GIVEN
            return absent
        if "target_file_size" not in given:
            raise SizingError(
                f"{', '.join(sorted(given))} given without --target-file-size",
                hint="give --target-file-size too",
            )
        return SizingPolicy(**given)


@dataclass(frozen=True)
class Group:
    """A set of options that fills one field holding a dataclass of its own (e.g. plan's and apply's
    rescale options), so that the jobs can take that dataclass without the rest of the request."""

    dest: str
    of: type
    options: tuple[Option, ...] = field(default=())

    def add_to(self, parser: argparse.ArgumentParser) -> None:
        for option in self.options:
            option.add_to(parser)

    def argv(self, value: Any) -> list[str]:
        return argv_of(value, self.options)

    def read(self, namespace: argparse.Namespace) -> Any:
        return self.of(**values_of(namespace, self.options))


def argv_of(obj: Any, options: tuple[Option, ...]) -> list[str]:
    """The arguments that carry ``obj``'s fields, option by option."""
    return [arg for option in options for arg in option.argv(getattr(obj, option.dest))]


def values_of(namespace: argparse.Namespace, options: tuple[Option, ...]) -> dict[str, Any]:
    """The fields the given options carry, read from a parsed command line (absent ones left out)."""
    return {o.dest: value for o in options if (value := o.read(namespace)) is not NOT_GIVEN}
