{{- /*
The coordinator's pod template, shared by the journal's StatefulSet (one replica, its journal on
a claim) and etcd's Deployment (replicas leading and standing by; docs/deploy.md, "Replicated
coordinators"). With etcd a standby answers grpc.health.v1 NOT_SERVING, so the readiness probe
(health) routes the Service to the leader only, while liveness and startup ask the metrics page
(or, without one, the gRPC port), which a standby answers too: they never restart a standby
for standing by.
*/ -}}
{{- define "stoker.coordinatorPodTemplate" -}}
{{- $c := .Values.coordinator -}}
{{- $replicated := include "stoker.replicated" . -}}
{{- $tenants := or $c.tenants $c.tenantDefaults -}}
{{- $etcdTls := and $replicated .Values.etcd.clientTls.enabled -}}
metadata:
  labels:
    {{- include "stoker.labels" (dict "ctx" $ "component" "coordinator") | nindent 4 }}
  {{- with $c.podAnnotations }}
  annotations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
spec:
  {{- include "stoker.podCommon" . | nindent 2 }}
  terminationGracePeriodSeconds: {{ $c.terminationGracePeriodSeconds }}
  {{- with $c.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with $c.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- if $c.affinity }}
  affinity:
    {{- toYaml $c.affinity | nindent 4 }}
  {{- else if $replicated }}
  affinity:
    {{- include "stoker.antiAffinity" (dict "ctx" $ "component" "coordinator" "mode" $c.antiAffinity) | nindent 4 }}
  {{- end }}
  containers:
    - name: coordinator
      image: {{ include "stoker.image" (dict "ctx" $ "image" $c.image) }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      command: ["stoker-coordinator"]
      args:
        - --listen=0.0.0.0:{{ $c.port }}
        {{- if $replicated }}
        - --state=etcd://{{ include "stoker.etcdEndpoints" . }}{{ .Values.etcd.prefix }}
        - --leader-lease-ttl-ms={{ mul $c.leaderLeaseTtlSeconds 1000 }}
        - --advertise-address=$(POD_IP):{{ $c.port }}
        {{- if $etcdTls }}
        - --etcd-ca={{ include "stoker.etcdTlsDir" . }}/ca.pem
        - --etcd-cert={{ include "stoker.etcdTlsDir" . }}/client.pem
        - --etcd-key={{ include "stoker.etcdTlsDir" . }}/client.key
        {{- end }}
        {{- else if $c.journal.enabled }}
        - --journal=/var/lib/stoker/journal
        {{- end }}
        - --heartbeat-interval-ms={{ $c.heartbeatIntervalMs }}
        - --worker-timeout-ms={{ $c.workerTimeoutMs }}
        - --lease-duration-ms={{ $c.leaseDurationMs }}
        - --max-tasks-per-lease={{ $c.maxTasksPerLease }}
        {{- include "stoker.advisorFlags" . | nindent 8 }}
        {{- if $c.metricsPort }}
        - --metrics-address=0.0.0.0
        - --metrics-port={{ $c.metricsPort }}
        {{- end }}
        - --log-format={{ .Values.logFormat }}
        {{- if $tenants }}
        - --tenant-policy=/etc/stoker/tenants/policy.json
        {{- end }}
        {{- include "stoker.tlsFlags" (dict "ctx" $ "role" "coordinator") | nindent 8 }}
        {{- include "stoker.dataRootFlags" . | trim | nindent 8 }}
        {{- with $c.extraArgs }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- if or $replicated $c.extraEnv }}
      env:
        {{- if $replicated }}
        # The address other replicas name to clients when this one leads.
        - name: POD_IP
          valueFrom:
            fieldRef:
              fieldPath: status.podIP
        {{- end }}
        {{- with $c.extraEnv }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
      ports:
        - name: grpc
          containerPort: {{ $c.port }}
          protocol: TCP
        {{- if $c.metricsPort }}
        - name: metrics
          containerPort: {{ $c.metricsPort }}
          protocol: TCP
        {{- end }}
      # grpc.health.v1: SERVING once the journal is replayed, or while leading
      # (stoker.healthProbe: native gRPC probes with insecure, else stoker-ctl health over TLS).
      readinessProbe:
        {{- include "stoker.healthProbe" (dict "ctx" $ "role" "coordinator" "port" $c.port) | nindent 8 }}
        periodSeconds: {{ if $replicated }}2{{ else }}5{{ end }}
        failureThreshold: 2
      {{- $alive := include "stoker.healthProbe" (dict "ctx" $ "role" "coordinator" "port" $c.port) }}
      {{- if $replicated }}
      {{- if $c.metricsPort }}
      {{- $alive = printf "httpGet:\n  path: /metrics\n  port: metrics" }}
      {{- else }}
      {{- $alive = printf "tcpSocket:\n  port: grpc" }}
      {{- end }}
      {{- end }}
      livenessProbe:
        {{- $alive | nindent 8 }}
        periodSeconds: 10
        failureThreshold: 6
      startupProbe:
        {{- $alive | nindent 8 }}
        periodSeconds: 2
        failureThreshold: 150
      resources:
        {{- toYaml $c.resources | nindent 8 }}
      securityContext:
        {{- toYaml .Values.containerSecurityContext | nindent 8 }}
      {{- $mounts := or (not $replicated) $tenants (not .Values.insecure) $etcdTls $c.extraVolumeMounts }}
      {{- if $mounts }}
      volumeMounts:
        {{- if not $replicated }}
        - name: journal
          mountPath: /var/lib/stoker
        {{- end }}
        {{- if $tenants }}
        - name: tenants
          mountPath: /etc/stoker/tenants
          readOnly: true
        {{- end }}
        {{- include "stoker.tlsVolumeMount" (dict "ctx" $) | nindent 8 }}
        {{- if $etcdTls }}
        - name: etcd-tls
          mountPath: {{ include "stoker.etcdTlsDir" . }}
          readOnly: true
        {{- end }}
        {{- with $c.extraVolumeMounts }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      {{- end }}
  {{- if or (and (not $replicated) (not $c.journal.enabled)) $c.extraVolumes (not .Values.insecure) $tenants $etcdTls }}
  volumes:
    {{- include "stoker.tlsVolume" (dict "ctx" $ "role" "coordinator") | nindent 4 }}
    {{- if $tenants }}
    - name: tenants
      configMap:
        name: {{ include "stoker.fullname" . }}-tenants
    {{- end }}
    {{- if $etcdTls }}
    {{- include "stoker.secretVolume" (dict "name" "etcd-tls" "secret" .Values.etcd.clientTls.secretName "value" "etcd.clientTls" "keys" (list "ca.pem" "client.pem" "client.key")) | nindent 4 }}
    {{- end }}
    {{- if and (not $replicated) (not $c.journal.enabled) }}
    - name: journal
      emptyDir: {}
    {{- end }}
    {{- with $c.extraVolumes }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- end }}
{{- end }}
