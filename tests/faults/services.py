"""The Redis and PostgreSQL servers of the test fixtures, as the Python test drivers reach them.

Reads the env files that scripts/services/{redis,postgres}.sh write, and runs the small queries
the drivers check with (redis-cli, psql). The passwords go to the clients through the environment
(REDISCLI_AUTH, PGPASSWORD), never on a command line, and `redact` blanks them out of any text a
driver prints.
"""

import os
import subprocess


def read_env(path):
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                key, value = line.split("=", 1)
                env[key] = value
    return env


def redact(text, secrets):
    for s in secrets:
        if s:
            text = text.replace(s, "***")
    return text


class Services:
    """The Redis and PostgreSQL the test runs against, and the small queries it needs."""

    def __init__(self, redis_env, pg_env):
        self.redis = read_env(redis_env)
        self.pg = read_env(pg_env)
        self.secrets = [self.redis.get("REDIS_PASSWORD", ""), self.pg.get("PG_PASSWORD", "")]

    def redis_cli(self, *args):
        env = dict(os.environ, REDISCLI_AUTH=self.redis["REDIS_PASSWORD"])
        out = subprocess.run(["redis-cli", "--no-auth-warning", "-h", self.redis["REDIS_HOST"], "-p",
                              self.redis["REDIS_PORT"], *args], env=env, capture_output=True, text=True, timeout=30)
        if out.returncode != 0:
            raise RuntimeError(redact(f"redis-cli {' '.join(args)}: {out.stderr.strip()}", self.secrets))
        return out.stdout.splitlines()

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
        return int(self.redis_cli("XLEN", stream)[0])

    def xpending(self, stream, group):
        lines = self.redis_cli("XPENDING", stream, group)
        return int(lines[0]) if lines and lines[0].lstrip("-").isdigit() else 0

    def consumers(self, stream, group):
        """{consumer name: pending entries} of the group (empty while the stream does not exist)."""
        try:
            lines = self.redis_cli("XINFO", "CONSUMERS", stream, group)
        except RuntimeError:
            return {}
        out, name, i = {}, None, 0
        while i + 1 < len(lines):
            key, value = lines[i], lines[i + 1]
            if key == "name":
                name = value
            elif key == "pending" and name is not None:
                out[name] = int(value)
            i += 2
        return out
