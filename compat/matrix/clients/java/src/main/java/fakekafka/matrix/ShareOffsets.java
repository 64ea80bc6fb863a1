package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.ShareGroupDescription;
import org.apache.kafka.clients.admin.ListShareGroupOffsetsSpec;
import org.apache.kafka.clients.admin.SharePartitionOffsetInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The share-group offset admin calls of KIP-932 (Admin.alterShareGroupOffsets,
 * listShareGroupOffsets, deleteShareGroupOffsets): operation "share-offsets"
 * alters the start offset of the group's share partition topic/partition to
 * the settings' offset, lists it, deletes the topic's offsets and lists again,
 * answering one line per step ("shareAltered", "shareOffset", "shareDeleted").
 * Operation "share-groups" lists the share groups (Admin.listGroups for
 * share groups) and describes the settings' group
 * (Admin.describeShareGroups): one "shareGroup" line.
 */
final class ShareOffsets {
  private ShareOffsets() {}

  static void run(JsonNode cfg) throws Exception {
    Properties p = Adapter.base(cfg);
    String group = cfg.path("group").asText();
    TopicPartition tp = new TopicPartition(cfg.path("topic").asText(), cfg.path("partition").asInt());
    try (Admin admin = Admin.create(p)) {
      admin.alterShareGroupOffsets(group, Map.of(tp, cfg.path("offset").asLong())).all().get();
      Adapter.emit("shareAltered", Map.of("partition", tp.partition()));
      list(admin, group, tp);
      admin.deleteShareGroupOffsets(group, Set.of(tp.topic())).all().get();
      Adapter.emit("shareDeleted", Map.of("topic", tp.topic()));
      list(admin, group, tp);
    }
  }

  private static void list(Admin admin, String group, TopicPartition tp) throws Exception {
    Map<TopicPartition, SharePartitionOffsetInfo> got = admin
        .listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec().topicPartitions(List.of(tp))))
        .partitionsToOffsetInfo(group).get();
    Map<String, Object> line = new LinkedHashMap<>();
    line.put("partition", tp.partition());
    SharePartitionOffsetInfo info = got.get(tp);
    line.put("present", info != null);
    if (info != null) {
      line.put("offset", info.startOffset());
      line.put("leaderEpoch", info.leaderEpoch().orElse(-1));
      line.put("lag", info.lag().orElse(-1L));
    }
    Adapter.emit("shareOffset", line);
  }

  static void describe(JsonNode cfg) throws Exception {
    String group = cfg.path("group").asText();
    try (Admin admin = Admin.create(Adapter.base(cfg))) {
      boolean listed = false;
      String listedState = "";
      for (GroupListing g : admin.listGroups(ListGroupsOptions.forShareGroups()).all().get()) {
        if (g.groupId().equals(group)) {
          listed = true;
          listedState = g.groupState().map(Object::toString).orElse("");
        }
      }
      ShareGroupDescription d = admin.describeShareGroups(List.of(group)).describedGroups().get(group).get();
      Map<String, Object> line = new LinkedHashMap<>();
      line.put("listed", listed);
      line.put("listedState", listedState);
      line.put("state", d.groupState().toString());
      line.put("members", d.members().size());
      int assigned = 0;
      for (var m : d.members()) {
        assigned += m.assignment().topicPartitions().size();
      }
      line.put("assignedPartitions", assigned);
      line.put("epochMatches", d.groupEpoch() == d.targetAssignmentEpoch());
      Adapter.emit("shareGroup", line);
    }
  }
}
