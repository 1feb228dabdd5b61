"""Hudi's meta columns: the first five columns of every base file, in this order."""

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"  # <instant>_<task>_<row>
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_COLUMNS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
OPERATION = "_hoodie_operation"  # present only when a table keeps the write operation per record
