// The chart's pods, run: the chart rendered against stores on this machine (./jitzoo up stores, as a
// cluster would use managed stores), translated for `podman kube play` (lib/pods.mjs says what and
// why), played from the project's own images, waited on through the chart's probes; then the
// skeleton and the BERT layer tuned through the gateway's pod while the zoo's pod and then the
// gateway's are killed, and every report sent must be acknowledged and stored once.
// `./jitzoo test deploy` starts the stores, names them in JITZOO_MONGO_URI, JITZOO_REDIS_URI and
// JITZOO_KAFKA_BOOTSTRAP, and sets JITZOO_TEST_PODS.
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { stringify } from 'yaml';
import { helmRoot, render } from '../lib/chart.mjs';
import { newestTarball } from '../lib/images.mjs';
import { SERVICES, forPodman, probeUrls } from '../lib/pods.mjs';

const stores = process.env.JITZOO_TEST_PODS
  ? { mongodb: process.env.JITZOO_MONGO_URI, redis: process.env.JITZOO_REDIS_URI, kafka: process.env.JITZOO_KAFKA_BOOTSTRAP } : null;
const images = process.env.JITZOO_IMAGES;
const root = path.resolve(helmRoot, '..');
const skip = !stores || !images ? 'JITZOO_TEST_PODS and JITZOO_IMAGES are not set: `./jitzoo test deploy` starts the stores and builds the images'
  : spawnSync('bash', ['-c', 'command -v podman']).status !== 0 ? 'podman is not installed here' : false;

const ADMIN_TOKEN = `pods-${process.pid}-admin`;
const say = (line) => process.stderr.write(`pods: ${line}\n`);

/**
 * podman with this machine's needs: runc (crun refuses its hybrid cgroups), limits a process without
 * CAP_SYS_RESOURCE may set. The settings go in CONTAINERS_CONF of this process, so the podman the
 * drill runs (killing and starting pods) reads them too.
 */
function podman(args, options = {}) {
  if (!process.env.CONTAINERS_CONF) {
    const conf = path.join(os.tmpdir(), `jitzoo-pods-containers-${process.pid}.conf`);
    fs.writeFileSync(conf, '[containers]\ndefault_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]\n[engine]\nruntime = "runc"\n');
    process.env.CONTAINERS_CONF = conf;
  }
  const r = spawnSync('podman', args, { encoding: 'utf8', maxBuffer: 1 << 28, ...options });
  if (r.error) throw r.error;
  if (r.status !== 0 && !options.allowFailure) throw new Error(`podman ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** The newest tarball of each image the pods run: the services', and tune's for `helm test`. */
function tarballs() {
  return [...SERVICES, 'tune'].map((name) => {
    const tarball = newestTarball(images, name);
    assert.ok(tarball, `no tarball of ${name} in ${images}`);
    return tarball;
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function status(url) {
  try {
    return (await fetch(url, { signal: AbortSignal.timeout(3_000) })).status;
  } catch {
    return 0;
  }
}

/** Waits as a kubelet does: the startup probe within its failure budget, then readiness. */
async function awaitReady(service, probes) {
  const { startup, readiness } = probes;
  const budgetMs = startup.failureThreshold * startup.periodSeconds * 1000;
  const started = Date.now();
  while ((await status(probes.started)) !== 200) {
    assert.ok(Date.now() - started < budgetMs, `${service}: startup probe failed for ${budgetMs / 1000} s (a kubelet would restart it)`);
    await sleep(1000);
  }
  while ((await status(probes.ready)) !== 200) {
    assert.ok(Date.now() - started < budgetMs + readiness.failureThreshold * readiness.periodSeconds * 1000, `${service}: not ready`);
    await sleep(1000);
  }
  return (Date.now() - started) / 1000;
}

const UNITS = { B: 1, kB: 1e3, KB: 1e3, MB: 1e6, GB: 1e9, KiB: 1024, MiB: 1 << 20, GiB: 1 << 30 };

/**
 * Samples the services' containers every 2 s (podman stats) until stopped: each one's highest
 * memory (the cgroup's usage, what a pod's memory limit bounds) while the tunes and the kills ran.
 */
function memorySampler(containers) {
  const peak = {};
  const sample = () => {
    const r = spawnSync('podman', ['stats', '--no-stream', '--format', 'json'], { encoding: 'utf8' });
    if (r.status !== 0) return;
    for (const c of JSON.parse(r.stdout)) {
      const service = SERVICES.find((x) => c.name === containers[x]);
      const m = /^([\d.]+)\s*([A-Za-z]+)/.exec(c.mem_usage ?? '');
      if (service && m && UNITS[m[2]]) peak[service] = Math.max(peak[service] ?? 0, Number(m[1]) * UNITS[m[2]]);
    }
  };
  const timer = setInterval(sample, 2_000);
  return () => {
    clearInterval(timer);
    sample();
    return peak;
  };
}

/** A node script of the SDK (built by the deploy stage) against the gateway's pod; its stdout's last line is JSON. */
async function sdkScript(script, args, env, containers) {
  const child = spawn('node', ['--experimental-wasm-relaxed-simd', path.join(root, script), ...args, '--json'],
    { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'], timeout: 600_000 });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const status = await new Promise((resolve) => child.on('close', resolve));
  const lines = stdout.trim().split('\n');
  process.stderr.write(lines.slice(0, -1).map((l) => `  ${l}\n`).join(''));
  if (status !== 0) diagnose(containers);
  assert.equal(status, 0, `${script} exited ${status}: ${lines.slice(-5).join('\n')}`);
  return JSON.parse(lines[lines.length - 1]);
}

/** What each pod of the chart is doing, and its service's last log lines: for a failure's report. */
function diagnose(containers) {
  process.stderr.write(podman(['pod', 'ps'], { allowFailure: true }));
  for (const service of SERVICES) {
    const r = spawnSync('podman', ['logs', '--tail', '15', containers[service]], { encoding: 'utf8' });
    process.stderr.write(`--- ${service}'s last lines\n${r.stdout}${r.stderr}`);
  }
}

