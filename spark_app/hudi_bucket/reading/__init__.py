"""Reading records: a dataset to write, a table's plain base files, and the file slices only Apache Hudi's
reader reads whole (bootstrap skeletons, MERGE_ON_READ log files)."""
