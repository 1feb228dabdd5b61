"""`python -m hudi_bucket`: the same as the hudi-bucket-job command."""

import sys

from hudi_bucket.cli import main

sys.exit(main())
