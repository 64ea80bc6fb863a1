package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import org.apache.kafka.clients.consumer.AcknowledgeType;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicIdPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Kafka's own share consumer (KIP-932, KafkaShareConsumer) driven step by
 * step: the first stdin line configures it (bootstrap, group, topic,
 * acknowledgement mode, extra properties), then each line is one command,
 * answered by one JSON line on stdout:
 *
 * <pre>
 * {"op":"poll","ms":N}                      -> {"type":"records","records":[{"partition","offset","value","deliveryCount"}]}
 * {"op":"ack","offset":N,"partition":P,"ackType":"ACCEPT|RELEASE|REJECT|RENEW"} -> {"type":"acked"}
 * {"op":"commit"}                           -> {"type":"committed","errors":{"topic-partition":"error"}}
 * {"op":"close"}                            -> {"type":"closed"}, then exits
 * </pre>
 *
 * An exception answers {"type":"error","error":{...}} and the consumer goes
 * on; the Go test (compat/share_test.go) decides what that means.
 */
public final class Share {
  private static final ObjectMapper JSON = new ObjectMapper();

  private Share() {}

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    JsonNode cfg = JSON.readTree(in.readLine());
    Properties p = new Properties();
    p.put("bootstrap.servers", cfg.get("bootstrap").asText());
    p.put("group.id", cfg.get("group").asText());
    p.put("client.id", cfg.path("clientId").asText("share-" + cfg.get("group").asText()));
    p.put("share.acknowledgement.mode", cfg.path("ackMode").asText("implicit"));
    p.put("retry.backoff.ms", "50");
    p.put("retry.backoff.max.ms", "200");
    p.put("reconnect.backoff.ms", "50");
    p.put("reconnect.backoff.max.ms", "200");
    cfg.path("props").fields().forEachRemaining(e -> p.put(e.getKey(), e.getValue().asText()));
    Map<String, ConsumerRecord<String, String>> held = new HashMap<>();
    try (KafkaShareConsumer<String, String> c = new KafkaShareConsumer<>(p, new StringDeserializer(), new StringDeserializer())) {
      c.subscribe(List.of(cfg.get("topic").asText()));
      emit("ready", Map.of());
      String line;
      while ((line = in.readLine()) != null) {
        JsonNode cmd = JSON.readTree(line);
        try {
          switch (cmd.get("op").asText()) {
            case "poll" -> {
              ConsumerRecords<String, String> rs = c.poll(Duration.ofMillis(cmd.get("ms").asLong()));
              List<Map<String, Object>> out = new ArrayList<>();
              held.clear();
              for (ConsumerRecord<String, String> r : rs) {
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("partition", r.partition());
                m.put("offset", r.offset());
                m.put("value", r.value());
                m.put("deliveryCount", r.deliveryCount().map(Short::intValue).orElse(-1));
                out.add(m);
                held.put(r.partition() + "/" + r.offset(), r);
              }
              emit("records", Map.of("records", out));
            }
            case "ack" -> {
              ConsumerRecord<String, String> r = held.get(cmd.path("partition").asInt(0) + "/" + cmd.get("offset").asLong());
              if (r == null) {
                throw new IllegalStateException("offset " + cmd.get("offset").asLong() + " was not in the last poll");
              }
              c.acknowledge(r, AcknowledgeType.valueOf(cmd.get("ackType").asText()));
              emit("acked", Map.of());
            }
            case "commit" -> {
              Map<String, String> errors = new LinkedHashMap<>();
              for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : c.commitSync(Duration.ofSeconds(30)).entrySet()) {
                e.getValue().ifPresent(ex -> errors.put(e.getKey().topic() + "-" + e.getKey().partition(), ex.getClass().getSimpleName()));
              }
              emit("committed", Map.of("errors", errors));
            }
            case "close" -> {
              c.close(Duration.ofSeconds(30));
              emit("closed", Map.of());
              System.out.flush();
              System.exit(0);
            }
            default -> throw new IllegalArgumentException("unknown op " + cmd.get("op").asText());
          }
        } catch (Exception e) {
          emit("error", Map.of("error", Adapter.describe(e)));
        }
      }
    }
    System.exit(0);
  }

  static void emit(String type, Map<String, ?> fields) {
    Adapter.emit(type, fields);
  }
}
