// The npm @kubernetes/client-node client against a Kubernetes API server given as the first
// argument, as its README shows it. Run by KubeScriptClientsTest:
//   node kube.mjs http://HOST:PORT list NAMESPACE   prints the pods of NAMESPACE as one JSON line
//   node kube.mjs http://HOST:PORT informer         runs an informer (ListWatch) of every pod and
//                                                  prints one JSON line per callback, until killed
import * as k8s from '@kubernetes/client-node';

const [server, command, namespace] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'node', server, skipTLSVerify: true }],
  users: [{ name: 'anonymous' }],
  contexts: [{ name: 'node', cluster: 'node', user: 'anonymous' }],
  currentContext: 'node',
});
const core = kc.makeApiClient(k8s.CoreV1Api);
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');
const pod = (p) => ({
  name: p.metadata.name,
  namespace: p.metadata.namespace,
  node: p.spec.nodeName,
  resourceVersion: p.metadata.resourceVersion,
});

if (command === 'list') {
  const list = await core.listNamespacedPod({ namespace });
  print({
    kind: list.kind,
    resourceVersion: list.metadata.resourceVersion,
    items: list.items.map(pod),
    imageIDs: list.items.flatMap((p) => (p.status.containerStatuses || []).map((c) => c.imageID)),
  });
} else if (command === 'informer') {
  const informer = k8s.makeInformer(kc, '/api/v1/pods', () => core.listPodForAllNamespaces());
  informer.on('add', (p) => print({ event: 'add', ...pod(p) }));
  informer.on('update', (p) => print({ event: 'update', ...pod(p) }));
  informer.on('delete', (p) => print({ event: 'delete', ...pod(p) }));
  informer.on('connect', () => print({ event: 'connect' }));
  informer.on('error', (e) => {
    print({ event: 'error', message: String(e && (e.message || e)), code: e && (e.statusCode || e.code) });
    // As the README's example does: start again after an error.
    setTimeout(() => informer.start(), 1000);
  });
  await informer.start();
} else {
  console.error('usage: node kube.mjs SERVER list NAMESPACE | informer');
  process.exit(2);
}
