"""The HudiBucketTable spec, as pydantic models: what the CRD's spec schema is generated from, and what the
operator reads (no I/O).

Each model is one object of the CRD's schema: its fields are the CRD's properties (snake_case here,
camelCase in the manifest), each described by its docstring, with its required fields, enums, defaults,
bounds, patterns and CEL rules (crd_schema.py's markers); crd.py turns them into the CRD. The CEL rules
are the API server's; what they check and what only code can check are the models' validators too.

- ``table_spec``: the whole spec (``TableSpec``), what the operator reads off it, and ``parse_spec``;
- ``table``: spec.table and spec.buckets (rules, sizing);
- ``apply``: spec.apply (policy, approval, window) and spec.writers;
- ``spark``: spec.spark, and ``Resources``;
- ``fields``: the field types several sections share;
- ``problems``: the sections' base, and what is wrong with a spec, said the manifest's way.
"""

from hudi_bucket_operator.resource.spec.table_spec import TableSpec, parse_spec

__all__ = ["TableSpec", "parse_spec"]
