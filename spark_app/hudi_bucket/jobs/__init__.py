"""The PySpark side: what every SparkApplication (and the local mode) runs."""
