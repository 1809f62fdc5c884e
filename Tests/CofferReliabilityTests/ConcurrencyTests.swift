import CofferKit
import CofferTestSupport
import FinanceCore
import Foundation
import GRDB
import Testing
import VaultCrypto
import VaultStore

/// Several `coffer` processes writing one vault at once: SQLite serialises the writes (a busy
/// timeout, then a clear message), and every write re-reads the vault inside its transaction, so
/// none is lost and the manifest stays whole. `COFFER_CONCURRENT_UPDATES` sets the writes per
/// process (250 by default).
@Suite struct ConcurrencyTests {
    static let writers = 4
    static let updatesPerWriter = Int(ProcessInfo.processInfo.environment["COFFER_CONCURRENT_UPDATES"] ?? "") ?? 250

    @Test func fourWritersLoseNothing() throws {
        let sandbox = Sandbox()
        let environment = ["COFFER_PASSPHRASE": "concurrent writers", "COFFER_TODAY": "2026-11-22"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        for writer in 0..<Self.writers {
            #expect(
                try sandbox.run(
                    ["account", "add", "Account \(writer)", "--category", "Savings"], environment: environment
                ).status == 0)
        }
        let unlock = try sandbox.run(["unlock", "--timeout", "1h"], environment: environment)
        let token = try #require(
            unlock.stdout.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\"" || $0 == "=" })
                .first { $0.hasPrefix("cs1_") }.map(String.init))
        let session = ["COFFER_SESSION": token, "COFFER_TODAY": "2026-11-22"]

        let failures = Failures()
        nonisolated(unsafe) let shared = sandbox
        let started = Date()
        DispatchQueue.concurrentPerform(iterations: Self.writers) { writer in
            for number in 0..<Self.updatesPerWriter {
                do {
                    let result = try shared.run(
                        [
                            "update", "Account \(writer)", "\(writer * 10_000 + number).00",
                            "--date", CalendarDate(dayNumber: 10_000 + number).description,
                            "--note", "writer \(writer) update \(number)",
                        ], environment: session)
                    if result.status != 0 {
                        failures.add("writer \(writer) update \(number): exit \(result.status): \(result.stderr)")
                    }
                } catch {
                    failures.add("writer \(writer) update \(number): \(error)")
                }
            }
        }
        let elapsed = Date().timeIntervalSince(started)
        #expect(failures.all.isEmpty, "\(failures.all.prefix(5).joined(separator: "\n"))")
        let busy = failures.all.filter { $0.contains("locked") || $0.contains("busy") }
        #expect(busy.isEmpty, "no busy or locked error may reach the user")

        let vault = try Vault.open(at: sandbox.vault, with: .passphrase(try Passphrase("concurrent writers")))
        _ = try vault.verify()
        let notes = Set(
            try vault.records.compactMap { record -> String? in
                if case .update(let update) = try RecordCodec.decode(Array(record.payload), id: record.id.uuid) {
                    return update.note
                }
                return nil
            })
        let expected = Set(
            (0..<Self.writers).flatMap { writer in (0..<Self.updatesPerWriter).map { "writer \(writer) update \($0)" } }
        )
        #expect(notes == expected, "\(expected.subtracting(notes).count) updates missing")
        let verify = try sandbox.run(["verify"], environment: session)
        #expect(verify.status == 0, "\(verify.stderr)")
        print(
            "concurrent writers: \(Self.writers) × \(Self.updatesPerWriter) updates in \(String(format: "%.1f", elapsed)) s, \(notes.count) present, vault verified"
        )
    }
}

extension ConcurrencyTests {
    /// A writer that never lets go (another program holding a write transaction): coffer waits out
    /// its busy timeout, then says so and exits 1, changing nothing.
    @Test func aVaultHeldByAnotherWriterGivesAClearMessage() throws {
        let sandbox = Sandbox()
        let environment = ["COFFER_PASSPHRASE": "concurrent writers", "COFFER_TODAY": "2026-11-22"]
        #expect(try sandbox.run(["init", "--kdf", "interactive"], environment: environment).status == 0)
        #expect(
            try sandbox.run(["account", "add", "Savings", "--category", "Savings"], environment: environment).status
                == 0)
        let before = try storedRowsDigest(sandbox.vault)
        let holder = try DatabaseQueue(path: sandbox.vault.path)
        try holder.writeWithoutTransaction { db in
            try db.execute(sql: "BEGIN IMMEDIATE")
            let result = try sandbox.run(["update", "Savings", "100"], environment: environment, timeout: 60)
            #expect(result.status == 1, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "The vault is busy: another coffer process held it for over 10 seconds. Nothing was changed; try again."
                ))
            try db.execute(sql: "ROLLBACK")
        }
        #expect(try storedRowsDigest(sandbox.vault) == before)
    }
}