describe('the chart translated for podman kube play (lib/pods.mjs)', () => {
  const rendered = render(['pods.yaml']);
  const { objects, ports, leftOut, pods, secrets, tests } = forPodman(rendered);
  const deployments = (list) => list.filter((o) => o.kind === 'Deployment');

  test('each Deployment is played once, on the host network, on a port of its own, the rest listed as left out', () => {
    assert.deepEqual(Object.keys(pods).sort(), [...SERVICES].sort());
    assert.equal(new Set(Object.values(ports)).size, SERVICES.length);
    for (const o of rendered) {
      const played = objects.some((x) => x.kind === o.kind && x.metadata.name === o.metadata.name);
      const kept = played || secrets[o.metadata.name] || tests.some((t) => t.metadata.name === o.metadata.name);
      assert.ok(kept || leftOut.includes(`${o.kind}/${o.metadata.name}`), `${o.kind}/${o.metadata.name} neither played nor listed`);
    }
    for (const d of deployments(objects)) {
      const service = d.metadata.labels['app.kubernetes.io/component'];
      const spec = d.spec.template.spec;
      assert.equal(spec.hostNetwork, true);
      const c = spec.containers[0];
      const env = Object.fromEntries(c.env.map((e) => [e.name, e.value]));
      assert.equal(env.QUARKUS_HTTP_PORT, String(ports[service]));
      for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe']) assert.equal(c[probe].httpGet.port, ports[service]);
      for (const other of SERVICES.filter((s) => env[`JITZOO_${s.toUpperCase()}_PORT`] !== undefined)) {
        assert.equal(env[`JITZOO_${other.toUpperCase()}_PORT`], String(ports[other]), `${service} calls ${other} on its port`);
      }
      for (const host of c.env.filter((e) => /^JITZOO_[A-Z]+_HOST$/.test(e.name))) assert.equal(host.value, '127.0.0.1', host.name);
    }
  });

  test('what the chart says of a pod is kept: image, securityContext, resources, env from the Secret, volumes', () => {
    for (const [before, after] of deployments(rendered).map((d) => [d, deployments(objects).find((x) => x.metadata.name === d.metadata.name)])) {
      const [b, a] = [before.spec.template.spec, after.spec.template.spec];
      assert.deepEqual(a.securityContext, b.securityContext);
      assert.deepEqual(a.volumes.map((v) => v.emptyDir), b.volumes.map((v) => v.emptyDir));
      assert.ok(a.volumes.every((v) => v.name.startsWith(`${after.metadata.name}-`)), 'each pod its own emptyDir');
      assert.equal(a.terminationGracePeriodSeconds, b.terminationGracePeriodSeconds);
      const [cb, ca] = [b.containers[0], a.containers[0]];
      for (const key of ['image', 'securityContext', 'resources']) assert.deepEqual(ca[key], cb[key], key);
      assert.deepEqual(ca.volumeMounts.map((m) => m.mountPath), cb.volumeMounts.map((m) => m.mountPath));
      assert.deepEqual(ca.env.filter((e) => e.valueFrom), cb.env.filter((e) => e.valueFrom));
    }
  });

  test('`helm test`\'s pod is kept apart, on the host network, calling the gateway on its port', () => {
    const [hook] = tests;
    assert.equal(hook.metadata.annotations['helm.sh/hook'], 'test');
    assert.equal(hook.spec.hostNetwork, true);
    const args = hook.spec.containers[0].args;
    assert.equal(args[args.indexOf('--url') + 1], `ws://127.0.0.1:${ports.gateway}/v1/session`);
    assert.ok(!objects.includes(hook));
  });

  test('a Secret becomes the JSON of its keys in base64, as podman 4.3 reads it', () => {
    const secret = rendered.find((o) => o.kind === 'Secret');
    assert.deepEqual(JSON.parse(secrets[secret.metadata.name]), secret.data);
  });
});

