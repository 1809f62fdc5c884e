import CofferTestSupport
import Foundation
import Testing

/// The configuration file (`$XDG_CONFIG_HOME/coffer/config.toml`) and its precedence under flags
/// and environment variables, through the real binary.
@Suite struct ConfigurationTests {
    let sandbox = Sandbox()
    var configFile: URL { sandbox.directory.path(".config/coffer/config.toml") }

    func writeConfig(_ text: String, mode: Int = 0o600) throws {
        try FileManager.default.createDirectory(
            at: configFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: configFile)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: configFile.path)
    }

    /// `vault`, `passphrase_command` and `backup.targets` from the file; a flag or variable wins.
    @Test func theFileSetsDefaultsThatFlagsAndVariablesOverride() throws {
        let elsewhere = sandbox.directory.path("elsewhere/finance.coffer")
        try FileManager.default.createDirectory(
            at: elsewhere.deletingLastPathComponent(), withIntermediateDirectories: true)
        let passphraseFile = sandbox.directory.secretFile("pass", "configured passphrase\n")
        let usb = sandbox.directory.path("usb")
        try FileManager.default.createDirectory(at: usb, withIntermediateDirectories: true)
        try writeConfig(
            """
            # Set once.
            vault = "~/elsewhere/finance.coffer"
            passphrase_command = "cat \(passphraseFile)"
            color = "always"

            [session]
            timeout = "5m"
            max_age = "1h"

            [backup]
            targets = ["\(usb.path)"]
            """)
        let created = try sandbox.run(["init", "--kdf", "interactive", "--passphrase-file", passphraseFile])
        #expect(created.status == 0, "\(created.stderr)")
        #expect(FileManager.default.fileExists(atPath: elsewhere.path), "init used the configured vault path")
        #expect(!FileManager.default.fileExists(atPath: sandbox.vault.path))

        // No passphrase given anywhere: the configured command supplies it.
        let verify = try sandbox.run(["verify"])
        #expect(verify.status == 0, "\(verify.stderr)")
        // COFFER_PASSPHRASE beats the file's command (and here is wrong).
        #expect(try sandbox.run(["verify"], environment: ["COFFER_PASSPHRASE": "wrong"]).status == 77)
        // COFFER_VAULT beats the file's vault, and --vault beats both.
        let missing = sandbox.directory.path("missing.coffer").path
        let viaEnvironment = try sandbox.run(["status"], environment: ["COFFER_VAULT": missing])
        #expect(viaEnvironment.status == 66 && viaEnvironment.stderr.contains("missing.coffer"))
        let viaFlag = try sandbox.run(
            ["status", "--vault", elsewhere.path], environment: ["COFFER_VAULT": missing])
        #expect(viaFlag.status == 0, "\(viaFlag.stderr)")

        // The session defaults.
        let unlock = try sandbox.run(["unlock"])
        #expect(unlock.stderr.contains("5m without use, at most 1h"), "\(unlock.stderr)")
        // An explicit flag wins over the file.
        #expect(try sandbox.run(["unlock", "--timeout", "2m"]).stderr.contains("2m without use, at most 1h"))

        // backup.targets: a backup with no --to and no saved target goes there.
        let backup = try sandbox.run(["backup", "create"])
        #expect(backup.status == 0, "\(backup.stderr)")
        let archives = try FileManager.default.contentsOfDirectory(atPath: usb.path).filter { $0.hasSuffix(".cbak") }
        #expect(archives.count == 1, "\(archives)")

        // color = "always" colours even a pipe; NO_COLOR beats the file, and --color beats both.
        #expect(try sandbox.run(["overview"]).stdout.contains("\u{1B}["))
        #expect(!(try sandbox.run(["overview"], environment: ["NO_COLOR": "1"]).stdout.contains("\u{1B}[")))
        #expect(!(try sandbox.run(["overview", "--color=never"]).stdout.contains("\u{1B}[")))
    }

    /// A typo, a wrong type, broken TOML or a file others can change: exit 78 with the reason,
    /// before anything runs.
    @Test func aBadFileIsRefusedByName() throws {
        try writeConfig("vualt = \"/tmp/x\"\n")
        var result = try sandbox.run(["status"])
        #expect(result.status == 78)
        #expect(
            result.stderr.contains("error: ~/.config/coffer/config.toml: unknown setting 'vualt'."), "\(result.stderr)")
        #expect(result.stderr.contains("hint: did you mean 'vault'?"))

        let cases: [(file: String, says: String)] = [
            ("[session]\ntimout = \"5m\"\n", "did you mean 'session.timeout'?"),
            ("[session]\ntimeout = \"forever\"\n", "session.timeout"),
            ("vault = 12\n", "vault must be a string"),
            ("color = \"sometimes\"\n", "'sometimes'"),
            ("vault = \"unclosed\n", "config.toml line 1"),
            ("[backup]\ntargets = \"/media/usb\"\n", "backup.targets must be a list"),
        ]
        for (file, says) in cases {
            try writeConfig(file)
            result = try sandbox.run(["status"])
            #expect(result.status == 78 && result.stderr.contains(says), "\(file): \(result.stderr)")
        }

        // It may name a command Coffer runs: a file others can write is not trusted.
        try writeConfig("color = \"never\"\n", mode: 0o666)
        result = try sandbox.run(["status"])
        #expect(result.status == 78 && result.stderr.contains("chmod 600"), "\(result.stderr)")

        // COFFER_CONFIG points elsewhere (here: at nothing, so no configuration).
        result = try sandbox.run(["status"], environment: ["COFFER_CONFIG": sandbox.directory.path("none").path])
        #expect(result.status == 66, "\(result.stderr)")
    }

    /// The session slides with use (`--timeout` is idle time) up to `--max-age`.
    @Test func aSessionSlidesWithUseUpToItsMaximumAge() throws {
        let passphraseFile = try sandbox.initVault()
        let start = Date()
        let unlock = try sandbox.run([
            "unlock", "--timeout", "2s", "--max-age", "5s", "--passphrase-file", passphraseFile,
        ])
        #expect(unlock.status == 0, "\(unlock.stderr)")
        let line = try #require(unlock.stdout.split(separator: "\n").first { $0.hasPrefix("export COFFER_SESSION=") })
        let token = String(line.dropFirst("export COFFER_SESSION=\"".count).dropLast())
        func verify(at offset: TimeInterval) throws -> RunResult {
            let wait = start.addingTimeInterval(offset).timeIntervalSinceNow
            if wait > 0 { usleep(UInt32(wait * 1_000_000)) }
            return try sandbox.run(["verify"], environment: ["COFFER_SESSION": token])
        }
        // Each use restarts the 2 s: at 3.6 s the session is alive only because it was used.
        for offset in [1.2, 2.4, 3.6] {
            let result = try verify(at: offset)
            #expect(result.status == 0, "at \(offset) s: \(result.stderr)")
        }
        let status = try sandbox.run(["status", "--json"], environment: ["COFFER_SESSION": token])
        let session = try #require(
            (try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any])?["session"]
                as? [String: Any])
        #expect(session["state"] as? String == "unlocked")
        #expect(session["idleTimeoutSeconds"] as? Int == 2)
        #expect(session["endsAt"] is String)
        // However recently used, it ends by --max-age (rounded up to the second: within 6 s).
        _ = try verify(at: 4.8)
        let ended = try verify(at: 6.3)
        #expect(ended.status == 77, "\(ended.stderr)")
        #expect(ended.stderr.contains("expired"))

        let inverted = try sandbox.run([
            "unlock", "--timeout", "2h", "--max-age", "1h", "--passphrase-file", passphraseFile,
        ])
        #expect(inverted.status == 64 && inverted.stderr.contains("--max-age"), "\(inverted.stderr)")

        // A maximum age from the file alone caps the default idle time instead of clashing with it;
        // a clash says where each setting came from.
        try writeConfig("[session]\nmax_age = \"10s\"\n")
        let capped = try sandbox.run(["unlock", "--passphrase-file", passphraseFile])
        #expect(capped.status == 0 && capped.stderr.contains("Unlocked for 10s"), "\(capped.stderr)")
        try writeConfig("[session]\nmax_age = \"1h\"\n")
        let clash = try sandbox.run(["unlock", "--timeout", "2h", "--passphrase-file", passphraseFile])
        #expect(clash.status == 64, "\(clash.stderr)")
        #expect(
            clash.stderr.contains(
                "(2h, --timeout) is longer than the maximum age (1h, session.max_age in the configuration file)"))
    }
}
