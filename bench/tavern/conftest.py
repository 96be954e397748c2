"""Fixtures the Tavern flows format their requests with, and the timing Scripts/bench reads.

- `emulator` (once per process): the `sandbox serve` URL (EMULATOR_URL) and the emulator's test credentials.
- `bahn_webhook_target` (once per process): this process's webhook inbox registered as a target of the emulator
  (`PUT /_sandbox/bahn/webhook-targets/run-<pid>-<8 hex>`, the driver's id shape) before the first Bahn run, and
  removed when the process ends — as the driver registers one target for all the runs of a batch.
- `run` (once per test): what our flow makes per run: an order id (`${uuid}`).
- With TAVERN_REPORT set, the controlling process (xdist's, or the only one) writes there how many tests passed
  and failed, and the window from the first test's start to the last one's end: flows/s over that window leaves
  out interpreter start-up and collection, as the driver's batch summary leaves out its process start.
"""

import json
import os
import urllib.request
import uuid

import pytest

import emulator_credentials as creds
import webhook_inbox


@pytest.fixture(scope="session")
def emulator():
    return {
        "url": os.environ["EMULATOR_URL"],
        "bahn_api_key": creds.BAHN_API_KEY,
        "centra_plugin_token": creds.CENTRA_PLUGIN_TOKEN,
        "centra_shared_secret": creds.CENTRA_SHARED_SECRET,
    }


@pytest.fixture(scope="session")
def bahn_webhook_target(emulator):
    url = f"{emulator['url']}/_sandbox/bahn/webhook-targets/run-{os.getpid()}-{uuid.uuid4().hex[:8]}"

    def send(method, body=None):
        request = urllib.request.Request(url, method=method, data=body, headers={"Content-Type": "application/json"} if body else {})
        urllib.request.urlopen(request, timeout=10).read()

    send("PUT", json.dumps({"url": webhook_inbox.inbox().url}).encode())
    yield
    send("DELETE")


@pytest.fixture
def run():
    return {"order_id": str(uuid.uuid4())}


class _Timing:
    def __init__(self, path):
        self.path = path
        self.outcomes = {"passed": 0, "failed": 0, "skipped": 0}
        self.first_start = None
        self.last_stop = None

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        # Each test reports setup, call and teardown; the window spans all of them.
        self.first_start = report.start if self.first_start is None else min(self.first_start, report.start)
        self.last_stop = report.stop if self.last_stop is None else max(self.last_stop, report.stop)
        # A test counts by its call, or by a setup that failed or skipped it; a failed teardown is one more failure.
        if report.when == "call" or (report.when == "setup" and not report.passed):
            self.outcomes[report.outcome] += 1
        elif report.when == "teardown" and report.failed:
            self.outcomes["failed"] += 1

    @pytest.hookimpl
    def pytest_sessionfinish(self, session, exitstatus):
        window = (self.last_stop - self.first_start) if self.first_start is not None else 0.0
        with open(self.path, "w") as out:
            json.dump({**self.outcomes, "windowSeconds": window, "exitstatus": int(exitstatus)}, out)


def pytest_configure(config):
    path = os.environ.get("TAVERN_REPORT")
    # xdist workers carry `workerinput`; only the controller, which sees every worker's reports, writes the file.
    if path and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Timing(path), "bench-timing")
