"""hudi_bucket: the Hudi format core and the Spark jobs of hudi-bucket-operator.

``core`` is pure (no I/O, no Spark, no Kubernetes); ``storage`` and ``hudi`` read and write tables through
a small storage interface; ``jobs`` holds the PySpark side, imported only where Spark runs.
"""
