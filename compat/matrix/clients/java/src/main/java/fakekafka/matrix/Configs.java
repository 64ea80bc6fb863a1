package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.DescribeConfigsOptions;
import org.apache.kafka.common.config.ConfigResource;

/**
 * The configs operation: incrementalAlterConfigs on one resource (a group,
 * as kafka-configs --entity-type groups does, a topic or a broker), then
 * describeConfigs of it with synonyms and documentation. Input: the
 * config's resourceType (GROUP, TOPIC, BROKER), resourceName and
 * configOps [{name, value, op}]. Output: an "altered" line (with the error
 * if the alter failed), then a "configs" line.
 */
final class Configs {
  private Configs() {}

  static void run(JsonNode cfg) throws Exception {
    ConfigResource res = new ConfigResource(ConfigResource.Type.valueOf(cfg.get("resourceType").asText()), cfg.get("resourceName").asText());
    List<AlterConfigOp> ops = new ArrayList<>();
    for (JsonNode o : cfg.path("configOps")) {
      String value = o.path("value").isNull() ? null : o.path("value").asText();
      ops.add(new AlterConfigOp(new ConfigEntry(o.get("name").asText(), value), AlterConfigOp.OpType.valueOf(o.get("op").asText())));
    }
    try (Admin admin = Admin.create(Adapter.base(cfg))) {
      Map<String, Object> altered = new LinkedHashMap<>();
      if (!ops.isEmpty()) {
        try {
          admin.incrementalAlterConfigs(Map.of(res, ops)).all().get();
        } catch (ExecutionException e) {
          altered.put("error", Adapter.describe(e.getCause()));
        }
      }
      Adapter.emit("altered", altered);
      Config described = admin.describeConfigs(List.of(res), new DescribeConfigsOptions().includeSynonyms(true).includeDocumentation(true))
          .all().get().get(res);
      List<Map<String, Object>> out = new ArrayList<>();
      for (ConfigEntry e : described.entries()) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", e.name());
        m.put("value", e.value());
        m.put("source", e.source().name());
        m.put("readOnly", e.isReadOnly());
        m.put("sensitive", e.isSensitive());
        m.put("configType", e.type().name());
        m.put("documented", e.documentation() != null && !e.documentation().isEmpty());
        List<String> syn = new ArrayList<>();
        for (ConfigEntry.ConfigSynonym s : e.synonyms()) {
          syn.add(s.name() + "=" + s.value() + "(" + s.source().name() + ")");
        }
        m.put("synonyms", syn);
        out.add(m);
      }
      Adapter.emit("configs", Map.of("configs", out));
    }
  }
}
