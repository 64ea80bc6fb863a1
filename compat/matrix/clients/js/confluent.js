'use strict';
// @confluentinc/kafka-javascript (librdkafka, built from the package's
// sources) for the client matrix, through its librdkafka-style API
// (Producer, KafkaConsumer), not its KafkaJS-compatible one.

const Kafka = require('@confluentinc/kafka-javascript');
const { emit, error, isConnectionText, isSecure, run } = require('./adapter');

const codeNames = new Map(Object.entries(Kafka.CODES.ERRORS).map(([name, code]) => [code, name]));
const connectionCodes = new Set([Kafka.CODES.ERRORS.ERR__TRANSPORT, Kafka.CODES.ERRORS.ERR__ALL_BROKERS_DOWN]);

function describe(e) {
  const name = codeNames.has(e.code) ? codeNames.get(e.code) : (e.name || 'Error');
  // event.error reports a broker's transport failure with code ERR_UNKNOWN:
  // only its text tells.
  const message = e.message || String(e);
  return error(name, message, connectionCodes.has(e.code) || isConnectionText(message));
}

function base(cfg) {
  const conf = {
    'bootstrap.servers': cfg.bootstrap,
    'retry.backoff.ms': cfg.backoffMs,
    'retry.backoff.max.ms': cfg.backoffMs,
    'reconnect.backoff.ms': cfg.backoffMs,
    'reconnect.backoff.max.ms': 100,
    event_cb: true,
    log_level: 3,
  };
  if (cfg.clientId) conf['client.id'] = cfg.clientId;
  if (isSecure(cfg)) {
    Object.assign(conf, {
      'security.protocol': cfg.securityProtocol,
      'sasl.mechanisms': cfg.saslMechanism,
      'sasl.username': cfg.saslUsername,
      'sasl.password': cfg.saslPassword,
      'ssl.ca.location': cfg.sslCaFile,
    });
  }
  return conf;
}

// watch passes on errors and what librdkafka logs as PROTOERR (a response
// it could not parse), and keeps a failed authentication it logs for
// connect.
function watch(client, errors) {
  client.on('event.log', (log) => {
    if (log.fac === 'PROTOERR') emit('error', { error: error('PROTOERR', log.message, false, true) });
    if (log.fac === 'FAIL' && log.message.includes('SASL authentication error')) client.emit('authentication.failure', log.message);
  });
  if (errors) client.on('event.error', (e) => emit('error', { error: describe(e) }));
}

// connect connects client. The binding delivers error events only once
// connected: a failed authentication before that shows in librdkafka's
// log (watch), which ends the wait at once; connect itself reports only a
// transport failure when its timeout passes (the process still waits for
// that to exit: the binding's connect blocks a worker thread).
function connect(client) {
  return new Promise((resolve, reject) => {
    client.once('authentication.failure', (message) => {
      reject(Object.assign(new Error(message), { name: 'ERR__AUTHENTICATION', code: Kafka.CODES.ERRORS.ERR__AUTHENTICATION }));
    });
    client.connect({ timeout: 10000 }, (err) => (err ? reject(err) : resolve()));
  });
}

async function produce(cfg, inp) {
  const conf = base(cfg);
  Object.assign(conf, {
    'compression.type': cfg.codec,
    'linger.ms': 5,
    acks: cfg.acks,
    'enable.idempotence': cfg.idempotent,
    dr_cb: true,
  });
  if (cfg.retries >= 0) conf.retries = cfg.retries;
  if (cfg.deliveryTimeoutMs > 0) conf['message.timeout.ms'] = cfg.deliveryTimeoutMs;
  const p = new Kafka.Producer(conf);
  watch(p, false);
  // librdkafka retries a failed authentication until the delivery
  // timeout: it ends the operation.
  p.on('event.error', (e) => {
    if (e.code === Kafka.CODES.ERRORS.ERR__AUTHENTICATION) {
      emit('fatal', { error: describe(e) });
      process.exit(0);
    }
  });
  let pending = 0;
  let drained = null;
  p.on('delivery-report', (err, report) => {
    if (err) emit('delivery', { index: report.opaque, error: describe(err) });
    else emit('delivery', { index: report.opaque, offset: report.offset });
    pending--;
    if (pending === 0 && drained) drained();
  });
  await connect(p);
  p.setPollInterval(20);
  let index = 0;
  for (let line = await inp.next(); line !== null; line = await inp.next()) {
    const rec = JSON.parse(line);
    const i = index++;
    for (;;) {
      try {
        p.produce(cfg.topic, cfg.partition, Buffer.from(rec.value), rec.key ? Buffer.from(rec.key) : null, Date.now(), i);
        pending++;
        break;
      } catch (e) {
        if (e.code !== Kafka.CODES.ERRORS.ERR__QUEUE_FULL) {
          emit('delivery', { index: i, error: describe(e) });
          break;
        }
        await new Promise((r) => setTimeout(r, 10)); // the queue drains meanwhile
      }
    }
  }
  if (pending > 0) await new Promise((resolve) => { drained = resolve; });
  await new Promise((resolve) => p.disconnect(resolve));
}

