"""confluent-kafka (librdkafka, bundled in the wheel) for the client matrix."""

import logging
import threading

import confluent_kafka
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from adapter import InputClosed, emit, end_with, error, records, run, secure

CONNECTION_CODES = {KafkaError._TRANSPORT, KafkaError._ALL_BROKERS_DOWN}


def describe(err):
    return error("KafkaError " + err.name(), err.str(), connection=err.code() in CONNECTION_CODES)


class ProtocolErrors(logging.Handler):
    """Passes on what librdkafka logs as PROTOERR: a response it could not
    parse. confluent-kafka logs (fac, name, message)."""

    def __init__(self, report):
        super().__init__()
        self.report = report

    def emit(self, rec):
        if rec.args and len(rec.args) >= 3 and rec.args[0] == "PROTOERR":
            self.report(error("PROTOERR", str(rec.args[2]), protocol=True))


def base(cfg, report=lambda e: None):
    log = logging.getLogger("rdkafka-%d" % id(report))
    log.addHandler(ProtocolErrors(report))
    log.propagate = False
    conf = {
        "bootstrap.servers": cfg["bootstrap"],
        "retry.backoff.ms": cfg["backoffMs"],
        "retry.backoff.max.ms": cfg["backoffMs"],
        "reconnect.backoff.ms": cfg["backoffMs"],
        "reconnect.backoff.max.ms": 100,
        "logger": log,
        "log_level": 3,
    }
    if cfg.get("clientId"):
        conf["client.id"] = cfg["clientId"]
    if secure(cfg):
        conf.update({
            "security.protocol": cfg["securityProtocol"],
            "sasl.mechanisms": cfg["saslMechanism"],
            "sasl.username": cfg["saslUsername"],
            "sasl.password": cfg["saslPassword"],
            "ssl.ca.location": cfg["sslCaFile"],
        })
    return conf


def auth_failed(err):
    """A producer's error callback: a failed authentication ends the
    operation (librdkafka would retry it until the delivery timeout)."""
    if err.code() == KafkaError._AUTHENTICATION:
        end_with(describe(err))


def version(cfg):
    emit("version", version="%s (librdkafka %s)" % (confluent_kafka.__version__, confluent_kafka.libversion()[0]))


def produce(cfg):
    conf = base(cfg, lambda e: emit("error", error=e))
    conf.update({
        "compression.type": cfg["codec"],
        "linger.ms": 5,
        "acks": cfg["acks"],
        "enable.idempotence": cfg["idempotent"],
    })
    if cfg["retries"] >= 0:
        conf["retries"] = cfg["retries"]
    if cfg["deliveryTimeoutMs"] > 0:
        conf["message.timeout.ms"] = cfg["deliveryTimeoutMs"]
    conf["error_cb"] = auth_failed
    p = Producer(conf)
    done = threading.Event()

    def poll():  # serves delivery reports while input is read
        while not done.is_set():
            p.poll(0.02)

    poller = threading.Thread(target=poll)
    poller.start()

    def report(i):
        def cb(err, msg):
            if err is not None:
                emit("delivery", index=i, error=describe(err))
            else:
                emit("delivery", index=i, offset=msg.offset())
        return cb

    for i, rec in enumerate(records()):
        while True:
            try:
                p.produce(cfg["topic"], partition=cfg["partition"], key=rec["key"] or None, value=rec["value"], on_delivery=report(i))
                break
            except BufferError:
                p.poll(0.01)
    done.set()
    poller.join()
    p.flush()


def stream(conf, start):
    conf["fetch.wait.max.ms"] = 100
    conf["fetch.error.backoff.ms"] = 20
    conf["error_cb"] = lambda err: emit("error", error=describe(err))
    stop = InputClosed()
    c = Consumer(conf)
    start(c)
    while not stop.is_set():
        msg = c.poll(0.05)
        if msg is None:
            continue
        if msg.error() is not None:
            emit("error", error=describe(msg.error()))
            continue
        key = msg.key()
        emit("record", partition=msg.partition(), offset=msg.offset(),
             key=key.decode() if key is not None else "", value=(msg.value() or b"").decode())
    c.close()  # leaves the group


