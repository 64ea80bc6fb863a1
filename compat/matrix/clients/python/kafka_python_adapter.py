"""kafka-python (pure Python) for the client matrix."""

import logging
import sys
import time

import kafka
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaConnectionError, NodeNotReadyError
from kafka.structs import OffsetAndMetadata

from adapter import InputClosed, emit, error, end_on_authentication_failure, is_connection_text, records, run, secure


def describe(e):
    name = type(e).__name__
    connection = isinstance(e, (KafkaConnectionError, NodeNotReadyError)) or is_connection_text(name)
    return error(name, str(e), connection=connection)


def base(cfg):
    conf = {
        "bootstrap_servers": cfg["bootstrap"].split(","),
        "retry_backoff_ms": cfg["backoffMs"],
        "reconnect_backoff_ms": cfg["backoffMs"],
        "reconnect_backoff_max_ms": 100,
    }
    if cfg.get("clientId"):
        conf["client_id"] = cfg["clientId"]
    if secure(cfg):
        end_on_authentication_failure("kafka", describe)
        conf.update({
            "security_protocol": cfg["securityProtocol"],
            "sasl_mechanism": cfg["saslMechanism"],
            "sasl_plain_username": cfg["saslUsername"],
            "sasl_plain_password": cfg["saslPassword"],
            "ssl_cafile": cfg["sslCaFile"],
        })
    return conf


def version(cfg):
    emit("version", version=kafka.__version__)


def produce(cfg):
    conf = base(cfg)
    conf.update({
        "acks": "all" if cfg["acks"] == -1 else cfg["acks"],
        "compression_type": None if cfg["codec"] == "none" else cfg["codec"],
        "linger_ms": 5,
        "enable_idempotence": cfg["idempotent"],
    })
    if cfg["retries"] >= 0:
        conf["retries"] = cfg["retries"]
    if cfg["deliveryTimeoutMs"] > 0:
        # delivery.timeout.ms must cover linger.ms + request.timeout.ms.
        conf["delivery_timeout_ms"] = cfg["deliveryTimeoutMs"]
        conf["request_timeout_ms"] = min(30000, cfg["deliveryTimeoutMs"] - 5)
    p = KafkaProducer(**conf)

    def report(i):
        return (lambda md: emit("delivery", index=i, offset=md.offset),
                lambda e: emit("delivery", index=i, error=describe(e)))

    for i, rec in enumerate(records()):
        ok, failed = report(i)
        try:
            f = p.send(cfg["topic"], partition=cfg["partition"], key=rec["key"].encode() if rec["key"] else None, value=rec["value"].encode())
        except Exception as e:
            failed(e)
            continue
        f.add_callback(ok)
        f.add_errback(failed)
    p.flush()
    p.close()


def stream(c, stop):
    while not stop.is_set():
        try:
            batches = c.poll(timeout_ms=50)
        except Exception as e:
            emit("error", error=describe(e))
            time.sleep(0.02)  # the client's own backoff is in poll; this bounds a loop on a raised error
            continue
        for tp, recs in batches.items():
            for r in recs:
                emit("record", partition=tp.partition, offset=r.offset,
                     key=r.key.decode() if r.key is not None else "", value=(r.value or b"").decode())
    c.close()  # commits and leaves the group


def consume(cfg):
    stop = InputClosed()
    conf = base(cfg)
    conf.update({"group_id": None, "enable_auto_commit": False, "fetch_max_wait_ms": cfg["fetchWaitMs"]})
    conf["isolation_level"] = "read_committed" if cfg["readCommitted"] else "read_uncommitted"
    c = KafkaConsumer(**conf)
    tp = TopicPartition(cfg["topic"], cfg["partition"])
    c.assign([tp])
    c.seek(tp, cfg["offset"])
    stream(c, stop)


def transact(cfg):
    conf = base(cfg)
    conf.update({"transactional_id": cfg["transactionalId"], "linger_ms": 5})
    p = KafkaProducer(**conf)
    p.init_transactions()
    lines = records()
    for i, txn in enumerate(lines):
        p.begin_transaction()
        sent = [p.send(cfg["topic"], partition=cfg["partition"], key=rec["key"].encode() if rec["key"] else None, value=rec["value"].encode())
                for rec in txn["records"]]
        for f in sent:  # every record acknowledged before the transaction ends
            f.get(timeout=30)
        o = txn.get("offsets")
        if o:
            p.send_offsets_to_transaction({TopicPartition(o["topic"], o["partition"]): OffsetAndMetadata(o["offset"], "", -1)}, o["group"])
        if txn.get("await"):
            emit("produced", index=i)
            if next(lines, None) is None:
                return  # the input ended instead: leave the transaction open
        if txn["commit"]:
            p.commit_transaction()
        else:
            p.abort_transaction()
        emit("txn", index=i)
    p.close()


def group(cfg):
    stop = InputClosed()
    # The coordinator's steps (joining, assignment, commits) on standard
    # error: a member that consumes nothing shows them in the test's failure.
    log = logging.getLogger("kafka.coordinator")
    log.setLevel(logging.INFO)
    log.addHandler(logging.StreamHandler(sys.stderr))
    conf = base(cfg)
    conf.update({
        "group_id": cfg["group"],
        "auto_offset_reset": "earliest",
        "enable_auto_commit": True,
        "fetch_max_wait_ms": cfg["fetchWaitMs"],
        "session_timeout_ms": cfg["sessionTimeoutMs"],
        "heartbeat_interval_ms": cfg["heartbeatIntervalMs"],
        "auto_commit_interval_ms": cfg["commitIntervalMs"],
    })
    c = KafkaConsumer(cfg["topic"], **conf)
    stream(c, stop)


def metadata(cfg):
    a = KafkaAdminClient(**base(cfg))
    # describe_cluster asks DescribeCluster to include fenced brokers (a
    # crashed one, once the controller fenced it), flagged is_fenced.
    brokers = [{"id": b["broker_id"], "host": b["host"], "port": b["port"]}
               for b in a.describe_cluster()["brokers"] if not b.get("is_fenced")]
    topics = []
    for t in a.describe_topics(cfg["topics"]):
        if t["error_code"] != 0:
            raise Exception("topic %s: error code %d" % (t["name"], t["error_code"]))
        topics.append({"name": t["name"], "partitions": [
            {"partition": p["partition_index"], "leader": p["leader_id"], "replicas": p["replica_nodes"], "isr": p["isr_nodes"]}
            for p in t["partitions"]]})
    a.close()
    emit("metadata", brokers=brokers, topics=topics)


run({"version": version, "produce": produce, "consume": consume, "group": group, "metadata": metadata, "transact": transact})
