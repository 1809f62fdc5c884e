import CofferTestSupport
import Foundation
import Testing

@testable import CofferCLI

/// Drives the real passphrase prompt through tmux, as a person at a terminal would.
@Suite(.serialized, .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")))
struct TerminalTests {
    let sandbox = Sandbox()
    let session = "coffer-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// Runs tmux with posix_spawn and waitpid: Foundation's Process does not reap the tmux
    /// client that daemonises the server, and would wait for ever.
    @discardableResult
    func tmux(_ arguments: String...) throws -> String {
        let outputFile = sandbox.directory.path("tmux-output")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        // The server socket lives in the sandbox, which is removed with the test: nothing is left behind.
        let argv =
            (["/usr/bin/tmux", "-S", sandbox.directory.path("tmux.socket").path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        // The test runner's threads block most signals and a spawned child inherits that mask:
        // a tmux server started so ignores kill-server's shutdown and outlives the test. Start
        // it with no signal blocked and every handler at its default.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/usr/bin/tmux", &actions, &attributes, argv, environ) == 0 else {
            throw CocoaError(.executableLoad)
        }
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        return String(decoding: try Data(contentsOf: outputFile), as: UTF8.self)
    }

    func screen() throws -> String { try tmux("capture-pane", "-p", "-t", session) }

    /// Clears the terminal and waits until it is clear before typing `line`, so that a marker
    /// the last command left on screen cannot satisfy the next `waitFor`.
    func typeOnClearScreen(_ line: String) throws {
        try tmux("send-keys", "-t", session, "clear", "Enter")
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let shown = try screen().split(separator: "\n").filter { !$0.allSatisfy(\.isWhitespace) }
            if shown.count <= 1 { break }
            usleep(50_000)
        }
        try tmux("send-keys", "-t", session, line, "Enter")
    }

    /// A bank statement of `rows` spending lines across 2025, one shop each.
    func writeStatement(rows: Int) throws -> URL {
        let statement = sandbox.directory.path("statement-\(rows).csv")
        var text = "Date,Description,Amount\n"
        for index in 0..<rows {
            text +=
                "2025-\(String(format: "%02d", index % 12 + 1))-\(String(format: "%02d", index % 28 + 1)),SHOP \(index),-\(index % 90 + 1).25\n"
        }
        try Data(text.utf8).write(to: statement)
        return statement
    }

    /// A shell in a detached tmux session, with the sandbox's environment and `extra`.
    func startShell(_ extra: [String: String] = [:], width: Int = 120, height: Int = 30) throws {
        let environment = sandbox.baseEnvironment.merging(extra) { $1 }.map { "\($0.key)='\($0.value)'" }
            .joined(separator: " ")
        try tmux(
            "new-session", "-d", "-s", session, "-x", "\(width)", "-y", "\(height)",
            "env -i TERM=xterm \(environment) /bin/sh")
    }

    /// A new vault, and `coffer shell` on it in a tmux session at its prompt; the shell prints
    /// `SHELL-EXIT=N` when coffer ends.
    func openCofferShell(_ environment: [String: String]) throws {
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        try startShell(environment)
        try tmux("send-keys", "-t", session, "\(cofferBinary.path) shell; echo SHELL-EXIT=$?", "Enter")
        _ = try waitFor("coffer>")
    }

    /// The default wait is long because a loaded CI machine runs many key derivations at once;
    /// a screen that shows the text early returns at once.
    func waitFor(_ text: String, timeout: TimeInterval = 90) throws -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var current = ""
        while Date() < deadline {
            current = try screen()
            if current.contains(text) { return current }
            usleep(100_000)
        }
        Issue.record("screen never showed '\(text)':\n\(current)")
        return current
    }

    @Test func promptsWithoutEchoAndConfirmsANewPassphrase() throws {
        try startShell(width: 120, height: 30)
        defer { _ = try? tmux("kill-server") }
        let secret = "tty-secret-\(UInt32.random(in: 0...UInt32.max))"

        try tmux("send-keys", "-t", session, "\(cofferBinary.path) init --kdf interactive; echo EXIT=$?", "Enter")
        _ = try waitFor("New passphrase for")
        try tmux("send-keys", "-t", session, secret, "Enter")
        _ = try waitFor("Repeat it:")
        try tmux("send-keys", "-t", session, secret, "Enter")
        var shown = try waitFor("EXIT=0")
        #expect(shown.contains("Created an empty vault"))
        #expect(!shown.contains(secret), "the passphrase must never be echoed")

        try typeOnClearScreen("\(cofferBinary.path) verify; echo VERIFY-EXIT=$?")
        _ = try waitFor("Passphrase for ")
        try tmux("send-keys", "-t", session, secret, "Enter")
        shown = try waitFor("VERIFY-EXIT=0")
        #expect(shown.contains("Vault OK"))
        #expect(!shown.contains(secret))

        // Mismatched confirmation: refused with 64, nothing created.
        try typeOnClearScreen(
            "\(cofferBinary.path) init --vault \(sandbox.directory.path("second.coffer").path); echo MISMATCH-EXIT=$?")
        _ = try waitFor("New passphrase for")
        try tmux("send-keys", "-t", session, "one", "Enter")
        _ = try waitFor("Repeat it:")
        try tmux("send-keys", "-t", session, "two", "Enter")
        // The typed command shows "MISMATCH-EXIT=$?": wait for the status itself, not the echo of the line.
        shown = try waitFor("MISMATCH-EXIT=6")
        #expect(shown.contains("do not match"))
        #expect(shown.contains("MISMATCH-EXIT=64"))
        #expect(!FileManager.default.fileExists(atPath: sandbox.directory.path("second.coffer").path))
    }

    @Test func deleteAsksForConfirmationOnATerminal() throws {
        try startShell(["COFFER_PASSPHRASE": "terminal passphrase"])
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try tmux(
            "send-keys", "-t", session,
            "\(coffer) init --kdf interactive && \(coffer) account add Spare --category Cash --value 5; echo SETUP=$?",
            "Enter")
        _ = try waitFor("SETUP=0")

        try tmux("send-keys", "-t", session, "\(coffer) account delete Spare; echo KEEP=$?", "Enter")
        _ = try waitFor("[y/N]")
        try tmux("send-keys", "-t", session, "n", "Enter")
        var shown = try waitFor("KEEP=0")
        #expect(shown.contains("Kept Spare"))

        try typeOnClearScreen("\(coffer) account delete Spare; echo GONE=$?")
        _ = try waitFor("[y/N]")
        try tmux("send-keys", "-t", session, "y", "Enter")
        shown = try waitFor("GONE=0")
        #expect(shown.contains("Deleted Spare"))
    }

    @Test func aLargeImportShowsProgressOnATerminalAndIsOneChange() throws {
        let environment = sandbox.baseEnvironment.merging([
            "COFFER_PASSPHRASE": "terminal passphrase", "COFFER_TODAY": "2025-12-31",
        ]) { $1 }
        .map { "\($0.key)='\($0.value)'" }.joined(separator: " ")
        let statement = try writeStatement(rows: 3000)
        try tmux(
            "new-session", "-d", "-s", session, "-x", "120", "-y", "30", "env -i TERM=xterm \(environment) /bin/sh")
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try tmux(
            "send-keys", "-t", session,
            "\(coffer) init --kdf interactive >/dev/null; \(coffer) import csv \(statement.path) --into transactions >/dev/null; echo IMPORT=$?",
            "Enter")
        let shown = try waitFor("IMPORT=0")
        #expect(shown.contains("IMPORT=0"))
        #expect(shown.contains("… Reading \(statement.path)"))
        #expect(shown.contains("… Importing 3000 lines in one transaction"))
        #expect(shown.contains("… done in"))

        // Not on a terminal: no progress at all, and the 3,000 rows are one undoable change.
        let piped = try sandbox.run(
            ["import", "csv", statement.path, "--into", "transactions"],
            environment: ["COFFER_PASSPHRASE": "terminal passphrase"])
        #expect(piped.status == 0 && piped.stderr.isEmpty && piped.stdout.contains("3000 already in the vault"))
        let undo = try sandbox.run(["undo"], environment: ["COFFER_PASSPHRASE": "terminal passphrase"])
        #expect(undo.stdout.contains("Undone: Imported 3000 transactions"), "\(undo.stdout)")
        let budget = try sandbox.run(
            ["budget", "--month", "2025-01", "--json"], environment: ["COFFER_PASSPHRASE": "terminal passphrase"])
        #expect(budget.stdout.contains("\"spent\" : \"0.00\""))
    }

    /// Restore on a fresh machine asks once, naming the archive: one prompt, one key derivation
    /// (the vault is built with the keys that prompt gave), one read of the archive. Replacing a
    /// newer vault asks its question without a second passphrase prompt.
    @Test func restoreAsksForThePassphraseOnceNamingTheArchive() throws {
        let passphrase = "restore passphrase \(UInt32.random(in: 0...UInt32.max))"
        let backups = sandbox.directory.path("backups")
        try FileManager.default.createDirectory(at: backups, withIntermediateDirectories: true)
        #expect(
            try sandbox.run(["init", "--kdf", "interactive"], environment: ["COFFER_PASSPHRASE": passphrase]).status
                == 0)
        #expect(
            try sandbox.run(
                ["account", "add", "Savings", "--category", "Savings", "--value", "100"],
                environment: ["COFFER_PASSPHRASE": passphrase]
            ).status == 0)
        #expect(
            try sandbox.run(["backup", "create", "--to", backups.path], environment: ["COFFER_PASSPHRASE": passphrase])
                .status == 0)
        #expect(
            try sandbox.run(["update", "Savings", "150"], environment: ["COFFER_PASSPHRASE": passphrase]).status == 0)
        let archive = try #require(
            try FileManager.default.contentsOfDirectory(atPath: backups.path).first { $0.hasSuffix(".cbak") })
        try startShell(width: 200, height: 40)
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        let fresh = sandbox.directory.path("fresh.coffer").path
        try tmux(
            "send-keys", "-t", session,
            "\(coffer) restore \(backups.path)/\(archive) --to \(fresh) --vault /nonexistent/vault.coffer; echo RESTORED=$((100 + $?))",
            "Enter")
        var shown = try waitFor("Passphrase for archive \(archive)")
        try tmux("send-keys", "-t", session, passphrase, "Enter")
        // The exit status plus 100, so the typed command line never matches what is awaited.
        shown = try waitFor("RESTORED=1")
        #expect(shown.contains("RESTORED=100"), "\(shown)")
        #expect(shown.components(separatedBy: "Passphrase").count - 1 == 1, "exactly one prompt:\n\(shown)")
        #expect(shown.contains("#1, made "), "the prompt names the archive's number and date")
        #expect(!shown.contains(passphrase))

        // The vault changed after the archive: replacing it asks a question, never a second passphrase.
        try typeOnClearScreen(
            "\(coffer) restore \(backups.path)/\(archive) --to \(sandbox.vault.path) --replace; echo REPLACED=$((100 + $?))"
        )
        _ = try waitFor("Passphrase for archive")
        try tmux("send-keys", "-t", session, passphrase, "Enter")
        shown = try waitFor("[y/N]")
        #expect(shown.contains("has changes made after the archive"), "\(shown)")
        try tmux("send-keys", "-t", session, "y", "Enter")
        shown = try waitFor("REPLACED=1")
        #expect(shown.contains("REPLACED=100"), "\(shown)")
        #expect(shown.components(separatedBy: "Passphrase").count - 1 == 1, "one prompt when replacing:\n\(shown)")
    }

    /// `Next:` and `Undo with:` are advice for a person: at a terminal they appear (on stderr),
    /// `-q` silences them, and stdout, which a script reads, never carries them.
    @Test func adviceReachesAPersonAtATerminalOnly() throws {
        try startShell(["COFFER_PASSPHRASE": "terminal passphrase"])
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try tmux("send-keys", "-t", session, "\(coffer) init --kdf interactive; echo SETUP=$?", "Enter")
        _ = try waitFor("SETUP=0")
        try typeOnClearScreen("\(coffer) account add Spare --category Cash; echo ONE=$?")
        var shown = try waitFor("ONE=0")
        #expect(shown.contains("Next: coffer update \"Spare\" AMOUNT"), "\(shown)")
        try typeOnClearScreen("\(coffer) -q account add Other --category Cash; echo TWO=$?")
        shown = try waitFor("TWO=0")
        #expect(shown.contains("Added Other"), "\(shown)")
        #expect(!shown.contains("Next:"), "-q silences the advice:\n\(shown)")
        try typeOnClearScreen("\(coffer) account add Third --category Cash 2>/dev/null; echo THREE=$?")
        shown = try waitFor("THREE=0")
        #expect(!shown.contains("Next:"), "the advice is on stderr, never on stdout:\n\(shown)")
    }

    /// `coffer shell`: one passphrase prompt naming the vault, then commands without `coffer`.
    /// What is typed is in no process's command line while the shell runs, and in no file
    /// afterwards (no history is written); it leaves on `exit`, and on its own when idle.
    @Test func theShellUnlocksOnceAndLeavesNoTrace() throws {
        try startShell(["COFFER_TODAY": "2026-11-24"])
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        let canary = "Canary\(UInt32.random(in: 100_000...UInt32.max))"
        let passphrase = "shell passphrase"
        try tmux(
            "send-keys", "-t", session,
            "COFFER_PASSPHRASE='\(passphrase)' \(coffer) init --kdf interactive; echo INIT=$?", "Enter")
        _ = try waitFor("INIT=0")
        try typeOnClearScreen("\(coffer) shell; echo SHELL-EXIT=$?")
        #expect(try waitFor("Passphrase for ").contains("Passphrase for ~/data/coffer/vault.coffer:"))
        try tmux("send-keys", "-t", session, passphrase, "Enter")
        _ = try waitFor("coffer>")
        try tmux("send-keys", "-t", session, "account add \(canary) --category Cash --value 5", "Enter")
        _ = try waitFor("Added \(canary)")
        let processes = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        #expect(!processes.isEmpty)
        for pid in processes {
            guard let cmdline = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { continue }
            #expect(!String(decoding: cmdline, as: UTF8.self).contains(canary), "process \(pid) shows what was typed")
        }
        try tmux("send-keys", "-t", session, "spend 4.50 Groceries", "Enter")
        try tmux("send-keys", "-t", session, "spnd 1 Groceries", "Enter")
        _ = try waitFor("did you mean 'spend'?")
        try tmux("send-keys", "-t", session, "overview", "Enter")
        var shown = try waitFor("Budget: ")
        #expect(shown.contains(canary))
        #expect(shown.components(separatedBy: "Passphrase for").count - 1 == 1, "one prompt for every command")
        try tmux("send-keys", "-t", session, "exit", "Enter")
        shown = try waitFor("SHELL-EXIT=0")

        try typeOnClearScreen("\(coffer) shell --timeout 1s; echo IDLE-EXIT=$?")
        _ = try waitFor("Passphrase for ")
        try tmux("send-keys", "-t", session, passphrase, "Enter")
        shown = try waitFor("IDLE-EXIT=0")
        #expect(shown.contains("No input for 1s"), "\(shown)")

        // Nothing typed was written anywhere but (encrypted) into the vault.
        let written = FileManager.default.enumerator(atPath: sandbox.directory.url.path)?.allObjects as? [String] ?? []
        for name in written where !name.contains("tmux-output") {
            let data = FileManager.default.contents(atPath: sandbox.directory.url.appendingPathComponent(name).path)
            #expect(data.map { !String(decoding: $0, as: UTF8.self).contains(canary) } ?? true, "\(name) holds it")
        }
    }

    /// Inside the shell commands take no `coffer` word, and neither do the hints: `Undo with:
    /// undo`, `Next: update "Spare" AMOUNT`; a command the shell refuses keeps it (run outside).
    @Test func theShellsHintsLeaveOutTheCofferWord() throws {
        defer { _ = try? tmux("kill-server") }
        try openCofferShell(["COFFER_PASSPHRASE": "hint passphrase", "COFFER_TODAY": "2026-11-24"])
        try tmux("send-keys", "-t", session, "account add Spare --category Cash", "Enter")
        var shown = try waitFor("Next: ")
        #expect(shown.contains("Next: update \"Spare\" AMOUNT"), "\(shown)")
        try tmux("send-keys", "-t", session, "spend 4 Groceries", "Enter")
        shown = try waitFor("Undo with: ")
        #expect(shown.contains("Undo with: undo"), "\(shown)")
        try tmux("send-keys", "-t", session, "spnd 4 Groceries", "Enter")
        _ = try waitFor("did you mean")
        try tmux("send-keys", "-t", session, "rekey", "Enter")
        shown = try waitFor("Leave it (exit)")
        #expect(shown.contains("Leave it (exit) and run: coffer rekey"), "refused here, so run outside: \(shown)")
        #expect(!shown.contains(": coffer undo") && !shown.contains("Next: coffer"), "\(shown)")
        try tmux("send-keys", "-t", session, "exit", "Enter")
        _ = try waitFor("SHELL-EXIT=0")
        // Outside the shell the word stays.
        try typeOnClearScreen("\(cofferBinary.path) spend 1 Groceries; echo OUTSIDE=$?")
        shown = try waitFor("OUTSIDE=0")
        #expect(shown.contains("Undo with: coffer undo"), "\(shown)")
    }

    /// Ctrl-D at the shell's prompt leaves it, as in any shell, with exit 0.
    @Test func ctrlDLeavesTheShell() throws {
        defer { _ = try? tmux("kill-server") }
        try openCofferShell(["COFFER_PASSPHRASE": "eof passphrase", "COFFER_TODAY": "2026-11-24"])
        try tmux("send-keys", "-t", session, "C-d")
        _ = try waitFor("SHELL-EXIT=0")
    }

    /// A session that was ended (`coffer lock`) is no way in; at a terminal the passphrase is
    /// asked for instead, as sudo does, and the command goes on.
    @Test func anEndedSessionFallsBackToThePrompt() throws {
        let passphrase = "fallback passphrase"
        #expect(
            try sandbox.run(["init", "--kdf", "interactive"], environment: ["COFFER_PASSPHRASE": passphrase]).status
                == 0)
        let unlocked = try sandbox.run(["unlock"], environment: ["COFFER_PASSPHRASE": passphrase])
        let token = try #require(unlocked.stdout.split(separator: "\"").dropFirst().first.map(String.init))
        #expect(try sandbox.run(["lock"], environment: ["COFFER_SESSION": token]).status == 0)
        let script = try sandbox.run(["overview"], environment: ["COFFER_SESSION": token])
        #expect(script.status == 77, "without a terminal it fails at once: \(script.stderr)")

        try startShell(["COFFER_SESSION": token])
        defer { _ = try? tmux("kill-server") }
        try tmux("send-keys", "-t", session, "\(cofferBinary.path) overview; echo EXIT=$?", "Enter")
        var shown = try waitFor("Passphrase for ")
        #expect(shown.contains("Asking for the passphrase instead"), "\(shown)")
        try tmux("send-keys", "-t", session, passphrase, "Enter")
        shown = try waitFor("EXIT=0")
        #expect(shown.contains("Net worth"), "\(shown)")
    }

    /// The paper recovery key can be typed at a prompt (not echoed), and `rekey` says what it
    /// will change and asks before acting.
    @Test func theRecoveryKeyIsTypedAndRekeyAsksFirst() throws {
        let passphrase = ["COFFER_PASSPHRASE": "rekey passphrase"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: passphrase).status == 0)
        let created = try sandbox.run(["recovery-key", "create"], environment: passphrase)
        let lines = created.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let recoveryKey = try #require(lines.first { $0.split(separator: "-").count >= 6 && !$0.contains(" ") })
        let noTerminal = try sandbox.run(["verify", "--recovery-key"])
        #expect(noTerminal.status == 77 && noTerminal.stderr.contains("--recovery-key-file"), "\(noTerminal.stderr)")

        try startShell()
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try tmux("send-keys", "-t", session, "\(coffer) verify --recovery-key; echo TYPED=$?", "Enter")
        _ = try waitFor("Recovery key for ~/")
        try tmux("send-keys", "-t", session, recoveryKey, "Enter")
        var shown = try waitFor("TYPED=0")
        #expect(shown.contains("TYPED=0") && shown.contains("Vault OK"), "\(shown)")
        #expect(!shown.contains(recoveryKey), "the recovery key must never be echoed")

        func generation() throws -> Int? {
            let status = try sandbox.run(["status", "--json"])
            return (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?[
                "keyGeneration"] as? Int
        }
        try typeOnClearScreen("COFFER_PASSPHRASE='rekey passphrase' \(coffer) rekey; echo NO=$?")
        shown = try waitFor("[y/N]")
        #expect(shown.contains("Every unlocked session of this vault will end"), "\(shown)")
        #expect(shown.contains("The recovery key keeps working."))
        try tmux("send-keys", "-t", session, "n", "Enter")
        shown = try waitFor("NO=0")
        #expect(shown.contains("NO=0") && shown.contains("nothing was changed"), "\(shown)")
        #expect(try generation() == 1, "answering no changes nothing")

        try typeOnClearScreen("COFFER_PASSPHRASE='rekey passphrase' \(coffer) rekey; echo YES=$?")
        _ = try waitFor("[y/N]")
        try tmux("send-keys", "-t", session, "y", "Enter")
        shown = try waitFor("YES=0")
        #expect(shown.contains("YES=0") && shown.contains("Rekeyed"), "\(shown)")
        #expect(try generation() == 2)
        // The recovery key survived the rekey, typed again.
        try typeOnClearScreen("\(coffer) verify --recovery-key; echo AFTER=$?")
        _ = try waitFor("Recovery key for ~/")
        try tmux("send-keys", "-t", session, recoveryKey, "Enter")
        #expect(try waitFor("AFTER=0").contains("AFTER=0"))
    }

    /// A value ten times off is said and asked about at a terminal; no records nothing.
    @Test func aValueTenTimesOffIsAskedAbout() throws {
        let environment = ["COFFER_PASSPHRASE": "doubt passphrase"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        #expect(
            try sandbox.run(
                ["account", "add", "Savings", "--category", "Cash", "--value", "1200"], environment: environment
            )
            .status == 0)
        try startShell(environment)
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try tmux("send-keys", "-t", session, "\(coffer) update Savings 12500; echo NO=$?", "Enter")
        var shown = try waitFor("[y/N]")
        #expect(shown.contains("£12,500.00 is more than ten times Savings's current value (£1,200.00)."), "\(shown)")
        try tmux("send-keys", "-t", session, "n", "Enter")
        shown = try waitFor("NO=0")
        #expect(shown.contains("Not recorded. Nothing was changed."))
        let json = try sandbox.run(["account", "show", "Savings", "--json"], environment: environment).stdout
        #expect(json.contains("\"1200.00\""), "\(json)")

        try typeOnClearScreen("\(coffer) update Savings 12500; echo YES=$?")
        _ = try waitFor("[y/N]")
        try tmux("send-keys", "-t", session, "y", "Enter")
        shown = try waitFor("YES=0")
        #expect(shown.contains("Savings: £12,500.00"), "\(shown)")
    }

    /// At 40 columns every screen still reads: no line is wider than the terminal (tmux joins
    /// what the terminal wrapped, so a wrapped line shows as a long one), tables cut names not
    /// amounts, and CJK and emoji notes keep the columns aligned. The ids and invoice numbers
    /// that `Next:` hints ask for stay whole: other columns go first.
    @Test func everyScreenReadsAtFortyColumns() throws {
        let environment = ["COFFER_PASSPHRASE": "narrow passphrase", "COFFER_TODAY": "2026-11-22"]
        #expect(try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment).status == 0)
        for command in [
            ["spend", "12", "Groceries", "--note", "ユニクロ 銀座 😀"], ["client", "add", "Northwind Traders International"],
            ["invoice", "new", "Northwind", "--item", "Design work", "2.5", "1200", "--send"],
        ] {
            #expect(try sandbox.run(command, environment: environment).status == 0, "\(command)")
        }
        try startShell(environment, width: 40, height: 200)
        defer { _ = try? tmux("kill-server") }
        for (step, command) in [
            "overview", "account list", "transaction list", "budget", "budget savings", "goal list", "status",
            "search groceries", "report networth --months 12", "report cashflow", "report categories --months 3",
            "report year", "invoices",
        ].enumerated() {
            // A marker per step as well, in case a step's screen is not cleared.
            try typeOnClearScreen("\(cofferBinary.path) \(command); echo DONE-\(step)-$?")
            _ = try waitFor("DONE-\(step)-0")
            let joined = try tmux("capture-pane", "-p", "-J", "-t", session)
            let lines = joined.split(separator: "\n").map(String.init)
            // The command line as typed (the shell's echo, which may outlive `clear`) is not Coffer's output.
            let wide = lines.filter { DisplayWidth.of($0) > 40 && !$0.contains("echo DONE-") }
            #expect(wide.isEmpty, "coffer \(command) at 40 columns:\n\(wide.joined(separator: "\n"))")
            if command == "account list" {
                #expect(lines.contains { $0.contains("-£178,751.85") }, "amounts whole: \(joined)")
                #expect(lines.contains { $0.contains("…") }, "long names cut")
            }
            if command == "transaction list" {
                // Amounts end in the same cell on every row, the CJK and emoji note's too.
                let rows = lines.filter { $0.contains("£") }
                let amountEnds = rows.compactMap { row -> Int? in
                    guard let pound = row.firstIndex(of: "£") else { return nil }
                    let end = row[pound...].firstIndex(of: " ") ?? row.endIndex
                    return DisplayWidth.of(String(row[..<end]))
                }
                #expect(rows.contains { $0.contains("ユニクロ") } || rows.contains { $0.contains("…") })
                #expect(Set(amountEnds).count == 1, "aligned: \(rows.joined(separator: "\n"))")
            }
            if ["transaction list", "budget", "budget savings", "search groceries"].contains(command) {
                // Every transaction row ends in its whole id (8 hex digits), for `transaction edit ID`.
                let rows = lines.filter { line in [" -£", " +£", " →£"].contains { line.contains($0) } }
                #expect(!rows.isEmpty, "coffer \(command): \(joined)")
                let cut = rows.filter { $0.range(of: #" [0-9a-f]{8}$"#, options: .regularExpression) == nil }
                #expect(cut.isEmpty, "coffer \(command) keeps the ids:\n\(cut.joined(separator: "\n"))")
            }
            if command == "invoices" {
                #expect(lines.contains { $0.contains("INV-0001") }, "the invoice number whole: \(joined)")
            }
        }
    }

    /// At a terminal the reports draw charts — net worth as an area with labelled axes, spending
    /// and the distribution as bars — above the tables that state every figure; under NO_COLOR
    /// only the tables.
    @Test func reportsDrawChartsAtATerminalOnly() throws {
        let environment = ["COFFER_PASSPHRASE": "chart passphrase", "COFFER_TODAY": "2026-11-22"]
        #expect(try sandbox.run(["demo", "--vault", sandbox.vault.path], environment: environment).status == 0)
        try startShell(environment, width: 100, height: 60)
        defer { _ = try? tmux("kill-server") }
        let coffer = cofferBinary.path
        try typeOnClearScreen("\(coffer) report networth --months 6; echo CHART=$?")
        var shown = try waitFor("CHART=0")
        #expect(shown.contains("│") && shown.contains("└") && shown.contains("█"), "an area chart: \(shown)")
        #expect(shown.contains("Jun 2026") && shown.contains("Nov 2026"), "x axis labelled")
        #expect(shown.contains("Month end") && shown.contains("2026-10-31"), "and the table with every figure")
        #expect(shown.contains("Where it sits on 2026-11-22"), "the distribution as bars")
        try typeOnClearScreen("\(coffer) report cashflow --months 3; echo BARS=$?")
        shown = try waitFor("BARS=0")
        #expect(shown.contains("Spending each month") && shown.contains("█"), "\(shown)")
        try typeOnClearScreen("NO_COLOR=1 \(coffer) report networth --months 6; echo PLAIN=$?")
        shown = try waitFor("PLAIN=0")
        #expect(!shown.contains("└") && !shown.contains("█") && shown.contains("Month end"), "\(shown)")
    }

    /// The shell edits lines (libedit): Tab completes commands and names (quoting names with
    /// spaces), the up arrow recalls this shell's lines, and the idle timeout holds mid-line.
    @Test func theShellCompletesAndEditsLines() throws {
        let environment = ["COFFER_PASSPHRASE": "editing passphrase", "COFFER_TODAY": "2026-11-24"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        #expect(
            try sandbox.run(
                ["account", "add", "Barclays Current Account", "--category", "Cash", "--value", "100"],
                environment: environment
            ).status == 0)
        try startShell(environment)
        defer { _ = try? tmux("kill-server") }
        try tmux("send-keys", "-t", session, "\(cofferBinary.path) shell; echo SHELL-EXIT=$?", "Enter")
        _ = try waitFor("coffer>")
        try tmux("send-keys", "-t", session, "spe", "Tab")
        _ = try waitFor("coffer> spend")
        try tmux("send-keys", "-t", session, "4 gro", "Tab")
        _ = try waitFor("coffer> spend 4 Groceries")
        try tmux("send-keys", "-t", session, "Enter")
        _ = try waitFor("Spent £4.00")
        try tmux("send-keys", "-t", session, "upd", "Tab", "Bar", "Tab", "120", "Enter")
        _ = try waitFor("Barclays Current Account: £120.00")
        // Up recalls the line; Backspace edits it.
        try tmux("send-keys", "-t", session, "Up")
        _ = try waitFor("coffer> update \"Barclays Current Account\" 120")
        try tmux("send-keys", "-t", session, "BSpace", "BSpace", "BSpace", "150", "Enter")
        _ = try waitFor("Barclays Current Account: £150.00")
        try tmux("send-keys", "-t", session, "exit", "Enter")
        _ = try waitFor("SHELL-EXIT=0")

        // Idle in the middle of a line: the shell still leaves.
        try typeOnClearScreen("\(cofferBinary.path) shell --timeout 2s; echo IDLE-EXIT=$?")
        _ = try waitFor("coffer>")
        try tmux("send-keys", "-t", session, "spend 1")
        let shown = try waitFor("IDLE-EXIT=0")
        #expect(shown.contains("No input for 2s"), "\(shown)")
    }

    /// Long work draws a percentage and an estimate on the terminal (tmux's pipe-pane records
    /// every byte, including the line the meter redraws), and wipes it when done.
    @Test func longWorkShowsPercentAndTimeLeft() throws {
        let environment = ["COFFER_PASSPHRASE": "meter passphrase", "COFFER_TODAY": "2025-12-31"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        // Enough rows that a stage runs past the half second the estimate waits for, on a fast machine too.
        let statement = try writeStatement(rows: 150_000)
        let usb = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        try startShell(environment)
        defer { _ = try? tmux("kill-server") }
        let raw = sandbox.directory.path("terminal.raw")
        try tmux("pipe-pane", "-o", "-t", session, "cat >> '\(raw.path)'")
        let coffer = cofferBinary.path
        try tmux(
            "send-keys", "-t", session,
            "\(coffer) import csv \(statement.path) --into transactions >/dev/null && \(coffer) rekey --yes >/dev/null && \(coffer) backup create --to \(usb.path) >/dev/null; echo WORK=$?",
            "Enter")
        let shown = try waitFor("WORK=0", timeout: 180)
        #expect(shown.contains("WORK=0"))
        let bytes = String(decoding: (try? Data(contentsOf: raw)) ?? Data(), as: UTF8.self)
        for stage in ["Writing", "Re-encrypting"] {
            #expect(bytes.contains("… \(stage) "), "\(stage) is shown")
        }
        #expect(bytes.range(of: #"… [A-Za-z-]+ \d{1,3}%"#, options: .regularExpression) != nil)
        #expect(bytes.contains("left"), "an estimate of the time left")
        #expect(bytes.contains("\r\u{1B}[K"), "the meter wipes its line")
        #expect(!shown.contains("%"), "nothing of the meter is left on the screen")
    }
}
