//! rust-rdkafka (librdkafka, built from the crate's sources) for fakekafka's
//! client matrix: one operation per run, the protocol of
//! compat/matrix/clients/README.md.

use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{BaseRecord, DeliveryResult, Producer, ProducerContext, ThreadedProducer};
use rdkafka::{ClientContext, Message, Offset, TopicPartitionList};
use serde_json::{json, Value};

fn emit(mut v: Value, kind: &str) {
    v["type"] = json!(kind);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}

fn error(name: &str, message: &str, connection: bool, protocol: bool) -> Value {
    json!({"name": name, "message": message, "connection": connection, "protocol": protocol})
}

fn describe(e: &KafkaError) -> Value {
    match e.rdkafka_error_code() {
        Some(code) => {
            let connection = matches!(code, RDKafkaErrorCode::BrokerTransportFailure | RDKafkaErrorCode::AllBrokersDown);
            error(&format!("KafkaError {code:?}"), &e.to_string(), connection, false)
        }
        None => error("KafkaError", &e.to_string(), false, false),
    }
}

/// The clients' context: passes on errors, and PROTOERR log lines (a
/// response librdkafka could not parse), as "error" lines.
struct Ctx {
    errors: bool,
}

impl ClientContext for Ctx {
    fn log(&self, _level: RDKafkaLogLevel, fac: &str, msg: &str) {
        if fac == "PROTOERR" {
            emit(json!({"error": error("PROTOERR", msg, false, true)}), "error");
        }
    }

    fn error(&self, e: KafkaError, _reason: &str) {
        // librdkafka retries a failed authentication until the delivery
        // timeout: it ends a producer's operation.
        if !self.errors && e.rdkafka_error_code() == Some(RDKafkaErrorCode::Authentication) {
            emit(json!({"error": describe(&e)}), "fatal");
            std::process::exit(0);
        }
        if self.errors {
            emit(json!({"error": describe(&e)}), "error");
        }
    }
}

impl ConsumerContext for Ctx {}

impl ProducerContext for Ctx {
    type DeliveryOpaque = Box<usize>;

    fn delivery(&self, result: &DeliveryResult<'_>, index: Box<usize>) {
        match result {
            Ok(m) => emit(json!({"index": *index, "offset": m.offset()}), "delivery"),
            Err((e, _)) => emit(json!({"index": *index, "error": describe(e)}), "delivery"),
        }
    }
}

fn text(cfg: &Value, key: &str) -> String {
    match &cfg[key] {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

fn base(cfg: &Value) -> ClientConfig {
    let mut c = ClientConfig::new();
    c.set("bootstrap.servers", text(cfg, "bootstrap"))
        .set("retry.backoff.ms", text(cfg, "backoffMs"))
        .set("retry.backoff.max.ms", text(cfg, "backoffMs"))
        .set("reconnect.backoff.ms", text(cfg, "backoffMs"))
        .set("reconnect.backoff.max.ms", "100")
        .set("log_level", "3")
        .set_log_level(RDKafkaLogLevel::Error);
    let id = text(cfg, "clientId");
    if !id.is_empty() {
        c.set("client.id", id);
    }
    let protocol = cfg["securityProtocol"].as_str().unwrap_or("PLAINTEXT");
    if !protocol.is_empty() && protocol != "PLAINTEXT" {
        c.set("security.protocol", protocol)
            .set("sasl.mechanisms", text(cfg, "saslMechanism"))
            .set("sasl.username", text(cfg, "saslUsername"))
            .set("sasl.password", text(cfg, "saslPassword"))
            .set("ssl.ca.location", text(cfg, "sslCaFile"));
    }
    c
}

fn produce(cfg: &Value) -> Result<(), KafkaError> {
    let mut c = base(cfg);
    c.set("compression.type", text(cfg, "codec"))
        .set("linger.ms", "5")
        .set("acks", text(cfg, "acks"))
        .set("enable.idempotence", text(cfg, "idempotent"));
    if cfg["retries"].as_i64().unwrap_or(-1) >= 0 {
        c.set("retries", text(cfg, "retries"));
    }
    if cfg["deliveryTimeoutMs"].as_i64().unwrap_or(0) > 0 {
        c.set("message.timeout.ms", text(cfg, "deliveryTimeoutMs"));
    }
    let producer: ThreadedProducer<Ctx> = c.create_with_context(Ctx { errors: false })?;
    let topic = text(cfg, "topic");
    let partition = cfg["partition"].as_i64().unwrap_or(0) as i32;
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let Ok(line) = line else { break };
        let rec: Value = serde_json::from_str(&line).unwrap_or_default();
        let key = rec["key"].as_str().unwrap_or("").to_string();
        let value = rec["value"].as_str().unwrap_or("").to_string();
        let mut record = BaseRecord::with_opaque_to(&topic, Box::new(i)).partition(partition).payload(&value);
        if !key.is_empty() {
            record = record.key(&key);
        }
        loop {
            match producer.send(record) {
                Ok(()) => break,
                Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), r)) => {
                    record = r;
                    std::thread::sleep(Duration::from_millis(10)); // the queue drains meanwhile
                }
                Err((e, _)) => {
                    emit(json!({"index": i, "error": describe(&e)}), "delivery");
                    break;
                }
            }
        }
    }
    producer.flush(Duration::from_secs(300))?;
    Ok(())
}

