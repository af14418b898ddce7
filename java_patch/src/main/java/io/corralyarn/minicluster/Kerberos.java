package io.corralyarn.minicluster;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The secure mode of the embedded cluster: a MiniKdc on the master address, keytabs for the
 * daemons, the HTTP (SPNEGO) services and one client, a krb5.conf that never canonicalises host
 * names through DNS, and the site settings of a Kerberized Hadoop (docs/minicluster.md, "Secure mode").
 *
 * <p>Every daemon runs in this one JVM, and Hadoop's login user ({@link UserGroupInformation}) is one
 * per JVM, so the NameNode, DataNodes, ResourceManager, NodeManagers and JobHistory server share the
 * service principal {@code hadoop/127.0.0.1}. Every host has its own {@code HTTP/<host>} principal
 * (SPNEGO), all in one keytab that each web server reads whole ({@code kerberos.principal = *}).
 */
public final class Kerberos implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Kerberos.class);
  static final String SERVICE_USER = "hadoop";
  static final String CLIENT_USER = "corral";

  private final MiniKdc kdc;
  private final Path dir;
  private final String host;

  /** A resource of the JVM's classpath holding the settings every in-JVM client must see. */
  static final String JVM_DEFAULTS = "corral-secure-defaults.xml";

  private Kerberos(MiniKdc kdc, Path dir, String host) {
    this.kdc = kdc;
    this.dir = dir;
    this.host = host;
  }

  /** Starts a KDC on the master address, creates every principal and keytab, writes krb5.conf. */
  public static Kerberos start(Path dir, ClusterLayout layout) throws Exception {
    Files.createDirectories(dir);
    Properties conf = MiniKdc.createConf();
    conf.setProperty(MiniKdc.ORG_NAME, "CORRAL");
    conf.setProperty(MiniKdc.ORG_DOMAIN, "TEST");
    conf.setProperty(MiniKdc.KDC_BIND_ADDRESS, ClusterLayout.MASTER_HOST);
    conf.setProperty(MiniKdc.KDC_PORT, String.valueOf(EmbeddedCluster.freePort(ClusterLayout.MASTER_HOST)));
    MiniKdc kdc = new MiniKdc(conf, dir.toFile());
    kdc.start();
    Kerberos kerberos = new Kerberos(kdc, dir, ClusterLayout.MASTER_HOST);
    kerberos.createPrincipals(layout);
    kerberos.writeKrb5Conf(layout);
    LOG.info("KDC of realm {} on {}; krb5.conf {}", kerberos.realm(), kerberos.kdcAddress(),
        kerberos.krb5Conf());
    return kerberos;
  }

  private void createPrincipals(ClusterLayout layout) throws Exception {
    kdc.createPrincipal(serviceKeytab().toFile(), SERVICE_USER + "/" + host);
    List<String> http = new ArrayList<>();
    http.add("HTTP/" + host);
    for (ClusterLayout.Node node : layout.nodes()) {
      http.add("HTTP/" + node.host());
    }
    kdc.createPrincipal(httpKeytab().toFile(), http.toArray(new String[0]));
    kdc.createPrincipal(clientKeytab().toFile(), CLIENT_USER);
  }

  /**
   * MIT clients (Python's gssapi, kinit) and Java's Kerberos read this file: host names are used as
   * given (loopback addresses have no DNS names), TCP only (the MiniKdc serves TCP).
   */
  private void writeKrb5Conf(ClusterLayout layout) throws Exception {
    StringBuilder domains = new StringBuilder("  " + host + " = " + realm() + "\n");
    for (ClusterLayout.Node node : layout.nodes()) {
      domains.append("  ").append(node.host()).append(" = ").append(realm()).append('\n');
    }
    Files.writeString(krb5Conf(), "[libdefaults]\n"
        + "  default_realm = " + realm() + "\n"
        + "  dns_lookup_realm = false\n"
        + "  dns_lookup_kdc = false\n"
        + "  dns_canonicalize_hostname = false\n"
        + "  rdns = false\n"
        + "  udp_preference_limit = 1\n"
        + "  forwardable = true\n"
        + "[realms]\n"
        + "  " + realm() + " = {\n    kdc = " + kdcAddress() + "\n  }\n"
        + "[domain_realm]\n" + domains);
    System.setProperty(MiniKdc.JAVA_SECURITY_KRB5_CONF, krb5Conf().toString());
    Class<?> config = Class.forName("sun.security.krb5.Config");
    Method refresh = config.getMethod("refresh");
    refresh.invoke(config);
  }

  public String realm() {
    return kdc.getRealm();
  }

  public String kdcAddress() {
    return kdc.getHost() + ":" + kdc.getPort();
  }

  public Path krb5Conf() {
    return dir.resolve("krb5.conf");
  }

  public String servicePrincipal() {
    return SERVICE_USER + "/" + host + "@" + realm();
  }

  public String clientPrincipal() {
    return CLIENT_USER + "@" + realm();
  }

  public Path serviceKeytab() {
    return dir.resolve(SERVICE_USER + ".keytab");
  }

  public Path httpKeytab() {
    return dir.resolve("http.keytab");
  }

  public Path clientKeytab() {
    return dir.resolve(CLIENT_USER + ".keytab");
  }

  /** Logs this JVM in as the daemons' service principal (every daemon logs in again as the same). */
  void login(Configuration conf) throws IOException {
    UserGroupInformation.setConfiguration(conf);
    UserGroupInformation.loginUserFromKeytab(servicePrincipal(), serviceKeytab().toString());
  }

  /**
   * What an operator of a secure cluster prepares in HDFS: a sticky, world-writable {@code /tmp} down to
   * the MapReduce staging and history directories (the JobHistory server would create them
   * {@code 770}, owned by the daemons' user, and a job's user could not write its history), and the
   * client's home directory. Jobs run as the client, not as the daemons' superuser.
   */
  void prepareHdfs(Configuration conf) throws IOException {
    try (FileSystem fs = FileSystem.newInstance(conf)) {
      FsPermission open = new FsPermission((short) 01777);
      for (String dir : List.of("/tmp", "/tmp/hadoop-yarn", "/tmp/hadoop-yarn/staging",
          "/tmp/hadoop-yarn/staging/history")) {
        fs.mkdirs(new org.apache.hadoop.fs.Path(dir));
        fs.setPermission(new org.apache.hadoop.fs.Path(dir), open);
      }
      org.apache.hadoop.fs.Path home = new org.apache.hadoop.fs.Path("/user/" + CLIENT_USER);
      fs.mkdirs(home);
      fs.setOwner(home, CLIENT_USER, null);
    }
  }

  /** The Kerberos settings of each site file (merged over the insecure cluster's). */
  Map<String, Map<String, String>> sites() {
    Map<String, Map<String, String>> sites = new LinkedHashMap<>();
    sites.put("core-site.xml", core());
    sites.put("hdfs-site.xml", hdfs());
    sites.put("yarn-site.xml", yarn());
    sites.put("mapred-site.xml", mapred());
    return sites;
  }

  private Map<String, String> core() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("hadoop.security.authentication", "kerberos");
    // Principals of this realm map to their first component whatever a JVM's default realm is
    // (containers read the machine's krb5.conf, not this cluster's).
    String realm = realm().replace(".", "\\.");
    c.put("hadoop.security.auth_to_local", "RULE:[1:$1@$0](.*@" + realm + ")s/@.*//\n"
        + "RULE:[2:$1@$0](.*@" + realm + ")s/@.*//\nDEFAULT");
    // SPNEGO on every web server; the RM swaps in its own filter that also takes delegation tokens.
    c.put("hadoop.http.filter.initializers", "org.apache.hadoop.security.AuthenticationFilterInitializer");
    c.put("hadoop.http.authentication.type", "kerberos");
    c.put("hadoop.http.authentication.simple.anonymous.allowed", "false");
    c.put("hadoop.http.authentication.kerberos.principal", "*");
    c.put("hadoop.http.authentication.kerberos.keytab", httpKeytab().toString());
    return c;
  }

  private Map<String, String> hdfs() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("dfs.block.access.token.enable", "true");
    for (String daemon : List.of("namenode", "datanode")) {
      c.put("dfs." + daemon + ".kerberos.principal", servicePrincipal());
      c.put("dfs." + daemon + ".keytab.file", serviceKeytab().toString());
    }
    c.put("dfs.namenode.kerberos.internal.spnego.principal", "*");
    c.put("dfs.web.authentication.kerberos.principal", "*");
    c.put("dfs.web.authentication.kerberos.keytab", httpKeytab().toString());
    // A secure DataNode needs privileged ports (root and jsvc) or SASL on data transfer with HTTPS;
    // the data transfer here is SASL-authenticated, and this test-only switch waives HTTPS.
    c.put("ignore.secure.ports.for.testing", "true");
    c.putAll(dataTransfer());
    return c;
  }

  /** SASL on the data transfer protocol: every block read and write authenticates its client. */
  private static Map<String, String> dataTransfer() {
    return Map.of("dfs.data.transfer.protection", "authentication");
  }

  /**
   * Makes the data transfer settings defaults of every {@link Configuration} of this JVM: the
   * NodeManager's resource localizer reads HDFS with a fresh {@code new Configuration()}, which sees
   * only resources on the classpath, not the daemons' settings; without SASL it is refused.
   * {@code classpathDir} is on the JVM's classpath (the launcher puts it there).
   */
  static void publishJvmDefaults(Path classpathDir) throws IOException {
    Configuration defaults = new Configuration(false);
    dataTransfer().forEach(defaults::set);
    Files.createDirectories(classpathDir);
    try (var out = Files.newOutputStream(classpathDir.resolve(JVM_DEFAULTS))) {
      defaults.writeXml(out);
    }
    Configuration.addDefaultResource(JVM_DEFAULTS);
  }

  private Map<String, String> yarn() {
    Map<String, String> c = new LinkedHashMap<>();
    for (String daemon : List.of("resourcemanager", "nodemanager")) {
      c.put("yarn." + daemon + ".principal", servicePrincipal());
      c.put("yarn." + daemon + ".keytab", serviceKeytab().toString());
      c.put("yarn." + daemon + ".webapp.spnego-principal", "*");
      c.put("yarn." + daemon + ".webapp.spnego-keytab-file", httpKeytab().toString());
    }
    return c;
  }

  private Map<String, String> mapred() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("mapreduce.jobhistory.principal", servicePrincipal());
    c.put("mapreduce.jobhistory.keytab", serviceKeytab().toString());
    c.put("mapreduce.jobhistory.webapp.spnego-principal", "*");
    c.put("mapreduce.jobhistory.webapp.spnego-keytab-file", httpKeytab().toString());
    return c;
  }

  /** The "kerberos" entry of the cluster description (docs/minicluster.md). */
  Map<String, Object> description() {
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("realm", realm());
    d.put("kdc", kdcAddress());
    d.put("krb5_conf", krb5Conf().toString());
    d.put("principal", clientPrincipal());
    d.put("keytab", clientKeytab().toString());
    d.put("service_principal", servicePrincipal());
    return d;
  }

  @Override
  public void close() {
    kdc.stop();
  }
}
