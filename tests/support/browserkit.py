"""Headless Chromium (Debian's chromium + chromedriver, driven by selenium) with the network cut.

Every request the browser makes is recorded (Chrome's performance log); host-resolver rules
resolve no host but localhost, and a dead proxy catches requests to literal IP addresses, so
a page that needs the web fails visibly instead of quietly fetching it."""
from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from urllib.parse import urlsplit

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver")
LOCAL_HOSTS = {"127.0.0.1", "localhost", "[::1]", "::1"}
LOCAL_SCHEMES = {"data", "blob", "about", "chrome-extension", "devtools", "file"}


def chromium_available() -> bool:
    return Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists() and shutil.which(CHROMEDRIVER) is not None


def start_chromium(width: int = 1280, height: int = 1000):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in [
        "--headless=new",
        "--no-sandbox",  # the suite may run as root
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        "--lang=en-US",
        # The network is cut: only localhost resolves, anything else goes to a dead proxy.
        "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE localhost , EXCLUDE 127.0.0.1",
        "--proxy-server=http://127.0.0.1:9",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--no-default-browser-check",
    ]:
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.set_script_timeout(60)
    return driver


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return True
    return parts.scheme in ("http", "https", "ws", "wss") and (parts.hostname or "") in {h.strip("[]") for h in LOCAL_HOSTS}


class Recorder:
    """Drains the driver's logs: every request URL and every console error since the last drain."""

    def __init__(self, driver):
        self.driver = driver

    def drain(self) -> tuple[list[str], list[str], list[str]]:
        requests, failed = [], []
        for entry in self.driver.get_log("performance"):
            message = json.loads(entry["message"])["message"]
            params = message.get("params", {})
            if message["method"] == "Network.requestWillBeSent":
                requests.append(params["request"]["url"])
            elif message["method"] == "Network.webSocketCreated":
                requests.append(params["url"])
            elif message["method"] == "Network.loadingFailed" and not params.get("canceled"):
                failed.append(f"{params.get('errorText')} ({params.get('type')})")
        console = [e["message"] for e in self.driver.get_log("browser") if e["level"] == "SEVERE"]
        return requests, console, failed


# A wait's deadline only guards against a hang: never shorter than this, so a busy machine makes
# a browser test slower, never red (every wait returns as soon as its expression is truthy).
HANG_GUARD = 180.0


def wait_for(driver, script: str, timeout: float = 30, interval: float = 0.2):
    """Poll a JavaScript expression until it is truthy; returns its value (or the last falsy one,
    after ``timeout`` seconds or HANG_GUARD, whichever is longer)."""
    deadline = time.monotonic() + max(timeout, HANG_GUARD)
    value = None
    while time.monotonic() < deadline:
        value = driver.execute_script(f"return ({script});")
        if value:
            return value
        time.sleep(interval)
    return value


def page_settled(driver, timeout: float = 30) -> None:
    """The page is loaded, its fonts are in and MathJax (when the page has it) has typeset."""
    wait_for(driver, "document.readyState === 'complete'", timeout)
    driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        const mj = window.MathJax && MathJax.startup && MathJax.startup.promise;
        Promise.all([mj || Promise.resolve(), document.fonts ? document.fonts.ready : Promise.resolve()])
          .then(() => setTimeout(() => done(true), 150), () => done(false));
        """
    )


def full_page_screenshot(driver, path: Path, max_height: int = 16000) -> None:
    """A PNG of the whole page: the window is made as tall as the page (so scrollable code
    blocks and figures below the fold are painted), then restored."""
    width, height = driver.get_window_size()["width"], driver.get_window_size()["height"]
    page = driver.execute_script("return document.documentElement.scrollHeight;")
    try:
        driver.set_window_size(width, min(max(page + 200, height), max_height))
        time.sleep(0.3)
        path.parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(path))
    finally:
        driver.set_window_size(width, height)


# WCAG 2 contrast of visible text against its effective background (AA: 4.5, large text 3).
CONTRAST_JS = r"""
const root = document.querySelector(arguments[0]) || document.body;
function rgba(s) {
  const m = s.match(/rgba?\(([^)]+)\)/); if (!m) return null;
  const p = m[1].split(/[ ,\/]+/).filter(Boolean).map(Number);
  return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
}
function lum(c) {
  const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
  return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
}
function blend(top, bottom) {
  const a = top[3];
  return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
}
function background(el) {
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const cs = getComputedStyle(e);
    if (cs.backgroundImage && cs.backgroundImage !== "none") return null;  // over an image: skip
    const c = rgba(cs.backgroundColor);
    if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
  }
  let bg = [255, 255, 255, 1];
  if (!layers.length || layers[layers.length - 1][3] < 1) {
    const html = rgba(getComputedStyle(document.documentElement).backgroundColor);
    if (html && html[3] > 0) bg = html;
  }
  for (let i = layers.length - 1; i >= 0; i--) bg = blend(layers[i], bg);
  return bg;
}
const bad = [];
let checked = 0;
const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
const seen = new Set();
while (walker.nextNode()) {
  const node = walker.currentNode;
  if (!node.textContent.trim()) continue;
  const el = node.parentElement;
  if (!el || seen.has(el)) continue;
  seen.add(el);
  if (el.closest("mjx-container, .sr-only, .visually-hidden, [aria-hidden=true], script, style, noscript")) continue;
  const rect = el.getBoundingClientRect();
  const cs = getComputedStyle(el);
  if (!rect.width || !rect.height || cs.visibility !== "visible" || cs.display === "none") continue;
  let hidden = false;
  for (let e = el; e; e = e.parentElement) { if (parseFloat(getComputedStyle(e).opacity) < 0.99) { hidden = true; break; } }
  if (hidden) continue;
  const bg = background(el);
  const fg = rgba(cs.color);
  if (!bg || !fg) continue;
  const color = blend(fg, bg);
  const l1 = lum(color), l2 = lum(bg);
  const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
  const size = parseFloat(cs.fontSize), bold = parseInt(cs.fontWeight) >= 700;
  const need = (size >= 24 || (bold && size >= 18.66)) ? 3 : 4.5;
  checked += 1;
  if (ratio < need - 0.01) {
    bad.push({text: node.textContent.trim().slice(0, 40), tag: el.tagName.toLowerCase(),
              cls: (el.className && el.className.baseVal === undefined ? el.className : "").slice(0, 60),
              ratio: Math.round(ratio * 100) / 100, need: need});
  }
}
return {checked: checked, bad: bad};
"""


def platform_fonts(driver, selector: str) -> list[dict]:
    """The fonts Chromium really drew an element's text with (DevTools' CSS.getPlatformFontsForNode):
    each ``{"familyName", "isCustomFont", "glyphCount"}``; a web font has ``isCustomFont`` true."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    node = driver.execute_cdp_cmd("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    if not node:
        return []
    return driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]

