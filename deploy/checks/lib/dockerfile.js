'use strict';
// A minimal Dockerfile lint, standing in for hadolint (which no registry this project's
// machines reach provides: not in Debian, and npm's `hadolint` is only a wrapper around a
// binary it does not ship). Rules with a DL number follow hadolint's rule of that number;
// WF rules are watch-fanout's own (docs/DEPLOYMENT.md lists them all):
//
//   DL3000 WORKDIR is an absolute path
//   DL3002 the last USER of the final stage is not root
//   DL3004 no sudo
//   DL3005 no apt-get upgrade / dist-upgrade
//   DL3006 every FROM image has an explicit tag (or digest)
//   DL3007 ... and that tag is not `latest`
//   DL3009 apt-get install is followed by removing /var/lib/apt/lists
//   DL3015 apt-get install uses --no-install-recommends
//   DL3020 COPY, not ADD
//   DL3022 COPY --from names an earlier stage
//   DL3025 CMD and ENTRYPOINT in JSON (exec) form
//   DL4000 no MAINTAINER
//   DL4003 at most one CMD per stage;  DL4004 at most one ENTRYPOINT per stage
//   DL4006 a RUN with a pipe runs under SHELL [... "-o", "pipefail" ...]
//   WF001  the final stage copies from the build context only what the host built
//          (<module>/target/...) and files of deploy/docker/; a Java image takes its runtime
//          from an earlier stage (COPY --from=<stage>), never builds in the final stage
//   WF002  the final stage sets a non-root USER by numeric uid (so that Kubernetes'
//          runAsNonRoot can verify it)
//   WF003  the final stage has a HEALTHCHECK (HEALTHCHECK NONE where nothing serves HTTP)
//   WF004  a final stage with a HEALTHCHECK CMD EXPOSEs its port
//   WF005  a HEALTHCHECK that runs curl is on an image that installs curl (apt-get install
//          ... curl) or on an Ubuntu-based eclipse-temurin JRE image (those ship curl)
//   WF006  the final stage's JVM respects the container's memory limit and exits on OOM:
//          -XX:MaxRAMPercentage and -XX:+ExitOnOutOfMemoryError in JAVA_TOOL_OPTIONS or
//          the ENTRYPOINT
//   WF007  each `COPY <module>/target/<file>.jar` names a module of the root pom whose
//          <finalName> is <file>
//   WF008  a final stage that runs java is not a JDK or Maven image: it is a JRE image or
//          copies a jlink runtime from an earlier stage
//   WF009  the build context (.dockerignore) leaves everything out ("*") but what the
//          Dockerfiles copy from it ("!" lines)
// FROM images given as ${ARG} are checked with the ARG's default (an ARG before the first FROM).

const fs = require('fs');
const path = require('path');

