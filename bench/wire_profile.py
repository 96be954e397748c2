"""What one flow sends, as the emulator saw it: Scripts/bench's check that the Tavern flows do our flows' wire work.

  wire_profile.py mark URL NAME            send a marker request (GET /_sandbox/health with X-Bench-Mark: NAME)
  wire_profile.py count URL NAME RUNS OUT  write to OUT the requests received after that marker, per flow run
  wire_profile.py compare OURS THEIRS      say whether two profiles match (exit 0), and how not (exit 1)

A profile counts requests by kind (method and path with ids replaced by {id}, and for GraphQL the operation
name) and request body bytes, per flow run — except a process's own setup, counted apart: a Bahn webhook target is
registered once by the driver for all the runs of a batch, and once by each pytest process. Both must register and
remove as many as they use.
The emulator's request log (GET /_sandbox/requests) keeps the last 10,000 requests; a profile whose marker has
already left it says so instead of guessing.
"""

import json
import re
import sys
import urllib.request
from collections import Counter

MARK_HEADER = "X-Bench-Mark"


def mark(url, name):
    request = urllib.request.Request(url + "/_sandbox/health", headers={MARK_HEADER: name})
    urllib.request.urlopen(request).read()


def kind(entry):
    path = entry["target"].split("?")[0]
    # Ids: Bahn's pi_/pm_ ULIDs, the demo orders' ord_<hex>, and the run-<pid>-<hex> webhook target names.
    path = re.sub(r"/(pi|pm)_[0-9A-Z]+", "/{id}", path)
    path = re.sub(r"/ord_[0-9a-f]+", "/{id}", path)
    path = re.sub(r"/webhook-targets/[^/]+", "/webhook-targets/{id}", path)
    name = f"{entry['method']} {path}"
    if path.endswith("/graphql"):
        try:
            name += " " + json.loads(entry["body"]).get("operationName", "?")
        except ValueError:
            name += " (not JSON)"
    return name


# Requests made once per process rather than once per run.
SETUP_KINDS = {"PUT /_sandbox/bahn/webhook-targets/{id}", "DELETE /_sandbox/bahn/webhook-targets/{id}"}


def requests(url):
    """Every request the log keeps, oldest first, a page of 1,000 at a time (`?since=` the last id read)."""
    log, since = [], None
    while True:
        page = json.load(urllib.request.urlopen(url + "/_sandbox/requests?limit=1000" + (f"&since={since}" if since else "")))
        log += page["requests"]
        if not page["hasMore"] or not page["requests"]:
            return log
        since = page["requests"][-1]["id"]


def count(url, name, runs, out):
    log = requests(url)
    marks = [i for i, entry in enumerate(log)
             if any(k.lower() == MARK_HEADER.lower() and v == name for k, v in entry["headers"])]
    if not marks:
        profile = {"error": f"the marker {name} has left the emulator's request log (it keeps the last 10,000)"}
    else:
        entries = [e for e in log[marks[-1] + 1:] if not e["target"].startswith("/_sandbox/requests")]
        setup = Counter(kind(e) for e in entries if kind(e) in SETUP_KINDS)
        entries = [e for e in entries if kind(e) not in SETUP_KINDS]
        kinds = Counter(kind(e) for e in entries)
        profile = {"perFlow": len(entries) / runs, "kinds": {k: n / runs for k, n in sorted(kinds.items())},
                   "bodyBytes": sum(e["bodyLength"] for e in entries) / runs, "setup": dict(sorted(setup.items()))}
    with open(out, "w") as file:
        json.dump(profile, file)


def compare(ours_path, theirs_path):
    ours, theirs = (json.load(open(p)) for p in (ours_path, theirs_path))
    for profile in (ours, theirs):
        if "error" in profile:
            print(f"not checked: {profile['error']}")
            return
    bytes_ = f"request bodies {ours['bodyBytes']:.0f} B per run for ours, {theirs['bodyBytes']:.0f} B for Tavern"
    # Setup: the same kinds on both sides, each target registered is removed.
    setups = [p.get("setup", {}) for p in (ours, theirs)]
    balanced = all(s.get("PUT /_sandbox/bahn/webhook-targets/{id}", 0) == s.get("DELETE /_sandbox/bahn/webhook-targets/{id}", 0)
                   for s in setups)
    if set(setups[0]) != set(setups[1]) or not balanced:
        print(f"DIFFERENT setup (ours {setups[0]}, Tavern {setups[1]})")
        sys.exit(1)
    setup = "" if not setups[0] else (f"; once per process, {', '.join(setups[0])} (ours {sum(setups[0].values())} "
                                      f"for the batch, Tavern {sum(setups[1].values())} over its processes)")
    if ours["kinds"] == theirs["kinds"]:
        print(f"same requests per run, {ours['perFlow']:g}: "
              + ", ".join(f"{n:g}× {k}" for k, n in ours["kinds"].items()) + f"; {bytes_}{setup}")
    else:
        kinds = sorted(set(ours["kinds"]) | set(theirs["kinds"]))
        diff = [f"{k}: ours {ours['kinds'].get(k, 0):g}, Tavern {theirs['kinds'].get(k, 0):g}"
                for k in kinds if ours["kinds"].get(k) != theirs["kinds"].get(k)]
        print(f"DIFFERENT per run (ours {ours['perFlow']:g}, Tavern {theirs['perFlow']:g}): " + "; ".join(diff))
        sys.exit(1)


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "mark":
        mark(*args)
    elif command == "count":
        count(args[0], args[1], int(args[2]), args[3])
    elif command == "compare":
        compare(*args)
    else:
        sys.exit(__doc__)
