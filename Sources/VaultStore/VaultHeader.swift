import Foundation
import VaultCrypto

/// A vault's random 16-byte identity, bound into every record's associated data so that a
/// record, manifest bucket or session from one vault can never be used in another.
public struct VaultID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]
    package init(unchecked bytes: [UInt8]) { self.bytes = bytes }
    static func random() -> VaultID { VaultID(unchecked: SecureRandom.bytes(count: byteCount)) }
    public var hex: String { bytes.hexString }
    public var description: String { hex }
}

/// Slot kinds (what opens a slot) and key-derivation tags, pinned: they are written to disk.
enum KeySlotKind: UInt8 {
    case passphrase = 1
    case recoveryKey = 2
}

enum SlotKDF: UInt8 {
    /// Argon2id v1.3 over the NFC-normalised passphrase.
    case argon2id13 = 1
    /// Format 1's recovery slot: BLAKE2b over the 128-bit recovery secret. Still read; a rekey
    /// can only carry it forward when the recovery key itself is at hand.
    case blake2bRecoveryKey = 2
    /// Format 2's recovery slot: the master key sealed to the recovery key's X25519 public key,
    /// so every rekey can re-seal it without the recovery key.
    case x25519RecoveryKey = 3
}

/// The passphrase slot: the master key wrapped under an Argon2id-derived key.
struct PassphraseSlot: Equatable {
    static let byteCount = 1 + 1 + 8 + 8 + 16 + 24 + 48
    let parameters: Argon2idParameters
    let salt: Salt
    /// The master key sealed under the key Argon2id derives: nonce ‖ ciphertext ‖ tag.
    let wrappedKey: XChaCha20Poly1305.SealedBox

    var associatedData: [UInt8] {
        legacySlotAssociatedData(
            kind: .passphrase, kdf: .argon2id13, opsLimit: parameters.opsLimit, memLimit: parameters.memLimit,
            salt: salt)
    }

    func encode(into writer: inout ByteWriter) {
        writer.append(KeySlotKind.passphrase.rawValue)
        writer.append(SlotKDF.argon2id13.rawValue)
        writer.append(parameters.opsLimit)
        writer.append(parameters.memLimit)
        writer.append(salt.bytes)
        writer.append(wrappedKey.combined)
    }
}

/// The optional recovery slot.
enum RecoverySlot: Equatable {
    /// Kind 2 / KDF 2 (format 1's): the master key under BLAKE2b(salt, vault id, secret).
    case legacy(salt: Salt, wrappedKey: XChaCha20Poly1305.SealedBox)
    /// Kind 2 / KDF 3: the master key under a key agreed between an ephemeral X25519 key and the
    /// recovery key's public key (`recipient`).
    case sealed(
        recipient: KeyAgreementPublicKey, ephemeral: KeyAgreementPublicKey, wrappedKey: XChaCha20Poly1305.SealedBox)

    static let legacyByteCount = PassphraseSlot.byteCount
    static let sealedByteCount = 1 + 1 + 32 + 32 + 24 + 48

    var isLegacy: Bool { if case .legacy = self { true } else { false } }

    func encode(into writer: inout ByteWriter) {
        writer.append(KeySlotKind.recoveryKey.rawValue)
        switch self {
        case .legacy(let salt, let wrapped):
            writer.append(SlotKDF.blake2bRecoveryKey.rawValue)
            writer.append(UInt64(0))
            writer.append(UInt64(0))
            writer.append(salt.bytes)
            writer.append(wrapped.combined)
        case .sealed(let recipient, let ephemeral, let wrapped):
            writer.append(SlotKDF.x25519RecoveryKey.rawValue)
            writer.append(recipient.bytes)
            writer.append(ephemeral.bytes)
            writer.append(wrapped.combined)
        }
    }
}

/// "coffer-slot-v1" ‖ vault id ‖ kind ‖ KDF ‖ opslimit ‖ memlimit ‖ salt: editing any parameter
/// makes the slot fail to open instead of silently weakening it. (The vault id is appended by
/// the caller that knows it.)
private func legacySlotAssociatedData(kind: KeySlotKind, kdf: SlotKDF, opsLimit: UInt64, memLimit: UInt64, salt: Salt)
    -> [UInt8]
{
    var writer = ByteWriter(capacity: 34)
    writer.append(kind.rawValue)
    writer.append(kdf.rawValue)
    writer.append(opsLimit)
    writer.append(memLimit)
    writer.append(salt.bytes)
    return writer.bytes
}

enum SlotCipher {
    /// A sealed master key: nonce ‖ 32-byte ciphertext ‖ tag.
    static let sealedKeyByteCount = XChaCha20Poly1305.SealedBox.overheadByteCount + SymmetricKey.byteCount

