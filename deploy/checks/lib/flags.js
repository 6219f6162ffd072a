'use strict';
// The WATCHFANOUT_* environment variables a runnable reads: one per long option of its
// picocli command (common/EnvironmentDefaults: --kafka-bootstrap -> WATCHFANOUT_KAFKA_BOOTSTRAP).
// Read from the sources under <module>/src/main/java, so the check needs no build and sees flags
// that are being added in the same change: the flag table's definitions (`Flag.duration("--flag")`,
// and the shared ones of common's CommonFlags that the module names, `CommonFlags.topicPrefix()`)
// and any picocli `@Option(names = "--flag" ...)`.

const fs = require('fs');
const path = require('path');
const { closest } = require('./util');

function javaFiles(dir) {
  if (!fs.existsSync(dir)) return [];
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...javaFiles(p));
    else if (e.name.endsWith('.java')) out.push(p);
  }
  return out;
}

function envFor(longName) {
  return 'WATCHFANOUT_' + longName.replace(/^-+/, '').replace(/-/g, '_').toUpperCase();
}

const cache = new Map();

/**
 * @param {string} root the repository root
 * @param {string} module a Maven module directory, e.g. "fanout-node"
 * @returns {Set<string>|null} the variables, or null when the module has no sources here
 */
function envVarsOf(root, module) {
  const key = root + '\0' + module;
  if (cache.has(key)) return cache.get(key);
  const files = javaFiles(path.join(root, module, 'src', 'main', 'java'));
  let result = null;
  if (files.length > 0) {
    result = new Set();
    for (const f of files) {
      const src = fs.readFileSync(f, 'utf8');
      for (const m of src.matchAll(/\bFlag\.\w+\(\s*"(--[^"]+)"/g)) result.add(envFor(m[1]));
      const shared = commonFlags(root);
      for (const m of src.matchAll(/\bCommonFlags\.(\w+)\(/g)) {
        for (const flag of shared.get(m[1]) || []) result.add(envFor(flag));
      }
      for (const m of src.matchAll(/@Option\s*\(([\s\S]*?)\)\s*(?:\n|\s)/g)) {
        const names = /names\s*=\s*(\{[^}]*\}|"[^"]*")/.exec(m[1]);
        if (!names) continue;
        const longest = [...names[1].matchAll(/"(-[^"]*)"/g)].map((x) => x[1])
          .sort((a, b) => b.length - a.length)[0];
        if (longest && longest.startsWith('--')) result.add(envFor(longest));
      }
    }
  }
  cache.set(key, result);
  return result;
}

/**
 * common's shared flags: each method of CommonFlags -> the flags defined in its body, by literal
 * (`Flag.path("--etcd-cert", ...)`) or by a String constant of common (`Flag.path(TlsFiles.CERT_FLAG, ...)`).
 */
function commonFlags(root) {
  const dir = path.join(root, 'common', 'src', 'main', 'java');
  const f = path.join(dir, 'io', 'watchfanout', 'common', 'CommonFlags.java');
  const out = new Map();
  if (!fs.existsSync(f)) return out;
  const constants = new Map();
  for (const file of javaFiles(dir)) {
    const src = fs.readFileSync(file, 'utf8');
    const cls = path.basename(file, '.java');
    for (const m of src.matchAll(/static\s+final\s+String\s+(\w+)\s*=\s*"(--[^"]+)"/g)) constants.set(cls + '.' + m[1], m[2]);
  }
  const src = fs.readFileSync(f, 'utf8');
  const starts = [...src.matchAll(/public\s+static\s+[^;{=]*?\b(\w+)\s*\([^)]*\)[^{;]*\{/g)];
  starts.forEach((m, i) => {
    const body = src.slice(m.index, i + 1 < starts.length ? starts[i + 1].index : src.length);
    const flags = [];
    for (const x of body.matchAll(/\bFlag\.\w+\(\s*(?:"(--[^"]+)"|(\w+\.\w+))/g)) {
      const flag = x[1] || constants.get(x[2]);
      if (flag) flags.push(flag);
    }
    if (flags.length > 0) out.set(m[1], flags);
  });
  return out;
}

/** The runnable module an image or Dockerfile name refers to, or null. */
function moduleOfImage(name) {
  if (!name) return null;
  if (/fanout-node/.test(name)) return 'fanout-node';
  if (/ingester/.test(name)) return 'ingester';
  // The Kubernetes topics application: KubeTopicsMain of kube-kafka (kube-topics.jar).
  if (/kube-topics/.test(name)) return 'kube-kafka';
  return null;
}

/**
 * Messages for the WATCHFANOUT_* names that the runnable does not read.
 * @param {string} root repository root
 * @param {string} module runnable module
 * @param {string[]} names variable names (others than WATCHFANOUT_* are ignored)
 * @param {string} where context for the messages
 */
function unknownEnvVars(root, module, names, where) {
  const known = envVarsOf(root, module);
  if (!known) return [];
  const errors = [];
  for (const n of names) {
    if (!n.startsWith('WATCHFANOUT_')) continue;
    if (!known.has(n)) {
      const hint = closest(n, [...known]);
      errors.push(`${where}: ${n} is no flag of ${module}${hint ? ` (did you mean ${hint}?)` : ''}`);
    }
  }
  return errors;
}

module.exports = { envVarsOf, moduleOfImage, unknownEnvVars, envFor };
