'use strict';
// kafkajs with @kafkajs/confluent-schema-registry against fakekafka's
// registry, for compat/matrix's TestSchemaRegistryClients:
//
//   node schema_registry.js avro
//
// Its first line of input is the matrix's settings (bootstrap, topic,
// registryUrl); it answers JSON lines: "produced" (index, id), "refused"
// (error with the registry's HTTP status), "decoded" (reader: "v1" or
// "v2", index, decoded: the value). docs/schema-registry.md shows the part
// between the markers as it is.

const { emit, error, run } = require('./adapter');

function version() {
  emit('version', { version: require('@kafkajs/confluent-schema-registry/package.json').version });
}

// example:sr-js:start
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const userV1 = JSON.stringify({
  type: 'record', name: 'User', namespace: 'example',
  fields: [{ name: 'name', type: 'string' }, { name: 'age', type: 'int' }],
});
// Adds a field with a default: BACKWARD compatible.
const userV2 = JSON.stringify({
  type: 'record', name: 'User', namespace: 'example',
  fields: [{ name: 'name', type: 'string' }, { name: 'age', type: 'int' },
    { name: 'email', type: 'string', default: 'unknown' }],
});
// age becomes a string: incompatible.
const userV3 = JSON.stringify({
  type: 'record', name: 'User', namespace: 'example',
  fields: [{ name: 'name', type: 'string' }, { name: 'age', type: 'string' }],
});

async function avro(cfg) {
  const registry = new SchemaRegistry({ host: cfg.registryUrl });
  const topic = cfg.topic;
  const subject = `${topic}-value`;
  const kafka = new Kafka({ brokers: cfg.bootstrap.split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  const users = [[userV1, { name: 'ada', age: 36 }], [userV2, { name: 'alan', age: 41, email: 'alan@example.com' }]];
  for (const [i, [schema, user]] of users.entries()) {
    // Version 1, then 2 of topic-value.
    const { id } = await registry.register({ type: SchemaType.AVRO, schema }, { subject });
    const value = await registry.encode(id, user);
    await producer.send({ topic, messages: [{ value, partition: 0 }] });
    emit('produced', { index: i, id });
  }
  await producer.disconnect();

  try {
    await registry.register({ type: SchemaType.AVRO, schema: userV3 }, { subject });
    emit('fatal', { error: error('accepted', 'an incompatible schema was registered') });
  } catch (e) { // e.status === 409
    emit('refused', { error: { ...error(e.name, e.message), status: e.status } });
  }

  const consumer = kafka.consumer({ groupId: 'readers' });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const values = [];
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${values.length} of ${users.length} records in 30 s`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value);
        if (values.length === users.length) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  await consumer.disconnect();

  // Readers on each version: the first record gets the default email, the
  // second is read without it.
  for (const [reader, readerSchema] of [['v2', userV2], ['v1', userV1]]) {
    for (const [i, value] of values.entries()) {
      const decoded = await registry.decode(value, { [SchemaType.AVRO]: { readerSchema } });
      emit('decoded', { reader, index: i, decoded });
    }
  }
}
// example:sr-js:end

run({ version, avro });