    static func associatedData(vaultID: VaultID, parameterBytes: [UInt8]) -> [UInt8] {
        Array("coffer-slot-v1".utf8) + vaultID.bytes + parameterBytes
    }

    static func wrap(_ master: SymmetricKey, kek: SymmetricKey, associatedData: [UInt8]) -> XChaCha20Poly1305.SealedBox
    {
        master.withUnsafeBytes { XChaCha20Poly1305.seal($0, key: kek, associatedData: associatedData) }
    }

    static func unwrap(_ wrapped: XChaCha20Poly1305.SealedBox, kek: SymmetricKey, associatedData: [UInt8])
        -> SymmetricKey?
    {
        guard let secret = try? XChaCha20Poly1305.openSecret(wrapped, key: kek, associatedData: associatedData) else {
            return nil
        }
        return try? SymmetricKey(secret)
    }
}

extension PassphraseSlot {
    static func wrapping(
        _ master: SymmetricKey, kek: SymmetricKey, parameters: Argon2idParameters, salt: Salt, vaultID: VaultID
    ) -> PassphraseSlot {
        let ad = SlotCipher.associatedData(
            vaultID: vaultID,
            parameterBytes: legacySlotAssociatedData(
                kind: .passphrase, kdf: .argon2id13, opsLimit: parameters.opsLimit, memLimit: parameters.memLimit,
                salt: salt))
        return PassphraseSlot(
            parameters: parameters, salt: salt, wrappedKey: SlotCipher.wrap(master, kek: kek, associatedData: ad))
    }

    func unwrap(with kek: SymmetricKey, vaultID: VaultID) -> SymmetricKey? {
        SlotCipher.unwrap(
            wrappedKey, kek: kek,
            associatedData: SlotCipher.associatedData(vaultID: vaultID, parameterBytes: associatedData))
    }
}

extension RecoverySlot {
    /// Seals `master` to the recovery key whose public half is `recipient`: no recovery secret
    /// is needed, which is what lets a rekey keep the recovery key working.
    static func sealing(_ master: SymmetricKey, to recipient: KeyAgreementPublicKey, vaultID: VaultID) throws
        -> RecoverySlot
    {
        let ephemeral = KeyAgreementPrivateKey.generate()
        let kek = try sealedKEK(
            shared: ephemeral.sharedSecret(with: recipient), ephemeral: ephemeral.publicKey, recipient: recipient)
        let ad = sealedAssociatedData(vaultID: vaultID, recipient: recipient, ephemeral: ephemeral.publicKey)
        return .sealed(
            recipient: recipient, ephemeral: ephemeral.publicKey,
            wrappedKey: SlotCipher.wrap(master, kek: kek, associatedData: ad))
    }

    /// KEK = BLAKE2b-32("coffer-recovery-x25519-v1" ‖ ephemeral ‖ recipient, key = X25519 shared secret).
    static func sealedKEK(shared: SymmetricKey, ephemeral: KeyAgreementPublicKey, recipient: KeyAgreementPublicKey)
        -> SymmetricKey
    {
        let hasher = BLAKE2bHasher(outputByteCount: SymmetricKey.byteCount, key: shared)
        hasher.update(Array("coffer-recovery-x25519-v1".utf8) + ephemeral.bytes + recipient.bytes)
        return hasher.finalizeKey()
    }

    static func sealedAssociatedData(
        vaultID: VaultID, recipient: KeyAgreementPublicKey, ephemeral: KeyAgreementPublicKey
    ) -> [UInt8] {
        SlotCipher.associatedData(
            vaultID: vaultID,
            parameterBytes: [KeySlotKind.recoveryKey.rawValue, SlotKDF.x25519RecoveryKey.rawValue]
                + recipient.bytes + ephemeral.bytes)
    }

    /// The master key, or nil when `recoveryKey` is not the key this slot was made for.
    func unwrap(with recoveryKey: RecoveryKey, vaultID: VaultID) -> SymmetricKey? {
        switch self {
        case .legacy(let salt, let wrapped):
            let ad = SlotCipher.associatedData(
                vaultID: vaultID,
                parameterBytes: legacySlotAssociatedData(
                    kind: .recoveryKey, kdf: .blake2bRecoveryKey, opsLimit: 0, memLimit: 0, salt: salt))
            return SlotCipher.unwrap(
                wrapped, kek: recoveryKey.legacyKeyEncryptionKey(salt: salt, vaultID: vaultID), associatedData: ad)
        case .sealed(let recipient, let ephemeral, let wrapped):
            let agreement = recoveryKey.agreementKey(vaultID: vaultID)
            guard agreement.publicKey == recipient, let shared = try? agreement.sharedSecret(with: ephemeral) else {
                return nil
            }
            let kek = Self.sealedKEK(shared: shared, ephemeral: ephemeral, recipient: recipient)
            return SlotCipher.unwrap(
                wrapped, kek: kek,
                associatedData: Self.sealedAssociatedData(vaultID: vaultID, recipient: recipient, ephemeral: ephemeral))
        }
    }
}

