import Foundation
import VaultCrypto

/// A vault's random 16-byte identity, bound into every record's associated data so that a
/// record, manifest bucket or session from one vault can never be used in another.
public struct VaultID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
    static func random() -> VaultID { VaultID(unchecked: SecureRandom.bytes(count: byteCount)) }
    public var hex: String { bytes.hexString }
    public var description: String { hex }
}

/// What opens a key slot.
enum KeySlotKind: UInt8 {
    case passphrase = 1
    case recoveryKey = 2
}

/// How a slot's key-encryption key is derived.
enum SlotKDF: UInt8 {
    /// Argon2id v1.3 over the NFC-normalised passphrase.
    case argon2id13 = 1
    /// Keyed BLAKE2b over a full-entropy recovery key: stretching adds nothing to 128 random bits.
    case blake2bRecoveryKey = 2
}

/// One way into the vault: the master key wrapped under a key derived from a credential.
struct KeySlot: Equatable {
    static let byteCount = 1 + 1 + 8 + 8 + 16 + 24 + 48
    static let wrappedKeyByteCount = SymmetricKey.byteCount + XChaCha20Poly1305.tagByteCount

    let kind: KeySlotKind
    let kdf: SlotKDF
    /// Raw stored values; for Argon2id slots they are range-checked when the header is parsed.
    let opsLimit: UInt64
    let memLimit: UInt64
    let salt: Salt
    let nonce: AEADNonce
    let wrappedKey: [UInt8]

    /// Argon2id parameters of a passphrase slot (validated at parse time).
    var argon2Parameters: Argon2idParameters? {
        kdf == .argon2id13 ? try? Argon2idParameters(opsLimit: opsLimit, memLimit: memLimit) : nil
    }

    /// The slot bytes that the wrapping authenticates: everything but the nonce and wrapped key.
    private var parameterBytes: [UInt8] {
        var writer = ByteWriter(capacity: 34)
        writer.append(kind.rawValue)
        writer.append(kdf.rawValue)
        writer.append(opsLimit)
        writer.append(memLimit)
        writer.append(salt.bytes)
        return writer.bytes
    }

    /// "coffer-slot-v1" ‖ vault id ‖ kind ‖ kdf ‖ opslimit ‖ memlimit ‖ salt: editing any
    /// parameter makes the slot fail to open instead of silently weakening it.
    static func associatedData(vaultID: VaultID, parameterBytes: [UInt8]) -> [UInt8] {
        Array("coffer-slot-v1".utf8) + vaultID.bytes + parameterBytes
    }

    func encode(into writer: inout ByteWriter) {
        writer.append(parameterBytes)
        writer.append(nonce.bytes)
        writer.append(wrappedKey)
    }

    static func decode(from reader: inout ByteReader) throws -> KeySlot {
        let kindByte = try reader.readUInt8()
        let kdfByte = try reader.readUInt8()
        guard let kind = KeySlotKind(rawValue: kindByte), let kdf = SlotKDF(rawValue: kdfByte) else {
            throw VaultError(.headerDamaged, "The vault header has a key slot of unknown type \(kindByte)/\(kdfByte).")
        }
        let ops = try reader.readUInt64()
        let mem = try reader.readUInt64()
        if kdf == .argon2id13 {
            do {
                _ = try Argon2idParameters(opsLimit: ops, memLimit: mem)
            } catch let error as CryptoError {
                throw VaultError(.unsafeParameters, "The vault header is not safe to use: \(error.errorDescription ?? "")")
            }
        }
        return KeySlot(kind: kind, kdf: kdf, opsLimit: ops, memLimit: mem,
                       salt: try Salt(reader.read(Salt.byteCount)),
                       nonce: try AEADNonce(reader.read(AEADNonce.byteCount)),
                       wrappedKey: try reader.read(wrappedKeyByteCount))
    }

    /// Wraps `master` under `kek` with a fresh nonce.
    static func wrapping(_ master: SymmetricKey, kek: SymmetricKey, kind: KeySlotKind, kdf: SlotKDF,
                         opsLimit: UInt64, memLimit: UInt64, salt: Salt, vaultID: VaultID) -> KeySlot {
        let nonce = AEADNonce.random()
        var slot = KeySlot(kind: kind, kdf: kdf, opsLimit: opsLimit, memLimit: memLimit, salt: salt,
                           nonce: nonce, wrappedKey: [])
        let ad = associatedData(vaultID: vaultID, parameterBytes: slot.parameterBytes)
        let wrapped = master.withUnsafeBytes { plain in
            ad.withUnsafeBytes { XChaCha20Poly1305.seal(plain, key: kek, nonce: nonce, associatedData: $0) }
        }
        slot = KeySlot(kind: kind, kdf: kdf, opsLimit: opsLimit, memLimit: memLimit, salt: salt,
                       nonce: nonce, wrappedKey: Array(wrapped))
        return slot
    }