describe('the chart run as pods by podman kube play', { skip }, () => {
  const dir = skip ? null : fs.mkdtempSync(path.join(os.tmpdir(), 'jitzoo-pods.'));
  let played;
  let probes;

  before(async () => {
    const files = tarballs();
    for (const file of files) podman(['load', '--quiet', '-i', file]);
    const tag = /jitzoo-gateway-(.+)\.tar$/.exec(path.basename(files[0]))[1];
    const values = path.join(dir, 'values.yaml');
    fs.writeFileSync(values, stringify({
      image: { tag },
      mongodb: { uri: stores.mongodb }, redis: { uri: stores.redis }, kafka: { bootstrap: stores.kafka },
      secrets: { adminToken: ADMIN_TOKEN },
    }));
    played = forPodman(render(['pods.yaml', values]));
    probes = probeUrls(played.objects);
    const manifest = path.join(dir, 'pods.yaml');
    fs.writeFileSync(manifest, played.objects.map((o) => stringify(o)).join('---\n'));
    say(`left out (no cluster here): ${played.leftOut.join(', ')}`);
    removePods();
    for (const [name, content] of Object.entries(played.secrets)) {
      fs.writeFileSync(path.join(dir, `${name}.json`), content, { mode: 0o600 });
      podman(['secret', 'create', name, path.join(dir, `${name}.json`)]);
    }
    say(`podman kube play ${manifest}`);
    podman(['kube', 'play', manifest]);
    for (const service of ['zoo', 'codegen', 'space', 'gateway']) {
      say(`${service}: ready in ${await awaitReady(service, probes[service])} s (${probes[service].ready})`);
    }
  });

  /** The pods and secrets of this chart, from this run or one before. */
  function removePods() {
    for (const pod of Object.values(played.pods)) podman(['pod', 'rm', '--force', pod], { allowFailure: true });
    for (const name of Object.keys(played.secrets)) podman(['secret', 'rm', name], { allowFailure: true });
    for (const name of played.volumes) podman(['volume', 'rm', '--force', name], { allowFailure: true });
  }

  after(() => {
    if (played) removePods();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('every Deployment runs as a pod, as the chart says: user 185, a read-only root, no capabilities', () => {
    const running = JSON.parse(podman(['pod', 'ps', '--format', 'json'])).filter((p) => Object.values(played.pods).includes(p.Name));
    say(`${running.length} pods run: ${running.map((p) => `${p.Name} (${p.Status})`).join(', ')}`);
    assert.equal(running.length, SERVICES.length);
    assert.ok(running.every((p) => p.Status === 'Running'), JSON.stringify(running.map((p) => p.Status)));
    for (const service of SERVICES) {
      const [c] = JSON.parse(podman(['inspect', played.containers[service]]));
      assert.match(c.Config.User, /^185(:0)?$/, `${service} runs as ${c.Config.User}`);
      assert.equal(c.HostConfig.ReadonlyRootfs, true, `${service}: root filesystem writable`);
      assert.deepEqual(c.EffectiveCaps ?? [], [], `${service} has capabilities ${c.EffectiveCaps}`);
    }
  });

  test('the skeleton tunes through the gateway pod', async () => {
    const result = await sdkScript('client-sdk-js/dist/cli/tune.js', ['--workload', 'skeleton', '--url', `ws://127.0.0.1:${played.ports.gateway}/v1/session`,
      '--fingerprint', `pods-skeleton-${process.pid}`], {}, played.containers);
    say(`skeleton through the chart: ${JSON.stringify(result)}`);
    assert.ok(result.kernels_timed > 0, JSON.stringify(result));
    assert.ok(result.reports_acked > 0, JSON.stringify(result));
  });

  test('`helm test`\'s pod (the tune image) passes against the gateway\'s pod', () => {
    const manifest = path.join(dir, 'helm-test.yaml');
    fs.writeFileSync(manifest, played.tests.map((o) => stringify(o)).join('---\n'));
    const [hook] = played.tests;
    const container = `${hook.metadata.name}-${hook.spec.containers[0].name}`;
    podman(['pod', 'rm', '--force', hook.metadata.name], { allowFailure: true });
    podman(['kube', 'play', manifest]);
    try {
      const exit = Number(podman(['wait', container], { timeout: 300_000 }).trim());
      const logs = spawnSync('podman', ['logs', container], { encoding: 'utf8' });
      const out = `${logs.stdout}${logs.stderr}`;
      say(`helm test's pod exited ${exit}: ${out.split('\n').filter((l) => /kernels:|reports acknowledged|failed/.test(l)).join(' | ')}`);
      assert.equal(exit, 0, out);
      assert.match(out, /[1-9]\d* reports acknowledged/);
    } finally {
      podman(['pod', 'rm', '--force', hook.metadata.name], { allowFailure: true });
    }
  });

  test('a model tunes through the gateway pod while the zoo pod and the gateway pod are killed; every report acknowledged is stored once', async () => {
    const pods = Object.fromEntries(['zoo', 'gateway'].map((s) => [s, { pod: played.pods[s], ready: probes[s].ready }]));
    const stop = memorySampler(played.containers);
    const figures = await sdkScript('client-sdk-js/tools/dist/drill.js', ['--pods', '--devices', '2'], {
      JITZOO_PODS: JSON.stringify(pods),
      JITZOO_GATEWAY_URL: `ws://127.0.0.1:${played.ports.gateway}/v1/session`,
      JITZOO_ZOO_HTTP: `http://127.0.0.1:${played.ports.zoo}`,
      JITZOO_ADMIN_TOKEN: ADMIN_TOKEN,
    }, played.containers);
    say(`drill through the pods: ${figures.runs} runs, ${figures.runs_finished} settled; reports ${figures.reports_sent} sent, `
      + `${figures.reports_acked} acknowledged, ${figures.reports_stored} stored`);
    const peak = stop();
    const limits = Object.fromEntries(played.objects.filter((o) => o.kind === 'Deployment')
      .map((o) => [o.metadata.labels['app.kubernetes.io/component'], o.spec.template.spec.containers[0].resources]));
    say(`each pod's highest memory meanwhile (podman stats, sampled every 2 s) against the chart's request / limit: ${SERVICES
      .map((x) => `${x} ${Math.round((peak[x] ?? NaN) / 1e6)} MB (${limits[x].requests.memory} / ${limits[x].limits.memory})`).join(', ')}`);
    assert.ok(figures.reports_acked > 0);
    assert.ok(figures.reports_whole, 'a report was lost');
    assert.ok(figures.all_finished, 'a device did not finish');
  });
});
