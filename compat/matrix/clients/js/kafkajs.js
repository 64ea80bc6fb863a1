'use strict';
// kafkajs (pure JavaScript) for the client matrix.
//
// kafkajs ships gzip only (snappy, lz4 and zstd are third-party codec
// packages), has no delivery timeout (a send fails once its retries are
// spent), and its consumer reads only as a group member: the consume
// operation joins a group of its own and seeks.

const fs = require('node:fs');
const { Kafka, logLevel, CompressionTypes } = require('kafkajs');
const { NotSupported, emit, error, isConnectionText, isSecure, run } = require('./adapter');

const connectionErrors = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSBrokerNotFound', 'KafkaJSRequestTimeoutError']);

function describe(e) {
  let name = e.name || 'Error';
  if (e.type) name += ' ' + e.type;
  const cause = e.originalError || e.cause;
  if (name === 'KafkaJSNumberOfRetriesExceeded' && cause) {
    name += ' (' + describe(cause).name + ')';
  }
  const connection = connectionErrors.has(e.name) || (cause && connectionErrors.has(cause.name)) || isConnectionText(e.message || '');
  return error(name, e.message || String(e), connection);
}

function client(cfg, retries) {
  const retry = { initialRetryTime: cfg.backoffMs, maxRetryTime: 1000 };
  if (retries !== undefined && retries >= 0) retry.retries = retries;
  return new Kafka({
    clientId: cfg.clientId || 'matrix',
    brokers: cfg.bootstrap.split(','),
    logLevel: logLevel.NOTHING,
    retry,
    ...security(cfg),
  });
}

// security is the client's ssl and sasl settings for SASL_SSL; kafkajs
// names the mechanisms in lower case (scram-sha-512).
function security(cfg) {
  if (!isSecure(cfg)) return {};
  return {
    ssl: { ca: [fs.readFileSync(cfg.sslCaFile, 'utf8')] },
    sasl: { mechanism: cfg.saslMechanism.toLowerCase(), username: cfg.saslUsername, password: cfg.saslPassword },
  };
}

const codecs = { none: CompressionTypes.None, gzip: CompressionTypes.GZIP };

async function produce(cfg, inp) {
  if (!(cfg.codec in codecs)) {
    throw new NotSupported('kafkajs ships gzip only (snappy, lz4 and zstd are third-party codec packages)');
  }
  if (cfg.deliveryTimeoutMs > 0) {
    throw new NotSupported('kafkajs has no delivery timeout: a send fails once its retries are spent');
  }
  const kafka = client(cfg, cfg.retries);
  const producer = kafka.producer({
    idempotent: cfg.idempotent,
    maxInFlightRequests: cfg.idempotent ? 1 : undefined,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  // Each send takes the records that arrived meanwhile, like an
  // application that batches what it has.
  let index = 0;
  for (let line = await inp.next(); line !== null; line = await inp.next()) {
    const messages = [line, ...inp.take(99)].map((l) => {
      const rec = JSON.parse(l);
      return { key: rec.key || null, value: rec.value, partition: cfg.partition };
    });
    const first = index;
    index += messages.length;
    try {
      const res = await producer.send({ topic: cfg.topic, messages, acks: cfg.acks, compression: codecs[cfg.codec] });
      const base = Number(res[0].baseOffset);
      messages.forEach((_, i) => emit('delivery', { index: first + i, offset: cfg.acks === 0 ? -1 : base + i }));
    } catch (e) {
      const err = describe(e);
      messages.forEach((_, i) => emit('delivery', { index: first + i, error: err }));
    }
  }
  await producer.disconnect();
}

async function stream(cfg, inp, groupId, topicOffset) {
  const kafka = client(cfg);
  const consumer = kafka.consumer({
    groupId,
    sessionTimeout: cfg.sessionTimeoutMs,
    heartbeatInterval: cfg.heartbeatIntervalMs,
    maxWaitTimeInMs: cfg.fetchWaitMs,
    allowAutoTopicCreation: false,
    // kafkajs reads read_committed unless told otherwise.
    readUncommitted: !cfg.readCommitted,
  });
  consumer.on(consumer.events.CRASH, (ev) => emit('error', { error: describe(ev.payload.error) }));
  await consumer.connect();
  await consumer.subscribe({ topics: [cfg.topic], fromBeginning: true });
  await consumer.run({
    autoCommit: topicOffset === undefined,
    autoCommitInterval: cfg.commitIntervalMs,
    eachMessage: async ({ partition, message }) => {
      emit('record', {
        partition,
        offset: Number(message.offset),
        key: message.key ? message.key.toString() : '',
        value: message.value ? message.value.toString() : '',
      });
    },
  });
  if (topicOffset !== undefined) {
    consumer.seek({ topic: cfg.topic, partition: cfg.partition, offset: String(topicOffset) });
  }
  await inp.closed;
  await consumer.disconnect(); // commits and leaves the group
}

async function consume(cfg, inp) {
  await stream(cfg, inp, 'matrix-assign-' + cfg.clientId, cfg.offset);
}

async function group(cfg, inp) {
  await stream(cfg, inp, cfg.group);
}

// transact runs one transaction per line of input; transaction.send
// returns once its records are acknowledged.
async function transact(cfg, inp) {
  const producer = client(cfg).producer({
    transactionalId: cfg.transactionalId,
    idempotent: true,
    maxInFlightRequests: 1,
    allowAutoTopicCreation: false,
  });
  await producer.connect();
  try {
    let index = 0;
    for (let line = await inp.next(); line !== null; line = await inp.next()) {
      const txn = JSON.parse(line);
      const t = await producer.transaction();
      const messages = txn.records.map((r) => ({ key: r.key || null, value: r.value, partition: cfg.partition }));
      await t.send({ topic: cfg.topic, messages });
      const o = txn.offsets;
      if (o) {
        await t.sendOffsets({ consumerGroupId: o.group, topics: [{ topic: o.topic, partitions: [{ partition: o.partition, offset: String(o.offset) }] }] });
      }
      if (txn.await) {
        emit('produced', { index });
        if ((await inp.next()) === null) return; // the input ended instead: leave the transaction open
      }
      if (txn.commit) await t.commit();
      else await t.abort();
      emit('txn', { index: index++ });
    }
  } finally {
    await producer.disconnect();
  }
}

async function metadata(cfg) {
  const admin = client(cfg).admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    const md = await admin.fetchTopicMetadata({ topics: cfg.topics });
    emit('metadata', {
      brokers: cluster.brokers.map((b) => ({ id: b.nodeId, host: b.host, port: b.port })),
      topics: md.topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr })),
      })),
    });
  } finally {
    await admin.disconnect();
  }
}

async function version() {
  emit('version', { version: require('kafkajs/package.json').version });
}

run({
  version,
  produce,
  consume,
  group,
  metadata,
  // A failed end (a fenced producer) is named as the client's other errors.
  transact: (cfg, inp) => transact(cfg, inp).catch((e) => emit('fatal', { error: describe(e) })),
});
