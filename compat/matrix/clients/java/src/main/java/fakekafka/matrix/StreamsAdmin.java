package fakekafka.matrix;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.GroupListing;
import org.apache.kafka.clients.admin.ListGroupsOptions;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * Kafka 4.4's admin tooling for streams groups, for compat/streams_test.go:
 *
 * <pre>
 * StreamsAdmin BOOTSTRAP list                       GROUP id type state, one a line
 * StreamsAdmin BOOTSTRAP describe GROUP             DESCRIBE state epoch assignment-epoch topology-epoch members,
 *                                                   then MEMBER process epoch active-tasks standby-tasks
 * StreamsAdmin BOOTSTRAP reset GROUP TOPIC N OFFSET sets the group's offsets of TOPIC's N partitions
 * </pre>
 *
 * An error is printed as "ERROR" and the exception, and exits 1.
 */
public final class StreamsAdmin {
  private static final PrintStream OUT = new PrintStream(System.out, true, StandardCharsets.UTF_8);

  private StreamsAdmin() {}

  public static void main(String[] args) throws Exception {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
    try (Admin admin = Admin.create(p)) {
      switch (args[1]) {
        case "list" -> {
          for (GroupListing g : admin.listGroups(ListGroupsOptions.forStreamsGroups()).all().get()) {
            OUT.println("GROUP " + g.groupId() + " " + g.type().map(Object::toString).orElse("?") + " "
                + g.groupState().map(Object::toString).orElse("?"));
          }
        }
        case "describe" -> {
          StreamsGroupDescription d = admin.describeStreamsGroups(List.of(args[2])).all().get().get(args[2]);
          OUT.println("DESCRIBE " + d.groupState() + " " + d.groupEpoch() + " " + d.targetAssignmentEpoch() + " "
              + d.topologyEpoch() + " " + d.members().size());
          for (StreamsGroupMemberDescription m : d.members()) {
            OUT.println("MEMBER " + m.processId() + " " + m.memberEpoch() + " " + tasks(m.assignment().activeTasks())
                + " " + tasks(m.assignment().standbyTasks()));
          }
        }
        case "reset" -> {
          int n = Integer.parseInt(args[4]);
          long offset = Long.parseLong(args[5]);
          Map<TopicPartition, OffsetAndMetadata> offsets = new TreeMap<>((a, b) -> a.toString().compareTo(b.toString()));
          for (int i = 0; i < n; i++) {
            offsets.put(new TopicPartition(args[3], i), new OffsetAndMetadata(offset));
          }
          admin.alterStreamsGroupOffsets(args[2], offsets).all().get();
          OUT.println("RESET " + n);
        }
        default -> throw new IllegalArgumentException("unknown operation " + args[1]);
      }
    } catch (Exception e) {
      OUT.println("ERROR " + (e.getCause() != null ? e.getCause() : e));
      System.exit(1);
    }
  }

  // tasks is "sub:p,p;sub:p" (sorted), "-" when none.
  private static String tasks(List<StreamsGroupMemberAssignment.TaskIds> ts) {
    TreeMap<String, List<Integer>> by = new TreeMap<>();
    for (StreamsGroupMemberAssignment.TaskIds t : ts) {
      by.put(t.subtopologyId(), t.partitions().stream().sorted().toList());
    }
    if (by.isEmpty()) {
      return "-";
    }
    StringBuilder sb = new StringBuilder();
    by.forEach((s, ps) -> {
      if (sb.length() > 0) {
        sb.append(';');
      }
      sb.append(s).append(':');
      sb.append(String.join(",", ps.stream().map(String::valueOf).toList()));
    });
    return sb.toString();
  }
}
