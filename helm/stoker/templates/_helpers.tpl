{{/*
Names and labels shared by every template (the conventions of the prometheus-community and
bitnami charts: app.kubernetes.io/* labels, names truncated to 63 characters).
*/}}

{{/* The chart name, or nameOverride. */}}
{{- define "stoker.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The release's base name: fullnameOverride, else the release name when it already contains the
chart name, else RELEASE-CHART. Component names append "-coordinator", "-worker", ...
*/}}
{{- define "stoker.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* name-version, for the helm.sh/chart label. */}}
{{- define "stoker.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels every object gets. Call with (dict "ctx" $ "component" "worker"). */}}
{{- define "stoker.labels" -}}
helm.sh/chart: {{ include "stoker.chart" .ctx }}
{{ include "stoker.selectorLabels" . }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/part-of: stoker
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Labels that select a component's pods (immutable in Deployments and StatefulSets). */}}
{{- define "stoker.selectorLabels" -}}
app.kubernetes.io/name: {{ include "stoker.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{/* The label that lets a pod reach the coordinator and workers through the NetworkPolicy. */}}
{{- define "stoker.clientLabel" -}}
{{ include "stoker.fullname" . }}-client: "true"
{{- end }}

{{/* Name of the coordinator's Service (and StatefulSet). */}}
{{- define "stoker.coordinatorName" -}}
{{- printf "%s-coordinator" (include "stoker.fullname" .) }}
{{- end }}

{{/* host:port of the coordinator inside the namespace. */}}
{{- define "stoker.coordinatorAddress" -}}
{{- printf "%s:%d" (include "stoker.coordinatorName" .) (int .Values.coordinator.port) }}
{{- end }}

{{/* Name of the workers' Deployment. */}}
{{- define "stoker.workerName" -}}
{{- printf "%s-worker" (include "stoker.fullname" .) }}
{{- end }}

{{/* The ServiceAccount pods run as. */}}
{{- define "stoker.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "stoker.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* registry/repository:tag of a component. Call with (dict "ctx" $ "image" .Values.worker.image). */}}
{{- define "stoker.image" -}}
{{- $registry := .ctx.Values.image.registry }}
{{- $tag := default .ctx.Chart.AppVersion .ctx.Values.image.tag }}
{{- if $registry }}
{{- printf "%s/%s:%s" $registry .image.repository $tag }}
{{- else }}
{{- printf "%s:%s" .image.repository $tag }}
{{- end }}
{{- end }}

{{/* Pod-level settings every Stoker pod shares: service account, pull secrets, security. */}}
{{- define "stoker.podCommon" -}}
serviceAccountName: {{ include "stoker.serviceAccountName" . }}
automountServiceAccountToken: {{ .Values.serviceAccount.automountToken }}
{{- with .Values.image.pullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{- /*
TLS (docs/security.md, "Helm"): each pod mounts only its role's certificate and key and the CA
from the Secret tls.secretName (scripts/dev-certs.sh's file names), at /etc/stoker/tls; the
kubelet's Secret updates swap the files, which the processes re-read (rotation). insecure: true
(explicitly) turns all of it off. Called with (dict "ctx" $ "role" "worker").
*/ -}}
{{- define "stoker.tlsDir" -}}/etc/stoker/tls{{- end }}

{{- define "stoker.tlsFlags" -}}
{{- if .ctx.Values.insecure -}}
- --insecure
{{- else -}}
- --tls-cert={{ include "stoker.tlsDir" . }}/{{ .role }}.pem
- --tls-key={{ include "stoker.tlsDir" . }}/{{ .role }}.key
- --tls-ca={{ include "stoker.tlsDir" . }}/ca.pem
- --tls-reload-interval-s={{ .ctx.Values.tls.reloadIntervalSeconds }}
{{- end }}
{{- end }}

{{- /*
--data-root flags (dataRoots, required by values.schema.json): where jobs may read datasets
(docs/security.md, "Data roots").
*/ -}}
{{- define "stoker.dataRootFlags" -}}
{{- range .Values.dataRoots }}
- {{ printf "--data-root=%s" . | quote }}
{{- end }}
{{- end }}

{{- define "stoker.tlsVolumeMount" -}}
{{- if not .ctx.Values.insecure -}}
- name: tls
  mountPath: {{ include "stoker.tlsDir" . }}
  readOnly: true
{{- end }}
{{- end }}

{{- define "stoker.tlsVolume" -}}
{{- if not .ctx.Values.insecure -}}
{{- if not .ctx.Values.tls.secretName -}}
{{- fail "tls.secretName: name the Secret with the certificates (or set insecure: true explicitly)" -}}
{{- end -}}
- name: tls
  secret:
    secretName: {{ .ctx.Values.tls.secretName }}
    items:
      - key: ca.pem
        path: ca.pem
      - key: {{ .role }}.pem
        path: {{ .role }}.pem
      - key: {{ .role }}.key
        path: {{ .role }}.key
{{- end }}
{{- end }}

{{- /*
A health probe of a server on `port`: the kubelet's native gRPC probe with insecure; with TLS an
exec probe, `stoker-ctl health` over mutual TLS with the pod's own certificate (the kubelet
cannot present a client certificate). Called with (dict "ctx" $ "role" ... "port" ...).
*/ -}}
{{- define "stoker.healthProbe" -}}
{{- if .ctx.Values.insecure -}}
grpc:
  port: {{ .port }}
{{- else -}}
exec:
  command:
    - stoker-ctl
    - health
    - --address=127.0.0.1:{{ .port }}
    - --timeout-ms=2000
    {{- include "stoker.tlsFlags" . | nindent 4 }}
timeoutSeconds: 3
{{- end }}
{{- end }}

{{/* The coordinator's prices and KEDA scaler flags (coordinator.prices, coordinator.scaler). */}}
{{- define "stoker.advisorFlags" -}}
{{- $prices := .Values.coordinator.prices -}}
- --gpu-node-dollars-per-hour={{ $prices.gpuNodeDollarsPerHour }}
- --worker-dollars-per-hour={{ $prices.workerDollarsPerHour }}
{{- $pools := list }}
{{- range $pool, $price := $prices.workerPoolDollarsPerHour }}
{{- $pools = append $pools (printf "%s=%v" $pool $price) }}
{{- end }}
{{- if $pools }}
- --worker-pool-dollars-per-hour={{ join "," $pools }}
{{- end }}
- --scaler-hysteresis-workers={{ .Values.coordinator.scaler.hysteresisWorkers }}
- --scaler-cooldown-ms={{ mul .Values.coordinator.scaler.cooldownSeconds 1000 }}
{{- end }}

{{/* "true" when KEDA scales the workers through the coordinator's external scaler. */}}
{{- define "stoker.kedaExternal" -}}
{{- $a := .Values.autoscaling -}}
{{- if and $a.enabled (eq $a.type "keda") (eq $a.keda.trigger "external") }}true{{ end }}
{{- end }}

{{- /*
Replicated coordinators (coordinator.stateBackend: etcd; docs/deploy.md, "Replicated
coordinators"): "true" when the coordinators keep their state in etcd.
*/ -}}
{{- define "stoker.replicated" -}}
{{- if eq .Values.coordinator.stateBackend "etcd" }}true{{ end }}
{{- end }}

{{/* Name of the bundled etcd's StatefulSet and headless Service. */}}
{{- define "stoker.etcdName" -}}
{{- printf "%s-etcd" (include "stoker.fullname" .) }}
{{- end }}

{{/* host:port of every etcd member, comma-separated: the bundled members' stable DNS names, or
etcd.endpoints. */}}
{{- define "stoker.etcdEndpoints" -}}
{{- if eq .Values.etcd.mode "bundled" }}
{{- $name := include "stoker.etcdName" . }}
{{- $members := list }}
{{- range $i := until (int .Values.etcd.replicas) }}
{{- $members = append $members (printf "%s-%d.%s.%s.svc:%d" $name $i $name $.Release.Namespace (int $.Values.etcd.clientPort)) }}
{{- end }}
{{- join "," $members }}
{{- else }}
{{- if not .Values.etcd.endpoints }}
{{- fail "etcd.endpoints: list the external etcd's members (host:port), or set etcd.mode: bundled" }}
{{- end }}
{{- join "," .Values.etcd.endpoints }}
{{- end }}
{{- end }}

{{- define "stoker.etcdTlsDir" -}}/etc/stoker/etcd-tls{{- end }}

{{- /*
A Secret volume named `name` with `keys` projected, failing with the value's name when the
Secret is not named. Called with (dict "name" ... "secret" ... "value" ... "keys" (list ...)).
*/ -}}
{{- define "stoker.secretVolume" -}}
{{- if not .secret -}}
{{- fail (printf "%s.secretName: name the Secret (or set %s.enabled: false)" .value .value) -}}
{{- end -}}
- name: {{ .name }}
  secret:
    secretName: {{ .secret }}
    items:
      {{- range .keys }}
      - key: {{ . }}
        path: {{ . }}
      {{- end }}
{{- end }}

{{- /*
Pod anti-affinity across nodes for a component: required, or preferred (weight 100). Called
with (dict "ctx" $ "component" ... "mode" "required"|"preferred").
*/ -}}
{{- define "stoker.antiAffinity" -}}
podAntiAffinity:
  {{- $term := dict "topologyKey" "kubernetes.io/hostname" "labelSelector" (dict "matchLabels" (include "stoker.selectorLabels" . | fromYaml)) }}
  {{- if eq .mode "required" }}
  requiredDuringSchedulingIgnoredDuringExecution:
    - {{ toYaml $term | nindent 6 | trim }}
  {{- else }}
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        {{- toYaml $term | nindent 8 }}
  {{- end }}
{{- end }}