/** Instructions of a Dockerfile: [{line, instr, args}], continuation lines joined. */
function parse(text) {
  const lines = text.split(/\r?\n/);
  const out = [];
  let i = 0;
  let escape = '\\';
  // Parser directives (only at the very top).
  while (i < lines.length && /^#\s*\w+\s*=/.test(lines[i])) {
    const m = /^#\s*escape\s*=\s*(\S)/.exec(lines[i]);
    if (m) escape = m[1];
    i++;
  }
  while (i < lines.length) {
    const start = i;
    let line = lines[i];
    if (/^\s*(#|$)/.test(line)) {
      i++;
      continue;
    }
    let full = '';
    for (;;) {
      const trimmed = line.replace(/\s+$/, '');
      if (trimmed.endsWith(escape)) {
        full += trimmed.slice(0, -1) + ' ';
        i++;
        // Comment lines inside a continued instruction are dropped, as Docker does.
        while (i < lines.length && /^\s*#/.test(lines[i])) i++;
        if (i >= lines.length) break;
        line = lines[i];
      } else {
        full += trimmed;
        i++;
        break;
      }
    }
    const m = /^\s*(\w+)\s*([\s\S]*)$/.exec(full);
    if (m) out.push({ line: start + 1, instr: m[1].toUpperCase(), args: m[2].trim() });
  }
  return out;
}

/** Splits leading `--flag=value` options off an instruction's arguments. */
function flagsOf(args) {
  const flags = {};
  let rest = args;
  for (;;) {
    const m = /^--([\w-]+)(?:=(\S+))?\s*/.exec(rest);
    if (!m) break;
    flags[m[1]] = m[2] === undefined ? true : m[2];
    rest = rest.slice(m[0].length);
  }
  return { flags, rest };
}

function isJsonForm(args) {
  if (!args.startsWith('[')) return false;
  try {
    const v = JSON.parse(args);
    return Array.isArray(v) && v.every((x) => typeof x === 'string');
  } catch (e) {
    return false;
  }
}

function stagesOf(instrs) {
  const stages = [];
  for (const ins of instrs) {
    if (ins.instr === 'FROM') {
      const { rest } = flagsOf(ins.args);
      const m = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(rest);
      stages.push({ from: ins, image: m ? m[1] : rest, name: m && m[2] ? m[2].toLowerCase() : null, instrs: [] });
    } else if (stages.length > 0) {
      stages[stages.length - 1].instrs.push(ins);
    }
  }
  return stages;
}

function rootModules(root) {
  const pom = path.join(root, 'pom.xml');
  if (!fs.existsSync(pom)) return [];
  const text = fs.readFileSync(pom, 'utf8').replace(/<!--[\s\S]*?-->/g, '');
  return [...text.matchAll(/<module>\s*([^<\s]+)\s*<\/module>/g)].map((m) => m[1]);
}

function finalNames(root, module) {
  const pom = path.join(root, module, 'pom.xml');
  if (!fs.existsSync(pom)) return null;
  const text = fs.readFileSync(pom, 'utf8').replace(/<!--[\s\S]*?-->/g, '');
  const names = [...text.matchAll(/<finalName>\s*([^<\s]+)\s*<\/finalName>/g)].map((m) => m[1]);
  const artifact = /<\/parent>[\s\S]*?<artifactId>\s*([^<\s]+)\s*<\/artifactId>/.exec(text);
  if (artifact) names.push(`${artifact[1]}-\${project.version}`);
  return names;
}

/**
 * @param {string} file the Dockerfile
 * @param {string} root the repository root (build context)
 * @returns {string[]} messages "file:line RULE text"
 */
function lint(file, root) {
  const text = fs.readFileSync(file, 'utf8');
  const instrs = parse(text);
  const rel = path.relative(root, file) || file;
  const errors = [];
  const err = (ins, rule, msg) => errors.push(`${rel}:${ins ? ins.line : 1} ${rule} ${msg}`);

  const stages = stagesOf(instrs);
  if (stages.length === 0) {
    err(null, 'DL3061', 'no FROM instruction');
    return errors;
  }
  const stageNames = [];
  let shellPipefail = false;
  const argDefaults = {};
  for (const ins of instrs) {
    if (ins.instr === 'FROM') break;
    const m = /^(\w+)=(\S+)$/.exec(ins.instr === 'ARG' ? ins.args : '');
    if (m) argDefaults[m[1]] = m[2];
  }
  const resolve = (image) => image.replace(/\$\{(\w+)\}|\$(\w+)/g, (all, a, b) => argDefaults[a || b] || all);

  for (const [si, st] of stages.entries()) {
    // DL3006 / DL3007: pinned base images.
    const image = resolve(st.image);
    const isStageRef = stageNames.includes(image.toLowerCase());
    if (!isStageRef && image !== 'scratch') {
      const noDigest = image.split('@')[0];
      const lastSlash = noDigest.lastIndexOf('/');
      const tag = noDigest.slice(lastSlash + 1).includes(':') ? noDigest.slice(noDigest.lastIndexOf(':') + 1) : null;
      if (!image.includes('@') && !tag) err(st.from, 'DL3006', `FROM ${image}: give the image an explicit tag`);
      if (tag === 'latest') err(st.from, 'DL3007', `FROM ${image}: pin a version instead of latest`);
    }
    shellPipefail = false;
    let cmds = 0;
    let entrypoints = 0;
    for (const ins of st.instrs) {
      const { flags, rest } = flagsOf(ins.args);
      switch (ins.instr) {
        case 'WORKDIR':
          if (!/^(\/|\$)/.test(rest)) err(ins, 'DL3000', `WORKDIR ${rest}: use an absolute path`);
          break;
        case 'ADD':
          err(ins, 'DL3020', 'use COPY instead of ADD for files and folders');
          break;
        case 'MAINTAINER':
          err(ins, 'DL4000', 'MAINTAINER is deprecated (use a LABEL)');
          break;
        case 'SHELL':
          shellPipefail = /pipefail/.test(rest);
          break;
        case 'CMD':
          cmds++;
          if (!isJsonForm(rest)) err(ins, 'DL3025', 'use the JSON (exec) form for CMD');
          if (cmds > 1) err(ins, 'DL4003', 'more than one CMD in a stage');
          break;
        case 'ENTRYPOINT':
          entrypoints++;
          if (!isJsonForm(rest)) err(ins, 'DL3025', 'use the JSON (exec) form for ENTRYPOINT');
          if (entrypoints > 1) err(ins, 'DL4004', 'more than one ENTRYPOINT in a stage');
          break;
        case 'COPY':
          if (flags.from !== undefined) {
            const from = String(flags.from).toLowerCase();
            const known = stageNames.includes(from) || (/^\d+$/.test(from) && Number(from) < si);
            if (!known) err(ins, 'DL3022', `COPY --from=${flags.from} names no earlier stage`);
          }
          break;
        case 'RUN': {
          const cmd = rest;
          if (/(^|[\s;&|])sudo\s/.test(cmd)) err(ins, 'DL3004', 'do not use sudo');
          if (/apt-get\s+(-\S+\s+)*(upgrade|dist-upgrade)/.test(cmd)) err(ins, 'DL3005', 'do not apt-get upgrade in an image');
          if (/apt-get\s+(-\S+\s+)*install/.test(cmd)) {
            if (!/--no-install-recommends/.test(cmd)) err(ins, 'DL3015', 'apt-get install without --no-install-recommends');
            if (!/rm\s+-[rf]+\s+\/var\/lib\/apt\/lists/.test(cmd)) err(ins, 'DL3009', 'remove /var/lib/apt/lists after apt-get install');
          }
          if (!isJsonForm(cmd) && /[^|]\|[^|]/.test(cmd.replace(/'[^']*'|"[^"]*"/g, '')) && !shellPipefail) {
            err(ins, 'DL4006', 'a RUN with a pipe needs SHELL ["/bin/bash", "-o", "pipefail", "-c"]');
          }
          break;
        }
        default:
          break;
      }
    }
    if (st.name) stageNames.push(st.name);
    else stageNames.push(`#${si}`);
  }

  // ---- watch-fanout rules on the final stage ----
  const final = stages[stages.length - 1];
  const fin = (k) => final.instrs.filter((i) => i.instr === k);
  const finalImage = resolve(final.image);
  const runsJava = /\bjava\b/.test(fin('ENTRYPOINT').map((i) => i.args).join(' ') + fin('CMD').map((i) => i.args).join(' '));
  const contextCopies = fin('COPY').filter((c) => flagsOf(c.args).flags.from === undefined);

  for (const c of contextCopies) {
    const src = flagsOf(c.args).rest.split(/\s+/)[0];
    if (!/^[\w.-]+\/target\//.test(src) && !/^deploy\/docker\//.test(src)) {
      err(c, 'WF001', `COPY ${src}: the runtime stage copies from the build context only <module>/target/ outputs and deploy/docker/ files`);
    }
  }
  if (runsJava) {
    const jreCopied = fin('COPY').some((c) => flagsOf(c.args).flags.from !== undefined && /jre/.test(c.args));
    if (/maven|jdk/.test(finalImage) || (!/jre/.test(finalImage) && !jreCopied)) {
      err(final.from, 'WF008', `final stage FROM ${finalImage}: run java from a JRE image or a jlink runtime copied from an earlier stage`);
    }
    if (!jreCopied && stages.length < 2 && !/jre/.test(finalImage)) err(final.from, 'WF001', 'a Java image takes its runtime from a jlink stage');
  }

  const users = fin('USER');
  const lastUser = users.length > 0 ? users[users.length - 1] : null;
  if (!lastUser) {
    err(final.from, 'DL3002', 'the final stage sets no USER (it would run as root)');
  } else {
    const user = flagsOf(lastUser.args).rest.split(':')[0];
    if (user === 'root' || user === '0') err(lastUser, 'DL3002', 'the last USER is root');
    else if (!/^\d+$/.test(user)) err(lastUser, 'WF002', `USER ${user}: give a numeric uid (Kubernetes runAsNonRoot checks it)`);
  }

  const hcs = fin('HEALTHCHECK');
  const hc = hcs.length > 0 ? hcs[hcs.length - 1] : null;
  if (!hc) {
    err(final.from, 'WF003', 'the final stage has no HEALTHCHECK (write HEALTHCHECK NONE if it serves nothing)');
  } else {
    const { rest } = flagsOf(hc.args);
    if (!/^NONE$/i.test(rest)) {
      if (!/^CMD\s/i.test(rest)) err(hc, 'WF003', 'HEALTHCHECK needs CMD or NONE');
      if (fin('EXPOSE').length === 0) err(hc, 'WF004', 'a served image EXPOSEs its port');
      const installsCurl = fin('RUN').some((r) => /apt-get\s+(-\S+\s+)*install\b[^&;]*\bcurl\b/.test(r.args));
      if (/\bcurl\b/.test(rest) && !installsCurl && !/^eclipse-temurin:\d+-jre(-(noble|jammy|focal))?$/.test(finalImage)) {
        err(hc, 'WF005', `HEALTHCHECK runs curl, which ${finalImage} is not known to ship (apt-get install curl, or use eclipse-temurin:<v>-jre-noble)`);
      }
    }
  }

  const jvmText = [...fin('ENV'), ...fin('ENTRYPOINT'), ...fin('CMD')].map((i) => i.args).join(' ');
  if (runsJava) {
    if (!/-XX:MaxRAMPercentage=/.test(jvmText)) err(final.from, 'WF006', 'the JVM gets no -XX:MaxRAMPercentage (container memory)');
    if (!/-XX:\+ExitOnOutOfMemoryError/.test(jvmText)) err(final.from, 'WF006', 'the JVM gets no -XX:+ExitOnOutOfMemoryError');
  }

  // WF007: a jar copied from the host's build is what that module's Maven build produces.
  const modules = rootModules(root);
  for (const c of contextCopies) {
    const src = flagsOf(c.args).rest.split(/\s+/)[0];
    const m = /^([^/]+)\/target\/(.+?)\/?$/.exec(src);
    if (!m) continue;
    const [, module, file] = m;
    if (!modules.includes(module)) {
      err(c, 'WF007', `${src}: ${module} is not a module of the root pom`);
      continue;
    }
    if (file.endsWith('.jar')) {
      const names = finalNames(root, module) || [];
      if (!names.includes(file.replace(/\.jar$/, ''))) {
        err(c, 'WF007', `${src}: ${module}/pom.xml has no <finalName>${file.replace(/\.jar$/, '')}</finalName>`);
      }
    }
  }

  return errors;
}

/**
 * WF009: the build context's .dockerignore leaves everything out but what the Dockerfiles copy
 * from it.
 * @param {string} root the repository root
 * @param {string[]} files the Dockerfiles
 */
function lintDockerignore(root, files = []) {
  const file = path.join(root, '.dockerignore');
  if (!fs.existsSync(file)) return ['.dockerignore: WF009 missing (the build context would be the whole checkout)'];
  const patterns = fs.readFileSync(file, 'utf8').split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith('#'));
  const errors = [];
  if (patterns[0] !== '*') errors.push('.dockerignore: WF009 start with "*" (leave everything out), then "!" what the images copy');
  const kept = patterns.filter((p) => p.startsWith('!')).map((p) => p.slice(1).replace(/^\/+/, '').replace(/\/+$/, ''));
  for (const f of files) {
    const rel = path.relative(root, f) || f;
    for (const ins of parse(fs.readFileSync(f, 'utf8'))) {
      if (ins.instr !== 'COPY' || flagsOf(ins.args).flags.from !== undefined) continue;
      const src = flagsOf(ins.args).rest.split(/\s+/)[0].replace(/\/+$/, '');
      if (!kept.some((k) => src === k || src.startsWith(`${k}/`))) {
        errors.push(`.dockerignore: WF009 ${rel}:${ins.line} copies ${src}, which .dockerignore leaves out (add "!${src}")`);
      }
    }
  }
  return errors;
}

module.exports = { lint, lintDockerignore, parse };
