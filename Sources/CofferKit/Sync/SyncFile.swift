import Foundation
import VaultBackup
import VaultCrypto
import VaultStore

/// The keys of one key generation of a sync folder, derived from the vault's own.
struct SyncKeys {
    let vaultID: VaultID
    let generation: UInt32
    /// Seals every file: `crypto_kdf(backup subkey, id 1, "CfrSync1")`.
    let sealing: SymmetricKey
    /// The vault's signing key: it certifies each device's enrolment.
    let vaultSigning: SigningKey
    /// Every generation of the vault's signing key (certificates of older enrolments).
    let history: [KeyGeneration]
    /// Where this device's sync state is kept in the vault: keyed, so it looks like any record
    /// id to a holder of the file, yet a sync with nothing to do finds it without reading the
    /// others. BLAKE2b-128 of "sync state" keyed with `crypto_kdf(backup subkey, id 2, "CfrSync1")`.
    let stateRecordID: RecordID

    static let context = KDFContext("CfrSync1")

    init(_ keys: BackupKeys) {
        vaultID = keys.vaultID
        generation = keys.keyHistory.last?.number ?? 1
        sealing = keys.backupKey.deriveSubkey(id: 1, context: Self.context)
        vaultSigning = keys.signingKey
        history = keys.keyHistory
        stateRecordID = try! RecordID(
            BLAKE2b.hash(
                Array("sync state".utf8), outputByteCount: RecordID.byteCount,
                key: keys.backupKey.deriveSubkey(id: 2, context: Self.context)))
    }

    func vaultKey(ofGeneration number: UInt32) -> SigningPublicKey? {
        history.first { $0.number == number }?.signingKey
    }
}

/// Why a file in a sync folder was not used. Each is reported with the file's name; none stops
/// the files of other devices from being merged.
public enum SyncFileProblem: Error, Equatable, Sendable, CustomStringConvertible {
    /// Shorter than its header says: still arriving, or cut short. Tried again next sync.
    case incomplete
    /// Not a Coffer sync file, or longer than its header says, or malformed inside.
    case damaged
    /// Made for another vault.
    case otherVault
    /// Its contents name another device or sequence than its file name: replayed or renamed.
    case misnamed(String)
    /// From a device that has no valid enrolment in the folder.
    case unknownDevice
    /// The signature does not verify: altered, or forged by someone without the device's key.
    case badSignature
    /// Does not decrypt under this vault's key: altered, or sealed with another key.
    case doesNotOpen
    /// Sealed under a key generation this device does not hold yet (after a rekey elsewhere).
    case newerGeneration(UInt32)
    /// Sealed under a key generation older than this device's, which it no longer holds.
    case olderGeneration(UInt32)
    /// A copy a sync tool made (`… (1).cfsync`, `…sync-conflict…`): Coffer never writes one.
    case copyBySyncTool
    /// From a device that was removed, published after its removal.
    case removedDevice
    /// Holds a record this Coffer cannot read (written by a newer version).
    case newerRecord
    /// A kind of file or of write this version does not know: made by a newer Coffer.
    case newerFormat
    /// A directory, a link or a device where Coffer only ever writes files.
    case notAFile
    /// A keys file whose vault header's key history is not this vault's: not certified by its
    /// keys (forged), or planted under another generation's name.
    case foreignKeys(String)

    /// Problems that a later sync (or a newer Coffer) may clear, as opposed to files refused as
    /// forged, altered or misplaced.
    public var isTransient: Bool { self == .incomplete || self == .newerRecord || self == .newerFormat }

    public var description: String {
        switch self {
        case .incomplete: "incomplete (still being synced, or cut short); tried again next time"
        case .damaged: "damaged: not a well-formed Coffer sync file"
        case .otherVault: "belongs to another vault"
        case .misnamed(let detail): "replayed or renamed: \(detail)"
        case .unknownDevice: "from a device with no valid enrolment in this folder"
        case .badSignature: "forged or altered: its signature does not verify"
        case .doesNotOpen: "altered or sealed with another key: it does not decrypt"
        case .newerGeneration(let number):
            "sealed under key generation \(number), newer than this device's (a rekey or device removal elsewhere)"
        case .olderGeneration(let number): "sealed under key generation \(number), older than this device's"
        case .copyBySyncTool: "a copy made by a sync tool, not by Coffer; ignored"
        case .removedDevice: "from a removed device, published after its removal"
        case .newerRecord: "holds a record written by a newer Coffer; upgrade Coffer to merge it"
        case .newerFormat:
            "made by a newer Coffer (a kind of file or change this one does not read); upgrade Coffer to merge it"
        case .notAFile: "not a file (a directory, a link or a device where Coffer writes only files); not followed"
        case .foreignKeys(let detail): "not this vault's keys: \(detail)"
        }
    }
}

