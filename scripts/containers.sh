#!/usr/bin/env bash
# The container deployment (docs/deploy.md "In containers"): image, multi-node cluster, end-to-end check.
#   scripts/containers.sh image    build corral-hadoop:3.5.0 (docker if an engine runs, else podman;
#                                   with podman and no BASE given, the base is made from Debian packages)
#   scripts/containers.sh up       start master + 3 racks x 2 workers, wait for them, write the description
#   scripts/containers.sh check    run the whole pipeline (corral demo) from the host against it; fail
#                                   unless every job succeeded with 100 % of containers and blocks in R_j
#   scripts/containers.sh down     remove the containers and the network; nothing is left
#   scripts/containers.sh dev-image   build corral-yarn-dev (docker/dev.Dockerfile: the README's two commands)
# Variables: BASE (base image), CA_BUNDLE (PEM file of extra CAs trusted by the build),
# CORRAL_CONTAINERS_HOME (default .corral/containers).
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE=localhost/corral-hadoop:3.5.0
PROJECT=corral
COMPOSE_FILE=docker/compose.yaml
HOME_DIR=${CORRAL_CONTAINERS_HOME:-.corral/containers}
WORKERS=$(grep -c . docker/conf/workers)

if command -v docker >/dev/null && docker info >/dev/null 2>&1; then
  ENGINE=(docker); COMPOSE=(docker compose -p "$PROJECT" -f "$COMPOSE_FILE")
elif command -v podman >/dev/null; then
  # crun refuses this machine kind's hybrid cgroups and ulimits cannot be raised: docker/containers.conf
  export CONTAINERS_CONF=$PWD/docker/containers.conf
  ENGINE=(podman); COMPOSE=(podman-compose -p "$PROJECT" -f "$COMPOSE_FILE")
else
  echo "containers.sh: error: neither a running docker engine nor podman found (make setup-containers installs podman)" >&2; exit 2
fi

base_from_debian() {  # a bookworm base image made with debootstrap: no registry needed
  local base=localhost/corral-base:bookworm root
  if ! "${ENGINE[@]}" image exists "$base" 2>/dev/null; then
    root=$(mktemp -d)
    echo "making $base from Debian packages (debootstrap, about 30 s)" >&2
    debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >"$root.log" 2>&1 \
      || { echo "containers.sh: error: debootstrap failed, see $root.log" >&2; exit 2; }
    tar -C "$root" -c . | "${ENGINE[@]}" import - "$base" >/dev/null
    rm -rf "$root" "$root.log"
  fi
  echo "$base"
}

