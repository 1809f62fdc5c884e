import CofferTestSupport
import Foundation
import Testing

/// Two machines' worth of state (vault, high-water marks) in one sandbox, sharing a folder, driven
/// through the real binary: the commands, flags, JSON keys and exit codes of Specs/cli.md.
/// Names with spaces on the command lines are canaries for the sandbox's leak scan, which reads
/// every file in the sync folder.
@Suite struct SyncCLITests {
    let sandbox = Sandbox()
    static let passphrase = "lantern orbit cactus plum"
    var folder: URL { sandbox.directory.path("Sync/coffer") }

    enum Device: String { case laptop, desktop }

    @discardableResult
    func coffer(_ device: Device, _ arguments: [String], _ extra: [String: String] = [:]) throws -> RunResult {
        let environment = [
            "COFFER_PASSPHRASE": Self.passphrase, "COFFER_TODAY": "2026-11-24",
            "COFFER_VAULT": sandbox.directory.path("\(device.rawValue)/vault.coffer").path,
            "XDG_STATE_HOME": sandbox.directory.path("\(device.rawValue)/state").path,
        ].merging(extra) { $1 }
        return try sandbox.run(arguments, environment: environment)
    }

    func json(_ result: RunResult) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    /// The laptop makes the vault and the folder; the desktop joins from the folder alone.
    func setUp() throws {
        try FileManager.default.createDirectory(
            at: sandbox.directory.path("laptop"), withIntermediateDirectories: true)
        #expect(try coffer(.laptop, ["init", "--kdf", "interactive"]).status == 0)
        let added = try coffer(
            .laptop, ["account", "add", "Canary Holiday Fund", "--category", "Savings", "--value", "1234.56"])
        #expect(added.status == 0, "\(added.stderr)")
        let initialised = try coffer(.laptop, ["sync", "init", folder.path, "--name", "laptop"])
        #expect(initialised.status == 0, "\(initialised.stderr)")
        #expect(initialised.stdout.contains("is now this vault's sync folder"))
        #expect(initialised.stderr.contains("coffer device join"))
        let joined = try coffer(.desktop, ["device", "join", folder.path, "--name", "desktop"])
        #expect(joined.status == 0, "\(joined.stderr)")
        #expect(joined.stdout.contains("Joined:"))
    }

