#!/usr/bin/env bash
# Installs what corral-yarn needs from outside Python: a JDK 17, Maven, Python's venv module, iproute2,
# util-linux (nsenter), gcc and MIT Kerberos (libkrb5-dev, krb5-user) (Debian packages), if absent.
# Run by `make setup`; safe to run again. `bootstrap.sh containers` (make setup-containers) adds what the
# container deployment needs where no docker engine runs: podman, runc, podman-compose and debootstrap.
set -euo pipefail
missing=()
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
python3 -c 'import ensurepip, venv' >/dev/null 2>&1 || missing+=(python3-venv)  # Debian splits it out
# The shaped testbed (docs/testbed.md): network namespaces and tc, and a C compiler for its container shim.
command -v ip >/dev/null 2>&1 && command -v tc >/dev/null 2>&1 || missing+=(iproute2)
command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v nsenter >/dev/null 2>&1 || missing+=(util-linux)
# Kerberos (docs/deploy.md): MIT krb5's headers and krb5-config to build Python's gssapi, kinit/klist for ticket caches.
command -v krb5-config >/dev/null 2>&1 || missing+=(libkrb5-dev)
command -v kinit >/dev/null 2>&1 || missing+=(krb5-user)
if [[ ${1:-} == containers ]] && ! { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; }; then
  for tool in podman runc podman-compose debootstrap; do command -v $tool >/dev/null 2>&1 || missing+=($tool); done
fi
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]} with apt-get" >&2
  SUDO=""; [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q "${missing[@]}"
fi
python3 -c 'import sys; assert sys.version_info >= (3, 11), "corral-yarn needs Python >= 3.11"'
