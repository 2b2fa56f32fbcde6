// The images `./jitzoo images` writes (docker-archive tarballs), the four services' and tune's (the
// chart's helm test): their config, their layers, and one of them started by podman, as the chart
// runs it (read-only root, no capabilities).
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { newestTarball } from '../lib/images.mjs';

const SERVICES = ['gateway', 'space', 'codegen', 'zoo'];
const dir = process.env.JITZOO_IMAGES;
const skip = dir ? false : 'JITZOO_IMAGES is not set: `./jitzoo test deploy` builds the images and names their folder';

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: options.encoding ?? 'utf8', maxBuffer: 1 << 30, ...options });
  if (r.error) throw r.error;
  return r;
}

function ok(command, args, options) {
  const r = run(command, args, options);
  assert.equal(r.status, 0, `${command} ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** One member of a tarball, as text. */
const member = (tarball, name) => ok('tar', ['-xOf', tarball, name]);

/**
 * What `tar ARGS` prints of one layer (a tar inside the image's tarball). The inner tar stops at the
 * end-of-archive blocks; the rest is drained, since Node's children ignore SIGPIPE and the outer tar
 * would fail on a closed pipe.
 */
const ofLayer = (tarball, layer, ...args) => ok('bash', ['-c', 'set -o pipefail; tar -xOf "$1" "$2" | { tar -f - "${@:3}"; s=$?; cat >/dev/null; exit $s; }',
  'layer', tarball, layer, ...args]);

const layerPaths = (tarball, layer) => ofLayer(tarball, layer, '-t').split('\n').filter(Boolean).map((p) => p.replace(/^\.\//, ''));

/** The newest tarball of a service. */
function tarballOf(service) {
  const tarball = newestTarball(dir, service);
  assert.ok(tarball, `no tarball of ${service} in ${dir}`);
  return tarball;
}

function inspect(service) {
  const tarball = tarballOf(service);
  const [manifest] = JSON.parse(member(tarball, 'manifest.json'));
  const config = JSON.parse(member(tarball, manifest.Config));
  return { tarball, manifest, config };
}

describe('images', { skip }, () => {
  const images = {};
  before(() => {
    for (const service of SERVICES) images[service] = inspect(service);
  });

  for (const service of SERVICES) {
    test(`${service}: named jitzoo/${service}, runs java -jar as user 185 on port 8080`, () => {
      const { manifest, config } = images[service];
      assert.equal(manifest.RepoTags.length, 1);
      assert.match(manifest.RepoTags[0], new RegExp(`^(docker\\.io/)?jitzoo/${service}:[0-9A-Za-z._-]+$`));
      assert.equal(config.os, 'linux');
      assert.equal(config.architecture, 'amd64');
      const c = config.config;
      assert.equal(c.User, '185');
      assert.deepEqual(c.Entrypoint, ['java', '-jar', '/deployments/quarkus-run.jar']);
      assert.equal(c.WorkingDir, '/deployments');
      assert.deepEqual(Object.keys(c.ExposedPorts), ['8080/tcp']);
      assert.ok(c.Env.includes('QUARKUS_HTTP_PORT=8080'), c.Env.join(' '));
      assert.ok(c.Env.some((e) => /^PATH=(.*:)?\/usr\/bin(:|$)/.test(e)), `no PATH that finds java: ${c.Env.join(' ')}`);
      assert.equal(c.Labels['org.opencontainers.image.title'], `jitzoo-${service}`);
      assert.match(c.Labels['org.opencontainers.image.revision'], /^[0-9a-f]{40}$|^unknown$/);
    });

    test(`${service}: three layers (Debian and Java, the dependencies, the application), fast-jar layout`, () => {
      const { tarball, manifest, config } = images[service];
      assert.equal(manifest.Layers.length, 3);
      assert.equal(config.rootfs.diff_ids.length, 3);
      const comments = config.history.filter((h) => !h.empty_layer).map((h) => h.comment);
      assert.deepEqual(comments.map((x) => x.split(' ')[0]), ['Debian', 'quarkus-app/lib', 'quarkus-app']);

      const [base, lib, app] = manifest.Layers.map((layer) => layerPaths(tarball, layer));
      assert.ok(base.includes('usr/lib/jvm/java-17-openjdk-amd64/bin/java'), 'the base holds a Java 17 runtime');
      // dpkg leaves documentation out but the copyright files (those of the essential packages, unpacked before it, stay)
      const docs = base.filter((p) => p.startsWith('usr/share/doc/') && !p.endsWith('/copyright') && !p.endsWith('/'));
      assert.ok(docs.length < 10, `documentation in the base: ${docs.slice(0, 10)}`);
      assert.ok(lib.every((p) => p.startsWith('deployments')), 'the dependency layer holds only /deployments/lib');
      assert.ok(lib.some((p) => p.startsWith('deployments/lib/boot/')) && lib.some((p) => p.startsWith('deployments/lib/main/')));
      for (const file of ['deployments/quarkus-run.jar', 'deployments/quarkus/quarkus-application.dat']) {
        assert.ok(app.includes(file), `the application layer holds ${file}`);
      }
      assert.ok(app.some((p) => p.startsWith('deployments/app/')));
      assert.ok(!app.some((p) => p.startsWith('deployments/lib/')), 'dependencies stay in their own layer');
    });
  }

  test('tune (helm test\'s client): jitzoo/tune, node running the SDK\'s tune CLI as user 185, on a Node.js base', () => {
    const { tarball, manifest, config } = inspect('tune');
    assert.match(manifest.RepoTags[0], /^(docker\.io\/)?jitzoo\/tune:[0-9A-Za-z._-]+$/);
    const c = config.config;
    assert.equal(c.User, '185');
    assert.deepEqual(c.Entrypoint, ['node', '--experimental-wasm-relaxed-simd', '/app/dist/cli/tune.js']);
    assert.ok(c.Env.some((e) => /^PATH=(.*:)?\/usr\/bin(:|$)/.test(e)), c.Env.join(' '));
    assert.equal(manifest.Layers.length, 3);
    const [base, deps, app] = manifest.Layers.map((layer) => layerPaths(tarball, layer));
    assert.ok(base.includes('usr/bin/node'), 'the base holds Node.js');
    assert.ok(!base.some((p) => p.startsWith('usr/lib/jvm/')), 'and no Java');
    assert.ok(deps.every((p) => p.startsWith('app/node_modules')) && deps.some((p) => p.startsWith('app/node_modules/ws/')));
    assert.ok(!deps.some((p) => p.startsWith('app/node_modules/vitest/')), 'runtime dependencies only');
    assert.ok(app.includes('app/dist/cli/tune.js') && app.includes('app/package.json'));
  });

  test('the base layer is one and the same in every image (stored and pulled once)', () => {
    const bases = new Set(SERVICES.map((s) => images[s].config.rootfs.diff_ids[0]));
    assert.equal(bases.size, 1);
  });

  test('the base has the user 185 in group 0 and a /deployments it owns', () => {
    const { tarball, manifest } = images.space;
    assert.match(ofLayer(tarball, manifest.Layers[0], '-xO', 'etc/passwd'), /^jitzoo:x:185:0:/m);
    const owner = ofLayer(tarball, manifest.Layers[0], '-tv', '--numeric-owner', '--no-recursion', 'deployments/');
    assert.match(owner, /^d\S+ 185\/0 /);
  });
});

const podman = !skip && run('bash', ['-c', 'command -v podman']).status === 0;

/** podman's flags where this runs: no CAP_SYS_RESOURCE (limits at or under the current ones) and runc where installed. */
function runtimeFlags() {
  const flags = ['--ulimit', 'nofile=1024:8192', '--ulimit', 'nproc=1024:4096'];
  if (run('bash', ['-c', 'command -v runc']).status === 0) flags.unshift('--runtime', 'runc');
  return flags;
}

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}

async function health(port, what) {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/q/health/${what}`);
    return { status: response.status, body: await response.json() };
  } catch {
    return null;
  }
}

