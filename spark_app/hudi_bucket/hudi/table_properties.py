"""Reading and updating ``hoodie.properties`` the way Hudi does.

An update first copies the current file to ``hoodie.properties.backup``, then rewrites the file with a
valid checksum, then deletes the backup. Object stores and HDFS do not overwrite atomically, so a reader
that finds the file missing, or its checksum wrong, reads the backup instead: Hudi's readers do, and so
does ``read_table_properties``.
"""

from __future__ import annotations

from hudi_bucket.core.properties import (
    HudiTableConfig,
    Properties,
    parse_properties,
    table_checksum,
    with_valid_checksum,
)
from hudi_bucket.errors import CorruptTableError, NotAHudiTableError
from hudi_bucket.storage.base import Storage

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"
_REQUIRED = (
    HudiTableConfig.TABLE_NAME,
    HudiTableConfig.TABLE_TYPE,
    HudiTableConfig.TABLE_VERSION,
    HudiTableConfig.CHECKSUM,
)


def read_table_properties(storage: Storage) -> Properties:
    main = _read_valid(storage, PROPERTIES_FILE)
    if isinstance(main, Properties):
        return main
    backup = _read_valid(storage, BACKUP_FILE)
    if isinstance(backup, Properties):
        return backup
    if main is None and backup is None:
        raise NotAHudiTableError(f"{storage.uri} is not a Hudi table: {PROPERTIES_FILE} not found")
    raise main if isinstance(main, CorruptTableError) else backup  # type: ignore[misc]


def _read_valid(storage: Storage, path: str) -> Properties | CorruptTableError | None:
    """The parsed file, the reason it is unusable, or None when it does not exist."""
    if not storage.exists(path):
        return None
    source = f"{storage.uri}/{path}"
    try:
        props = parse_properties(storage.read(path), source=source)
    except CorruptTableError as err:
        return err
    # Every supported table version writes a checksum; a file without one, or with the wrong one, is a
    # partial write (Hudi's own readers reject it the same way and turn to the backup).
    missing = [k.key for k in _REQUIRED if k.key not in props]
    if missing:
        return props.corrupt(f"{', '.join(missing)} missing (a partial write?)")
    written = props[HudiTableConfig.CHECKSUM.key]
    if written != str(table_checksum(props)):
        return props.corrupt(f"checksum {written} does not match the table name (a partial write?)")
    return props


def write_table_properties(storage: Storage, props: Properties) -> None:
    """Replace ``hoodie.properties`` so that a crash at any point leaves a readable file or backup."""
    storage.delete(BACKUP_FILE)
    storage.write(BACKUP_FILE, storage.read(PROPERTIES_FILE))
    storage.write(PROPERTIES_FILE, with_valid_checksum(props).render(), overwrite=True)
    storage.delete(BACKUP_FILE)
