-- wrk: POSTs the JSON bodies of a file (one per line, given after `--`) in turn, so a run cycles
-- through real prompts rather than repeating one.
local bodies = {}
local i = 0

function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  if #bodies == 0 then error("no bodies in " .. args[1]) end
  -- Threads start at different offsets so they do not send the same prompt at the same time.
  i = math.random(#bodies)
end

function request()
  i = i % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, bodies[i])
end
