{{/*
The labels of every object: the ones deploy/ gives (name, component,
part-of) and Helm's own. Call with (dict "root" $ "name" "graphcd-server"
"component" "server").
*/}}
{{- define "graphcd.labels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: graphcd
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version | replace "+" "_" }}
{{- end }}

{{/*
The labels of a Pod template: those the workload's selector matches and
no Helm ones, so that upgrading the chart alone restarts nothing.
*/}}
{{- define "graphcd.podLabels" -}}
app.kubernetes.io/name: {{ .name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: graphcd
{{- end }}

{{/* The graphcd image, its tag defaulting to the chart's appVersion. */}}
{{- define "graphcd.image" -}}
image: {{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- with .Values.image.pullPolicy }}
imagePullPolicy: {{ . }}
{{- end }}
{{- end }}

{{/* imagePullSecrets of a Pod spec; call inside "with .Values.imagePullSecrets". */}}
{{- define "graphcd.imagePullSecrets" -}}
imagePullSecrets:
{{- range . }}
- name: {{ . }}
{{- end }}
{{- end }}

{{/*
The Pod securityContext of every graphcd Pod: graphcd's non-root user
under the restricted Pod Security profile. (dict "noFSGroup" true) leaves
fsGroup out, for a Pod that mounts no volume.
*/}}
{{- define "graphcd.podSecurityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  {{- if not .noFSGroup }}
  fsGroup: 65532
  {{- end }}
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{/* The securityContext of every container. */}}
{{- define "graphcd.securityContext" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65532
  runAsGroup: 65532
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop: [ALL]
  seccompProfile:
    type: RuntimeDefault
{{- end }}

{{/* A preferred anti-affinity spreading a role's Pods over nodes. */}}
{{- define "graphcd.spread" -}}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      podAffinityTerm:
        topologyKey: kubernetes.io/hostname
        labelSelector:
          matchLabels:
            app.kubernetes.io/name: {{ . }}
{{- end }}

{{/* GRAPHCD_NAMESPACE: graphcd's own namespace, the Pod's. */}}
{{- define "graphcd.namespaceEnv" -}}
- name: GRAPHCD_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
{{- end }}

{{/*
The address of Redis: the bundled graphcd-redis or redis.external.address.
*/}}
{{- define "graphcd.redisAddress" -}}
{{- if .Values.redis.enabled -}}
graphcd-redis:6379
{{- else -}}
{{ .Values.redis.external.address }}
{{- end }}
{{- end }}

{{/*
GRAPHCD_REDIS_PASSWORD, from the bundled Redis's Secret or the one
redis.external.existingSecret names; nothing for an external Redis
without a password.
*/}}
{{- define "graphcd.redisPasswordEnv" -}}
{{- if .Values.redis.enabled }}
- name: GRAPHCD_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: graphcd-redis
      key: auth
{{- else if .Values.redis.external.existingSecret }}
- name: GRAPHCD_REDIS_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ .Values.redis.external.existingSecret }}
      key: {{ .Values.redis.external.passwordKey }}
{{- end }}
{{- end }}

{{/*
The flags of a repo-server client (the API server and the controllers in
HA): mutual TLS with graphcd-repo-server, and Redis.
*/}}
{{- define "graphcd.sharedArgs" -}}
- --repo-server-addr=graphcd-repo-server:8081
- --repo-server-ca-file=/etc/graphcd/repo-server-tls/ca.crt
- --repo-server-client-cert=/etc/graphcd/repo-server-tls/tls.crt
- --repo-server-client-key=/etc/graphcd/repo-server-tls/tls.key
- --redis={{ include "graphcd.redisAddress" . }}
- --redis-secret-file=/etc/graphcd/redis/shared.key
{{- end }}

{{/* The volumes the flags of graphcd.sharedArgs read. */}}
{{- define "graphcd.sharedVolumeMounts" -}}
- name: repo-server-tls
  mountPath: /etc/graphcd/repo-server-tls
  readOnly: true
- name: redis
  mountPath: /etc/graphcd/redis
  readOnly: true
{{- end }}

{{- define "graphcd.sharedVolumes" -}}
- name: repo-server-tls
  secret:
    secretName: graphcd-repo-server-client-tls
    defaultMode: 0440
- name: redis
  secret:
    secretName: graphcd-redis
    defaultMode: 0440
    items:
    - key: shared.key
      path: shared.key
{{- end }}

{{/*
Checks of combinations values.schema.json cannot express; rendered once,
from config.yaml.
*/}}
{{- define "graphcd.validate" -}}
{{- if .Values.ha.enabled }}
{{- if and .Values.redis.enabled .Values.redis.external.address }}
{{- fail "redis.external.address is set but so is redis.enabled: set redis.enabled=false to use your own Redis" }}
{{- end }}
{{- if not (or .Values.redis.enabled .Values.redis.external.address) }}
{{- fail "ha.enabled needs a Redis: set redis.enabled=true, or redis.external.address to your own" }}
{{- end }}
{{- else }}
{{- if gt (int (.Values.server.replicas | default 1)) 1 }}
{{- fail "server.replicas above 1 needs ha.enabled: without it the controller runs in the server process, and two would reconcile the same applications" }}
{{- end }}
{{- if .Values.redis.external.address }}
{{- fail "redis.external.address applies with ha.enabled only: the single process caches in memory" }}
{{- end }}
{{- end }}
{{- if and .Values.dex.config (hasKey .Values.configs.cm "dex.config") }}
{{- fail "dex.config and configs.cm.dex.config are both set: keep one" }}
{{- end }}
{{- if and .Values.server.tls.certificate (not .Values.server.tls.key) }}
{{- fail "server.tls.certificate is set without server.tls.key" }}
{{- end }}
{{- if and .Values.server.tls.key (not .Values.server.tls.certificate) }}
{{- fail "server.tls.key is set without server.tls.certificate" }}
{{- end }}
{{- with .Values.chatops.secret }}
{{- if and (or .token .signingSecret .webhookURL) (not (and .token .signingSecret .webhookURL)) }}
{{- fail "chatops.secret needs token, signingSecret and webhookURL together, or none of them to create the Secret graphcd-chatops yourself" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The server's resources: server.resources, or the defaults of the mode.
The single process renders too (in child processes of up to
--render-memory-limit, 1 GiB, --render-parallelism, 4, at a time).
*/}}
{{- define "graphcd.serverResources" -}}
{{- if .Values.server.resources }}
{{- toYaml .Values.server.resources }}
{{- else if .Values.ha.enabled -}}
requests:
  cpu: 100m
  memory: 256Mi
limits:
  cpu: "1"
  memory: 1Gi
{{- else -}}
requests:
  cpu: 250m
  memory: 512Mi
limits:
  cpu: "2"
  memory: 4Gi
{{- end }}
{{- end }}

{{/*
The annotations making the secret-init objects a hook run before install
and upgrade, in the order of the weight given.
*/}}
{{- define "graphcd.secretInitHook" -}}
helm.sh/hook: pre-install,pre-upgrade
helm.sh/hook-weight: {{ . | quote }}
helm.sh/hook-delete-policy: before-hook-creation,hook-succeeded
{{- end }}
