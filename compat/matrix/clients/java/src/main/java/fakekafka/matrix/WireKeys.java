package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.FeatureMetadata;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.clients.admin.FinalizedVersionRange;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.admin.UpdateFeaturesOptions;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.TopicPartition;

/**
 * Admin calls over the API versions and keys fakekafka answers as Kafka 4.4
 * does (operation "wire-keys"): listConsumerGroupOffsets (OffsetFetch v10,
 * topics by id), describeConsumerGroups of a classic group and of an
 * unknown one (DescribeGroups v6), deleteConsumerGroups (DeleteGroups v3),
 * describeDelegationToken (delegation tokens off), describeFeatures and
 * updateFeatures (a validate-only downgrade, a real one, an invalid one).
 * One line per call: "offsets", "group", "deleted", "tokens", "features",
 * "featureUpdate"; a call that fails names its exception's class.
 */
final class WireKeys {
  private WireKeys() {}

  private static String failure(KafkaFuture<?> f) throws InterruptedException {
    try {
      f.get();
      return "";
    } catch (ExecutionException e) {
      return e.getCause().getClass().getSimpleName();
    }
  }

  static void run(JsonNode cfg) throws Exception {
    String group = cfg.path("group").asText();
    try (Admin admin = Admin.create(Adapter.base(cfg))) {
      Map<TopicPartition, OffsetAndMetadata> offs = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
      Map<String, Object> offsets = new TreeMap<>();
      offs.forEach((tp, om) -> offsets.put(tp.toString(), om == null ? -1 : om.offset()));
      Adapter.emit("offsets", Map.of("offsets", offsets));

      for (String g : List.of(group, "no-such-group")) {
        Map<String, Object> line = new LinkedHashMap<>();
        line.put("group", g);
        KafkaFuture<ConsumerGroupDescription> d = admin.describeConsumerGroups(List.of(g)).describedGroups().get(g);
        String err = failure(d);
        line.put("error", err);
        if (err.isEmpty()) {
          line.put("state", d.get().groupState().toString());
          line.put("groupType", d.get().type().toString());
        }
        Adapter.emit("group", line);
      }

      Map<String, Object> deleted = new TreeMap<>();
      var del = admin.deleteConsumerGroups(List.of(group, "no-such-group")).deletedGroups();
      for (var e : del.entrySet()) {
        deleted.put(e.getKey(), failure(e.getValue()));
      }
      Adapter.emit("deleted", Map.of("groups", deleted));

      Adapter.emit("tokens", Map.of("error", failure(admin.describeDelegationToken().delegationTokens())));

      emitFeatures(admin);
      Map<String, Object> updates = new LinkedHashMap<>();
      updates.put("validateOnly", failure(admin.updateFeatures(
          Map.of("transaction.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
          new UpdateFeaturesOptions().validateOnly(true)).all()));
      updates.put("aboveMax", failure(admin.updateFeatures(
          Map.of("share.version", new FeatureUpdate((short) 3, FeatureUpdate.UpgradeType.UPGRADE)),
          new UpdateFeaturesOptions()).all()));
      updates.put("downgrade", failure(admin.updateFeatures(
          Map.of("transaction.version", new FeatureUpdate((short) 1, FeatureUpdate.UpgradeType.SAFE_DOWNGRADE)),
          new UpdateFeaturesOptions()).all()));
      Adapter.emit("featureUpdate", updates);
      emitFeatures(admin);
    }
  }

  private static void emitFeatures(Admin admin) throws Exception {
    FeatureMetadata fm = admin.describeFeatures().featureMetadata().get();
    Map<String, Object> finalized = new TreeMap<>();
    for (Map.Entry<String, FinalizedVersionRange> e : fm.finalizedFeatures().entrySet()) {
      finalized.put(e.getKey(), (int) e.getValue().maxVersionLevel());
    }
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("finalized", finalized);
    line.put("supported", new TreeMap<>(fm.supportedFeatures()).keySet().stream().toList());
    line.put("epoch", fm.finalizedFeaturesEpoch().orElse(-1L));
    Adapter.emit("features", line);
  }
}
