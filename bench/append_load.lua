-- append_load.lua: the append load of bench/cpu_per_append.sh for wrk. Each request appends one
-- 256-byte JSON object, {"n":N,"pad":"xx..."}, to one of 100 streams, /v1/stream/bench-0 to
-- /v1/stream/bench-99, in turn (create them first with PUT). Each wrk thread has its own counter,
-- started at a different stream, so the threads do not append to the same stream in step.
--
--   wrk -t2 -c32 -d10s -s bench/append_load.lua http://127.0.0.1:PORT
--
-- At the end it prints one line for scripts, e.g. "append_load requests=123456 non_2xx=0
-- socket_errors=0": requests answered, those answered 4xx or 5xx (wrk counts no others as
-- failed), and connect, read, write and timeout errors together.

local kStreams = 100
local kBodyBytes = 256

local threads = {}
local counter = 0

-- The padding for each length of N, made once.
local pads = {}

local function body(n)
  local digits = tostring(n)
  local pad = pads[#digits]
  if pad == nil then
    -- {"n":  ,"pad":"  "}: 5 + 8 + 2 bytes around the number and the padding.
    pad = string.rep("x", kBodyBytes - 15 - #digits)
    pads[#digits] = pad
  end
  return '{"n":' .. digits .. ',"pad":"' .. pad .. '"}'
end

function setup(thread)
  thread:set("first", #threads * 37)
  table.insert(threads, thread)
end

function init(args)
  counter = first or 0
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  local n = counter
  counter = counter + 1
  return wrk.format("POST", "/v1/stream/bench-" .. (n % kStreams), nil, body(n))
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("append_load requests=%d non_2xx=%d socket_errors=%d\n",
                         summary.requests, e.status, e.connect + e.read + e.write + e.timeout))
end
