// Lists the pods of a namespace through a fan-out node with @kubernetes/client-node and a bearer
// token, as an in-cluster program with its ServiceAccount token does. Prints one JSON line: the
// pod names, or the HTTP status code and message of the refusal.
// Usage: node list.mjs <server> <ca file> <token> <namespace> (run by KubeAuthorizationEndToEndTest)
import * as k8s from '@kubernetes/client-node';

const [server, caFile, token, namespace] = process.argv.slice(2);
const kc = new k8s.KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'fanout', server, caFile, skipTLSVerify: false }],
  users: [{ name: 'sa', token }],
  contexts: [{ name: 'sa', cluster: 'fanout', user: 'sa' }],
  currentContext: 'sa',
});
const core = kc.makeApiClient(k8s.CoreV1Api);
try {
  const list = await core.listNamespacedPod({ namespace });
  console.log(JSON.stringify({ names: list.items.map((p) => p.metadata.name) }));
} catch (e) {
  let message = '';
  try {
    message = JSON.parse(e.body).message;
  } catch (ignored) {
    message = String(e.body ?? e.message);
  }
  console.log(JSON.stringify({ code: e.code, message }));
}
