import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

@Suite struct FirstCommandsTests {
    @Test func initStatusVerify() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        #expect(fileMode(sandbox.vault) == 0o600)
        #expect(fileMode(sandbox.vault.deletingLastPathComponent()) == 0o700)

        let status = try sandbox.run(["status"])
        #expect(status.status == 0)
        #expect(status.stdout.contains("~/data/coffer/vault.coffer"), "the path as a person reads it: \(status.stdout)")
        #expect(status.stdout.contains("version 3"))
        #expect(status.stdout.contains("key generation 1"))
        #expect(status.stdout.contains("Argon2id interactive"))
        #expect(
            // The setup's page and the summary's.
            status.stdout.contains("Records       sealed in 2 pages; unlock to count them"),
            "the file shows pages, not records: \(status.stdout)")
        #expect(status.stdout.contains("locked"))
        #expect(!status.stdout.contains("Next:"), "advice goes to a terminal's stderr only")

        let json = try sandbox.run(["status", "--json"])
        let decoded = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(decoded["formatVersion"] as? Int == 3)
        #expect(decoded["records"] is NSNull)
        #expect(decoded["pages"] as? Int == 2)
        #expect(decoded["keyGeneration"] as? Int == 1)
        #expect((decoded["kdf"] as? [String: Any])?["profile"] as? String == "interactive")
        #expect((decoded["session"] as? [String: Any])?["state"] as? String == "locked")

        let verify = try sandbox.run(["verify", "--passphrase-file", passphraseFile])
        #expect(verify.status == 0)
        #expect(verify.stdout.contains("Vault OK: 20 records verified"))
    }

    @Test func initRefusesAnExistingVaultAndEmptyPassphrases() throws {
        let sandbox = Sandbox()
        let empty = sandbox.directory.secretFile("empty", "\n")
        let refused = try sandbox.run(["init", "--kdf", "interactive", "--passphrase-file", empty])
        #expect(refused.status == 64)
        #expect(refused.stderr.contains("passphrase is empty"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.vault.path))

        _ = try sandbox.initVault()
        let before = try Data(contentsOf: sandbox.vault)
        let again = try sandbox.run(["init", "--kdf", "interactive"], environment: ["COFFER_PASSPHRASE": "other"])
        #expect(again.status == 64)
        #expect(again.stderr.contains("already exists"))
        #expect(try Data(contentsOf: sandbox.vault) == before)
    }

    @Test func wrongPassphraseExits77AndSaysSo() throws {
        let sandbox = Sandbox()
        _ = try sandbox.initVault()
        let result = try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "not the passphrase"])
        #expect(result.status == 77)
        #expect(result.stderr.contains("The passphrase is wrong"))
        #expect(!result.stderr.lowercased().contains("decryption failed"))
    }

    @Test func withoutAPassphraseSourceOrTerminalItFailsAtOnce() throws {
        let sandbox = Sandbox()
        _ = try sandbox.initVault()
        let started = Date()
        let result = try sandbox.run(["verify"], timeout: 10)
        #expect(result.status == 77)
        #expect(result.stderr.contains("no terminal"))
        #expect(result.stderr.contains("--passphrase-file"))
        #expect(Date().timeIntervalSince(started) < 5)
    }

    @Test func passphraseCommandAndCoreDumpsOff() throws {
        let sandbox = Sandbox()
        _ = try sandbox.initVault(passphrase: "from a command")
        let limits = sandbox.directory.path("limits")
        // The command runs as coffer's child: it reads coffer's own limits before answering
        // (from a file, as `pass` or a keyring would: never the passphrase itself on a command line).
        let store = sandbox.directory.secretFile("store", "from a command\n")
        let command = "cat /proc/$PPID/limits > '\(limits.path)'; cat '\(store)'"
        let result = try sandbox.run(["verify", "--passphrase-command", command])
        #expect(result.status == 0, "\(result.stderr)")
        let coreLine = try String(contentsOf: limits, encoding: .utf8).split(separator: "\n").first {
            $0.hasPrefix("Max core file size")
        }
        #expect(
            coreLine.map {
                $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"]
            } == true,
            "\(coreLine ?? "no line")")

        let failing = try sandbox.run(["verify", "--passphrase-command", "exit 3"])
        #expect(failing.status == 77)
        #expect(failing.stderr.contains("exit status 3"))
    }

    /// F15: the passphrase command is another program; it must not see Coffer's own secrets.
    @Test func thePassphraseCommandGetsNoCofferSecrets() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault(passphrase: "from a command")
        let token = try #require(
            try sandbox.run(["unlock", "--passphrase-file", passphraseFile]).stdout
                .split(whereSeparator: { $0 == "\"" || $0 == " " || $0 == "\n" || $0 == "=" }).first {
                    $0.hasPrefix("cs1_")
                }.map(String.init))
        let seen = sandbox.directory.path("child-environment.txt")
        let command = "env > '\(seen.path)'; cat '\(passphraseFile)'"
        let result = try sandbox.run(
            ["account", "list", "--passphrase-command", command],
            environment: [
                "COFFER_SESSION": token, "COFFER_PASSPHRASE": "from a command",
                "COFFER_NEW_PASSPHRASE": "something else",
            ])
        #expect(result.status == 0, "\(result.stderr)")
        let environment = try String(contentsOf: seen, encoding: .utf8)
        #expect(environment.contains("HOME="), "the command did run and wrote its environment")
        for secret in ["COFFER_SESSION", "COFFER_PASSPHRASE", "COFFER_NEW_PASSPHRASE"] {
            #expect(!environment.contains(secret + "="), "\(secret) reached the passphrase command")
        }
        #expect(!environment.contains(token))
    }

    /// F18 and F19: a weak new passphrase is refused unless insisted on; COFFER_PASSPHRASE's
    /// line break is dropped exactly as a file's is, so both sources agree.
    @Test func weakPassphrasesAndTrailingNewlines() throws {
        let sandbox = Sandbox()
        for weak in [" ", "a", "short1", "aaaaaaaaaaaaaaaa", "1234567890ab", "password123"] {
            let result = try sandbox.run(["init", "--kdf", "interactive"], environment: ["COFFER_PASSPHRASE": weak])
            #expect(result.status == 64, "'\(weak)' was accepted")
            #expect(result.stderr.contains("too weak") && result.stderr.contains("--allow-weak-passphrase"))
            #expect(!FileManager.default.fileExists(atPath: sandbox.vault.path))
        }
        #expect(
            try sandbox.run(
                ["init", "--kdf", "interactive", "--allow-weak-passphrase"], environment: ["COFFER_PASSPHRASE": "pw\n"]
            ).status == 0)
        let file = sandbox.directory.secretFile("pw-file", "pw\n")
        #expect(
            try sandbox.run(["verify", "--passphrase-file", file]).status == 0,
            "the newline is not part of the passphrase from either source")
        #expect(try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "pw\r\n"]).status == 0)
        // Changing to a weak one is refused too, and the old passphrase keeps working.
        let change = try sandbox.run(
            ["passphrase", "change"], environment: ["COFFER_PASSPHRASE": "pw", "COFFER_NEW_PASSPHRASE": "abc"])
        #expect(change.status == 64)
        #expect(try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "pw"]).status == 0)
    }

    @Test func missingVaultExits66() throws {
        let sandbox = Sandbox()
        let result = try sandbox.run(["status"])
        #expect(result.status == 66)
        #expect(result.stderr.contains("coffer init"))
        let verify = try sandbox.run(
            ["verify", "--vault", sandbox.directory.path("nope.coffer").path], environment: ["COFFER_PASSPHRASE": "x"])
        #expect(verify.status == 66)
    }

    @Test func invalidUsageExits64() throws {
        let sandbox = Sandbox()
        _ = try sandbox.initVault()
        #expect(try sandbox.run(["init", "--kdf", "extreme"]).status == 64)
        #expect(
            try sandbox.run(["unlock", "--timeout", "forever"], environment: ["COFFER_PASSPHRASE": "old passphrase"])
                .status == 64)
        #expect(
            try sandbox.run(["unlock", "--timeout", "48h"], environment: ["COFFER_PASSPHRASE": "old passphrase"]).status
                == 64)
        #expect(try sandbox.run(["no-such-command"]).status == 64)
        #expect(
            try sandbox.run(["--vault", sandbox.vault.path, "status", "--json"]).status == 0,
            "global option before the subcommand")
        #expect(
            try sandbox.run(["recovery-key", "remove"], environment: ["COFFER_PASSPHRASE": "old passphrase"]).status
                == 64)
    }
}

