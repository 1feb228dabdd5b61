"""Shared test fixtures: real Hudi tables (from ../shared, and written by Hudi in the tests) and one local
SparkSession per run. What a test needs is marked from the fixtures it uses: ``--unit`` keeps the tests
that need no JVM, S3 server or control plane, and without ../shared the tests that need it are skipped,
saying so."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from lib.hudi_tables import HudiBucketTables
from lib.paths import SHARED_FOUND, SHARED_MISSING, hudi_bundle, jvm_jar, s3a_jars, unzip_table
from lib.shown import SHOWN
from lib.written_tables import WrittenTables

if TYPE_CHECKING:
    from object_store.server import S3Server

    from registry.server import Registry

# Property tests check what holds, not how fast: an example's deadline measures the machine's load (one
# took 302 ms against Hypothesis's 200 ms default on a CI machine running two suites).
settings.register_profile("hudi-bucket-operator", deadline=None)
settings.load_profile("hudi-bucket-operator")

# Operator tests resync fast (read when the handlers module is imported).
os.environ.setdefault("HBO_RESYNC_SECONDS", "0.3")
os.environ.setdefault("HBO_METRICS_PORT", "0")

# What a test needs follows from the fixtures it uses, directly or through other fixtures: a JVM (the
# fixtures of the JVM, S3 and the tables Hudi writes all build on ``spark``), ../shared, or a server built
# from source (the S3 server, the control plane).
JVM_FIXTURES = frozenset({"spark"})
SHARED_FIXTURES = frozenset({"fixture_table"})
NOT_UNIT_FIXTURES = JVM_FIXTURES | {"s3_server", "control_plane"}
NOT_UNIT_MARKERS = ("spark", "e2e", "images", "node")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--unit",
        action="store_true",
        help="run only the tests that need no JVM, S3 server or control plane (`./dev test --unit`)",
    )


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    # What the cluster scenarios showed (lib.shown), for the log's reader.
    for title, text in SHOWN.items():
        terminalreporter.write_sep("-", title)
        terminalreporter.write_line(text)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("unit"):
        config.pluginmanager.register(UnitSelection(), "unit-selection")


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = set(item.fixturenames)  # type: ignore[attr-defined]
        if used & JVM_FIXTURES:
            item.add_marker(pytest.mark.spark)
        if used & SHARED_FIXTURES:
            item.add_marker(pytest.mark.shared)


class UnitSelection:
    """``--unit``: deselects every test that needs more than Python, once all conftests marked theirs."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        heavy = [item for item in items if needs_more_than_python(item)]
        if heavy:
            config.hook.pytest_deselected(items=heavy)
            items[:] = [item for item in items if not needs_more_than_python(item)]


def needs_more_than_python(item: pytest.Item) -> bool:
    used = set(item.fixturenames)  # type: ignore[attr-defined]
    return bool(used & NOT_UNIT_FIXTURES) or any(item.get_closest_marker(m) for m in NOT_UNIT_MARKERS)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Without ../shared a test that needs it is skipped before any of its fixtures is set up, always from
    here with one reason: pytest's summary then says it in one line, with the count."""
    if not SHARED_FOUND and item.get_closest_marker("shared"):
        pytest.skip(SHARED_MISSING)


@pytest.fixture
def fixture_table(tmp_path: Path) -> Callable[[str], Path]:
    """Returns a function that unzips a table of ../shared into this test's temp folder."""
    counter = iter(range(1000))

    def make(name: str) -> Path:
        return unzip_table(name, tmp_path / f"{name}-{next(counter)}")

    return make


@pytest.fixture(scope="session")
def written_tables(spark: Any) -> WrittenTables:
    """The tables Apache Hudi writes in the tests (written_tables.TABLES), cached per Hudi bundle."""
    return WrittenTables(spark, hudi_bundle())


