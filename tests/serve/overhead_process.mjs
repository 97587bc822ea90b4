// What the gateway's process tests share: starting an `overhead` command with its output kept,
// waiting for a gateway's "listening on URL" line, reading a service script's env file, and
// dropping a test's keys from the Redis its service script started.
import {spawn, spawnSync} from 'node:child_process';
import {readFileSync} from 'node:fs';

// KEY=VALUE lines of a file the service scripts write (scripts/services/*.sh: redis.env, postgres.env).
export function readEnvFile(file) {
  return Object.fromEntries(readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('='))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
}

// Starts `binary args` with its stdout and stderr kept (child.output()), and adds it to `children`
// (the test's after() kills what is left of them).
export function startOverhead(binary, args, children) {
  const child = spawn(binary, args, {stdio: ['ignore', 'pipe', 'pipe']});
  children.push(child);
  let output = '';
  for (const s of [child.stdout, child.stderr]) {
    s.setEncoding('utf8');
    s.on('data', (d) => { output += d; });
  }
  child.output = () => output;
  return child;
}

// The URL a gateway prints once it listens; rejects with its output if it exits first.
export function listeningUrl(child) {
  return new Promise((resolve, reject) => {
    const timer = setInterval(() => {
      const m = child.output().match(/listening on (http:\/\/127\.0\.0\.1:\d+)/);
      if (m) {
        clearInterval(timer);
        resolve(m[1]);
      }
    }, 20);
    child.on('exit', (code, signal) => {
      clearInterval(timer);
      reject(new Error(`overhead exited ${code ?? signal}: ${child.output()}`));
    });
  });
}

// Deletes the keys matching `pattern` (a Redis glob) from the Redis of `redis` (its env file's values).
export function dropRedisKeys(redis, pattern) {
  spawnSync('redis-cli', ['-h', redis.REDIS_HOST, '-p', redis.REDIS_PORT, '--no-auth-warning', 'EVAL',
                          `for _,k in ipairs(redis.call('KEYS', ARGV[1])) do redis.call('DEL', k) end`, '0', pattern],
            {env: {...process.env, REDISCLI_AUTH: redis.REDIS_PASSWORD}});
}
