package io.corralyarn.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

class RackSetTagsTest {

  @Test
  void fiftyRacksFitInYarnsDefaultTagLimits() throws Exception {
    List<String> racks = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      racks.add(String.format("/rack-%02d", i));
    }
    List<String> tags = RackSetTags.encode(racks, 100);
    assertTrue(tags.size() <= 8, "leaves room for corral-plan and corral-job within 10 tags");
    tags.forEach(tag -> assertTrue(tag.length() <= 100, tag));
    List<String> withOthers = new ArrayList<>(tags);
    withOthers.add("corral-plan:p-2026-11-21");
    withOthers.add("corral-job:wordcount-daily");
    assertEquals(new TreeSet<>(racks), RackSetTags.parse(withOthers));
  }

  @Test
  void siblingsOfThePreviousRackAreWrittenByTheirNameAsThePythonSideDoes() throws Exception {
    List<String> tags = RackSetTags.encode(List.of("/dc2/rack-01", "/DC1/rack-02", "/dc1/rack-01", "/top"), 100);
    assertEquals(List.of("corral-racks-0:/dc1/rack-01;rack-02;/dc2/rack-01;/top"), tags);
    assertEquals(Set.of("/dc1/rack-01", "/dc1/rack-02", "/dc2/rack-01", "/top"), RackSetTags.parse(tags));
    List<String> racks = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      racks.add(String.format("/dc1/rack-%02d", i));
    }
    List<String> encoded = RackSetTags.encode(racks, 100);
    assertEquals(5, encoded.size());
    assertEquals(new TreeSet<>(racks), RackSetTags.parse(encoded));
  }

  @Test
  void parsingIsCaseInsensitiveAndIgnoresOtherTags() throws Exception {
    assertEquals(Set.of("/rack-a", "/rack-b"),
        RackSetTags.parse(List.of("CORRAL-RACKS-0:/Rack-A;/rack-b", "corral-job:x", "other")));
    assertEquals(Set.of(), RackSetTags.parse(List.of("corral-plan:p1", "corral-job:j")));
  }

  @Test
  void malformedTagsAreRejected() {
    for (List<String> tags : List.of(
        List.of("corral-racks-0:rack-a"),
        List.of("corral-racks-0:"),
        List.of("corral-racks-x:/rack-a"),
        List.of("corral-racks-1:/rack-a"),
        List.of("corral-racks-0:/rack-a;;/rack-b"),
        List.of("corral-racks-0:/rack a"),
        List.of("corral-racks-0:/dc1/rack-a;rack b"),
        List.of("corral-racks-0:/dc1/rack-a;dc1/rack-b"))) {
      assertThrows(RackSetTags.MalformedRackSetException.class, () -> RackSetTags.parse(tags),
          tags.toString());
    }
  }
}
