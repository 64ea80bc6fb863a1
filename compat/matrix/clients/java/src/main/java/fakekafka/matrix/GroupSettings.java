package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;
import java.util.Properties;

/**
 * The group operation's extra consumer settings ("settings": {"group.protocol": "consumer",
 * "group.instance.id": "a", ...}), set over the adapter's own. With group.protocol=consumer the
 * classic-only settings the consumer refuses go (the coordinator decides session and heartbeat).
 */
final class GroupSettings {
  private static final List<String> CLASSIC_ONLY = List.of("session.timeout.ms", "heartbeat.interval.ms", "partition.assignment.strategy");

  private GroupSettings() {}

  static void apply(JsonNode settings, Properties p) {
    if (settings == null || !settings.isObject()) {
      return;
    }
    settings.fields().forEachRemaining(e -> p.put(e.getKey(), e.getValue().asText()));
    if ("consumer".equalsIgnoreCase(p.getProperty("group.protocol", "classic"))) {
      CLASSIC_ONLY.forEach(p::remove);
    }
  }
}
