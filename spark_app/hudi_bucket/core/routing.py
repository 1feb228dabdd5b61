"""Keys that route each bucket file to a shuffle task of its own (pure: no Spark).

Spark's hash partitioning sends a row to task ``pmod(murmur3(key), tasks)``: with the file's position as
the key, two files land in one task as often as hashes collide (of 12 files in 12 tasks, a task held four
and others none), and on a cluster the task holding most files is the rewrite's wall time. So each file
position gets a key chosen for where Spark's own hash sends it: task ``position % tasks``, every task an
equal share of the files.
"""

from __future__ import annotations

_MASK = 0xFFFFFFFF
SEED = 42  # Spark's Murmur3Hash seed


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (32 - bits))) & _MASK


def murmur3_int(value: int, seed: int = SEED) -> int:
    """Spark's ``hash(int)``: Murmur3 x86 32-bit of one 4-byte int (``Murmur3_x86_32.hashInt``), signed."""
    k1 = (value & _MASK) * 0xCC9E2D51 & _MASK
    k1 = _rotl(k1, 15) * 0x1B873593 & _MASK
    h1 = _rotl(seed & _MASK ^ k1, 13)
    h1 = (h1 * 5 + 0xE6546B64) & _MASK
    h1 ^= 4  # the input's length in bytes
    h1 ^= h1 >> 16
    h1 = h1 * 0x85EBCA6B & _MASK
    h1 ^= h1 >> 13
    h1 = h1 * 0xC2B2AE35 & _MASK
    h1 ^= h1 >> 16
    return h1 - (1 << 32) if h1 >= 1 << 31 else h1


def task_of(key: int, tasks: int) -> int:
    """The task Spark's ``repartition(tasks, key)`` sends an int ``key`` to."""
    return murmur3_int(key) % tasks


def shuffle_width(files: int, tasks: int) -> int:
    """How many tasks a shuffle into ``files`` files runs: a file each, up to ``tasks`` (the session's
    shuffle partitions); past that, two files each at most."""
    return max(1, files if files <= tasks else max(tasks, -(-files // 2)))


def routing_keys(files: int, tasks: int) -> tuple[int, ...]:
    """For each file position, an int key that Spark's hash partitioning over ``tasks`` sends to task
    ``position % tasks``: the first non-negative int hashing there (about ``tasks * ln(tasks)`` tried)."""
    needed = min(files, tasks)
    first: dict[int, int] = {}
    candidate = 0
    while len(first) < needed:
        task = task_of(candidate, tasks)
        if task < needed:
            first.setdefault(task, candidate)
        candidate += 1
    return tuple(first[position % tasks] for position in range(files))
