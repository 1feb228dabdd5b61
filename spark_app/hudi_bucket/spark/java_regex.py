"""Bucket rules evaluated by ``java.util.regex`` in Spark's JVM: the engine Hudi's writers use.

Going through py4j costs a round trip per call, but rules are evaluated once per partition, not per row,
and in exchange every pattern means exactly what it means to Hudi (no Java-vs-Python caveats).
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass
from py4j.protocol import Py4JJavaError
from pyspark.errors import IllegalArgumentException

from hudi_bucket.core.rules import adversarial_paths
from hudi_bucket.errors import InvalidRuleError

_SYNTAX_ERROR = "java.util.regex.PatternSyntaxException"
# Our JVM class (spark_app/jvm/) that runs find() with a bound on its steps, where HBO_JVM_JAR loads it.
BOUNDED_FIND_CLASS = "io.hudibucket.spark.BoundedRegexFind"
# Reads of the partition path one find() may make. A rule reads a path of a hundred characters some
# thousands of times; past this bound (tens of milliseconds) the pattern backtracks out of control, and
# Hudi's writers, which evaluate it with no bound, would hang on the partition.
MAX_FIND_STEPS = 4_000_000
# Reads of a generated path (core.rules.adversarial_paths, 256 characters) a pattern may make to be
# admitted. The slowest shapes the static check admits (two unbounded repetitions over the same
# characters: .*.*x, .*a.*x, [^/]*[^/]*x) read one up to 8.6 million times, 10-30 ms once the JIT has
# warmed: a small cost per new partition for Hudi's writers, who evaluate with no bound. Near twice
# that leaves room for other Java versions' matchers and a small bounded part besides (.*.*.?x: 14 million);
# past it, parts overlap in ways the static check cannot count (.*\d?\d?\d?.*x: 67 million). Real paths
# are shorter: the find bound above stops those shapes only on paths of some 200 characters or more.
MAX_GENERATED_PATH_STEPS = 16_000_000
_ONE_WAY_ONLY = (
    "write it so that a path can match it in one way only (no nested or consecutive optional parts "
    "matching the same characters)"
)
# Looked up once per JVM, by id() of its view (some 3 ms of py4j round trips, and the jobs make a matcher
# per partition in places): the view, and BoundedRegexFind.find or None.
_BOUNDED_FINDS: dict[int, tuple[Any, Any]] = {}


class JavaRegexMatcher:
    """A ``Matcher`` over ``java.util.regex.Pattern``, compiling each pattern once.

    ``jvm`` is the py4j view of a running JVM (``spark.sparkContext._jvm``); this class never starts one.
    """

    def __init__(self, jvm: Any) -> None:
        self._jvm = jvm
        self._compiled: dict[str, Any] = {}
        self._within_budget: set[str] = set()

    def compile(self, pattern: str) -> None:
        """Compiles ``pattern``, and refuses it if it takes more than MAX_GENERATED_PATH_STEPS on a path
        made to be slow for it: validation calls this, not ``find``, so tables whose rules Hudi already
        evaluates are still read. Without our jar there is no bound to evaluate with, and only the static
        check applies."""
        compiled = self._pattern(pattern)
        if pattern in self._within_budget or self._bounded_find is None:
            return
        for path in adversarial_paths(pattern):
            if self._bounded_find(compiled, path, MAX_GENERATED_PATH_STEPS) < 0:
                raise InvalidRuleError(
                    f"pattern {pattern!r} takes more than {MAX_GENERATED_PATH_STEPS:,} steps on a generated "
                    f"path of {len(path)} characters ({path[:12]!r} ... {path[-4:]!r}): Hudi's writers, which "
                    f"evaluate it with no bound on every new partition, would hang on such a path; "
                    f"{_ONE_WAY_ONLY}"
                )
        self._within_budget.add(pattern)

    def find(self, pattern: str, text: str) -> bool:
        compiled = self._pattern(pattern)
        if self._bounded_find is None:  # the jar is optional: Java's own find(), without a bound
            return bool(compiled.matcher(text).find())
        found = self._bounded_find(compiled, text, MAX_FIND_STEPS)
        if found < 0:
            raise InvalidRuleError(
                f"pattern {pattern!r} takes more than {MAX_FIND_STEPS:,} steps on partition {text!r}: "
                f"Hudi's writers would hang on it; {_ONE_WAY_ONLY}"
            )
        return bool(found)

    @property
    def _bounded_find(self) -> Any:
        """``BoundedRegexFind.find`` where our JVM classes are on the classpath, else None."""
        known = _BOUNDED_FINDS.get(id(self._jvm))
        if known is None:
            found = self._jvm
            for part in BOUNDED_FIND_CLASS.split("."):
                found = getattr(found, part)
            # py4j names an unknown class a package. The view is kept so that its id() stays its own.
            known = _BOUNDED_FINDS[id(self._jvm)] = (
                self._jvm,
                found.find if isinstance(found, JavaClass) else None,
            )
        return known[1]

    def _pattern(self, pattern: str) -> Any:
        compiled = self._compiled.get(pattern)
        if compiled is None:
            compiled = self._compiled[pattern] = self._compile(pattern)
        return compiled

    def _compile(self, pattern: str) -> Any:
        try:
            return self._jvm.java.util.regex.Pattern.compile(pattern)
        except Py4JJavaError as error:  # a bare py4j gateway, or an error PySpark does not translate
            thrown = error.java_exception
            # Compiling is a function of the pattern alone, so whatever it throws says the pattern is
            # unusable: a syntax error, or e.g. a StackOverflowError (Java 8's, on deep nesting).
            if thrown.getClass().getName() == _SYNTAX_ERROR:
                message = thrown.getMessage()
            else:
                message = thrown.toString()
        except IllegalArgumentException as error:  # PySpark's translation of a syntax error
            message = str(error)
        # Java's message is "<description> near index <n>", then the pattern and a caret on later lines.
        raise InvalidRuleError(f"pattern {pattern!r} does not compile in Java: {message.splitlines()[0]}")
