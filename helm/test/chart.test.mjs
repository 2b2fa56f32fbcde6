import { describe, test, before } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { chartDir, helm, problemsOf, render, valuesDir } from '../lib/chart.mjs';

const SERVICES = ['gateway', 'space', 'codegen', 'zoo'];
const STORES = ['mongodb', 'redis', 'kafka'];
const SM_API = ['--api-versions', 'monitoring.coreos.com/v1'];
const VALUE_SETS = {
  defaults: { file: 'defaults.yaml' },
  external: { file: 'external.yaml' },
  'autoscaling-off': { file: 'autoscaling-off.yaml' },
  tenants: { file: 'tenants.yaml' },
  servicemonitor: { file: 'servicemonitor.yaml', args: SM_API },
  pods: { file: 'pods.yaml' },
};

const find = (objs, kind, name) => objs.find((o) => o.kind === kind && o.metadata.name === name);
const all = (objs, kind) => objs.filter((o) => o.kind === kind);
const component = (o) => o.metadata.labels['app.kubernetes.io/component'];
const containerOf = (deploy) => deploy.spec.template.spec.containers[0];
const envOf = (deploy) => Object.fromEntries(containerOf(deploy).env.map((e) => [e.name, e]));
const callersOf = (policy) => policy.spec.ingress
  .flatMap((rule) => rule.from ?? [])
  .filter((peer) => peer.podSelector)
  .map((peer) => peer.podSelector.matchLabels['app.kubernetes.io/component'])
  .sort();

describe('helm lint --strict', () => {
  for (const [name, set] of Object.entries(VALUE_SETS)) {
    test(`passes with the ${name} values`, () => {
      const r = helm(['lint', '--strict', chartDir, '-f', path.join(valuesDir, set.file)]);
      assert.equal(r.status, 0, r.stdout + r.stderr);
    });
  }
});

