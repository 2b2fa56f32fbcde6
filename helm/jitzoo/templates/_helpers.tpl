{{/* The four services, in the order the chart renders them. */}}
{{- define "jitzoo.components" -}}
gateway space codegen zoo
{{- end }}

{{/* Who may connect to what (NetworkPolicies): the callers of each service and in-cluster store. */}}
{{- define "jitzoo.callers" -}}
space: [gateway]
codegen: [gateway]
zoo: [gateway, space]
mongodb: [gateway, zoo]
redis: [gateway, codegen, zoo]
kafka: [gateway, zoo, kafka]
{{- end }}

{{/* The in-cluster trial stores. */}}
{{- define "jitzoo.stores" -}}
mongodb: {port: 27017, uid: 999, dataPath: /data/db, scheme: "mongodb://"}
redis: {port: 6379, uid: 999, dataPath: /data, scheme: "redis://"}
kafka: {port: 9092, uid: 1000, dataPath: /var/lib/kafka/data, scheme: ""}
{{- end }}

{{- define "jitzoo.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "jitzoo.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/* Name of one part, e.g. "jitzoo-gateway": (list $ "gateway") */}}
{{- define "jitzoo.partName" -}}
{{- printf "%s-%s" (include "jitzoo.fullname" (index . 0)) (index . 1) }}
{{- end }}

