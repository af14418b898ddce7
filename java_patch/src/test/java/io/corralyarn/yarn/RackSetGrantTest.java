package io.corralyarn.yarn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RackSetGrantTest {

  private static final long FROM = 1764028800L;
  private static final long UNTIL = 1764115200L;
  private static final RackSetGrant.Application APP =
      new RackSetGrant.Application("daily-join", "alice", "default", 7);

  private static JsonNode grants() throws Exception {
    Path file = Path.of(System.getProperty("basedir", ".")).resolve("../tests/data/rack_tag_vectors.json");
    return new ObjectMapper().readTree(file.toFile()).get("grants");
  }

  private static RackSetGrant sharedSecret() throws Exception {
    return new RackSetGrant(grants().get("secret").asText().getBytes(StandardCharsets.UTF_8));
  }

  private static List<String> strings(JsonNode array) {
    List<String> values = new ArrayList<>();
    array.forEach(node -> values.add(node.asText()));
    return values;
  }

  @Test
  void sharedVectorsSignAsThePythonSideDoes() throws Exception {
    RackSetGrant grant = sharedSecret();
    for (JsonNode c : grants().get("sign")) {
      RackSetGrant.Application app = new RackSetGrant.Application(c.get("name").asText(),
          c.get("user").asText(), c.get("queue").asText(), c.get("priority").asInt());
      assertEquals(c.get("tag").asText(), grant.sign(app, strings(c.get("racks")),
          c.get("from").asLong(), c.get("until").asLong()), c.toString());
    }
  }

  @Test
  void sharedVectorsGetTheirVerdict() throws Exception {
    RackSetGrant grant = sharedSecret();
    for (JsonNode c : grants().get("verify")) {
      RackSetGrant.Application app = new RackSetGrant.Application(c.get("name").asText(),
          c.get("user").asText(), c.get("queue").asText(), c.get("priority").asInt());
      TagVerdict verdict = TagVerdict.of(strings(c.get("tags")), app,
          c.get("default_priority").asInt(), c.get("submitted").asLong(), grant);
      String why = c.get("why").asText() + ": " + verdict;
      assertEquals(new TreeSet<>(strings(c.get("racks"))), new TreeSet<>(verdict.racks()), why);
      assertEquals(c.get("priority_stands").asBoolean(), verdict.priorityStands(), why);
      assertEquals(c.get("problem").asText(), verdict.problem().name(), why);
    }
  }

  @Test
  void unsignedModeTrustsEveryWellFormedTag() {
    TagVerdict verdict = TagVerdict.of(List.of("corral-racks-0:/rack-b"), APP, 0, FROM, null);
    assertEquals(Set.of("/rack-b"), verdict.racks());
    assertTrue(verdict.priorityStands());
    assertEquals(TagVerdict.Problem.NONE, verdict.problem());
  }

  @Test
  void aGrantCoversExactlyItsApplicationRacksPriorityAndPeriod() {
    RackSetGrant grant = new RackSetGrant("s3cret".getBytes(StandardCharsets.UTF_8));
    Set<String> racks = Set.of("/rack-a");
    List<String> tags = List.of("corral-racks-0:/rack-a", grant.sign(APP, racks, FROM, UNTIL));
    assertNull(grant.refusal(tags, APP, racks, FROM));
    assertNotNull(grant.refusal(tags, APP, Set.of("/rack-b"), FROM));
    assertNotNull(grant.refusal(tags, new RackSetGrant.Application("daily-join", "mallory",
        "default", 7), racks, FROM), "replayed by another user");
    assertNotNull(grant.refusal(tags, APP, racks, UNTIL), "replayed in the next period");
    RackSetGrant otherSecret = new RackSetGrant("other".getBytes(StandardCharsets.UTF_8));
    assertNotNull(otherSecret.refusal(tags, APP, racks, FROM), "signed with another secret");
    assertNotEquals(grant.sign(APP, racks, FROM, UNTIL), otherSecret.sign(APP, racks, FROM, UNTIL));
  }

  @Test
  void theSecretComesFromTheConfigurationOrAFile(@TempDir Path dir) throws Exception {
    Configuration conf = new Configuration(false);
    assertNull(RackSetGrant.fromConfiguration(conf), "no secret: unsigned mode");
    Path file = dir.resolve("grant.secret");
    Files.writeString(file, "s3cret\n");
    conf.set(RackSetGrant.SECRET_FILE_KEY, file.toString());
    RackSetGrant fromFile = RackSetGrant.fromConfiguration(conf);
    Configuration inline = new Configuration(false);
    inline.set(RackSetGrant.SECRET_KEY, "s3cret");
    RackSetGrant fromConf = RackSetGrant.fromConfiguration(inline);
    assertEquals(fromFile.sign(APP, Set.of(), FROM, UNTIL), fromConf.sign(APP, Set.of(), FROM, UNTIL));
    conf.set(RackSetGrant.SECRET_KEY, "s3cret");
    assertThrows(IllegalArgumentException.class, () -> RackSetGrant.fromConfiguration(conf));
    Files.writeString(file, " \n");
    Configuration empty = new Configuration(false);
    empty.set(RackSetGrant.SECRET_FILE_KEY, file.toString());
    assertThrows(IllegalArgumentException.class, () -> RackSetGrant.fromConfiguration(empty));
  }

  /** Pieces random tags are built from: near-misses of the encodings as well as noise. */
  private static final String[] PIECES = {"corral-racks-", "corral-grant:", "corral-plan:", "0", "1",
      "999", "1000", ":", ";", "/", "-", "rack-a", "/rack-b", "ä", " ", "\t", ",", "", "..", "//",
      "1764028800", "17640288001", "ff", "0000000000000000000000000000000000000000000000000000000000000000",
      "\u0000", "\uD800", "CORRAL-RACKS-0:/RACK-A"};

  private static String randomTag(Random random) {
    StringBuilder tag = new StringBuilder();
    int parts = random.nextInt(8);
    for (int i = 0; i < parts; i++) {
      if (random.nextInt(4) == 0) {
        tag.append((char) random.nextInt(0x3000));
      } else {
        tag.append(PIECES[random.nextInt(PIECES.length)]);
      }
    }
    return tag.toString();
  }

  /** The RM must never crash on any tag: the scheduler's decode of random tag sets never throws. */
  @Test
  void decodingRandomTagsNeverThrows() {
    RackSetGrant grant = new RackSetGrant("s3cret".getBytes(StandardCharsets.UTF_8));
    Random random = new Random(20261125L);
    int confined = 0;
    for (int i = 0; i < 20_000; i++) {
      List<String> tags = new ArrayList<>();
      int count = random.nextInt(6);
      for (int t = 0; t < count; t++) {
        tags.add(randomTag(random));
      }
      RackSetGrant.Application app = new RackSetGrant.Application(randomTag(random),
          randomTag(random), randomTag(random), random.nextInt(11) - 1);
      for (RackSetGrant mode : new RackSetGrant[] {null, grant}) {
        TagVerdict verdict = TagVerdict.of(tags, app, 0, random.nextLong(), mode);
        assertNotNull(verdict.problem(), tags.toString());
        assertTrue(mode == null || verdict.racks().isEmpty(), "random tags are never granted");
        confined += verdict.racks().isEmpty() ? 0 : 1;
      }
    }
    assertTrue(confined > 0, "some random tag sets are well-formed rack sets (unsigned mode)");
  }
}
