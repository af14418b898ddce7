package io.corralyarn.yarn;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

import org.apache.hadoop.conf.Configuration;

/**
 * The planner's grant of a rack set and a priority to one application (docs/rack-tags.md,
 * "Grants"): an HMAC-SHA256, under a secret the planner shares with the ResourceManager, over the
 * application's name, user, queue, rack set, priority and the period the grant is valid in,
 * carried as one more application tag:
 *
 * <pre>corral-grant:&lt;from&gt;-&lt;until&gt;:&lt;64 hex digits&gt;</pre>
 *
 * with {@code from} and {@code until} in Unix seconds. The Python side
 * ({@code corral_yarn.cluster.grants}) signs the same bytes; both are checked against
 * tests/data/rack_tag_vectors.json.
 */
public final class RackSetGrant {

  /** Prefix of the grant tag. */
  public static final String PREFIX = "corral-grant:";
  /** The shared secret itself (or an alias in a Hadoop credential provider); redacted from /conf. */
  public static final String SECRET_KEY = "yarn.scheduler.corral.grant.secret";
  /** A file holding the shared secret (surrounding whitespace ignored). */
  public static final String SECRET_FILE_KEY = "yarn.scheduler.corral.grant.secret-file";

  private static final String VERSION = "corral-grant-v1";
  private static final String ALGORITHM = "HmacSHA256";
  private static final Pattern TAG = Pattern.compile("corral-grant:(\\d{1,10})-(\\d{1,10}):([0-9a-f]{64})");

  private final SecretKeySpec secret;

  RackSetGrant(byte[] secret) {
    if (secret.length == 0) {
      throw new IllegalArgumentException("the Corral grant secret is empty");
    }
    this.secret = new SecretKeySpec(secret, ALGORITHM);
  }

  /** What a grant covers: the application as the ResourceManager sees it. */
  public record Application(String name, String user, String queue, int priority) {
  }

  /**
   * The verifier for the secret the configuration names, or null when it names none (unsigned
   * mode: every tag is trusted). Fails when both keys are set or the file cannot be read.
   */
  public static RackSetGrant fromConfiguration(Configuration conf) throws IOException {
    char[] inline = conf.getPassword(SECRET_KEY);
    String file = conf.getTrimmed(SECRET_FILE_KEY, "");
    if (inline != null && !file.isEmpty()) {
      throw new IllegalArgumentException("set one of " + SECRET_KEY + " and " + SECRET_FILE_KEY
          + ", not both");
    }
    String value = inline != null ? new String(inline)
        : file.isEmpty() ? "" : Files.readString(Path.of(file), StandardCharsets.UTF_8);
    if (value.isBlank()) {
      if (inline != null || !file.isEmpty()) {
        throw new IllegalArgumentException("the Corral grant secret (" + (file.isEmpty() ? SECRET_KEY
            : file) + ") is empty");
      }
      return null;
    }
    return new RackSetGrant(value.strip().getBytes(StandardCharsets.UTF_8));
  }

  /** The grant tag for this application, rack set and period (what the planner side writes). */
  public String sign(Application app, Collection<String> racks, long from, long until) {
    return PREFIX + from + "-" + until + ":" + HexFormat.of().formatHex(mac(app, racks, from, until));
  }

  /**
   * Why the tags grant this application nothing, or null when they grant it exactly this rack
   * set and priority: a grant tag, valid at {@code submittedSeconds}, whose HMAC matches.
   */
  public String refusal(Collection<String> tags, Application app, Set<String> racks,
      long submittedSeconds) {
    List<Matcher> grants = new ArrayList<>();
    for (String raw : tags) {
      String tag = raw.trim().toLowerCase(Locale.ROOT);
      if (tag.startsWith(PREFIX)) {
        Matcher m = TAG.matcher(tag);
        if (!m.matches()) {
          return "grant tag '" + raw + "' does not match " + PREFIX + "<from>-<until>:<hmac>";
        }
        grants.add(m);
      }
    }
    if (grants.size() != 1) {
      return grants.isEmpty() ? "no " + PREFIX + " tag" : "more than one " + PREFIX + " tag";
    }
    Matcher grant = grants.get(0);
    long from = Long.parseLong(grant.group(1));
    long until = Long.parseLong(grant.group(2));
    byte[] expected = mac(app, racks, from, until);
    byte[] given = HexFormat.of().parseHex(grant.group(3));
    if (!MessageDigest.isEqual(expected, given)) {  // constant time
      return "the grant's HMAC does not match name, user, queue, racks and priority";
    }
    if (submittedSeconds < from || submittedSeconds >= until) {
      return "submitted at " + submittedSeconds + ", outside the grant's period [" + from + ", "
          + until + ")";
    }
    return null;
  }

  private byte[] mac(Application app, Collection<String> racks, long from, long until) {
    Set<String> sorted = new TreeSet<>();
    racks.forEach(rack -> sorted.add(rack.toLowerCase(Locale.ROOT)));
    byte[] message = message(VERSION, app.name(), app.user(), leafQueue(app.queue()),
        String.join(RackSetTags.SEPARATOR, sorted), Integer.toString(app.priority()),
        Long.toString(from), Long.toString(until));
    try {
      Mac mac = Mac.getInstance(ALGORITHM);
      mac.init(secret);
      return mac.doFinal(message);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HMAC-SHA256 unavailable", e);
    }
  }

  /** Each field as a netstring ({@code <UTF-8 byte length>:<bytes>,}), so no two field lists collide. */
  private static byte[] message(String... fields) {
    StringBuilder out = new StringBuilder();
    for (String field : fields) {
      String value = field == null ? "" : field;
      out.append(value.getBytes(StandardCharsets.UTF_8).length).append(':').append(value).append(',');
    }
    return out.toString().getBytes(StandardCharsets.UTF_8);
  }

  /** A queue by its leaf name: "root.default" and "default" are the same queue to a grant. */
  static String leafQueue(String queue) {
    String q = queue == null ? "" : queue;
    return q.substring(q.lastIndexOf('.') + 1);
  }
}