{{/* Selector labels of one part: (list $ "gateway") */}}
{{- define "jitzoo.selectorLabels" -}}
app.kubernetes.io/name: {{ include "jitzoo.name" (index . 0) }}
app.kubernetes.io/instance: {{ (index . 0).Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{/* All labels of one part: (list $ "gateway") */}}
{{- define "jitzoo.labels" -}}
{{- $root := index . 0 -}}
helm.sh/chart: {{ printf "%s-%s" $root.Chart.Name $root.Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "jitzoo.selectorLabels" . }}
app.kubernetes.io/part-of: jitzoo
app.kubernetes.io/version: {{ $root.Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ $root.Release.Service }}
{{- end }}

{{/* Metadata of one object: (list $ "gateway" "optional-name-suffix") */}}
{{- define "jitzoo.metadata" -}}
metadata:
  name: {{ include "jitzoo.partName" (list (index . 0) (index . 1)) }}{{ if gt (len .) 2 }}{{ index . 2 }}{{ end }}
  namespace: {{ (index . 0).Release.Namespace }}
  labels:
    {{- include "jitzoo.labels" (list (index . 0) (index . 1)) | nindent 4 }}
{{- end }}

{{- define "jitzoo.image" -}}
{{- $root := index . 0 }}
{{- $repo := printf "jitzoo/%s" (index . 1) }}
{{- with $root.Values.image.registry }}{{ $repo = printf "%s/%s" (trimSuffix "/" .) $repo }}{{ end }}
{{- with (index ($root.Values.image.digests | default dict) (index . 1)) }}
{{- printf "%s@%s" $repo . }}
{{- else }}
{{- printf "%s:%s" $repo (default $root.Chart.AppVersion $root.Values.image.tag) }}
{{- end }}
{{- end }}

{{- define "jitzoo.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "jitzoo.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "jitzoo.secretName" -}}
{{- default (printf "%s-connections" (include "jitzoo.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{- define "jitzoo.saslEnabled" -}}
{{- if hasPrefix "SASL_" .Values.kafka.securityProtocol }}true{{ end }}
{{- end }}

{{/* Connection string of a store: the external value, or the in-cluster Service's address. (list $ "mongodb") */}}
{{- define "jitzoo.storeAddress" -}}
{{- $root := index . 0 }}{{ $store := index . 1 }}
{{- $ext := ternary $root.Values.kafka.bootstrap (dig "uri" "" (index $root.Values $store)) (eq $store "kafka") }}
{{- if (index $root.Values.inCluster $store).enabled }}
{{- $def := index (include "jitzoo.stores" $root | fromYaml) $store }}
{{- printf "%s%s:%v" $def.scheme (include "jitzoo.partName" (list $root $store)) $def.port }}
{{- else }}
{{- $ext }}
{{- end }}
{{- end }}

{{/* An env var from the connections Secret: (list $ "ENV_NAME" "key") */}}
{{- define "jitzoo.secretEnv" -}}
- name: {{ index . 1 }}
  valueFrom:
    secretKeyRef:
      name: {{ include "jitzoo.secretName" (index . 0) }}
      key: {{ index . 2 }}
{{- end }}

{{/* Kafka client env of the gateway and the zoo. */}}
{{- define "jitzoo.env.kafka" -}}
{{ include "jitzoo.secretEnv" (list . "JITZOO_KAFKA_BOOTSTRAP" "kafka-bootstrap") }}
- name: KAFKA_SECURITY_PROTOCOL
  value: {{ .Values.kafka.securityProtocol | quote }}
{{- if include "jitzoo.saslEnabled" . }}
- name: KAFKA_SASL_MECHANISM
  value: {{ .Values.kafka.saslMechanism | quote }}
{{ include "jitzoo.secretEnv" (list . "KAFKA_SASL_JAAS_CONFIG" "kafka-sasl-jaas-config") }}
{{- end }}
{{- end }}

{{/* gRPC client env, pointed at a backend's headless Service and balanced per call: (list $ "zoo") */}}
{{- define "jitzoo.env.grpcClient" -}}
{{- $name := index . 1 -}}
- name: JITZOO_{{ upper $name }}_HOST
  value: {{ include "jitzoo.partName" (list (index . 0) $name) }}-headless
- name: JITZOO_{{ upper $name }}_PORT
  value: "8080"
- name: QUARKUS_GRPC_CLIENTS_{{ upper $name }}_LOAD_BALANCING_POLICY
  value: round_robin
{{- end }}

{{- define "jitzoo.env.gateway" -}}
{{ include "jitzoo.secretEnv" (list . "JITZOO_MONGO_URI" "mongodb-uri") }}
{{ include "jitzoo.secretEnv" (list . "JITZOO_REDIS_URI" "redis-uri") }}
{{ include "jitzoo.env.kafka" . }}
{{- range list "space" "codegen" "zoo" }}
{{ include "jitzoo.env.grpcClient" (list $ .) }}
{{- end }}
{{ include "jitzoo.secretEnv" (list . "JITZOO_GATEWAY_ORIGIN_SALT" "origin-salt") }}
- name: JITZOO_GATEWAY_TRUST_FORWARDED_FOR
  value: {{ .Values.gateway.trustForwardedFor | quote }}
- name: JITZOO_GATEWAY_TRUSTED_PROXY_HOPS
  value: {{ .Values.gateway.trustedProxyHops | quote }}
- name: JITZOO_GATEWAY_TENANTS_REQUIRE_KEY
  value: {{ .Values.gateway.tenants.requireKey | quote }}
- name: JITZOO_GATEWAY_MAX_CONNECTIONS
  value: {{ .Values.gateway.maxConnections | quote }}
- name: JITZOO_GATEWAY_DRAIN_TIMEOUT
  value: {{ printf "PT%vS" .Values.gateway.drainTimeoutSeconds | quote }}
{{- end }}

{{- define "jitzoo.env.space" -}}
{{ include "jitzoo.env.grpcClient" (list . "zoo") }}
{{- end }}

{{- define "jitzoo.env.codegen" -}}
{{ include "jitzoo.secretEnv" (list . "JITZOO_REDIS_URI" "redis-uri") }}
{{- end }}

{{- define "jitzoo.env.zoo" -}}
{{ include "jitzoo.secretEnv" (list . "JITZOO_MONGO_URI" "mongodb-uri") }}
{{ include "jitzoo.secretEnv" (list . "JITZOO_REDIS_URI" "redis-uri") }}
{{ include "jitzoo.env.kafka" . }}
{{ include "jitzoo.secretEnv" (list . "JITZOO_ZOO_ADMIN_TOKEN" "admin-token") }}
{{- end }}

{{/* Env every service gets. */}}
{{- define "jitzoo.env.common" -}}
- name: JITZOO_LOG_JSON
  value: {{ .Values.logJson | quote }}
{{- with .Values.tracing.otlpEndpoint }}
- name: JITZOO_OTLP_ENDPOINT
  value: {{ . | quote }}
- name: JITZOO_TRACES_DISABLED
  value: "false"
{{- end }}
{{- end }}

{{/* Pod security shared by every pod: (list uid gid); container security: readOnlyRootFilesystem */}}
{{- define "jitzoo.podSecurity" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: {{ index . 0 }}
  runAsGroup: {{ index . 1 }}
  {{- if ne (int (index . 1)) 0 }}
  fsGroup: {{ index . 1 }}
  {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{- define "jitzoo.containerSecurity" -}}
securityContext:
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: {{ . }}
  capabilities:
    drop: [ALL]
{{- end }}

{{/* Refuse values that would render a broken release; included by deployments.yaml. */}}
{{- define "jitzoo.validate" -}}
{{- $v := .Values }}
{{- range $store := list "mongodb" "redis" "kafka" }}
{{- $inCluster := (index $v.inCluster $store).enabled }}
{{- $key := ternary "kafka.bootstrap" (printf "%s.uri" $store) (eq $store "kafka") }}
{{- $ext := ternary $v.kafka.bootstrap (dig "uri" "" (index $v $store)) (eq $store "kafka") }}
{{- if $v.secrets.existingSecret }}
{{- if or $inCluster $ext }}
{{- fail (printf "%s: secrets.existingSecret holds the connection strings; turn inCluster.%s.enabled off and leave %s empty" $store $store $key) }}
{{- end }}
{{- else if and $inCluster $ext }}
{{- fail (printf "%s: set exactly one of inCluster.%s.enabled (trial store) and %s (external), not both" $store $store $key) }}
{{- else if not (or $inCluster $ext) }}
{{- fail (printf "%s: no store; set %s, or inCluster.%s.enabled=true for a trial, or secrets.existingSecret" $store $key $store) }}
{{- end }}
{{- end }}
{{- if and $v.ingress.enabled (not $v.gateway.trustForwardedFor) }}
{{- fail "ingress.enabled needs gateway.trustForwardedFor=true: behind the Ingress every client would count as the proxy's one address (one origin, one vote, one per-address cap)" }}
{{- end }}
{{- if and $v.secrets.existingSecret (or $v.secrets.originSalt $v.secrets.adminToken $v.kafka.saslJaasConfig) }}
{{- fail "secrets.existingSecret holds origin-salt, admin-token and kafka-sasl-jaas-config; leave secrets.originSalt, secrets.adminToken and kafka.saslJaasConfig empty" }}
{{- end }}
{{- if include "jitzoo.saslEnabled" . }}
{{- if not $v.kafka.saslMechanism }}
{{- fail (printf "kafka.securityProtocol %s needs kafka.saslMechanism" $v.kafka.securityProtocol) }}
{{- end }}
{{- if not (or $v.secrets.existingSecret $v.kafka.saslJaasConfig) }}
{{- fail (printf "kafka.securityProtocol %s needs kafka.saslJaasConfig (or the key kafka-sasl-jaas-config in secrets.existingSecret)" $v.kafka.securityProtocol) }}
{{- end }}
{{- end }}
{{- range $name := splitList " " (include "jitzoo.components" .) }}
{{- $c := index $v $name }}
{{- if and $c.autoscaling.enabled (gt (int $c.autoscaling.minReplicas) (int $c.autoscaling.maxReplicas)) }}
{{- fail (printf "%s.autoscaling.minReplicas (%v) exceeds %s.autoscaling.maxReplicas (%v)" $name $c.autoscaling.minReplicas $name $c.autoscaling.maxReplicas) }}
{{- end }}
{{- $pdb := $c.podDisruptionBudget }}
{{- if and $pdb.enabled (eq (kindIs "invalid" $pdb.maxUnavailable) (kindIs "invalid" $pdb.minAvailable)) }}
{{- fail (printf "%s.podDisruptionBudget: set exactly one of maxUnavailable and minAvailable (the other null)" $name) }}
{{- end }}
{{- end }}
{{- range $name := list "space" "codegen" "zoo" }}
{{- $c := index $v $name }}
{{- $least := add $c.shutdownDelaySeconds 15 }}
{{- if le (int $c.terminationGracePeriodSeconds) (int $least) }}
{{- fail (printf "%s.terminationGracePeriodSeconds (%v) must exceed %s.shutdownDelaySeconds + 15 = %v (the delay, 10 s for calls in flight, a margin), or Kubernetes kills pods mid-call" $name $c.terminationGracePeriodSeconds $name $least) }}
{{- end }}
{{- end }}
{{- $zooMost := ternary $v.zoo.autoscaling.maxReplicas $v.zoo.replicas $v.zoo.autoscaling.enabled }}
{{- if gt (int $zooMost) (int $v.kafka.reportPartitions) }}
{{- fail (printf "%s (%v) exceeds kafka.reportPartitions (%v): zoo pods beyond the partitions of kernel-reports sit idle; raise the topic's partitions and kafka.reportPartitions first" (ternary "zoo.autoscaling.maxReplicas" "zoo.replicas" $v.zoo.autoscaling.enabled) $zooMost $v.kafka.reportPartitions) }}
{{- end }}
{{- $least := add $v.gateway.shutdownDelaySeconds $v.gateway.drainTimeoutSeconds 5 }}
{{- if le (int $v.gateway.terminationGracePeriodSeconds) (int $least) }}
{{- fail (printf "gateway.terminationGracePeriodSeconds (%v) must exceed gateway.shutdownDelaySeconds + gateway.drainTimeoutSeconds + 5 = %v (the delay, the drain, a margin), or Kubernetes kills gateways mid-drain" $v.gateway.terminationGracePeriodSeconds $least) }}
{{- end }}
{{- end }}
