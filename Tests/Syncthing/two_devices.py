#!/usr/bin/env python3
"""Two devices' vaults carried by a real sync engine: two Syncthing instances (Debian's) on
loopback, each with its own home and its own copy of one shared folder, through a simulated week.

    python3 two_devices.py COFFER_BINARY [--days N] [--work DIR]

Each day both devices edit (a spend with a note of its own, values, the same account renamed on
both while apart); on some days one device is offline (its Syncthing connection paused) and both
go on editing and syncing. Syncthing's own conflict copies (`….sync-conflict-….cfsync`, made here
by a file written on both sides while apart) and its temporary files (`.syncthing.….tmp`) appear
in the folder and must be ignored. At the end both `coffer export json` are identical, and every
change either device acknowledged is in the vault or is a listed conflict. Prints "all passed".
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

PASSPHRASE = "syncthing week passphrase"
FOLDER_ID = "coffer-sync"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


class Engine:
    """One Syncthing instance: its home, its copy of the shared folder, its REST API."""

    def __init__(self, root, name):
        self.name = name
        self.home = os.path.join(root, f"syncthing-{name}")
        self.folder = os.path.join(root, f"{name}-Sync", "coffer")
        os.makedirs(os.path.join(self.folder, ".stfolder"))  # Syncthing's folder marker
        out = subprocess.run(["syncthing", "generate", f"--home={self.home}", "--no-default-folder"],
                             capture_output=True, text=True, check=True)
        self.id = next(line.split("Device ID:")[1].strip() for line in (out.stdout + out.stderr).splitlines()
                       if "Device ID:" in line)
        self.port, self.gui = free_port(), free_port()
        self.key = f"coffer-test-{name}-{random.randrange(1 << 60):x}"
        self.process = None

    def configure(self, peer):
        devices = "".join(
            f'<device id="{device.id}" name="{device.name}" compression="metadata" introducer="false">'
            f"<address>tcp://127.0.0.1:{device.port}</address><autoAcceptFolders>false</autoAcceptFolders></device>"
            for device in (self, peer))
        config = f"""<configuration version="36">
  <folder id="{FOLDER_ID}" label="coffer" path="{self.folder}" type="sendreceive" rescanIntervalS="1"
          fsWatcherEnabled="true" fsWatcherDelayS="1" ignorePerms="false" autoNormalize="true">
    <device id="{self.id}"></device><device id="{peer.id}"></device>
    <minDiskFree unit="%">0</minDiskFree><maxConflicts>10</maxConflicts><fsync>true</fsync>
  </folder>
  {devices}
  <gui enabled="true" tls="false"><address>127.0.0.1:{self.gui}</address><apikey>{self.key}</apikey></gui>
  <options>
    <listenAddress>tcp://127.0.0.1:{self.port}</listenAddress>
    <globalAnnounceEnabled>false</globalAnnounceEnabled><localAnnounceEnabled>false</localAnnounceEnabled>
    <relaysEnabled>false</relaysEnabled><natEnabled>false</natEnabled><startBrowser>false</startBrowser>
    <urAccepted>-1</urAccepted><crashReportingEnabled>false</crashReportingEnabled>
    <autoUpgradeIntervalH>0</autoUpgradeIntervalH><reconnectionIntervalS>1</reconnectionIntervalS>
    <minHomeDiskFree unit="%">0</minHomeDiskFree><setLowPriority>false</setLowPriority>
  </options>
