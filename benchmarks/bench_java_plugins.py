"""Cost per decision of Corral's Hadoop plugins against the stock classes they extend (issue 16
item 7): ``CorralCapacityScheduler.allocate`` against ``CapacityScheduler.allocate``, and
``CorralBlockPlacementPolicy.chooseTarget`` against ``BlockPlacementPolicyDefault.chooseTarget``,
on one synthetic topology (default 4,000 nodes in 100 racks, 200 applications with rack-set tags),
measured side by side in one JVM by ``io.corralyarn.bench.PluginBenchmark`` (java_patch test
sources; stock and Corral at the same time, their calls interleaved). One JSON line with ``nodes``,
``allocate_ratio_vs_stock`` and ``choose_target_ratio_vs_stock`` (median microseconds per call,
Corral / stock; the ratios of means are there too).

Builds java_patch's test classes with Maven first (a few seconds when they are up to date).
``--quick``: 400 nodes in 10 racks, 20 applications, 2,000 calls.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

JAVA_PATCH = Path(__file__).resolve().parents[1] / "java_patch"
CLASSPATH_FILE = JAVA_PATCH / "target" / "test-classpath.txt"


def build() -> str:
    """Compiles the test classes and returns the benchmark's classpath."""
    maven = ["mvn", "-q", "-B", "-Dstyle.color=never", "-f", str(JAVA_PATCH / "pom.xml")]
    subprocess.run([*maven, "test-compile"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run([*maven, "dependency:build-classpath", "-Dmdep.includeScope=test",
                    f"-Dmdep.outputFile={CLASSPATH_FILE}"], check=True, stdout=subprocess.DEVNULL)
    target = JAVA_PATCH / "target"
    return ":".join([str(target / "classes"), str(target / "test-classes"), CLASSPATH_FILE.read_text().strip()])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="400 nodes, 10 racks, 20 applications, 2,000 calls")
    parser.add_argument("--nodes", type=int, default=4000)
    parser.add_argument("--racks", type=int, default=100)
    parser.add_argument("--apps", type=int, default=200)
    parser.add_argument("--calls", type=int, default=20000)
    args = parser.parse_args()
    sizes = (400, 10, 20, 2000) if args.quick else (args.nodes, args.racks, args.apps, args.calls)
    log4j = JAVA_PATCH / "src" / "test" / "resources" / "log4j.properties"
    run = subprocess.run(["java", "-cp", build(), f"-Dlog4j.configuration=file:{log4j}", "io.corralyarn.bench.PluginBenchmark",
                          *map(str, sizes)], check=True, capture_output=True, text=True)
    lines = [line for line in run.stdout.splitlines() if line.startswith('{"benchmark"')]
    if not lines:
        sys.exit(f"PluginBenchmark printed no result; its stderr ends with:\n{run.stderr[-2000:]}")
    print(lines[-1])


if __name__ == "__main__":
    main()
