{{/*
Names are fixed, equal to the kustomize install (config/default): the CRD and the ClusterRole are
cluster-wide and a BenchmarkRun's default runner ServiceAccount is inferencebench-runner, so one
release per cluster.
*/}}
{{- define "inferencebench.operatorName" -}}inferencebench-operator{{- end -}}
{{- define "inferencebench.runnerName" -}}inferencebench-runner{{- end -}}

{{- define "inferencebench.selectorLabels" -}}
app.kubernetes.io/name: inferencebench
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/* Labels of every object: call with (dict "ctx" $ "component" "operator"). */}}
{{- define "inferencebench.labels" -}}
{{ include "inferencebench.selectorLabels" . }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{- define "inferencebench.tag" -}}{{ .Values.image.tag | default .Chart.AppVersion }}{{- end -}}
{{- define "inferencebench.operatorImage" -}}{{ printf "%s/%s:%s" .Values.image.registry .Values.image.operator (include "inferencebench.tag" .) }}{{- end -}}
{{- define "inferencebench.runnerImage" -}}{{ printf "%s/%s:%s" .Values.image.registry .Values.image.runner (include "inferencebench.tag" .) }}{{- end -}}

{{/* Namespaces that get runner RBAC: runner.namespaces, else watchNamespaces. */}}
{{- define "inferencebench.runnerNamespaces" -}}
{{- $ns := .Values.runner.namespaces | default .Values.watchNamespaces -}}
{{- toJson (uniq $ns) -}}
{{- end -}}

{{/* The operator's rules: one list for the ClusterRole and the per-namespace Roles. Keep them
equal to config/rbac/role.yaml (ChartInstallIT compares the rendered rules). */}}
{{- define "inferencebench.operatorRules" -}}
# create: a BenchmarkSchedule creates its runs (and deletes them: history, Replace).
- apiGroups: ["inferencebench.io"]
  resources: ["benchmarkruns"]
  verbs: ["get", "list", "watch", "create", "patch", "update", "delete"]
- apiGroups: ["inferencebench.io"]
  resources: ["benchmarkruns/status"]
  verbs: ["get", "patch", "update"]
# Schedules are only read; the operator writes nothing but their status.
- apiGroups: ["inferencebench.io"]
  resources: ["benchmarkschedules"]
  verbs: ["get", "list", "watch"]
- apiGroups: ["inferencebench.io"]
  resources: ["benchmarkschedules/status"]
  verbs: ["get", "patch", "update"]
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: ["batch"]
  resources: ["jobs"]
  verbs: ["get", "list", "watch", "create", "update", "patch", "delete"]
- apiGroups: [""]
  resources: ["services", "persistentvolumeclaims"]
  verbs: ["get"]
# get only: a run fails fast (MissingReference) when its runner ServiceAccount does not exist.
- apiGroups: [""]
  resources: ["serviceaccounts"]
  verbs: ["get"]
# get only, on the Secrets a run names: the API key is checked for existence and key name only;
# spec.metrics.prometheus.bearerTokenSecretRef is read when a stage ends and only sent to that
# Prometheus server. Values are never copied into status, ConfigMaps, Events or logs.
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
# get only: a spec.metrics.port name that the Service does not expose is looked up among the
# container ports of the server pod an EndpointSlice endpoint names; status.environment reads
# the target pods' images, digests, arguments and GPU requests (pods named by the endpoints).
- apiGroups: [""]
  resources: ["pods"]
  verbs: ["get"]
- apiGroups: ["discovery.k8s.io"]
  resources: ["endpointslices"]
  verbs: ["get", "list", "watch"]
- apiGroups: [""]
  resources: ["events"]
  verbs: ["create", "patch"]
- apiGroups: ["events.k8s.io"]
  resources: ["events"]
  verbs: ["create", "patch"]
# get only: status.environment reads the GPU product and count labels of the target pods' nodes.
# Nodes are cluster-scoped, so this takes effect in the ClusterRole only; with watchNamespaces
# (Roles, no cluster-wide rights) the GPU labels are left out of status and profiles.
- apiGroups: [""]
  resources: ["nodes"]
  verbs: ["get"]
{{- end -}}
