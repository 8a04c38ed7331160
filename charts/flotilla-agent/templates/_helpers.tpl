{{/*
Labels Helm adds to every object besides manifests/agent's own (the drift check in
tools/charts ignores exactly these).
*/}}
{{- define "flotilla-agent.helmLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end }}

{{/* Labels of the agent's own objects (Deployment, ServiceAccount). */}}
{{- define "flotilla-agent.labels" -}}
app.kubernetes.io/name: flotilla-agent
app.kubernetes.io/part-of: flotilla
{{ include "flotilla-agent.helmLabels" . }}
{{- end }}

{{/* Labels of objects shared by the fleet (RBAC). */}}
{{- define "flotilla-agent.partOfLabels" -}}
app.kubernetes.io/part-of: flotilla
{{ include "flotilla-agent.helmLabels" . }}
{{- end }}

{{/* The agent pod's selector; fixed, as in manifests/agent, so that a Deployment
applied from the manifests can be taken over by the chart. */}}
{{- define "flotilla-agent.selectorLabels" -}}
app.kubernetes.io/name: flotilla-agent
{{- end }}

{{/* The agent image. */}}
{{- define "flotilla-agent.image" -}}
{{- if .Values.image.digest }}
{{- .Values.image.repository }}@{{ .Values.image.digest }}
{{- else }}
{{- .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}
{{- end }}

{{/* Whether a value was given: "" and null are not, false and 0 are. */}}
{{- define "flotilla-agent.set" -}}
{{- if and (not (kindIs "invalid" .)) (ne (toString .) "") }}true{{ end }}
{{- end }}

{{/* Fails on values the agent cannot run with. */}}
{{- define "flotilla-agent.validate" -}}
{{- if ne .Release.Namespace "flotilla-system" }}
{{- fail (printf "install the agent in namespace flotilla-system (helm --namespace flotilla-system), not %q: `agent join` stores the agent's identity there" .Release.Namespace) }}
{{- end }}
{{- if not (has .Values.rbacProfile (list "full" "least-privilege")) }}
{{- fail (printf "rbacProfile %q is not full or least-privilege" .Values.rbacProfile) }}
{{- end }}
{{- if gt (int .Values.replicas) 1 }}
{{- fail (printf "replicas %v: one agent per member holds its tunnel to the hub; use 1 (or 0 to stop it)" .Values.replicas) }}
{{- end }}
{{- end }}