/// One generation of a vault's signing key. Generation 1 is the vault's first master key; each
/// rekey adds one. Each entry is certified by the previous generation's key (the first by
/// itself), so the list is a signed chain: a later key can only have been added by a holder of
/// the key before it.
public struct KeyGeneration: Equatable, Sendable {
    static let byteCount = 4 + 8 + 32 + 64
    public let number: UInt32
    /// Unix seconds when the generation was made.
    public let created: UInt64
    public let signingKey: SigningPublicKey
    let certificate: Signature

    /// "coffer-key-generation-v1" ‖ vault id ‖ u32 number ‖ u64 created ‖ public key.
    static func statement(vaultID: VaultID, number: UInt32, created: UInt64, signingKey: SigningPublicKey) -> [UInt8] {
        var writer = ByteWriter(capacity: 80)
        writer.append(Array("coffer-key-generation-v1".utf8))
        writer.append(vaultID.bytes)
        writer.append(number)
        writer.append(created)
        writer.append(signingKey.bytes)
        return writer.bytes
    }

    /// A new generation certified by `certifier` (the previous generation's key; for the first,
    /// the new key itself).
    static func certified(
        number: UInt32, created: UInt64, signingKey: SigningPublicKey, by certifier: SigningKey, vaultID: VaultID
    ) -> KeyGeneration {
        KeyGeneration(
            number: number, created: created, signingKey: signingKey,
            certificate: certifier.signature(
                for: statement(vaultID: vaultID, number: number, created: created, signingKey: signingKey)))
    }

    /// Generation 1 of the key pair `signing`, self-certified.
    static func first(signedBy signing: SigningKey, vaultID: VaultID, now: Date = Date()) -> KeyGeneration {
        certified(
            number: 1, created: UInt64(now.timeIntervalSince1970), signingKey: signing.publicKey, by: signing,
            vaultID: vaultID)
    }

    func encode(into writer: inout ByteWriter) {
        writer.append(number)
        writer.append(created)
        writer.append(signingKey.bytes)
        writer.append(certificate.bytes)
    }
}

/// The vault header, stored as one BLOB (layouts in Specs/vault-format.md §2):
///
///     format 1: magic ‖ 1 ‖ vault id ‖ master key id ‖ slot count ‖ slots ‖ MAC ‖ checksum
///     format 2: magic ‖ 2 ‖ vault id ‖ master key id ‖ generation u32 ‖ slot count ‖ slots
///               ‖ key history count u16 ‖ key history ‖ MAC ‖ checksum
///
/// The unkeyed checksum tells accidental damage apart from a wrong passphrase before any key
/// exists; the keyed MAC, checked after unlocking, catches deliberate edits; and in format 2 the
/// sealed commit record names the header's digest, so a session (which has no MAC key) and a
/// passphrase alike notice an older header put back.
struct VaultHeader {
    static let magic = Array("CFRVAULT".utf8)
    static let currentFormatVersion: UInt16 = 3
    static let digestByteCount = 32

    let formatVersion: UInt16
    let vaultID: VaultID
    /// A keyed fingerprint of the master key: tells a session of an older key generation apart
    /// from a tampered header.
    let masterKeyID: [UInt8]
    /// 1 in format 1 (which has no key history).
    let generation: UInt32
    let passphraseSlot: PassphraseSlot
    let recoverySlot: RecoverySlot?
    /// Empty in format 1; generations 1...`generation` in format 2.
    let keyHistory: [KeyGeneration]
    let mac: [UInt8]

    /// A current-format header for `keys`, with its MAC computed.
    init(
        vaultID: VaultID, keys: MasterKeys, generation: UInt32, passphraseSlot: PassphraseSlot,
        recoverySlot: RecoverySlot?, keyHistory: [KeyGeneration]
    ) {
        let body = Self.body(
            formatVersion: Self.currentFormatVersion, vaultID: vaultID, masterKeyID: keys.operational.masterKeyID,
            generation: generation, passphraseSlot: passphraseSlot, recoverySlot: recoverySlot, keyHistory: keyHistory)
        self.init(
            formatVersion: Self.currentFormatVersion, vaultID: vaultID, masterKeyID: keys.operational.masterKeyID,
            generation: generation, passphraseSlot: passphraseSlot, recoverySlot: recoverySlot, keyHistory: keyHistory,
            mac: BLAKE2b.hash(body, key: keys.header))
    }

