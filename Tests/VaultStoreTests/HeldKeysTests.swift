import CofferTestSupport
import Foundation
import Testing
import VaultCrypto

@testable import VaultStore

/// The keys a long-running process (`coffer web`) holds: they open their own vault as it is, and
/// nothing once the vault's keys changed; the marker that stands for them goes with `coffer lock`.
struct HeldKeysTests {
    let directory = TemporaryDirectory()
    var url: URL { directory.path("vault.coffer") }

    @Test func heldKeysReopenTheVaultAndSeeEveryLaterWrite() throws {
        let ids = try makeVault(at: url, payloads: ["apple", "banana"])
        let held = try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase())).holdKeys()
        // Another process writes after the keys were taken: the next open with them sees it.
        let writer = try Vault.open(at: url, with: .passphrase(passphrase()))
        try writer.apply([.put(ids[0], Data("apricot".utf8))])
        let reopened = try Vault.open(at: url, with: .held(held))
        #expect(reopened.record(ids[0]).map { String(decoding: $0.payload, as: UTF8.self) } == "apricot")
        #expect(String(describing: held) == "HeldKeys(redacted)")
    }

    @Test func heldKeysOpenNoOtherVault() throws {
        _ = try makeVault(at: url, payloads: ["apple"])
        let other = directory.path("other.coffer")
        _ = try makeVault(at: other, payloads: ["apple"])
        let held = try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase())).holdKeys()
        #expect(throws: VaultError.self) { try Vault.open(at: other, with: .held(held)) }
    }

    @Test func aRekeyEndsWhatTheHeldKeysOpen() throws {
        _ = try makeVault(at: url, payloads: ["apple"])
        let held = try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase())).holdKeys()
        _ = try Vault.open(at: url, with: .passphrase(passphrase())).rekey()
        let error = #expect(throws: VaultError.self) { try Vault.open(at: url, with: .held(held)) }
        #expect(error?.code == .sessionInvalid)
    }

    @Test func aPassphraseChangeThatReplacesTheMasterKeyEndsThemToo() throws {
        _ = try makeVault(at: url, payloads: ["apple"])
        let held = try UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase())).holdKeys()
        _ = try Vault.open(at: url, with: .passphrase(passphrase())).changePassphrase(
            to: passphrase("another passphrase"))
        #expect(throws: VaultError.self) { try Vault.open(at: url, with: .held(held)) }
    }

    @Test func lockingRemovesTheMarkerAndAnyChangeToItEndsIt() throws {
        _ = try makeVault(at: url, payloads: ["apple"])
        let summary = try Vault.summary(at: url)
        let sessions = directory.path("sessions")
        let marker = try HeldKeysMarker.create(vaultID: summary.vaultID, directory: sessions)
        #expect(marker.isPresent)
        let bytes = try Data(contentsOf: marker.url)
        #expect(bytes.count == 28 && bytes.starts(with: Array("CFRHELD1".utf8)))
        // Rewritten with other bytes (say, another holder's), it no longer stands for this one.
        try Data(repeating: 0, count: 28).write(to: marker.url)
        #expect(!marker.isPresent)
        try bytes.write(to: marker.url)
        #expect(marker.isPresent)
        // `coffer lock` ends it as it ends the vault's sessions, and leaves another vault's alone.
        let otherMarker = try HeldKeysMarker.create(
            vaultID: VaultID(unchecked: Array(repeating: 7, count: 16)), directory: sessions)
        #expect(SessionStore.removeAll(vaultID: summary.vaultID, directory: sessions) == 1)
        #expect(!marker.isPresent)
        #expect(otherMarker.isPresent)
    }
}