</configuration>
"""
        with open(os.path.join(self.home, "config.xml"), "w") as file:
            file.write(config)

    def start(self):
        log = open(os.path.join(self.home, "log.txt"), "w")
        self.process = subprocess.Popen(
            ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart", "--no-upgrade",
             "--skip-port-probing"], stdout=log, stderr=subprocess.STDOUT,
            env=dict(os.environ, STNOUPGRADE="1", STNODEFAULTFOLDER="1"))
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                self.rest("GET", "/rest/system/ping")
                return
            except OSError:
                time.sleep(0.3)
        fail(f"syncthing {self.name} did not start: {open(log.name).read()[-2000:]}")

    def rest(self, method, path):
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", method=method,
                                         headers={"X-API-Key": self.key})
        with urllib.request.urlopen(request, timeout=30) as reply:
            body = reply.read()
            return json.loads(body) if body else None

    def connected(self, peer):
        return self.rest("GET", "/rest/system/connections")["connections"].get(peer.id, {}).get("connected")

    def pause(self, peer):
        self.rest("POST", f"/rest/system/pause?device={peer.id}")

    def resume(self, peer):
        self.rest("POST", f"/rest/system/resume?device={peer.id}")

    def rescan(self):
        self.rest("POST", f"/rest/db/scan?folder={FOLDER_ID}")

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()


def listing(folder):
    """Coffer's files in a folder copy (what both copies must agree on), by relative path."""
    found = {}
    for root, _, names in os.walk(folder):
        if "/.st" in root or os.path.basename(root).startswith("."):
            continue
        for name in names:
            if name.startswith(".") or ".sync-conflict-" in name:
                continue
            path = os.path.join(root, name)
            found[os.path.relpath(path, folder)] = os.path.getsize(path)
    return found


def settle(engines, seconds=120):
    """Until both copies of the folder hold the same files (Syncthing done carrying)."""
    for engine in engines:
        engine.rescan()
    deadline = time.time() + seconds
    while time.time() < deadline:
        if listing(engines[0].folder) == listing(engines[1].folder):
            time.sleep(1.5)  # and still the same a moment later: nothing half-delivered
            if listing(engines[0].folder) == listing(engines[1].folder):
                return
        time.sleep(0.5)
    fail(f"the two folders never agreed: {sorted(set(listing(engines[0].folder).items()) ^ set(listing(engines[1].folder).items()))[:10]}")


class Device:
    def __init__(self, root, name, engine, coffer):
        self.name, self.engine, self.coffer = name, engine, coffer
        self.env = dict(os.environ, COFFER_PASSPHRASE=PASSPHRASE, COFFER_TODAY="2026-12-31",
                        HOME=os.path.join(root, name),
                        COFFER_VAULT=os.path.join(root, name, "vault.coffer"),
                        XDG_STATE_HOME=os.path.join(root, name, "state"),
                        XDG_RUNTIME_DIR=os.path.join(root, name, "run"))
        for directory in ("", "state", "run"):
            os.makedirs(os.path.join(root, name, directory), exist_ok=True)
        os.chmod(os.path.join(root, name, "run"), 0o700)
        self.acknowledged = []  # notes of the spends this device recorded

    def run(self, *arguments, allowed=(0,)):
        result = subprocess.run([self.coffer, *arguments], env=self.env, capture_output=True, text=True,
                                stdin=subprocess.DEVNULL)
        if result.returncode not in allowed:
            fail(f"{self.name}: coffer {' '.join(arguments)} exited {result.returncode}: {result.stderr}")
        return result

    def sync(self):
        result = self.run("sync", "--json", allowed=(0, 65))
        report = json.loads(result.stdout)
        for problem in report["problems"]:
            # Only what this test planted on purpose may be rejected.
            if problem["rejected"] and "planted" not in problem["file"]:
                fail(f"{self.name}: sync rejected {problem}")
        return report


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("coffer")
    parser.add_argument("--days", type=int, default=7)
    parser.add_argument("--work")
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()
    if not shutil.which("syncthing"):
        fail("syncthing is not installed (scripts/setup installs Debian's)")
    random.seed(args.seed)
    root = args.work or tempfile.mkdtemp(prefix="coffer-syncthing-")
    engines = [Engine(root, "laptop"), Engine(root, "desktop")]
    engines[0].configure(engines[1])
    engines[1].configure(engines[0])
    try:
        for engine in engines:
            engine.start()
        deadline = time.time() + 60
        while not (engines[0].connected(engines[1]) and engines[1].connected(engines[0])):
            if time.time() > deadline:
                fail("the two Syncthing instances never connected on loopback")
            time.sleep(0.5)
        week(root, engines, args)
    finally:
        for engine in engines:
            engine.stop()
    if not args.work:
        shutil.rmtree(root, ignore_errors=True)
    print("all passed")


