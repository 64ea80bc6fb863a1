"""fakekafka's image from Testcontainers for Python: a generic container,
one PUT with the mapped ports, an HTTP wait on /readyz, then kafka-python
produces and consumes through every broker, and a broker is crashed and
restarted through the control API.

Run by scripts/containers.sh (which builds the image and sets
FAKEKAFKA_IMAGE); by hand:
    FAKEKAFKA_IMAGE=fakekafka:dev TESTCONTAINERS_RYUK_DISABLED=true \
    TESTCONTAINERS_HOST_OVERRIDE=127.0.0.1 python3 test_fakekafka.py
"""

import json
import os
import time
import unittest
import urllib.error
import urllib.request

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from testcontainers.core.container import DockerContainer

IMAGE = os.environ.get("FAKEKAFKA_IMAGE", "fakekafka:dev")
BROKERS = 3
CONTROL_PORT = 8080
EXTERNAL_PORT = 9092  # broker n listens on 9092+n-1


def http(method, url, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, json.loads(resp.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def wait_until(what, cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            if cond():
                return
        except (OSError, urllib.error.URLError):
            pass  # not listening yet
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting for " + what)
        time.sleep(0.02)  # polling interval


class FakeKafkaContainer(DockerContainer):
    """The recipe for any Testcontainers: expose the ports, ask the cluster
    to wait for its EXTERNAL addresses, send them once started."""

    def __init__(self, image=IMAGE, brokers=BROKERS):
        super().__init__(image)
        self.brokers = brokers
        self.with_env("FAKEKAFKA_BROKERS", str(brokers))
        self.with_env("FAKEKAFKA_AWAIT_ADVERTISED", "EXTERNAL")
        self.with_exposed_ports(CONTROL_PORT, *[EXTERNAL_PORT + i for i in range(brokers)])

    def start(self):
        super().start()
        host = self.get_container_host_ip()
        self.control = "http://%s:%s" % (host, self.get_exposed_port(CONTROL_PORT))
        self.bootstrap = ["%s:%s" % (host, self.get_exposed_port(EXTERNAL_PORT + i)) for i in range(self.brokers)]
        advertised = {str(i + 1): a for i, a in enumerate(self.bootstrap)}
        # The control API may not listen yet when Docker's port is open.
        wait_until("PUT /v1/listeners/EXTERNAL",
                   lambda: http("PUT", self.control + "/v1/listeners/EXTERNAL", {"advertised": advertised})[0] == 200)
        wait_until("/readyz", lambda: http("GET", self.control + "/readyz")[0] == 200)
        return self


class TestFakeKafkaFromPython(unittest.TestCase):
    def test_produce_consume_and_a_crash(self):
        started = time.monotonic()
        with FakeKafkaContainer().with_env("FAKEKAFKA_TOPICS", "py:3:3") as fk:
            status, listeners = http("GET", fk.control + "/v1/listeners")
            self.assertEqual(status, 200)
            self.assertEqual([b["advertised"] for b in listeners[0]["brokers"]], fk.bootstrap)

            producer = KafkaProducer(bootstrap_servers=fk.bootstrap, acks="all", retries=10, retry_backoff_ms=50)
            for i in range(6):
                producer.send("py", value=b"v%d" % i, partition=i % 3)
                if i == 0:
                    producer.flush(timeout=30)
                    print("first record %.3f s after start() was called" % (time.monotonic() - started))
            producer.flush(timeout=30)

            # Crash the leader of py/0 (broker 1) and keep producing there.
            status, state = http("POST", fk.control + "/v1/brokers/1/stop", {"mode": "crash"})
            self.assertEqual(status, 200, state)
            topic = next(t for t in state["topics"] if t["name"] == "py")
            self.assertNotEqual(topic["partitions"][0]["leader"], 1)
            producer.send("py", value=b"after-crash", partition=0).get(timeout=30)
            status, state = http("POST", fk.control + "/v1/brokers/1/stop", {"mode": "crash"})
            self.assertEqual(status, 409, state)
            self.assertIn("already stopped", state["error"])
            status, _ = http("POST", fk.control + "/v1/brokers/1/start")
            self.assertEqual(status, 200)
            producer.close()

            consumer = KafkaConsumer(bootstrap_servers=fk.bootstrap, auto_offset_reset="earliest",
                                     consumer_timeout_ms=10000)
            consumer.assign([TopicPartition("py", p) for p in range(3)])
            got = sorted(m.value for _, m in zip(range(7), consumer))
            consumer.close()
            self.assertEqual(got, sorted([b"v%d" % i for i in range(6)] + [b"after-crash"]))


if __name__ == "__main__":
    unittest.main(verbosity=2)
