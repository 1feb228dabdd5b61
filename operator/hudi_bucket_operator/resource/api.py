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
