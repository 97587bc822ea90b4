// A signature-checking, fault-making HTTP proxy in front of one AWS emulator (local-aws-sqs,
// dynalite and s3rver check no SigV4 signature). Every request is signed again with the AWS SDK's
// own signer (@smithy/signature-v4) from the access key's secret, which the proxy knows from its
// key table; a request whose signature, scope, date, session token or payload hash does not match
// gets the service's own error answer and never reaches the emulator. Requests that pass may then
// meet a fault the tests asked for; the rest is forwarded unchanged (the Host header too, so the
// queue URLs the emulator hands out point back at the proxy).
//
//   node aws_sigv4_proxy.js --service sqs|dynamodb|s3 --upstream http://127.0.0.1:P
//                           --host 127.0.0.1 --port N --keys FILE.json
// FILE.json: [{"accessKeyId": "...", "secretAccessKey": "...", "sessionToken": "..."?}, ...]
//
// Control endpoint, on the same port, unsigned, never forwarded (no S3 bucket name may hold "_"):
//   POST /__proxy/keys     {"accessKeyId","secretAccessKey","sessionToken"?}  add or replace a key
//   POST /__proxy/revoke   {"accessKeyId"}   the key is unknown from now on (as a deleted IAM key)
//   POST /__proxy/expire   {"accessKeyId"}   the key's session has expired (ExpiredToken answers)
//   POST /__proxy/faults   {"kind","key"?,"action"?,"count"?,"probability"?,"delay_ms"?}
//        kind: throttle (400 ThrottlingException / ProvisionedThroughputExceededException, 503
//        SlowDown on S3), 5xx (500 InternalFailure / InternalServerError / InternalError), drop
//        (the connection is closed before forwarding), drop_after (forwarded, then the answer is
//        lost: the call took effect but the client cannot know), slow (delay_ms, then forwarded).
//        key: only requests signed with this access key id (so tests sharing a proxy do not meet
//        each other's faults); action: only this action ("SendMessageBatch", "PutObject");
//        count: how many requests meet it (default 1); probability: instead of count, each
//        matching request meets it with this probability until the rule is removed.
//   DELETE /__proxy/faults  remove every fault rule
//   GET  /__proxy/stats    {"requests","verified","rejected":{code:n},"faults":{kind:n},
//                           "by_key":{key:verified},"rejected_by_key":{key:n},"faults_by_key":{key:n}}
// Prints "listening on HOST:PORT" once it accepts connections; exits on SIGTERM.
"use strict";
const http = require("node:http");
const crypto = require("node:crypto");
const fs = require("node:fs");
const { SignatureV4 } = require("@smithy/signature-v4");
const { Sha256 } = require("@aws-crypto/sha256-js");

function parseArgs(argv) {
  const out = {};
  for (let i = 0; i < argv.length; i += 2) {
    if (!argv[i].startsWith("--") || argv[i + 1] === undefined) usage();
    out[argv[i].slice(2)] = argv[i + 1];
  }
  for (const k of ["service", "upstream", "host", "port", "keys"]) if (!out[k]) usage();
  if (!["sqs", "dynamodb", "s3"].includes(out.service)) usage();
  return out;
}

function usage() {
  console.error("usage: node aws_sigv4_proxy.js --service sqs|dynamodb|s3 --upstream URL --host H --port N --keys FILE");
  process.exit(2);
}

const args = parseArgs(process.argv.slice(2));
const service = args.service;
const upstream = new URL(args.upstream);
const keys = new Map();  // accessKeyId -> {secretAccessKey, sessionToken, expired}
for (const k of JSON.parse(fs.readFileSync(args.keys, "utf8"))) keys.set(k.accessKeyId, { ...k, expired: false });

let faults = [];
const stats = { requests: 0, verified: 0, rejected: {}, faults: {}, by_key: {}, rejected_by_key: {}, faults_by_key: {} };
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

// --- AWS's error shapes, per service and protocol
const jsonPrefix = { sqs: "com.amazonaws.sqs#", dynamodb: "com.amazonaws.dynamodb.v20120810#" };
const xmlEscape = (s) => s.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);

