"""`hudi-bucket-operator`: run the operator in a cluster, reconcile manifests locally, or run the demo."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV
from hudi_bucket.core.engine import Engine
from hudi_bucket.errors import HudiBucketError
from hudi_bucket.release import VERSION


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hudi-bucket-operator", description=__doc__)
    parser.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser("run", help="run the operator (Kopf) against the cluster")
    run.add_argument(
        "--namespace", "-n", action="append", default=[], help="watch this namespace (repeatable)"
    )
    run.add_argument("--liveness", default="http://0.0.0.0:8081/healthz", help="liveness endpoint URL")
    run.add_argument("--verbose", action="store_true")
    run.add_argument("--log-format", choices=["plain", "full", "json"], default="full")

    local = commands.add_parser("local", help="reconcile HudiBucketTable manifests with local Spark")
    local_commands = local.add_subparsers(dest="local_command", required=True, metavar="COMMAND")
    local_apply = local_commands.add_parser("apply", help="reconcile until each table settles; print status")
    local_apply.add_argument(
        "-f", "--filename", action="append", required=True, type=Path, help="manifest file"
    )
    local_apply.add_argument("--state-dir", type=Path, default=Path(".hudi-bucket-operator"))

    commands.add_parser("settings", help="list the operator's settings (HBO_* variables) as a Markdown table")
    commands.add_parser(
        "crd", help="print the HudiBucketTable CRD, generated from the models (crds/ holds it)"
    )

    demo = commands.add_parser("demo", help="create a skewed sample table and rescale it with examples/")
    demo.add_argument("--dir", type=Path, default=Path("demo-output"))
    demo.add_argument("--rows", type=int, default=300_000)
    demo.add_argument(
        "--sized",
        action="store_true",
        help="size the days from a target file size (examples/sized-days.yaml) instead of fixed rules",
    )
    demo.add_argument(
        "--engine",
        type=str.lower,
        choices=[e.value.lower() for e in Engine],
        default=Engine.AUTO.value.lower(),
        help="the engine that rewrites the table (spec.engine); hudi needs Hudi's Spark bundle in "
        f"{HUDI_BUNDLE_ENV}, which `./dev demo --engine hudi` fetches",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "local":
            return _local_apply(args)
        if args.command == "settings":
            from hudi_bucket_operator.runtime.settings import reference

            print(reference(), end="")
            return 0
        if args.command == "crd":
            from hudi_bucket_operator.resource.crd import render

            print(render(), end="")
            return 0
        from hudi_bucket_operator.demo import run_demo

        engine = next(e for e in Engine if e.value.lower() == args.engine)
        return run_demo(args.dir, args.rows, print, sized=args.sized, engine=engine)
    except HudiBucketError as err:
        print(f"hudi-bucket-operator: {err}", file=sys.stderr)
        return 1


def _run(args: argparse.Namespace) -> int:
    import kopf

    from hudi_bucket_operator.runtime import handlers  # noqa: F401  (registers the handlers with Kopf)
    from hudi_bucket_operator.runtime.settings import OperatorConfig

    kopf.configure(verbose=args.verbose, log_format=getattr(kopf.LogFormat, args.log_format.upper()))
    if not args.verbose:  # one "Handler ... succeeded" line per table event is noise at a thousand tables
        logging.getLogger("kopf.objects").setLevel(logging.WARNING)
    config = OperatorConfig.from_env()
    if args.namespace:
        watching = config.watching.model_copy(update={"namespaces": tuple(args.namespace)})
        config = config.model_copy(update={"watching": watching})
    kopf.run(
        clusterwide=not config.watching.namespaces,
        namespaces=list(config.watching.namespaces),
        liveness_endpoint=args.liveness,
        standalone=True,
        memo=kopf.Memo(config=config),
    )
    return 0


def _local_apply(args: argparse.Namespace) -> int:
    from hudi_bucket_operator.runtime.local import apply_locally, load_manifests

    results = asyncio.run(apply_locally(load_manifests(args.filename), args.state_dir, print))
    print(yaml.safe_dump_all(results, sort_keys=False))
    stalled = [r for r in results if r["status"].get("phase") == "Stalled"]
    return 1 if stalled else 0
