"""hudi_bucket: the Hudi format core and the Spark jobs of hudi-bucket-operator.

``core`` is pure (no I/O, no Spark, no Kubernetes); ``storage`` and ``hudi`` read and write tables through
a small storage interface; ``contract`` is what the operator and the jobs agree on. The PySpark side,
imported only where Spark runs: ``commands`` (one module a job command, never importing one another)
over the mechanisms they share, each layer importing only those below it: ``writing``, ``checks``,
``reading``, ``bucketing``, ``spark`` (the session and its conventions). ``cli`` runs a command.
"""
