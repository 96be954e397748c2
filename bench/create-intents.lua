-- wrk script for Scripts/bench: fills a `sandbox serve` with Bahn payment intents, as fast as wrk can POST them.
-- Usage: wrk -tTHREADS ... -s bench/create-intents.lua URL/api/payment_intents -- BODY_FILE API_KEY COUNT THREADS DONE_DIR
-- Every request is the same signed create (a compact JWS the emulator verifies each time). It carries no
-- Bn-Idempotency-Key, which create does not require, so each one makes a new intent rather than replaying the
-- first. Bn-Request-Id only has to be a UUID, so one fixed value serves. Each thread stops once it has had its
-- share of 200 answers and leaves a file in DONE_DIR: wrk itself runs until its -d duration is over, so the
-- caller interrupts it (SIGINT, after which wrk still reports) once every thread has left its file. done()
-- prints how many intents were created and the last id each thread got, to read back.

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  local file = assert(io.open(args[1], "rb"))
  wrk.method = "POST"
  wrk.body = file:read("*a"):gsub("%s+$", "")
  file:close()
  wrk.headers["Content-Type"] = "application/jose"
  wrk.headers["Accept"] = "application/json"
  wrk.headers["Bn-Api-Key"] = args[2]
  wrk.headers["Bn-Jose-Method"] = "jws"
  wrk.headers["Bn-Request-Id"] = "5b0c1f0e-9a7d-4b42-8c00-000000000001"
  -- setup() numbered this thread (`id`) before its init() runs: each gets COUNT / THREADS, the last the remainder.
  local count, nthreads = tonumber(args[3]), tonumber(args[4])
  quota = math.floor(count / nthreads)
  if id == nthreads then quota = count - quota * (nthreads - 1) end
  done_file = args[5] .. "/thread-" .. id
  created, refused, last_id = 0, 0, ""
end

function response(status, headers, body)
  if status == 200 then
    created = created + 1
    if created >= quota then
      last_id = body:match('"id":"(pi_[^"]+)"') or ""
      wrk.thread:stop()
      assert(io.open(done_file, "w")):close()
    end
  else
    refused = refused + 1
  end
end

function done(summary, latency, requests)
  local total, refusals = 0, 0
  for _, thread in ipairs(threads) do
    total = total + thread:get("created")
    refusals = refusals + thread:get("refused")
    io.write("id ", thread:get("last_id"), "\n")
  end
  io.write("created ", total, "\n", "refused ", refusals, "\n")
end
