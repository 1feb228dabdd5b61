"""What is checked before and while writing: the table's state, its layout record by record, and which
copy of a key found twice is kept."""
