import CofferTestSupport
import Foundation
import GRDB
import Testing
import VaultCrypto

@testable import VaultStore

/// Tests use the real Argon2id "interactive" profile: the real KDF, at its cheapest setting.

func passphrase(_ text: String = "correct horse battery staple") -> Passphrase { try! Passphrase(text) }

/// A vault holding one record per payload, closed again; returns the ids in payload order.
func makeVault(at url: URL, payloads: [String], passphrase text: String = "correct horse battery staple") throws
    -> [RecordID]
{
    let vault = try Vault.create(at: url, passphrase: passphrase(text), parameters: testParameters)
    vault.grouping = byFirstLetter
    let ids = payloads.map { _ in RecordID.random() }
    try vault.apply(zip(ids, payloads).map { .put($0, Data($1.utf8)) })
    return ids
}

/// Plain SQLite access to the vault file, as an attacker with the file would have.
func withRawDatabase<T>(_ url: URL, _ body: (Database) throws -> T) throws -> T {
    let queue = try DatabaseQueue(path: url.path)
    return try queue.write(body)
}

/// Test vaults keep payloads that start with the same letter in one group, so a test can put
/// records in one page or in different ones.
let byFirstLetter: PageGrouping = { _, payload in PageGroup(rawValue: UInt64(payload.first ?? 0)) }

/// The rows of the page holding `id` and of its group's index.
func locators(_ url: URL, _ id: RecordID) throws -> (page: Data, index: Data) {
    try Vault.open(at: url, with: .passphrase(passphrase())).pageLocators(of: id)!
}

/// The sealed page holding `id`, as stored.
func sealedPage(_ url: URL, _ id: RecordID) throws -> Data {
    let locator = try locators(url, id).page
    return try withRawDatabase(url) {
        try Data.fetchOne($0, sql: "SELECT sealed FROM page WHERE locator = ?", arguments: [locator])!
    }
}

/// The sealed record `id` in a format 1 or 2 file.
func sealedBytes(_ url: URL, _ id: RecordID) throws -> Data {
    try withRawDatabase(url) {
        try Data.fetchOne($0, sql: "SELECT sealed FROM record WHERE id = ?", arguments: [Data(id.bytes)])!
    }
}

/// Asserts that `body` fails with an integrity error whose problems name `id` with `kind`.
func expectIntegrityFailure(
    naming id: RecordID?, kind: IntegrityProblem.Kind, sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record(
            "expected an integrity failure naming \(id?.hex ?? "the structure")", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        #expect(error.code == .integrityFailure, sourceLocation: sourceLocation)
        #expect(
            error.problems.contains { $0.kind == kind && $0.recordID == id },
            "problems were: \(error.problems)", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

func expectVaultError(
    _ code: VaultError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
    do {
        try body()
        Issue.record("expected \(code)", sourceLocation: sourceLocation)
    } catch let error as VaultError {
        #expect(error.code == code, "\(error.errorDescription ?? "")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("unexpected error \(error)", sourceLocation: sourceLocation)
    }
}

func mode(_ url: URL) -> mode_t {
    var info = stat()
    precondition(stat(url.path, &info) == 0, "no file at \(url.path)")
    return info.st_mode & 0o777
}