    private init(
        formatVersion: UInt16, vaultID: VaultID, masterKeyID: [UInt8], generation: UInt32,
        passphraseSlot: PassphraseSlot,
        recoverySlot: RecoverySlot?, keyHistory: [KeyGeneration], mac: [UInt8]
    ) {
        self.formatVersion = formatVersion
        self.vaultID = vaultID
        self.masterKeyID = masterKeyID
        self.generation = generation
        self.passphraseSlot = passphraseSlot
        self.recoverySlot = recoverySlot
        self.keyHistory = keyHistory
        self.mac = mac
    }

    /// The same master key and generation with these slots, in the current format, MAC
    /// recomputed; a format 1 header gains its key history of one generation.
    func replacingSlots(passphrase: PassphraseSlot, recovery: RecoverySlot?, keys: MasterKeys) -> VaultHeader {
        VaultHeader(
            vaultID: vaultID, keys: keys, generation: generation, passphraseSlot: passphrase, recoverySlot: recovery,
            keyHistory: keyHistory(orFirstSignedBy: keys.operational.signing))
    }

    /// The key history, or for a format 1 header (which has none) generation 1 of `signing`,
    /// the key its master key derives.
    func keyHistory(orFirstSignedBy signing: SigningKey) -> [KeyGeneration] {
        keyHistory.isEmpty ? [KeyGeneration.first(signedBy: signing, vaultID: vaultID)] : keyHistory
    }

    private static func body(
        formatVersion: UInt16, vaultID: VaultID, masterKeyID: [UInt8], generation: UInt32,
        passphraseSlot: PassphraseSlot, recoverySlot: RecoverySlot?, keyHistory: [KeyGeneration]
    ) -> [UInt8] {
        var writer = ByteWriter(capacity: 256 + keyHistory.count * KeyGeneration.byteCount)
        writer.append(magic)
        writer.append(formatVersion)
        writer.append(vaultID.bytes)
        writer.append(masterKeyID)
        if formatVersion >= 2 { writer.append(generation) }
        writer.append(UInt8(recoverySlot == nil ? 1 : 2))
        passphraseSlot.encode(into: &writer)
        recoverySlot?.encode(into: &writer)
        if formatVersion >= 2 {
            writer.append(UInt16(keyHistory.count))
            for entry in keyHistory { entry.encode(into: &writer) }
        }
        return writer.bytes
    }

    var body: [UInt8] {
        Self.body(
            formatVersion: formatVersion, vaultID: vaultID, masterKeyID: masterKeyID, generation: generation,
            passphraseSlot: passphraseSlot, recoverySlot: recoverySlot, keyHistory: keyHistory)
    }

    func encoded() -> [UInt8] {
        let signed = body + mac
        return signed + BLAKE2b.hash(signed)
    }

    func hasValidMAC(keys: MasterKeys) -> Bool {
        constantTimeEqual(BLAKE2b.hash(body, key: keys.header), mac)
    }

