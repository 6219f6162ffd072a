'use strict';
// watch-fanout's own checks of docker-compose.yml, on top of `docker-compose config` (which
// checks the file against the Compose schema):
//   COMPOSE-HEALTH   a `depends_on: {condition: service_healthy}` target has a health check
//                    (its own, or its Dockerfile's HEALTHCHECK CMD)
//   COMPOSE-VOLUME   etcd and Kafka keep their data on named volumes, all declared
//   COMPOSE-ENV      every WATCHFANOUT_* variable of an ingester, kube-topics or fan-out service
//                    is a flag of that runnable
//   COMPOSE-FANOUT   fan-out: listens on 0.0.0.0, publishes and probes the port it listens on,
//                    and its stop_grace_period exceeds its shutdown drain
//   COMPOSE-INGESTER ingester: the health check probes /livez on its port
//   COMPOSE-KUBE-TOPICS kube-topics: listens on 0.0.0.0, publishes and probes /readyz on the port
//                    it listens on
//   COMPOSE-KAFKA    single-node KRaft settings (docs/ARCHITECTURE.md, "Notes": replication factor 1 and
//                    min ISR 1 for the offsets and transaction state topics)
//   COMPOSE-ETCD     etcd sends progress notifications (--experimental-watch-progress-notify-interval)
//   COMPOSE-BUILD    every build's Dockerfile exists

const fs = require('fs');
const path = require('path');
const { readYamlDocuments, durationSeconds, composeDurationSeconds } = require('./util');
const { moduleOfImage, unknownEnvVars } = require('./flags');
const { parse } = require('./dockerfile');

function envOf(service) {
  const env = service.environment || {};
  if (Array.isArray(env)) {
    const out = {};
    for (const e of env) {
      const i = String(e).indexOf('=');
      if (i < 0) out[e] = undefined;
      else out[e.slice(0, i)] = e.slice(i + 1);
    }
    return out;
  }
  const out = {};
  for (const [k, v] of Object.entries(env)) out[k] = v === null ? undefined : String(v);
  return out;
}

// Build paths are relative to the compose file's directory.
function dockerfileOf(baseDir, service) {
  const b = service.build;
  if (!b) return null;
  const context = typeof b === 'string' ? b : b.context || '.';
  const dockerfile = typeof b === 'string' ? 'Dockerfile' : b.dockerfile || 'Dockerfile';
  return path.resolve(baseDir, context, dockerfile);
}

function dockerfileHealthcheck(file) {
  if (!file || !fs.existsSync(file)) return null;
  const instrs = parse(fs.readFileSync(file, 'utf8'));
  let last = null;
  for (const i of instrs) {
    if (i.instr === 'FROM') last = null;
    if (i.instr === 'HEALTHCHECK') last = i.args;
  }
  return last;
}

function containerPorts(service) {
  const out = [];
  for (const p of service.ports || []) {
    if (typeof p === 'object') out.push(Number(p.target));
    else {
      const parts = String(p).split('/')[0].split(':');
      out.push(Number(parts[parts.length - 1]));
    }
  }
  return out;
}

/**
 * A service other containers reach: it listens on 0.0.0.0 (`hostVar`, when set), publishes the
 * port it listens on (`portVar`, else `defaultPort`), and its health check probes `path` on that
 * port (its own check; without one, its image's HEALTHCHECK, which names the port by variable).
 * @param {(msg: string) => void} report takes each problem
 */
function checkServed(report, service, env, dockerfile, { hostVar, portVar, defaultPort, path }) {
  if (env[hostVar] !== undefined && env[hostVar] !== '0.0.0.0') {
    report(`${hostVar}=${env[hostVar]} is unreachable from other containers`);
  }
  const port = Number(env[portVar] || defaultPort);
  if (!containerPorts(service).includes(port)) report(`publishes no port ${port} (${portVar})`);
  const own = [].concat((service.healthcheck || {}).test || []).join(' ');
  const probes = own ? own.includes(`:${port}${path}`) : (dockerfileHealthcheck(dockerfile) || '').includes(path);
  if (!probes) report(`the health check does not probe :${port}${path}`);
}

/**
 * @param {string} file docker-compose.yml
 * @param {string} root repository root
 * @returns {string[]} messages
 */
