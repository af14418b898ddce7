"""Samples the testbed's tc counters while jobs run: bytes per rack pair, and each uplink's utilisation
over time (is the core the bottleneck?)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from corral_yarn.testbed.control import run
from corral_yarn.testbed.counters import delta, rack_pair_bytes, uplink_bytes
from corral_yarn.testbed.shaping import IFB_DEVICE, LOOPBACK, Network


def read_counters(net: Network, namespace: str) -> tuple[dict[tuple[int, int], int], dict[int, int], dict[int, int]]:
    """(bytes per rack pair, uplink bytes per rack, downlink bytes per rack) so far."""
    egress = run(["tc", "-s", "class", "show", "dev", LOOPBACK], namespace).stdout
    ingress = run(["tc", "-s", "class", "show", "dev", IFB_DEVICE], namespace).stdout
    return rack_pair_bytes(net, egress), uplink_bytes(net, egress), uplink_bytes(net, ingress)


@dataclass
class UplinkMonitor:
    """Samples the counters every ``interval_s`` in a background thread between ``start`` and ``stop``."""

    net: Network
    namespace: str
    interval_s: float = 1.0
    samples: list[tuple[float, dict[int, int], dict[int, int]]] = field(default_factory=list)
    _pairs_at_start: dict[tuple[int, int], int] = field(default_factory=dict)
    _pairs_at_stop: dict[tuple[int, int], int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._pairs_at_start = read_counters(self.net, self.namespace)[0]
        self._thread = threading.Thread(target=self._sample, name="uplink-monitor", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._pairs_at_stop = read_counters(self.net, self.namespace)[0]

    def _sample(self) -> None:
        start = time.monotonic()
        while not self._stop.is_set():
            _, up, down = read_counters(self.net, self.namespace)
            self.samples.append((time.monotonic() - start, up, down))
            self._stop.wait(self.interval_s)

    def pair_bytes(self) -> dict[tuple[int, int], int]:
        """Bytes per (source rack, destination rack) between ``start`` and ``stop``."""
        return delta(self._pairs_at_stop, self._pairs_at_start)

    def utilisation(self) -> list[dict[str, float | list[float]]]:
        """Per interval: time and each rack's uplink and downlink rate as a share of the configured rate."""
        capacity = self.net.uplink_mbit_s * 1e6 / 8
        series: list[dict[str, float | list[float]]] = []
        for (t0, up0, down0), (t1, up1, down1) in zip(self.samples, self.samples[1:]):
            span = t1 - t0
            series.append({"t": round(t1, 2),
                           "uplink": [round((up1[r] - up0[r]) / span / capacity, 3) for r in sorted(up1)],
                           "downlink": [round((down1[r] - down0[r]) / span / capacity, 3) for r in sorted(down1)]})
        return series

    def peak_mbit_s(self, window_s: float = 2.0) -> float:
        """The highest rate any uplink or downlink carried over ``window_s``, in Mbit/s."""
        peak = 0.0
        for i, (t0, up0, down0) in enumerate(self.samples):
            for t1, up1, down1 in self.samples[i + 1:]:
                if t1 - t0 >= window_s:
                    for before, after in ((up0, up1), (down0, down1)):
                        peak = max(peak, *((after[r] - before[r]) * 8 / (t1 - t0) / 1e6 for r in after))
                    break
        return peak