    /// Parses every byte without trusting any: truncation, trailing bytes, an unknown slot
    /// kind/KDF pair, a slot count other than one passphrase slot and at most one recovery slot,
    /// unsafe Argon2id parameters and a broken key history are all errors, never traps.
    static func decode(_ bytes: [UInt8]) throws -> VaultHeader {
        let damaged = { VaultError(.headerDamaged, "The vault header is damaged: it is truncated or malformed.") }
        guard bytes.count > 2 * digestByteCount + magic.count else { throw damaged() }
        let checked = Array(bytes[..<(bytes.count - digestByteCount)])
        guard constantTimeEqual(BLAKE2b.hash(checked), Array(bytes[(bytes.count - digestByteCount)...])) else {
            throw VaultError(.headerDamaged, "The vault header is damaged: its checksum does not match.")
        }
        var reader = ByteReader(checked, onTruncation: damaged)
        guard try reader.read(magic.count) == magic else {
            throw VaultError(.notAVault, "This file is not a Coffer vault (its header has the wrong magic bytes).")
        }
        let version = try reader.readUInt16()
        guard version >= 1, version <= currentFormatVersion else {
            throw VaultError(
                .unsupportedVersion,
                "This vault uses format version \(version); this Coffer reads up to version \(currentFormatVersion). Upgrade Coffer."
            )
        }
        let vaultID = VaultID(unchecked: try reader.read(VaultID.byteCount))
        let keyID = try reader.read(16)
        let generation = version >= 2 ? try reader.readUInt32() : 1
        guard generation >= 1 else {
            throw VaultError(.headerDamaged, "The vault header is damaged: its key generation is 0.")
        }
        let slotCount = Int(try reader.readUInt8())
        var passphrase: PassphraseSlot?
        var recovery: RecoverySlot?
        for _ in 0..<slotCount {
            let kindByte = try reader.readUInt8()
            let kdfByte = try reader.readUInt8()
            switch (KeySlotKind(rawValue: kindByte), SlotKDF(rawValue: kdfByte)) {
            case (.passphrase?, .argon2id13?):
                guard passphrase == nil else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it has two passphrase slots.")
                }
                let ops = try reader.readUInt64(), mem = try reader.readUInt64()
                let parameters: Argon2idParameters
                do {
                    parameters = try Argon2idParameters(opsLimit: ops, memLimit: mem)
                } catch let error as CryptoError {
                    throw VaultError(
                        .unsafeParameters, "The vault header is not safe to use: \(error.errorDescription ?? "")")
                }
                passphrase = PassphraseSlot(
                    parameters: parameters, salt: try Salt(reader.read(Salt.byteCount)),
                    wrappedKey: try .init(combined: reader.read(SlotCipher.sealedKeyByteCount)))
            case (.recoveryKey?, .blake2bRecoveryKey?):
                guard recovery == nil else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it has two recovery slots.")
                }
                guard try reader.readUInt64() == 0, try reader.readUInt64() == 0 else {
                    throw VaultError(
                        .headerDamaged, "The vault header is damaged: its recovery slot has key-derivation parameters.")
                }
                recovery = .legacy(
                    salt: try Salt(reader.read(Salt.byteCount)),
                    wrappedKey: try .init(combined: reader.read(SlotCipher.sealedKeyByteCount)))
            case (.recoveryKey?, .x25519RecoveryKey?) where version >= 2:
                guard recovery == nil else {
                    throw VaultError(.headerDamaged, "The vault header is damaged: it has two recovery slots.")
                }
                recovery = .sealed(
                    recipient: try KeyAgreementPublicKey(reader.read(32)),
                    ephemeral: try KeyAgreementPublicKey(reader.read(32)),
                    wrappedKey: try .init(combined: reader.read(SlotCipher.sealedKeyByteCount)))
            default:
                throw VaultError(
                    .headerDamaged,
                    "The vault header is damaged: it has a key slot of unknown type \(kindByte)/\(kdfByte).")
            }
        }
        guard let passphrase else {
            throw VaultError(.headerDamaged, "The vault header is damaged: it has no passphrase slot.")
        }
        var history: [KeyGeneration] = []
        if version >= 2 {
            let count = Int(try reader.readUInt16())
            guard count == Int(generation) else {
                throw VaultError(
                    .headerDamaged,
                    "The vault header is damaged: its key history lists \(count) generations for generation \(generation)."
                )
            }
            for index in 0..<count {
                let entry = KeyGeneration(
                    number: try reader.readUInt32(), created: try reader.readUInt64(),
                    signingKey: try SigningPublicKey(reader.read(32)), certificate: try Signature(reader.read(64)))
                let certifier = index == 0 ? entry.signingKey : history[index - 1].signingKey
                guard entry.number == UInt32(index + 1),
                    certifier.isValidSignature(
                        entry.certificate,
                        for: KeyGeneration.statement(
                            vaultID: vaultID, number: entry.number, created: entry.created, signingKey: entry.signingKey
                        ))
                else {
                    throw VaultError(
                        .headerDamaged,
                        "The vault header is damaged: generation \(index + 1) of its key history is not certified by the key before it."
                    )
                }
                history.append(entry)
            }
        }
        let mac = try reader.read(digestByteCount)
        guard reader.remaining == 0 else { throw damaged() }
        return VaultHeader(
            formatVersion: version, vaultID: vaultID, masterKeyID: keyID, generation: generation,
            passphraseSlot: passphrase,
            recoverySlot: recovery, keyHistory: history, mac: mac)
    }

}

package func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

/// Fuzzing's way in: the header parser exactly as opening a vault runs it, before any key work,
/// and everything the commands read from a parsed header without a key (status, lock).
/// Package-only: the fuzzer is part of this package, no client of the library is.
package func fuzzVaultHeaderParser(_ bytes: [UInt8]) {
    guard let header = try? VaultHeader.decode(bytes) else { return }
    _ = header.passphraseSlot.parameters.profile
    _ = header.recoverySlot?.isLegacy
    _ = header.keyHistory.last?.signingKey
    _ = header.encoded()
}
