{{/*
Labels Helm adds to every object besides manifests/hub's own (the drift check in
tools/charts ignores exactly these).
*/}}
{{- define "flotilla-hub.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* Labels of the hub's own objects (Deployment, Service, ServiceAccount). */}}
{{- define "flotilla-hub.labels" -}}
app.kubernetes.io/name: flotilla-hub
app.kubernetes.io/part-of: flotilla
{{ include "flotilla-hub.helmLabels" . }}
{{- end }}

{{/* Labels of objects shared by the fleet (RBAC). */}}
{{- define "flotilla-hub.partOfLabels" -}}
app.kubernetes.io/part-of: flotilla
{{ include "flotilla-hub.helmLabels" . }}
{{- end }}

{{/* The hub pods' selector; fixed, as in manifests/hub, so that a Deployment
applied from the manifests can be taken over by the chart. */}}
{{- define "flotilla-hub.selectorLabels" -}}
app.kubernetes.io/name: flotilla-hub
{{- end }}

{{/* The hub image. */}}
{{- define "flotilla-hub.image" -}}
{{- if .Values.image.digest }}
{{- .Values.image.repository }}@{{ .Values.image.digest }}
{{- else }}
{{- .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* Whether a value was given: "" and null are not, false and 0 are. */}}
{{- define "flotilla-hub.set" -}}
{{- if and (not (kindIs "invalid" .)) (ne (toString .) "") }}true{{ end }}
{{- end }}