    /// The master key, or nil when `kek` is not the key this slot was wrapped with.
    func unwrap(with kek: SymmetricKey, vaultID: VaultID) -> SymmetricKey? {
        let ad = Self.associatedData(vaultID: vaultID, parameterBytes: parameterBytes)
        guard let secret = try? XChaCha20Poly1305.openSecret(wrappedKey, key: kek, nonce: nonce, associatedData: ad) else {
            return nil
        }
        return try? SymmetricKey(secret)
    }
}

/// The vault header, stored as one BLOB (layout in Specs/vault-format.md):
///
///     magic "CFRVAULT" ‖ format u16 ‖ vault id 16 ‖ master key id 16 ‖ slot count u8 ‖ slots
///     ‖ header MAC 32 (BLAKE2b keyed with the header subkey) ‖ checksum 32 (unkeyed BLAKE2b)
///
/// The unkeyed checksum tells accidental damage apart from a wrong passphrase before any key
/// exists; the keyed MAC, checked after unlocking, catches deliberate edits.
struct VaultHeader {
    static let magic = Array("CFRVAULT".utf8)
    static let currentFormatVersion: UInt16 = 1
    static let digestByteCount = 32

    let formatVersion: UInt16
    let vaultID: VaultID
    /// A keyed fingerprint of the master key: lets a stale session (from before a rekey) be told
    /// apart from a tampered header.
    let masterKeyID: [UInt8]
    let slots: [KeySlot]
    let mac: [UInt8]

    var passphraseSlot: KeySlot? { slots.first { $0.kind == .passphrase } }
    var recoverySlot: KeySlot? { slots.first { $0.kind == .recoveryKey } }

    /// A header for `keys` with its MAC computed.
    init(vaultID: VaultID, keys: VaultKeys, slots: [KeySlot]) {
        let body = Self.body(formatVersion: Self.currentFormatVersion, vaultID: vaultID, masterKeyID: keys.masterKeyID, slots: slots)
        self.init(formatVersion: Self.currentFormatVersion, vaultID: vaultID, masterKeyID: keys.masterKeyID,
                  slots: slots, mac: BLAKE2b.hash(body, key: keys.header))
    }

    private init(formatVersion: UInt16, vaultID: VaultID, masterKeyID: [UInt8], slots: [KeySlot], mac: [UInt8]) {
        self.formatVersion = formatVersion
        self.vaultID = vaultID
        self.masterKeyID = masterKeyID
        self.slots = slots
        self.mac = mac
    }

    /// The same header with `slots` replaced and the MAC recomputed.
    func replacingSlots(_ slots: [KeySlot], keys: VaultKeys) -> VaultHeader {
        VaultHeader(vaultID: vaultID, keys: keys, slots: slots.sorted { $0.kind.rawValue < $1.kind.rawValue })
    }

    private static func body(formatVersion: UInt16, vaultID: VaultID, masterKeyID: [UInt8], slots: [KeySlot]) -> [UInt8] {
        var writer = ByteWriter(capacity: 43 + slots.count * KeySlot.byteCount)
        writer.append(magic)
        writer.append(formatVersion)
        writer.append(vaultID.bytes)
        writer.append(masterKeyID)
        writer.append(UInt8(slots.count))
        for slot in slots { slot.encode(into: &writer) }
        return writer.bytes
    }

    var body: [UInt8] { Self.body(formatVersion: formatVersion, vaultID: vaultID, masterKeyID: masterKeyID, slots: slots) }

    func encoded() -> [UInt8] {
        let signed = body + mac
        return signed + BLAKE2b.hash(signed)
    }

    func hasValidMAC(keys: VaultKeys) -> Bool {
        let expected = BLAKE2b.hash(body, key: keys.header)
        return constantTimeEqual(expected, mac)
    }

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
        guard version <= currentFormatVersion, version >= 1 else {
            throw VaultError(.unsupportedVersion,
                "This vault uses format version \(version); this Coffer reads up to version \(currentFormatVersion). Upgrade Coffer.")
        }
        let vaultID = VaultID(unchecked: try reader.read(VaultID.byteCount))
        let keyID = try reader.read(16)
        let slotCount = Int(try reader.readUInt8())
        var slots: [KeySlot] = []
        for _ in 0..<slotCount { slots.append(try KeySlot.decode(from: &reader)) }
        guard slots.filter({ $0.kind == .passphrase }).count == 1,
              slots.filter({ $0.kind == .recoveryKey }).count <= 1 else { throw damaged() }
        let mac = try reader.read(digestByteCount)
        guard reader.remaining == 0 else { throw damaged() }
        return VaultHeader(formatVersion: version, vaultID: vaultID, masterKeyID: keyID, slots: slots, mac: mac)
    }
}

func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    guard a.count == b.count else { return false }
    return zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

/// Fuzzing's way in: the header parser exactly as opening a vault runs it, before any key work.
@_spi(Fuzzing) public func fuzzVaultHeaderParser(_ bytes: [UInt8]) {
    _ = try? VaultHeader.decode(bytes)
}
