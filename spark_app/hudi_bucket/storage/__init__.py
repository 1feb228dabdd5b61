"""A small storage interface (rooted at a table's base URI) and its backends."""

from hudi_bucket.storage.base import FileInfo, Storage, walk
from hudi_bucket.storage.local import LocalStorage
from hudi_bucket.storage.select import storage_for

__all__ = ["FileInfo", "LocalStorage", "Storage", "storage_for", "walk"]