/// The sealed, signed envelope every enrolment and change file has (Specs/sync-format.md §3).
struct SyncEnvelope {
    enum Kind: UInt8 {
        case enrolment = 1
        case changes = 2
    }

    static let magic = Array("CFRSYNC1".utf8)
    static let headerByteCount = 8 + 1 + 16 + 4 + 4 + 16 + 8 + 4
    static let signatureLabel = Array("coffer-sync-signature-v1".utf8)
    /// Bodies are padded to a multiple of this (ISO/IEC 7816-4), so sizes say little.
    static let padBlock = 512
    /// No Coffer writes a file larger than this; a larger one is refused before it is read.
    static let maximumByteCount = 1 << 30

    let kind: Kind
    let vaultID: [UInt8]
    let generation: UInt32
    let epoch: UInt32
    let device: SyncDeviceID
    let sequence: UInt64
    let header: [UInt8]
    let sealed: [UInt8]
    let signature: Signature

    static func seal(
        kind: Kind, body: [UInt8], keys: SyncKeys, device: SyncDeviceID,
        sequence: UInt64, signer: SigningKey
    ) -> [UInt8] {
        seal(kind: kind, packed: packed(body), keys: keys, device: device, sequence: sequence, signer: signer)
    }

    /// `packed`: a packed body of any codec (a change file's in columns: `SyncChanges.packed`).
    static func seal(
        kind: Kind, packed: [UInt8], keys: SyncKeys, device: SyncDeviceID,
        sequence: UInt64, signer: SigningKey
    ) -> [UInt8] {
        let padded = Padding.pad(packed, blockSize: padBlock)
        var header = magic
        header.append(kind.rawValue)
        header += keys.vaultID.bytes
        withUnsafeBytes(of: keys.generation.littleEndian) { header += $0 }
        withUnsafeBytes(of: keys.generation.littleEndian) { header += $0 }  // the epoch is the generation
        header += device.bytes
        withUnsafeBytes(of: sequence.littleEndian) { header += $0 }
        let sealedCount = UInt32(padded.count + XChaCha20Poly1305.SealedBox.overheadByteCount)
        withUnsafeBytes(of: sealedCount.littleEndian) { header += $0 }
        let sealed = [UInt8](XChaCha20Poly1305.seal(padded, key: keys.sealing, associatedData: header).combined)
        let signature = signer.signature(for: signatureLabel + header + sealed)
        return header + sealed + signature.bytes
    }

