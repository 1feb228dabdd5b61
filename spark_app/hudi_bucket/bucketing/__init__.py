"""Bucket ids in Spark: each record's bucket as Hudi's writers compute it, and where records sit."""
