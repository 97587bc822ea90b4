// Stops a child process as an operator would: SIGTERM, then SIGKILL if it has not exited within
// `graceMs`. Resolves once it has exited (at once if it already had). For the node tests' and
// benchmarks' servers (the llama.cpp engine, `overhead serve`, `overhead worker`).
export async function stopChild(child, graceMs) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}
