package fakekafka.registry;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericDatumWriter;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.BinaryEncoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.io.EncoderFactory;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.springframework.cloud.stream.schema.registry.SchemaRegistrationResponse;
import org.springframework.cloud.stream.schema.registry.client.ConfluentSchemaRegistryClient;
import org.springframework.web.client.HttpStatusCodeException;

/**
 * The Java schema registry scenario of fakekafka's client matrix
 * (compat/matrix/process_registry.go): Spring Cloud Stream's
 * ConfluentSchemaRegistryClient registers two versions of an Avro schema
 * and fetches writer schemas by id; Apache Avro encodes and decodes in
 * Confluent's wire format (magic byte 0, the schema id in four bytes, the
 * Avro binary); kafka-clients produces and consumes. Operations: version,
 * avro; the protocol of compat/matrix/clients/README.md.
 */
public final class SchemaRegistry {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

  private SchemaRegistry() {}

  public static void main(String[] args) throws Exception {
    String op = args.length > 0 ? args[0] : "";
    try {
      switch (op) {
        case "version" -> emit("version", Map.of("version", "spring-cloud-stream-schema-registry-client "
            + ConfluentSchemaRegistryClient.class.getPackage().getImplementationVersion()));
        case "avro" -> avro(JSON.readTree(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine()));
        default -> emit("fatal", Map.of("error", error(new IllegalArgumentException("unknown operation " + op))));
      }
    } catch (Exception e) {
      emit("fatal", Map.of("error", error(e)));
    }
    OUT.flush();
    System.exit(0);
  }

  // example:sr-java:start
  static final String USER_V1 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"example\",\"fields\":["
      + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"int\"}]}";
  // Adds a field with a default: BACKWARD compatible.
  static final String USER_V2 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"example\",\"fields\":["
      + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"int\"},"
      + "{\"name\":\"email\",\"type\":\"string\",\"default\":\"unknown\"}]}";
  // age becomes a string: incompatible.
  static final String USER_V3 = "{\"type\":\"record\",\"name\":\"User\",\"namespace\":\"example\",\"fields\":["
      + "{\"name\":\"name\",\"type\":\"string\"},{\"name\":\"age\",\"type\":\"string\"}]}";

  static void avro(JsonNode cfg) throws Exception {
    ConfluentSchemaRegistryClient registry = new ConfluentSchemaRegistryClient();
    registry.setEndpoint(cfg.get("registryUrl").asText());
    String topic = cfg.get("topic").asText();
    String subject = topic + "-value";
    Map<String, Object> conf = Map.of("bootstrap.servers", cfg.get("bootstrap").asText());

    List<Map.Entry<String, Map<String, Object>>> users = List.of(
        Map.entry(USER_V1, Map.of("name", "ada", "age", 36)),
        Map.entry(USER_V2, Map.of("name", "alan", "age", 41, "email", "alan@example.com")));
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(conf, new ByteArraySerializer(), new ByteArraySerializer())) {
      for (int i = 0; i < users.size(); i++) {
        Schema schema = new Schema.Parser().parse(users.get(i).getKey());
        SchemaRegistrationResponse registered = registry.register(subject, "avro", users.get(i).getKey());
        byte[] value = encode(registered.getId(), schema, users.get(i).getValue());
        producer.send(new ProducerRecord<>(topic, 0, null, value)).get();
        emit("produced", Map.of("index", i, "id", registered.getId()));
      }
    }

    try {
      registry.register(subject, "avro", USER_V3);
      emit("fatal", Map.of("error", error(new IllegalStateException("an incompatible schema was registered"))));
    } catch (RuntimeException e) { // its cause: the HTTP 409
      emit("refused", Map.of("error", error(e)));
    }

    List<byte[]> values = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(conf, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      TopicPartition tp = new TopicPartition(topic, 0);
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (values.size() < users.size() && System.nanoTime() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          values.add(r.value());
        }
      }
    }
    if (values.size() < users.size()) {
      throw new IllegalStateException("consumed " + values.size() + " of " + users.size() + " records in 20 s");
    }

    // Readers on each version: the first record gets the default email,
    // the second is read without it.
    for (String[] reader : new String[][] {{"v2", USER_V2}, {"v1", USER_V1}}) {
      Schema readerSchema = new Schema.Parser().parse(reader[1]);
      for (int i = 0; i < values.size(); i++) {
        ByteBuffer buf = ByteBuffer.wrap(values.get(i));
        if (buf.get() != 0) {
          throw new IllegalStateException("record " + i + " is not in Confluent's wire format");
        }
        int id = buf.getInt();
        Schema writer = new Schema.Parser().parse(registry.fetch(id));
        GenericRecord rec = new GenericDatumReader<GenericRecord>(writer, readerSchema)
            .read(null, DecoderFactory.get().binaryDecoder(values.get(i), buf.position(), buf.remaining(), null));
        Map<String, Object> decoded = new LinkedHashMap<>();
        for (Schema.Field f : readerSchema.getFields()) {
          Object v = rec.get(f.name());
          decoded.put(f.name(), v instanceof CharSequence ? v.toString() : v);
        }
        emit("decoded", Map.of("reader", reader[0], "index", i, "decoded", decoded));
      }
    }
  }

  static byte[] encode(int id, Schema schema, Map<String, Object> fields) throws IOException {
    GenericRecord rec = new GenericData.Record(schema);
    fields.forEach(rec::put);
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    out.write(0);
    out.write(ByteBuffer.allocate(4).putInt(id).array());
    BinaryEncoder enc = EncoderFactory.get().binaryEncoder(out, null);
    new GenericDatumWriter<GenericRecord>(schema).write(rec, enc);
    enc.flush();
    return out.toByteArray();
  }
  // example:sr-java:end

  /**
   * The protocol's error: the exception's class, or, where an HTTP answer
   * is behind it, the HTTP exception's class, the status and the
   * registry's error_code from its body.
   */
  static Map<String, Object> error(Throwable e) {
    Map<String, Object> err = new LinkedHashMap<>();
    Throwable http = e;
    while (http != null && !(http instanceof HttpStatusCodeException)) {
      http = http.getCause();
    }
    err.put("name", (http != null ? http : e).getClass().getSimpleName());
    err.put("message", String.valueOf(e.getMessage()));
    err.put("connection", false);
    err.put("protocol", false);
    if (http instanceof HttpStatusCodeException h) {
      err.put("status", h.getStatusCode().value());
      try {
        err.put("code", JSON.readTree(h.getResponseBodyAsString()).path("error_code").asInt());
      } catch (IOException ignored) {
        // no JSON body: the status says it
      }
    }
    return err;
  }

  static synchronized void emit(String type, Map<String, ?> fields) {
    Map<String, Object> line = new LinkedHashMap<>(fields);
    line.put("type", type);
    try {
      OUT.println(JSON.writeValueAsString(line));
      OUT.flush();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }
}
