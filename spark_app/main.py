"""Main file for `spark-submit` (a SparkApplication's mainApplicationFile): the same as hudi-bucket-job."""

import sys

from hudi_bucket.cli import main

if __name__ == "__main__":
    sys.exit(main())
