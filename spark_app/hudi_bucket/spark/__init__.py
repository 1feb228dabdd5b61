"""The Spark session the jobs run in and its conventions: settings, paths Spark reads, the table context,
Java's regex, Avro schemas as Hudi records them."""
