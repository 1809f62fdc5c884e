internal import CSodium
import Foundation
import Synchronization

/// A passphrase, Unicode-NFC-normalised and held as UTF-8 in secure memory.
///
/// Normalising means the same passphrase typed on a system that produces decomposed accents
/// (NFD, as macOS file names do) still unlocks the vault.
public struct Passphrase: Sendable {
    let utf8: SecureBytes

    /// Normalises `text` to NFC. Empty passphrases are refused.
    public init(_ text: String) throws {
        guard !text.isEmpty else {
            throw CryptoError(.invalidPassphrase, "The passphrase is empty.")
        }
        var normalised = Array(text.precomposedStringWithCanonicalMapping.utf8)
        defer { secureWipe(&normalised) }
        utf8 = SecureBytes(copying: normalised)
    }

    /// Decodes UTF-8 bytes (from a file, a command or a terminal) and normalises them.
    /// Non-UTF-8 input is refused rather than guessed at: a guess could lock the user out.
    public init(utf8Bytes bytes: [UInt8]) throws {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CryptoError(.invalidPassphrase, "The passphrase is not valid UTF-8 text.")
        }
        try self.init(text)
    }

    public var byteCount: Int { utf8.count }
}

extension Passphrase: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String { "Passphrase(redacted)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}

/// Argon2id cost parameters as stored in a vault or archive header.
public struct Argon2idParameters: Sendable, Equatable, Hashable {
    /// Passes over memory.
    public let opsLimit: UInt64
    /// Memory in bytes.
    public let memLimit: UInt64

    /// libsodium's minimum for Argon2id.
    public static let minimumOpsLimit = UInt64(crypto_pwhash_argon2id_OPSLIMIT_MIN)
    public static let minimumMemLimit = UInt64(crypto_pwhash_argon2id_MEMLIMIT_MIN)
    /// Coffer's ceilings: "sensitive" uses 4 passes and 1 GiB; a header asking for more than
    /// 4 GiB or 64 passes is treated as crafted, since honouring it could exhaust memory or hang.
    public static let maximumMemLimit: UInt64 = 4 << 30
    public static let maximumOpsLimit: UInt64 = 64

    /// Validates parameters read from a file before anything is allocated.
    public init(opsLimit: UInt64, memLimit: UInt64) throws {
        guard opsLimit >= Self.minimumOpsLimit, opsLimit <= Self.maximumOpsLimit else {
            throw CryptoError(
                .unsafeParameters,
                "Refusing Argon2id with \(opsLimit) passes: the accepted range is \(Self.minimumOpsLimit)–\(Self.maximumOpsLimit)."
            )
        }
        guard memLimit >= Self.minimumMemLimit, memLimit <= Self.maximumMemLimit else {
            throw CryptoError(
                .unsafeParameters,
                "Refusing Argon2id with \(memLimit) bytes of memory: the accepted range is \(Self.minimumMemLimit) bytes to 4 GiB."
            )
        }
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// The profile these parameters match, if any.
    public var profile: KDFProfile? { KDFProfile.allCases.first { $0.parameters == self } }
}

/// libsodium's named Argon2id cost levels.
public enum KDFProfile: String, CaseIterable, Sendable {
    /// 2 passes, 64 MiB: about 0.1 s here. For tests and low-memory machines.
    case interactive
    /// 3 passes, 256 MiB: about 0.7 s here. The default.
    case moderate
    /// 4 passes, 1 GiB: about 3.7 s here.
    case sensitive

    public var parameters: Argon2idParameters {
        switch self {
        case .interactive:
            try! Argon2idParameters(
                opsLimit: UInt64(crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE),
                memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE))
        case .moderate:
            try! Argon2idParameters(
                opsLimit: UInt64(crypto_pwhash_argon2id_OPSLIMIT_MODERATE),
                memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_MODERATE))
        case .sensitive:
            try! Argon2idParameters(
                opsLimit: UInt64(crypto_pwhash_argon2id_OPSLIMIT_SENSITIVE),
                memLimit: UInt64(crypto_pwhash_argon2id_MEMLIMIT_SENSITIVE))
        }
    }
}

/// Argon2id (version 1.3) through `crypto_pwhash`.
public enum Argon2id {
    /// Counts the derivations a task runs while it is set (`Argon2id.$derivations.withValue`).
    /// Each one costs a second or more and up to a gigabyte, so how many a protocol runs is
    /// part of its contract, and a test can hold it to that. Task-local, so tests running in
    /// parallel do not count each other's work.
    @TaskLocal package static var derivations: DerivationCounter?

    package final class DerivationCounter: Sendable {
        private let count = Atomic<Int>(0)
        package init() {}
        package var value: Int { count.load(ordering: .relaxed) }
        fileprivate func increment() { count.add(1, ordering: .relaxed) }
    }

    /// Stretches `passphrase` into a 256-bit key. Deliberately slow; see `KDFProfile`.
    public static func deriveKey(
        from passphrase: Passphrase, salt: Salt,
        parameters: Argon2idParameters
    ) throws -> SymmetricKey {
        Sodium.ensureInitialised()
        derivations?.increment()
        let key = SecureBytes(count: SymmetricKey.byteCount)
        let result: Int32 = key.withUnsafeMutableBytes { out in
            passphrase.utf8.withUnsafeBytes { pass in
                salt.bytes.withUnsafeBufferPointer { saltBytes in
                    crypto_pwhash(
                        out.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(out.count),
                        pass.baseAddress!.assumingMemoryBound(to: CChar.self), UInt64(pass.count),
                        saltBytes.baseAddress!, parameters.opsLimit, Int(parameters.memLimit),
                        crypto_pwhash_ALG_ARGON2ID13)
                }
            }
        }
        try Sodium.check(
            result, .keyDerivationFailed,
            "Argon2id could not run: \(parameters.memLimit >> 20) MiB of memory may not be available.")
        return try SymmetricKey(key)
    }
}
