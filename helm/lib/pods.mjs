// The chart's objects as `podman kube play` runs them on one machine. Podman runs Deployments,
// ConfigMaps and Secrets as pods, but has no Services, no kubelet probes and no cluster network, so
// the rendered objects are translated, and only so:
// - each pod joins the host's network (podman's bridge gives pods no names to find each other by),
//   so each service listens on a port of its own: QUARKUS_HTTP_PORT, its probes' ports and the
//   *_PORT settings that name it follow (its container port goes: podman maps none there);
// - the pods call one another on the host: a JITZOO_<SERVICE>_HOST that names a Service is
//   127.0.0.1 (podman puts no hostAliases into a host-network pod's /etc/hosts);
// - a Deployment runs one pod (podman plays one replica);
// - an emptyDir is named for its pod: podman 4.3 makes it a named volume, which pods naming it
//   alike would share (the JVMs' /tmp, all pid 1, then lock each other's perf data);
// - a Secret becomes a podman secret in the form podman 4.3's kube play reads (a JSON object of the
//   keys' base64 values; the Secret objects it stores itself, as YAML, it then fails to read);
// - what needs a cluster (Services, HPAs, PDBs, NetworkPolicies, the ServiceAccount, monitoring
//   objects) is left out, and listed;
// - `helm test`'s pod (a Pod with the hook annotation) is kept apart, to play after the others, on
//   the host's network, a URL in its args that names a Service pointing at that service's port.
// Everything else runs as rendered: image, env (from the Secret too), securityContext (user 185,
// no capabilities, read-only root, /tmp an emptyDir), resources, terminationGracePeriodSeconds.
// The probes stay in the pods' spec; the caller waits on them as a kubelet would (probeUrls).

/** What podman runs; the rest is listed as left out. */
const PLAYED = new Set(['Deployment', 'Secret', 'ConfigMap']);

/** The four services, in the order of their ports on the host: gateway `base`, space +1, codegen +2, zoo +3. */
export const SERVICES = ['gateway', 'space', 'codegen', 'zoo'];

/**
 * Translates rendered objects for `podman kube play`. Returns { objects, ports, leftOut, pods,
 * containers, secrets, volumes, tests }: the objects to play, each service's port on the host, the
 * kinds and names left out, each Deployment's pod and its container as podman names them, the
 * podman secrets to create first (name: content), the volumes podman will make for the emptyDirs
 * (to remove with the pods), and `helm test`'s pods.
 */
export function forPodman(rendered, { base = 28080 } = {}) {
  const ports = Object.fromEntries(SERVICES.map((s, i) => [s, base + i]));
  // each Service's name (headless ones too), and the service it selects
  const serviceOf = new Map(rendered.filter((o) => o.kind === 'Service')
    .map((o) => [o.metadata.name, o.metadata.labels?.['app.kubernetes.io/component']]));
  const objects = [];
  const leftOut = [];
  const pods = {};
  const containers = {};
  const secrets = {};
  const volumes = [];
  const tests = [];
  for (const o of rendered) {
    if (o.kind === 'Pod' && o.metadata.annotations?.['helm.sh/hook'] === 'test') {
      const copy = structuredClone(o);
      copy.spec.hostNetwork = true;
      for (const c of copy.spec.containers) c.args = (c.args ?? []).map((a) => onTheHostUrl(a, ports, serviceOf));
      tests.push(copy);
      continue;
    }
    if (!PLAYED.has(o.kind)) {
      leftOut.push(`${o.kind}/${o.metadata.name}`);
      continue;
    }
    if (o.kind === 'Secret') {
      const data = { ...o.data };
      for (const [k, v] of Object.entries(o.stringData ?? {})) data[k] = Buffer.from(v).toString('base64');
      secrets[o.metadata.name] = JSON.stringify(data);
      continue;
    }
    if (o.kind !== 'Deployment') {
      objects.push(o);
      continue;
    }
    const service = o.metadata.labels?.['app.kubernetes.io/component'];
    const copy = structuredClone(o);
    copy.spec.replicas = 1;
    const spec = copy.spec.template.spec;
    spec.hostNetwork = true;
    const ownName = (name) => `${o.metadata.name}-${name}`;
    for (const v of spec.volumes ?? []) {
      if (v.emptyDir) {
        volumes.push(ownName(v.name));
        for (const c of spec.containers) for (const m of c.volumeMounts ?? []) if (m.name === v.name) m.name = ownName(v.name);
        v.name = ownName(v.name);
      }
    }
    const port = ports[service];
    for (const c of port ? spec.containers : []) {
      delete c.ports; // on the host's network a pod's port is its process's (podman maps none there)
      c.env = [...(c.env ?? []).map((e) => onTheHost(e, ports, serviceOf)), { name: 'QUARKUS_HTTP_PORT', value: String(port) }];
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) {
        if (c[probe]?.httpGet?.port === 'http') c[probe].httpGet.port = port;
      }
    }
    objects.push(copy);
    const name = service ?? o.metadata.name;
    pods[name] = `${o.metadata.name}-pod-0`;
    containers[name] = `${pods[name]}-${spec.containers[0].name}`;
  }
  return { objects, ports, leftOut, pods, containers, secrets, volumes, tests };
}

/** Where a pod calls another service (JITZOO_<SERVICE>_HOST and _PORT): on the host, on that service's port. */
function onTheHost(e, ports, serviceOf) {
  if (e.value === undefined) return e;
  if (/^JITZOO_[A-Z]+_HOST$/.test(e.name) && serviceOf.has(e.value)) return { ...e, value: '127.0.0.1' };
  const service = SERVICES.find((s) => e.name === `JITZOO_${s.toUpperCase()}_PORT`);
  return service ? { ...e, value: String(ports[service]) } : e;
}

/** A URL naming a Service (ws://RELEASE-gateway:8080/...): that service on the host. */
function onTheHostUrl(arg, ports, serviceOf) {
  const m = /^([a-z]+:\/\/)([^/:]+):8080(\/.*)?$/.exec(arg);
  const port = m && ports[serviceOf.get(m[2])];
  return port ? `${m[1]}127.0.0.1:${port}${m[3] ?? ''}` : arg;
}

/** Each service's startup and readiness probes, and their URLs on the host: { gateway: { started, ready, startup, readiness }, ... }. */
export function probeUrls(objects) {
  const urls = {};
  for (const o of objects.filter((x) => x.kind === 'Deployment')) {
    const c = o.spec.template.spec.containers[0];
    const url = (probe) => c[probe]?.httpGet && `http://127.0.0.1:${c[probe].httpGet.port}${c[probe].httpGet.path}`;
    urls[o.metadata.labels['app.kubernetes.io/component']] = {
      started: url('startupProbe'), ready: url('readinessProbe'),
      readiness: c.readinessProbe, startup: c.startupProbe,
    };
  }
  return urls;
}
