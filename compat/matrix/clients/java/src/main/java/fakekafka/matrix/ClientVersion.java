package fakekafka.matrix;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/**
 * The kafka-clients version, from the properties file the jar carries (the class that reads it moved to
 * an internal package in 4.4).
 */
final class ClientVersion {
  private ClientVersion() {}

  static String get() {
    try (InputStream in = ClientVersion.class.getResourceAsStream("/kafka/kafka-version.properties")) {
      Properties p = new Properties();
      if (in != null) {
        p.load(in);
      }
      return p.getProperty("version", "unknown");
    } catch (IOException e) {
      return "unknown";
    }
  }
}
