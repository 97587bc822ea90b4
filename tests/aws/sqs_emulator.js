// Runs the local-aws-sqs emulator (SQS Query and JSON 1.0 protocols) on one loopback port, for
// scripts/services/aws_emulators.sh. Usage: node sqs_emulator.js HOST PORT
// Prints "listening" once the server accepts connections; exits on SIGTERM.
"use strict";
const { createSqsServer } = require("local-aws-sqs");

const [host, port] = process.argv.slice(2);
if (!host || !port) {
  console.error("usage: node sqs_emulator.js HOST PORT");
  process.exit(2);
}

(async () => {
  // Deleted queues may be created again at once: tests make many short-lived queues.
  const server = await createSqsServer({ hostname: host, port: Number(port), emulateQueueCreationLifecycle: false });
  console.log(`listening on ${host}:${port}`);
  const stop = () => server.close(() => process.exit(0));
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
})().catch((err) => {
  console.error(`sqs_emulator: ${err && err.message ? err.message : err}`);
  process.exit(1);
});