    @Test func twoDevicesConvergeThroughTheFolder() throws {
        try setUp()
        #expect(try coffer(.desktop, ["overview"]).stdout.contains("1,234.56"), "the desktop has the laptop's vault")
        #expect(try coffer(.laptop, ["update", "Canary Holiday Fund", "1500"]).status == 0)
        #expect(
            try coffer(.desktop, ["spend", "42.50", "Groceries", "--note", "Canary market stall"]).status == 0)
        let published = try json(try coffer(.desktop, ["sync", "--json"]))
        #expect((published["published"] as? [[String: Any]])?.first?["changes"] as? Int ?? 0 > 0)
        let merged = try coffer(.laptop, ["sync"])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout.contains("from desktop"))
        #expect(try coffer(.desktop, ["sync", folder.path]).status == 0, "a folder named explicitly")
        let laptop = try coffer(.laptop, ["export", "json", "--out", "-"]).stdout
        let desktop = try coffer(.desktop, ["export", "json", "--out", "-"]).stdout
        #expect(laptop == desktop, "both devices hold the same vault")
        #expect(laptop.contains("Canary market stall") && laptop.contains("1500"))

        let status = try json(try coffer(.laptop, ["sync", "status", "--json"]))
        #expect(
            Set(status.keys) == [
                "folder", "keyGeneration", "newerKeyGeneration", "localChanges", "devices", "openConflicts", "ignored",
            ])
        let devices = try #require(status["devices"] as? [[String: Any]])
        #expect(Set(devices.compactMap { $0["name"] as? String }) == ["laptop", "desktop"])
        #expect(Set(devices[0].keys) == ["id", "name", "thisDevice", "lastHeard", "sequence", "filesToMerge"])
        #expect(status["localChanges"] as? Int == 0)
        let list = try coffer(.desktop, ["device", "list"])
        #expect(list.stdout.contains("desktop (this device)") && list.stdout.contains("laptop"))
        #expect((try json(try coffer(.desktop, ["device", "list", "--json"]))["devices"] as? [Any])?.count == 2)
    }

    @Test func aConcurrentEditIsKeptAndPutBackWithOneCommand() throws {
        try setUp()
        #expect(try coffer(.laptop, ["account", "rename", "Canary Holiday Fund", "Canary Trip Fund"]).status == 0)
        #expect(try coffer(.desktop, ["account", "rename", "Canary Holiday Fund", "Canary Travel Pot"]).status == 0)
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        let second = try coffer(.desktop, ["sync"])
        #expect(second.stdout.contains("1 concurrent edit resolved"), "\(second.stdout)")
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        let names = try ["laptop", "desktop"].map { device in
            try coffer(Device(rawValue: device)!, ["account", "list", "--json"]).stdout
        }
        #expect(names[0] == names[1], "the same winner on both")
        let conflicts = try json(try coffer(.desktop, ["sync", "conflicts", "--json"]))
        let entry = try #require((conflicts["conflicts"] as? [[String: Any]])?.first)
        #expect(
            Set(entry.keys) == [
                "number", "record", "lost", "lostOn", "lostAt", "kept", "keptOn", "keptAt", "restored", "fields",
            ])
        let fields = try #require(entry["fields"] as? [[String: String]])
        #expect(fields.count == 1 && fields[0]["field"] == "name", "\(fields)")
        #expect(
            Set([fields[0]["lost"], fields[0]["kept"]]) == ["Canary Trip Fund", "Canary Travel Pot"], "\(fields)")
        let loser = try #require(entry["lostOn"] as? String)
        let device = try #require(Device(rawValue: loser))
        let restored = try coffer(device, ["sync", "conflicts", "restore", "1"])
        #expect(restored.status == 0, "\(restored.stderr)")
        #expect(try coffer(device, ["sync"]).status == 0)
        #expect(try coffer(device == .laptop ? .desktop : .laptop, ["sync"]).status == 0)
        let after = try coffer(.laptop, ["account", "list"]).stdout
        #expect(
            after.contains(device == .laptop ? "Canary Trip Fund" : "Canary Travel Pot"),
            "the losing name is back on every device")
        #expect(try coffer(device, ["sync", "conflicts", "restore", "1"]).status == 64, "restored once")
        #expect(try coffer(device, ["sync", "conflicts", "restore", "9"]).status == 64)
    }

    /// `sync conflicts` says what was lost and what was kept, field by field: amounts in the
    /// currency (decimal strings in JSON), names quoted, dates, a delete against an edit.
    @Test func conflictsShowTheLostAndKeptValueOfEachField() throws {
        try setUp()
        #expect(try coffer(.laptop, ["goal", "add", "Puffin Pot", "--target", "500"]).status == 0)
        #expect(try coffer(.laptop, ["client", "add", "Gannet Ltd"]).status == 0)
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        #expect(try coffer(.desktop, ["sync"]).status == 0)
        // The laptop edits first, so the desktop's later edits are the ones kept.
        #expect(
            try coffer(.laptop, ["goal", "edit", "Puffin Pot", "--name", "Puffin Pot Bravo", "--target", "41.11"])
                .status == 0)
        #expect(try coffer(.laptop, ["client", "remove", "Gannet"]).status == 0)
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        Thread.sleep(forTimeInterval: 1.1)  // edits are stamped to the second: the desktop's is later
        #expect(
            try coffer(
                .desktop,
                ["goal", "edit", "Puffin Pot", "--name", "Puffin Pot Alpha", "--target", "42.22", "--by", "2027-06-30"]
            ).status == 0)
        #expect(try coffer(.desktop, ["client", "edit", "Gannet", "--email", "ap@gannet.example"]).status == 0)
        #expect(try coffer(.desktop, ["sync"]).status == 0)
        let listed = try coffer(.desktop, ["sync", "conflicts"]).stdout
        #expect(listed.contains("target £41.11 → kept £42.22"), "\(listed)")
        #expect(listed.contains("name 'Puffin Pot Bravo' → kept 'Puffin Pot Alpha'"), "\(listed)")
        #expect(listed.contains("→ kept 2027-06-30"), "\(listed)")
        #expect(listed.contains("deleted → kept edited"), "\(listed)")
        let conflicts = try #require(
            try json(try coffer(.desktop, ["sync", "conflicts", "--json"]))["conflicts"] as? [[String: Any]])
        let fields = conflicts.flatMap { ($0["fields"] as? [[String: String]]) ?? [] }
        #expect(fields.contains(["field": "target", "lost": "41.11", "kept": "42.22"]), "\(fields)")
        #expect(fields.contains(["field": "name", "lost": "Puffin Pot Bravo", "kept": "Puffin Pot Alpha"]))
        #expect(fields.contains(["field": "record", "lost": "deleted", "kept": "edited"]), "\(fields)")
    }

    /// The issue-44 scenario: one keys file of another vault copied into this vault's folder.
    /// Every device still syncs (exit 65, the file named with its reason, in --json too), the
    /// devices converge, and `sync init` into that vault's folder still refuses (64).
    @Test func anotherVaultsKeysFileInTheFolderStopsNoDevice() throws {
        try setUp()
        let otherFolder = sandbox.directory.path("Other/coffer")
        let other = ["COFFER_VAULT": sandbox.directory.path("other/vault.coffer").path]
        #expect(try coffer(.laptop, ["init", "--kdf", "interactive"], other).status == 0)
        #expect(try coffer(.laptop, ["sync", "init", otherFolder.path, "--name", "other"], other).status == 0)
        let theirs = try #require(
            try FileManager.default.contentsOfDirectory(atPath: otherFolder.path).first { $0.hasSuffix(".cfkeys") })
        try FileManager.default.copyItem(
            at: otherFolder.appendingPathComponent(theirs), to: folder.appendingPathComponent(theirs))

        #expect(try coffer(.laptop, ["client", "add", "Gannet Ltd"]).status == 0)
        let laptop = try coffer(.laptop, ["sync"])
        #expect(laptop.status == 65, "\(laptop.stderr)")
        #expect(laptop.stderr.contains("rejected: \(theirs): belongs to another vault"), "\(laptop.stderr)")
        #expect(laptop.stdout.contains("Published"))
        let desktop = try coffer(.desktop, ["sync", "--json"])
        #expect(desktop.status == 65)
        let problems = try #require(try json(desktop)["problems"] as? [[String: Any]])
        #expect(
            problems.count == 1 && problems[0]["file"] as? String == theirs && problems[0]["rejected"] as? Bool == true)
        #expect(try coffer(.desktop, ["client", "list"]).stdout.contains("Gannet Ltd"), "merged past the planted file")
        #expect(try coffer(.desktop, ["client", "add", "Heron plc"]).status == 0)
        #expect(try coffer(.desktop, ["sync"]).status == 65)
        #expect(try coffer(.laptop, ["sync"]).status == 65)
        #expect(
            try coffer(.laptop, ["export", "json", "--out", "-"]).stdout
                == coffer(.desktop, ["export", "json", "--out", "-"]).stdout, "both devices converge")
        // The one place another vault's files stop anything: making this folder another vault's.
        let refused = try coffer(.laptop, ["sync", "init", folder.path, "--name", "x", "--replace-folder"], other)
        #expect(refused.status == 64, "\(refused.stderr)")
        #expect(refused.stderr.contains("the sync folder of another vault"))
    }

    @Test func refusalsHaveTheirExitCodesAndChangeNothing() throws {
        // No sync folder yet.
        #expect(try coffer(.laptop, ["init", "--kdf", "interactive"]).status == 0)
        let none = try coffer(.laptop, ["sync"])
        #expect(none.status == 64)
        #expect(none.stderr.contains("coffer sync init"))
        try FileManager.default.removeItem(at: sandbox.directory.path("laptop"))
        try setUp()
        // Joining over an existing vault, with the wrong passphrase, or from a folder that is not one.
        #expect(try coffer(.desktop, ["device", "join", folder.path]).status == 64)
        let other = sandbox.directory.path("phone/vault.coffer").path
        let wrong = try coffer(
            .desktop, ["device", "join", folder.path, "--vault", other], ["COFFER_PASSPHRASE": "nope nope"])
        #expect(wrong.status == 77)
        #expect(!FileManager.default.fileExists(atPath: other))
        #expect(
            try coffer(.desktop, ["device", "join", sandbox.directory.path("empty").path, "--vault", other]).status
                == 66)
        // A forged file in the folder: everything else merges, and the exit code says so.
        #expect(try coffer(.laptop, ["update", "Canary Holiday Fund", "99", "--yes"]).status == 0)
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        let laptopDirectory = try FileManager.default.contentsOfDirectory(atPath: folder.path).first {
            $0.count == 32
                && FileManager.default.fileExists(
                    atPath: folder.appendingPathComponent("\($0)/00000001-0000000000000002.cfsync").path)
        }
        let file = folder.appendingPathComponent("\(try #require(laptopDirectory))/00000001-0000000000000002.cfsync")
        var bytes = try Data(contentsOf: file)
        bytes[bytes.count - 100] ^= 0x40
        try bytes.write(to: file)
        let forged = try coffer(.desktop, ["sync"])
        #expect(forged.status == 65)
        #expect(forged.stderr.contains("rejected") && forged.stderr.contains("signature"))
    }

    /// A sync tool duplicated the vault file and both copies were edited: `coffer merge` brings
    /// the copy's changes back, keeps both sides of a record edited in both, and one undo reverts it.
    @Test func aConflictedCopyOfTheVaultFileMergesBack() throws {
        try FileManager.default.createDirectory(at: sandbox.directory.path("laptop"), withIntermediateDirectories: true)
        #expect(try coffer(.laptop, ["init", "--kdf", "interactive"]).status == 0)
        #expect(
            try coffer(.laptop, ["account", "add", "Canary Current", "--category", "Cash", "--value", "100"]).status
                == 0)
        #expect(
            try coffer(.laptop, ["account", "add", "Canary Pension", "--category", "Pensions", "--value", "900"]).status
                == 0)
        let vault = sandbox.directory.path("laptop/vault.coffer")
        let copy = sandbox.directory.path("laptop/vault (conflicted copy 2026-11-24).coffer")
        #expect(try coffer(.laptop, ["verify"]).status == 0)
        try FileManager.default.copyItem(at: vault, to: copy)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: vault.path + suffix) {
            try FileManager.default.copyItem(atPath: vault.path + suffix, toPath: copy.path + suffix)
        }
        // The copy is edited on another machine (its own high-water marks).
        let elsewhere = ["COFFER_VAULT": copy.path, "XDG_STATE_HOME": sandbox.directory.path("elsewhere").path]
        #expect(try coffer(.laptop, ["update", "Canary Current", "250"], elsewhere).status == 0)
        #expect(
            try coffer(.laptop, ["account", "rename", "Canary Pension", "Canary Work Pension"], elsewhere).status == 0)
        #expect(try coffer(.laptop, ["account", "rename", "Canary Pension", "Canary Old Pension"]).status == 0)
        let before = try coffer(.laptop, ["export", "json", "--out", "-"]).stdout

        let merged = try coffer(.laptop, ["merge", copy.path])
        #expect(merged.status == 0, "\(merged.stderr)")
        #expect(merged.stdout.contains("1 record changed in both"), "\(merged.stdout)")
        let accounts = try coffer(.laptop, ["account", "list"]).stdout
        #expect(accounts.contains("250.00"), "the copy's value came back")
        #expect(accounts.contains("Canary Old Pension") != accounts.contains("Canary Work Pension"), "one name won")
        let conflicts = try json(try coffer(.laptop, ["sync", "conflicts", "--json"]))
        #expect((conflicts["conflicts"] as? [Any])?.count == 1, "the other name is kept")
        #expect(try coffer(.laptop, ["merge", copy.path]).stdout.contains("Nothing to merge"))
        #expect(try coffer(.laptop, ["undo"]).status == 0)
        #expect(try coffer(.laptop, ["export", "json", "--out", "-"]).stdout == before, "one undo reverts the merge")

        // Another vault is not a copy: refused, nothing changed.
        let other = sandbox.directory.path("other.coffer").path
        #expect(try coffer(.laptop, ["init", "--kdf", "interactive", "--vault", other]).status == 0)
        let refused = try coffer(.laptop, ["merge", other])
        #expect(refused.status == 64)
        #expect(try coffer(.laptop, ["export", "json", "--out", "-"]).stdout == before)
        #expect(try coffer(.laptop, ["merge", sandbox.directory.path("missing.coffer").path]).status == 66)
    }

    /// `device remove` through the binary: the other device takes on the new keys at its next
    /// `sync` (passphrase from COFFER_PASSPHRASE), keeping its offline edit; the removed one's
    /// next sync is refused without the passphrase; `sync compact` leaves one epoch.
    @Test func removingADeviceRotatesTheKeysAndTheOthersMove() throws {
        try setUp()
        let phone = sandbox.directory.path("phone/vault.coffer").path
        let phoneEnvironment = ["COFFER_VAULT": phone, "XDG_STATE_HOME": sandbox.directory.path("phone/state").path]
        #expect(try coffer(.laptop, ["device", "join", folder.path, "--name", "phone"], phoneEnvironment).status == 0)
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        #expect(try coffer(.desktop, ["update", "Canary Holiday Fund", "4321"]).status == 0)

        let removed = try coffer(.laptop, ["device", "remove", "phone"])
        #expect(removed.status == 0, "\(removed.stderr)")
        #expect(removed.stdout.contains("Removed phone") && removed.stdout.contains("key generation 2"))
        #expect(try coffer(.laptop, ["device", "remove", "laptop"]).status == 64, "not this device")
        #expect(try coffer(.laptop, ["device", "remove", "nobody"]).status == 64)

        let moved = try coffer(.desktop, ["sync"])
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout.contains("Took on key generation 2"), "\(moved.stdout)")
        #expect(try coffer(.laptop, ["sync"]).status == 0)
        #expect(try coffer(.laptop, ["overview"]).stdout.contains("4,321.00"), "the desktop's offline edit survived")

        let locked = try coffer(
            .laptop, ["sync"], phoneEnvironment.merging(["COFFER_PASSPHRASE": "not it at all"]) { $1 })
        #expect(locked.status == 77, "the removed phone cannot take on the new keys without the passphrase")

        let compacted = try coffer(.laptop, ["sync", "compact"])
        #expect(compacted.status == 0, "\(compacted.stderr)")
        let afterCompaction = try coffer(.desktop, ["sync"])
        #expect(afterCompaction.status == 0, "\(afterCompaction.stderr)")
        let laptop = try coffer(.laptop, ["export", "json", "--out", "-"]).stdout
        #expect(laptop == (try coffer(.desktop, ["export", "json", "--out", "-"]).stdout))
        // Every device that moved deleted its old files; only the removed phone's are left.
        let names = try FileManager.default.subpathsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".cfsync") }
        let byDevice = Dictionary(grouping: names) { String($0.prefix(32)) }
        let current = byDevice.filter { $0.value.contains { $0.contains("00000003") } }
        #expect(current.count == 2, "laptop and desktop, in epoch 3")
        #expect(current.values.joined().allSatisfy { $0.contains("00000003") }, "\(names)")
        #expect(byDevice.count == 3, "and the phone's old files, which only it could delete")
        #expect(names.contains { $0.contains("00000003-0000000000000001") })
    }
}
