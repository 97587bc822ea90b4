// Starts tests/engine/llama_server.mjs (the real llama.cpp engine behind an OpenAI API) as a child
// process on a free loopback port, for node tests:
//
//   import {startLlamaEngine} from ".../tests/engine/llama_engine.mjs";
//   const engine = await startLlamaEngine({sequences: 8});   // model: $LLAMA_ENGINE_MODEL
//   ... engine.baseUrl (http://127.0.0.1:PORT/v1), engine.modelName ...
//   await engine.stop();
//
// CTest gives $LLAMA_ENGINE_MODEL and $LLAMA_ENGINE_NODE_MODULES to tests that require the
// fixtures llama_engine and llama_model (tests/engine/CMakeLists.txt).
import {spawn} from "node:child_process";
import path from "node:path";
import {fileURLToPath} from "node:url";
import {stopChild} from "../support/stop_child.mjs";

const server = path.join(path.dirname(fileURLToPath(import.meta.url)), "llama_server.mjs");

export async function startLlamaEngine({model = process.env.LLAMA_ENGINE_MODEL, modelName = "tiny-llama3", sequences = 8,
  context = 2048, threads = 1, extraArgs = [], startTimeoutMs = 120000} = {}) {
  if (!model) throw new Error("startLlamaEngine: no model (set LLAMA_ENGINE_MODEL)");
  const names = Array.isArray(modelName) ? modelName : [modelName];
  const argv = [server, "--model", model, "--port", "0", "--sequences", String(sequences), "--context", String(context),
    "--threads", String(threads), ...names.flatMap((n) => ["--model-name", n]), ...extraArgs];
  const child = spawn(process.execPath, argv, {stdio: ["ignore", "pipe", "inherit"]});
  const url = await new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error("llama_server did not start in time")), startTimeoutMs);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(/listening on (http:\/\/\S+)/);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`llama_server exited (${code}) before listening`));
    });
  });
  child.stdout.resume();
  return {
    url,
    baseUrl: `${url}/v1`,
    modelName: names[0],
    process: child,
    stop: () => stopChild(child, 5000),
  };
}
