"""aiokafka (asyncio, pure Python) for the client matrix.

aiokafka has no retry count and no delivery.timeout.ms: a record is retried
until request_timeout_ms passes, so the adapter maps the scenario's delivery
timeout onto request_timeout_ms and leaves retry counts to that bound.
"""

import asyncio
import json
import sys
import threading

import aiokafka
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.errors import KafkaConnectionError, NodeNotReadyError
from aiokafka.helpers import create_ssl_context

from adapter import emit, error, end_on_authentication_failure, is_connection_text, run, secure


def describe(e):
    name = type(e).__name__
    connection = isinstance(e, (KafkaConnectionError, NodeNotReadyError)) or is_connection_text(name)
    return error(name, str(e), connection=connection)


def input_lines(loop):
    """An asyncio queue of the remaining input lines; None ends it."""
    q = asyncio.Queue()

    def read():
        for line in sys.stdin:
            if line.strip():
                loop.call_soon_threadsafe(q.put_nowait, line)
        loop.call_soon_threadsafe(q.put_nowait, None)

    threading.Thread(target=read, daemon=True).start()
    return q


def base(cfg):
    conf = {"bootstrap_servers": cfg["bootstrap"].split(","), "retry_backoff_ms": cfg["backoffMs"]}
    if cfg.get("clientId"):
        conf["client_id"] = cfg["clientId"]
    if secure(cfg):
        end_on_authentication_failure("aiokafka", describe)
        conf.update({
            "security_protocol": cfg["securityProtocol"],
            "sasl_mechanism": cfg["saslMechanism"],
            "sasl_plain_username": cfg["saslUsername"],
            "sasl_plain_password": cfg["saslPassword"],
            "ssl_context": create_ssl_context(cafile=cfg["sslCaFile"]),
        })
    return conf


def version(cfg):
    emit("version", version=aiokafka.__version__)


async def produce_async(cfg):
    conf = base(cfg)
    conf.update({
        "acks": "all" if cfg["acks"] == -1 else cfg["acks"],
        "compression_type": None if cfg["codec"] == "none" else cfg["codec"],
        "linger_ms": 5,
        "enable_idempotence": cfg["idempotent"],
    })
    if cfg["deliveryTimeoutMs"] > 0:
        conf["request_timeout_ms"] = cfg["deliveryTimeoutMs"]
    p = AIOKafkaProducer(**conf)
    await p.start()
    q = input_lines(asyncio.get_running_loop())
    pending = []
    i = 0
    while True:
        line = await q.get()
        if line is None:
            break
        rec = json.loads(line)

        def report(f, i=i):
            if f.exception() is not None:
                emit("delivery", index=i, error=describe(f.exception()))
            else:
                emit("delivery", index=i, offset=f.result().offset)

        try:
            f = await p.send(cfg["topic"], partition=cfg["partition"], key=rec["key"].encode() if rec["key"] else None, value=rec["value"].encode())
            f.add_done_callback(report)
            pending.append(f)
        except Exception as e:
            emit("delivery", index=i, error=describe(e))
        i += 1
    await asyncio.gather(*pending, return_exceptions=True)
    await p.stop()


async def stream(c, start):
    q = input_lines(asyncio.get_running_loop())
    await c.start()
    start(c)
    stopped = asyncio.ensure_future(q.get())
    while not stopped.done():
        try:
            batches = await c.getmany(timeout_ms=50)
        except Exception as e:
            emit("error", error=describe(e))
            await asyncio.sleep(0.02)  # bounds a loop on a raised error
            continue
        for tp, recs in batches.items():
            for r in recs:
                emit("record", partition=tp.partition, offset=r.offset,
                     key=r.key.decode() if r.key is not None else "", value=(r.value or b"").decode())
    await c.stop()  # commits and leaves the group


async def consume_async(cfg):
    conf = base(cfg)
    conf.update({"group_id": None, "enable_auto_commit": False, "fetch_max_wait_ms": cfg["fetchWaitMs"]})
    conf["isolation_level"] = "read_committed" if cfg["readCommitted"] else "read_uncommitted"
    c = AIOKafkaConsumer(**conf)
    tp = TopicPartition(cfg["topic"], cfg["partition"])

    def start(c):
        c.assign([tp])
        c.seek(tp, cfg["offset"])

    await stream(c, start)


async def transact_async(cfg):
    conf = base(cfg)
    conf.update({"transactional_id": cfg["transactionalId"], "linger_ms": 5})
    p = AIOKafkaProducer(**conf)
    await p.start()  # initialises the transactional producer
    try:
        q = input_lines(asyncio.get_running_loop())
        i = 0
        while (line := await q.get()) is not None:
            txn = json.loads(line)
            await p.begin_transaction()
            for rec in txn["records"]:  # each acknowledged before the transaction ends
                await p.send_and_wait(cfg["topic"], partition=cfg["partition"], key=rec["key"].encode() if rec["key"] else None, value=rec["value"].encode())
            o = txn.get("offsets")
            if o:
                await p.send_offsets_to_transaction({TopicPartition(o["topic"], o["partition"]): o["offset"]}, o["group"])
            if txn.get("await"):
                emit("produced", index=i)
                if await q.get() is None:
                    return  # the input ended instead: leave the transaction open
            if txn["commit"]:
                await p.commit_transaction()
            else:
                await p.abort_transaction()
            emit("txn", index=i)
            i += 1
    finally:
        await p.stop()


async def group_async(cfg):
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
    c = AIOKafkaConsumer(cfg["topic"], **conf)
    await stream(c, lambda c: None)


async def metadata_async(cfg):
    a = AIOKafkaAdminClient(**base(cfg))
    await a.start()
    try:
        cluster = await a.describe_cluster()
        described = await a.describe_topics(cfg["topics"])
    finally:
        await a.close()
    brokers = [{"id": b["node_id"], "host": b["host"], "port": b["port"]} for b in cluster["brokers"]]
    topics = []
    for t in described:
        if t["error_code"] != 0:
            raise Exception("topic %s: error code %d" % (t["topic"], t["error_code"]))
        topics.append({"name": t["topic"], "partitions": [
            {"partition": p["partition"], "leader": p["leader"], "replicas": p["replicas"], "isr": p["isr"]}
            for p in t["partitions"]]})
    emit("metadata", brokers=brokers, topics=topics)


run({
    "version": version,
    "produce": lambda cfg: asyncio.run(produce_async(cfg)),
    "consume": lambda cfg: asyncio.run(consume_async(cfg)),
    "group": lambda cfg: asyncio.run(group_async(cfg)),
    "metadata": lambda cfg: asyncio.run(metadata_async(cfg)),
    "transact": lambda cfg: asyncio.run(transact_async(cfg)),
})
