"""hudi_bucket_operator: the Kopf operator (and its local mode) for HudiBucketTable resources."""