/// Reads until the end of input, which tells a consumer to stop.
fn stop_on_end_of_input() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || {
        for _ in std::io::stdin().lock().lines() {}
        s.store(true, Ordering::SeqCst);
    });
    stop
}

fn stream(cfg: &Value, mut c: ClientConfig, start: impl FnOnce(&BaseConsumer<Ctx>) -> Result<(), KafkaError>) -> Result<(), KafkaError> {
    c.set("fetch.wait.max.ms", text(cfg, "fetchWaitMs")).set("fetch.error.backoff.ms", text(cfg, "backoffMs"));
    let consumer: BaseConsumer<Ctx> = c.create_with_context(Ctx { errors: true })?;
    start(&consumer)?;
    let stop = stop_on_end_of_input();
    while !stop.load(Ordering::SeqCst) {
        match consumer.poll(Duration::from_millis(50)) {
            None => {}
            Some(Err(e)) => emit(json!({"error": describe(&e)}), "error"),
            Some(Ok(m)) => {
                let key = m.key().map(|k| String::from_utf8_lossy(k).into_owned()).unwrap_or_default();
                let value = m.payload().map(|v| String::from_utf8_lossy(v).into_owned()).unwrap_or_default();
                emit(json!({"partition": m.partition(), "offset": m.offset(), "key": key, "value": value}), "record");
            }
        }
    }
    drop(consumer); // closes the consumer: commits and leaves the group
    Ok(())
}

fn consume(cfg: &Value) -> Result<(), KafkaError> {
    let mut c = base(cfg);
    // The consumer needs a group.id; assign never joins it.
    c.set("group.id", format!("matrix-assign-{}", text(cfg, "clientId"))).set("enable.auto.commit", "false");
    // librdkafka reads read_committed unless told otherwise.
    let committed = cfg["readCommitted"].as_bool().unwrap_or(false);
    c.set("isolation.level", if committed { "read_committed" } else { "read_uncommitted" });
    stream(cfg, c, |consumer| {
        let mut tpl = TopicPartitionList::new();
        let offset = Offset::Offset(cfg["offset"].as_i64().unwrap_or(0));
        tpl.add_partition_offset(&text(cfg, "topic"), cfg["partition"].as_i64().unwrap_or(0) as i32, offset)?;
        consumer.assign(&tpl)
    })
}

