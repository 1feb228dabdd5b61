{{/* The release's full name: the release name, with the chart name in front unless it holds it. */}}
{{- define "hbo.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "hbo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "hbo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "hbo.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "hbo.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "hbo.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "hbo.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "hbo.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "hbo.image" -}}
{{- include "hbo.imageReference" .Values.image | default (printf "%s:%s" .Values.image.repository .Chart.AppVersion) -}}
{{- end -}}

{{- define "hbo.jobImage" -}}
{{- include "hbo.imageReference" .Values.jobs.image | default (printf "%s:%s" .Values.jobs.image.repository .Chart.AppVersion) -}}
{{- end -}}

{{/* Where the jobs' service account goes (JSON list): as set, else the watched namespaces, else the
release namespace. */}}
{{- define "hbo.jobNamespaces" -}}
{{- $namespaces := .Values.jobs.serviceAccount.namespaces | default .Values.watch.namespaces | default (list .Release.Namespace) -}}
{{- uniq $namespaces | toJson -}}
{{- end -}}

{{/* An image by digest (repository@sha256:...) when one is given, else by tag; empty when neither is
(the callers then take the chart's appVersion as the tag). */}}
{{- define "hbo.imageReference" -}}
{{- if .digest -}}
{{- printf "%s@%s" .repository .digest -}}
{{- else if .tag -}}
{{- printf "%s:%s" .repository .tag -}}
{{- end -}}
{{- end -}}

{{/* The leader election's Lease: leaderElection.leaseName, else the release's full name. */}}
{{- define "hbo.leaseName" -}}
{{- .Values.leaderElection.leaseName | default (include "hbo.fullname" .) -}}
{{- end }}