describe('an image started by podman', { skip: skip || (!podman && 'podman is not installed here') }, () => {
  const name = `jitzoo-image-test-${process.pid}`;
  let reference;
  let port;
  before(async () => {
    const { tarball, manifest } = inspect('space');
    reference = manifest.RepoTags[0];
    ok('podman', ['load', '--quiet', '-i', tarball]);
    port = await freePort();
    // as the chart runs it: a read-only root with /tmp apart, no capabilities, no privilege escalation;
    // the space needs no store, and a zoo that does not answer leaves it ready
    ok('podman', ['run', '-d', '--name', name, ...runtimeFlags(), '--network', 'host', '--read-only', '--tmpfs', '/tmp',
      '--cap-drop', 'ALL', '--security-opt', 'no-new-privileges', '-e', `QUARKUS_HTTP_PORT=${port}`, '-e', 'JITZOO_ZOO_PORT=1',
      reference]);
  });
  after(() => {
    const logs = run('podman', ['logs', name]);
    if (process.exitCode) process.stderr.write(logs.stdout + logs.stderr);
    run('podman', ['rm', '-f', name]);
    run('podman', ['rmi', '-f', reference]);
  });

  test('jitzoo/space becomes ready on its health endpoint, as user 185', async () => {
    const deadline = Date.now() + 90_000;
    let ready;
    while (Date.now() < deadline) {
      ready = await health(port, 'ready');
      if (ready?.status === 200) break;
      const state = run('podman', ['inspect', '--format', '{{.State.Status}}', name]).stdout.trim();
      assert.notEqual(state, 'exited', `the container exited: ${run('podman', ['logs', name]).stderr}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal(ready?.status, 200, `not ready in 90 s: ${JSON.stringify(ready)}`);
    assert.equal(ready.body.status, 'UP');
    const started = await health(port, 'started');
    assert.equal(started.status, 200);
    assert.equal(ok('podman', ['exec', name, 'id', '-u']).trim(), '185');
  });
});