/// One transaction per line of input: its records, every one acknowledged
/// (an abort drops what is still queued), then commit or abort.
fn transact(cfg: &Value) -> Result<(), KafkaError> {
    let mut c = base(cfg);
    c.set("transactional.id", text(cfg, "transactionalId")).set("linger.ms", "5");
    let producer: ThreadedProducer<Ctx> = c.create_with_context(Ctx { errors: false })?;
    let timeout = Duration::from_secs(30);
    producer.init_transactions(timeout)?;
    let topic = text(cfg, "topic");
    let partition = cfg["partition"].as_i64().unwrap_or(0) as i32;
    let mut groups: Vec<(String, BaseConsumer<Ctx>)> = Vec::new();
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut i = 0;
    while let Some(Ok(line)) = lines.next() {
        let txn: Value = serde_json::from_str(&line).unwrap_or_default();
        producer.begin_transaction()?;
        for (j, rec) in txn["records"].as_array().into_iter().flatten().enumerate() {
            let key = rec["key"].as_str().unwrap_or("");
            let value = rec["value"].as_str().unwrap_or("");
            let mut record = BaseRecord::with_opaque_to(&topic, Box::new(j)).partition(partition).payload(value);
            if !key.is_empty() {
                record = record.key(key);
            }
            producer.send(record).map_err(|(e, _)| e)?;
        }
        producer.flush(timeout)?;
        if let Some(o) = txn["offsets"].as_object() {
            let group = o["group"].as_str().unwrap_or("").to_string();
            if !groups.iter().any(|(g, _)| *g == group) {
                // A consumer that never joins, for its group metadata.
                let mut gc = base(cfg);
                gc.set("group.id", &group);
                groups.push((group.clone(), gc.create_with_context(Ctx { errors: false })?));
            }
            let consumer = &groups.iter().find(|(g, _)| *g == group).expect("added above").1;
            let metadata = consumer.group_metadata().ok_or(KafkaError::Global(RDKafkaErrorCode::InvalidArgument))?;
            let mut tpl = TopicPartitionList::new();
            let at = Offset::Offset(o["offset"].as_i64().unwrap_or(0));
            tpl.add_partition_offset(o["topic"].as_str().unwrap_or(""), o["partition"].as_i64().unwrap_or(0) as i32, at)?;
            producer.send_offsets_to_transaction(&tpl, &metadata, timeout)?;
        }
        if txn["await"].as_bool().unwrap_or(false) {
            emit(json!({"index": i}), "produced");
            if !matches!(lines.next(), Some(Ok(_))) {
                return Ok(()); // the input ended instead: leave the transaction open
            }
        }
        if txn["commit"].as_bool().unwrap_or(false) {
            producer.commit_transaction(timeout)?;
        } else {
            producer.abort_transaction(timeout)?;
        }
        emit(json!({"index": i}), "txn");
        i += 1;
    }
    Ok(())
}

fn group(cfg: &Value) -> Result<(), KafkaError> {
    let mut c = base(cfg);
    c.set("group.id", text(cfg, "group"))
        .set("auto.offset.reset", "earliest")
        .set("session.timeout.ms", text(cfg, "sessionTimeoutMs"))
        .set("heartbeat.interval.ms", text(cfg, "heartbeatIntervalMs"))
        .set("auto.commit.interval.ms", text(cfg, "commitIntervalMs"));
    let topic = text(cfg, "topic");
    stream(cfg, c, |consumer| consumer.subscribe(&[&topic]))
}

fn metadata(cfg: &Value) -> Result<(), KafkaError> {
    let consumer: BaseConsumer<Ctx> = base(cfg).create_with_context(Ctx { errors: false })?;
    let md = consumer.fetch_metadata(None, Duration::from_secs(10))?;
    let brokers: Vec<Value> = md.brokers().iter().map(|b| json!({"id": b.id(), "host": b.host(), "port": b.port()})).collect();
    let want: Vec<String> = cfg["topics"].as_array().map(|a| a.iter().filter_map(|t| t.as_str().map(String::from)).collect()).unwrap_or_default();
    let mut topics = Vec::new();
    for t in md.topics().iter().filter(|t| want.iter().any(|w| w == t.name())) {
        if let Some(e) = t.error() {
            emit(json!({"error": error("KafkaError", &format!("topic {}: {:?}", t.name(), e), false, false)}), "fatal");
            return Ok(());
        }
        let parts: Vec<Value> = t
            .partitions()
            .iter()
            .map(|p| json!({"partition": p.id(), "leader": p.leader(), "replicas": p.replicas(), "isr": p.isr()}))
            .collect();
        topics.push(json!({"name": t.name(), "partitions": parts}));
    }
    emit(json!({"brokers": brokers, "topics": topics}), "metadata");
    Ok(())
}

fn main() {
    let op = std::env::args().nth(1).unwrap_or_default();
    let cfg: Value = if op == "version" {
        Value::Null
    } else {
        let mut first = String::new();
        let _ = std::io::stdin().lock().read_line(&mut first);
        serde_json::from_str(&first).unwrap_or_default()
    };
    let result = match op.as_str() {
        "version" => {
            let (_, librdkafka) = rdkafka::util::get_rdkafka_version();
            emit(json!({"version": format!("{} (librdkafka {librdkafka})", env!("RDKAFKA_CRATE_VERSION"))}), "version");
            Ok(())
        }
        "produce" => produce(&cfg),
        "consume" => consume(&cfg),
        "group" => group(&cfg),
        "metadata" => metadata(&cfg),
        "transact" => transact(&cfg),
        _ => {
            emit(json!({"error": error("usage", &format!("unknown operation {op}"), false, false)}), "fatal");
            Ok(())
        }
    };
    if let Err(e) = result {
        emit(json!({"error": describe(&e)}), "fatal");
    }
}
