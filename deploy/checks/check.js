#!/usr/bin/env node
'use strict';
// Offline checks of watch-fanout's deployment files; run by deploy/validate.
//
//   node check.js k8s ROOT LABEL=RENDERED.yaml...   rendered kustomizations
//   node check.js compose ROOT docker-compose.yml    watch-fanout rules for the compose file
//   node check.js dockerfiles ROOT Dockerfile...     Dockerfile lint (+ .dockerignore)
//   node check.js selftest ROOT                      every checker rejects its bad fixture
//
// Exit status: 0 when clean, 1 when a check failed, 2 on bad usage.

const fs = require('fs');
const path = require('path');
const { validateObjects } = require('./lib/k8s');
const compose = require('./lib/compose');
const dockerfile = require('./lib/dockerfile');
const { readYamlDocuments } = require('./lib/util');

function report(what, errors, okLine) {
  if (errors.length > 0) {
    for (const e of errors) console.error(`  FAIL ${e}`);
    console.error(`${what}: ${errors.length} problem(s)`);
    return false;
  }
  console.log(`${what}: ${okLine}`);
  return true;
}

function k8s(root, specs) {
  let ok = true;
  for (const spec of specs) {
    const i = spec.indexOf('=');
    const label = spec.slice(0, i);
    const file = spec.slice(i + 1);
    const objects = readYamlDocuments(file);
    const kinds = objects.map((o) => o.kind).sort().join(', ');
    const errors = objects.length === 0 ? [`${label}: rendered no object`] : validateObjects(objects, { root, label });
    ok = report(`k8s ${label}`, errors, `${objects.length} objects valid (${kinds})`) && ok;
  }
  return ok;
}

function composeCheck(root, file) {
  return report(`compose ${path.relative(root, file)}`, compose.check(file, root), 'watch-fanout rules hold');
}

function dockerfiles(root, files) {
  let ok = report('.dockerignore', dockerfile.lintDockerignore(root, files), 'ok');
  for (const f of files) {
    ok = report(`lint ${path.relative(root, f)}`, dockerfile.lint(f, root), 'ok') && ok;
  }
  return ok;
}

// Each fixture must fail with at least the listed rules: proof that the checks bite.
function selftest(root) {
  const dir = path.join(__dirname, 'testdata');
  const cases = [
    {
      name: 'bad-k8s.yaml',
      run: () => validateObjects(readYamlDocuments(path.join(dir, 'bad-k8s.yaml')), { root, label: 'bad-k8s' }),
      expect: ['strict: spec.template.spec.containers[0].readinessprobe: unknown field', 'schema: spec.template.spec.containers[0].ports[0].containerPort must be integer',
        'unknown apiVersion/kind', 'K8S-REF', 'K8S-FANOUT', 'K8S-INGESTER', 'K8S-MATERIALIZER', 'K8S-KUBE-TOPICS', 'K8S-ENV', 'K8S-HPA', 'K8S-PROBES', 'K8S-NONROOT', 'K8S-PDB'],
    },
    {
      name: 'bad.Dockerfile',
      run: () => dockerfile.lint(path.join(dir, 'bad.Dockerfile'), root),
      expect: ['DL3002', 'DL3006', 'DL3007', 'DL3020', 'DL3025', 'DL3015', 'DL3009', 'DL4006', 'DL3022', 'WF001', 'WF003', 'WF005', 'WF006', 'WF007', 'WF008'],
    },
    {
      name: 'bad-compose.yml',
      run: () => compose.check(path.join(dir, 'bad-compose.yml'), root),
      expect: ['COMPOSE-HEALTH', 'COMPOSE-VOLUME', 'COMPOSE-ENV', 'COMPOSE-FANOUT', 'COMPOSE-KAFKA', 'COMPOSE-ETCD', 'COMPOSE-BUILD',
        'COMPOSE-ENV kube-topics', 'COMPOSE-KUBE-TOPICS'],
    },
  ];
  let ok = true;
  for (const c of cases) {
    const errors = c.run();
    const missing = c.expect.filter((rule) => !errors.some((e) => e.includes(rule)));
    if (missing.length > 0) {
      ok = false;
      console.error(`  FAIL selftest ${c.name}: not reported: ${missing.join(', ')}`);
      for (const e of errors) console.error(`    (reported) ${e}`);
    }
  }
  console.log(ok ? `selftest: every checker rejects its bad fixture (${cases.length} fixtures)` : 'selftest: failed');
  return ok;
}

function main(argv) {
  const [cmd, root, ...rest] = argv;
  if (!cmd || !root || !fs.existsSync(root)) {
    console.error('usage: check.js k8s|compose|dockerfiles|selftest ROOT [ARGS...]');
    return 2;
  }
  const absRoot = path.resolve(root);
  switch (cmd) {
    case 'k8s':
      return k8s(absRoot, rest) ? 0 : 1;
    case 'compose':
      return composeCheck(absRoot, path.resolve(rest[0])) ? 0 : 1;
    case 'dockerfiles':
      return dockerfiles(absRoot, rest.map((f) => path.resolve(f))) ? 0 : 1;
    case 'selftest':
      return selftest(absRoot) ? 0 : 1;
    default:
      console.error(`unknown command ${cmd}`);
      return 2;
  }
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  console.error(`check.js: ${e.stack || e}`);
  process.exitCode = 1;
}
