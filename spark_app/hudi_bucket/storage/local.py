"""Local filesystem storage.

Writes go to a temporary file in the table's scratch folder (Hudi's own ``.hoodie/.temp``), then
appear under their name in one step: ``os.link`` when the target must not exist (so two writers cannot
both create it), ``os.replace`` when overwriting. Readers never see a partial file, and a crash never
leaves a stray file beside the target (Hudi fails on strays in e.g. the hashing_config folder).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hudi_bucket.errors import StorageError
from hudi_bucket.storage.base import FileInfo, is_noise, join

SCRATCH_FOLDER = ".hoodie/.temp"


class LocalStorage:
    def __init__(self, root: str | os.PathLike[str]) -> None:
        root = str(root)
        if root.startswith("file://"):
            root = root[len("file://") :]
        elif root.startswith("file:"):
            root = root[len("file:") :]
        self._root = Path(root).resolve()

    @property
    def uri(self) -> str:
        return str(self._root)

    @property
    def is_object_store(self) -> bool:
        return False

    def _abs(self, path: str) -> Path:
        return self._root / path if path else self._root

    def exists(self, path: str) -> bool:
        return self._abs(path).exists()

    def list(self, path: str) -> list[FileInfo]:
        folder = self._abs(path)
        if not folder.is_dir():
            return []
        infos = []
        for entry in os.scandir(folder):
            if is_noise(entry.name):
                continue
            is_dir = entry.is_dir()
            stat = entry.stat()
            size = 0 if is_dir else stat.st_size
            infos.append(FileInfo(join(path, entry.name), size, is_dir, stat.st_mtime_ns // 1_000_000))
        return sorted(infos, key=lambda i: i.path)

    def read(self, path: str) -> bytes:
        try:
            return self._abs(path).read_bytes()
        except FileNotFoundError:
            raise StorageError(f"{self.uri}/{path} does not exist") from None
        except IsADirectoryError:
            raise StorageError(f"{self.uri}/{path} is a folder, not a file") from None

    def _scratch(self, target: Path) -> Path:
        """The table's scratch folder when the root is a table, else the target's own folder."""
        if not self._abs(".hoodie").is_dir():
            return target.parent
        scratch = self._abs(SCRATCH_FOLDER)
        scratch.mkdir(exist_ok=True)
        return scratch

    def write(self, path: str, data: bytes, *, overwrite: bool = False) -> None:
        target = self._abs(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=self._scratch(target))
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            if overwrite:
                os.replace(tmp, target)
                # The checksum Hadoop's LocalFileSystem kept of the old content (a table Hudi wrote on
                # local disk): left behind, Hadoop would refuse the new content as corrupt.
                target.with_name(f".{target.name}.crc").unlink(missing_ok=True)
            else:
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    raise StorageError(
                        f"{self.uri}/{path} already exists", hint="another writer may be active"
                    ) from None
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def delete(self, path: str, *, recursive: bool = False) -> None:
        target = self._abs(path)
        if target.is_dir() and not target.is_symlink():
            if not recursive:
                raise StorageError(f"{self.uri}/{path} is a folder; refusing a non-recursive delete")
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)

    def rename(self, src: str, dst: str) -> None:
        source, target = self._abs(src), self._abs(dst)
        if target.exists():
            raise StorageError(f"cannot move {src} to {dst}: {dst} exists")
        if not source.exists():
            raise StorageError(f"cannot move {src}: it does not exist")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
