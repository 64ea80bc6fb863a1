package fakekafka.matrix;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateDelegationTokenOptions;
import org.apache.kafka.clients.admin.DescribeDelegationTokenOptions;
import org.apache.kafka.clients.admin.ExpireDelegationTokenOptions;
import org.apache.kafka.clients.admin.RenewDelegationTokenOptions;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.token.delegation.DelegationToken;
import org.apache.kafka.common.security.token.delegation.TokenInformation;

/**
 * The dtoken operation: one Admin delegation-token call (KIP-48) as the
 * configured (SASL) user. Input: tokenOp (create, renew, expire,
 * describe); for create tokenOwner ("User:name", optional), tokenRenewers
 * and tokenMaxLifetimeMs (-1: the broker's); for renew and expire
 * tokenHmac (base64) and tokenPeriodMs; for describe tokenOwners (absent:
 * every token the user may see). Output: a "tokens" line (create,
 * describe) or an "expiry" line (renew, expire); a failed call is "fatal"
 * with the client's exception.
 */
final class DelegationTokens {
  private DelegationTokens() {}

  static void run(JsonNode cfg) throws Exception {
    try (Admin admin = Admin.create(Adapter.base(cfg))) {
      switch (cfg.get("tokenOp").asText()) {
        case "create" -> {
          CreateDelegationTokenOptions o = new CreateDelegationTokenOptions()
              .renewers(principals(cfg.path("tokenRenewers"))).maxLifetimeMs(cfg.path("tokenMaxLifetimeMs").asLong(-1));
          String owner = cfg.path("tokenOwner").asText("");
          if (!owner.isEmpty()) {
            o.owner(principal(owner));
          }
          DelegationToken t = admin.createDelegationToken(o).delegationToken().get();
          Adapter.emit("tokens", Map.of("tokens", List.of(token(t))));
        }
        case "renew" -> {
          long exp = admin.renewDelegationToken(hmac(cfg), new RenewDelegationTokenOptions()
              .renewTimePeriodMs(cfg.get("tokenPeriodMs").asLong())).expiryTimestamp().get();
          Adapter.emit("expiry", Map.of("expiryMs", exp));
        }
        case "expire" -> {
          long exp = admin.expireDelegationToken(hmac(cfg), new ExpireDelegationTokenOptions()
              .expiryTimePeriodMs(cfg.get("tokenPeriodMs").asLong())).expiryTimestamp().get();
          Adapter.emit("expiry", Map.of("expiryMs", exp));
        }
        case "describe" -> {
          DescribeDelegationTokenOptions o = new DescribeDelegationTokenOptions();
          if (cfg.hasNonNull("tokenOwners")) {
            o.owners(principals(cfg.get("tokenOwners")));
          }
          List<Map<String, Object>> out = new ArrayList<>();
          for (DelegationToken t : admin.describeDelegationToken(o).delegationTokens().get()) {
            out.add(token(t));
          }
          Adapter.emit("tokens", Map.of("tokens", out));
        }
        default -> Adapter.emit("fatal", Map.of("error", Adapter.error("usage", "unknown tokenOp " + cfg.get("tokenOp"))));
      }
    }
  }

  static byte[] hmac(JsonNode cfg) {
    return Base64.getDecoder().decode(cfg.get("tokenHmac").asText());
  }

  static KafkaPrincipal principal(String s) {
    int i = s.indexOf(':');
    return new KafkaPrincipal(s.substring(0, i), s.substring(i + 1));
  }

  static List<KafkaPrincipal> principals(JsonNode list) {
    List<KafkaPrincipal> out = new ArrayList<>();
    for (JsonNode p : list) {
      out.add(principal(p.asText()));
    }
    return out;
  }

  static Map<String, Object> token(DelegationToken t) {
    TokenInformation info = t.tokenInfo();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("tokenId", info.tokenId());
    m.put("hmac", t.hmacAsBase64String());
    m.put("owner", info.owner().toString());
    m.put("requester", info.tokenRequester().toString());
    List<String> renewers = new ArrayList<>();
    for (KafkaPrincipal r : info.renewers()) {
      renewers.add(r.toString());
    }
    m.put("renewers", renewers);
    m.put("issueMs", info.issueTimestamp());
    m.put("expiryMs", info.expiryTimestamp());
    m.put("maxMs", info.maxTimestamp());
    return m;
  }
}
