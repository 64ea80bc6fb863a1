package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Record timestamps as the Java client reads them (operation "timestamps"):
 * for each topic of "topics", two records produced to partition 0 with the
 * CreateTime 1000 and 2000 (acks=all), one "sent" line per record with the
 * offset and the timestamp of its RecordMetadata (the broker's LogAppendTime
 * where the topic's message.timestamp.type says so, else the CreateTime),
 * then one "read" line per record consumed from the start with its
 * timestamp and timestamp type.
 */
final class Timestamps {
  private Timestamps() {}

  static void run(JsonNode cfg) throws Exception {
    Properties pp = Adapter.base(cfg);
    pp.put("acks", "all");
    Properties cp = Adapter.base(cfg);
    cp.put("enable.auto.commit", "false");
    for (JsonNode t : cfg.get("topics")) {
      String topic = t.asText();
      try (KafkaProducer<String, String> p = new KafkaProducer<>(pp, new StringSerializer(), new StringSerializer())) {
        for (long ts : List.of(1000L, 2000L)) {
          RecordMetadata md = p.send(new ProducerRecord<>(topic, 0, ts, null, "v" + ts)).get();
          Map<String, Object> line = new LinkedHashMap<>();
          line.put("topic", topic);
          line.put("offset", md.offset());
          line.put("timestamp", md.timestamp());
          Adapter.emit("sent", line);
        }
      }
      try (KafkaConsumer<String, String> c = new KafkaConsumer<>(cp, new StringDeserializer(), new StringDeserializer())) {
        TopicPartition tp = new TopicPartition(topic, 0);
        c.assign(List.of(tp));
        c.seekToBeginning(List.of(tp));
        int got = 0;
        long deadline = System.currentTimeMillis() + 30_000;
        while (got < 2 && System.currentTimeMillis() < deadline) {
          for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(200))) {
            Map<String, Object> line = new LinkedHashMap<>();
            line.put("topic", topic);
            line.put("offset", r.offset());
            line.put("timestamp", r.timestamp());
            line.put("timestampType", r.timestampType().toString());
            Adapter.emit("read", line);
            got++;
          }
        }
      }
    }
  }
}
