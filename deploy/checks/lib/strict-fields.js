'use strict';
// Unknown-field check for Kubernetes objects, the part of `kubectl apply --validate=strict`
// that kubernetes-models' JSON-schema validators leave out (their schemas allow additional
// properties, so a misspelt `readinessprobe:` would pass them).
//
// The field lists come from the TypeScript declarations that kubernetes-models generates from
// the Kubernetes OpenAPI document: every model has a `<Name>.d.ts` holding
//   export interface IName { "field"?: Type; ... }
// with Type one of: a primitive or a union of string literals, `IIoK8s...` (another model,
// imported at the top of the file), `Array<T>`, or `{ [key: string]: T; }`. Anything else is
// treated as free-form (not checked further).

const fs = require('fs');
const path = require('path');

const { closest } = require('./util');

const NODE_MODULES = path.join(__dirname, '..', 'node_modules');

// file -> { imports: {name: absFile}, interfaces: {name: {fields}}, aliases: {exported: local}, types: Set }
const fileCache = new Map();

function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
}

// Index of the bracket that closes the one opening at `start` ({, < or [), string-aware.
function matchClose(s, start) {
  let depth = 0;
  for (let i = start; i < s.length; i++) {
    const c = s[i];
    if (c === '"') {
      i = s.indexOf('"', i + 1);
      if (i < 0) return -1;
      continue;
    }
    if (c === '{' || c === '<' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === '>' || c === ']' || c === ')') {
      depth--;
      if (depth === 0) return i;
    }
  }
  return -1;
}

// Splits at top-level occurrences of `sep`.
function splitTop(s, sep) {
  const parts = [];
  let depth = 0;
  let last = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') {
      i = s.indexOf('"', i + 1);
      continue;
    }
    if (c === '{' || c === '<' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === '>' || c === ']' || c === ')') depth--;
    else if (c === sep && depth === 0) {
      parts.push(s.slice(last, i));
      last = i + 1;
    }
  }
  parts.push(s.slice(last));
  return parts.map((p) => p.trim()).filter((p) => p.length > 0);
}

function resolveImport(fromFile, spec) {
  if (spec.startsWith('.')) return path.resolve(path.dirname(fromFile), spec + '.d.ts');
  return path.join(NODE_MODULES, spec + '.d.ts');
}

function parseFile(file) {
  if (fileCache.has(file)) return fileCache.get(file);
  const info = { imports: {}, interfaces: {}, aliases: {}, types: new Set() };
  fileCache.set(file, info);
  if (!fs.existsSync(file)) return info;
  const src = stripComments(fs.readFileSync(file, 'utf8'));

  for (const m of src.matchAll(/import\s*\{([^}]*)\}\s*from\s*"([^"]+)"/g)) {
    for (const name of m[1].split(',').map((n) => n.trim()).filter(Boolean)) {
      const [orig, local] = name.split(/\s+as\s+/).map((x) => x.trim());
      info.imports[local || orig] = resolveImport(file, m[2]);
    }
  }
  for (const m of src.matchAll(/export\s*\{([^}]*)\}/g)) {
    for (const name of m[1].split(',').map((n) => n.trim()).filter(Boolean)) {
      const [orig, exported] = name.split(/\s+as\s+/).map((x) => x.trim());
      info.aliases[exported || orig] = orig;
    }
  }
  for (const m of src.matchAll(/export\s+(?:declare\s+)?type\s+(\w+)/g)) info.types.add(m[1]);

  const re = /export\s+interface\s+(\w+)(\s+extends\s+[\w\s,<>]+)?\s*\{/g;
  let m;
  while ((m = re.exec(src)) !== null) {
    const open = m.index + m[0].length - 1;
    const close = matchClose(src, open);
    const body = src.slice(open + 1, close);
    const fields = {};
    for (const member of splitTop(body, ';')) {
      const fm = /^"([^"]+)"\??\s*:\s*([\s\S]+)$/.exec(member) || /^(\w+)\??\s*:\s*([\s\S]+)$/.exec(member);
      if (fm) fields[fm[1]] = fm[2].trim();
    }
    // TypeMeta (from @kubernetes-models/base) contributes apiVersion and kind, which every
    // such interface also lists itself.
    info.interfaces[m[1]] = { fields };
    re.lastIndex = close;
  }
  return info;
}

// A type reference resolved to { file, interfaceName } or null (a type alias or unknown).
function resolveRef(file, name) {
  const info = parseFile(file);
  if (info.interfaces[name]) return { file, name };
  const local = info.aliases[name];
  if (local && info.interfaces[local]) return { file, name: local };
  if (info.types.has(name) || (local && info.types.has(local))) return null;
  const imported = info.imports[name];
  if (imported && imported !== file) return resolveRef(imported, name);
  return null;
}

// Describes a type string as a shape: {kind: 'object', file, name} | {kind: 'array', of}
// | {kind: 'map', of} | {kind: 'leaf'}.
function shapeOf(file, type) {
  type = type.trim();
  const arr = /^Array<([\s\S]+)>$/.exec(type);
  if (arr) return { kind: 'array', of: shapeOf(file, arr[1]) };
  const map = /^\{\s*\[key:\s*string\]\s*:\s*([\s\S]+?);?\s*\}$/.exec(type);
  if (map) return { kind: 'map', of: shapeOf(file, map[1]) };
  if (/^\w+$/.test(type) && /^I/.test(type)) {
    const ref = resolveRef(file, type);
    if (ref) return { kind: 'object', file: ref.file, name: ref.name };
  }
  return { kind: 'leaf' };
}

function checkValue(value, shape, where, errors) {
  if (value === null || value === undefined) return;
  if (shape.kind === 'array') {
    if (Array.isArray(value)) value.forEach((v, i) => checkValue(v, shape.of, `${where}[${i}]`, errors));
    return;
  }
  if (shape.kind === 'map') {
    if (typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) checkValue(v, shape.of, `${where}.${k}`, errors);
    }
    return;
  }
  if (shape.kind === 'object') {
    if (typeof value !== 'object' || Array.isArray(value)) return; // type errors: the schema check
    const iface = parseFile(shape.file).interfaces[shape.name];
    if (!iface) return;
    for (const [k, v] of Object.entries(value)) {
      const fieldType = iface.fields[k];
      if (fieldType === undefined) {
        const hint = closest(k, Object.keys(iface.fields));
        errors.push(`${where}.${k}: unknown field${hint ? ` (did you mean "${hint}"?)` : ''}`);
        continue;
      }
      checkValue(v, shapeOf(shape.file, fieldType), `${where}.${k}`, errors);
    }
  }
}

/**
 * Unknown fields of a Kubernetes object, as messages; [] when every field is known.
 * @param {object} obj the object (apiVersion, kind, ...)
 * @param {string} declFile the model's .d.ts, e.g. node_modules/kubernetes-models/apps/v1/Deployment.d.ts
 */
function unknownFields(obj, declFile) {
  const info = parseFile(declFile);
  const names = Object.keys(info.interfaces);
  if (names.length === 0) throw new Error(`no interface found in ${declFile}`);
  const errors = [];
  checkValue(obj, { kind: 'object', file: declFile, name: names[0] }, '', errors);
  return errors.map((e) => e.replace(/^\./, ''));
}

module.exports = { unknownFields, NODE_MODULES };
