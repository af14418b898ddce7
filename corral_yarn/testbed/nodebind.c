/*
 * corral-yarn testbed: LD_PRELOAD shim for container JVMs (docs/testbed.md).
 *
 * The kernel gives an unbound client socket the source 127.0.0.1, so a map task's HDFS read or a
 * reducer's shuffle fetch would not carry its node's address and the testbed's tc filters, which
 * classify traffic by the racks' address blocks, could not see which rack it leaves. This shim binds
 * every unbound TCP socket that connects to a loopback address to the node's own address
 * (CORRAL_NODE_ADDRESS, else the NM_HOST a NodeManager sets for its containers) just before connect(),
 * as the DataNodes' BoundSocketFactory does for the daemons. Sockets already bound are left alone.
 *
 * Built with -DCORRAL_CPU_GROUPS=\"DIR\" (the testbed's cgroup, testbed/cpu.py), it also moves the
 * process into its node's CPU group DIR/node-<address> as the library loads, so each node's containers
 * share that node's CPU quota and no other's.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef int (*connect_fn)(int, const struct sockaddr *, socklen_t);

static const char *node_address(void) {
  const char *address = getenv("CORRAL_NODE_ADDRESS");
  return address && *address ? address : getenv("NM_HOST");
}

#ifdef CORRAL_CPU_GROUPS
/* Joins DIR/node-<address>: writing a pid to cgroup.procs moves the whole process. */
__attribute__((constructor)) static void join_node_cpu_group(void) {
  const char *address = node_address();
  char path[512];
  if (!address || !*address) return;
  if (snprintf(path, sizeof(path), "%s/node-%s/cgroup.procs", CORRAL_CPU_GROUPS, address) >= (int)sizeof(path)) return;
  FILE *procs = fopen(path, "w");
  if (!procs) return;
  fprintf(procs, "%d\n", (int)getpid());
  fclose(procs);
}
#endif

static int is_stream(int fd) {
  int type = 0;
  socklen_t len = sizeof(type);
  return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_STREAM;
}

static int is_unbound(int fd) {
  struct sockaddr_storage local;
  socklen_t len = sizeof(local);
  if (getsockname(fd, (struct sockaddr *)&local, &len) != 0) return 0;
  if (local.ss_family == AF_INET) return ((struct sockaddr_in *)&local)->sin_port == 0;
  if (local.ss_family == AF_INET6) return ((struct sockaddr_in6 *)&local)->sin6_port == 0;
  return 0;
}

/* Binds fd to the node's address if it is an unbound TCP socket connecting to 127/8. */
static void bind_to_node(int fd, const struct sockaddr *remote) {
  const char *address = node_address();
  struct in_addr node;
  if (!address || !remote || inet_pton(AF_INET, address, &node) != 1) return;
  if (!is_stream(fd) || !is_unbound(fd)) return;
  if (remote->sa_family == AF_INET) {
    const struct sockaddr_in *r = (const struct sockaddr_in *)remote;
    if ((ntohl(r->sin_addr.s_addr) >> 24) != 127) return;
    struct sockaddr_in local = {.sin_family = AF_INET, .sin_port = 0, .sin_addr = node};
    bind(fd, (struct sockaddr *)&local, sizeof(local));
  } else if (remote->sa_family == AF_INET6) {
    const struct sockaddr_in6 *r = (const struct sockaddr_in6 *)remote;
    if (!IN6_IS_ADDR_V4MAPPED(&r->sin6_addr) || r->sin6_addr.s6_addr[12] != 127) return;
    struct sockaddr_in6 local = {.sin6_family = AF_INET6, .sin6_port = 0};
    local.sin6_addr.s6_addr[10] = 0xff;
    local.sin6_addr.s6_addr[11] = 0xff;
    memcpy(&local.sin6_addr.s6_addr[12], &node, 4);
    bind(fd, (struct sockaddr *)&local, sizeof(local));
  }
}

int connect(int fd, const struct sockaddr *remote, socklen_t len) {
  static connect_fn real_connect;
  if (!real_connect) real_connect = (connect_fn)dlsym(RTLD_NEXT, "connect");
  int saved = errno;
  bind_to_node(fd, remote);
  errno = saved;
  return real_connect(fd, remote, len);
}