// stream runs a KafkaConsumer; topicConf holds the topic-level properties
// (auto.offset.reset), which the global configuration does not take.
async function stream(conf, topicConf, cfg, inp, start) {
  conf['fetch.wait.max.ms'] = cfg.fetchWaitMs;
  conf['fetch.error.backoff.ms'] = cfg.backoffMs;
  const c = new Kafka.KafkaConsumer(conf, topicConf);
  watch(c, true);
  await connect(c);
  start(c);
  c.setDefaultConsumeTimeout(50);
  let stopped = false;
  const done = new Promise((resolve) => {
    const loop = () => {
      if (stopped) return resolve();
      c.consume(100, (err, msgs) => {
        if (err) emit('error', { error: describe(err) });
        for (const m of msgs || []) {
          emit('record', {
            partition: m.partition,
            offset: m.offset,
            key: m.key ? m.key.toString() : '',
            value: m.value ? m.value.toString() : '',
          });
        }
        setImmediate(loop);
      });
    };
    loop();
  });
  await inp.closed;
  stopped = true;
  await done;
  await new Promise((resolve) => c.disconnect(resolve)); // commits and leaves the group
}

async function consume(cfg, inp) {
  const conf = base(cfg);
  // The consumer needs a group.id; assign never joins it.
  Object.assign(conf, { 'group.id': 'matrix-assign-' + cfg.clientId, 'enable.auto.commit': false });
  // librdkafka reads read_committed unless told otherwise.
  conf['isolation.level'] = cfg.readCommitted ? 'read_committed' : 'read_uncommitted';
  await stream(conf, {}, cfg, inp, (c) => c.assign([{ topic: cfg.topic, partition: cfg.partition, offset: cfg.offset }]));
}

async function group(cfg, inp) {
  const conf = base(cfg);
  Object.assign(conf, {
    'group.id': cfg.group,
    'session.timeout.ms': cfg.sessionTimeoutMs,
    'heartbeat.interval.ms': cfg.heartbeatIntervalMs,
    'auto.commit.interval.ms': cfg.commitIntervalMs,
  });
  await stream(conf, { 'auto.offset.reset': 'earliest' }, cfg, inp, (c) => c.subscribe([cfg.topic]));
}

// call turns a librdkafka-style callback method into a promise.
function call(client, method, ...args) {
  return new Promise((resolve, reject) => client[method](...args, (err) => (err ? reject(err) : resolve())));
}

async function transact(cfg, inp) {
  const conf = base(cfg);
  Object.assign(conf, { 'transactional.id': cfg.transactionalId, 'linger.ms': 5, dr_cb: true });
  const p = new Kafka.Producer(conf);
  watch(p, false);
  let failed = null;
  p.on('delivery-report', (err) => { if (err && !failed) failed = err; });
  await connect(p);
  p.setPollInterval(20);
  const groups = new Map(); // group id -> a consumer that never joins, for its group metadata
  try {
    await call(p, 'initTransactions', 30000);
    let index = 0;
    for (let line = await inp.next(); line !== null; line = await inp.next()) {
      const txn = JSON.parse(line);
      await call(p, 'beginTransaction');
      for (const r of txn.records) {
        p.produce(cfg.topic, cfg.partition, Buffer.from(r.value), r.key ? Buffer.from(r.key) : null, Date.now());
      }
      // Every record acknowledged first: an abort drops what is still queued.
      await call(p, 'flush', 30000);
      if (failed) throw failed;
      const o = txn.offsets;
      if (o) {
        if (!groups.has(o.group)) {
          const c = new Kafka.KafkaConsumer({ 'bootstrap.servers': cfg.bootstrap, 'group.id': o.group }, {});
          await connect(c);
          groups.set(o.group, c);
        }
        await call(p, 'sendOffsetsToTransaction', [{ topic: o.topic, partition: o.partition, offset: o.offset }], groups.get(o.group), 30000);
      }
      if (txn.await) {
        emit('produced', { index });
        if ((await inp.next()) === null) return; // the input ended instead: leave the transaction open
      }
      await call(p, txn.commit ? 'commitTransaction' : 'abortTransaction', 30000);
      emit('txn', { index: index++ });
    }
  } finally {
    for (const c of groups.values()) await new Promise((resolve) => c.disconnect(resolve));
    await new Promise((resolve) => p.disconnect(resolve));
  }
}

async function metadata(cfg) {
  const p = new Kafka.Producer(base(cfg));
  await connect(p);
  const md = await new Promise((resolve, reject) => p.getMetadata({ timeout: 10000 }, (err, md) => (err ? reject(err) : resolve(md))));
  await new Promise((resolve) => p.disconnect(resolve));
  emit('metadata', {
    brokers: md.brokers.map((b) => ({ id: b.id, host: b.host, port: b.port })),
    topics: md.topics.filter((t) => cfg.topics.includes(t.name)).map((t) => ({
      name: t.name,
      partitions: t.partitions.map((p) => ({ partition: p.id, leader: p.leader, replicas: p.replicas, isr: p.isrs })),
    })),
  });
}

async function version() {
  emit('version', { version: `${require('@confluentinc/kafka-javascript/package.json').version} (librdkafka ${Kafka.librdkafkaVersion})` });
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
