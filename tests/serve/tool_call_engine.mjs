// A tiny scripted engine for the tool loop through the gateway: POST /v1/completions, streamed as
// vLLM streams it (text_completion chunks, then [DONE]). A prompt without the tool's result asks
// for a call, so the engine answers with a Llama 3.3 call (`<|python_tag|>{...}`), cut into small
// pieces as tokens would cut it; a prompt that holds the result (the `tool` message rendered by
// the chat template) gets the final text. Every prompt it got is kept, for the test to look at.
import http from 'node:http';

export const TOOL_RESULT = 'sunny-18C';
export const FINAL_TEXT = 'It is sunny and 18 degrees in Paris.';
export const CALL_TEXT = '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris", "unit": "celsius"}}';

function chunk(text, finishReason = null) {
  return 'data: ' + JSON.stringify({
    id: 'cmpl-tool', object: 'text_completion', created: 1, model: 'scripted',
    choices: [{index: 0, text, logprobs: null, finish_reason: finishReason}], usage: null,
  }) + '\n\n';
}

// Resolves to {baseUrl, prompts, close()}.
export function startToolCallEngine(port = 0) {
  const prompts = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d) => { body += d; });
    req.on('end', async () => {
      if (req.method !== 'POST' || !req.url.endsWith('/completions')) {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body);
      const prompt = typeof request.prompt === 'string' ? request.prompt : JSON.stringify(request.prompt);
      prompts.push(prompt);
      const text = prompt.includes(TOOL_RESULT) ? FINAL_TEXT : CALL_TEXT;
      res.writeHead(200, {'Content-Type': 'text/event-stream'});
      for (let at = 0; at < text.length; at += 5) {
        res.write(chunk(text.slice(at, at + 5)));
        await new Promise((r) => setTimeout(r, 1));
      }
      res.write(chunk('', 'stop'));
      res.write('data: ' + JSON.stringify({id: 'cmpl-tool', object: 'text_completion', created: 1, model: 'scripted', choices: [],
                                           usage: {prompt_tokens: 1, completion_tokens: 1, total_tokens: 2}}) + '\n\n');
      res.end('data: [DONE]\n\n');
    });
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve({
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    prompts,
    close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }),
  })));
}

// Run alone (`node tests/serve/tool_call_engine.mjs --port 8001`) it serves until killed, as the
// README's tool-call example uses it.
if (import.meta.url === `file://${process.argv[1]}`) {
  const at = process.argv.indexOf('--port');
  const port = at > 0 ? Number(process.argv[at + 1]) : 8001;
  const e = await startToolCallEngine(port);
  process.stderr.write(`tool_call_engine: ${e.baseUrl}\n`);
}
