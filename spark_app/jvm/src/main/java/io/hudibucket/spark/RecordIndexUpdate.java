package io.hudibucket.spark;

import java.lang.reflect.Method;
import org.apache.spark.api.java.function.Function;
import org.apache.spark.sql.Row;

/**
 * The record index entry of one record at its new place, a row (record key, partition path, file id),
 * made by Hudi's own {@code HoodieMetadataPayload.createRecordIndexUpdate}: what Hudi's metadata writer
 * would make of the key after reading it back from the file we wrote. Reflection, since this jar
 * compiles against Spark alone; used only where Hudi's bundle is loaded.
 */
public final class RecordIndexUpdate implements Function<Row, Object> {
  private static final long serialVersionUID = 1L;
  private static final String PAYLOAD = "org.apache.hudi.metadata.HoodieMetadataPayload";

  private final String instant;
  private final int fileIdEncoding;
  private transient Method create;

  public RecordIndexUpdate(String instant, int fileIdEncoding) {
    this.instant = instant;
    this.fileIdEncoding = fileIdEncoding;
  }

  @Override
  public Object call(Row row) throws Exception {
    if (create == null) {
      Class<?> payload = Class.forName(PAYLOAD, true, Thread.currentThread().getContextClassLoader());
      create = payload.getMethod(
          "createRecordIndexUpdate", String.class, String.class, String.class, String.class, int.class);
    }
    return create.invoke(null, row.getString(0), row.getString(1), row.getString(2), instant, fileIdEncoding);
  }
}
