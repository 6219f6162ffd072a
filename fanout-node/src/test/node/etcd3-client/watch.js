// Watches a prefix through an etcd endpoint with the npm etcd3 client (a Node gRPC client) and
// prints each event as a JSON line; then, on "get" from stdin, prints the prefix's keys read
// through the same endpoint. Run by EtcdApiNodeClientTest:
//   node watch.js HOST:PORT PREFIX START_REVISION
const { Etcd3 } = require('etcd3');
const readline = require('readline');

const [endpoint, prefix, startRevision] = process.argv.slice(2);
const client = new Etcd3({ hosts: endpoint });
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

(async () => {
  const watcher = await client.watch().prefix(prefix).startRevision(startRevision).withPreviousKV().create();
  watcher.on('put', (kv, prev) => print({ type: 'PUT', key: kv.key.toString(), value: kv.value.toString(),
    mod: kv.mod_revision, prev: prev ? prev.value.toString() : null }));
  watcher.on('delete', (kv, prev) => print({ type: 'DELETE', key: kv.key.toString(), mod: kv.mod_revision,
    prev: prev ? prev.value.toString() : null }));
  watcher.on('error', (e) => print({ type: 'ERROR', message: String(e) }));
  print({ type: 'READY' });
  for await (const line of readline.createInterface({ input: process.stdin })) {
    if (line.trim() === 'get') {
      const kvs = await client.getAll().prefix(prefix).strings();
      print({ type: 'GET', kvs });
    }
  }
  await watcher.cancel();
  client.close();
})().catch((e) => {
  print({ type: 'ERROR', message: String(e) });
  process.exit(1);
});
