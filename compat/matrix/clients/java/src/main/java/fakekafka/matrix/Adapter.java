package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.errors.DisconnectException;
import org.apache.kafka.common.errors.NetworkException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * The Java client (org.apache.kafka:kafka-clients) for fakekafka's client
 * matrix: one operation per run, the protocol of compat/matrix/clients/README.md.
 */
public final class Adapter {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);
  private static final BufferedReader IN = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));

  private Adapter() {}

  public static void main(String[] args) throws Exception {
    String op = args.length > 0 ? args[0] : "";
    try {
      JsonNode cfg = op.equals("version") ? JSON.createObjectNode() : JSON.readTree(IN.readLine());
      switch (op) {
        case "version" -> emit("version", Map.of("version", ClientVersion.get()));
        case "produce" -> produce(cfg);
        case "consume" -> consume(cfg);
        case "group" -> group(cfg);
        case "metadata" -> metadata(cfg);
        case "transact" -> transact(cfg);
        case "share-offsets" -> ShareOffsets.run(cfg); // ShareOffsets.java
        case "share-groups" -> ShareOffsets.describe(cfg);
        case "configs" -> Configs.run(cfg);
        case "wire-keys" -> WireKeys.run(cfg); // WireKeys.java
        case "timestamps" -> Timestamps.run(cfg); // Timestamps.java
        case "dtoken" -> DelegationTokens.run(cfg); // DelegationTokens.java
        default -> emit("fatal", Map.of("error", error("usage", "unknown operation " + op)));
      }
    } catch (Exception e) {
      Throwable t = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      emit("fatal", Map.of("error", describeWithCause(t)));
    }
    OUT.flush();
    System.exit(0); // the clients' threads are closed; nothing else to wait for
  }

  static synchronized void emit(String type, Map<String, ?> fields) {
    Map<String, Object> line = new LinkedHashMap<>(fields);
    line.put("type", type);
    try {
      OUT.println(JSON.writeValueAsString(line));
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    OUT.flush();
  }

  static Map<String, Object> error(String name, String message) {
    Map<String, Object> e = new LinkedHashMap<>();
    e.put("name", name);
    e.put("message", message == null ? "" : message);
    e.put("connection", false);
    e.put("protocol", false);
    return e;
  }

  static Map<String, Object> describe(Throwable t) {
    Map<String, Object> e = error(t.getClass().getSimpleName(), t.getMessage());
    e.put("connection", t instanceof NetworkException || t instanceof DisconnectException);
    return e;
  }

  /** A fatal error with its root cause, which a client's "Failed to construct" hides. */
  static Map<String, Object> describeWithCause(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root == t) {
      return describe(t);
    }
    Map<String, Object> e = error(t.getClass().getSimpleName(),
        t.getMessage() + ": " + root.getClass().getSimpleName() + ": " + root.getMessage());
    e.put("connection", t instanceof NetworkException || t instanceof DisconnectException);
    return e;
  }

  static Properties base(JsonNode cfg) {
    Properties p = new Properties();
    p.put("bootstrap.servers", cfg.get("bootstrap").asText());
    String id = cfg.path("clientId").asText("");
    if (!id.isEmpty()) {
      p.put("client.id", id);
    }
    String backoff = cfg.get("backoffMs").asText();
    p.put("retry.backoff.ms", backoff);
    p.put("retry.backoff.max.ms", backoff);
    p.put("reconnect.backoff.ms", backoff);
    p.put("reconnect.backoff.max.ms", "100");
    security(cfg, p);
    return p;
  }

  /**
   * SASL_SSL: the mechanism's login module with the user, the CA file as a PEM trust store. SSL: the
   * CA file, and a client certificate and its key as a PEM key store when given (mutual TLS).
   */
  static void security(JsonNode cfg, Properties p) {
    String protocol = cfg.path("securityProtocol").asText("PLAINTEXT");
    if (protocol.isEmpty() || protocol.equals("PLAINTEXT")) {
      return;
    }
    p.put("security.protocol", protocol);
    if (protocol.equals("SSL")) {
      p.put("ssl.truststore.type", "PEM");
      p.put("ssl.truststore.location", cfg.get("sslCaFile").asText());
      String cert = cfg.path("sslCertFile").asText("");
      if (!cert.isEmpty()) {
        p.put("ssl.keystore.type", "PEM");
        p.put("ssl.keystore.certificate.chain", readFile(cert));
        p.put("ssl.keystore.key", readFile(cfg.get("sslKeyFile").asText()));
      }
      return;
    }
    String mechanism = cfg.get("saslMechanism").asText();
    p.put("sasl.mechanism", mechanism);
    if (mechanism.equals("OAUTHBEARER")) {
      oauth(cfg, p);
    } else {
      String module = mechanism.equals("PLAIN") ? "org.apache.kafka.common.security.plain.PlainLoginModule"
          : "org.apache.kafka.common.security.scram.ScramLoginModule";
      // saslTokenAuth: the user is a delegation token id, the password its HMAC (KIP-48).
      String tokenAuth = cfg.path("saslTokenAuth").asBoolean(false) ? " tokenauth=\"true\"" : "";
      p.put("sasl.jaas.config", module + " required username=" + jaasQuote(cfg.get("saslUsername").asText())
          + " password=" + jaasQuote(cfg.get("saslPassword").asText()) + tokenAuth + ";");
    }
    p.put("ssl.truststore.type", "PEM");
    p.put("ssl.truststore.location", cfg.get("sslCaFile").asText());
  }

  /**
   * OAUTHBEARER with the client credentials grant: the login callback handler fetches a token from the
   * token endpoint with the JAAS clientId and clientSecret. Kafka 4.x only calls URLs the JVM allows.
   */
  static void oauth(JsonNode cfg, Properties p) {
    String url = cfg.get("oauthTokenEndpointUrl").asText();
    System.setProperty("org.apache.kafka.sasl.oauthbearer.allowed.urls", url);
    p.put("sasl.oauthbearer.token.endpoint.url", url);
    p.put("sasl.login.callback.handler.class",
        "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler");
    String scope = cfg.path("oauthScope").asText("");
    p.put("sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required clientId="
        + jaasQuote(cfg.get("saslUsername").asText()) + " clientSecret=" + jaasQuote(cfg.get("saslPassword").asText())
        + (scope.isEmpty() ? "" : " scope=" + jaasQuote(scope)) + ";");
    // The token refresher's settings (sasl.login.refresh.*), for tests with short-lived tokens.
    cfg.path("settings").fields().forEachRemaining(e -> {
      if (e.getKey().startsWith("sasl.login.")) {
        p.put(e.getKey(), e.getValue().asText());
      }
    });
  }

  static String readFile(String path) {
    try {
      return java.nio.file.Files.readString(java.nio.file.Path.of(path));
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  static String jaasQuote(String s) {
    return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  static void produce(JsonNode cfg) throws IOException {
    Properties p = base(cfg);
    int acks = cfg.get("acks").asInt();
    p.put("acks", acks == -1 ? "all" : Integer.toString(acks));
    p.put("compression.type", cfg.get("codec").asText());
    p.put("linger.ms", "5");
    p.put("enable.idempotence", Boolean.toString(cfg.get("idempotent").asBoolean()));
    if (cfg.get("retries").asInt() >= 0) {
      p.put("retries", cfg.get("retries").asText());
    }
    int timeout = cfg.get("deliveryTimeoutMs").asInt();
    if (timeout > 0) {
      // delivery.timeout.ms must cover linger.ms + request.timeout.ms.
      p.put("delivery.timeout.ms", Integer.toString(timeout));
      p.put("request.timeout.ms", Integer.toString(Math.min(30000, timeout - 5)));
    }
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    String topic = cfg.get("topic").asText();
    int partition = cfg.get("partition").asInt();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      int i = 0;
      for (String line = IN.readLine(); line != null; line = IN.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode rec = JSON.readTree(line);
        String key = rec.get("key").asText();
        int index = i++;
        try {
          producer.send(new ProducerRecord<>(topic, partition, key.isEmpty() ? null : key, rec.get("value").asText()), (md, e) -> {
            if (e != null) {
              emit("delivery", Map.of("index", index, "error", describe(e)));
            } else {
              emit("delivery", Map.of("index", index, "offset", md.hasOffset() ? md.offset() : -1));
            }
          });
        } catch (Exception e) {
          emit("delivery", Map.of("index", index, "error", describe(e)));
        }
      }
      producer.flush();
    }
  }

  /** Reads until the end of input, then wakes the consumer so it stops. */
  static AtomicBoolean stopOnEndOfInput(KafkaConsumer<?, ?> consumer) {
    AtomicBoolean stop = new AtomicBoolean();
    Thread t = new Thread(() -> {
      try {
        while (IN.readLine() != null) {
          // only the end matters
        }
      } catch (IOException e) {
        // the harness went away: stop all the same
      }
      stop.set(true);
      consumer.wakeup();
    });
    t.setDaemon(true);
    t.start();
    return stop;
  }

  static void stream(JsonNode cfg, Properties p, java.util.function.Consumer<KafkaConsumer<String, String>> start) {
    p.put("fetch.max.wait.ms", cfg.get("fetchWaitMs").asText());
    p.put("key.deserializer", StringDeserializer.class.getName());
    p.put("value.deserializer", StringDeserializer.class.getName());
    try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(p)) {
      start.accept(consumer);
      AtomicBoolean stop = stopOnEndOfInput(consumer);
      while (!stop.get()) {
        try {
          for (ConsumerRecord<String, String> r : consumer.poll(Duration.ofMillis(50))) {
            Map<String, Object> rec = new LinkedHashMap<>();
            rec.put("partition", r.partition());
            rec.put("offset", r.offset());
            rec.put("key", r.key() == null ? "" : r.key());
            rec.put("value", r.value() == null ? "" : r.value());
            emit("record", rec);
          }
        } catch (WakeupException e) {
          // the end of input: the loop ends
        } catch (Exception e) {
          emit("error", Map.of("error", describe(e)));
        }
      }
    } // close commits and leaves the group
  }

  static void consume(JsonNode cfg) {
    Properties p = base(cfg);
    p.put("enable.auto.commit", "false");
    p.put("isolation.level", cfg.get("readCommitted").asBoolean() ? "read_committed" : "read_uncommitted");
    TopicPartition tp = new TopicPartition(cfg.get("topic").asText(), cfg.get("partition").asInt());
    stream(cfg, p, c -> {
      c.assign(List.of(tp));
      c.seek(tp, cfg.get("offset").asLong());
    });
  }

  /** One transaction per line of input, each ended before the next begins. */
  static void transact(JsonNode cfg) throws Exception {
    Properties p = base(cfg);
    p.put("transactional.id", cfg.get("transactionalId").asText());
    p.put("linger.ms", "5");
    p.put("key.serializer", StringSerializer.class.getName());
    p.put("value.serializer", StringSerializer.class.getName());
    String topic = cfg.get("topic").asText();
    int partition = cfg.get("partition").asInt();
    try (KafkaProducer<String, String> producer = new KafkaProducer<>(p)) {
      producer.initTransactions();
      int i = 0;
      for (String line = IN.readLine(); line != null; line = IN.readLine()) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode txn = JSON.readTree(line);
        producer.beginTransaction();
        List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
        for (JsonNode rec : txn.get("records")) {
          String key = rec.get("key").asText();
          sent.add(producer.send(new ProducerRecord<>(topic, partition, key.isEmpty() ? null : key, rec.get("value").asText())));
        }
        // Every record acknowledged first: an abort drops what is unsent.
        for (java.util.concurrent.Future<?> f : sent) {
          f.get();
        }
        JsonNode o = txn.path("offsets");
        if (o.isObject()) {
          TopicPartition tp = new TopicPartition(o.get("topic").asText(), o.get("partition").asInt());
          producer.sendOffsetsToTransaction(Map.of(tp, new OffsetAndMetadata(o.get("offset").asLong())),
              new ConsumerGroupMetadata(o.get("group").asText()));
        }
        if (txn.path("await").asBoolean()) {
          emit("produced", Map.of("index", i));
          if (IN.readLine() == null) {
            return; // the input ended instead: leave the transaction open
          }
        }
        if (txn.get("commit").asBoolean()) {
          producer.commitTransaction();
        } else {
          producer.abortTransaction();
        }
        emit("txn", Map.of("index", i++));
      }
    }
  }

  static void group(JsonNode cfg) {
    Properties p = base(cfg);
    p.put("group.id", cfg.get("group").asText());
    p.put("auto.offset.reset", "earliest");
    p.put("session.timeout.ms", cfg.get("sessionTimeoutMs").asText());
    p.put("heartbeat.interval.ms", cfg.get("heartbeatIntervalMs").asText());
    p.put("auto.commit.interval.ms", cfg.get("commitIntervalMs").asText());
    GroupSettings.apply(cfg.path("settings"), p);
    stream(cfg, p, c -> c.subscribe(List.of(cfg.get("topic").asText())));
  }

  static void metadata(JsonNode cfg) throws Exception {
    List<String> names = new ArrayList<>();
    cfg.get("topics").forEach(t -> names.add(t.asText()));
    try (Admin admin = Admin.create(base(cfg))) {
      List<Map<String, Object>> brokers = new ArrayList<>();
      for (Node n : admin.describeCluster().nodes().get()) {
        brokers.add(Map.of("id", n.id(), "host", n.host(), "port", n.port()));
      }
      List<Map<String, Object>> topics = new ArrayList<>();
      for (TopicDescription t : admin.describeTopics(names).allTopicNames().get().values()) {
        List<Map<String, Object>> parts = new ArrayList<>();
        for (TopicPartitionInfo pi : t.partitions()) {
          parts.add(Map.of("partition", pi.partition(), "leader", pi.leader() == null ? -1 : pi.leader().id(),
              "replicas", pi.replicas().stream().map(Node::id).toList(), "isr", pi.isr().stream().map(Node::id).toList()));
        }
        topics.add(Map.of("name", t.name(), "partitions", parts));
      }
      emit("metadata", Map.of("brokers", brokers, "topics", topics));
    }
  }
}
