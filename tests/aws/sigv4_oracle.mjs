// Test-time oracle: signs requests with the AWS SDK's own signer (@smithy/signature-v4) so the
// C++ signer can be compared with it. Reads one JSON request per line on stdin, writes one JSON
// line per request on stdout: {"authorization": ..., "amz_date": ..., "content_sha256": ...}.
// Request fields: method, host, path, query [[k,v],...], headers [[k,v],...], payload (UTF-8),
// region, service, epoch, s3 (bool), key, secret, token.
import { createRequire } from 'node:module';
import readline from 'node:readline';

const require = createRequire(process.env.OVERHEAD_AWS_NODE_MODULES + '/');
const { SignatureV4 } = require('@smithy/signature-v4');
const { Sha256 } = require('@aws-crypto/sha256-js');

const rl = readline.createInterface({ input: process.stdin });
const out = [];
for await (const line of rl) {
  if (!line.trim()) continue;
  const r = JSON.parse(line);
  const signer = new SignatureV4({
    credentials: { accessKeyId: r.key, secretAccessKey: r.secret, sessionToken: r.token || undefined },
    region: r.region,
    service: r.service,
    sha256: Sha256,
    uriEscapePath: !r.s3,
    applyChecksum: !!r.s3,
  });
  const query = {};
  for (const [k, v] of r.query) query[k] = k in query ? [].concat(query[k], v) : v;
  const headers = { host: r.host };
  for (const [k, v] of r.headers) headers[k] = k in headers ? headers[k] + ',' + v : v;
  const signed = await signer.sign(
    { method: r.method, protocol: 'https:', hostname: r.host, path: r.path, query, headers, body: r.payload },
    { signingDate: new Date(r.epoch * 1000) });
  const h = signed.headers;
  out.push(JSON.stringify({
    authorization: h.authorization,
    amz_date: h['x-amz-date'],
    content_sha256: h['x-amz-content-sha256'] || '',
  }));
}
process.stdout.write(out.join('\n') + '\n');