function check(file, root) {
  const [doc] = readYamlDocuments(file);
  const services = (doc && doc.services) || {};
  const volumes = (doc && doc.volumes) || {};
  const errors = [];
  const rel = path.relative(root, file) || file;
  const baseDir = path.dirname(path.resolve(file));
  const err = (rule, msg) => errors.push(`${rel}: ${rule} ${msg}`);

  for (const [name, s] of Object.entries(services)) {
    const df = dockerfileOf(baseDir, s);
    if (df && !fs.existsSync(df)) err('COMPOSE-BUILD', `${name}: ${path.relative(root, df)} does not exist`);

    const deps = s.depends_on || {};
    if (!Array.isArray(deps)) {
      for (const [dep, cond] of Object.entries(deps)) {
        const target = services[dep];
        if (!target) {
          err('COMPOSE-HEALTH', `${name} depends on ${dep}, which is no service`);
          continue;
        }
        if (cond && cond.condition === 'service_healthy') {
          const own = target.healthcheck && !target.healthcheck.disable && target.healthcheck.test;
          const fromImage = dockerfileHealthcheck(dockerfileOf(baseDir, target));
          if (!own && !(fromImage && /^(--\S+\s+)*CMD\s/i.test(fromImage))) {
            err('COMPOSE-HEALTH', `${name} waits for ${dep} to be healthy, but ${dep} has no health check`);
          }
        }
      }
    }

    for (const v of s.volumes || []) {
      const source = typeof v === 'string' ? v.split(':')[0] : v.source;
      const isNamed = source && !source.startsWith('.') && !source.startsWith('/') && !source.startsWith('~');
      if (isNamed && !(source in volumes)) err('COMPOSE-VOLUME', `${name}: volume ${source} is not declared under volumes:`);
    }

    const module = moduleOfImage(s.image) || moduleOfImage(df);
    const env = envOf(s);
    if (module) errors.push(...unknownEnvVars(root, module, Object.keys(env), `${rel}: COMPOSE-ENV ${name}`));

    if (module === 'fanout-node') {
      checkServed((msg) => err('COMPOSE-FANOUT', `${name}: ${msg}`), s, env, df,
        { hostVar: 'WATCHFANOUT_BIND_ADDRESS', portVar: 'WATCHFANOUT_PORT', defaultPort: 8080, path: '/readyz' });
      const drain = env.WATCHFANOUT_SHUTDOWN_DRAIN !== undefined ? durationSeconds(env.WATCHFANOUT_SHUTDOWN_DRAIN) : 5;
      const grace = s.stop_grace_period !== undefined ? composeDurationSeconds(s.stop_grace_period) : 10;
      if (!(grace > drain)) err('COMPOSE-FANOUT', `${name}: stop_grace_period ${grace}s must exceed the shutdown drain ${drain}s`);
    }
    if (module === 'ingester') {
      const port = Number(env.WATCHFANOUT_HTTP_PORT || 9100);
      const test = [].concat((s.healthcheck || {}).test || []).join(' ');
      if (test && !test.includes(`:${port}/livez`)) err('COMPOSE-INGESTER', `${name}: the health check does not probe :${port}/livez`);
    }
    if (module === 'kube-kafka') {
      checkServed((msg) => err('COMPOSE-KUBE-TOPICS', `${name}: ${msg}`), s, env, df,
        { hostVar: 'WATCHFANOUT_HTTP_HOST', portVar: 'WATCHFANOUT_HTTP_PORT', defaultPort: 8095, path: '/readyz' });
    }
  }

  const kafka = Object.entries(services).find(([n, s]) => /kafka/.test(n) || /kafka/.test(s.image || ''));
  if (!kafka) err('COMPOSE-KAFKA', 'no Kafka service');
  else {
    const env = envOf(kafka[1]);
    const want = {
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
    };
    for (const [k, v] of Object.entries(want)) {
      if (env[k] !== v) err('COMPOSE-KAFKA', `${kafka[0]}: ${k} must be ${v} on a single broker (else initTransactions() times out)`);
    }
    if (!/broker/.test(env.KAFKA_PROCESS_ROLES || '') || !/controller/.test(env.KAFKA_PROCESS_ROLES || '')) {
      err('COMPOSE-KAFKA', `${kafka[0]}: KAFKA_PROCESS_ROLES must be broker,controller (single-node KRaft)`);
    }
    if (!(kafka[1].volumes || []).some((v) => !String(typeof v === 'string' ? v : v.source).startsWith('/'))) {
      err('COMPOSE-VOLUME', `${kafka[0]}: keep the Kafka data on a named volume`);
    }
  }
  const etcd = Object.entries(services).find(([n, s]) => /etcd/.test(n) || /etcd/.test(s.image || ''));
  if (!etcd) err('COMPOSE-ETCD', 'no etcd service');
  else {
    const cmd = [].concat(etcd[1].command || []).join(' ') + ' ' + JSON.stringify(envOf(etcd[1]));
    if (!/experimental-watch-progress-notify-interval|EXPERIMENTAL_WATCH_PROGRESS_NOTIFY_INTERVAL/.test(cmd)) {
      err('COMPOSE-ETCD', `${etcd[0]}: set --experimental-watch-progress-notify-interval (progress for quiet ranges)`);
    }
    if (!(etcd[1].volumes || []).some((v) => !String(typeof v === 'string' ? v : v.source).startsWith('/'))) {
      err('COMPOSE-VOLUME', `${etcd[0]}: keep the etcd data on a named volume`);
    }
  }
  return errors;
}

module.exports = { check };
