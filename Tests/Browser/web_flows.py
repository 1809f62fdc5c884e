#!/usr/bin/env python3
"""coffer web in a real browser: headless Chromium through Selenium and chromium-driver.

Drives the seeds' everyday jobs on a demo vault (connect with the printed address, unlock in the
page, add an account, update its value, spend in a category by prefix, undo, add a client,
create an invoice and mark it paid, make a backup and verify it, lock). After each
flow the vault's `coffer export json` must equal that of a twin vault that got the same change
from the CLI. Then axe-core checks every page at 320 px and 1280 px, light and dark, and a
screenshot of each is kept (COFFER_SCREENSHOTS, else .build/screenshots).

Usage: web_flows.py COFFER_BINARY
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from axe_selenium_python import Axe
from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.expected_conditions import staleness_of
from selenium.webdriver.support.ui import WebDriverWait

BINARY = os.path.abspath(sys.argv[1])
SHOTS = os.path.abspath(os.environ.get("COFFER_SCREENSHOTS", ".build/screenshots"))
PASSPHRASE = "demo"
TODAY = "2026-12-06"
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print(f"FAIL: {what}", flush=True)


def sandbox(root, name):
    home = os.path.join(root, name)
    for sub in ("data", "run", "state", "tmp"):
        os.makedirs(os.path.join(home, sub), mode=0o700, exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "COFFER_TODAY": TODAY,
        "XDG_DATA_HOME": os.path.join(home, "data"), "XDG_RUNTIME_DIR": os.path.join(home, "run"),
        "XDG_STATE_HOME": os.path.join(home, "state"), "TMPDIR": os.path.join(home, "tmp"),
    }


def coffer(env, vault, *arguments):
    result = subprocess.run(
        [BINARY, *arguments, "--vault", vault], env={**env, "COFFER_PASSPHRASE": PASSPHRASE},
        capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"coffer {' '.join(arguments)}: {result.stderr}")
    return result.stdout


def exported(env, vault):
    """The export with every record id replaced by its position of first appearance: the
    same change made twice gets new random ids, and nothing else may differ."""
    out = os.path.join(env["TMPDIR"], "export.json")
    coffer(env, vault, "export", "json", "--out", out)
    text = open(out).read()
    os.remove(out)
    names = {}
    text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                  lambda m: names.setdefault(m.group(0), f"id{len(names)}"), text)
    return json.loads(text)


def same_as_cli(web, twin, what):
    check(exported(*web) == exported(*twin), f"{what}: the web page's change equals the CLI's")


def start_server(env, vault):
    process = subprocess.Popen(
        [BINARY, "web", "--no-open", "--vault", vault], env=env, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)
    line = process.stdout.readline()
    match = re.match(r"Open (http://127\.0\.0\.1:(\d+)/#token=[0-9a-f]{64})", line)
    if not match:
        process.kill()
        raise RuntimeError(f"coffer web printed {line!r}: {process.stderr.read()}")
    return process, match.group(1), int(match.group(2))


def browser():
    options = Options()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,900", "--force-device-scale-factor=1"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def submit(driver, form_selector, fields, radio=None):
    form = driver.find_element(By.CSS_SELECTOR, form_selector)
    if radio:
        form.find_element(By.CSS_SELECTOR, f"input[type=radio][value={radio}]").click()
    for name, value in fields.items():
        element = form.find_element(By.NAME, name)
        element.clear()
        element.send_keys(value)
    press(driver, form.find_element(By.CSS_SELECTOR, "button[type=submit]"))


def press(driver, button, key=None):
    """Clicks (or sends `key` to) a button and waits for the next page."""
    page = driver.find_element(By.TAG_NAME, "html")
    button.send_keys(key) if key else button.click()

    def replaced(_):
        # Chromium reports a node of a page already gone either way.
        try:
            return staleness_of(page)(driver)
        except WebDriverException as error:
            return "does not belong to the document" in str(error)
    WebDriverWait(driver, 20).until(replaced)


def banner(driver):
    found = driver.find_elements(By.CSS_SELECTOR, ".banner")
    return found[0].text if found else ""


def flows(driver, address, port, web, twin):
    base = f"http://127.0.0.1:{port}"
    # Connect: the fragment's token is exchanged for the cookie and cleared from the address.
    driver.get(address)
    WebDriverWait(driver, 20).until(lambda d: "/unlock" in d.page_source)
    check("#token" not in driver.current_url, "the token is cleared from the address bar")
    check("Unlock the vault" in driver.page_source, "the page asks for the passphrase")
    submit(driver, "form[action='/unlock']", {"passphrase": PASSPHRASE})
    check("Net worth" in driver.page_source, "unlocked: the overview shows net worth")
    same_as_cli(web, twin, "unlocking")

    driver.get(base + "/assets")
    submit(driver, "form[action='/accounts']", {"name": "Premium Bonds", "category": "Savings", "value": "1000"})
    check("Added Premium Bonds" in banner(driver), "add an account: the notice says so")
    coffer(*twin[:1], twin[1], "account", "add", "Premium Bonds", "--category", "Savings", "--value", "1000")
    same_as_cli(web, twin, "add an account")

    press(driver, driver.find_element(By.LINK_TEXT, "Premium Bonds"))
    submit(driver, "form[action$='/value']", {"amount": "1100"})
    check("£1,100.00" in banner(driver), "update a value: the notice shows it")
    coffer(*twin[:1], twin[1], "update", "Premium Bonds", "1100")
    same_as_cli(web, twin, "update a value")

    driver.get(base + "/budget")
    submit(driver, "form[action='/budget/entries']", {"amount": "12.50", "what": "gro", "note": "Tesco"}, radio="spend")
    check("Groceries" in banner(driver), "spend by prefix: 'gro' is Groceries")
    coffer(*twin[:1], twin[1], "spend", "12.50", "gro", "--note", "Tesco")
    same_as_cli(web, twin, "spend by prefix")

    press(driver, driver.find_element(By.CSS_SELECTOR, ".banner form[action='/undo'] button"))
    check("Undone" in banner(driver), "undo: the notice says what was undone")
    coffer(*twin[:1], twin[1], "undo")
    same_as_cli(web, twin, "undo")

    # Invoices: add a client, create an invoice marked sent, mark it paid.
    driver.get(base + "/invoices")
    press(driver, driver.find_element(By.LINK_TEXT, "New invoice"))
    submit(driver, "form[action='/clients']", {"name": "Acme Ltd", "email": "ap@acme.example", "terms": "14"})
    check("Added client Acme Ltd" in banner(driver), "add a client: the notice says so")
    coffer(*twin[:1], twin[1], "client", "add", "Acme Ltd", "--email", "ap@acme.example", "--terms", "14")
    same_as_cli(web, twin, "add a client")

    form = driver.find_element(By.CSS_SELECTOR, "form[action='/invoices']")
    form.find_element(By.ID, "f-send").click()
    submit(driver, "form[action='/invoices']", {"d1": "Design work", "q1": "2", "p1": "150"})
    check("Created INV-" in banner(driver), "new invoice: the notice names it")
    check("Due in 14 days" in driver.page_source, "the invoice page says when it is due, in words")
    reference = re.search(r"INV-[0-9-]+", banner(driver)).group(0)
    coffer(*twin[:1], twin[1], "invoice", "new", "Acme", "--item", "Design work", "2", "150", "--send")
    same_as_cli(web, twin, "create an invoice")

    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Mark paid']"))
    check("paid in full" in banner(driver), f"mark paid: the notice says paid in full: {banner(driver)}")
    check("✓ paid" in driver.page_source, "the invoice shows its new status in words")
    coffer(*twin[:1], twin[1], "invoice", "pay", reference)
    same_as_cli(web, twin, "pay an invoice")

    # A backup: add a folder, make one, verify it in the page and with the CLI.
    folder = os.path.join(web[0]["HOME"], "backups")
    os.makedirs(folder)
    driver.get(base + "/backups")
    check("No backups yet" in driver.page_source, "Backups with none says what to do")
    submit(driver, "form[action='/backups/targets']", {"path": folder})
    check("Backups will go to" in banner(driver), "add a backup folder: the notice says so")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Make a backup now']"))
    check("Backup OK" in banner(driver), f"make a backup: {banner(driver)}")
    check("✓ signed" in driver.page_source, "the archive lists as signed")
    press(driver, driver.find_element(By.XPATH, "//button[normalize-space()='Verify']"))
    check("Archive OK" in banner(driver), f"verify in the page: {banner(driver)}")
    archives = [name for name in os.listdir(folder) if name.endswith(".cbak")]
    check(len(archives) == 1, f"one archive in the folder: {archives}")
    coffer(*web[:1], web[1], "backup", "verify", "--full", os.path.join(folder, archives[0]))
    twin_folder = os.path.join(twin[0]["HOME"], "backups")
    os.makedirs(twin_folder)
    coffer(*twin[:1], twin[1], "backup", "target", "add", twin_folder)
    coffer(*twin[:1], twin[1], "backup", "create")
    same_as_cli(web, twin, "make a backup")

    # An import rule from Settings, the place by its first letters, as `import rules add`.
    driver.get(base + "/settings")
    submit(driver, "form[action='/settings/rules']", {"set": "Bank", "pattern": "TESCO", "place": "gro"})
    check("Rule 1 of Bank" in banner(driver), f"add an import rule: {banner(driver)}")
    coffer(*twin[:1], twin[1], "import", "rules", "add", "Bank", "TESCO", "--category", "gro")
    same_as_cli(web, twin, "add an import rule")

    # Search finds the account by a word of its name, ignoring case, and links to it.
    driver.get(base + "/search")
    submit(driver, "form[action='/search']", {"q": "premium"})
    check("Premium Bonds" in driver.page_source, "search finds the account by its name")
    press(driver, driver.find_element(By.LINK_TEXT, "Premium Bonds"))
    check("Update value" in driver.page_source, "a search result leads to its page")

    # Keyboard alone: Tab reaches the Lock button with a visible focus ring, Enter presses it.
    driver.get(base + "/")
    body = driver.find_element(By.TAG_NAME, "body")
    lock = driver.find_element(By.CSS_SELECTOR, "form.lock button")
    for _ in range(12):
        body.send_keys(Keys.TAB) if driver.switch_to.active_element == body else \
            driver.switch_to.active_element.send_keys(Keys.TAB)
        if driver.switch_to.active_element == lock:
            break
    check(driver.switch_to.active_element == lock, "Tab reaches the Lock button")
    outline = lock.value_of_css_property("outline-style")
    check(outline not in ("none", ""), f"the focused button shows a focus ring ({outline})")
    press(driver, driver.switch_to.active_element, Keys.ENTER)
    check("Unlock the vault" in driver.page_source, "Lock: the page asks for the passphrase again")
    check("Premium Bonds" not in driver.page_source, "Lock: no data on the locked page")
    submit(driver, "form[action='/unlock']", {"passphrase": PASSPHRASE})


def axe_violations(driver):
    """axe-core (as axe-selenium-python ships it) on the page: every WCAG 2 A and AA rule it
    has, and its best practices. A rejected run is a failure too, never a pass."""
    Axe(driver).inject()
    result = driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'best-practice']}})"
        ".then(r => done(r.violations.map(v => v.id + ': ' + v.help + ' at ' + v.nodes.map(n => n.target).join(' | '))))"
        ".catch(e => done(['axe failed: ' + e]))")
    return result


def screenshot(driver, path):
    """The whole page, top to bottom, in one picture."""
    width = driver.execute_script("return document.documentElement.clientWidth")
    height = min(driver.execute_script("return document.documentElement.scrollHeight"), 8000)
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    with open(path, "wb") as file:
        file.write(base64.b64decode(shot["data"]))


def accessibility(driver, port, web):
    base = f"http://127.0.0.1:{port}"
    account = re.search(r"/accounts/[0-9A-F-]{36}", driver.page_source if "/accounts/" in driver.page_source
                        else (driver.get(base + "/assets") or driver.page_source)).group(0)
    driver.get(base + "/invoices/list")
    invoice = re.search(r"/invoices/[0-9A-F-]{36}", driver.page_source).group(0)
    pages = {"overview": "/", "assets": "/assets", "account": account, "budget": "/budget",
             "budget-wants": "/budget?tab=wants", "last-month": "/budget?month=2026-11",
             "invoices": "/invoices", "invoice-list": "/invoices/list", "invoice": invoice,
             "new-invoice": "/invoices/new", "reports": "/reports", "report-year": "/reports?year=2025",
             "backups": "/backups", "search": "/search?q=bonds", "settings": "/settings"}
    os.makedirs(SHOTS, exist_ok=True)
    for scheme in ("light", "dark"):
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-color-scheme", "value": scheme}]})
        for width in (320, 1280):
            driver.set_window_size(width, 900)
            for name, path in pages.items():
                driver.get(base + path)
                violations = axe_violations(driver)
                check(not violations, f"axe {name} {width}px {scheme}: {violations}")
                overflow = driver.execute_script(
                    "return document.documentElement.scrollWidth > document.documentElement.clientWidth")
                check(not overflow, f"{name} at {width}px {scheme} fits the width (no sideways scroll)")
                screenshot(driver, os.path.join(SHOTS, f"web-{name}-{width}-{scheme}.png"))
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})
    # 200 % text size: the page still fits a desktop window without sideways scrolling.
    driver.set_window_size(1280, 900)
    driver.get(base + "/")
    driver.execute_script("document.documentElement.style.fontSize = '200%'")
    check(not driver.execute_script(
        "return document.documentElement.scrollWidth > document.documentElement.clientWidth"),
        "readable at 200 % text size")


def main():
    root = tempfile.mkdtemp(prefix="coffer-browser-")
    server = None
    driver = None
    try:
        web_env, twin_env = sandbox(root, "web"), sandbox(root, "twin")
        web_vault = os.path.join(web_env["HOME"], "vault.coffer")
        twin_vault = os.path.join(twin_env["HOME"], "vault.coffer")
        coffer(web_env, web_vault, "demo")
        shutil.copy(web_vault, twin_vault)
        server, address, port = start_server(web_env, web_vault)
        driver = browser()
        flows(driver, address, port, (web_env, web_vault), (twin_env, twin_vault))
        accessibility(driver, port, (web_env, web_vault))
    finally:
        if driver:
            driver.quit()
        if server:
            server.terminate()
            server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)
    if failures:
        print(f"{len(failures)} failure(s)", flush=True)
        sys.exit(1)
    print("browser flows and accessibility: all passed", flush=True)


if __name__ == "__main__":
    main()
