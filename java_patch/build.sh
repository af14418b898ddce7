#!/usr/bin/env bash
# Builds java_patch with Maven (which fetches Hadoop 3.5.0 and everything else from Maven Central).
#   java_patch/build.sh           jars + embedded-cluster classpath, no tests (what the minicluster needs)
#   java_patch/build.sh verify    the same plus all JUnit tests (mvn verify)
set -euo pipefail
cd "$(dirname "$0")"
case "${1:-package}" in
  package) exec mvn -q -B -f pom.xml -DskipTests package ;;
  verify) exec mvn -q -B -f pom.xml verify ;;
  *) echo "usage: $0 [package|verify]" >&2; exit 2 ;;
esac
