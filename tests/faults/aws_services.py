"""The SQS and DynamoDB emulators of the test fixtures (behind their SigV4 proxies), as the Python
test drivers reach them: a small JSON-1.0 client of its own (SigV4 from hashlib/hmac, so it shares
no code with the C++ client it checks), the proxies' control endpoint, and the few calls the
drivers check with: queue counts, a table's keys.

Reads the env file scripts/services/aws_emulators.sh writes. `redact` blanks the secret out of
any text a driver prints.
"""

import datetime
import hashlib
import hmac
import http.client
import json
import urllib.parse

from services import read_env


class AwsError(RuntimeError):
    """An error answer of a service: its code and message."""


def _hmac(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sign(headers, method, uri, payload, service, region, key_id, secret, content_sha256=False):
    """Adds x-amz-date (and x-amz-content-sha256 when asked, as S3 wants) and a SigV4 authorization
    to `headers` (lower-case names, `host` among them) for a request without a query string."""
    now = datetime.datetime.now(datetime.timezone.utc)
    amz_date, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload_hash = hashlib.sha256(payload).hexdigest()
    headers["x-amz-date"] = amz_date
    if content_sha256:
        headers["x-amz-content-sha256"] = payload_hash
    signed = ";".join(sorted(headers))
    canonical = "\n".join([method, uri, "", *(f"{k}:{headers[k]}" for k in sorted(headers)), "", signed, payload_hash])
    scope = f"{day}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    k = _hmac(("AWS4" + secret).encode(), day)
    for part in (region, service, "aws4_request"):
        k = _hmac(k, part)
    signature = hmac.new(k, to_sign.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = (f"AWS4-HMAC-SHA256 Credential={key_id}/{scope}, SignedHeaders={signed}, "
                                f"Signature={signature}")


class JsonClient:
    """Signed JSON-1.0 calls of one service at one endpoint, on one kept connection."""

    def __init__(self, endpoint, service, target_prefix, region, key_id, secret):
        u = urllib.parse.urlsplit(endpoint)
        self.host, self.port = u.hostname, u.port
        self.service, self.prefix, self.region = service, target_prefix, region
        self.key_id, self.secret = key_id, secret
        self._conn = None

    def call(self, action, body):
        payload = json.dumps(body)
        headers = {"content-type": "application/x-amz-json-1.0", "host": f"{self.host}:{self.port}",
                   "x-amz-target": f"{self.prefix}.{action}"}
        sign(headers, "POST", "/", payload.encode(), self.service, self.region, self.key_id, self.secret)
        for attempt in range(3):  # a kept connection the server closed in between: once more on a new one
            try:
                if self._conn is None:
                    self._conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
                self._conn.request("POST", "/", body=payload, headers=headers)
                res = self._conn.getresponse()
                data = res.read()
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                self._conn = None
                if attempt == 2:
                    raise
        answer = json.loads(data) if data else {}
        if res.status != 200:
            code = answer.get("__type", f"HTTP {res.status}").split("#")[-1]
            raise AwsError(f"{self.service} {action}: {code}: {answer.get('message', answer.get('Message', ''))}")
        return answer


def control(endpoint, path, body=None):
    """A call of a proxy's control endpoint (POST with a JSON body, or GET when body is None)."""
    u = urllib.parse.urlsplit(endpoint)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=10)
    if body is None:
        conn.request("GET", "/__proxy/" + path)
    else:
        conn.request("POST", "/__proxy/" + path, body=json.dumps(body), headers={"content-type": "application/json"})
    res = conn.getresponse()
    data = res.read()
    if res.status != 200:
        raise AwsError(f"proxy {path}: HTTP {res.status} {data[:200]!r}")
    return json.loads(data)


class AwsServices:
    """The SQS and DynamoDB emulators (through their proxies) signed with one key pair."""

    def __init__(self, env_path, key_id, secret):
        self.env = read_env(env_path)
        self.region = self.env["AWS_EMULATOR_REGION"]
        self.sqs_endpoint, self.ddb_endpoint = self.env["AWS_SQS_ENDPOINT"], self.env["AWS_DYNAMODB_ENDPOINT"]
        self.secrets = [secret]
        self.sqs = JsonClient(self.sqs_endpoint, "sqs", "AmazonSQS", self.region, key_id, secret)
        self.ddb = JsonClient(self.ddb_endpoint, "dynamodb", "DynamoDB_20120810", self.region, key_id, secret)
        self._urls = {}

    def queue_url(self, name):
        """The queue's URL, or None while it does not exist."""
        if name not in self._urls:
            try:
                self._urls[name] = self.sqs.call("GetQueueUrl", {"QueueName": name})["QueueUrl"]
            except AwsError as e:
                if "NonExistentQueue" in str(e) or "QueueDoesNotExist" in str(e):
                    return None
                raise
        return self._urls[name]

    def counts(self, name):
        """(visible, in flight) of a queue; (0, 0) while it does not exist."""
        url = self.queue_url(name)
        if url is None:
            return 0, 0
        attrs = self.sqs.call("GetQueueAttributes", {
            "QueueUrl": url, "AttributeNames": ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
        })["Attributes"]
        # local-aws-sqs counts in-flight messages in both numbers; visible = the difference.
        total, hidden = int(attrs["ApproximateNumberOfMessages"]), int(attrs["ApproximateNumberOfMessagesNotVisible"])
        return max(0, total - hidden), hidden

    def queued(self, name):
        visible, in_flight = self.counts(name)
        return visible + in_flight

    def delete_queue(self, name):
        url = self.queue_url(name)
        if url:
            self.sqs.call("DeleteQueue", {"QueueUrl": url})

    def table_keys(self, table):
        """Every item of the table as (tokenizer, id, experiment_tokenizer), by a full Scan; [] while
        the table does not exist."""
        out, start = [], None
        while True:
            req = {"TableName": table, "ProjectionExpression": "tokenizer, #i, experiment_tokenizer",
                   "ExpressionAttributeNames": {"#i": "id"}, "ConsistentRead": True}
            if start:
                req["ExclusiveStartKey"] = start
            try:
                page = self.ddb.call("Scan", req)
            except AwsError as e:
                if "ResourceNotFoundException" in str(e):
                    return []
                raise
            for item in page.get("Items", []):
                out.append((item["tokenizer"]["S"], item["id"]["S"], item["experiment_tokenizer"]["S"]))
            start = page.get("LastEvaluatedKey")
            if not start:
                return out

    def delete_table(self, table):
        self.ddb.call("DeleteTable", {"TableName": table})
