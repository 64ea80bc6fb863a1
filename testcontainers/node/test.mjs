// fakekafka's image from Testcontainers for Node: a generic container with
// an HTTP wait (the image has no shell for a port wait), one PUT with the
// mapped ports, a wait on /readyz, then kafkajs produces acks=all to a
// partition led by each broker. Run by scripts/containers.sh, which sets
// FAKEKAFKA_IMAGE; exits non-zero on any failure.
import { GenericContainer, Wait } from "testcontainers";
import { Kafka, logLevel } from "kafkajs";

const brokers = 3;
const start = Date.now();
const c = await new GenericContainer(process.env.FAKEKAFKA_IMAGE || "fakekafka:dev")
  .withExposedPorts(8080, ...[...Array(brokers).keys()].map(i => 9092 + i))
  .withEnvironment({ FAKEKAFKA_AWAIT_ADVERTISED: "EXTERNAL", FAKEKAFKA_TOPICS: `js:${brokers}:${brokers}` })
  .withWaitStrategy(Wait.forHttp("/healthz", 8080))
  .start();
try {
  const host = c.getHost();
  const control = `http://${host}:${c.getMappedPort(8080)}`;
  const advertised = Object.fromEntries([...Array(brokers).keys()].map(i => [String(i + 1), `${host}:${c.getMappedPort(9092 + i)}`]));
  const put = await fetch(`${control}/v1/listeners/EXTERNAL`, { method: "PUT", body: JSON.stringify({ advertised }) });
  if (put.status !== 200) throw new Error(`PUT /v1/listeners/EXTERNAL: ${put.status} ${await put.text()}`);
  for (const deadline = Date.now() + 30000; ;) {
    if ((await fetch(`${control}/readyz`)).status === 200) break;
    if (Date.now() > deadline) throw new Error("/readyz not 200 after 30 s");
    await new Promise(r => setTimeout(r, 20)); // polling interval
  }

  const kafka = new Kafka({ brokers: Object.values(advertised), logLevel: logLevel.NOTHING });
  const p = kafka.producer();
  await p.connect();
  await p.send({ topic: "js", acks: -1, messages: [...Array(brokers).keys()].map(i => ({ partition: i, value: `v${i}` })) });
  await p.disconnect();
  console.log(`records produced ${Date.now() - start} ms after start() was called`);

  const st = await (await fetch(`${control}/v1/cluster`)).json();
  const hws = st.topics.find(t => t.name === "js").partitions.map(p => p.high_watermark);
  if (hws.some(hw => hw !== 1)) throw new Error(`high watermarks ${hws}, want 1 each`);
  console.log("ok: one committed record per partition, led by brokers", st.topics.find(t => t.name === "js").partitions.map(p => p.leader).join(","));
} finally {
  await c.stop();
}
