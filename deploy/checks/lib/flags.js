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
      for (const m of src.matchAll(/\bCommonFlags\.(\w+)\(\)/g)) {
        if (shared.has(m[1])) result.add(envFor(shared.get(m[1])));
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

/** common's shared flags: the method of CommonFlags -> the flag it defines. */
function commonFlags(root) {
  const f = path.join(root, 'common', 'src', 'main', 'java', 'io', 'watchfanout', 'common', 'CommonFlags.java');
  const out = new Map();
  if (!fs.existsSync(f)) return out;
  const src = fs.readFileSync(f, 'utf8');
  for (const m of src.matchAll(/\b(\w+)\(\)\s*\{\s*return\s+Flag\.\w+\(\s*"(--[^"]+)"/g)) out.set(m[1], m[2]);
  return out;
}

/** The runnable module an image or Dockerfile name refers to, or null. */
function moduleOfImage(name) {
  if (!name) return null;
  if (/fanout-node/.test(name)) return 'fanout-node';
  if (/ingester/.test(name)) return 'ingester';
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