for (const [name, set] of Object.entries(VALUE_SETS)) {
  describe(`rendered with the ${name} values`, () => {
    let objs;
    before(() => { objs = render([set.file], set.args ?? []); });

    test('every manifest is valid against the API models, with no unknown field', async () => {
      const problems = [];
      for (const o of objs) problems.push(...(await problemsOf(o)));
      assert.deepEqual(problems, []);
    });

    test('each service has a Deployment and a Service; space, codegen and zoo a headless Service', () => {
      for (const s of SERVICES) {
        assert.ok(find(objs, 'Deployment', `jitzoo-${s}`), `Deployment jitzoo-${s}`);
        const svc = find(objs, 'Service', `jitzoo-${s}`);
        assert.deepEqual(svc.spec.ports.map((p) => [p.name, p.port, p.targetPort]), [['http', 8080, 'http']]);
      }
      for (const s of ['space', 'codegen', 'zoo']) {
        const headless = find(objs, 'Service', `jitzoo-${s}-headless`);
        assert.equal(headless?.spec.clusterIP, 'None', `jitzoo-${s}-headless is headless`);
        assert.equal(headless.spec.publishNotReadyAddresses, false);
        assert.equal(headless.spec.selector['app.kubernetes.io/component'], s);
      }
      assert.equal(find(objs, 'Service', 'jitzoo-gateway-headless'), undefined);
    });

    test('every service pod has the three probes on /q/health, runs non-root read-only, and has resources', () => {
      for (const s of SERVICES) {
        const d = find(objs, 'Deployment', `jitzoo-${s}`);
        const c = containerOf(d);
        assert.deepEqual(c.ports, [{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
        for (const [probe, p] of [['startupProbe', 'started'], ['livenessProbe', 'live'], ['readinessProbe', 'ready']]) {
          assert.deepEqual(c[probe]?.httpGet, { path: `/q/health/${p}`, port: 'http' }, `${s} ${probe}`);
        }
        const pod = d.spec.template.spec;
        assert.equal(pod.securityContext.runAsNonRoot, true);
        assert.equal(pod.securityContext.runAsUser, 185);
        assert.equal(pod.securityContext.seccompProfile.type, 'RuntimeDefault');
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.equal(c.securityContext.allowPrivilegeEscalation, false);
        assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
        assert.deepEqual(c.volumeMounts, [{ name: 'tmp', mountPath: '/tmp' }]);
        assert.deepEqual(pod.volumes, [{ name: 'tmp', emptyDir: {} }]);
        assert.equal(pod.enableServiceLinks, false, 'service links would shadow JITZOO_*_PORT');
        for (const kind of ['requests', 'limits']) {
          assert.ok(c.resources[kind]?.cpu && c.resources[kind]?.memory, `${s} resources.${kind}`);
        }
        assert.match(envOf(d).JAVA_TOOL_OPTIONS.value, /MaxRAMPercentage=75/);
      }
      for (const latency of ['jitzoo-gateway', 'jitzoo-zoo']) {
        assert.match(envOf(find(objs, 'Deployment', latency)).JAVA_TOOL_OPTIONS.value, /-XX:\+UseG1GC -XX:MaxGCPauseMillis=/, latency);
      }
    });

    test('the gateway\'s grace period outlasts its shutdown delay plus the drain', () => {
      const d = find(objs, 'Deployment', 'jitzoo-gateway');
      const seconds = (name) => Number(/^PT(\d+)S$/.exec(envOf(d)[name].value)[1]);
      assert.ok(seconds('QUARKUS_SHUTDOWN_DELAY') >= 5, 'time for endpoints and the ingress controller to let go');
      assert.ok(d.spec.template.spec.terminationGracePeriodSeconds > seconds('QUARKUS_SHUTDOWN_DELAY') + seconds('JITZOO_GATEWAY_DRAIN_TIMEOUT') + 5);
      assert.equal(containerOf(d).lifecycle, undefined, 'no preStop: the Quarkus shutdown delay does its work');
    });

    test('space, codegen and zoo still answer for a shutdown delay, and their grace period outlasts it and the calls in flight', () => {
      for (const s of ['space', 'codegen', 'zoo']) {
        const d = find(objs, 'Deployment', `jitzoo-${s}`);
        const delay = Number(/^PT(\d+)S$/.exec(envOf(d).QUARKUS_SHUTDOWN_DELAY.value)[1]);
        assert.ok(delay >= 5, `${s}: time for endpoints and callers to let go`);
        assert.ok(d.spec.template.spec.terminationGracePeriodSeconds > delay + 15, `${s}: the delay, 10 s of calls in flight, a margin`);
      }
    });

    test('gRPC clients point at the headless Services with round_robin', () => {
      const clients = { gateway: ['space', 'codegen', 'zoo'], space: ['zoo'] };
      for (const [caller, backends] of Object.entries(clients)) {
        const env = envOf(find(objs, 'Deployment', `jitzoo-${caller}`));
        for (const b of backends) {
          const B = b.toUpperCase();
          assert.equal(env[`JITZOO_${B}_HOST`].value, `jitzoo-${b}-headless`);
          assert.equal(env[`JITZOO_${B}_PORT`].value, '8080');
          assert.equal(env[`QUARKUS_GRPC_CLIENTS_${B}_LOAD_BALANCING_POLICY`].value, 'round_robin');
        }
      }
    });

    test('connection strings and the salt come from a Secret, never literally', () => {
      const secretKeys = /URI$|BOOTSTRAP$|SALT$|JAAS_CONFIG$/;
      const literal = /(mongodb(\+srv)?|rediss?):\/\/|s3cr3t|password=/;
      for (const d of all(objs, 'Deployment').filter((o) => SERVICES.includes(component(o)))) {
        for (const e of containerOf(d).env) {
          if (secretKeys.test(e.name)) assert.ok(e.valueFrom?.secretKeyRef, `${d.metadata.name} ${e.name} from a secretKeyRef`);
          assert.doesNotMatch(String(e.value ?? ''), literal, `${d.metadata.name} ${e.name}`);
        }
      }
    });

    test('NetworkPolicies: space and codegen only from the gateway, zoo from the gateway and space', () => {
      const policy = (s) => find(objs, 'NetworkPolicy', `jitzoo-${s}`);
      assert.deepEqual(callersOf(policy('space')), ['gateway']);
      assert.deepEqual(callersOf(policy('codegen')), ['gateway']);
      assert.deepEqual(callersOf(policy('zoo')), ['gateway', 'space']);
      // from the ingress controller's namespace (or anywhere); of the release's pods, only `helm test`'s
      assert.ok(callersOf(policy('gateway')).every((c) => c === 'helm-test'), callersOf(policy('gateway')));
      for (const s of SERVICES) {
        const p = policy(s);
        assert.deepEqual(p.spec.podSelector.matchLabels['app.kubernetes.io/component'], s);
        assert.deepEqual(p.spec.policyTypes, ['Ingress']);
        const scrape = p.spec.ingress.find((r) => r.from?.some((f) => f.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === 'monitoring'));
        assert.ok(scrape, `${s} admits Prometheus from the monitoring namespace`);
      }
      for (const store of STORES) {
        if (find(objs, 'Deployment', `jitzoo-${store}`)) assert.ok(policy(store), `${store} has a NetworkPolicy`);
      }
      const storeCallers = { mongodb: ['gateway', 'zoo'], redis: ['codegen', 'gateway', 'zoo'], kafka: ['gateway', 'kafka', 'zoo'] };
      for (const [store, callers] of Object.entries(storeCallers)) {
        if (policy(store)) assert.deepEqual(callersOf(policy(store)), callers, store);
      }
    });

    test('a PodDisruptionBudget per service where enabled, matching its pods', () => {
      for (const pdb of all(objs, 'PodDisruptionBudget')) {
        const s = component(pdb);
        assert.equal(pdb.spec.selector.matchLabels['app.kubernetes.io/component'], s);
        assert.ok((pdb.spec.maxUnavailable ?? pdb.spec.minAvailable) !== undefined);
      }
    });
  });
}

describe('value-set specifics', () => {
  test('defaults: trial stores in the cluster, the gateway HPA on jitzoo_gateway_sessions, the zoo\'s on CPU', () => {
    const objs = render(['defaults.yaml']);
    for (const store of STORES) {
      const d = find(objs, 'Deployment', `jitzoo-${store}`);
      assert.ok(d, store);
      assert.equal(d.spec.template.spec.securityContext.runAsNonRoot, true);
      assert.ok(find(objs, 'Service', `jitzoo-${store}`));
    }
    const kafkaEnv = envOf(find(objs, 'Deployment', 'jitzoo-kafka'));
    assert.equal(kafkaEnv.KAFKA_NUM_PARTITIONS.value, '6');
    const redisArgs = containerOf(find(objs, 'Deployment', 'jitzoo-redis')).args;
    assert.deepEqual(redisArgs.slice(redisArgs.indexOf('--maxmemory')), ['--maxmemory', '256mb', '--maxmemory-policy', 'volatile-lru'],
      'the trial Redis is bounded: codegen\'s artifacts cannot fill its memory');
    assert.equal(kafkaEnv.KAFKA_HEAP_OPTS.value, '-Xmx512m -Xms512m', 'a heap that fits the 1 Gi limit');
    assert.equal(kafkaEnv.KAFKA_ADVERTISED_LISTENERS.value, 'PLAINTEXT://jitzoo-kafka:9092');
    const secret = find(objs, 'Secret', 'jitzoo-connections');
    const data = Object.fromEntries(Object.entries(secret.data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));
    assert.deepEqual({ ...data, 'origin-salt': data['origin-salt'].length, 'admin-token': data['admin-token'].length }, {
      'mongodb-uri': 'mongodb://jitzoo-mongodb:27017', 'redis-uri': 'redis://jitzoo-redis:6379',
      'kafka-bootstrap': 'jitzoo-kafka:9092', 'origin-salt': 32, 'admin-token': 40,
    });
    assert.deepEqual(envOf(find(objs, 'Deployment', 'jitzoo-zoo')).JITZOO_ZOO_ADMIN_TOKEN.valueFrom.secretKeyRef,
      { name: 'jitzoo-connections', key: 'admin-token' }, 'the zoo\'s admin surfaces need the token from the Secret');
    const gatewayHpa = find(objs, 'HorizontalPodAutoscaler', 'jitzoo-gateway');
    // sessions per pod, and CPU beside it: the HPA still scales out when the sessions metric cannot be read
    assert.deepEqual(gatewayHpa.spec.metrics, [
      { type: 'Pods', pods: { metric: { name: 'jitzoo_gateway_sessions' }, target: { type: 'AverageValue', averageValue: '2000' } } },
      { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } },
    ]);
    const zooHpa = find(objs, 'HorizontalPodAutoscaler', 'jitzoo-zoo');
    assert.equal(zooHpa.spec.metrics[0].resource.name, 'cpu');
    assert.equal(zooHpa.spec.scaleTargetRef.name, 'jitzoo-zoo');
    assert.ok(zooHpa.spec.maxReplicas <= 6);
    for (const s of SERVICES) assert.equal(find(objs, 'Deployment', `jitzoo-${s}`).spec.replicas, undefined, `${s}: the HPA owns replicas`);
    // the gRPC servers retire their callers' connections, so pods an HPA adds to space or codegen get calls
    for (const s of ['space', 'codegen']) {
      const hpa = find(objs, 'HorizontalPodAutoscaler', `jitzoo-${s}`);
      assert.deepEqual(hpa.spec.metrics, [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } } }], s);
      assert.equal(hpa.spec.minReplicas, 2, s);
    }
    assert.equal(envOf(find(objs, 'Deployment', 'jitzoo-gateway')).JITZOO_GATEWAY_TRUST_FORWARDED_FOR.value, 'false',
      'no proxy in front by default: X-Forwarded-For is not trusted');
    assert.equal(all(objs, 'Ingress').length, 0);
    assert.equal(all(objs, 'ServiceMonitor').length, 0);
    assert.equal(all(objs, 'PrometheusRule').length, 0);
    assert.equal(all(objs, 'PodDisruptionBudget').length, 4);
    assert.equal(find(objs, 'Deployment', 'jitzoo-gateway').spec.template.spec.containers[0].image, 'jitzoo/gateway:0.1.0');
  });

  test('external: no trial stores, Kafka SASL from the Secret, Ingress to the gateway with WebSocket timeouts', () => {
    const objs = render(['external.yaml']);
    for (const store of STORES) assert.equal(find(objs, 'Deployment', `jitzoo-${store}`), undefined, store);
    const secret = find(objs, 'Secret', 'jitzoo-connections');
    const decoded = (k) => Buffer.from(secret.data[k], 'base64').toString();
    assert.equal(decoded('mongodb-uri'), 'mongodb+srv://jitzoo:s3cr3t-mongo@cluster0.example.net/?retryWrites=true');
    assert.equal(decoded('kafka-bootstrap'), 'b-1.kafka.example.net:9096,b-2.kafka.example.net:9096');
    assert.equal(decoded('origin-salt'), 's3cr3t-salt-0123456789');
    assert.match(decoded('kafka-sasl-jaas-config'), /ScramLoginModule/);
    for (const s of ['gateway', 'zoo']) {
      const env = envOf(find(objs, 'Deployment', `jitzoo-${s}`));
      assert.equal(env.KAFKA_SECURITY_PROTOCOL.value, 'SASL_SSL');
      assert.equal(env.KAFKA_SASL_MECHANISM.value, 'SCRAM-SHA-512');
      assert.deepEqual(env.KAFKA_SASL_JAAS_CONFIG.valueFrom.secretKeyRef, { name: 'jitzoo-connections', key: 'kafka-sasl-jaas-config' });
      assert.equal(env.JITZOO_OTLP_ENDPOINT.value, 'http://otel-collector.observability:4317');
      assert.equal(env.JITZOO_TRACES_DISABLED.value, 'false');
    }
    const gw = find(objs, 'Deployment', 'jitzoo-gateway');
    assert.equal(containerOf(gw).image, 'registry.example.com/jitzoo-team/jitzoo/gateway:0.1.0');
    assert.equal(envOf(gw).JITZOO_GATEWAY_DRAIN_TIMEOUT.value, 'PT20S');
    assert.equal(envOf(gw).JITZOO_GATEWAY_TRUST_FORWARDED_FOR.value, 'true');
    assert.equal(gw.spec.template.spec.terminationGracePeriodSeconds, 40);
    const ing = find(objs, 'Ingress', 'jitzoo-gateway');
    assert.equal(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-read-timeout'], '3600');
    assert.equal(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-send-timeout'], '3600');
    assert.equal(ing.metadata.annotations['nginx.ingress.kubernetes.io/proxy-body-size'], '1m');
    assert.equal(ing.spec.ingressClassName, 'nginx');
    assert.deepEqual(ing.spec.tls, [{ secretName: 'jitzoo-tls', hosts: ['jitzoo.example.com'] }]);
    const [rule] = ing.spec.rules;
    assert.equal(rule.host, 'jitzoo.example.com');
    assert.deepEqual(rule.http.paths, [{ path: '/v1/session', pathType: 'Prefix', backend: { service: { name: 'jitzoo-gateway', port: { name: 'http' } } } }]);
    const gwPolicy = find(objs, 'NetworkPolicy', 'jitzoo-gateway');
    assert.deepEqual(gwPolicy.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } },
      { podSelector: { matchLabels: { 'app.kubernetes.io/component': 'helm-test', 'app.kubernetes.io/instance': 'jitzoo', 'app.kubernetes.io/name': 'jitzoo' } } }],
      'the ingress controller and `helm test`\'s pod');
    for (const store of STORES) assert.equal(find(objs, 'NetworkPolicy', `jitzoo-${store}`), undefined);
  });

  test('autoscaling-off: no HorizontalPodAutoscaler, fixed replicas, PDBs as configured', () => {
    const objs = render(['autoscaling-off.yaml']);
    assert.equal(all(objs, 'HorizontalPodAutoscaler').length, 0);
    const replicas = Object.fromEntries(SERVICES.map((s) => [s, find(objs, 'Deployment', `jitzoo-${s}`).spec.replicas]));
    assert.deepEqual(replicas, { gateway: 3, space: 2, codegen: 1, zoo: 6 });
    assert.deepEqual(find(objs, 'PodDisruptionBudget', 'jitzoo-gateway').spec.minAvailable, 2);
    assert.equal(find(objs, 'PodDisruptionBudget', 'jitzoo-codegen'), undefined);
    assert.equal(find(objs, 'PodDisruptionBudget', 'jitzoo-zoo').spec.maxUnavailable, 1);
  });

  test('tenants: keys required, every secret from the SRE\'s existing Secret, none made by the chart', () => {
    const objs = render(['tenants.yaml']);
    assert.equal(all(objs, 'Secret').length, 0);
    const gw = envOf(find(objs, 'Deployment', 'jitzoo-gateway'));
    assert.equal(gw.JITZOO_GATEWAY_TENANTS_REQUIRE_KEY.value, 'true');
    const refs = all(objs, 'Deployment').flatMap((d) => containerOf(d).env).filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.valueFrom.secretKeyRef);
    assert.ok(refs.length >= 9);
    for (const ref of refs) assert.equal(ref.name, 'jitzoo-prod');
    assert.deepEqual([...new Set(refs.map((r) => r.key))].sort(), ['admin-token', 'kafka-bootstrap', 'kafka-sasl-jaas-config', 'mongodb-uri', 'origin-salt', 'redis-uri']);
  });

  test('servicemonitor: one per service on /q/metrics where the cluster has monitoring.coreos.com/v1, none elsewhere', () => {
    const objs = render(['servicemonitor.yaml'], SM_API);
    const monitors = all(objs, 'ServiceMonitor');
    assert.deepEqual(monitors.map(component).sort(), [...SERVICES].sort());
    for (const m of monitors) {
      assert.equal(m.metadata.labels.release, 'kube-prometheus-stack');
      assert.deepEqual(m.spec.endpoints, [{ port: 'http', path: '/q/metrics', interval: '15s' }]);
      assert.equal(m.spec.selector.matchLabels['app.kubernetes.io/component'], component(m));
    }
    assert.equal(all(render(['servicemonitor.yaml']), 'ServiceMonitor').length, 0);
  });

  test('pods: images pinned by digest where given, a priority class, extra labels, spread over nodes and zones', () => {
    const digest = `sha256:${'ab'.repeat(32)}`;
    const objs = render(['defaults.yaml'], ['--set', `image.digests.zoo=${digest}`, '--set', 'priorityClassName=jitzoo-high',
      '--set', 'gateway.podLabels.team=inference', '--set', 'gateway.podLabels.app\\.kubernetes\\.io/component=mine']);
    const pod = (s) => find(objs, 'Deployment', `jitzoo-${s}`).spec.template;
    assert.equal(containerOf(find(objs, 'Deployment', 'jitzoo-zoo')).image, `jitzoo/zoo@${digest}`);
    assert.match(containerOf(find(objs, 'Deployment', 'jitzoo-space')).image, /^jitzoo\/space:[^@]+$/);
    for (const s of SERVICES) {
      assert.equal(pod(s).spec.priorityClassName, 'jitzoo-high', s);
      assert.deepEqual(pod(s).spec.topologySpreadConstraints.map((c) => [c.topologyKey, c.whenUnsatisfiable]),
        [['kubernetes.io/hostname', 'ScheduleAnyway'], ['topology.kubernetes.io/zone', 'ScheduleAnyway']], s);
    }
    // an extra label rides along; one of the chart's own is not overridden (the selector still matches)
    assert.equal(pod('gateway').metadata.labels.team, 'inference');
    assert.equal(pod('gateway').metadata.labels['app.kubernetes.io/component'], 'gateway');
    assert.equal(find(render(['defaults.yaml']), 'Deployment', 'jitzoo-gateway').spec.template.spec.priorityClassName, undefined);
  });

  test('helm test: a hook pod tunes the skeleton through the gateway\'s Service, as the services run; none when off', () => {
    const digest = `sha256:${'cd'.repeat(32)}`;
    const objs = render(['defaults.yaml'], ['--set', `image.digests.tune=${digest}`, '--set', 'helmTest.apiKey=jz_test_key']);
    const pod = find(objs, 'Pod', 'jitzoo-helm-test');
    assert.equal(pod.metadata.annotations['helm.sh/hook'], 'test');
    assert.equal(pod.spec.restartPolicy, 'Never');
    const c = pod.spec.containers[0];
    assert.equal(c.image, `jitzoo/tune@${digest}`);
    const url = c.args[c.args.indexOf('--url') + 1];
    assert.equal(url, `ws://${find(objs, 'Service', 'jitzoo-gateway').metadata.name}:8080/v1/session`);
    assert.equal(c.args[c.args.indexOf('--workload') + 1], 'skeleton');
    assert.deepEqual(c.env, [{ name: 'JITZOO_API_KEY', value: 'jz_test_key' }]);
    const gateway = find(objs, 'Deployment', 'jitzoo-gateway').spec.template.spec;
    assert.deepEqual(pod.spec.securityContext, gateway.securityContext);
    assert.deepEqual(c.securityContext, gateway.containers[0].securityContext);
    assert.ok(c.resources.limits.memory && c.resources.requests.cpu);
    assert.equal(find(render(['defaults.yaml'], ['--set', 'helmTest.enabled=false']), 'Pod', 'jitzoo-helm-test'), undefined);
  });

  test('each service\'s memory follows what bench scale measured: the request holds its resident memory, the limit its heap and what the JVM keeps beside it', () => {
    // `./jitzoo bench scale --json` (docs/kubernetes.md#sizing): the most resident memory an instance
    // reached (the gateway holding 10,000 sessions under the chart's JVM options), and the most its
    // JVM counted outside the heap (non-heap pools and buffers). Thread stacks, the collector's own
    // structures and native allocations come on top: the zoo's resident memory less its whole committed
    // heap was 1.4–1.7 times its counted figure, so the room beside the heap must be twice the counted figure.
    const MB = 1e6;
    const measured = {
      gateway: { rss: 555 * MB, nonHeap: 107 * MB },
      space: { rss: 279 * MB, nonHeap: 65 * MB },
      codegen: { rss: 309 * MB, nonHeap: 74 * MB },
      zoo: { rss: 628 * MB, nonHeap: 117 * MB },
    };
    const bytes = (q) => {
      const [, n, unit] = /^(\d+)(Mi|Gi)$/.exec(q);
      return Number(n) * (unit === 'Gi' ? 2 ** 30 : 2 ** 20);
    };
    const objs = render(['defaults.yaml']);
    for (const s of SERVICES) {
      const d = find(objs, 'Deployment', `jitzoo-${s}`);
      const { requests, limits } = containerOf(d).resources;
      const percent = Number(/-XX:MaxRAMPercentage=(\d+)/.exec(envOf(d).JAVA_TOOL_OPTIONS.value)[1]);
      const beside = bytes(limits.memory) * (1 - percent / 100);
      assert.ok(bytes(requests.memory) >= 1.2 * measured[s].rss, `${s}: request ${requests.memory} under 1.2 × ${measured[s].rss / MB} MB`);
      assert.ok(beside >= 2 * measured[s].nonHeap, `${s}: ${Math.round(beside / MB)} MB beside the heap under 2 × ${measured[s].nonHeap / MB} MB`);
      assert.ok(bytes(limits.memory) > bytes(requests.memory), `${s}: the heap may grow past the request`);
    }
  });

  test('the gateway HPA scales on sessions alone when its CPU target is null', () => {
    const objs = render(['defaults.yaml'], ['--set', 'gateway.autoscaling.targetCPUUtilizationPercentage=null']);
    assert.deepEqual(find(objs, 'HorizontalPodAutoscaler', 'jitzoo-gateway').spec.metrics.map((m) => m.type), ['Pods']);
  });

  test('alerts: the guide\'s rules, the sessions metric absent and the gateway HPA blind or at its maximum, in the release\'s namespace', () => {
    const objs = render(['servicemonitor.yaml'], SM_API);
    const [rule] = all(objs, 'PrometheusRule');
    assert.equal(rule.metadata.labels.release, 'kube-prometheus-stack');
    const rules = Object.fromEntries(rule.spec.groups[0].rules.map((r) => [r.alert, r]));
    assert.deepEqual(Object.keys(rules), ['JitzooGatewayNearMaxConnections', 'JitzooZooIngestLag', 'JitzooZooConsumerLag',
      'JitzooDeadLettersGrowing', 'JitzooPodsNotReady', 'JitzooHttp5xx', 'JitzooKernelServiceUnreachable', 'JitzooGatewaySessionsMetricAbsent',
      'JitzooGatewayHpaCannotReadMetrics', 'JitzooGatewayHpaAtMax']);
    assert.equal(rules.JitzooGatewayNearMaxConnections.expr, 'max by (pod) (jitzoo_gateway_connections{namespace="jitzoo"}) > 8000');
    assert.equal(rules.JitzooGatewayNearMaxConnections.annotations.summary.startsWith('{{ $labels.pod }} holds'), true, 'Prometheus\'s own template left as is');
    assert.equal(rules.JitzooGatewaySessionsMetricAbsent.expr, 'absent(jitzoo_gateway_sessions{namespace="jitzoo"})');
    assert.equal(rules.JitzooKernelServiceUnreachable.expr, 'max by (service) (jitzoo_gateway_downstream_serving{namespace="jitzoo"}) == 0');
    assert.match(rules.JitzooGatewayHpaAtMax.expr, /horizontalpodautoscaler="jitzoo-gateway"\}\n\s+>= kube_horizontalpodautoscaler_spec_max_replicas/);
    assert.match(rules.JitzooGatewayHpaAtMax.annotations.summary, /maxReplicas \(10\)/);
    // none where the cluster has no Prometheus Operator; no HPA rules without the gateway HPA
    assert.equal(all(render(['servicemonitor.yaml']), 'PrometheusRule').length, 0);
    const fixed = all(render(['servicemonitor.yaml', 'autoscaling-off.yaml'], SM_API), 'PrometheusRule')[0];
    assert.deepEqual(fixed.spec.groups[0].rules.map((r) => r.alert).filter((a) => a.includes('Hpa') || a.includes('Absent')), []);
  });

  test('NOTES tell how to connect (port-forward without an Ingress, wss:// with one) and how to check (helm test)', () => {
    const notes = (file) => {
      const r = helm(['install', 'jitzoo', chartDir, '--dry-run=client', '--namespace', 'jitzoo', '-f', path.join(valuesDir, file)]);
      assert.equal(r.status, 0, r.stderr);
      return r.stdout.slice(r.stdout.indexOf('NOTES:'));
    };
    const trial = notes('defaults.yaml');
    assert.match(trial, /port-forward svc\/jitzoo-gateway 8080:8080/);
    assert.match(trial, /In-cluster trial stores are on \(mongodb, redis, kafka\)/);
    assert.match(trial, /prometheus-adapter/);
    assert.match(trial, /helm test jitzoo -n jitzoo --logs/);
    const prod = notes('external.yaml');
    assert.match(prod, /wss:\/\/jitzoo\.example\.com\/v1\/session/);
    assert.doesNotMatch(prod, /trial stores/);
  });

  test('the origin salt and the admin token made at install are random when not given', () => {
    for (const key of ['origin-salt', 'admin-token']) {
      const made = () => find(render(['defaults.yaml']), 'Secret', 'jitzoo-connections').data[key];
      assert.notEqual(made(), made(), key);
    }
  });
});

