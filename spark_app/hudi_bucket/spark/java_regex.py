"""Bucket rules evaluated by ``java.util.regex`` in Spark's JVM: the engine Hudi's writers use.

Going through py4j costs a round trip per call, but rules are evaluated once per partition, not per row,
and in exchange every pattern means exactly what it means to Hudi (no Java-vs-Python caveats).
"""

from __future__ import annotations

from typing import Any

from py4j.protocol import Py4JJavaError
from pyspark.errors import IllegalArgumentException

from hudi_bucket.errors import InvalidRuleError

_SYNTAX_ERROR = "java.util.regex.PatternSyntaxException"


class JavaRegexMatcher:
    """A ``Matcher`` over ``java.util.regex.Pattern``, compiling each pattern once.

    ``jvm`` is the py4j view of a running JVM (``spark.sparkContext._jvm``); this class never starts one.
    """

    def __init__(self, jvm: Any) -> None:
        self._jvm = jvm
        self._compiled: dict[str, Any] = {}

    def compile(self, pattern: str) -> None:
        self._pattern(pattern)

    def find(self, pattern: str, text: str) -> bool:
        return bool(self._pattern(pattern).matcher(text).find())

    def _pattern(self, pattern: str) -> Any:
        compiled = self._compiled.get(pattern)
        if compiled is None:
            compiled = self._compiled[pattern] = self._compile(pattern)
        return compiled

    def _compile(self, pattern: str) -> Any:
        try:
            return self._jvm.java.util.regex.Pattern.compile(pattern)
        except Py4JJavaError as error:  # a bare py4j gateway
            if error.java_exception.getClass().getName() != _SYNTAX_ERROR:
                raise
            message = error.java_exception.getMessage()
        except IllegalArgumentException as error:  # PySpark's translation; Pattern.compile throws no other
            message = str(error)
        # Java's message is "<description> near index <n>", then the pattern and a caret on later lines.
        raise InvalidRuleError(f"pattern {pattern!r} does not compile in Java: {message.splitlines()[0]}")
