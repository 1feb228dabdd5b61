package io.hudibucket.spark;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.mapreduce.JobContext;
import org.apache.hadoop.mapreduce.TaskAttemptContext;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.spark.TaskContext;
import org.apache.spark.internal.io.FileCommitProtocol;
import org.apache.spark.internal.io.FileNameSpec;

import scala.Option;
import scala.collection.JavaConverters;
import scala.collection.Seq;

/**
 * A Spark commit protocol that writes each file at its final name: no temporary folder, no rename
 * (on an object store a rename copies every byte).
 *
 * <p>The write's {@link #FILES} option lists every file it may create, by path relative to the output
 * root, and the DataFrame is written with {@code partitionBy} of one int column: each row's index in
 * that list. Spark hands the index to {@link #newTaskTempFile} as a partition folder ({@code col=17}),
 * and the file is created at {@code <root>/<path>}. An int, not the path itself: Spark's partitioned
 * writer copies the partition value out of every row it writes, and an int needs no escaping. Files stay
 * invisible to Hudi's readers until the caller's instant completes; a failed write leaves them to the
 * caller's rollback, which deletes the instant's files by name.
 *
 * <p>What a staging folder showed for free is checked instead: two tasks writing one path (a bucket
 * whose rows reached two tasks) fail the job, as the second file would otherwise replace the first.
 * The later task's create fails when the earlier one's file is there already (Parquet's writer never
 * overwrites), and tasks that both created it fail {@link #commitJob} with
 * {@link DuplicateFileException}. Where creating does not see another writer (an object store makes a
 * file visible only when it is closed), the later close replaces the earlier file, possibly while a
 * task reads its footer back: a footer that cannot be read is reported to {@link #commitJob} rather
 * than failing the task, so that two writers are named as such.
 *
 * <p>Each task reads back the footer of each file it wrote, and {@link #commitJob} publishes every
 * file's size and rows under the write's {@link #WRITE_ID} option, for {@link #takeWritten}: no
 * listing and no second Spark job to find them.
 *
 * <p>Write in append mode only: Spark's overwrite mode deletes the output root before writing.
 */