describe('bad values are refused with a message naming the problem', () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'jitzoo-chart-'));
  const offStores = { inCluster: Object.fromEntries(STORES.map((s) => [s, { enabled: false, image: 'x' }])) };
  const external = { ...offStores, mongodb: { uri: 'mongodb://m:27017' }, redis: { uri: 'redis://r:6379' }, kafka: { bootstrap: 'k:9092', reportPartitions: 6, securityProtocol: 'PLAINTEXT' } };
  const cases = [
    ['a misspelt key', { gatway: {} }, /additional properties 'gatway' not allowed/],
    ['a wrong type', { gateway: { replicas: 'two' } }, /\/gateway\/replicas': got string, want integer/],
    ['a non-MongoDB URI', { ...external, mongodb: { uri: 'http://x' } }, /\/mongodb\/uri': 'http:\/\/x' does not match pattern/],
    ['a non-Redis URI', { ...external, redis: { uri: 'mongodb://x' } }, /\/redis\/uri'.*does not match pattern/],
    ['a malformed Kafka bootstrap', { ...external, kafka: { ...external.kafka, bootstrap: 'kafka://k' } }, /\/kafka\/bootstrap'.*does not match pattern/],
    ['an unknown Kafka security protocol', { kafka: { securityProtocol: 'TLS' } }, /\/kafka\/securityProtocol'.*value must be one of/],
    ['zoo maxReplicas above the partitions', { zoo: { autoscaling: { maxReplicas: 7 } } }, /zoo\.autoscaling\.maxReplicas \(7\) exceeds kafka\.reportPartitions \(6\)/],
    ['zoo replicas above the partitions, autoscaling off', { zoo: { replicas: 8, autoscaling: { enabled: false } } }, /zoo\.replicas \(8\) exceeds kafka\.reportPartitions \(6\)/],
    ['a zoo grace period no longer than its delay + 15 s', { zoo: { terminationGracePeriodSeconds: 20 } }, /zoo\.terminationGracePeriodSeconds \(20\) must exceed zoo\.shutdownDelaySeconds \+ 15 = 20/],
    ['a gateway grace period no longer than the delay + the drain + 5 s', { gateway: { terminationGracePeriodSeconds: 20 } }, /gateway\.terminationGracePeriodSeconds \(20\) must exceed gateway\.shutdownDelaySeconds \+ gateway\.drainTimeoutSeconds \+ 5 = 20/],
    ['a store with neither in-cluster nor URI', { inCluster: { redis: { enabled: false, image: 'redis:7' } } }, /redis: no store; set redis\.uri/],
    ['a store with both in-cluster and URI', { mongodb: { uri: 'mongodb://m:27017' } }, /mongodb: set exactly one of inCluster\.mongodb\.enabled .* and mongodb\.uri/],
    ['an existing Secret beside in-cluster stores', { secrets: { existingSecret: 'mine' } }, /mongodb: secrets\.existingSecret holds the connection strings/],
    ['an Ingress without trustForwardedFor', { ingress: { enabled: true, host: 'jitzoo.example.com' } }, /ingress\.enabled needs gateway\.trustForwardedFor=true/],
    ['SASL without a JAAS config', { ...external, kafka: { ...external.kafka, securityProtocol: 'SASL_SSL', saslMechanism: 'PLAIN' } }, /needs kafka\.saslJaasConfig/],
    ['a PDB with both maxUnavailable and minAvailable', { space: { podDisruptionBudget: { enabled: true, maxUnavailable: 1, minAvailable: 1 } } }, /space\.podDisruptionBudget: set exactly one of maxUnavailable and minAvailable/],
    ['a digest that is not sha256', { image: { digests: { zoo: 'latest' } } }, /\/image\/digests\/zoo'.*does not match pattern/],
    ['minReplicas above maxReplicas', { codegen: { autoscaling: { enabled: true, minReplicas: 5, maxReplicas: 3 } } }, /codegen\.autoscaling\.minReplicas \(5\) exceeds codegen\.autoscaling\.maxReplicas \(3\)/],
  ];
  for (const [name, values, message] of cases) {
    test(name, () => {
      const file = path.join(tmp, `${name.replace(/\W+/g, '-')}.yaml`);
      fs.writeFileSync(file, stringify(values));
      const r = helm(['template', 'jitzoo', chartDir, '-f', file]);
      assert.notEqual(r.status, 0, 'helm template must fail');
      assert.match(r.stderr, message);
    });
  }
});
