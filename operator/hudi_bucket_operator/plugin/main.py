"""`kubectl hbt`: see and act on HudiBucketTables without reading YAML (the kubectl plugin `kubectl-hbt`).

It talks to the cluster through kubectl itself, so the user's kubeconfig, context and credentials apply,
and the plugin can do exactly what its user could do by hand: nothing more.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import yaml

from hudi_bucket.release import VERSION
from hudi_bucket_operator.errors import PluginError
from hudi_bucket_operator.plugin.views import (
    Table,
    approval_line,
    denial_lines,
    history_view,
    plan_awaiting_window,
    plan_to_approve,
    plan_view,
    table_list,
    terminal_safe,
)
from hudi_bucket_operator.resource.api import (
    APPLY_NOW,
    APPROVE,
    DECIDED_BY,
    DENY,
    GROUP,
    KIND,
    PAUSED,
    PLURAL,
    REASON,
    RETRY,
    VERIFY,
)
from hudi_bucket_operator.resource.conditions import stamp

RESOURCE = f"{PLURAL}.{GROUP}"
KIND_NAME = f"{KIND.lower()}.{GROUP}"  # as kubectl get -o name names one
FIELD_MANAGER = "kubectl-hbt"


def _kubectl_flags(default: object) -> argparse.ArgumentParser:
    """kubectl's own flags, which its users put before or after the verb (``kubectl hbt list -n lake``):
    the main parser's default None, each verb's SUPPRESS, so that one given after the verb wins and one
    not given there leaves the other."""
    flags = argparse.ArgumentParser(add_help=False)
    flags.add_argument(
        "-n", "--namespace", default=default, help="the tables' namespace (default: the context's)"
    )
    flags.add_argument("--context", default=default, help="the kubeconfig context to use")
    flags.add_argument("--kubeconfig", default=default, help="the kubeconfig file to use")
    return flags


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kubectl hbt", description=__doc__.splitlines()[0], parents=[_kubectl_flags(None)]
    )
    parser.add_argument("--version", action="version", version=f"kubectl-hbt {VERSION}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    after_the_verb = _kubectl_flags(argparse.SUPPRESS)

    def verb(name: str, text: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=text, parents=[after_the_verb])

    listing = verb("list", "every table: phase, config, plan, wait, verify, writers")
    listing.add_argument("-A", "--all-namespaces", action="store_true", help="tables of every namespace")
    listing.add_argument("--no-headers", action="store_true", help="no header line")
    _output(
        listing,
        "the tables as kubectl prints them (a List), their names, or the list with why each is not Ready and "
        "when its window opens",
        ("json", "yaml", "name", "wide"),
    )
    for name, text, shown in (
        ("plan", "the plan as a diff of bucket counts, with rows, bytes and file sizes", "status.plan"),
        ("history", "the applies that rewrote the table, newest first", "status.history"),
    ):
        read = verb(name, text)
        read.add_argument("table")
        _output(read, f"the table's {shown} as it is", ("json", "yaml"))
    for name, text in (
        ("verify", "check the table's layout now (once it is Ready), whatever spec.verify says"),
        ("pause", "start no new job for the table (a running one finishes)"),
        ("resume", "let the table's jobs start again"),
        ("retry", "start again after a failure, the spec unchanged: a new round from a plan job"),
    ):
        verb(name, text).add_argument("table")
    now = verb("apply-now", "start the approved plan waiting for its window now, outside spec.apply.window")
    now.add_argument("table")
    now.add_argument("--plan", default="", help="the plan you mean (its id, or its first 12 hex digits)")
    for name, text in (
        ("approve", "approve the table's plan: it is applied, and the history says who and why"),
        ("deny", "deny the table's plan: it is not applied, and the table stalls saying who and why"),
    ):
        decide = verb(name, text)
        decide.add_argument("table")
        decide.add_argument("--reason", default="", help="why, recorded in status.history")
        decide.add_argument(
            "--plan",
            default="",
            help="the plan you read (its id, or the 12 characters the list shows): refused if the plan changed",
        )
        if name == "approve":
            decide.add_argument(
                "--git", action="store_true", help="only print what to commit where the manifest lives"
            )
    return parser


def _output(parser: argparse.ArgumentParser, text: str, formats: tuple[str, ...]) -> None:
    parser.add_argument("-o", "--output", choices=formats, help=f"{'|'.join(formats)}: {text}")


def _printed(found: Any, output: str) -> str:
    """What kubectl's -o json|yaml prints of ``found``: keys in order, non-ASCII escaped (so nothing a
    terminal obeys reaches it)."""
    if output == "json":
        return json.dumps(found, indent=4)
    return str(yaml.safe_dump(found, sort_keys=False)).rstrip("\n")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    kubectl = Kubectl(args.namespace, args.context, args.kubeconfig)
    try:
        print(_safe_lines(run(args, kubectl)))
    except PluginError as err:
        print(f"kubectl hbt: {_safe_lines(str(err))}", file=sys.stderr)
        return 1
    return 0


def _safe_lines(text: str) -> str:
    """Each line of ``text`` made safe to print, the line breaks kept.

    The views and messages already escape each table's value where it enters them (a newline in a value
    included); this is for kubectl's errors, which may quote a table's values, and a net under the rest."""
    return "\n".join(terminal_safe(line) for line in text.split("\n"))


def run(args: argparse.Namespace, kubectl: Kubectl) -> str:
    if args.command == "list":
        found = kubectl.json("get", RESOURCE, *(["--all-namespaces"] if args.all_namespaces else []))
        if args.output == "name":
            return "\n".join(f"{KIND_NAME}/{item['metadata']['name']}" for item in found.get("items", []))
        tables = (Table.of(item) for item in found.get("items", []))
        if args.output in ("json", "yaml"):
            return _printed(found, args.output)
        return table_list(tables, headers=not args.no_headers, wide=args.output == "wide")
    resource = kubectl.json("get", RESOURCE, args.table)
    table = Table.of(resource)
    if args.command in ("plan", "history") and args.output:
        return _printed((resource.get("status") or {}).get(args.command), args.output)
    if args.command == "plan":
        return plan_view(table)
    if args.command == "history":
        return history_view(table)
    if args.command == "verify":
        asked = stamp(datetime.now(UTC))
        kubectl.patch(args.table, {"metadata": {"annotations": {VERIFY: asked}}})
        return f"{table.shown_name}: layout check asked for at {asked} (it runs once the table is Ready)"
    if args.command == "retry":
        asked = stamp(datetime.now(UTC))
        kubectl.patch(args.table, {"metadata": {"annotations": {RETRY: asked}}})
        return f"{table.shown_name}: retry asked for at {asked} (a new round starts from a plan job)"
    if args.command == "apply-now":
        try:
            plan_id = plan_awaiting_window(table, args.plan)
        except ValueError as err:
            raise PluginError(str(err)) from None
        _patch_as_read(table, kubectl, {APPLY_NOW: plan_id}, f"its plan {terminal_safe(plan_id)}", "started")
        return f"{table.shown_name}: plan {terminal_safe(plan_id)} starts now, outside its window"
    if args.command in ("pause", "resume"):
        value = "true" if args.command == "pause" else None
        kubectl.patch(args.table, {"metadata": {"annotations": {PAUSED: value}}})
        return f"{table.shown_name} {args.command}d"
    approve = args.command == "approve"
    return _decide(
        table, kubectl, approve=approve, reason=args.reason, git=approve and args.git, named=args.plan
    )


def _decide(table: Table, kubectl: Kubectl, *, approve: bool, reason: str, git: bool, named: str) -> str:
    """Approve or deny the table's plan by annotation, as its user: the operator records who and why. The
    decision is of the plan read here (and the one ``named``, when given): the patch names the version
    read, so a plan replaced meanwhile makes the API server refuse it."""
    try:
        plan_id = plan_to_approve(table, named)
    except ValueError as err:
        raise PluginError(str(err)) from None
    if git:
        return f"Commit this to {terminal_safe(table.name)}'s manifest:\n{approval_line(plan_id)}"
    if table.managed_by:
        # Git is where this table's changes are made and reviewed: a decision belongs there too.
        managed = f"{table.shown_name} is managed by {table.managed_by}, which keeps it as Git says"
        if approve:
            raise PluginError(
                f"{managed}: approve its plan in Git instead, committing this to its manifest:\n"
                f"{approval_line(plan_id)}"
            )
        # Git has no denial: a plan its manifest does not approve is not applied.
        raise PluginError(
            f"{managed}: deny its plan in Git instead, by not approving it there; it is not applied while "
            f"its manifest keeps\n{denial_lines()}\nand no approvedPlan: {terminal_safe(plan_id)}"
        )
    decided, undone = (APPROVE, DENY) if approve else (DENY, APPROVE)
    annotations = {decided: plan_id, undone: None, DECIDED_BY: kubectl.whoami(), REASON: reason or None}
    _patch_as_read(table, kubectl, annotations, f"its plan {terminal_safe(plan_id)}", "decided")
    return f"{table.shown_name}: plan {terminal_safe(plan_id)} {'approved' if approve else 'denied'}"


def _patch_as_read(
    table: Table, kubectl: Kubectl, annotations: dict[str, str | None], read: str, done: str
) -> None:
    """The annotations, onto the version of the table that was read (``read`` says what of it): a table
    changed meanwhile makes the API server refuse the patch, and nothing is ``done``."""
    metadata: dict[str, Any] = {"annotations": annotations}
    if table.resource_version:
        metadata["resourceVersion"] = table.resource_version
    try:
        kubectl.patch(table.name, {"metadata": metadata})
    except PluginError as err:
        if "the object has been modified" not in str(err):  # the API server's 409 for a stale version
            raise
        raise PluginError(
            f"{table.shown_name} changed since {read} was read: nothing was {done}; read it again "
            f"(kubectl hbt plan {terminal_safe(table.name)})"
        ) from None


class Kubectl:
    """kubectl, run with the plugin's namespace, context and kubeconfig."""

    def __init__(self, namespace: str | None, context: str | None, kubeconfig: str | None) -> None:
        self.flags = [
            f"--{flag}={value}"
            for flag, value in (("namespace", namespace), ("context", context), ("kubeconfig", kubeconfig))
            if value
        ]

    def _run(self, *args: str) -> str:
        binary = shutil.which("kubectl")
        if binary is None:
            raise PluginError("kubectl not found on PATH")
        done = subprocess.run([binary, *self.flags, *args], capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise PluginError(done.stderr.strip() or f"kubectl {' '.join(args)} failed")
        return done.stdout

    def json(self, *args: str) -> dict[str, Any]:
        found: dict[str, Any] = json.loads(self._run(*args, "--output=json"))
        return found

    def whoami(self) -> str:
        """The user the API server takes us for (kubectl auth whoami), or '' when it cannot say."""
        try:
            return self._run("auth", "whoami", "--output=jsonpath={.status.userInfo.username}").strip()
        except PluginError:  # an API server without SelfSubjectReview, or a user not allowed it
            return ""

    def patch(self, name: str, patch: dict[str, Any]) -> None:
        self._run(
            "patch",
            RESOURCE,
            name,
            "--type=merge",
            f"--field-manager={FIELD_MANAGER}",
            f"--patch={json.dumps(patch)}",
        )
