"""The HudiBucketTable resource's API: its group, version and names, and the annotations a user sets on a
table (no I/O)."""

from __future__ import annotations

GROUP, VERSION, PLURAL, KIND = "hudi.bucketops.io", "v1alpha1", "hudibuckettables", "HudiBucketTable"
API_VERSION = f"{GROUP}/{VERSION}"

# Annotations a user sets on a HudiBucketTable.
PAUSED = f"{GROUP}/paused"  # "true": start no new job (a running one finishes and is recorded)
# On a table only while the operator may hold its writers paused: deleting it waits until they are resumed.
WRITERS_FINALIZER = f"{GROUP}/writers-paused"
UNMANAGED = f"{GROUP}/unmanaged"  # "true": the operator ignores the resource entirely
RETRY = f"{GROUP}/retry"  # change its value to retry a failed job without changing the spec
APPLY_NOW = f"{GROUP}/apply-now"  # a plan id: that plan starts outside spec.apply.window
VERIFY = f"{GROUP}/verify"  # a time (RFC 3339): check the layout once Ready, unless checked since
# A plan approved or denied in the cluster (`kubectl hbt approve|deny`, or by hand), and by whom and why, as
# status.history records it. A deny wins over any approval of the same plan.
APPROVE = f"{GROUP}/approve"  # a plan id: that plan is approved, as spec.apply.approvedPlan approves it
DENY = f"{GROUP}/deny"  # a plan id: that plan is not applied; the table stalls saying who and why
DECIDED_BY = f"{GROUP}/decided-by"  # who: the chart's admission policy has it name the user setting it
REASON = f"{GROUP}/reason"  # why
