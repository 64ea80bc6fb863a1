package dev.fakekafka;

import com.github.dockerjava.api.command.InspectContainerResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Properties;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;
import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;

/**
 * Run by scripts/containers.sh (javac and java on the classpath Maven
 * resolves from pom.xml), which sets FAKEKAFKA_IMAGE; exits non-zero on any
 * failure.
 *
 * fakekafka's image from Testcontainers for Java: a generic container whose
 * containerIsStarting hook PUTs the mapped ports before the wait on
 * /readyz; then kafka-clients' Admin describes the cluster (DescribeCluster)
 * and a producer writes acks=all to a partition led by each broker.
 */
public class FakeKafkaCheck {
    static final int BROKERS = 3;

    static class FakeKafkaContainer extends GenericContainer<FakeKafkaContainer> {
        FakeKafkaContainer(String image) {
            super(image);
            withExposedPorts(8080, 9092, 9093, 9094);
            withEnv("FAKEKAFKA_AWAIT_ADVERTISED", "EXTERNAL");
            withEnv("FAKEKAFKA_TOPICS", "java:3:3");
            waitingFor(Wait.forHttp("/readyz").forPort(8080).forStatusCode(200));
        }

        @Override
        protected void containerIsStarting(InspectContainerResponse info) {
            String body = IntStream.range(0, BROKERS)
                .mapToObj(i -> "\"" + (i + 1) + "\":\"" + getHost() + ":" + getMappedPort(9092 + i) + "\"")
                .collect(Collectors.joining(",", "{\"advertised\":{", "}}"));
            HttpClient http = HttpClient.newHttpClient();
            HttpRequest put = HttpRequest.newBuilder(URI.create("http://" + getHost() + ":" + getMappedPort(8080) + "/v1/listeners/EXTERNAL"))
                .PUT(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(5)).build();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (true) {
                try {
                    if (http.send(put, HttpResponse.BodyHandlers.ofString()).statusCode() == 200) return;
                } catch (java.io.IOException notListeningYet) {
                    // Docker's port is open before the process listens
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
                if (System.nanoTime() > deadline) throw new IllegalStateException("PUT /v1/listeners/EXTERNAL failed");
                try { Thread.sleep(20); } catch (InterruptedException e) { throw new RuntimeException(e); }
            }
        }

        List<String> brokers() {
            return IntStream.range(0, BROKERS).mapToObj(i -> getHost() + ":" + getMappedPort(9092 + i)).collect(Collectors.toList());
        }
    }

    public static void main(String[] args) throws Exception {
        String image = System.getenv().getOrDefault("FAKEKAFKA_IMAGE", "fakekafka:dev");
        long start = System.nanoTime();
        try (FakeKafkaContainer kafka = new FakeKafkaContainer(image)) {
            kafka.start();
            String bootstrap = String.join(",", kafka.brokers());

            Properties ap = new Properties();
            ap.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            try (Admin admin = Admin.create(ap)) {
                TreeSet<String> described = admin.describeCluster().nodes().get().stream()
                    .map(n -> n.host() + ":" + n.port()).collect(Collectors.toCollection(TreeSet::new));
                if (!described.equals(new TreeSet<>(kafka.brokers()))) {
                    throw new AssertionError("describeCluster " + described + ", want " + kafka.brokers());
                }
            }

            Properties pp = new Properties();
            pp.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            pp.put(ProducerConfig.ACKS_CONFIG, "all");
            pp.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            pp.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(pp)) {
                for (int p = 0; p < BROKERS; p++) {
                    long offset = producer.send(new ProducerRecord<>("java", p, null, "v" + p)).get().offset();
                    if (offset != 0) throw new AssertionError("partition " + p + " offset " + offset);
                }
            }
            System.out.printf("ok: describeCluster matches the mapped ports; records produced %d ms after start%n",
                Duration.ofNanos(System.nanoTime() - start).toMillis());
        }
    }
}
