-- wrk: as wrk_post.lua (the JSON bodies of a file, given after `--`, in turn), but each connection
-- waits a random 0..2×MEAN ms before each request (MEAN, the second argument, default 500), so
-- C connections offer about C × 1000 / MEAN requests/s, spread out rather than in lockstep: many
-- kept-alive clients that are idle most of the time, as SDK connection pools are.
local bodies = {}
local i = 0
local mean_ms = 500

function init(args)
  for line in io.lines(args[1]) do bodies[#bodies + 1] = line end
  if #bodies == 0 then error("no bodies in " .. args[1]) end
  if args[2] then mean_ms = tonumber(args[2]) end
  math.randomseed(os.time() + tonumber(tostring({}):match("0x(%x+)") or "0", 16))
  i = math.random(#bodies)
end

function delay()
  return math.random(0, 2 * mean_ms)
end

function request()
  i = i % #bodies + 1
  return wrk.format("POST", nil, { ["Content-Type"] = "application/json" }, bodies[i])
end
