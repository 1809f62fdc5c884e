import ArgumentParser
import CofferKit
import Foundation
import VaultCrypto
import VaultStore

/// `coffer status`: what the vault is and whether it is unlocked, without asking for anything.
struct Status: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show the vault's path, format, key derivation, records and session state.")

    @OptionGroup var options: VaultOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    struct Report: Encodable {
        struct KDF: Encodable { let algorithm: String; let profile: String; let opsLimit: UInt64; let memLimit: UInt64 }
        struct SessionState: Encodable {
            let state: String
            let expiresAt: String?
            /// The `--max-age` cap, past which no use extends the session.
            var endsAt: String? = nil
            /// Seconds of idle time each use grants; nil when the session does not slide.
            var idleTimeoutSeconds: Int? = nil
            /// Human "12m" for the text report; not part of the JSON.
            var remaining: String? = nil
            enum CodingKeys: String, CodingKey { case state, expiresAt, endsAt, idleTimeoutSeconds }
        }
        let path: String
        let formatVersion: Int
        let keyGeneration: UInt32
        let vaultId: String
        let kdf: KDF
        /// Authenticated when a session is open; otherwise the rows of a format 1 or 2 file, and
        /// null for format 3, whose file does not show its records.
        @NullEncoded var records: Int?
        /// Sealed pages: format 3 only.
        let pages: Int?
        let recoveryKey: Bool
        let session: SessionState
        /// Only when a session is unlocked: backup state is inside the encrypted vault.
        let backups: [BackupAge]?
    }

    func run() throws {
        let url = options.vaultURL
        try options.requireVault()
        let summary = try Vault.summary(at: url)
        var session = sessionState(vaultID: summary.vaultID)
        let unlocked: Ledger? =
            session.state == "unlocked"
            ? (try? options.sessionToken).flatMap { token in
                try? Ledger(
                    vault: Vault.open(
                        at: url, with: .session(token, directory: options.sessionDirectory),
                        guard: options.rollbackGuard))
            }
            : nil
        if unlocked != nil { session = sessionState(vaultID: summary.vaultID) }  // opening it slid the expiry
        let report = Report(
            path: url.path, formatVersion: summary.formatVersion, keyGeneration: summary.keyGeneration,
            vaultId: summary.vaultID.hex,
            kdf: .init(
                algorithm: "argon2id13", profile: summary.kdfParameters.profile?.rawValue ?? "custom",
                opsLimit: summary.kdfParameters.opsLimit, memLimit: summary.kdfParameters.memLimit),
            records: unlocked?.vault.recordCount ?? summary.storedRecordCount, pages: summary.storedPageCount,
            recoveryKey: summary.hasRecoveryKey, session: session,
            backups: unlocked.map { $0.backupAges() })
        if json { return try Output.json(report) }

        let sessionText: String
        switch session.state {
        case "unlocked":
            sessionText =
                "unlocked until \(session.expiresAt ?? "?") (\(session.remaining ?? "?") left"
                + (session.idleTimeoutSeconds == nil ? ")" : " without use; at most until \(session.endsAt ?? "?"))")
        case "expired": sessionText = "expired (COFFER_SESSION is stale)"
        case "invalid": sessionText = "COFFER_SESSION is not valid for this vault"
        default: sessionText = "locked"
        }
        Output.line("Vault         \(VaultOptions.display(url))")
        Output.line("Format        version \(summary.formatVersion), key generation \(summary.keyGeneration)")
        Output.line("Key           \(summary.kdfParameters.humanDescription)")
        switch (report.records, summary.storedPageCount) {
        case (let records?, _): Output.line("Records       \(records)")
        case (nil, let pages?):
            Output.line("Records       sealed in \(pages) page\(pages == 1 ? "" : "s"); unlock to count them")
        case (nil, nil): Output.line("Records       unknown")
        }
        Output.line("Recovery key  \(summary.hasRecoveryKey ? "set" : "none")")
        Output.line("Session       \(sessionText)")
        if let ledger = unlocked {
            let lines = BackupCommands.ageLines(ledger.backupAges(), ledger: ledger)
            Output.line("Backups       \(lines.isEmpty ? "none yet" : lines[0])")
            lines.dropFirst().forEach { Output.line("              \($0)") }
        } else {
            Output.line("Backups       unlock to see when each destination was last backed up")
        }
        Output.line()
        if session.state == "unlocked" {
            Output.advice("Next: coffer verify")
        } else {
            Output.advice("Next: eval \"$(coffer unlock)\"")
        }
    }

    private func sessionState(vaultID: VaultID) -> Report.SessionState {
        guard let token = try? options.sessionToken else {
            return .init(state: options.environment["COFFER_SESSION"] == nil ? "locked" : "invalid", expiresAt: nil)
        }
        switch SessionStore.status(token: token, directory: options.sessionDirectory, vaultID: vaultID) {
        case .active(let expiry, let end, let idle):
            let iso = ISO8601DateFormatter()
            return .init(
                state: "unlocked", expiresAt: iso.string(from: expiry), endsAt: iso.string(from: end),
                idleTimeoutSeconds: idle.map { Int($0) }, remaining: Duration.format(expiry.timeIntervalSinceNow))
        case .expired: return .init(state: "expired", expiresAt: nil)
        case .notFound: return .init(state: "locked", expiresAt: nil)
        case .invalid: return .init(state: "invalid", expiresAt: nil)
        }
    }
}

