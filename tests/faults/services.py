"""The Redis and PostgreSQL servers of the test fixtures, as the Python test drivers reach them.

Reads the env files that scripts/services/{redis,postgres}.sh write, and runs the small queries
the drivers check with: Redis commands on one kept connection, SQL through psql (its password in
PGPASSWORD, never on a command line). `redact` blanks the passwords out of any text a driver
prints; `first_ids` reads the ids a run over the first N records must store.
"""

import gzip
import json
import os
import shutil
import signal
import socket
import subprocess


class RedisError(RuntimeError):
    """An error reply of the Redis server."""


def read_env(path):
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                env[key] = value
    return env


def first_ids(data, limit):
    """The ids of the first `limit` records of the seed's JSONL (.gz ok), blank lines skipped."""
    ids = []
    with (gzip.open if data.endswith(".gz") else open)(data, "rt", encoding="utf-8") as f:
        for line in f:
            if line.strip():
                ids.append(json.loads(line)["id"])
                if len(ids) == limit:
                    break
    return ids


def stop_gracefully(proc, timeout):
    """SIGTERM, then wait up to `timeout` s; SIGKILL past it. Returns the exit code, or a string
    saying it had to be killed (never equal to 0), and its stdout when that is a pipe (read here,
    so a process blocked on a full pipe can still exit; any other pipe is the caller's to read)."""
    proc.send_signal(signal.SIGTERM)
    try:
        out = _wait_reading_stdout(proc, timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        proc.kill()
        return f"killed after {timeout} s", _wait_reading_stdout(proc, None)


def _wait_reading_stdout(proc, timeout):
    if proc.stdout is None:
        proc.wait(timeout)
        return ""
    return proc.communicate(timeout=timeout)[0] or ""


def run_overhead(cmd, out_dir, secrets, env=None, timeout=600):
    """Runs one `overhead run` writing into `out_dir` (emptied first) and prints its output,
    redacted. Returns (output, summary.json's text or "", failures): a non-zero exit, no summary,
    or a secret in the output or the summary."""
    shutil.rmtree(out_dir, ignore_errors=True)
    print(redact(" ".join(cmd), secrets), flush=True)
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    output = run.stdout + run.stderr
    print(redact(output, secrets), flush=True)
    failures = []
    if run.returncode != 0:
        failures.append(f"overhead run exited {run.returncode}")
    summary_path = os.path.join(out_dir, "summary.json")
    summary = open(summary_path, encoding="utf-8").read() if os.path.exists(summary_path) else ""
    if not summary:
        failures.append("no summary.json")
    if any(secret and (secret in output or secret in summary) for secret in secrets):
        failures.append("a password shows in the output or in summary.json")
    return output, summary, failures


def redact(text, secrets):
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


class Services:
    """The Redis and PostgreSQL the test runs against, and the small queries it needs."""

    def __init__(self, redis_env, pg_env):
        self.redis_env = read_env(redis_env)
        self.pg = read_env(pg_env)
        self.secrets = [self.redis_env.get("REDIS_PASSWORD", ""), self.pg.get("PG_PASSWORD", "")]
        self._sock = None

    def redis(self, *args):
        """One Redis command on a kept connection (RESP2), its reply as Python values; an error reply
        raises RedisError. A test polls many times a second, so no client process per call."""
        if self._sock is None:
            self._sock = socket.create_connection((self.redis_env["REDIS_HOST"], int(self.redis_env["REDIS_PORT"])), 30)
            self._reader = self._sock.makefile("rb")
            self._send("AUTH", self.redis_env.get("REDIS_USER", "default"), self.redis_env["REDIS_PASSWORD"])
            self._reply()
        self._send(*args)
        return self._reply()

    def _send(self, *args):
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self._sock.sendall(b"".join(parts))

    def _reply(self):
        line = self._reader.readline()
        if not line:
            raise ConnectionError("redis closed the connection")
        kind, rest = line[:1], line[1:-2]
        if kind == b"+":
            return rest.decode()
        if kind == b"-":
            raise RedisError(redact(rest.decode(), self.secrets))
        if kind == b":":
            return int(rest)
        if kind == b"$":
            n = int(rest)
            return None if n < 0 else self._reader.read(n + 2)[:-2].decode()
        if kind == b"*":
            n = int(rest)
            return None if n < 0 else [self._reply() for _ in range(n)]
        raise ConnectionError(f"unexpected reply from redis: {line[:40]!r}")

    def psql(self, sql, check=True):
        env = dict(os.environ, PGPASSWORD=self.pg["PG_PASSWORD"], PGCONNECT_TIMEOUT="10")
        out = subprocess.run(["psql", "-X", "-q", "-At", "-F", "\t", "-v", "ON_ERROR_STOP=1", "-h", self.pg["PG_HOST"],
                              "-p", self.pg["PG_PORT"], "-U", self.pg["PG_USER"], "-d", self.pg["PG_DB"], "-c", sql],
                             env=env, capture_output=True, text=True, timeout=60)
        if out.returncode != 0:
            if not check:
                return None
            raise RuntimeError(redact(f"psql: {out.stderr.strip()}", self.secrets))
        return [line.split("\t") for line in out.stdout.splitlines()]

    def xlen(self, stream):
        return self.redis("XLEN", stream)

    def xpending(self, stream, group):
        """Entries of the group not yet acknowledged (0 when the stream or group does not exist)."""
        try:
            return self.redis("XPENDING", stream, group)[0]
        except RedisError:
            return 0

    def exists(self, key):
        return self.redis("EXISTS", key) == 1

    def entries_added(self, stream):
        """Entries ever added to the stream (0 while it does not exist)."""
        try:
            info = self.redis("XINFO", "STREAM", stream)
        except RedisError:
            return 0
        return dict(zip(info[::2], info[1::2]))["entries-added"]

    def consumers(self, stream, group):
        """{consumer name: pending entries} of the group (empty while the stream does not exist)."""
        try:
            rows = self.redis("XINFO", "CONSUMERS", stream, group)
        except RedisError:
            return {}
        return {d["name"]: d["pending"] for d in (dict(zip(r[::2], r[1::2])) for r in rows)}
