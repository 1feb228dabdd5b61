"""The contract between the operator and the job, written once and imported by both (pure: no Spark).

``requests``: the job kinds and a typed request per kind, with its command line (``to_argv``, and the
job's argparse built from the same options). ``reports``: the report a job writes, with typed results
for what the operator reads, and where a report travels in a cluster.
"""
