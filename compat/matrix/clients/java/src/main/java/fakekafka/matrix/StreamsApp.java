package fakekafka.matrix;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.StreamsMetadata;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * Kafka Streams 4.4 application instances for fakekafka's streams group
 * tests (compat/streams_test.go), in one JVM: each re-keys the input
 * records by their value and counts them per key, with a repartition topic
 * and a state store whose changelog the broker creates, at
 * group.protocol=streams and processing.guarantee=exactly_once_v2. Each
 * instance is its own Kafka Streams client (its own process id and state
 * directory), so three instances are three members of three processes.
 *
 * <pre>StreamsApp BOOTSTRAP APPLICATION_ID INPUT OUTPUT STATE_DIR</pre>
 *
 * Commands, one a line: "start NAME PORT" starts an instance (its
 * application.server is localhost:PORT), "stop NAME" closes one (it leaves
 * the group), "meta NAME" prints what it knows of every instance's
 * partitions; end of input closes every instance. It prints
 * "STATE NAME state" on every state change, "CLOSED NAME" once one is
 * closed and "ERROR NAME ..." for an exception a stream thread hit.
 */
public final class StreamsApp {
  private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

  private StreamsApp() {}

  public static void main(String[] args) throws Exception {
    String bootstrap = args[0], appId = args[1], input = args[2], output = args[3], stateDir = args[4];
    Map<String, KafkaStreams> running = new LinkedHashMap<>();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    for (String line; (line = in.readLine()) != null; ) {
      String[] f = line.trim().split(" ");
      if (f[0].equals("start")) {
        running.put(f[1], start(bootstrap, appId, input, output, stateDir + "/" + f[1], f[1], f[2]));
      } else if (f[0].equals("stop")) {
        close(f[1], running.remove(f[1]));
      } else if (f[0].equals("meta") && running.containsKey(f[1])) {
        meta(f[1], running.get(f[1]));
      }
    }
    for (Map.Entry<String, KafkaStreams> e : running.entrySet()) {
      close(e.getKey(), e.getValue());
    }
  }

  // meta prints what the instance knows of every instance from the
  // heartbeat's endpoint-to-partitions map: "META NAME port:partitions ...".
  private static void meta(String name, KafkaStreams streams) {
    TreeMap<Integer, Integer> byPort = new TreeMap<>();
    for (StreamsMetadata m : streams.metadataForAllStreamsClients()) {
      byPort.put(m.hostInfo().port(), m.topicPartitions().size());
    }
    StringBuilder sb = new StringBuilder("META " + name);
    byPort.forEach((port, n) -> sb.append(' ').append(port).append(':').append(n));
    OUT.println(sb);
  }

  private static void close(String name, KafkaStreams streams) {
    if (streams != null) {
      streams.close(Duration.ofSeconds(60));
      OUT.println("CLOSED " + name);
    }
  }

  private static KafkaStreams start(String bootstrap, String appId, String input, String output, String stateDir,
      String name, String port) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
    p.put(StreamsConfig.CLIENT_ID_CONFIG, appId + "-" + name);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
    p.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "localhost:" + port);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 3);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
    p.put(StreamsConfig.RETRY_BACKOFF_MS_CONFIG, 100);
    p.put(StreamsConfig.consumerPrefix("metadata.max.age.ms"), 1000);

    StreamsBuilder b = new StreamsBuilder();
    b.stream(input, Consumed.with(Serdes.String(), Serdes.String()))
        .selectKey((k, v) -> v)
        .groupByKey(Grouped.with("rekey", Serdes.String(), Serdes.String()))
        .count(Materialized.as("counts"))
        .toStream()
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));

    KafkaStreams streams = new KafkaStreams(b.build(), p);
    streams.setStateListener((now, before) -> OUT.println("STATE " + name + " " + now));
    streams.setUncaughtExceptionHandler(e -> {
      OUT.println("ERROR " + name + " " + e);
      return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.REPLACE_THREAD;
    });
    streams.start();
    return streams;
  }
}
