'use strict';
// Validation of rendered Kubernetes objects (the output of `kubectl kustomize`), offline:
//   1. schema: each object against the Kubernetes OpenAPI schema of its apiVersion/kind, with
//      kubernetes-models' validators (types, required fields, enums, formats);
//   2. strict fields: no field the schema does not define (lib/strict-fields.js);
//   3. references and watch-fanout's own rules (the "K8S-*" messages below), among them that some
//      container runs the state materializer (K8S-MATERIALIZER) and that the Kubernetes topics
//      application is probed on its /readyz, over plain HTTP (K8S-KUBE-TOPICS).

const path = require('path');
const { unknownFields, NODE_MODULES } = require('./strict-fields');
const { moduleOfImage, unknownEnvVars } = require('./flags');
const { durationSeconds } = require('./util');

function modelPaths(apiVersion, kind) {
  const parts = String(apiVersion).split('/');
  const rel = parts.length === 1 ? ['v1'] : [parts[0], parts[1]];
  return {
    module: ['kubernetes-models', ...rel].join('/'),
    decl: path.join(NODE_MODULES, 'kubernetes-models', ...rel, `${kind}.d.ts`),
  };
}

function schemaErrors(obj) {
  const { module, decl } = modelPaths(obj.apiVersion, obj.kind);
  let Model;
  try {
    Model = require(module)[obj.kind];
  } catch (e) {
    Model = undefined;
  }
  if (typeof Model !== 'function') {
    return [`unknown apiVersion/kind ${obj.apiVersion}/${obj.kind} (not in the Kubernetes API of kubernetes-models)`];
  }
  const errors = [];
  try {
    new Model(obj).validate();
  } catch (e) {
    const list = e.errors || e.details || [];
    if (list.length === 0) errors.push(`schema: ${e.message}`);
    for (const d of list) {
      const where = (d.instancePath || '').replace(/\/(\d+)(?=\/|$)/g, '[$1]').replace(/^\//, '').replace(/\//g, '.');
      const extra = d.params && d.params.allowedValues ? ` (${d.params.allowedValues.join(', ')})` : '';
      errors.push(`schema: ${where || '(object)'} ${d.message}${extra}`);
    }
  }
  for (const u of unknownFields(obj, decl)) errors.push(`strict: ${u}`);
  return errors;
}

function matches(selector, labels) {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels && labels[k] === v);
}

function podTemplateLabels(d) {
  return (((d.spec || {}).template || {}).metadata || {}).labels || {};
}

function containersOf(d) {
  return ((((d.spec || {}).template || {}).spec || {}).containers) || [];
}

function portResolves(port, container) {
  const ports = container.ports || [];
  if (typeof port === 'number') return ports.some((p) => p.containerPort === port);
  return ports.some((p) => p.name === port);
}

function portNumber(port, container) {
  if (typeof port === 'number') return port;
  const p = (container.ports || []).find((x) => x.name === port);
  return p ? p.containerPort : undefined;
}

/** Environment of a container: its env values plus the data of the ConfigMaps it envFroms. */
function environmentOf(container, configMaps, where, errors) {
  const env = {};
  for (const ef of container.envFrom || []) {
    if (ef.configMapRef) {
      const cm = configMaps.get(ef.configMapRef.name);
      if (!cm) {
        if (!ef.configMapRef.optional) {
          errors.push(`K8S-REF ${where}: envFrom ConfigMap ${ef.configMapRef.name} is not in the rendered output`);
        }
        continue;
      }
      Object.assign(env, cm.data || {});
    }
  }
  for (const e of container.env || []) {
    if (e.valueFrom && e.valueFrom.configMapKeyRef) {
      const ref = e.valueFrom.configMapKeyRef;
      const cm = configMaps.get(ref.name);
      if (!cm && !ref.optional) errors.push(`K8S-REF ${where}: env ${e.name} refers to missing ConfigMap ${ref.name}`);
      env[e.name] = cm && cm.data ? cm.data[ref.key] : undefined;
    } else {
      env[e.name] = e.value !== undefined ? e.value : '(from ' + Object.keys(e.valueFrom || {}).join(',') + ')';
    }
  }
  return env;
}

