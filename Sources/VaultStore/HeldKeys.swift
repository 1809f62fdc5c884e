import Foundation
import VaultCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// A vault's operational keys held by a long-running process (`coffer web`) in `sodium_malloc`
/// memory, as a session file holds them sealed: the records, integrity, backup and signing keys,
/// never the master key. They are written nowhere; dropping the last reference wipes them.
///
/// They open the vault for as long as its key generation and master key are the ones they came
/// from: after a rekey or a passphrase change that replaced the master key they open nothing.
public final class HeldKeys: @unchecked Sendable {
    let operational: OperationalKeys
    public let vaultID: VaultID
    let generation: UInt32

    init(operational: OperationalKeys, vaultID: VaultID, generation: UInt32) {
        self.operational = operational
        self.vaultID = vaultID
        self.generation = generation
    }

    /// The keys for `header`, or why they no longer open it.
    func keys(for header: VaultHeader) throws -> OperationalKeys {
        guard header.vaultID == vaultID else {
            throw VaultError(.sessionInvalid, "The keys held were unlocked for a different vault.")
        }
        guard header.generation == generation, constantTimeEqual(operational.masterKeyID, header.masterKeyID) else {
            throw VaultError(.sessionInvalid, "The vault's keys were changed after it was unlocked here.")
        }
        return operational
    }
}

extension HeldKeys: CustomStringConvertible, CustomReflectable {
    public var description: String { "HeldKeys(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

extension UnlockedVaultFile {
    /// This file's operational keys, to keep in memory and open the vault again with
    /// `Credential.held` (a format 1 header, which sessions cannot open either, is refused).
    public func holdKeys() throws -> HeldKeys {
        guard header.formatVersion >= 2 else {
            throw VaultError(
                .sessionInvalid, "This vault's header is in format 1, which no session of this Coffer was made for.")
        }
        return HeldKeys(operational: keys.operational, vaultID: header.vaultID, generation: header.generation)
    }
}

/// A file in the session directory that says a process holds this vault's keys in memory
/// (Specs/vault-format.md, "Held keys"): `coffer lock` removes it as it removes session files,
/// and the process, watching it, wipes its keys and ends. It holds no secret:
///
///     "CFRHELD1" ‖ vault id 16 ‖ process id u32
///
/// Its name is 16 random bytes in hex and `.held`. A marker that disappears, or is replaced by
/// other bytes, ends the holder's keys: anyone who can write the directory can end a holder
/// (as they can delete a session file), and nobody can extend one.
public final class HeldKeysMarker: @unchecked Sendable {
    static let magic = Array("CFRHELD1".utf8)
    static let fileExtension = "held"
    public let url: URL
    private let contents: [UInt8]

    private init(url: URL, contents: [UInt8]) {
        self.url = url
        self.contents = contents
    }

    /// Writes a new marker for `vaultID` into `directory` (made private if missing).
    public static func create(vaultID: VaultID, directory: URL) throws -> HeldKeysMarker {
        try ensurePrivateDirectory(directory, what: "session directory")
        let name = SecureRandom.bytes(count: 16).hexString + "." + fileExtension
        var writer = ByteWriter(capacity: 28)
        writer.append(magic)
        writer.append(vaultID.bytes)
        writer.append(UInt32(truncatingIfNeeded: getpid()))
        let marker = HeldKeysMarker(url: directory.appendingPathComponent(name), contents: writer.bytes)
        try writePrivateFile(writer.bytes, to: marker.url)
        return marker
    }

    /// Whether the marker is still there, as it was written.
    public var isPresent: Bool {
        FileManager.default.contents(atPath: url.path).map(Array.init) == contents
    }

    /// Removes the marker (the holder ends by itself).
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// The markers in `directory`, with the vault each names (nil when it is not a marker).
    static func markers(in directory: URL) -> [(url: URL, vaultID: VaultID?)] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix("." + fileExtension) }.sorted().map { name in
            let url = directory.appendingPathComponent(name)
            let bytes = FileManager.default.contents(atPath: url.path).map(Array.init) ?? []
            let vaultID =
                bytes.count == 28 && Array(bytes[0..<8]) == magic ? VaultID(unchecked: Array(bytes[8..<24])) : nil
            return (url, vaultID)
        }
    }
}