/// `coffer upgrade`: rewrites a vault of an earlier format in the current one, which its first
/// write would otherwise do.
struct Upgrade: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Rewrite a vault made by an earlier Coffer in the current format (records in sealed pages).",
        discussion: """
            An earlier format is read as it is and upgraded by the first command that writes; this does it \
            now. Needs the passphrase (or recovery key), not a session: the header changes. One atomic \
            step: a copy of the file is kept beside it until the upgraded vault verifies. Does nothing to a \
            vault already in the current format.
            """
    )

    @OptionGroup var options: VaultOptions
    @Flag(help: "Print the result as JSON.") var json = false

    struct Report: Encodable {
        let upgraded: Bool
        let from: Int
        let to: Int
        let records: Int
        let pages: Int?
    }

    func run() throws {
        try options.requireVault()
        let vault = try Vault.open(
            at: options.vaultURL, with: options.credential(allowSession: false), guard: options.rollbackGuard)
        let from = vault.formatVersion
        if vault.needsUpgrade { try vault.upgrade() }
        let report = Report(
            upgraded: from != vault.formatVersion, from: from, to: vault.formatVersion, records: vault.recordCount,
            pages: vault.pageCount)
        if json { return try Output.json(report) }
        guard report.upgraded else {
            return Output.line("The vault is already in format \(report.to); nothing was changed.")
        }
        Output.line(
            "Upgraded \(VaultOptions.display(options.vaultURL)) from format \(from) to format \(report.to): \(report.records) record\(report.records == 1 ? "" : "s") in \(report.pages ?? 0) sealed page\(report.pages == 1 ? "" : "s"), verified."
        )
        Output.line("Coffer versions before this one can no longer open it; backups made before stay readable.")
    }
}

/// `coffer verify`: the full integrity check.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check every record, the manifest, the commit record and the header; name anything damaged.",
        discussion:
            "Exit status 65 when anything fails, with each damaged, missing, injected or rolled-back record named."
    )

    @OptionGroup var options: VaultOptions

    @Flag(help: "Print JSON instead of text.")
    var json = false

    struct Report: Encodable {
        struct Problem: Encodable { let kind: String; let record: String?; let detail: String }
        let ok: Bool
        let records: Int?
        let commit: UInt64?
        let problems: [Problem]
    }

    func run() throws {
        do {
            // A vault a shell opened earlier is read again (and kept); otherwise every record
            // is read and checked as it streams by, none kept.
            let report =
                try CommandSession.ledger(at: options.vaultURL).map { try $0.vault.verify() }
                ?? options.unlockVaultFile().verify()
            if json {
                return try Output.json(
                    Report(ok: true, records: report.recordCount, commit: report.commitCounter, problems: []))
            }
            Output.line(
                "Vault OK: \(report.recordCount) record\(report.recordCount == 1 ? "" : "s") verified at commit #\(report.commitCounter)."
            )
            Output.line(
                "Proved: the header is intact and authentic, every record decrypts and authenticates as itself,")
            Output.line(
                "and the set of records is exactly the one last committed (none missing, added, duplicated or rolled back)."
            )
        } catch let error as VaultError where error.code == .integrityFailure && json {
            try Output.json(
                Report(
                    ok: false, records: nil, commit: nil,
                    problems: error.problems.map {
                        .init(kind: $0.kind.rawValue, record: $0.recordID?.hex, detail: $0.detail)
                    }))
            throw CLIError(error)
        }
    }
}