public final class DirectFileCommitProtocol extends FileCommitProtocol implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final int NAMED_IN_MESSAGE = 5;

  /** The write option naming one write, under which {@link #commitJob} publishes its files. */
  public static final String WRITE_ID = "hudibucket.direct.write.id";

  /**
   * The write option listing every file the write may create, a JSON array of paths relative to the
   * output root; the column the write is partitioned by holds each row's index in it.
   */
  public static final String FILES = "hudibucket.direct.write.files";

  private static final String WRITE_SUPPORT_CLASS = "parquet.write.support.class";

  private static final Map<String, byte[]> PUBLISHED = new ConcurrentHashMap<>();

  private final String root;
  // The files one task attempt created, each path relative to the root and absolute: set on the
  // executor's copy in setupTask.
  private transient Map<String, String> written;
  private transient String[] files;

  public DirectFileCommitProtocol(String jobId, String path, boolean dynamicPartitionOverwrite) {
    if (dynamicPartitionOverwrite) {
      throw new IllegalArgumentException(
          "DirectFileCommitProtocol writes final files in append mode; dynamic partition overwrite would"
              + " delete them");
    }
    this.root = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
  }

  /** Raised by {@link #commitJob} when two tasks wrote the same file. */
  public static final class DuplicateFileException extends IllegalStateException {
    private static final long serialVersionUID = 1L;

    DuplicateFileException(String message) {
      super(message);
    }
  }

  @Override
  public void setupJob(JobContext jobContext) {}

  @Override
  public void setupTask(TaskAttemptContext taskContext) {
    written = new LinkedHashMap<>();
    String listed = taskContext.getConfiguration().get(FILES);
    if (listed == null) {
      throw new IllegalArgumentException("DirectFileCommitProtocol needs the write option " + FILES);
    }
    try {
      files = new ObjectMapper().readValue(listed, String[].class);
    } catch (IOException e) {
      throw new IllegalArgumentException("the write option " + FILES + " is not a JSON array of paths", e);
    }
    // Spark's Parquet format names its own write support for every write; the files of a write that
    // names its key column get Hudi's footer entries too. This task's writers read this configuration.
    Configuration conf = taskContext.getConfiguration();
    if (conf.get(HudiFooterWriteSupport.KEY_COLUMN) != null) {
      conf.set(WRITE_SUPPORT_CLASS, HudiFooterWriteSupport.class.getName());
    }
  }

  // Spark 3.5 calls the FileNameSpec overloads; the String ones are the abstract originals. The name
  // Spark would give (prefix, extension) is ignored either way: the column's value is the whole name.
  @Override
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, FileNameSpec spec) {
    return finalFile(taskContext, dir);
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFile(TaskAttemptContext taskContext, Option<String> dir, String ext) {
    return finalFile(taskContext, dir);
  }

  @Override
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, FileNameSpec spec) {
    throw new UnsupportedOperationException("DirectFileCommitProtocol writes below its output root only");
  }

  @Override
  @SuppressWarnings("deprecation")
  public String newTaskTempFileAbsPath(TaskAttemptContext taskContext, String absoluteDir, String ext) {
    throw new UnsupportedOperationException("DirectFileCommitProtocol writes below its output root only");
  }

  private String finalFile(TaskAttemptContext taskContext, Option<String> dir) {
    String relative = listedFile(dir);
    String file = root + "/" + relative;
    if (isRetry()) {
      // An earlier attempt of this task may have died leaving the file behind; Parquet's writer
      // refuses to create over it.
      delete(taskContext, file);
    }
    written.put(relative, file);
    return file;
  }

  private String listedFile(Option<String> dir) {
    String fragment = dir.isEmpty() ? "" : dir.get();
    try {
      int index = Integer.parseInt(fragment.substring(fragment.indexOf('=') + 1));
      if (fragment.indexOf('/') < 0 && index >= 0 && index < files.length) {
        return files[index];
      }
    } catch (NumberFormatException e) {
      // said below
    }
    throw new IllegalArgumentException(
        "DirectFileCommitProtocol needs partitionBy of exactly one int column holding each row's index in "
            + FILES + " (" + files.length + " files); got folder " + dir);
  }

  /** Reads back each file's size and rows (its footer): in the tasks, in parallel, once closed. */
  @Override
  public FileCommitProtocol.TaskCommitMessage commitTask(TaskAttemptContext taskContext) {
    Configuration conf = taskContext.getConfiguration();
    List<WrittenFile> files = new ArrayList<>();
    for (Map.Entry<String, String> file : written.entrySet()) {
      files.add(WrittenFile.read(file.getKey(), new Path(file.getValue()), conf));
    }
    return new FileCommitProtocol.TaskCommitMessage(files.toArray(new WrittenFile[0]));
  }

  /**
   * One file a task wrote: its path relative to the output root, its size in bytes and its rows; or,
   * when its footer could not be read back, why not (size and rows are then -1).
   */
  public static final class WrittenFile implements Serializable {
    private static final long serialVersionUID = 1L;

    final String path;
    final long size;
    final long rows;
    final String unreadable;

    public WrittenFile(String path, long size, long rows, String unreadable) {
      this.path = path;
      this.size = size;
      this.rows = rows;
      this.unreadable = unreadable;
    }

    static WrittenFile read(String relative, Path file, Configuration conf) {
      try {
        HadoopInputFile input = HadoopInputFile.fromPath(file, conf);
        try (ParquetFileReader reader = ParquetFileReader.open(input)) {
          return new WrittenFile(relative, input.getLength(), reader.getRecordCount(), null);
        }
      } catch (IOException | RuntimeException e) {
        // Parquet says "not a Parquet file" (a RuntimeException) when the tail it reads is another
        // writer's bytes.
        return new WrittenFile(relative, -1, -1, "reading back the footer of " + file + ": " + e);
      }
    }
  }

  /**
   * Every file of the write named {@code writeId} (its {@link #WRITE_ID} option), once: for each, the
   * path's UTF-8 bytes (after their length, an int), then its size and rows (longs), all big-endian
   * as DataOutputStream writes them, after the count of files (an int). Null when no such write
   * committed.
   */
  public static byte[] takeWritten(String writeId) {
    return PUBLISHED.remove(writeId);
  }

  /**
   * Deletes the files this attempt created, all but the one it was creating when it failed: that
   * create may have been refused because another task's file is there (a bucket reaching two tasks),
   * and that file is not ours to delete. What is left is the caller's to roll back, or a retry's to
   * replace.
   */
  @Override
  public void abortTask(TaskAttemptContext taskContext) {
    if (written == null) {
      return;
    }
    List<String> files = new ArrayList<>(written.values());
    for (String file : files.subList(0, Math.max(0, files.size() - 1))) {
      delete(taskContext, file);
    }
  }

  @Override
  public void commitJob(JobContext jobContext, Seq<FileCommitProtocol.TaskCommitMessage> taskCommits) {
    Map<String, Integer> writers = new LinkedHashMap<>();
    List<WrittenFile> files = new ArrayList<>();
    for (FileCommitProtocol.TaskCommitMessage message : JavaConverters.seqAsJavaList(taskCommits)) {
      for (WrittenFile file : (WrittenFile[]) message.obj()) {
        writers.merge(file.path, 1, Integer::sum);
        files.add(file);
      }
    }
    TreeSet<String> twice = new TreeSet<>();
    writers.forEach((file, count) -> {
      if (count > 1) {
        twice.add(file);
      }
    });
    if (!twice.isEmpty()) {
      List<String> named = new ArrayList<>(twice).subList(0, Math.min(NAMED_IN_MESSAGE, twice.size()));
      throw new DuplicateFileException(
          twice.size() + " file(s) written by more than one task: " + String.join(", ", named));
    }
    for (WrittenFile file : files) {
      if (file.unreadable != null) {
        throw new UncheckedIOException(new IOException(file.unreadable));
      }
    }
    String writeId = jobContext.getConfiguration().get(WRITE_ID);
    if (writeId != null) {
      PUBLISHED.put(writeId, render(files));
    }
  }

  private static byte[] render(List<WrittenFile> files) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(files.size());
      for (WrittenFile file : files) {
        byte[] path = file.path.getBytes(StandardCharsets.UTF_8);
        out.writeInt(path.length);
        out.write(path);
        out.writeLong(file.size);
        out.writeLong(file.rows);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);  // a ByteArrayOutputStream does not fail
    }
    return bytes.toByteArray();
  }

  /** Nothing to undo here: the caller rolls its instant back, deleting the files by name. */
  @Override
  public void abortJob(JobContext jobContext) {}

  private static boolean isRetry() {
    TaskContext task = TaskContext.get();
    return task != null && (task.attemptNumber() > 0 || task.stageAttemptNumber() > 0);
  }

  private static void delete(TaskAttemptContext taskContext, String file) {
    Path path = new Path(file);
    try {
      path.getFileSystem(taskContext.getConfiguration()).delete(path, false);
    } catch (IOException e) {
      // Best effort: what is left belongs to the pending instant, which the caller rolls back.
    }
  }
}
