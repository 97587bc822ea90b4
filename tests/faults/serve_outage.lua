-- wrk, for the store-outage soak (serve_store_outage_test.py): each connection POSTs real
-- MT-Bench prompts (one JSON body per line of the file given after `--`), paced: it waits a random
-- 0..2×MEAN ms (MEAN, the second argument) before each request, so the offered rate is steady and
-- the same before, during and after the outage. 8 in 10 are synchronous chat completions, 2 in 10
-- asynchronous requests. The id of every answer 200 or 202 goes to ID_DIR/ids-N.txt (the third
-- argument; one file per wrk thread), for the test to find each in the store; every status is
-- counted and printed at the end as "status NNN: COUNT" lines. A fourth argument is the API key
-- sent as a bearer token.
local bodies = {}
local i = 0
local mean_ms = 50
local ids = nil
local threads = {}
statuses = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_no", #threads)
end

local headers = { ["Content-Type"] = "application/json" }

function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  if args[4] then headers["Authorization"] = "Bearer " .. args[4] end
  if #bodies == 0 then error("no bodies in " .. args[1]) end
  mean_ms = tonumber(args[2])
  ids = assert(io.open(args[3] .. "/ids-" .. thread_no .. ".txt", "w"))
  ids:setvbuf("line")
  math.randomseed(os.time() + thread_no)
  i = math.random(#bodies)
end

function delay()
  return math.random(0, 2 * mean_ms)
end

function request()
  i = i % #bodies + 1
  local path = "/v1/chat/completions"
  if i % 10 < 2 then path = "/v1/requests" end
  return wrk.format("POST", path, headers, bodies[i])
end

function response(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
  if status == 200 or status == 202 then
    local id = body:match('"id"%s*:%s*"([^"]+)"')
    ids:write((id or "?") .. "\n")
  end
end

function done(summary, latency, requests)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do total[status] = (total[status] or 0) + n end
  end
  for status, n in pairs(total) do io.write(string.format("status %d: %d\n", status, n)) end
end
