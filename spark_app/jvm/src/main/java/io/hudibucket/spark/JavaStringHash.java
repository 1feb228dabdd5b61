package io.hudibucket.spark;

import org.apache.spark.sql.api.java.UDF1;

/**
 * Java's own {@code String.hashCode} of a string, as a SQL function: the hash Hudi's bucket index
 * takes of a record key held whole. Spark compiles a call of it into a stage's generated code, where
 * its built-in {@code reflect} is interpreted: that splits the stage's code in two (a copy of every
 * row) and returns the number as a string to be parsed back.
 */
public final class JavaStringHash implements UDF1<String, Integer> {
  private static final long serialVersionUID = 1L;

  @Override
  public Integer call(String value) {
    return value == null ? null : value.hashCode();
  }
}
