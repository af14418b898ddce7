"""``YarnApplicationTrigger``: waits on the triggerer for a YARN application to end, polling the RM REST API
asynchronously (no worker slot held while the job runs).

It keeps waiting through a ResourceManager restart (docs/reliability.md): no answer, a 5xx, or an unknown
application from an RM that is not ACTIVE yet (still recovering its applications) is polled again, for up
to ``outage_s`` in a row; then the event is an error saying for how long the RM could not answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import httpx
from airflow.triggers.base import BaseTrigger, TriggerEvent

from corral_yarn.cluster.rm import API, FINAL_STATES, OUTAGE_S

log = logging.getLogger(__name__)


class YarnApplicationTrigger(BaseTrigger):
    """Fires once the application is FINISHED, FAILED or KILLED, with a small record of its end."""

    def __init__(self, rm_url: str, app_id: str, poll_interval_s: float = 10.0, timeout_s: float = 30.0,
                 outage_s: float = OUTAGE_S) -> None:
        super().__init__()
        self.rm_url, self.app_id, self.poll_interval_s, self.timeout_s = rm_url.rstrip("/"), app_id, poll_interval_s, timeout_s
        self.outage_s = outage_s

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (f"{type(self).__module__}.{type(self).__qualname__}",
                {"rm_url": self.rm_url, "app_id": self.app_id, "poll_interval_s": self.poll_interval_s, "timeout_s": self.timeout_s,
                 "outage_s": self.outage_s})

    async def run(self) -> AsyncIterator[TriggerEvent]:
        url = f"{self.rm_url}{API}/apps/{self.app_id}"
        down_since: float | None = None  # loop time of the first poll the RM could not answer, in a row
        async with httpx.AsyncClient(timeout=self.timeout_s, headers={"Accept": "application/json"}) as client:
            while True:
                app = await self._poll(client, url)
                now = asyncio.get_running_loop().time()
                down_since = (down_since if down_since is not None else now) if app is None else None
                if down_since is not None and now - down_since >= self.outage_s:
                    app = f"the ResourceManager at {self.rm_url} could not report {self.app_id} for {now - down_since:.0f} s"
                if isinstance(app, str):
                    yield TriggerEvent({"status": "error", "app_id": self.app_id, "message": app})
                    return
                if app is not None and app.get("state") in FINAL_STATES:
                    yield TriggerEvent({"status": "ended", "app_id": self.app_id, "state": app["state"],
                                        "final_status": app.get("finalStatus"), "diagnostics": (app.get("diagnostics") or "")[:2000]})
                    return
                await asyncio.sleep(self.poll_interval_s)

    async def _poll(self, client: httpx.AsyncClient, url: str) -> dict[str, Any] | str | None:
        """The application's report; None when the RM could not answer this time; an error message if it never will."""
        try:
            response = await client.get(url)
        except httpx.TransportError as exc:  # RM restarting or briefly unreachable: poll again
            log.warning("ResourceManager at %s did not answer (%s); polling again", self.rm_url, exc)
            return None
        if response.status_code == 404:
            if not await self._active(client):  # restarted, not done recovering its applications
                log.warning("ResourceManager at %s is not ACTIVE yet; polling %s again", self.rm_url, self.app_id)
                return None
            return f"the ResourceManager at {self.rm_url} knows no application {self.app_id}"
        if response.status_code >= 500:
            log.warning("ResourceManager answered %d for %s; polling again", response.status_code, self.app_id)
            return None
        if response.status_code != 200:
            return f"the ResourceManager answered {response.status_code} for {self.app_id}: {response.text[:300]}"
        try:
            return response.json()["app"]
        except (ValueError, KeyError, TypeError):
            return f"the ResourceManager's answer for {self.app_id} has no 'app' report: {response.text[:300]}"

    async def _active(self, client: httpx.AsyncClient) -> bool:
        """False only when the RM says it is not ACTIVE (or cannot say at all right now)."""
        try:
            response = await client.get(f"{self.rm_url}{API}/info")
        except httpx.TransportError:
            return False
        try:
            return response.status_code != 200 or response.json()["clusterInfo"].get("haState", "ACTIVE") == "ACTIVE"
        except (ValueError, KeyError, TypeError, AttributeError):
            return True