@Suite struct DamageTests {
    enum Attack: String, CaseIterable, Sendable {
        case flipByte, swap, olderPage, delete, duplicate, foreign
    }

    /// A vault with its records made through the library, three of them in a group of their own
    /// (one page), then attacked with SQLite: every record of the attacked page must be named.
    @Test(arguments: Attack.allCases)
    func verifyNamesTheDamagedRecord(attack: Attack) throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        let ids = (0..<3).map { _ in RecordID.random() }
        let passphrase = try Passphrase("old passphrase")
        func open() throws -> Vault {
            let vault = try Vault.open(at: sandbox.vault, with: .passphrase(passphrase))
            vault.grouping = { id, _ in ids.contains(id) ? PageGroup(rawValue: 7) : .unsorted }
            return vault
        }
        try open().apply(ids.enumerated().map { .put($1, Data("record \($0)".utf8)) })
        let target = try open().pageLocators(of: ids[0])!.page
        let other = try withRawDatabase(sandbox.vault) {
            try Data.fetchOne($0, sql: "SELECT locator FROM page WHERE locator != ?", arguments: [target])!
        }
        var named = ids
        switch attack {
        case .flipByte:
            try flipStoredByte(sandbox.vault, page: target, fromEnd: 100)
        case .swap:
            try withRawDatabase(sandbox.vault) { db in
                let a = try Data.fetchOne(db, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [target])!
                let b = try Data.fetchOne(db, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [other])!
                try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [b, target])
                try db.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [a, other])
            }
        case .olderPage:
            let old = try withRawDatabase(sandbox.vault) {
                try Data.fetchOne($0, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [target])!
            }
            try open().apply([.put(ids[1], Data("newer".utf8))])
            try withRawDatabase(sandbox.vault) {
                try $0.execute(sql: "UPDATE page SET sealed = ? WHERE locator = ?", arguments: [old, target])
            }
        case .delete:
            try withRawDatabase(sandbox.vault) {
                try $0.execute(sql: "DELETE FROM page WHERE locator = ?", arguments: [target])
            }
        case .duplicate:
            try withRawDatabase(sandbox.vault) { db in
                try db.execute(
                    sql: "INSERT INTO page SELECT ?, sealed FROM page WHERE locator = ?",
                    arguments: [Data(SecureRandom.bytes(count: 16)), target])
            }
            named = []
        case .foreign:
            let foreign = sandbox.directory.path("other.coffer")
            try Vault.create(at: foreign, passphrase: passphrase, parameters: testParameters)
                .apply([.put(.random(), Data("theirs".utf8))])
            let row = try withRawDatabase(foreign) { try Row.fetchOne($0, sql: "SELECT * FROM page")! }
            try withRawDatabase(sandbox.vault) { db in
                try db.execute(
                    sql: "INSERT INTO page VALUES (?, ?)", arguments: [row["locator"] as Data, row["sealed"] as Data])
            }
            named = []
        }
        let result = try sandbox.run(["verify", "--passphrase-file", passphraseFile])
        #expect(result.status == 65, "\(attack): \(result.stderr)")
        #expect(result.stderr.contains("damaged or has been tampered with"))
        for id in named {
            #expect(result.stderr.contains("record \(id.hex)"), "\(attack) should name \(id.hex): \(result.stderr)")
        }
        if named.isEmpty { #expect(result.stderr.contains("that no index lists"), "\(result.stderr)") }

        let json = try sandbox.run(["verify", "--json", "--passphrase-file", passphraseFile])
        #expect(json.status == 65)
        let report = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(report["ok"] as? Bool == false)
        let records = (report["problems"] as! [[String: Any]]).compactMap { $0["record"] as? String }
        #expect(Set(named.map(\.hex)).isSubset(of: Set(records)))
    }

    @Test func damagedHeaderExits65AndSaysTheHeaderIsDamaged() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        try withRawDatabase(sandbox.vault) { db in
            var body = Array(try Data.fetchOne(db, sql: "SELECT body FROM header")!)
            body[20] ^= 0x10
            try db.execute(sql: "UPDATE header SET body = ?", arguments: [Data(body)])
        }
        for arguments in [["verify", "--passphrase-file", passphraseFile], ["status"]] {
            let result = try sandbox.run(arguments)
            #expect(result.status == 65)
            #expect(result.stderr.contains("header is damaged"))
        }
    }

    @Test func aFileThatIsNotAVaultExits65() throws {
        let sandbox = Sandbox()
        let junk = sandbox.directory.path("notes.txt")
        try Data("just some text, not a vault\n".utf8).write(to: junk)
        let result = try sandbox.run(["verify", "--vault", junk.path], environment: ["COFFER_PASSPHRASE": "x"])
        #expect(result.status == 65)
        #expect(result.stderr.contains("not a Coffer vault"))
    }
}

