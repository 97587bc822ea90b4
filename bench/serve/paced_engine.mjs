// A fake OpenAI engine for load benchmarks: POST /v1/completions with stream: true answers
// `max_tokens` text_completion chunks (each " tok", vLLM's shape), one every 1000/PACE ms from its
// own timer (a real engine's pace per sequence), then the usage chunk and [DONE]; a client that
// disconnects stops its stream. Deterministic text, no model: what it measures is the path around
// the engine, not the engine. Prints "listening on http://127.0.0.1:PORT" once ready.
//
//   node bench/serve/paced_engine.mjs [tokens_per_s=50]
import http from 'node:http';

const PACE = Number(process.argv[2] ?? '50');
const GAP_MS = 1000 / PACE;

function chunk(text, finish) {
  return 'data: ' + JSON.stringify({id: 'cmpl-bench', object: 'text_completion', created: 1733300000, model: 'bench',
    choices: [{index: 0, text, logprobs: null, finish_reason: finish, stop_reason: null}], usage: null}) + '\n\n';
}

const server = http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    if (req.method !== 'POST' || !req.url.endsWith('/completions')) {
      res.writeHead(404, {'Content-Type': 'application/json'}).end('{"error":{"message":"not found"}}');
      return;
    }
    const j = JSON.parse(body);
    const tokens = Math.max(1, j.max_tokens ?? 16);
    res.writeHead(200, {'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache'});
    res.socket.setNoDelay(true);
    let sent = 0;
    const timer = setInterval(() => {
      ++sent;
      res.write(chunk(' tok', sent === tokens ? 'length' : null));
      if (sent < tokens) return;
      clearInterval(timer);
      res.write('data: ' + JSON.stringify({id: 'cmpl-bench', object: 'text_completion', created: 1733300000, model: 'bench',
        choices: [], usage: {prompt_tokens: 10, completion_tokens: tokens, total_tokens: tokens + 10}}) + '\n\n');
      res.end('data: [DONE]\n\n');
    }, GAP_MS);
    res.on('close', () => clearInterval(timer));
  });
});
server.keepAliveTimeout = 120000;
server.listen(0, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${server.address().port}`));
process.on('SIGTERM', () => process.exit(0));
