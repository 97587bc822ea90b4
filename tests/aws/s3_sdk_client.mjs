// Test-time independent client: the official AWS SDK for JavaScript (@aws-sdk/client-s3) reads
// and writes objects on the S3 emulator, so the s3:// adapter's objects are checked by another
// implementation of the wire protocol.
//   node s3_sdk_client.mjs put ENDPOINT BUCKET KEY FILE   PutObject KEY with FILE's bytes
//   node s3_sdk_client.mjs get ENDPOINT BUCKET KEY FILE   GetObject KEY into FILE
// Credentials and region come from the environment (AWS_ACCESS_KEY_ID, ..., AWS_REGION), as the
// SDK's own chain reads them. Exits 0 on success; on an S3 error prints "Code: message", exits 1.
import { createRequire } from 'node:module';
import { readFileSync, writeFileSync } from 'node:fs';

const require = createRequire(process.env.OVERHEAD_AWS_NODE_MODULES + '/');
const { S3Client, PutObjectCommand, GetObjectCommand } = require('@aws-sdk/client-s3');

const [op, endpoint, bucket, key, file] = process.argv.slice(2);
if (!['put', 'get'].includes(op) || !file) {
  console.error('usage: node s3_sdk_client.mjs put|get ENDPOINT BUCKET KEY FILE');
  process.exit(2);
}
const client = new S3Client({
  endpoint,
  forcePathStyle: true,
  region: process.env.AWS_REGION || 'us-east-1',
  // Plain bodies (no aws-chunked trailers): what s3rver understands, and what a PUT of a known
  // length sends anyway.
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});
try {
  if (op === 'put') {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(file) }));
  } else {
    const res = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = await res.Body.transformToByteArray();
    writeFileSync(file, bytes);
  }
} catch (err) {
  console.error(`${err.name || err.Code}: ${err.message}`);
  process.exit(1);
}