@Suite struct SessionAndKeyCommandTests {
    func exportedToken(_ stdout: String) -> String? {
        guard
            let range = stdout.range(of: #"export COFFER_SESSION="(cs1_[A-Za-z0-9_-]+)""#, options: .regularExpression)
        else { return nil }
        return String(stdout[range]).components(separatedBy: "\"")[1]
    }

    /// F9: `lock` ends the sessions of a vault that was moved away or damaged (found by the id
    /// this computer last saw at the path, or the one its header still names), says when other
    /// sessions remain (exit 1), and `lock --all` ends every one.
    @Test func lockEndsTheSessionsOfAMovedOrDamagedVault() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        func unlock(_ vault: [String] = []) throws -> String {
            try #require(
                exportedToken(try sandbox.run(["unlock", "--passphrase-file", passphraseFile] + vault).stdout))
        }
        // Moved: nothing at the path any more.
        let moved = try unlock()
        let elsewhere = sandbox.directory.path("elsewhere.coffer")
        try FileManager.default.moveItem(at: sandbox.vault, to: elsewhere)
        let lock = try sandbox.run(["lock"])
        #expect(lock.status == 0, "\(lock.stdout)\(lock.stderr)")
        #expect(lock.stdout.contains("removed 1 session"), "\(lock.stdout)")
        #expect(
            try sandbox.run(["account", "list", "--vault", elsewhere.path], environment: ["COFFER_SESSION": moved])
                .status == 77)

        // Damaged: a header checksum that no longer holds.
        let damaged = try unlock(["--vault", elsewhere.path])
        let database = try DatabaseQueue(path: elsewhere.path)
        try database.write { db in
            var header = try Data.fetchOne(db, sql: "SELECT body FROM header")!
            header[header.count - 1] ^= 0x01
            try db.execute(sql: "UPDATE header SET body = ?", arguments: [header])
        }
        try database.close()
        #expect(try sandbox.run(["status", "--vault", elsewhere.path]).status == 65)
        let lockDamaged = try sandbox.run(["lock", "--vault", elsewhere.path])
        #expect(
            lockDamaged.status == 0 && lockDamaged.stdout.contains("removed 1 session"),
            "\(lockDamaged.stdout)\(lockDamaged.stderr)")
        #expect(lockDamaged.stderr.contains("warning:"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: sandbox.sessions.path).isEmpty, "\(damaged) was wiped")

        // Sessions nobody can attribute are named, and --all ends them.
        let other = sandbox.directory.path("other.coffer")
        let otherFile = sandbox.directory.secretFile("other-passphrase", "other vault passphrase words\n")
        #expect(
            try sandbox.run(["init", "--kdf", "interactive", "--vault", other.path, "--passphrase-file", otherFile])
                .status == 0)
        #expect(try sandbox.run(["unlock", "--vault", other.path, "--passphrase-file", otherFile]).status == 0)
        let unattributed = try sandbox.run(["lock", "--vault", sandbox.directory.path("never-was.coffer").path])
        #expect(unattributed.status == 1)
        #expect(
            unattributed.stderr.contains(".session") && unattributed.stderr.contains("coffer lock --all"),
            "\(unattributed.stderr)")
        let all = try sandbox.run(["lock", "--all"])
        #expect(all.status == 0 && all.stdout.contains("removed 1 session"), "\(all.stdout)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: sandbox.sessions.path).isEmpty)
    }

    /// F8: a fatal signal prints one fixed line, never the runtime's backtrace of registers and
    /// the memory they point to, and exits 70.
    @Test func aFatalSignalPrintsNoMemory() throws {
        let sandbox = Sandbox()
        _ = try sandbox.initVault()
        let child = try sandbox.start(["account", "list", "--passphrase-command", "sleep 3; echo x"])
        usleep(700_000)
        kill(child.pid, SIGSEGV)
        let result = try child.result()
        #expect(result.status == 70, "\(result.stderr)")
        #expect(
            result.stderr == "error: internal error: stopped on a fatal signal (nothing from memory was printed).\n",
            "\(result.stderr)")
    }

    @Test func unlockLockAndExpiry() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        let unlock = try sandbox.run(["unlock", "--passphrase-file", passphraseFile])
        #expect(unlock.status == 0)
        let token = try #require(exportedToken(unlock.stdout))
        #expect(unlock.stdout.split(separator: "\n").count == 1, "stdout holds only the export line, for eval")
        #expect(fileMode(sandbox.sessions) == 0o700)

        let withSession = try sandbox.run(["verify"], environment: ["COFFER_SESSION": token])
        #expect(withSession.status == 0, "\(withSession.stderr)")
        #expect(try sandbox.run(["status"], environment: ["COFFER_SESSION": token]).stdout.contains("unlocked until"))

        let lock = try sandbox.run(["lock"], environment: ["COFFER_SESSION": token])
        #expect(lock.status == 0)
        #expect(lock.stdout.contains("Locked"))
        let afterLock = try sandbox.run(["verify"], environment: ["COFFER_SESSION": token])
        #expect(afterLock.status == 77)
        #expect(afterLock.stderr.contains("coffer unlock"))

        let short = try sandbox.run(["unlock", "--timeout", "1s", "--passphrase-file", passphraseFile])
        let shortToken = try #require(exportedToken(short.stdout))
        usleep(2_300_000)  // expiry is rounded up to the whole second: a 1s session ends within 2 s
        let expired = try sandbox.run(["verify"], environment: ["COFFER_SESSION": shortToken])
        #expect(expired.status == 77)
        #expect(expired.stderr.contains("expired"))
        #expect(expired.stderr.contains("eval \"$(coffer unlock)\""))

        let garbage = try sandbox.run(["verify"], environment: ["COFFER_SESSION": "cs1_garbage"])
        #expect(garbage.status == 77)
    }

    @Test func passphraseChangeAndRecoveryKey() throws {
        let sandbox = Sandbox()
        let oldFile = try sandbox.initVault()
        let newFile = sandbox.directory.secretFile("new", "new passphrase\n")
        let change = try sandbox.run([
            "passphrase", "change", "--passphrase-file", oldFile, "--new-passphrase-file", newFile,
        ])
        #expect(change.status == 0, "\(change.stderr)")
        #expect(try sandbox.run(["verify", "--passphrase-file", oldFile]).status == 77)
        #expect(try sandbox.run(["verify", "--passphrase-file", newFile]).status == 0)
        let viaEnvironment = try sandbox.run(
            ["passphrase", "change", "--passphrase-file", newFile],
            environment: ["COFFER_NEW_PASSPHRASE": "third passphrase"])
        #expect(viaEnvironment.status == 0)
        #expect(try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "third passphrase"]).status == 0)

        // Key management never accepts a session in place of the passphrase.
        let token = try #require(
            exportedToken(try sandbox.run(["unlock"], environment: ["COFFER_PASSPHRASE": "third passphrase"]).stdout))
        #expect(try sandbox.run(["recovery-key", "create"], environment: ["COFFER_SESSION": token]).status == 77)

        let create = try sandbox.run(
            ["recovery-key", "create"], environment: ["COFFER_PASSPHRASE": "third passphrase"])
        #expect(create.status == 0)
        let keyText = try #require(
            create.stdout.range(of: #"([0-9A-Z]{4}-){7}[0-9A-Z]{4}"#, options: .regularExpression).map {
                String(create.stdout[$0])
            })
        let keyFile = sandbox.directory.secretFile("recovery", keyText + "\n")
        #expect(try sandbox.run(["verify", "--recovery-key-file", keyFile]).status == 0)

        // Forgotten passphrase: the recovery key sets a new one.
        let reset = try sandbox.run(
            ["passphrase", "change", "--recovery-key-file", keyFile],
            environment: ["COFFER_NEW_PASSPHRASE": "fresh and remembered"])
        #expect(reset.status == 0, "\(reset.stderr)")
        #expect(try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "fresh and remembered"]).status == 0)

        #expect(
            try sandbox.run(["recovery-key", "remove"], environment: ["COFFER_PASSPHRASE": "fresh and remembered"])
                .status == 0)
        let afterRemove = try sandbox.run(["verify", "--recovery-key-file", keyFile])
        #expect(afterRemove.status == 77)
        #expect(afterRemove.stderr.contains("no recovery key"))
    }

    @Test func rekeyReencryptsEverythingAndEndsSessions() throws {
        let sandbox = Sandbox()
        let passphraseFile = try sandbox.initVault()
        let payloads = (0..<20).map { Data("record \($0)".utf8) }
        try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase("old passphrase")))
            .apply(payloads.map { .put(.random(), $0) })
        let token = try #require(
            exportedToken(try sandbox.run(["unlock", "--passphrase-file", passphraseFile]).stdout))
        let before = try withRawDatabase(sandbox.vault) { try Data.fetchAll($0, sql: "SELECT sealed FROM page") }

        let rekey = try sandbox.run(["rekey", "--passphrase-file", passphraseFile])
        #expect(rekey.status == 0, "\(rekey.stderr)")
        #expect(
            rekey.stdout.contains("40 records"),
            "20 test records, the settings and 18 default categories made by init, and the ledger's summary")

        let after = try withRawDatabase(sandbox.vault) { try Data.fetchAll($0, sql: "SELECT sealed FROM page") }
        #expect(Set(after).isDisjoint(with: Set(before)))
        let reopened = try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase("old passphrase")))
        #expect(reopened.recordCount == 40)
        #expect(Set(payloads).isSubset(of: Set(reopened.records.map(\.payload))))
        #expect(try sandbox.run(["verify"], environment: ["COFFER_SESSION": token]).status == 77)
        #expect(try sandbox.run(["rekey"], environment: ["COFFER_PASSPHRASE": "wrong"]).status == 77)
    }
}
