import Foundation
import VaultCrypto

/// The key hierarchy below the master key. Every subkey comes from `crypto_kdf` with the
/// context "CofferV1" and a fixed id, so each has exactly one purpose.
enum SubkeyID: UInt64 {
    case records = 1
    case integrity = 2
    case header = 3
    case backup = 4
    case signing = 5
}

let subkeyContext = KDFContext("CofferV1")

/// The keys that reading and writing records need, and all that a session holds: records,
/// integrity, backup and signing. Not the master key and not the header key, so nothing done
/// with these can produce a header that authenticates: no key slot can be added or changed,
/// and no rekey made, without the passphrase or recovery key.
struct OperationalKeys {
    /// Seals record payloads.
    let records: SymmetricKey
    /// Seals manifest buckets and the commit record.
    let integrity: SymmetricKey
    /// For backup archives (the backup module).
    let backup: SymmetricKey
    /// The seed of the vault's Ed25519 key pair: archives are signed by the vault itself.
    let signingSeed: SymmetricKey
    let signing: SigningKey
    /// Names the rows of format 3's pages and indexes (derived from `integrity`).
    let locator: SymmetricKey
    /// A keyed fingerprint of the master key these came from (the header names it).
    let masterKeyID: [UInt8]

    init(
        records: SymmetricKey, integrity: SymmetricKey, backup: SymmetricKey, signingSeed: SymmetricKey,
        masterKeyID: [UInt8]
    ) {
        self.records = records
        self.integrity = integrity
        self.backup = backup
        self.signingSeed = signingSeed
        self.signing = SigningKey(seed: signingSeed)
        self.locator = PageLayout.locatorKey(integrity: integrity)
        self.masterKeyID = masterKeyID
    }

    static func masterKeyID(of master: SymmetricKey) -> [UInt8] {
        BLAKE2b.hash(Array("coffer-master-key-id-v1".utf8), outputByteCount: 16, key: master)
    }
}

/// The master key and what only it can do: key slots (it is what they wrap) and the header MAC.
struct MasterKeys {
    let master: SymmetricKey
    /// Keys the header MAC.
    let header: SymmetricKey
    let operational: OperationalKeys

    init(master: SymmetricKey) {
        self.master = master
        header = master.deriveSubkey(id: SubkeyID.header.rawValue, context: subkeyContext)
        operational = OperationalKeys(
            records: master.deriveSubkey(id: SubkeyID.records.rawValue, context: subkeyContext),
            integrity: master.deriveSubkey(id: SubkeyID.integrity.rawValue, context: subkeyContext),
            backup: master.deriveSubkey(id: SubkeyID.backup.rawValue, context: subkeyContext),
            signingSeed: master.deriveSubkey(id: SubkeyID.signing.rawValue, context: subkeyContext),
            masterKeyID: OperationalKeys.masterKeyID(of: master))
    }

    static func deriveKEK(passphrase: Passphrase, salt: Salt, parameters: Argon2idParameters) throws -> SymmetricKey {
        do {
            return try Argon2id.deriveKey(from: passphrase, salt: salt, parameters: parameters)
        } catch let error as CryptoError {
            throw VaultError(.storageFailure, error.errorDescription ?? "Argon2id failed.")
        }
    }
}

/// A random, printable second way into a vault, for when the passphrase is forgotten.
///
/// 16 secret bytes and a 4-byte checksum, written as 32 Crockford base-32 characters in eight
/// groups of four (`7KQ2-…`), easy to copy onto paper. The checksum catches typos before any
/// key work, so a mistyped key is told apart from a wrong one.
public struct RecoveryKey: Sendable {
    static let secretByteCount = 16
    static let checksumByteCount = 4
    private static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ".utf8)

    private let secret: SecureBytes

    private init(secret: SecureBytes) { self.secret = secret }

    static func generate() -> RecoveryKey { RecoveryKey(secret: .random(count: secretByteCount)) }