    /// Reads the envelope without any key: completeness, magic, vault.
    static func parse(_ bytes: [UInt8], vaultID: VaultID) throws(SyncFileProblem) -> SyncEnvelope {
        guard bytes.count >= headerByteCount else {
            throw bytes.starts(with: magic.prefix(min(bytes.count, magic.count))) ? .incomplete : .damaged
        }
        guard bytes.starts(with: magic) else { throw .damaged }
        func integer<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
            bytes.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
        }
        guard let kind = Kind(rawValue: bytes[8]) else { throw .newerFormat }
        let vault = Array(bytes[9..<25])
        let sealedCount = Int(integer(UInt32.self, at: 57))
        let total = headerByteCount + sealedCount + Signature.byteCount
        guard sealedCount >= XChaCha20Poly1305.SealedBox.overheadByteCount + padBlock else { throw .damaged }
        guard bytes.count >= total else { throw .incomplete }
        guard bytes.count == total else { throw .damaged }
        guard vault == vaultID.bytes else { throw .otherVault }
        return SyncEnvelope(
            kind: kind, vaultID: vault, generation: integer(UInt32.self, at: 25), epoch: integer(UInt32.self, at: 29),
            device: SyncDeviceID(unchecked: Array(bytes[33..<49])), sequence: integer(UInt64.self, at: 49),
            header: Array(bytes[0..<headerByteCount]),
            sealed: Array(bytes[headerByteCount..<headerByteCount + sealedCount]),
            signature: Signature(unchecked: Array(bytes[(headerByteCount + sealedCount)...])))
    }

    func verify(_ key: SigningPublicKey) throws(SyncFileProblem) {
        guard key.isValidSignature(signature, for: Self.signatureLabel + header + sealed) else { throw .badSignature }
    }

    /// The body of a file whose body is packed as 0 or 1 (an enrolment).
    func open(_ keys: SyncKeys) throws(SyncFileProblem) -> [UInt8] {
        try Self.unpacked(openPacked(keys))
    }

    /// The changes of a change file, packed in any codec.
    func openChanges(_ keys: SyncKeys) throws(SyncFileProblem) -> SyncChanges {
        try SyncChanges.decode(packed: openPacked(keys))
    }

    /// The packed body (its first byte says the codec), after the seal is opened.
    func openPacked(_ keys: SyncKeys) throws(SyncFileProblem) -> [UInt8] {
        guard generation == keys.generation else {
            throw generation > keys.generation ? .newerGeneration(generation) : .olderGeneration(generation)
        }
        do {
            let box = try XChaCha20Poly1305.SealedBox(combined: sealed)
            let padded = try XChaCha20Poly1305.open(box, key: keys.sealing, associatedData: header)
            let length = try padded.withUnsafeBytes { try Padding.unpaddedLength(of: $0, blockSize: Self.padBlock) }
            return Array(padded.prefix(length))
        } catch {
            throw .doesNotOpen
        }
    }

    /// Bodies of this size and more are xz-compressed before sealing: a whole vault's first
    /// publish then takes about what a backup archive does.
    static let compressionThreshold = 4096

    /// `0 ‖ body`, or `1 ‖ u64 body length ‖ xz(body)` (inside the seal, so only the size shows);
    /// a change file of many puts is packed in columns instead (`SyncChanges.packed`, codec 2).
    static func packed(_ body: [UInt8]) -> [UInt8] {
        guard body.count >= compressionThreshold, let compressed = try? XZ.compress(body),
            compressed.count + 9 < body.count
        else { return [0] + body }
        var packed: [UInt8] = [1]
        withUnsafeBytes(of: UInt64(body.count).littleEndian) { packed += $0 }
        return packed + compressed
    }

    static func unpacked(_ packed: [UInt8]) throws(SyncFileProblem) -> [UInt8] {
        switch packed.first {
        case 0: return Array(packed.dropFirst())
        case 1:
            guard packed.count > 9 else { throw .damaged }
            let length = packed.withUnsafeBytes {
                UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 1, as: UInt64.self))
            }
            guard length <= UInt64(maximumByteCount) else { throw .damaged }
            do {
                return try XZ.decompress(Array(packed.dropFirst(9)), expectedLength: Int(length))
            } catch {
                throw .damaged
            }
        default: throw .newerFormat
        }
    }
}

/// A device's enrolment: its public key and name, certified by the vault's signing key.
struct SyncEnrolment: Equatable {
    var publicKey: [UInt8]
    var name: String
    /// Seconds since 1970.
    var enrolled: Int64

    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writer.bytes(publicKey)
        writer.string(name)
        writer.signed(enrolled)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> SyncEnrolment {
        try bytes.withUnsafeBytes { raw in
            var reader = PayloadReader(raw)
            let enrolment = SyncEnrolment(
                publicKey: try reader.bytes(), name: try reader.string(), enrolled: try reader.signed())
            guard reader.isAtEnd, enrolment.publicKey.count == SigningPublicKey.byteCount else {
                throw PayloadReader.malformed
            }
            return enrolment
        }
    }
}

/// One write in a change file: a record put or deleted, with its stamp and the stamp of the
/// value it replaced on the device that wrote it (`base`), which tells a follow-up from a
/// concurrent edit.
struct SyncOperation: Equatable {
    var record: RecordID
    var clock: UInt64
    var base: SyncStamp
    /// nil: a delete.
    var payload: [UInt8]?
}