@pytest.fixture(scope="session")
def hudi_tables(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> HudiBucketTables:
    """The bucket tables Hudi writes and upserts (hudi_tables.HudiBucketTables), written once per run."""
    return HudiBucketTables(spark, tmp_path_factory.mktemp("hudi-tables"))


@pytest.fixture
def written_table(written_tables: WrittenTables, tmp_path: Path) -> Callable[[str], Path]:
    """Returns a function that copies a table Hudi wrote (written_tables.TABLES) into this test's temp
    folder."""
    counter = iter(range(1000))

    def make(name: str) -> Path:
        return written_tables.copy(name, tmp_path / f"{name}-{next(counter)}")

    return make


@pytest.fixture(scope="session")
def spark() -> Iterator[object]:
    """One local SparkSession for the whole run (starting a JVM is the slowest thing we do)."""
    from pyspark.sql import SparkSession

    from hudi_bucket.contract.requests import HUDI_BUNDLE_ENV, JVM_JAR_ENV
    from hudi_bucket.spark.session import configure, hudi_conf, job_jars, use_this_python_for_workers

    use_this_python_for_workers()
    environ = {HUDI_BUNDLE_ENV: str(hudi_bundle()), JVM_JAR_ENV: str(jvm_jar())}
    jars = [*job_jars(environ), *map(str, s3a_jars())]
    session = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-bucket-operator-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.default.parallelism", "4")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
        # Apache Hudi and our JVM classes in the same session, as a job's session has them (see
        # spark.session): the interop tests' writer and reader, the Hudi engine, and bucket files written
        # at their final names. Hudi's SQL rules act only on Hudi relations. And S3A for the object-store
        # tests (tests/object_store): jars load lazily, so a run that never opens an s3a:// path pays
        # nothing for them.
        .config(map={**hudi_conf(environ), "spark.jars": ",".join(jars)})
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield configure(session)
    session.stop()


@pytest.fixture(autouse=True)
def spark_settings_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test that uses the shared session leaves its SQL settings as it found them, whatever it ran
    (Hudi's bootstrap, for one, turns partition type inference off for good): no test depends on the
    ones that ran before it."""
    if "spark" not in request.fixturenames:
        yield
        return
    session: Any = request.getfixturevalue("spark")

    def settings() -> dict[str, str]:  # SET names them; conf.get gives the values SET would redact
        return {row[0]: session.conf.get(row[0], None) for row in session.sql("SET").collect()}

    before = settings()
    yield
    after = settings()
    for key in after.keys() - before.keys():
        session.conf.unset(key)
    for key, value in before.items():
        if after.get(key) != value and session.conf.isModifiable(key):
            session.conf.set(key, value)


@pytest.fixture(scope="session")
def jvm(spark: object) -> object:
    """The py4j gateway into Spark's JVM: the oracle for Java semantics (hashing, regex)."""
    return spark.sparkContext._jvm  # type: ignore[attr-defined]


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """A real S3-compatible server on loopback with one bucket, started on first use (tests/object_store)."""
    from object_store.server import S3Server, ensure_binary

    server = S3Server(ensure_binary())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def registry() -> Iterator[Registry]:
    """A real OCI registry on loopback (tests/registry), started on first use: the releases are pushed
    there, and the test node pulls from it."""
    from registry.server import Registry, ensure_crane

    started = Registry(ensure_crane())
    started.start()
    try:
        yield started
    finally:
        started.stop()


@pytest.fixture(scope="session")
def s3(spark: Any, s3_server: S3Server) -> S3Server:
    """The server, with the shared session's Hadoop configuration pointed at it (S3A reads it when it
    first opens the bucket, and caches that FileSystem for the rest of the run)."""
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    for key, value in s3_server.hadoop_conf().items():
        conf.set(key, value)
    return s3_server


@pytest.fixture
def s3_prefix(s3: S3Server, request: pytest.FixtureRequest) -> str:
    """A key prefix no other test uses, named after the test."""
    return s3.fresh_prefix(request.node.name.split("[")[0].removeprefix("test_"))
