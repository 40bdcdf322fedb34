"""Headless Chromium driven by Selenium (with Debian's chromium and chromium-driver), for the static site's tests
(tests/test_site.py) and benchmarks/bench_site.py; and a folder served over HTTP on 127.0.0.1 as
``python -m http.server`` serves it.

:func:`why_no_browser` says why no browser can be had here (None: one can); the tests skip with that reason.
"""
from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading
from pathlib import Path

# The flags the project runs Chromium with: no GPU, no sandbox (root in a container), and nothing that talks
# to the network by itself (no QUIC, no background networking, component updates or sync); every host name
# resolves to nothing but 127.0.0.1, so a page that tried to fetch from elsewhere would fail (and say so).
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")
BROWSERS = ("chromium", "chromium-browser")
DRIVERS = ("chromedriver", "chromium-driver")


def _which(names) -> str | None:
    return next((p for p in map(shutil.which, names) if p), None)


def why_no_browser() -> str | None:
    """Why headless Chromium cannot be driven here (None: it can)."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    if _which(BROWSERS) is None:
        return "no chromium on PATH (apt-get install -y chromium chromium-driver; .ci/run does)"
    if _which(DRIVERS) is None:
        return "no chromedriver on PATH (apt-get install -y chromium-driver; .ci/run does)"
    return None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):       # the test output stays readable
        pass


class Served:
    """``folder`` served on 127.0.0.1 (a free port) by the standard library's http.server, in a thread."""

    def __init__(self, folder: Path):
        handler = functools.partial(_Quiet, directory=str(folder))
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/"

    def __enter__(self) -> Served:
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(10)


def chrome(profile: Path, *, width: int = 1400, height: int = 1000):
    """A Selenium driver of headless Chromium with an empty new profile, recording the console and the
    network requests (performance log)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile.mkdir(parents=True, exist_ok=True)
    opts = webdriver.ChromeOptions()
    opts.binary_location = _which(BROWSERS)
    for f in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        opts.add_argument(f)
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    opts.page_load_strategy = "normal"
    return webdriver.Chrome(service=Service(executable_path=_which(DRIVERS)), options=opts)


def console(driver) -> list[dict]:
    """The console messages since the last call (level, message)."""
    return [{"level": e.get("level"), "message": e.get("message", "")} for e in driver.get_log("browser")]


def problems(entries: list[dict]) -> list[str]:
    """Console messages at warning level or above (errors, CSP violations, failed loads, uncaught exceptions)."""
    return [e["message"] for e in entries if e["level"] in ("SEVERE", "WARNING")]


def requested(driver) -> list[str]:
    """The URLs the pages (and their workers) requested since the last call, from the performance log."""
    urls = []
    for e in driver.get_log("performance"):
        msg = json.loads(e["message"])["message"]
        if msg.get("method") == "Network.requestWillBeSent":
            urls.append(msg["params"]["request"]["url"])
    return urls