    /// Parses the printed form; case, spaces and hyphens do not matter, and the look-alike
    /// letters O, I and L are read as 0, 1 and 1.
    public init(parsing text: String) throws {
        var symbols: [UInt8] = []
        for scalar in text.uppercased().unicodeScalars {
            switch scalar {
            case "-", " ", "\t", "\n", "\r": continue
            case "O": symbols.append(0)
            case "I", "L": symbols.append(1)
            default:
                guard scalar.isASCII, let index = Self.alphabet.firstIndex(of: UInt8(scalar.value)) else {
                    throw VaultError(
                        .wrongRecoveryKey, "The recovery key contains a character that is not part of any recovery key."
                    )
                }
                symbols.append(UInt8(index))
            }
        }
        defer { secureWipe(&symbols) }
        guard symbols.count == 32 else {
            throw VaultError(
                .wrongRecoveryKey,
                "A recovery key has 32 characters (eight groups of four); this one has \(symbols.count).")
        }
        var bytes = [UInt8](repeating: 0, count: 20)
        defer { secureWipe(&bytes) }
        var accumulator = 0, bits = 0, index = 0
        for symbol in symbols {
            accumulator = (accumulator << 5) | Int(symbol)
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes[index] = UInt8((accumulator >> bits) & 0xff)
                index += 1
            }
        }
        let secretPart = Array(bytes[..<Self.secretByteCount])
        guard
            constantTimeEqual(
                BLAKE2b.hash(secretPart, outputByteCount: 16).prefix(Self.checksumByteCount).map { $0 },
                Array(bytes[Self.secretByteCount...]))
        else {
            throw VaultError(
                .wrongRecoveryKey, "The recovery key has a typo: its checksum does not match. Check each group of four."
            )
        }
        secret = SecureBytes(copying: secretPart)
    }

    /// The printed form. Shown once, when the key is created.
    public var displayText: String {
        secret.withUnsafeBytes { raw -> String in
            let secretPart = Array(raw)
            let bytes = secretPart + BLAKE2b.hash(secretPart, outputByteCount: 16).prefix(Self.checksumByteCount)
            var symbols: [UInt8] = []
            var accumulator = 0, bits = 0
            for byte in bytes {
                accumulator = (accumulator << 8) | Int(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    symbols.append(Self.alphabet[(accumulator >> bits) & 31])
                }
            }
            let groups = stride(from: 0, to: symbols.count, by: 4).map {
                String(decoding: symbols[$0..<$0 + 4], as: UTF8.self)
            }
            return groups.joined(separator: "-")
        }
    }

    /// Format 1's recovery KEK: BLAKE2b-256("coffer-recovery-v1" ‖ salt ‖ vault id ‖ secret).
    /// The secret goes straight from secure memory into the hasher, whose state is in secure
    /// memory too.
    func legacyKeyEncryptionKey(salt: Salt, vaultID: VaultID) -> SymmetricKey {
        let hasher = BLAKE2bHasher(outputByteCount: SymmetricKey.byteCount)
        hasher.update(Array("coffer-recovery-v1".utf8) + salt.bytes + vaultID.bytes)
        secret.withUnsafeBytes { hasher.update($0) }
        return hasher.finalizeKey()
    }

    /// The X25519 key pair of format 2's recovery slot: scalar =
    /// BLAKE2b-256("coffer-recovery-x25519-v1" ‖ vault id ‖ secret).
    func agreementKey(vaultID: VaultID) -> KeyAgreementPrivateKey {
        let hasher = BLAKE2bHasher(outputByteCount: SymmetricKey.byteCount)
        hasher.update(Array("coffer-recovery-x25519-v1".utf8) + vaultID.bytes)
        secret.withUnsafeBytes { hasher.update($0) }
        return KeyAgreementPrivateKey(seed: hasher.finalizeKey())
    }
}

extension RecoveryKey: CustomStringConvertible, CustomReflectable {
    public var description: String { "RecoveryKey(redacted)" }
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