function answerError(res, status, code, message, extraHeaders = {}) {
  const requestId = crypto.randomUUID();
  if (service === "s3") {
    res.writeHead(status, { "content-type": "application/xml", "x-amz-request-id": requestId, ...extraHeaders });
    res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${xmlEscape(message)}</Message>` +
            `<RequestId>${requestId}</RequestId></Error>`);
    return;
  }
  // Authentication failures come from the front door, in coral's namespace, as on AWS.
  const auth = /Signature|ClientToken|UnrecognizedClient|ExpiredToken|IncompleteSignature|MissingAuthentication/.test(code);
  const type = (auth ? "com.amazon.coral.service#" : jsonPrefix[service]) + code;
  const headers = { "content-type": "application/x-amz-json-1.0", "x-amzn-requestid": requestId, ...extraHeaders };
  if (service === "sqs") headers["x-amzn-query-error"] = `${code};Sender`;
  res.writeHead(status, headers);
  res.end(JSON.stringify({ __type: type, message }));
}

function reject(res, status, code, message) {
  stats.rejected[code] = (stats.rejected[code] || 0) + 1;
  if (res.accessKeyId) stats.rejected_by_key[res.accessKeyId] = (stats.rejected_by_key[res.accessKeyId] || 0) + 1;
  answerError(res, status, code, message);
}

// --- What AWS answers when authentication fails, per service
const authErrors = {
  badSignature: {
    sqs: [403, "SignatureDoesNotMatch"], dynamodb: [400, "InvalidSignatureException"], s3: [403, "SignatureDoesNotMatch"] },
  unknownKey: {
    sqs: [403, "InvalidClientTokenId"], dynamodb: [400, "UnrecognizedClientException"], s3: [403, "InvalidAccessKeyId"] },
  expired: { sqs: [403, "ExpiredToken"], dynamodb: [400, "ExpiredTokenException"], s3: [400, "ExpiredToken"] },
  incomplete: {
    sqs: [400, "IncompleteSignature"], dynamodb: [400, "IncompleteSignatureException"], s3: [400, "AuthorizationHeaderMalformed"] },
  skewed: { sqs: [403, "SignatureDoesNotMatch"], dynamodb: [400, "InvalidSignatureException"], s3: [403, "RequestTimeTooSkewed"] },
};
const authReject = (res, kind, message) => reject(res, ...authErrors[kind][service], message);

// "AWS4-HMAC-SHA256 Credential=AKID/20150830/us-east-1/iam/aws4_request, SignedHeaders=a;b, Signature=hex"
function parseAuthorization(value) {
  const m = /^AWS4-HMAC-SHA256 Credential=([^,]+), ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(value || "");
  if (!m) return null;
  const scope = m[1].split("/");
  if (scope.length !== 5 || scope[4] !== "aws4_request") return null;
  return { accessKeyId: scope[0], date: scope[1], region: scope[2], service: scope[3], signedHeaders: m[2].split(";"),
           signature: m[3] };
}

// "20150830T123600Z" -> Date, or null.
function parseAmzDate(s) {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(s || "");
  return m ? new Date(Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6])) : null;
}

// The raw query string as the signer wants it: decoded names and values, repeated names as arrays.
function parseQuery(raw) {
  const query = {};
  if (!raw) return query;
  for (const part of raw.split("&")) {
    if (!part) continue;
    const eq = part.indexOf("=");
    const k = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
    const v = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1));
    query[k] = k in query ? [].concat(query[k], v) : v;
  }
  return query;
}

// The action a request performs, for fault rules: the JSON target's action, or S3's REST verb.
function actionOf(req, path) {
  if (service !== "s3") return String(req.headers["x-amz-target"] || "").split(".").pop();
  const hasKey = path.replace(/^\/[^/]+\/?/, "") !== "";
  const verbs = { PUT: hasKey ? "PutObject" : "CreateBucket", GET: hasKey ? "GetObject" : "ListObjects",
                  HEAD: hasKey ? "HeadObject" : "HeadBucket", DELETE: hasKey ? "DeleteObject" : "DeleteBucket",
                  POST: "PostObject" };
  return verbs[req.method] || req.method;
}

// Checks the request's SigV4 signature; answers the error and returns null when it fails,
// returns the access key id when it passes.
async function verify(req, res, body) {
  const auth = parseAuthorization(req.headers.authorization);
  if (!auth) {
    authReject(res, "incomplete", req.headers.authorization ? "Authorization header is not a well-formed SigV4 header"
                                                            : "Request is missing Authentication Token");
    return null;
  }
  res.accessKeyId = auth.accessKeyId;  // for the per-key counts
  const key = keys.get(auth.accessKeyId);
  if (!key) {
    authReject(res, "unknownKey", "The security token included in the request is invalid.");
    return null;
  }
  if (key.expired) {
    authReject(res, "expired", "The security token included in the request is expired");
    return null;
  }
  if (auth.service !== service) {
    authReject(res, "badSignature", `Credential should be scoped to correct service: '${service}'.`);
    return null;
  }
  const date = parseAmzDate(req.headers["x-amz-date"]);
  if (!date || auth.date !== req.headers["x-amz-date"].slice(0, 8)) {
    authReject(res, "incomplete", "X-Amz-Date is missing or does not match the credential scope's date");
    return null;
  }
  if (Math.abs(Date.now() - date.getTime()) > 15 * 60 * 1000) {
    authReject(res, "skewed", "Signature expired: the request time is more than 15 minutes from the server time");
    return null;
  }
  if (!auth.signedHeaders.includes("host") || !auth.signedHeaders.includes("x-amz-date")) {
    authReject(res, "incomplete", "SignedHeaders must include host and x-amz-date");
    return null;
  }
  const token = req.headers["x-amz-security-token"];
  if ((key.sessionToken || token) && token !== key.sessionToken) {
    authReject(res, "unknownKey", "The security token included in the request is invalid.");
    return null;
  }
  if (key.sessionToken && !auth.signedHeaders.includes("x-amz-security-token")) {
    authReject(res, "incomplete", "x-amz-security-token must be signed");
    return null;
  }
  const declared = req.headers["x-amz-content-sha256"];
  if (service === "s3" && !declared) {
    reject(res, 400, "InvalidRequest", "Missing required header for this request: x-amz-content-sha256");
    return null;
  }
  if (declared && declared !== "UNSIGNED-PAYLOAD" && declared !== crypto.createHash("sha256").update(body).digest("hex")) {
    reject(res, 400, "XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.");
    return null;
  }
  const headers = {};
  for (const name of auth.signedHeaders) {
    const value = req.headers[name];
    if (value === undefined) {
      authReject(res, "badSignature", `Signed header ${name} is missing from the request`);
      return null;
    }
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const qmark = req.url.indexOf("?");
  const path = qmark < 0 ? req.url : req.url.slice(0, qmark);
  const signer = new SignatureV4({
    credentials: { accessKeyId: auth.accessKeyId, secretAccessKey: key.secretAccessKey, sessionToken: key.sessionToken },
    region: auth.region, service, sha256: Sha256, uriEscapePath: service !== "s3", applyChecksum: false,
  });
  const signed = await signer.sign(
    { method: req.method, protocol: "http:", hostname: headers.host, path, query: parseQuery(qmark < 0 ? "" : req.url.slice(qmark + 1)),
      headers, body },
    { signingDate: date, signableHeaders: new Set(auth.signedHeaders) });
  const expected = parseAuthorization(signed.headers.authorization);
  if (!expected || expected.signature !== auth.signature || expected.signedHeaders.join(";") !== auth.signedHeaders.join(";")) {
    authReject(res, "badSignature", "The request signature we calculated does not match the signature you provided. " +
               "Check your AWS Secret Access Key and signing method. Consult the service documentation for details.");
    return null;
  }
  stats.verified += 1;
  return auth.accessKeyId;
}

// The first fault rule this request meets, used up by one; null when none.
function takeFault(accessKeyId, action) {
  for (const rule of faults) {
    if (rule.key && rule.key !== accessKeyId) continue;
    if (rule.action && rule.action !== action) continue;
    if (rule.probability !== undefined) {
      if (Math.random() >= rule.probability) continue;
    } else {
      if (rule.count <= 0) continue;
      rule.count -= 1;
    }
    stats.faults[rule.kind] = (stats.faults[rule.kind] || 0) + 1;
    stats.faults_by_key[accessKeyId] = (stats.faults_by_key[accessKeyId] || 0) + 1;
    return rule;
  }
  return null;
}

const throttleError = { sqs: [400, "ThrottlingException", "Rate exceeded"],
  dynamodb: [400, "ProvisionedThroughputExceededException",
             "The level of configured provisioned throughput for the table was exceeded."],
  s3: [503, "SlowDown", "Please reduce your request rate."] };
const serverError = { sqs: [500, "InternalFailure", "The request processing has failed because of an unknown error."],
  dynamodb: [500, "InternalServerError", "Internal server error"],
  s3: [500, "InternalError", "We encountered an internal error. Please try again."] };

function forward(req, res, body, dropAnswer) {
  const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url,
                            headers: req.headers, agent }, (upRes) => {
    const chunks = [];
    upRes.on("data", (c) => chunks.push(c));
    upRes.on("end", () => {
      if (dropAnswer) { req.socket.destroy(); return; }
      res.writeHead(upRes.statusCode, upRes.headers);
      res.end(Buffer.concat(chunks));
    });
  });
  up.on("error", (err) => answerError(res, 502, "InternalFailure", `proxy: the emulator did not answer: ${err.message}`));
  up.end(body);
}

function readJson(body) {
  try { return JSON.parse(body.toString("utf8") || "{}"); } catch { return null; }
}

function control(req, res, body) {
  const reply = (status, value) => { res.writeHead(status, { "content-type": "application/json" }); res.end(JSON.stringify(value)); };
  const path = req.url.split("?")[0];
  if (req.method === "GET" && path === "/__proxy/stats") return reply(200, stats);
  if (req.method === "DELETE" && path === "/__proxy/faults") { faults = []; return reply(200, { faults: 0 }); }
  const v = readJson(body);
  if (req.method !== "POST" || !v) return reply(400, { error: "expected POST with a JSON body" });
  if (path === "/__proxy/keys") {
    if (!v.accessKeyId || !v.secretAccessKey) return reply(400, { error: "accessKeyId and secretAccessKey are required" });
    keys.set(v.accessKeyId, { accessKeyId: v.accessKeyId, secretAccessKey: v.secretAccessKey,
                              sessionToken: v.sessionToken, expired: false });
    return reply(200, { keys: keys.size });
  }
  if (path === "/__proxy/revoke" || path === "/__proxy/expire") {
    const key = keys.get(v.accessKeyId);
    if (!key) return reply(404, { error: "unknown accessKeyId" });
    if (path === "/__proxy/revoke") keys.delete(v.accessKeyId); else key.expired = true;
    return reply(200, { keys: keys.size });
  }
  if (path === "/__proxy/faults") {
    if (!["throttle", "5xx", "drop", "drop_after", "slow"].includes(v.kind)) return reply(400, { error: `unknown fault kind ${v.kind}` });
    const rule = { kind: v.kind, key: v.key, action: v.action, delay_ms: Number(v.delay_ms || 0) };
    if (v.probability !== undefined) rule.probability = Number(v.probability); else rule.count = Number(v.count ?? 1);
    faults.push(rule);
    return reply(200, { faults: faults.length });
  }
  return reply(404, { error: `no control path ${path}` });
}

async function handle(req, res, body) {
  if (req.url.startsWith("/__proxy/")) return control(req, res, body);
  stats.requests += 1;
  const accessKeyId = await verify(req, res, body);
  if (!accessKeyId) return;
  stats.by_key[accessKeyId] = (stats.by_key[accessKeyId] || 0) + 1;
  const fault = takeFault(accessKeyId, actionOf(req, req.url.split("?")[0]));
  if (!fault) return forward(req, res, body, false);
  switch (fault.kind) {
    case "throttle": return answerError(res, ...throttleError[service]);
    case "5xx": return answerError(res, ...serverError[service]);
    case "drop": return req.socket.destroy();
    case "drop_after": return forward(req, res, body, true);
    case "slow": return setTimeout(() => forward(req, res, body, false), fault.delay_ms);
  }
}

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    handle(req, res, Buffer.concat(chunks)).catch((err) => {
      if (!res.headersSent) answerError(res, 500, "InternalFailure", `proxy: ${err.message}`);
    });
  });
});
server.keepAliveTimeout = 60000;
server.listen(Number(args.port), args.host, () => console.log(`listening on ${args.host}:${args.port}`));
server.on("error", (err) => { console.error(`aws_sigv4_proxy: ${err.message}`); process.exit(1); });
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", () => { server.closeAllConnections(); stop(); });
process.on("SIGINT", stop);
