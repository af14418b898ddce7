package io.corralyarn.yarn;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Corral rack set R_j of an application, carried in its YARN application tags
 * (see docs/rack-tags.md):
 *
 * <pre>corral-racks-&lt;k&gt;:&lt;rack&gt;;&lt;rack&gt;;...   for k = 0, 1, 2, ...</pre>
 *
 * Rack names are full topology paths ("/rack-a"). The list is split over as many numbered tags as
 * needed to keep each tag within YARN's tag length limit; the numbers must run 0..n-1 without
 * gaps. YARN lower-cases tags, so rack names are kept lower-case and matched case-insensitively.
 * Other tags (e.g. "corral-plan:&lt;id&gt;", "corral-job:&lt;name&gt;") are ignored.
 */
public final class RackSetTags {

  /** Prefix of every rack-set tag. */
  public static final String PREFIX = "corral-racks-";
  /** Separator between racks inside one tag. */
  public static final String SEPARATOR = ";";

  private static final Pattern TAG = Pattern.compile("corral-racks-(\\d{1,3}):(.*)");
  private static final Pattern RACK = Pattern.compile("/[a-z0-9._\\-/]+");

  private RackSetTags() {
  }

  /** A tag set that claims to carry a rack set but does not follow the encoding. */
  public static final class MalformedRackSetException extends Exception {
    private static final long serialVersionUID = 1L;

    MalformedRackSetException(String message) {
      super(message);
    }
  }

  /**
   * Returns the rack set (lower-case rack paths) of the tags, or an empty set when no tag starts
   * with {@link #PREFIX} (an ad hoc application).
   */
  public static Set<String> parse(Collection<String> tags) throws MalformedRackSetException {
    TreeMap<Integer, String> parts = new TreeMap<>();
    for (String raw : tags) {
      String tag = raw.trim().toLowerCase(Locale.ROOT);
      if (!tag.startsWith(PREFIX)) {
        continue;
      }
      Matcher m = TAG.matcher(tag);
      if (!m.matches()) {
        throw new MalformedRackSetException("tag '" + raw + "' does not match "
            + PREFIX + "<k>:<rack>;<rack>;...");
      }
      int index = Integer.parseInt(m.group(1));
      if (parts.put(index, m.group(2)) != null) {
        throw new MalformedRackSetException("rack-set tag number " + index + " appears twice");
      }
    }
    if (parts.isEmpty()) {
      return Collections.emptySet();
    }
    if (parts.lastKey() != parts.size() - 1) {
      throw new MalformedRackSetException("rack-set tags must be numbered 0.." + (parts.size() - 1)
          + " without gaps, got " + parts.keySet());
    }
    Set<String> racks = new TreeSet<>();
    for (String part : parts.values()) {
      for (String rack : part.split(SEPARATOR, -1)) {
        if (!RACK.matcher(rack).matches()) {
          throw new MalformedRackSetException("'" + rack + "' is not a rack path like /rack-a");
        }
        racks.add(rack);
      }
    }
    return racks;
  }

  /**
   * Encodes a rack set as tags of at most {@code maxTagLength} characters (the inverse of
   * {@link #parse}); the Python planner side implements the same encoding.
   */
  public static List<String> encode(Collection<String> racks, int maxTagLength) {
    List<String> tags = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String rack : new TreeSet<>(racks)) {
      String prefix = PREFIX + tags.size() + ":";
      int extra = current.length() == 0 ? prefix.length() + rack.length() : 1 + rack.length();
      if (current.length() > 0 && current.length() + extra > maxTagLength) {
        tags.add(current.toString());
        current.setLength(0);
        prefix = PREFIX + tags.size() + ":";
      }
      if (current.length() == 0) {
        if (prefix.length() + rack.length() > maxTagLength) {
          throw new IllegalArgumentException("rack name too long for one tag: " + rack);
        }
        current.append(prefix).append(rack.toLowerCase(Locale.ROOT));
      } else {
        current.append(SEPARATOR).append(rack.toLowerCase(Locale.ROOT));
      }
    }
    if (current.length() > 0) {
      tags.add(current.toString());
    }
    return tags;
  }
}
