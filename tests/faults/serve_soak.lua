-- wrk, for the gateway's soak: POSTs real MT-Bench prompts (one JSON body per line of the file
-- given after `--`) in turn over three routes, so every part that could hold memory sees traffic:
-- 7 in 10 synchronous chat completions (queue, worker, reply box, store), 2 in 10 asynchronous
-- requests (kept for lookup until evicted) and 1 in 10 tokenize calls. Asynchronous requests are
-- answered at once, so they can outrun the worker: past --max-queued the gateway answers 429, which
-- is the bound working. Every answer's status is counted and printed at the end as
-- "status NNN: COUNT" lines, for the test to judge.
local bodies = {}
local i = 0
local threads = {}
statuses = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  if #bodies == 0 then error("no bodies in " .. args[1]) end
  i = math.random(#bodies)
end

function request()
  i = i % #bodies + 1
  local k = i % 10
  local path = "/v1/chat/completions"
  if k == 0 then path = "/v1/tokenize" elseif k <= 2 then path = "/v1/requests" end
  return wrk.format("POST", path, { ["Content-Type"] = "application/json" }, bodies[i])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + n end
  end
  for status, n in pairs(total) do io.write(string.format("status %d: %d\n", status, n)) end
end