function preStopSleepSeconds(container) {
  const ps = (container.lifecycle || {}).preStop;
  if (!ps) return 0;
  if (ps.sleep && typeof ps.sleep.seconds === 'number') return ps.sleep.seconds;
  const cmd = (ps.exec || {}).command || [];
  const i = cmd.indexOf('sleep');
  if (i >= 0 && i + 1 < cmd.length) return Number(cmd[i + 1]) || 0;
  return 0;
}

/**
 * @param {object[]} objects the rendered objects of one kustomization
 * @param {{root: string, label: string}} ctx repository root (for the flag lists) and a label
 * @returns {string[]} error messages
 */
function validateObjects(objects, ctx) {
  const errors = [];
  const byKind = (k) => objects.filter((o) => o && o.kind === k);
  const name = (o) => `${o.kind}/${(o.metadata || {}).name}`;

  const seen = new Set();
  for (const o of objects) {
    if (!o || typeof o !== 'object' || !o.apiVersion || !o.kind) {
      errors.push('an object without apiVersion or kind');
      continue;
    }
    const id = `${o.apiVersion}/${name(o)}`;
    if (seen.has(id)) errors.push(`${name(o)}: defined twice`);
    seen.add(id);
    for (const e of schemaErrors(o)) errors.push(`${name(o)}: ${e}`);
  }

  const configMaps = new Map(byKind('ConfigMap').map((c) => [c.metadata.name, c]));
  const deployments = byKind('Deployment');
  // Containers of the ingester image that run the state materializer (in process or on its own).
  const materializers = [];

  for (const d of deployments) {
    const w = name(d);
    const spec = d.spec || {};
    const tpl = spec.template || {};
    const podSpec = tpl.spec || {};
    const sel = (spec.selector || {}).matchLabels || {};
    if (!matches(sel, podTemplateLabels(d))) {
      errors.push(`K8S-SELECTOR ${w}: spec.selector.matchLabels does not match the pod template's labels`);
    }
    const psc = podSpec.securityContext || {};
    if (psc.runAsNonRoot !== true) errors.push(`K8S-NONROOT ${w}: pod securityContext.runAsNonRoot must be true`);

    const ann = (tpl.metadata || {}).annotations || {};
    const grace = podSpec.terminationGracePeriodSeconds === undefined ? 30 : podSpec.terminationGracePeriodSeconds;

    for (const c of containersOf(d)) {
      const cw = `${w} container ${c.name}`;
      const res = c.resources || {};
      for (const r of ['cpu', 'memory']) {
        if (!(res.requests || {})[r]) errors.push(`K8S-RESOURCES ${cw}: resources.requests.${r} is not set`);
      }
      if (!(res.limits || {}).memory) errors.push(`K8S-RESOURCES ${cw}: resources.limits.memory is not set`);
      for (const probe of ['readinessProbe', 'livenessProbe']) {
        const p = c[probe];
        if (!p) {
          errors.push(`K8S-PROBES ${cw}: no ${probe}`);
          continue;
        }
        if (p.httpGet && !portResolves(p.httpGet.port, c)) {
          errors.push(`K8S-PROBES ${cw}: ${probe}.httpGet.port ${p.httpGet.port} is no port of the container`);
        }
      }
      if (c.startupProbe && c.startupProbe.httpGet && !portResolves(c.startupProbe.httpGet.port, c)) {
        errors.push(`K8S-PROBES ${cw}: startupProbe.httpGet.port ${c.startupProbe.httpGet.port} is no port of the container`);
      }
      if (ann['prometheus.io/scrape'] === 'true') {
        const port = Number(ann['prometheus.io/port']);
        if (!(c.ports || []).some((p) => p.containerPort === port)) {
          errors.push(`K8S-PROMETHEUS ${cw}: annotation prometheus.io/port=${ann['prometheus.io/port']} is no port of the container`);
        }
      }

      const env = environmentOf(c, configMaps, cw, errors);
      const module = moduleOfImage(c.image);
      if (module) {
        errors.push(...unknownEnvVars(ctx.root, module, Object.keys(env), `K8S-ENV ${cw}`));
      }
      if (module === 'fanout-node') {
        const httpPort = Number(env.WATCHFANOUT_PORT);
        if (env.WATCHFANOUT_PORT === undefined) {
          errors.push(`K8S-FANOUT ${cw}: WATCHFANOUT_PORT is not set (the node has no default port)`);
        } else if (!(c.ports || []).some((p) => p.containerPort === httpPort)) {
          errors.push(`K8S-FANOUT ${cw}: WATCHFANOUT_PORT=${env.WATCHFANOUT_PORT} is no containerPort`);
        }
        if (env.WATCHFANOUT_BIND_ADDRESS !== '0.0.0.0') {
          errors.push(`K8S-FANOUT ${cw}: WATCHFANOUT_BIND_ADDRESS must be 0.0.0.0 in a pod (the node's default is 127.0.0.1)`);
        }
        if (((c.readinessProbe || {}).httpGet || {}).path !== '/readyz') {
          errors.push(`K8S-FANOUT ${cw}: readinessProbe must be GET /readyz (cache caught up)`);
        }
        if (((c.livenessProbe || {}).httpGet || {}).path !== '/livez') {
          errors.push(`K8S-FANOUT ${cw}: livenessProbe must be GET /livez`);
        }
        const drain = env.WATCHFANOUT_SHUTDOWN_DRAIN !== undefined ? durationSeconds(env.WATCHFANOUT_SHUTDOWN_DRAIN) : 5;
        const sleep = preStopSleepSeconds(c);
        if (sleep <= 0) errors.push(`K8S-FANOUT ${cw}: no preStop delay before SIGTERM`);
        if (!(grace > sleep + drain)) {
          errors.push(`K8S-FANOUT ${w}: terminationGracePeriodSeconds ${grace} must exceed preStop ${sleep}s + shutdown drain ${drain}s`);
        }
      }
      if (module === 'kube-kafka') {
        const port = Number(env.WATCHFANOUT_HTTP_PORT || 8095);
        if (!(c.ports || []).some((p) => p.containerPort === port)) {
          errors.push(`K8S-KUBE-TOPICS ${cw}: WATCHFANOUT_HTTP_PORT=${port} is no containerPort`);
        }
        if (env.WATCHFANOUT_HTTP_HOST !== undefined && env.WATCHFANOUT_HTTP_HOST !== '0.0.0.0') {
          errors.push(`K8S-KUBE-TOPICS ${cw}: WATCHFANOUT_HTTP_HOST=${env.WATCHFANOUT_HTTP_HOST} is unreachable by the kubelet's probes`);
        }
        const readiness = (c.readinessProbe || {}).httpGet || {};
        if (readiness.path !== '/readyz' || portNumber(readiness.port, c) !== port) {
          errors.push(`K8S-KUBE-TOPICS ${cw}: readinessProbe must be GET /readyz on port ${port} (Kafka Streams running)`);
        }
        if (String(readiness.scheme || 'HTTP').toUpperCase() !== 'HTTP') {
          errors.push(`K8S-KUBE-TOPICS ${cw}: the application serves plain HTTP; readinessProbe scheme ${readiness.scheme} fails`);
        }
      }
      if (module === 'ingester') {
        const replicas = spec.replicas === undefined ? 1 : spec.replicas;
        const election = String(env.WATCHFANOUT_LEADER_ELECTION || 'false').toLowerCase() === 'true';
        const publisher = String(env.WATCHFANOUT_PUBLISHER || 'true').toLowerCase() !== 'false';
        if (String(env.WATCHFANOUT_MATERIALIZER || 'true').toLowerCase() !== 'false') materializers.push(cw);
        if (publisher && replicas > 1 && !election) {
          errors.push(`K8S-INGESTER ${w}: ${replicas} replicas need WATCHFANOUT_LEADER_ELECTION=true (else they fence each other)`);
        }
        if (publisher && ((c.readinessProbe || {}).httpGet || {}).path === '/readyz' && replicas > 1) {
          errors.push(`K8S-INGESTER ${cw}: readiness on /readyz would keep the standby replica unready and stall rollouts`);
        }
      }
    }
  }

  if (deployments.some((d) => containersOf(d).some((c) => moduleOfImage(c.image) === 'ingester')) && materializers.length === 0) {
    errors.push('K8S-MATERIALIZER no container runs the state materializer (every ingester has WATCHFANOUT_MATERIALIZER=false): fan-out nodes could not rebuild');
  }

  for (const s of byKind('Service')) {
    const sel = (s.spec || {}).selector;
    if (!sel) continue;
    const targets = deployments.filter((d) => matches(sel, podTemplateLabels(d)));
    if (targets.length === 0) {
      errors.push(`K8S-REF ${name(s)}: selector matches no Deployment's pods`);
      continue;
    }
    for (const p of (s.spec.ports || [])) {
      const tp = p.targetPort === undefined ? p.port : p.targetPort;
      for (const d of targets) {
        if (!containersOf(d).some((c) => portResolves(tp, c))) {
          errors.push(`K8S-REF ${name(s)}: targetPort ${tp} is no container port of ${name(d)}`);
        }
      }
    }
  }

  for (const h of byKind('HorizontalPodAutoscaler')) {
    const ref = (h.spec || {}).scaleTargetRef || {};
    const d = deployments.find((x) => ref.kind === 'Deployment' && x.metadata.name === ref.name);
    if (!d) {
      errors.push(`K8S-REF ${name(h)}: scaleTargetRef ${ref.kind}/${ref.name} is not in the rendered output`);
      continue;
    }
    if (h.spec.minReplicas !== undefined && h.spec.minReplicas > h.spec.maxReplicas) {
      errors.push(`K8S-HPA ${name(h)}: minReplicas ${h.spec.minReplicas} > maxReplicas ${h.spec.maxReplicas}`);
    }
    if (d.spec.replicas !== undefined) {
      errors.push(`K8S-HPA ${name(d)}: has spec.replicas although ${name(h)} scales it (every apply would reset the count)`);
    }
    const cpuMetric = (h.spec.metrics || []).some((m) => m.type === 'Resource' && m.resource && m.resource.name === 'cpu');
    if (cpuMetric && containersOf(d).some((c) => !((c.resources || {}).requests || {}).cpu)) {
      errors.push(`K8S-HPA ${name(h)}: a CPU utilization target needs CPU requests on every container of ${name(d)}`);
    }
  }

  for (const p of byKind('PodDisruptionBudget')) {
    const sel = ((p.spec || {}).selector || {}).matchLabels;
    const targets = deployments.filter((d) => matches(sel, podTemplateLabels(d)));
    if (targets.length === 0) {
      errors.push(`K8S-REF ${name(p)}: selector matches no Deployment's pods`);
      continue;
    }
    for (const d of targets) {
      const replicas = d.spec.replicas;
      if (typeof p.spec.minAvailable === 'number' && replicas !== undefined && p.spec.minAvailable >= replicas) {
        errors.push(`K8S-PDB ${name(p)}: minAvailable ${p.spec.minAvailable} >= ${replicas} replicas of ${name(d)} blocks every eviction`);
      }
      if (p.spec.maxUnavailable === 0) errors.push(`K8S-PDB ${name(p)}: maxUnavailable 0 blocks every eviction`);
    }
  }

  return errors.map((e) => `${ctx.label}: ${e}`);
}

module.exports = { validateObjects };
