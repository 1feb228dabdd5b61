"""What the tests share, beside the test folders that mirror the packages: where the test material lives
(``paths``), the tables Apache Hudi writes and reads in the tests (``written_tables``, ``hudi_tables``,
``file_slice_tables``, ``hudi_spark``, ``hudi_rs``) and bucket tables made or broken by hand
(``bucket_tables``), the job run in-process (``cli_runs``) and killed mid-apply (``crashes``), the CRD's
admission and schemas as the API server applies them (``hbt_admission``, ``k8s_schema``,
``structural_schema``), the HudiBucketTable the operator tests create (``hbt_resources``), and the chart
rendered by a real helm (``helm_chart``) with what its RBAC grants (``rbac_rules``).

Imported as ``lib.<module>``: pytest puts ``tests/`` on ``sys.path`` (tests/conftest.py is in a folder with
no ``__init__.py``), and the scripts that run outside pytest (tests/bench, tests/e2e/node/killed_run.py,
tests/install/render_deploy.py) put it there themselves. Nothing here is a test: pytest collects none of it.
"""