def week(root, engines, args):
    laptop = Device(root, "laptop", engines[0], args.coffer)
    desktop = Device(root, "desktop", engines[1], args.coffer)
    laptop.run("init", "--kdf", "interactive")
    laptop.run("account", "add", "Puffin Pot", "--category", "Savings", "--value", "1000")
    laptop.run("account", "add", "Current", "--category", "Cash", "--value", "2500")
    laptop.run("sync", "init", engines[0].folder, "--name", "laptop")
    settle(engines)
    desktop.run("device", "join", engines[1].folder, "--name", "desktop")
    settle(engines)
    laptop.sync()
    renames = []  # (day, laptop's name, desktop's name): both renamed one account while apart
    conflict_copies = 0
    for day in range(1, args.days + 1):
        apart = day % 3 == 2  # every third day, from the second, the two cannot reach each other
        if apart:
            engines[0].pause(engines[1])
            engines[1].pause(engines[0])
        for device in (laptop, desktop):
            for number in range(random.randint(1, 3)):
                note = f"{device.name} day {day} spend {number}"
                device.run("spend", f"{random.randint(1, 9999) / 100:.2f}", "Groceries", "--note", note,
                           "--date", f"2026-12-{day:02d}", "--yes")
                device.acknowledged.append(note)
            device.run("update", random.choice(["Puffin", "Current"]), f"{random.randint(100, 99999)}", "--yes")
        if apart:
            # The same account renamed on both sides, and a file written on both under one name
            # (not Coffer's own: it never rewrites a file), which Syncthing turns into a conflict copy.
            current = json.loads(laptop.run("account", "list", "--json").stdout)
            name = next(account["name"] for account in current["accounts"] if account["name"].startswith("Puffin"))
            names = (f"Puffin Pot L{day}", f"Puffin Pot D{day}")
            laptop.run("account", "rename", name, names[0])
            desktop.run("account", "rename", name, names[1])
            renames.append(names)
            for device in (laptop, desktop):
                with open(os.path.join(device.engine.folder, f"planted-{day}.cfsync"), "w") as file:
                    file.write(f"written on {device.name}")
            # A temporary file as Syncthing leaves one when stopped mid-transfer.
            with open(os.path.join(laptop.engine.folder, f".syncthing.planted-{day}.cfsync.tmp"), "w") as file:
                file.write("partial")
        for device in (laptop, desktop):
            device.sync()
        if apart:
            engines[0].resume(engines[1])
            engines[1].resume(engines[0])
        settle(engines)
        for device in (laptop, desktop, laptop):
            device.sync()
        settle(engines)
        conflict_copies = sum(".sync-conflict-" in name for name in os.listdir(engines[0].folder))
    for device in (desktop, laptop, desktop):
        device.sync()
    settle(engines)
    if renames and conflict_copies == 0:
        fail("Syncthing made no conflict copy of the file written on both sides")
    report = laptop.sync()
    if not any(".sync-conflict-" in name for name in report["ignored"]):
        fail(f"the conflict copies are not listed as ignored: {report['ignored']}")

    exports = [device.run("export", "json", "--out", "-").stdout for device in (laptop, desktop)]
    if exports[0] != exports[1]:
        fail("the two devices hold different vaults")
    document = json.loads(exports[0])
    notes = json.dumps(document)
    for device in (laptop, desktop):
        for note in device.acknowledged:
            if note not in notes:
                fail(f"{device.name}'s acknowledged spend '{note}' is missing")
    conflicts = json.loads(laptop.run("sync", "conflicts", "--json").stdout)["conflicts"]
    lost = {(field["lost"], field["kept"]) for conflict in conflicts for field in conflict["fields"]
            if field["field"] == "name"}
    for names in renames:
        if names not in lost and tuple(reversed(names)) not in lost:
            fail(f"the rename conflict {names} is neither kept nor listed: {lost}")
    print(f"{args.days} days, {len(laptop.acknowledged) + len(desktop.acknowledged)} spends, "
          f"{len(renames)} days apart, {len(conflicts)} conflicts, {conflict_copies} Syncthing conflict copies ignored")


if __name__ == "__main__":
    main()
