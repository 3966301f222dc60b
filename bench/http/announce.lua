-- wrk script: HTTP announces over a fixed population of torrents and peers.
--
--   BENCH_MODE=steady wrk -t1 -c64 -d15s -s bench/http/announce.lua http://127.0.0.1:6969
--
-- The population is a pure function of BENCH_SEED, BENCH_TORRENTS and
-- BENCH_PEERS, so two trackers (or two runs) see exactly the same torrents
-- and peers:
--
--   torrent t (1..TORRENTS): a 20-byte info_hash
--   slot (t, k), k in 1..PEERS: a 20-byte peer_id ("-WB4100-" + 12 random
--     bytes), a port (distinct within the torrent: the trackers see every
--     peer as 127.0.0.1, and opentracker keys peers by address and port), and
--     `left` (a quarter of the slots are seeders, left=0).
--
-- Each request is a complete announce as a client sends it: info_hash and
-- peer_id percent-encoded (unreserved bytes left as they are), port,
-- uploaded, downloaded, left, compact=1, numwant=50.
--
-- Environment:
--   BENCH_SEED=1             population seed
--   BENCH_TORRENTS=1000      number of torrents
--   BENCH_PEERS=100          peers per torrent
--   BENCH_MODE=steady        steady: re-announces (no event) in the cycle
--                            order below;
--                            warmup: every slot with event=started, each wrk
--                            thread over its own share, then the thread
--                            stops (so -d is only an upper bound); needs
--                            BENCH_WRK_THREADS / BENCH_WRK_CONNECTIONS = the
--                            -t / -c given to wrk
--   BENCH_CONNECTION_CLOSE=1 send "Connection: close" (one request per
--                            connection, like opentracker's replies)
--   BENCH_WRITE_HASHES=FILE  only write the info hashes (hex, one per line:
--                            opentracker's whitelist format) to FILE and exit;
--                            wrk still needs a URL argument but connects nowhere
--
-- Order: both modes walk each thread's share of the slots through one fixed
-- permutation (slot = ((position - 1) * STRIDE) mod SLOTS + 1, STRIDE a prime
-- that does not divide SLOTS), so consecutive requests go to different
-- torrents and every peer re-announces once per cycle, as clients announce
-- once per interval; the steady run starts where the warm-up started, so a
-- peer's first re-announce comes a whole warm-up after its `started`. (A
-- tracker that enforces `min interval` then sees no early re-announce as
-- long as a cycle is longer than its early threshold; see compare.sh.)
-- BENCH_ORDER=random restores uniformly random slots in steady mode.
--
-- The response hook checks every reply and done() prints one line
--   BENCH requests=N ok=N non2xx=N failure=N nopeers=N avg_peers=X ...
-- that compare.sh parses: non2xx counts HTTP statuses other than 2xx,
-- failure counts bencoded "failure reason" replies, nopeers counts replies
-- whose compact peer string is missing or empty (after a warm-up every swarm
-- has PEERS peers, so a steady-state reply without peers is wrong).

local SEED = tonumber(os.getenv("BENCH_SEED") or "1")
local TORRENTS = tonumber(os.getenv("BENCH_TORRENTS") or "1000")
local PEERS = tonumber(os.getenv("BENCH_PEERS") or "100")
local MODE = os.getenv("BENCH_MODE") or "steady"
local ORDER = os.getenv("BENCH_ORDER") or "cycle"
local STRIDE = 1000003  -- prime
local NUMWANT = 50
local SEEDER_PERCENT = 25
local PEER_ID_PREFIX = "-WB4100-"

assert(MODE == "steady" or MODE == "warmup", "BENCH_MODE must be steady or warmup")
assert(ORDER == "cycle" or ORDER == "random", "BENCH_ORDER must be cycle or random")
assert(TORRENTS >= 1 and PEERS >= 1 and PEERS <= 60000, "bad BENCH_TORRENTS / BENCH_PEERS")

-- Park-Miller "minimal standard" generator. Chosen over math.random because
-- its sequence is fixed by the seed on every Lua (LuaJIT, 5.1-5.4): all
-- products stay below 2^53, so doubles compute them exactly.
local MINSTD_M = 2147483647
local function minstd(seed)
  local x = seed % MINSTD_M
  if x <= 0 then x = x + MINSTD_M - 1 end
  return function()
    x = (x * 48271) % MINSTD_M
    return x
  end
end

-- One byte from the high bits of the next value (the low bits of an LCG are
-- its weakest).
local function next_byte(rng)
  return math.floor(rng() / 8388608) % 256   -- 2^23: keep bits 23..30
end

local function random_bytes(rng, n)
  local t = {}
  for i = 1, n do t[i] = string.char(next_byte(rng)) end
  return table.concat(t)
end

local function hex(s)
  return (s:gsub(".", function(c) return string.format("%02x", c:byte()) end))
end

-- Percent-encoding as BitTorrent clients do it: unreserved characters stay,
-- every other byte becomes %XX.
local function urlencode(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", c:byte()) end))
end

-- The population. Info hashes come from their own generator so the whitelist
-- does not depend on BENCH_PEERS.
local hash_rng = minstd(SEED * 7 + 11)
local info_hashes = {}
for t = 1, TORRENTS do info_hashes[t] = random_bytes(hash_rng, 20) end

local hash_file = os.getenv("BENCH_WRITE_HASHES")
if hash_file and hash_file ~= "" then
  local f = assert(io.open(hash_file, "w"))
  for t = 1, TORRENTS do f:write(hex(info_hashes[t]), "\n") end
  f:close()
  io.stderr:write(string.format("announce.lua: wrote %d info hashes to %s\n", TORRENTS, hash_file))
  os.exit(0)
end

-- slots[(t - 1) * PEERS + k] = the announce path for slot (t, k), without event.
local slots = {}
local peer_rng = minstd(SEED * 13 + 17)
for t = 1, TORRENTS do
  local prefix = "/announce?info_hash=" .. urlencode(info_hashes[t])
  local first_port = peer_rng() % 64000
  for k = 1, PEERS do
    local peer_id = PEER_ID_PREFIX .. random_bytes(peer_rng, 12)
    -- 7919 is prime, so coprime with 64000: ports are distinct within a torrent.
    local port = 1025 + (first_port + (k - 1) * 7919) % 64000
    local left = 0
    if peer_rng() % 100 >= SEEDER_PERCENT then left = 1 + peer_rng() % 1073741824 end
    local downloaded = 0
    if left == 0 then downloaded = 1 + peer_rng() % 1073741824 end
    slots[#slots + 1] = string.format(
      "%s&peer_id=%s&port=%d&uploaded=0&downloaded=%d&left=%d&compact=1&numwant=%d",
      prefix, urlencode(peer_id), port, downloaded, left, NUMWANT)
  end
end
local SLOTS = #slots
assert(SLOTS % STRIDE ~= 0, "BENCH_TORRENTS * BENCH_PEERS must not be a multiple of 1000003")

-- Position (1..SLOTS) -> slot index: a fixed permutation that spreads
-- consecutive positions over the torrents.
local function permuted(position)
  return ((position - 1) * STRIDE) % SLOTS + 1
end

if os.getenv("BENCH_CONNECTION_CLOSE") == "1" then
  wrk.headers["Connection"] = "close"
end
wrk.headers["User-Agent"] = "swarmkeeper-bench/wrk"

-- Main state: remember the threads to collect their counters in done().
local threads = {}
function setup(thread)
  thread:set("thread_index", #threads)
  table.insert(threads, thread)
end

-- Thread state.
counters = { requests = 0, ok = 0, non2xx = 0, failure = 0, nopeers = 0, peers = 0 }
local share_first, share_size, share_pos, stop_after

function init(args)
  local index = thread_index or 0
  -- Every thread gets its own, reproducible request sequence.
  math.randomseed(SEED * 1000 + index)
  -- init() cannot know how many threads wrk starts (it runs before the
  -- next thread's setup), so compare.sh passes -t and -c.
  local threads_total = math.max(tonumber(os.getenv("BENCH_WRK_THREADS") or "1") or 1, 1)
  local connections = math.max(tonumber(os.getenv("BENCH_WRK_CONNECTIONS") or "64") or 64, 1)
  local per_thread = math.ceil(SLOTS / threads_total)
  share_first = index * per_thread + 1
  share_size = math.max(math.min(per_thread, SLOTS - share_first + 1), 1)
  if share_first > SLOTS then share_first = SLOTS end
  share_pos = 0
  -- Warm-up: the share is walked once, and the thread stops once a full
  -- turn, plus one request per connection that may still have been in
  -- flight, has been answered. (wrk also calls request() once before the
  -- run to check it, which skips a slot; the extra turn covers that too.)
  stop_after = share_size + 1 + math.ceil(connections / threads_total)
end

function request()
  if MODE == "steady" and ORDER == "random" then
    return wrk.format("GET", slots[math.random(SLOTS)])
  end
  local slot = permuted(share_first + share_pos % share_size)
  share_pos = share_pos + 1
  if MODE == "warmup" then
    return wrk.format("GET", slots[slot] .. "&event=started")
  end
  return wrk.format("GET", slots[slot])
end

function response(status, headers, body)
  counters.requests = counters.requests + 1
  if status < 200 or status > 299 then
    counters.non2xx = counters.non2xx + 1
  elseif body:find("14:failure reason", 1, true) then
    counters.failure = counters.failure + 1
  else
    counters.ok = counters.ok + 1
    local len = body:match("5:peers(%d+):")
    if len == nil or len == "0" then
      counters.nopeers = counters.nopeers + 1
    else
      counters.peers = counters.peers + tonumber(len) / 6
    end
  end
  if MODE == "warmup" and counters.requests >= stop_after then
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  local total = { requests = 0, ok = 0, non2xx = 0, failure = 0, nopeers = 0, peers = 0 }
  for _, thread in ipairs(threads) do
    local c = thread:get("counters")
    for key, _ in pairs(total) do total[key] = total[key] + (c[key] or 0) end
  end
  local seconds = summary.duration / 1e6
  local e = summary.errors
  local avg_peers = 0
  if total.ok > total.nopeers then avg_peers = total.peers / (total.ok - total.nopeers) end
  io.write(string.format(
    "BENCH mode=%s slots=%d requests=%d rps=%.1f ok=%d non2xx=%d failure=%d nopeers=%d " ..
    "avg_peers=%.1f connect_errors=%d read_errors=%d write_errors=%d timeouts=%d " ..
    "status_errors=%d latency_p50_us=%d latency_p99_us=%d\n",
    MODE, SLOTS, summary.requests, summary.requests / seconds, total.ok, total.non2xx,
    total.failure, total.nopeers, avg_peers, e.connect, e.read, e.write, e.timeout, e.status,
    latency:percentile(50), latency:percentile(99)))
end
