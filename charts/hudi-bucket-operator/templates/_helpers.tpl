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
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "hbo.jobImage" -}}
{{- printf "%s:%s" .Values.jobs.image.repository (default .Chart.AppVersion .Values.jobs.image.tag) -}}
{{- end -}}

{{/* Where the jobs' service account goes (JSON list): as set, else the watched namespaces, else the
release namespace. */}}
{{- define "hbo.jobNamespaces" -}}
{{- $namespaces := .Values.jobs.serviceAccount.namespaces | default .Values.watch.namespaces | default (list .Release.Namespace) -}}
{{- uniq $namespaces | toJson -}}
{{- end -}}
