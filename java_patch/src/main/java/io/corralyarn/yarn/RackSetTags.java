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
 * Rack names are full topology paths ("/rack-a"); within a tag, a rack with the same parent as the
 * one before it may be written as its last path component alone ("/dc1/rack-07;rack-08"). The list
 * is split over as many numbered tags as needed to keep each tag within YARN's tag length limit;
 * the numbers must run 0..n-1 without gaps. YARN lower-cases tags, so rack names are kept lower-case and matched case-insensitively.
 * Other tags (e.g. "corral-plan:&lt;id&gt;", "corral-job:&lt;name&gt;") are ignored.
 */
public final class RackSetTags {

  /** Prefix of every rack-set tag. */
  public static final String PREFIX = "corral-racks-";
  /** Separator between racks inside one tag. */
  public static final String SEPARATOR = ";";

  private static final Pattern TAG = Pattern.compile("corral-racks-(\\d{1,3}):(.*)");
  private static final Pattern RACK = Pattern.compile("/[a-z0-9._\\-/]+");
  private static final Pattern SIBLING = Pattern.compile("[a-z0-9._\\-]+");

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
      String previous = null;
      for (String item : part.split(SEPARATOR, -1)) {
        previous = expand(previous, item);
        racks.add(previous);
      }
    }
    return racks;
  }

  /** One item of a tag: a full rack path, or a sibling of the previous rack written by its name. */
  private static String expand(String previous, String item) throws MalformedRackSetException {
    if (RACK.matcher(item).matches()) {
      return item;
    }
    if (previous != null && SIBLING.matcher(item).matches()) {
      return parentOf(previous) + "/" + item;
    }
    throw new MalformedRackSetException("'" + item + "' is not a rack path like /rack-a"
        + (previous == null ? "" : " nor the name of a sibling of " + previous));
  }

  private static String parentOf(String rack) {
    return rack.substring(0, rack.lastIndexOf('/'));
  }

  /** The rack as its last path component when it has the previous rack's parent, else in full. */
  private static String sibling(String previous, String rack) {
    int slash = rack.lastIndexOf('/');
    boolean sameParent = slash < rack.length() - 1 && parentOf(previous).equals(rack.substring(0, slash));
    return sameParent ? rack.substring(slash + 1) : rack;
  }

  /**
   * Encodes a rack set as tags of at most {@code maxTagLength} characters (the inverse of
   * {@link #parse}); the Python planner side implements the same encoding.
   */
  public static List<String> encode(Collection<String> racks, int maxTagLength) {
    List<String> tags = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    String previous = null;
    Set<String> sorted = new TreeSet<>();
    racks.forEach(rack -> sorted.add(rack.toLowerCase(Locale.ROOT)));
    for (String rack : sorted) {
      String prefix = PREFIX + tags.size() + ":";
      String item = current.length() == 0 ? rack : sibling(previous, rack);
      if (current.length() > 0 && prefix.length() + current.length() + 1 + item.length() > maxTagLength) {
        tags.add(prefix + current);
        current.setLength(0);
        prefix = PREFIX + tags.size() + ":";
        item = rack;
      }
      if (current.length() == 0 && prefix.length() + rack.length() > maxTagLength) {
        throw new IllegalArgumentException("rack name too long for one tag: " + rack);
      }
      current.append(current.length() == 0 ? "" : SEPARATOR).append(item);
      previous = rack;
    }
    if (current.length() > 0) {
      tags.add(PREFIX + tags.size() + ":" + current);
    }
    return tags;
  }
}
