// Reads key prefixes through an etcd endpoint over TLS as an etcd user with the npm etcd3 client
// (which sends Authenticate first and then the token it gets), and prints one JSON line per
// prefix: its keys, or the error's class and message. Run by SecuredClientsEndToEndTest:
//   node get.js https://HOST:PORT CA_FILE USER PASSWORD PREFIX...
const fs = require('fs');
const { Etcd3 } = require('etcd3');

const [endpoint, caFile, username, password, ...prefixes] = process.argv.slice(2);
const client = new Etcd3({
  hosts: endpoint,
  credentials: { rootCertificate: fs.readFileSync(caFile) },
  auth: { username, password },
});
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

(async () => {
  for (const prefix of prefixes) {
    try {
      print({ prefix, keys: await client.getAll().prefix(prefix).keys() });
    } catch (e) {
      print({ prefix, error: e.constructor.name, message: e.message });
    }
  }
  client.close();
})();
