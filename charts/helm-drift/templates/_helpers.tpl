{{/* The release's full name, at most 63 characters. */}}
{{- define "helm-drift.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Cluster-wide objects carry the namespace too: two installs in two namespaces do not clash. */}}
{{- define "helm-drift.clusterName" -}}
{{- printf "%s-%s" (include "helm-drift.fullname" .) .Release.Namespace | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "helm-drift.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "helm-drift.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "helm-drift.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "helm-drift.labels" -}}
{{ include "helm-drift.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* Whether the cluster serves the Prometheus Operator's kinds. */}}
{{- define "helm-drift.prometheusOperator" -}}
{{- if .Capabilities.APIVersions.Has "monitoring.coreos.com/v1" -}}true{{- end -}}
{{- end -}}

{{/* The Secret holding the key of drift signatures. */}}
{{- define "helm-drift.signatureKey" -}}
{{- default (printf "%s-signature-key" (include "helm-drift.fullname" .)) .Values.signatureKey.secretName }}
{{- end }}

{{/* The namespace of a fleet's inventory: clusters.namespace, Argo CD's own (argocd) by default;
Cluster API's must be named. "*" reads every namespace (a ClusterRole that reads every Secret). */}}
{{- define "helm-drift.inventoryNamespace" -}}
{{- $ns := .Values.clusters.namespace | default (ternary "argocd" "" (eq .Values.clusters.source "argocd")) -}}
{{- if not $ns -}}
{{- fail "clusters.namespace: name the namespace of the Cluster API Clusters and their kubeconfig Secrets (\"*\" reads every namespace's Secrets)" -}}
{{- end -}}
{{- $ns -}}
{{- end }}

{{/* The namespaces whose records are trusted: trustNamespaces and the deprecated repair.trustNamespaces. */}}
{{- define "helm-drift.trustNamespaces" -}}
{{- concat (.Values.trustNamespaces | default list) (.Values.repair.trustNamespaces | default list) | uniq | toJson -}}
{{- end }}

{{/* "true" when the watcher itself may write: repair on, no impersonation, trusted namespaces named. */}}
{{- define "helm-drift.writesItself" -}}
{{- if and .Values.repair.enabled (not .Values.repair.serviceAccount) (include "helm-drift.trustNamespaces" . | fromJsonArray) -}}
true
{{- end -}}
{{- end }}
