#!/bin/bash
# The job image's entrypoint (Dockerfile.job), under tini. Spark on Kubernetes (spark-submit's
# Kubernetes backend, which the Kubeflow Spark Operator runs) starts the driver's container with
# `driver SPARK-SUBMIT-ARGS...` and each executor's with `executor`, the executor's settings in the pod's
# SPARK_* variables. Any other command runs as given.
set -euo pipefail

# What the backend mounts at SPARK_CONF_DIR (spark.properties, log4j2 settings) goes first on the
# classpath, then Spark's jars (ours, Hudi's bundle and S3A's among them), then what the pod adds.
classpath() {
  local cp="${SPARK_HOME}/jars/*"
  [ -n "${SPARK_CONF_DIR:-}" ] && cp="${SPARK_CONF_DIR}:${cp}"
  [ -n "${HADOOP_CONF_DIR:-}" ] && cp="${HADOOP_CONF_DIR}:${cp}"
  [ -n "${SPARK_CLASSPATH:-}" ] && cp="${cp}:${SPARK_CLASSPATH}"
  echo "$cp"
}

case "${1:-}" in
  driver)
    shift
    # The driver runs in this container: client mode, listening on the pod's address.
    bind=()
    [ -n "${SPARK_DRIVER_BIND_ADDRESS:-}" ] && bind=(--conf "spark.driver.bindAddress=${SPARK_DRIVER_BIND_ADDRESS}")
    exec "${SPARK_HOME}/bin/spark-submit" "${bind[@]}" --deploy-mode client "$@"
    ;;
  executor)
    shift
    # The executor's JVM options come as SPARK_JAVA_OPT_0, SPARK_JAVA_OPT_1, ... in that order.
    options=()
    while read -r name; do
      options+=("${!name}")
    done < <(compgen -e | grep '^SPARK_JAVA_OPT_[0-9]*$' | sort -t_ -k4 -n)
    exec java "${options[@]}" \
      "-Xms${SPARK_EXECUTOR_MEMORY}" "-Xmx${SPARK_EXECUTOR_MEMORY}" \
      -cp "$(classpath)" \
      org.apache.spark.scheduler.cluster.k8s.KubernetesExecutorBackend \
      --driver-url "${SPARK_DRIVER_URL}" \
      --executor-id "${SPARK_EXECUTOR_ID}" \
      --cores "${SPARK_EXECUTOR_CORES}" \
      --app-id "${SPARK_APPLICATION_ID}" \
      --hostname "${SPARK_EXECUTOR_POD_IP}" \
      --resourceProfileId "${SPARK_RESOURCE_PROFILE_ID:-0}" \
      --podName "${SPARK_EXECUTOR_POD_NAME}"
    ;;
  *)
    exec "$@"
    ;;
esac
