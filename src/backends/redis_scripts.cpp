#include "backends/redis_scripts.hpp"

namespace overhead::backends {

// Shared prelude: server time in ms and queue time.
#define OVERHEAD_REDIS_NOW(arg)                                                              \
  "local t = redis.call('TIME')\n"                                                           \
  "local server_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"            \
  "local now = server_ms - 86400000\n"                                                       \
  "if " arg " ~= '' then now = tonumber(" arg ") end\n"

const char* const kRedisReceiveScript =
    "local stream, dlq, group, consumer = KEYS[1], KEYS[2], ARGV[1], ARGV[2]\n"
    "local max, vis, max_receives = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    OVERHEAD_REDIS_NOW("ARGV[6]")
    // XCLAIM's argument list built whole: in Lua, unpack() in the middle of a call's arguments
    // yields only its first value, which would claim one id of many.
    "local function claim_args(stream, group, consumer, ids, now, justid)\n"
    "  local a = {stream, group, consumer, 0}\n"
    "  for _, id in ipairs(ids) do a[#a + 1] = id end\n"
    "  a[#a + 1] = 'TIME'; a[#a + 1] = now\n"
    "  if justid then a[#a + 1] = 'JUSTID' end\n"
    "  return a\n"
    "end\n"
    "local out = {0, ''}\n"
    "local taken = 0\n"
    // 1. In-flight entries whose deadline passed: delivery time <= now - vis, i.e. the server's
    //    idle time >= vis + (server_ms - now).
    "local expired = redis.call('XPENDING', stream, group, 'IDLE', vis + (server_ms - now), '-', '+', max)\n"
    "local reclaim, counts = {}, {}\n"
    "for _, p in ipairs(expired) do\n"
    "  local id, count = p[1], tonumber(p[4])\n"
    "  if max_receives > 0 and count >= max_receives then\n"
    "    local e = redis.call('XRANGE', stream, id, id)\n"
    "    if #e > 0 then\n"
    "      local body = ''\n"
    "      for i = 1, #e[1][2], 2 do if e[1][2][i] == 'b' then body = e[1][2][i + 1] end end\n"
    "      redis.call('XADD', dlq, '*', 'b', body, 'reason', 'max_receives exceeded', 'receives', count, 'source', id)\n"
    "      out[1] = out[1] + 1\n"
    "    end\n"
    "    redis.call('XACK', stream, group, id)\n"
    "    redis.call('XDEL', stream, id)\n"
    "  else\n"
    "    reclaim[#reclaim + 1] = id\n"
    "    counts[id] = count + 1\n"
    "  end\n"
    "end\n"
    "if #reclaim > 0 then\n"
    "  local got = redis.call('XCLAIM', unpack(claim_args(stream, group, consumer, reclaim, now, false)))\n"
    "  for _, e in ipairs(got) do\n"
    "    if e and e[2] then\n"
    "      local body = ''\n"
    "      for i = 1, #e[2], 2 do if e[2][i] == 'b' then body = e[2][i + 1] end end\n"
    "      out[#out + 1] = e[1]; out[#out + 1] = counts[e[1]]; out[#out + 1] = body\n"
    "      taken = taken + 1\n"
    "    end\n"
    "  end\n"
    // An entry deleted from the stream but still pending has no body: drop it from the group.
    "  for _, id in ipairs(reclaim) do\n"
    "    if #redis.call('XRANGE', stream, id, id) == 0 then redis.call('XACK', stream, group, id) end\n"
    "  end\n"
    "end\n"
    // 2. New entries, stamped with the queue-time delivery time (JUSTID keeps the count at 1).
    "if taken < max then\n"
    "  local r = redis.call('XREADGROUP', 'GROUP', group, consumer, 'COUNT', max - taken, 'STREAMS', stream, '>')\n"
    "  if r and r[1] then\n"
    "    local ids = {}\n"
    "    for _, e in ipairs(r[1][2]) do\n"
    "      local body = ''\n"
    "      for i = 1, #e[2], 2 do if e[2][i] == 'b' then body = e[2][i + 1] end end\n"
    "      out[#out + 1] = e[1]; out[#out + 1] = 1; out[#out + 1] = body\n"
    "      ids[#ids + 1] = e[1]\n"
    "      taken = taken + 1\n"
    "    end\n"
    "    if #ids > 0 then redis.call('XCLAIM', unpack(claim_args(stream, group, consumer, ids, now, true))) end\n"
    "  end\n"
    "end\n"
    // 3. Nothing to hand out: tell the caller from where to wait for new entries.
    "if taken == 0 then\n"
    "  local last = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)\n"
    "  if #last > 0 then out[2] = last[1][1] else out[2] = '0-0' end\n"
    "end\n"
    "return out\n";

const char* const kRedisDeleteScript =
    "local stream, group, lenient = KEYS[1], ARGV[1], ARGV[2] == '1'\n"
    "local failed = {}\n"
    "for i = 3, #ARGV, 2 do\n"
    "  local id, count = ARGV[i], tonumber(ARGV[i + 1])\n"
    "  local p = redis.call('XPENDING', stream, group, id, id, 1)\n"
    "  if #p == 1 and tonumber(p[1][4]) == count then\n"
    "    redis.call('XACK', stream, group, id)\n"
    "    redis.call('XDEL', stream, id)\n"
    "  elseif not (lenient and #p == 0 and #redis.call('XRANGE', stream, id, id) == 0) then\n"
    "    failed[#failed + 1] = (i - 1) / 2\n"
    "  end\n"
    "end\n"
    "return failed\n";

const char* const kRedisVisibilityScript =
    "local stream, group, id, count = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])\n"
    "local vis, timeout = tonumber(ARGV[4]), tonumber(ARGV[5])\n"
    OVERHEAD_REDIS_NOW("ARGV[6]")
    "local p = redis.call('XPENDING', stream, group, id, id, 1)\n"
    "if #p ~= 1 or tonumber(p[1][4]) ~= count then return 0 end\n"
    "local delivery = now - vis + timeout\n"
    "if delivery > server_ms then delivery = server_ms end\n"
    "redis.call('XCLAIM', stream, group, p[1][2], 0, id, 'TIME', delivery, 'JUSTID')\n"
    "return 1\n";

#undef OVERHEAD_REDIS_NOW

}  // namespace overhead::backends