image() {  # image [DOCKERFILE TAG]
  local started=$SECONDS dockerfile=${1:-docker/Dockerfile} tag=${2:-$IMAGE}
  local args=(build -f "$dockerfile" -t "$tag")
  rm -f docker/ca/*.crt
  if [ -n "${CA_BUNDLE:-}" ]; then
    # one certificate per file, as update-ca-certificates expects
    awk -v dir=docker/ca 'BEGIN{n=0} /BEGIN CERTIFICATE/{n++; f=sprintf("%s/extra-%03d.crt", dir, n)} f{print > f} /END CERTIFICATE/{close(f); f=""}' "$CA_BUNDLE"
  fi
  if [ "${ENGINE[0]}" = podman ]; then
    args+=(--network=host --build-arg "BASE=${BASE:-$(base_from_debian)}")
    [ -d "$HOME/.m2/repository" ] && args+=(-v "$HOME/.m2:/root/.m2")  # Maven's cache, not copied into the image
  elif [ -n "${BASE:-}" ]; then
    args+=(--build-arg "BASE=$BASE")
  fi
  "${ENGINE[@]}" "${args[@]}" .
  rm -f docker/ca/*.crt
  echo "built $tag in $((SECONDS - started)) s: $("${ENGINE[@]}" image inspect -f '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}')"
}

master_address() {
  "${ENGINE[@]}" inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' master
}

wait_ready() {  # until the NameNode has every DataNode and the RM every NodeManager, each on its rack
  local m=$1 deadline=$((SECONDS + 300))
  while (( SECONDS < deadline )); do
    if python3 - "$m" "$WORKERS" <<'PY' 2>/dev/null; then return 0; fi
import json, sys, urllib.request
m, want = sys.argv[1], int(sys.argv[2])
get = lambda url: json.load(urllib.request.urlopen(url, timeout=5))
nn = json.loads(get(f"http://{m}:9870/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo")["beans"][0]["LiveNodes"])
rm = get(f"http://{m}:8088/ws/v1/cluster/nodes")["nodes"] or {"node": []}
nms = [n for n in rm["node"] if n["state"] == "RUNNING" and n["rack"] != "/default-rack"]
get(f"http://{m}:19888/ws/v1/history/info")
sys.exit(0 if len(nn) == want and len(nms) == want else 1)
PY
    sleep 2
  done
  echo "containers.sh: error: the cluster was not ready after 300 s; logs: ${ENGINE[*]} exec master tail /var/log/hadoop/*.log" >&2
  return 2
}

up() {
  local started=$SECONDS m
  "${ENGINE[@]}" image inspect "$IMAGE" >/dev/null 2>&1 || { echo "containers.sh: error: no image $IMAGE; run make image first" >&2; exit 2; }
  "${COMPOSE[@]}" up -d >"${TMPDIR:-/tmp}/corral-compose-up.log" 2>&1 \
    || { echo "containers.sh: error: compose up failed, see ${TMPDIR:-/tmp}/corral-compose-up.log" >&2; exit 2; }
  m=$(master_address)
  wait_ready "$m"
  mkdir -p "$HOME_DIR"
  "${ENGINE[@]}" cp master:/opt/hadoop/examples/hadoop-mapreduce-examples.jar "$HOME_DIR/"
  python3 - "$m" "$HOME_DIR" >"$HOME_DIR/cluster.json" <<'PY'
import json, sys
m, home = sys.argv[1], sys.argv[2]
print(json.dumps({"schema_version": "corral-yarn/minicluster/v1", "namenode_rpc": f"hdfs://{m}:8020",
                  "webhdfs": f"http://{m}:9870", "resourcemanager": f"http://{m}:8088", "jobhistory": f"http://{m}:19888",
                  "examples_jar": f"{home}/hadoop-mapreduce-examples.jar", "containers": True}, indent=1))
PY
  echo "cluster up in $((SECONDS - started)) s: $(( WORKERS + 1 )) containers; NameNode http://$m:9870, ResourceManager http://$m:8088; description $HOME_DIR/cluster.json"
}

check() {
  local started=$SECONDS out
  [ -f "$HOME_DIR/cluster.json" ] || { echo "containers.sh: error: no $HOME_DIR/cluster.json; run make cluster-up first" >&2; exit 2; }
  out=$(mktemp)
  .venv/bin/corral demo --cluster-json "$HOME_DIR/cluster.json" --home "$HOME_DIR/demo" | tee "$out"
  python3 - "$out" <<'PY'
import json, sys
summary = json.loads(next(l for l in open(sys.argv[1]) if l.startswith("Summary: "))[len("Summary: "):])
ok = summary["planned"] == summary["succeeded"] > 0 and summary["container_share"] == 1.0 and summary["block_share"] == 1.0
print("deploy-check: " + ("passed" if ok else "FAILED") + ": " + json.dumps(summary))
sys.exit(0 if ok else 1)
PY
  echo "deploy-check took $((SECONDS - started)) s"
}

down() {
  # the cluster's data is throwaway: no graceful stop (compose down would wait 10 s per container)
  "${ENGINE[@]}" rm -f master $(cat docker/conf/workers) >/dev/null 2>&1 || true
  "${COMPOSE[@]}" down >/dev/null 2>&1 || true
  "${ENGINE[@]}" network rm corral-hadoop >/dev/null 2>&1 || true
  local left
  left=$("${ENGINE[@]}" ps -a --filter label=io.podman.compose.project="$PROJECT" -q 2>/dev/null; "${ENGINE[@]}" network ls -q --filter name=corral-hadoop 2>/dev/null)
  [ -z "$left" ] || { echo "containers.sh: error: left behind: $left" >&2; exit 1; }
  rm -f "$HOME_DIR/cluster.json"
  echo "cluster down: no container, network or volume left"
}

case "${1:-}" in
  image|up|check|down) "$1" ;;
  dev-image) image docker/dev.Dockerfile localhost/corral-yarn-dev ;;
  *) echo "usage: $0 image|up|check|down|dev-image" >&2; exit 2 ;;
esac