def consume(cfg):
    conf = base(cfg, lambda e: emit("error", error=e))
    # The consumer needs a group.id; assign never joins it.
    conf.update({"group.id": "matrix-assign-" + cfg["clientId"], "enable.auto.commit": False})
    isolation(conf, cfg)
    stream(conf, lambda c: c.assign([TopicPartition(cfg["topic"], cfg["partition"], cfg["offset"])]))


def isolation(conf, cfg):
    # librdkafka reads read_committed unless told otherwise.
    conf["isolation.level"] = "read_committed" if cfg["readCommitted"] else "read_uncommitted"


def transact(cfg):
    try:
        transact_all(cfg)
    except confluent_kafka.KafkaException as e:  # named by its KafkaError, as the other operations' errors
        emit("fatal", error=describe(e.args[0]) if e.args and isinstance(e.args[0], KafkaError) else error("KafkaException", str(e)))


def transact_all(cfg):
    conf = base(cfg, lambda e: emit("error", error=e))
    conf.update({"transactional.id": cfg["transactionalId"], "linger.ms": 5})
    p = Producer(conf)
    p.init_transactions(30)
    groups = {}  # group id -> a consumer that never joins, for its group metadata
    lines = records()
    for i, txn in enumerate(lines):
        p.begin_transaction()
        failed = []
        for rec in txn["records"]:
            p.produce(cfg["topic"], partition=cfg["partition"], key=rec["key"] or None, value=rec["value"],
                      on_delivery=lambda err, msg: err is not None and failed.append(err))
        # Every record acknowledged first: an abort drops what is still queued.
        if p.flush(30) > 0:
            raise Exception("transaction %d: records not delivered within 30 s" % i)
        if failed:
            raise confluent_kafka.KafkaException(failed[0])
        o = txn.get("offsets")
        if o:
            if o["group"] not in groups:
                groups[o["group"]] = Consumer({"bootstrap.servers": cfg["bootstrap"], "group.id": o["group"]})
            p.send_offsets_to_transaction([TopicPartition(o["topic"], o["partition"], o["offset"])],
                                          groups[o["group"]].consumer_group_metadata(), 30)
        if txn.get("await"):
            emit("produced", index=i)
            if next(lines, None) is None:
                return  # the input ended instead: leave the transaction open
        if txn["commit"]:
            p.commit_transaction(30)
        else:
            p.abort_transaction(30)
        emit("txn", index=i)


def group(cfg):
    conf = base(cfg, lambda e: emit("error", error=e))
    conf.update({
        "group.id": cfg["group"],
        "auto.offset.reset": "earliest",
        "session.timeout.ms": cfg["sessionTimeoutMs"],
        "heartbeat.interval.ms": cfg["heartbeatIntervalMs"],
        "auto.commit.interval.ms": cfg["commitIntervalMs"],
    })
    stream(conf, lambda c: c.subscribe([cfg["topic"]]))


def metadata(cfg):
    p = Producer(base(cfg))
    md = p.list_topics(timeout=10)
    topics = []
    for name in cfg["topics"]:
        t = md.topics.get(name)
        if t is None:
            continue
        if t.error is not None:
            raise Exception("topic %s: %s" % (name, t.error))
        topics.append({"name": name, "partitions": [
            {"partition": pm.id, "leader": pm.leader, "replicas": list(pm.replicas), "isr": list(pm.isrs)}
            for pm in t.partitions.values()]})
    emit("metadata", brokers=[{"id": b.id, "host": b.host, "port": b.port} for b in md.brokers.values()], topics=topics)


run({"version": version, "produce": produce, "consume": consume, "group": group, "metadata": metadata, "transact": transact})
