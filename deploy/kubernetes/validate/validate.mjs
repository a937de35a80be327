// Offline validation of a kustomization folder against the Kubernetes API schemas.
//
//   node validate.mjs DIR [--out RENDERED.json] [--expect-invalid]
//
// The schemas are kubernetes-models' validators, generated from the OpenAPI spec the
// Kubernetes project publishes (and @kubernetes-models/cert-manager's from cert-manager's
// CRDs); nothing here describes a field. The folder's kustomization.yaml may use only
// `resources` and `namespace` (kustomize sets metadata.namespace on every namespaced
// object), so rendering is exact without kustomize itself. Each object is validated; every
// error is one line "FILE: KIND/NAME: path message". --out writes the rendered objects as a
// JSON array. --expect-invalid inverts the exit code (the test's proof that it can fail).
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const args = process.argv.slice(2);
const dir = args[0];
const outAt = args.indexOf('--out');
const out = outAt > 0 ? args[outAt + 1] : null;
const expectInvalid = args.includes('--expect-invalid');
if (!dir) {
  console.error('usage: node validate.mjs DIR [--out FILE] [--expect-invalid]');
  process.exit(2);
}

const clusterScoped = new Set(['Namespace', 'ClusterRole', 'ClusterRoleBinding', 'RuntimeClass',
  'PersistentVolume', 'StorageClass', 'CustomResourceDefinition', 'ClusterIssuer']);

function loadYaml(file) {
  const docs = parseAllDocuments(fs.readFileSync(file, 'utf8'));
  return docs.map((d, i) => {
    if (d.errors.length) throw new Error(`${file}: document ${i + 1}: ${d.errors[0].message}`);
    return d.toJS();
  }).filter((o) => o !== null);
}

// apiVersion + kind -> the model module.
function modulePath(apiVersion, kind) {
  const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : ['', apiVersion];
  if (group.endsWith('cert-manager.io')) return `@kubernetes-models/cert-manager/${group}/${version}/${kind}`;
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

const errors = [];
const rendered = [];
const kfile = path.join(dir, 'kustomization.yaml');
const [k] = loadYaml(kfile);
for (const key of Object.keys(k)) {
  if (!['apiVersion', 'kind', 'namespace', 'resources'].includes(key)) {
    errors.push(`${kfile}: '${key}' is not rendered by this validator (only namespace and resources)`);
  }
}
const listed = new Set(k.resources || []);
for (const f of fs.readdirSync(dir)) {
  if (f.endsWith('.yaml') && f !== 'kustomization.yaml' && !listed.has(f) && !f.startsWith('.')) {
    console.error(`note: ${path.join(dir, f)} is not in kustomization.yaml (validated, not rendered)`);
  }
}
const files = [...listed, ...fs.readdirSync(dir).filter((f) => f.endsWith('.yaml') &&
  f !== 'kustomization.yaml' && !listed.has(f))];
for (const f of files) {
  const file = path.join(dir, f);
  let objects;
  try {
    objects = loadYaml(file);
  } catch (e) {
    errors.push(e.message);
    continue;
  }
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.name ?? o.metadata?.generateName ?? '?'}`;
    if (listed.has(f) && k.namespace && !clusterScoped.has(o.kind)) {
      if (o.metadata?.namespace && o.metadata.namespace !== k.namespace) {
        errors.push(`${file}: ${id}: namespace ${o.metadata.namespace}, kustomization says ${k.namespace}`);
      }
      o.metadata = { ...o.metadata, namespace: k.namespace };
    }
    let Model;
    try {
      Model = (await import(modulePath(o.apiVersion, o.kind)))[o.kind];
    } catch (e) {
      errors.push(`${file}: ${id}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (e) {
      for (const d of e.errors ?? [{ instancePath: '', message: e.message }]) {
        errors.push(`${file}: ${id}: ${d.instancePath || '/'} ${d.message}` +
          (d.params?.additionalProperty ? ` '${d.params.additionalProperty}'` : ''));
      }
      continue;
    }
    rendered.push({ file: f, rendered: listed.has(f), object: o });
    console.log(`valid: ${file}: ${o.apiVersion} ${id}`);
  }
}
for (const e of errors) console.error(`invalid: ${e}`);
if (out) fs.writeFileSync(out, JSON.stringify(rendered, null, 1));
const invalid = errors.length > 0;
console.log(`${rendered.length} objects valid, ${errors.length} errors`);
process.exit(invalid === expectInvalid ? 0 : 1);
