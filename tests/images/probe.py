"""Run in the job image by spark-submit (tests/images/test_built_images.py): a real plan through
hudi-bucket-job's own entry point, then what the job's session found, as JSON on the last line."""

import json
import os
import sys

from hudi_bucket.cli import main

if __name__ == "__main__":
    code = main(sys.argv[1:])
    from pyspark.sql import SparkSession

    from hudi_bucket.spark.session import on_classpath

    spark = SparkSession.getActiveSession()
    classes = {
        "jvm": "io.hudibucket.spark.DirectFileCommitProtocol",
        "hudi": "org.apache.spark.sql.hudi.HoodieSparkSessionExtension",
        "s3a": "org.apache.hadoop.fs.s3a.S3AFileSystem",
        "aws": "com.amazonaws.services.s3.AmazonS3Client",
    }
    found = {
        "exit": code,
        "uid": os.getuid(),
        "python": sys.version.split()[0],
        "spark": spark.version,
        "sparkHome": os.environ["SPARK_HOME"],
        "sparkHomeReal": os.path.realpath(os.environ["SPARK_HOME"]),
        "extensions": spark.conf.get("spark.sql.extensions", ""),
        "classes": {name: on_classpath(spark, cls) for name, cls in classes.items()},
    }
    print(json.dumps(found))
