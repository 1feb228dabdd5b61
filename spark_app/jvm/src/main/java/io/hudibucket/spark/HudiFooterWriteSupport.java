package io.hudibucket.spark;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.HashMap;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.parquet.hadoop.api.WriteSupport;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.execution.datasources.parquet.ParquetWriteSupport;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Spark's Parquet write support, plus the footer entries Apache Hudi's writers put in every base file:
 * the minimum and maximum record key, and a bloom filter of the keys (Hudi's own filter, built through
 * its bundle on the classpath, with the table's bloom settings). Hudi's tools, its bloom index and its
 * metadata table's bloom filters read them from the footer.
 *
 * <p>Keys are compared as UTF-8 bytes and added to the filter as UTF-8 bytes, as Hudi's Spark row
 * writer does. The write's options say what to record: {@link #KEY_COLUMN} names the key column (absent,
 * the entries are not written), {@link #BLOOM_TYPE} the filter (absent, none), with its sizes.
 * {@link DirectFileCommitProtocol} makes this the write support of a write that names a key column.
 */
public class HudiFooterWriteSupport extends ParquetWriteSupport {
  public static final String KEY_COLUMN = "hudibucket.footer.key.column";
  public static final String BLOOM_TYPE = "hudibucket.footer.bloom.type";
  public static final String BLOOM_ENTRIES = "hudibucket.footer.bloom.entries";
  public static final String BLOOM_FPP = "hudibucket.footer.bloom.fpp";
  public static final String BLOOM_MAX_ENTRIES = "hudibucket.footer.bloom.max.entries";

  // Hudi's footer keys (HoodieBloomFilterWriteSupport).
  static final String BLOOM_FILTER_FOOTER = "org.apache.hudi.bloomfilter";
  static final String BLOOM_TYPE_FOOTER = "hoodie_bloom_filter_type_code";
  static final String MIN_KEY_FOOTER = "hoodie_min_record_key";
  static final String MAX_KEY_FOOTER = "hoodie_max_record_key";

  private static final String BLOOM_FACTORY = "org.apache.hudi.common.bloom.BloomFilterFactory";

  private int keyOrdinal = -1;
  private UTF8String minKey;
  private UTF8String maxKey;
  private Object bloom;
  private String bloomType;
  private Method addToBloom;

  @Override
  public WriteSupport.WriteContext init(Configuration conf) {
    WriteSupport.WriteContext context = super.init(conf);
    String keyColumn = conf.get(KEY_COLUMN);
    if (keyColumn != null) {
      StructType schema = (StructType) DataType.fromJson(conf.get(ParquetWriteSupport.SPARK_ROW_SCHEMA()));
      keyOrdinal = schema.fieldIndex(keyColumn);
    }
    bloomType = conf.get(BLOOM_TYPE);
    if (keyOrdinal >= 0 && bloomType != null) {
      bloom = newBloomFilter(conf);
    }
    return context;
  }

  private Object newBloomFilter(Configuration conf) {
    try {
      Class<?> factory = Class.forName(BLOOM_FACTORY, true, Thread.currentThread().getContextClassLoader());
      Method create = factory.getMethod("createBloomFilter", int.class, double.class, int.class, String.class);
      Object filter = create.invoke(
          null,
          conf.getInt(BLOOM_ENTRIES, 60000),
          Double.parseDouble(conf.get(BLOOM_FPP, "0.000000001")),
          conf.getInt(BLOOM_MAX_ENTRIES, 100000),
          bloomType);
      addToBloom = filter.getClass().getMethod("add", byte[].class);
      return filter;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("a " + bloomType + " bloom filter needs Apache Hudi's bundle: " + e, e);
    }
  }

  @Override
  public void write(InternalRow row) {
    super.write(row);
    if (keyOrdinal < 0 || row.isNullAt(keyOrdinal)) {
      return;
    }
    UTF8String key = row.getUTF8String(keyOrdinal);
    if (minKey == null || key.compareTo(minKey) < 0) {
      minKey = key.clone();  // the row's bytes are reused for the next row
    }
    if (maxKey == null || key.compareTo(maxKey) > 0) {
      maxKey = key.clone();
    }
    if (bloom != null) {
      invoke(addToBloom, key.getBytes());
    }
  }

  @Override
  public WriteSupport.FinalizedWriteContext finalizeWrite() {
    Map<String, String> entries = new HashMap<>();
    if (bloom != null) {
      entries.put(BLOOM_FILTER_FOOTER, String.valueOf(invoke(method("serializeToString"))));
      if (bloomType.contains("DYNAMIC")) {
        entries.put(BLOOM_TYPE_FOOTER, bloomType);
      }
    }
    if (minKey != null) {
      entries.put(MIN_KEY_FOOTER, minKey.toString());
      entries.put(MAX_KEY_FOOTER, maxKey.toString());
    }
    return new WriteSupport.FinalizedWriteContext(entries);
  }

  private Method method(String name) {
    try {
      return bloom.getClass().getMethod(name);
    } catch (NoSuchMethodException e) {
      throw new IllegalStateException("Apache Hudi's bloom filter has no " + name + "()", e);
    }
  }

  private Object invoke(Method method, Object... args) {
    try {
      return method.invoke(bloom, args);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException(e);
    } catch (InvocationTargetException e) {
      Throwable cause = e.getCause();
      throw cause instanceof RuntimeException ? (RuntimeException) cause : new IllegalStateException(cause);
    }
  }
}