/// The body of a change file.
struct SyncChanges: Equatable {
    /// Thrown for a write type this version does not know (a newer Coffer's).
    struct NewerWrite: Error {}

    /// When it was published, milliseconds since 1970 by the publisher's clock.
    var published: Int64
    /// What the publisher had applied from each device (itself: the sequence before this one):
    /// a device applies this file only after all of them, so changes arrive in causal order.
    var seen: [SyncDeviceID: UInt64]
    var operations: [SyncOperation]

    /// The body as packed body 0 or 1 hold it (Specs/sync-format.md §4, "Change file body").
    func encoded() -> [UInt8] {
        var writer = PayloadWriter()
        writeHead(&writer)
        // In columns (ids, clocks, bases, then the values), not write by write: a batch's clocks
        // and bases repeat, and kept together they compress to almost nothing, so a whole
        // vault's first publish is no larger than its backup archive.
        writer.unsigned(UInt64(operations.count))
        for operation in operations { writer.raw(operation.record.bytes) }
        for operation in operations { writer.unsigned(operation.clock) }
        for operation in operations { Self.write(base: operation.base, to: &writer) }
        for operation in operations {
            if let payload = operation.payload {
                writer.byte(1)
                writer.bytes(payload)
            } else {
                writer.byte(2)
            }
        }
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> SyncChanges {
        try bytes.withUnsafeBytes { raw in
            var reader = PayloadReader(raw)
            let head = try readHead(&reader)
            let count = try reader.unsigned()
            // Each write takes at least 19 bytes (id, clock, base, type): a count the body cannot
            // hold is refused before anything is reserved for it.
            guard count <= UInt64(raw.count / 19) else { throw PayloadReader.malformed }
            let records = try (0..<Int(count)).map { _ in try reader.raw(16) { try RecordID(contiguous: $0) } }
            let clocks = try records.map { _ in try reader.unsigned() }
            let bases = try records.map { _ in try readBase(&reader) }
            var operations: [SyncOperation] = []
            operations.reserveCapacity(records.count)
            for index in records.indices {
                let payload: [UInt8]?
                switch try reader.byte() {
                case 1: payload = try reader.bytes()
                case 2: payload = nil
                default: throw NewerWrite()
                }
                operations.append(
                    SyncOperation(record: records[index], clock: clocks[index], base: bases[index], payload: payload))
            }
            guard reader.isAtEnd, Set(operations.map(\.record)).count == operations.count else {
                throw PayloadReader.malformed
            }
            return SyncChanges(published: head.published, seen: head.seen, operations: operations)
        }
    }

    /// `published`, then `seen` (sorted by device id): how every body begins.
    func writeHead(_ writer: inout PayloadWriter) {
        writer.signed(published)
        writer.list(seen.sorted { $0.key < $1.key }) { writer, entry in
            writer.raw(entry.key.bytes)
            writer.unsigned(entry.value)
        }
    }

    /// The changes with their head read and no operations yet.
    static func readHead(_ reader: inout PayloadReader) throws -> SyncChanges {
        let published = try reader.signed()
        var seen: [SyncDeviceID: UInt64] = [:]
        let entries = try reader.list { reader in
            (SyncDeviceID(unchecked: try reader.raw(SyncDeviceID.byteCount)), try reader.unsigned())
        }
        for (device, sequence) in entries {
            guard seen.updateValue(sequence, forKey: device) == nil else { throw PayloadReader.malformed }
        }
        return SyncChanges(published: published, seen: seen, operations: [])
    }

    /// A zero base (a record new to its writer) is its clock 0 alone; every other stamp's clock
    /// is above 0, so the device follows only then.
    static func write(base: SyncStamp, to writer: inout PayloadWriter) {
        writer.unsigned(base.clock)
        if base.clock != 0 { writer.raw(base.device.bytes) }
    }

    static func readBase(_ reader: inout PayloadReader) throws -> SyncStamp {
        let clock = try reader.unsigned()
        return clock == 0 ? .zero : SyncStamp(clock: clock, device: SyncDeviceID(unchecked: try reader.raw(16)))
    }
}
