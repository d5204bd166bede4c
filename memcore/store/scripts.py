"""Lua scripts: each one is a single atomic step that a WATCH/MULTI cannot express.

Scripts build key names from the namespace prefix they are given; every such
key carries the namespace's hash tag, so in Redis Cluster they all hash to the
slot of KEYS[1].
"""

from __future__ import annotations

# KEYS: current pointer. ARGV: ns prefix, ids... -> {version, record or false, ...}
MGET_CURRENT = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local out = {v}
for i = 2, #ARGV do
  out[i] = redis.call('GET', ARGV[1] .. 'v' .. v .. ':m:' .. ARGV[i])
end
return out
"""

# KEYS: order length. ARGV: chunk key prefix, chunk size, ids... -> new length
ORDER_APPEND = """
local size = tonumber(ARGV[2])
local n = 0
for i = 3, #ARGV do
  n = redis.call('INCR', KEYS[1]) - 1
  redis.call('RPUSH', ARGV[1] .. math.floor(n / size), ARGV[i])
end
return n + 1
"""

# KEYS: audit stream. ARGV: payload key prefix, payload ('' = none), field, value, ...
AUDIT_APPEND = """
local fields = {}
for i = 3, #ARGV do fields[#fields + 1] = ARGV[i] end
local id = redis.call('XADD', KEYS[1], '*', unpack(fields))
if ARGV[2] ~= '' then
  local ms = tonumber(string.match(id, '^(%d+)'))
  redis.call('HSET', ARGV[1] .. math.floor(ms / 86400000), id, ARGV[2])
end
return id
"""

# Recall bookkeeping in place on the packed header '<BIldI' (see records.RECALL).
# KEYS: current, pass token, delta. ARGV: ns prefix, now (epoch us), cap, ids...
TOUCH = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local passing = redis.call('EXISTS', KEYS[2]) == 1
local now = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local n = 0
for i = 4, #ARGV do
  local key = ARGV[1] .. 'v' .. v .. ':m:' .. ARGV[i]
  local rec = redis.call('GET', key)
  if rec then
    local fmt, ver, _, strength, count, pos = struct.unpack('<BIldI', rec)
    strength = math.min(cap, strength + 1)
    redis.call('SET', key, struct.pack('<BIldI', fmt, ver + 1, now, strength, count + 1)
      .. string.sub(rec, pos))
    if passing then
      redis.call('XADD', KEYS[3], '*', 'id', ARGV[i], 'op', 'touch', 'ver', ver + 1,
        'args', cjson.encode({now = ARGV[2], cap = ARGV[3]}))
    end
    n = n + 1
  end
end
return n
"""

# Pointer swap of a pass. KEYS: current, pass token, delta, versions, building.
# ARGV: expected version, new version, token, last replayed delta id, created_at.
# -> 1 swapped, 0 new delta entries (replay more), -1 pointer moved, -2 pass taken over
CAS_COMMIT = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v ~= tonumber(ARGV[1]) then return -1 end
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return -2 end
if #redis.call('XRANGE', KEYS[3], '(' .. ARGV[4], '+', 'COUNT', 1) > 0 then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
return 1
"""

# Idempotent episode append. KEYS: episode stream. ARGV: ns prefix, id, body, id, body...
ADD_EPISODES = """
local out = {}
for i = 2, #ARGV, 2 do
  local key = ARGV[1] .. 'ep:' .. ARGV[i]
  if redis.call('EXISTS', key) == 1 then
    out[#out + 1] = 0
  else
    local sid = redis.call('XADD', KEYS[1], '*', 'i', ARGV[i])
    redis.call('SET', key, sid .. '|' .. ARGV[i + 1])
    out[#out + 1] = 1
  end
end
return out
"""

# Physically rewrite a stream without some entries (XDEL only flags them, and the
# bytes would survive in DUMP). KEYS: stream, scratch key. ARGV: ids to drop.
REWRITE_STREAM = """
local drop = {}
for i = 1, #ARGV do drop[ARGV[i]] = true end
local info = redis.call('EXISTS', KEYS[1])
if info == 0 then return 0 end
local last = redis.call('XINFO', 'STREAM', KEYS[1])
local last_id
for i = 1, #last, 2 do if last[i] == 'last-generated-id' then last_id = last[i + 1] end end
redis.call('DEL', KEYS[2])
local kept = 0
for _, entry in ipairs(redis.call('XRANGE', KEYS[1], '-', '+')) do
  if not drop[entry[1]] then
    redis.call('XADD', KEYS[2], entry[1], unpack(entry[2]))
    kept = kept + 1
  end
end
if kept == 0 then
  redis.call('DEL', KEYS[1])
  return 0
end
redis.call('XSETID', KEYS[2], last_id)
redis.call('RENAME', KEYS[2], KEYS[1])
return kept
"""
