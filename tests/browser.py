"""Debian's Chromium, headless, driven by Selenium through Debian's chromedriver.

Both binaries come from the `chromium` and `chromium-driver` packages (`make deps-browser`); Selenium
is given their paths, so its driver manager never looks anything up on the network.
"""
from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Headless as root; the background-networking flags stop Chromium from calling home, which on a
# closed network only fills the logs and slows the start.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--lang=en-US")


def missing() -> str | None:
    """Why the browser cannot run on this machine, or None when it can."""
    absent = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not os.access(p, os.X_OK)]
    if absent:
        return (f"{' and '.join(absent)} not installed: run `make deps-browser` as root "
                "(Debian's chromium and chromium-driver)")
    return None


@contextmanager
def headless_chromium(width: int = 1400, height: int = 1000) -> Iterator:
    """A Selenium WebDriver on a fresh headless Chromium profile, quit when the block ends."""
    os.environ.setdefault("SE_OFFLINE", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    with tempfile.TemporaryDirectory(prefix="yarn-drf-chromium-") as profile:
        options = webdriver.ChromeOptions()
        options.binary_location = str(CHROMIUM)
        for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
            options.add_argument(flag)
        # Chromium keeps its crash reports, and GTK's dconf its cache, under the home directory
        # whatever --user-data-dir says: there they go with the profile.
        env = {**os.environ, "HOME": profile, "XDG_CONFIG_HOME": profile, "XDG_CACHE_HOME": profile}
        driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER), env=env), options=options)
        try:
            yield driver
        finally:
            driver.quit()


def page_screenshot(driver, path: Path, width: int = 1400) -> None:
    """The whole page as a PNG at `path`: the viewport is set to the page's full height first."""
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(small_png(driver.get_screenshot_as_png()))


def small_png(png: bytes, colors: int = 128) -> bytes:
    """The picture with at most `colors` colours (a page of text and flat fills loses nothing
    visible), about a third of Chromium's size: small enough to commit."""
    from PIL import Image

    out = io.BytesIO()
    Image.open(io.BytesIO(png)).convert("RGB").quantize(colors=colors).save(out, "PNG", optimize=True)
    return out.getvalue()
