// Offline validation of Kubernetes objects against the API schemas.
//
//   node validate.mjs FILE.yaml... [--out RENDERED.json] [--expect-invalid]
//
// Each FILE is a stream of objects: what `kubectl kustomize DIR` rendered, or a manifest that
// is created on its own (a Job with generateName). The schemas are kubernetes-models'
// validators, generated from the OpenAPI spec the Kubernetes project publishes, and
// @kubernetes-models/cert-manager's and @kubernetes-models/prometheus-operator's, generated
// from those projects' CRDs; nothing here describes a field. Every error is one line
// "FILE: KIND/NAME: path message". --out writes the objects as a JSON array of
// {file, object}. --expect-invalid inverts the exit code (the test's proof that it can fail).
import fs from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

const args = process.argv.slice(2);
const outAt = args.indexOf('--out');
const out = outAt >= 0 ? args[outAt + 1] : null;
const expectInvalid = args.includes('--expect-invalid');
const files = args.filter((a, i) => !a.startsWith('--') && (outAt < 0 || i !== outAt + 1));
if (files.length === 0) {
  console.error('usage: node validate.mjs FILE.yaml... [--out FILE] [--expect-invalid]');
  process.exit(2);
}

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
  if (group === 'monitoring.coreos.com') {
    return `@kubernetes-models/prometheus-operator/${group}/${version}/${kind}`;
  }
  return group ? `kubernetes-models/${group}/${version}/${kind}` : `kubernetes-models/${version}/${kind}`;
}

const errors = [];
const rendered = [];
for (const file of files) {
  let objects;
  try {
    objects = loadYaml(file);
  } catch (e) {
    errors.push(e.message);
    continue;
  }
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.name ?? o.metadata?.generateName ?? '?'}`;
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
    rendered.push({ file: path.basename(file), object: o });
    console.log(`valid: ${path.basename(file)}: ${o.apiVersion} ${id}`);
  }
}
for (const e of errors) console.error(`invalid: ${e}`);
if (out) fs.writeFileSync(out, JSON.stringify(rendered, null, 1));
const invalid = errors.length > 0;
console.log(`${rendered.length} objects valid, ${errors.length} errors`);
process.exit(invalid === expectInvalid ? 0 : 1);
