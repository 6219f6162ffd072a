'use strict';

const fs = require('fs');
const YAML = require('yaml');

/** Seconds of a watch-fanout duration ("500ms", "5s", "10m", "2h", "7d"), or NaN. */
function durationSeconds(text) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(String(text));
  if (!m) return NaN;
  const unit = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[m[2]];
  return Number(m[1]) * unit;
}

/** Seconds of a Compose duration ("15s", "1m30s", "500ms"), or NaN. */
function composeDurationSeconds(text) {
  if (typeof text === 'number') return text;
  const s = String(text).trim();
  let total = 0;
  let rest = s;
  const re = /^(\d+(?:\.\d+)?)(us|ms|s|m|h)/;
  if (!rest) return NaN;
  while (rest.length > 0) {
    const m = re.exec(rest);
    if (!m) return NaN;
    total += Number(m[1]) * { us: 1e-6, ms: 0.001, s: 1, m: 60, h: 3600 }[m[2]];
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Every document of a multi-document YAML file, as plain objects (nulls dropped). */
function readYamlDocuments(file) {
  const text = fs.readFileSync(file, 'utf8');
  const docs = YAML.parseAllDocuments(text, { merge: true });
  const out = [];
  for (const d of docs) {
    if (d.errors && d.errors.length > 0) {
      throw new Error(`${file}: ${d.errors.map((e) => e.message).join('; ')}`);
    }
    const v = d.toJS({ maxAliasCount: 100 });
    if (v !== null && v !== undefined) out.push(v);
  }
  return out;
}

/** Levenshtein distance, for "did you mean" hints. */
function distance(a, b) {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) dp[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      dp[i][j] = Math.min(dp[i - 1][j] + 1, dp[i][j - 1] + 1,
        dp[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
  }
  return dp[a.length][b.length];
}

/** The closest candidate to `word` (case-insensitive equal or at most 2 edits), or null. */
function closest(word, candidates) {
  let best = null;
  let bestD = Infinity;
  for (const c of candidates) {
    const d = c.toLowerCase() === word.toLowerCase() ? 0 : distance(word, c);
    if (d < bestD) {
      best = c;
      bestD = d;
    }
  }
  return bestD <= 2 ? best : null;
}

module.exports = { durationSeconds, composeDurationSeconds, readYamlDocuments, closest };
