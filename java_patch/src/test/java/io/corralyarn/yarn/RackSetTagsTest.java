package io.corralyarn.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
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

  /** The vectors both codecs are checked against (tests/data/rack_tag_vectors.json). */
  private static JsonNode vectors() throws Exception {
    Path file = Path.of(System.getProperty("basedir", ".")).resolve("../tests/data/rack_tag_vectors.json");
    return new ObjectMapper().readTree(file.toFile());
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(node -> values.add(node.asText()));
    return values;
  }

  @Test
  void sharedVectorsParseToTheirRackSet() throws Exception {
    for (JsonNode c : vectors().get("parse")) {
      assertEquals(new TreeSet<>(strings(c.get("racks"))), RackSetTags.parse(strings(c.get("tags"))),
          c.get("tags").toString());
    }
  }

  @Test
  void sharedVectorsOfMalformedTagsAreRejected() throws Exception {
    for (JsonNode c : vectors().get("malformed")) {
      assertThrows(RackSetTags.MalformedRackSetException.class,
          () -> RackSetTags.parse(strings(c.get("tags"))), c.get("why").asText());
    }
  }

  @Test
  void sharedVectorsEncodeAsThePythonSideDoes() throws Exception {
    for (JsonNode c : vectors().get("encode")) {
      assertEquals(strings(c.get("tags")), RackSetTags.encode(strings(c.get("racks")), 100));
    }
  }
}
