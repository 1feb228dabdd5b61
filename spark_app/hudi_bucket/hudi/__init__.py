"""Reading and writing the pieces of a Hudi table through a Storage."""
