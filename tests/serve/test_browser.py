"""explain serve in a real browser: Debian's chromium, driven by Selenium through chromium-driver (installed by
.ci/run; without them these tests fail, never skip). Outside hosts are unresolvable to the browser. The screen is
xterm.js on a canvas: what the app shows is read from xterm's buffer (the page's ``window.explainTerminals``,
which explain serve's copy of textual.js keeps). Screenshots go to tests/serve/screenshots/ (not committed)."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from serving import start_server, stop_server

from explain.tutorial import load_tutorial

SHOTS = Path(__file__).parent / "screenshots"
SCREEN_JS = """
const ts = window.explainTerminals || [];
if (!ts.length) return null;
const t = ts[ts.length - 1], b = t.buffer.active, out = [];
for (let i = 0; i < t.rows; i++) { const l = b.getLine(i); out.push(l ? l.translateToString(true) : ''); }
return out.join('\\n');
"""
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server whose visitors stay while a test looks (the idle timeout is the server tests')."""
    s = start_server(tmp_path_factory.mktemp("serve"), "--max-sessions", "3", "--idle-timeout", "600")
    yield s
    stop_server(s)


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert chromium and driver, "these tests need Debian's chromium and chromium-driver: apt-get install -y chromium " \
                                "chromium-driver (as .ci/run does)"
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS + [f"--user-data-dir={tmp_path_factory.mktemp('chromium')}", "--window-size=1280,800"]:
        options.add_argument(flag)
    b = webdriver.Chrome(options=options, service=Service(driver))
    yield b
    b.quit()


def screen(browser, has: str, seconds: float = 60.0) -> str:
    """What the app shows, once it holds ``has``."""
    deadline, text = time.monotonic() + seconds, ""
    while time.monotonic() < deadline:
        text = browser.execute_script(SCREEN_JS) or ""
        if has in text:
            return text
        time.sleep(0.3)
    page = browser.find_element(By.TAG_NAME, "body").text
    raise AssertionError(f"the screen never showed {has!r}:\n{text}\npage: {page[:500]}")


def shot(browser, name: str) -> None:
    SHOTS.mkdir(exist_ok=True)
    browser.save_screenshot(str(SHOTS / f"{name}.png"))


def press(browser, keys: str) -> None:
    ActionChains(browser).send_keys(keys).perform()


def test_start_tutorial_one_and_step(served, browser):
    """The teacher's path: the address serve printed, Start, tutorial 1 on screen, n to the next stop."""
    stops = [s.title for s in load_tutorial("1").stops]
    browser.set_window_size(1280, 800)
    browser.get(served.url + "&delay=1")
    browser.find_element(By.ID, "start").click()
    screen(browser, stops[0][:20])
    browser.find_element(By.CSS_SELECTOR, ".xterm-screen").click()
    press(browser, "n")
    screen(browser, stops[1][:20])
    shot(browser, "tutorial-1-stop-2-1280x800")


def test_a_link_opens_a_stop(served, browser):
    stops = [s.title for s in load_tutorial("18").stops]
    browser.set_window_size(1280, 800)
    browser.get(served.url + "&tutorial=18&stop=3")
    screen(browser, stops[2][:20])
    shot(browser, "tutorial-18-stop-3-1280x800")


def test_a_phone_sized_window(served, browser):
    browser.set_window_size(390, 844)
    browser.get(served.url + "&tutorial=1&stop=2")
    try:
        # a phone's ~48 columns: the header says the stop in its short form (6a0b8f9: 'stop 2/4 · 2/4')
        text = screen(browser, "stop 2/4")
        assert "attn.scores" in text, text
    finally:
        shot(browser, "tutorial-1-stop-2-phone")


def test_without_the_token_the_browser_gets_403(served, browser):
    browser.get(served.base + "/?tutorial=1")
    assert "needs the token" in browser.find_element(By.ID, "message").text


def test_a_link_past_the_run_is_one_line_in_the_app(served, browser):
    """A step the run has not, or a cell out of range, is found only once the run is made: the visitor's app says
    it in one line (no traceback in the browser)."""
    browser.set_window_size(1280, 800)
    browser.get(served.url + "&model=gpt&text=the+cat+sat&step=blocks.0.attn.pattern&cell=0,0,4,2")
    text = screen(browser, "explain cannot open this link")
    shot(browser, "cell-out-of-range-1280x800")
    assert "is not a cell of blocks.0.attn.pattern" in text and "Traceback" not in text


def test_u_gives_a_link_another_browser_opens(served, browser, tmp_path):
    """The teacher's path: stop 3 of tutorial 18, U shows the link (with the token), and a second browser opens
    it at that stop."""
    stops = [s.title for s in load_tutorial("18").stops]
    browser.set_window_size(1280, 800)
    browser.get(served.url + "&tutorial=18&stop=3")
    screen(browser, stops[2][:20])
    browser.find_element(By.CSS_SELECTOR, ".xterm-screen").click()
    press(browser, "U")
    text = screen(browser, "link to this screen")
    shot(browser, "u-link-1280x800")
    toast = [line.split("▌", 1)[1].strip() for line in text.splitlines() if "▌" in line]
    start = next(i for i, line in enumerate(toast) if "link to this screen" in line)
    url = ""
    for line in toast[start + 1:]:
        if line.startswith("open it"):
            break
        url += line
    assert url.startswith(served.url) and url.endswith("&tutorial=18-the-logit-lens&stop=3"), toast
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in FLAGS + [f"--user-data-dir={tmp_path / 'second'}", "--window-size=390,844"]:
        options.add_argument(flag)
    second = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    try:
        second.get(url)
        screen(second, "lens.blocks.0.resid_mid.probs")
        shot(second, "u-link-opened-phone")
    finally:
        second.quit()
