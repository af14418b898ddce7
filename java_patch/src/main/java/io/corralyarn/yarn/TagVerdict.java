package io.corralyarn.yarn;

import java.util.Collection;
import java.util.Collections;
import java.util.Set;

/**
 * What the scheduler makes of one application's tags (docs/rack-tags.md): the rack set R_j it
 * confines the application to (empty: none) and whether its priority stands. Without a grant
 * secret every well-formed tag is trusted (unsigned mode); with one, a rack set or a priority
 * above the queue's default stands only if a valid planner grant ({@link RackSetGrant}) covers it.
 * Never throws: whatever the tags hold, the application is at worst scheduled as an ordinary one.
 */
public record TagVerdict(Set<String> racks, boolean priorityStands, Problem problem,
    String reason) {

  /** Why the tags were (partly) ignored. */
  public enum Problem {
    NONE, MALFORMED, UNGRANTED
  }

  /**
   * The verdict on an application's tags; {@code grant} null is unsigned mode,
   * {@code defaultPriority} the priority of an ordinary application in its queue.
   */
  public static TagVerdict of(Collection<String> tags, RackSetGrant.Application app,
      int defaultPriority, long submittedSeconds, RackSetGrant grant) {
    try {
      return judge(tags == null ? Set.of() : tags, app, defaultPriority, submittedSeconds, grant);
    } catch (RuntimeException e) {  // a bug must not fail the ResourceManager: schedule as ordinary
      return new TagVerdict(Set.of(), grant == null, Problem.MALFORMED,
          "tags could not be read: " + e);
    }
  }

  private static TagVerdict judge(Collection<String> tags, RackSetGrant.Application app,
      int defaultPriority, long submittedSeconds, RackSetGrant grant) {
    Set<String> racks;
    String malformed = null;
    try {
      racks = RackSetTags.parse(tags);
    } catch (RackSetTags.MalformedRackSetException e) {
      racks = Collections.emptySet();
      malformed = e.getMessage();
    }
    boolean claims = !racks.isEmpty() || app.priority() > defaultPriority;
    String refusal = grant == null || !claims ? null
        : grant.refusal(tags, app, racks, submittedSeconds);
    if (refusal != null) {
      return new TagVerdict(Set.of(), false, Problem.UNGRANTED,
          malformed == null ? refusal : malformed + "; " + refusal);
    }
    return malformed != null ? new TagVerdict(Set.of(), true, Problem.MALFORMED, malformed)
        : new TagVerdict(Collections.unmodifiableSet(racks), true, Problem.NONE, null);
  }
}
