import Foundation
import VaultCrypto

/// Purpose bytes in the associated data of the structures sealed with the integrity key.
private enum SealedPurpose: UInt8 {
    case manifestBucket = 2
    case commitRecord = 3
}

/// The version in record and manifest-bucket associated data. It stays 1 in header format 2:
/// those layouts did not change, so upgrading a vault re-seals no record.
let recordFormatVersion: UInt16 = 1

/// How one record's payload is padded and sealed (Specs/vault-format.md, "Records").
enum RecordCipher {
    /// Payloads are padded to a multiple of 64 bytes so the file shows size buckets, not sizes.
    static let paddingBlockSize = 64

    /// vault id ‖ record id ‖ version (u64 LE) ‖ format version (u16 LE): a ciphertext opens only
    /// as this record, at this version, in this vault.
    static func associatedData(vaultID: VaultID, id: RecordID, version: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 42)
        writer.append(vaultID.bytes)
        writer.append(id)
        writer.append(version)
        writer.append(recordFormatVersion)
        return writer.bytes
    }

    /// The sealed box as stored (nonce ‖ ciphertext ‖ tag), and the tag alone (the manifest's
    /// fingerprint of the ciphertext).
    static func seal(_ payload: Data, id: RecordID, version: UInt64, key: SymmetricKey, vaultID: VaultID) -> (
        sealed: Data, tag: RecordTag
    ) {
        var padded = Padding.pad(payload, blockSize: paddingBlockSize)
        defer { secureWipe(&padded) }
        let box = XChaCha20Poly1305.seal(
            padded, key: key, associatedData: associatedData(vaultID: vaultID, id: id, version: version))
        return (box.combined, box.combined.withUnsafeBytes { tag(of: $0) })
    }

    /// Seals every put of `changes` at its version, on all cores; nil for deletes.
    static func sealAll(_ changes: [RecordChange], versions: [UInt64], key: SymmetricKey, vaultID: VaultID) -> [(
        Data, RecordTag
    )?] {
        var results = [(Data, RecordTag)?](repeating: nil, count: changes.count)
        let chunkSize = 1024
        let chunks = (changes.count + chunkSize - 1) / chunkSize
        results.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let output = output  // each chunk writes only its own indices
            DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                for index in chunk * chunkSize..<min(changes.count, (chunk + 1) * chunkSize) {
                    guard case .put(let id, let payload) = changes[index] else { continue }
                    output[index] = seal(payload, id: id, version: versions[index], key: key, vaultID: vaultID)
                }
            }
        }
        return results
    }

    /// Opens every row of `sealed` (the rows' bytes back to back) on all cores, into `plain`
    /// (as long as `sealed`; a row's payload starts where its sealed bytes do). The result is in
    /// the rows' order: each payload's range in `plain`, or nil where the bytes do not
    /// authenticate.
    static func openAll(
        _ sealed: [UInt8], rows: [SealedRow], into plain: inout [UInt8], key: SymmetricKey, vaultID: VaultID
    ) -> [Range<Int>?] {
        var results = [Range<Int>?](repeating: nil, count: rows.count)
        guard !rows.isEmpty else { return results }
        if plain.count < sealed.count { plain = [UInt8](repeating: 0, count: sealed.count) }
        let chunkSize = 512
        let chunks = (rows.count + chunkSize - 1) / chunkSize
        let vaultIDBytes = vaultID.bytes
        sealed.withUnsafeBytes { all in
            plain.withUnsafeMutableBytes { plain in
                results.withUnsafeMutableBufferPointer { output in
                    // Each chunk touches only its own rows; the buffers outlive the parallel loop.
                    nonisolated(unsafe) let output = output
                    nonisolated(unsafe) let all = all
                    nonisolated(unsafe) let plain = plain
                    DispatchQueue.concurrentPerform(iterations: chunks) { chunk in
                        var ad = [UInt8](repeating: 0, count: 42)
                        ad.replaceSubrange(0..<16, with: vaultIDBytes)
                        withUnsafeBytes(of: recordFormatVersion.littleEndian) { ad.replaceSubrange(40..<42, with: $0) }
                        ad.withUnsafeMutableBytes { ad in
                            for index in chunk * chunkSize..<min(rows.count, (chunk + 1) * chunkSize) {
                                let row = rows[index]
                                let bytes = UnsafeRawBufferPointer(rebasing: all[row.range])
                                guard bytes.count >= XChaCha20Poly1305.SealedBox.overheadByteCount + paddingBlockSize
                                else { continue }
                                // Associated data: vault id ‖ record id ‖ version ‖ format (see associatedData).
                                withUnsafeBytes(
                                    of: (
                                        row.id.high.bigEndian, row.id.low.bigEndian,
                                        UInt64(clamping: row.storedVersion).littleEndian
                                    )
                                ) {
                                    UnsafeMutableRawBufferPointer(rebasing: ad[16..<40]).copyMemory(from: $0)
                                }
                                let start = row.range.lowerBound
                                let padded = UnsafeMutableRawBufferPointer(
                                    rebasing: plain[
                                        start..<start + bytes.count - XChaCha20Poly1305.SealedBox.overheadByteCount])
                                guard
                                    XChaCha20Poly1305.open(
                                        combined: bytes, key: key, associatedData: UnsafeRawBufferPointer(ad),
                                        into: padded),
                                    let length = try? Padding.unpaddedLength(
                                        of: UnsafeRawBufferPointer(padded), blockSize: paddingBlockSize)
                                else { continue }
                                output[index] = start..<start + length
                            }
                        }
                    }
                }
            }
        }
        return results
    }

    /// The Poly1305 tag of stored nonce ‖ ciphertext ‖ tag bytes: their last 16 bytes.
    static func tag(of sealed: UnsafeRawBufferPointer) -> RecordTag {
        RecordTag(unsafe: sealed.baseAddress! + sealed.count - XChaCha20Poly1305.tagByteCount)
    }
}

/// A row read from the record table, waiting to be opened: its sealed bytes are `range` of a
/// shared buffer.
struct SealedRow: Sendable {
    let id: RecordID
    let storedVersion: Int64
    let entry: ManifestEntry?
    let range: Range<Int>
}

/// What the manifest knows of one record: id, version and the ciphertext's 16-byte Poly1305 tag.
/// The tag is a MAC of the ciphertext under a key only the vault holds, so it fingerprints the
/// exact ciphertext without hashing it again.
struct ManifestEntry: Equatable, Sendable {
    static let byteCount = RecordID.byteCount + 8 + XChaCha20Poly1305.tagByteCount
    let id: RecordID
    let version: UInt64
    let tag: RecordTag
}

/// A ciphertext's 16-byte Poly1305 tag, held in two words: no allocation per record.
struct RecordTag: Equatable, Sendable {
    private let first: UInt64
    private let second: UInt64

    init(_ bytes: [UInt8]) {
        precondition(bytes.count == XChaCha20Poly1305.tagByteCount)
        self = bytes.withUnsafeBytes { RecordTag(unsafe: $0.baseAddress!) }
    }

    init(unsafe pointer: UnsafeRawPointer) {
        first = pointer.loadUnaligned(as: UInt64.self)
        second = pointer.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
    }

    var bytes: [UInt8] { withUnsafeBytes(of: (first, second)) { Array($0) } }

    /// The tag of a page not sealed yet.
    static let unset = RecordTag([UInt8](repeating: 0, count: XChaCha20Poly1305.tagByteCount))

    /// Compares without an early exit.
    func constantTimeEquals(_ other: RecordTag) -> Bool { (first ^ other.first) | (second ^ other.second) == 0 }

    static func == (lhs: RecordTag, rhs: RecordTag) -> Bool { lhs.constantTimeEquals(rhs) }
}

/// The manifest: 256 buckets (by the first byte of the record id), each a sorted list of
/// entries, sealed with the integrity key. A write re-seals only the buckets it touches.
enum Manifest {
    static let bucketCount = 256

    private static func associatedData(vaultID: VaultID, bucket: Int) -> [UInt8] {
        var writer = ByteWriter(capacity: 20)
        writer.append(vaultID.bytes)
        writer.append(SealedPurpose.manifestBucket.rawValue)
        writer.append(recordFormatVersion)
        writer.append(UInt8(bucket))
        return writer.bytes
    }

    static func seal(_ entries: [ManifestEntry], bucket: Int, key: SymmetricKey, vaultID: VaultID) -> Data {
        var writer = ByteWriter(capacity: entries.count * ManifestEntry.byteCount)
        for entry in entries {
            writer.append(entry.id)
            writer.append(entry.version)
            writer.append(entry.tag.bytes)
        }
        return XChaCha20Poly1305.seal(
            writer.bytes, key: key, associatedData: associatedData(vaultID: vaultID, bucket: bucket)
        ).combined
    }

    enum Checked: Sendable {
        case opened([ManifestEntry])
        case digestMismatch
        case damaged
    }

    /// Checks each sealed bucket against the commit record's digest and opens it, on all cores.
    static func openAll(_ sealed: [(index: Int, sealed: Data)], digests: [[UInt8]], key: SymmetricKey, vaultID: VaultID)
        -> [Checked]
    {
        var results = [Checked](repeating: .damaged, count: sealed.count)
        results.withUnsafeMutableBufferPointer { output in
            nonisolated(unsafe) let output = output  // each iteration writes only its own index
            DispatchQueue.concurrentPerform(iterations: sealed.count) { position in
                let (index, bytes) = sealed[position]
                guard constantTimeEqual(digest(ofSealed: bytes), digests[index]) else {
                    return output[position] = .digestMismatch
                }
                output[position] =
                    open(bytes, bucket: index, key: key, vaultID: vaultID).map(Checked.opened) ?? .damaged
            }
        }
        return results
    }

    /// The bucket's entries, or nil when it does not authenticate or is malformed.
    static func open(_ sealed: Data, bucket: Int, key: SymmetricKey, vaultID: VaultID) -> [ManifestEntry]? {
        guard let box = try? XChaCha20Poly1305.SealedBox(combined: sealed),
            let plain = try? XChaCha20Poly1305.open(
                box, key: key, associatedData: associatedData(vaultID: vaultID, bucket: bucket)),
            plain.count % ManifestEntry.byteCount == 0
        else { return nil }
        let count = plain.count / ManifestEntry.byteCount
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(count)
        let wellFormed: Bool = plain.withUnsafeBytes { raw in
            for index in 0..<count {
                let base = raw.baseAddress! + index * ManifestEntry.byteCount
                let id = RecordID(unsafe: base)
                guard id.bucket == bucket, entries.last.map({ $0.id < id }) ?? true else { return false }
                let version = UInt64(
                    littleEndian: base.loadUnaligned(fromByteOffset: RecordID.byteCount, as: UInt64.self))
                entries.append(
                    ManifestEntry(id: id, version: version, tag: RecordTag(unsafe: base + RecordID.byteCount + 8)))
            }
            return true
        }
        guard wellFormed else { return nil }
        return entries
    }

    static func digest(ofSealed sealed: Data) -> [UInt8] { BLAKE2b.hash(sealed) }
}

/// A vault file's identity among the copies of one vault (a "device" in the sync design): drawn
/// at random when a vault is created, upgraded or restored, kept in the sealed commit record.
/// Two files with the same device id are the same line of history; the high-water mark follows
/// each device's commit counter to notice a file rolled back or forked.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public static let byteCount = 16
    public let bytes: [UInt8]
    init(unchecked bytes: [UInt8]) { self.bytes = bytes }
    static func random() -> DeviceID { DeviceID(unchecked: SecureRandom.bytes(count: byteCount)) }
    public var hex: String { bytes.hexString }
    public var description: String { hex }
}

/// The commit record: a counter, the record count and the BLAKE2b-256 digest of every sealed
/// manifest bucket, itself sealed with the integrity key. Together with the buckets it is a
/// keyed hash over the whole set of (record id, version, ciphertext tag): any record deleted,
/// added, duplicated or replaced by an older copy changes it. In header format 2 it also names
/// the header (its BLAKE2b-256) and the file's device id.
struct CommitRecord: Equatable {
    static let format1ByteCount = 8 + 8 + Manifest.bucketCount * 32
    static let format2ByteCount = format1ByteCount + 32 + DeviceID.byteCount

    var counter: UInt64
    var recordCount: UInt64
    var bucketDigests: [[UInt8]]
    /// Format 2: BLAKE2b-256 of the whole header as stored.
    var headerDigest: [UInt8]?
    /// Format 2: which copy of the vault this file is.
    var deviceID: DeviceID?

    /// The associated data names the header format, so a format 1 commit record never opens as
    /// a format 2 one (or the reverse).
    private static func associatedData(vaultID: VaultID, formatVersion: UInt16) -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.append(vaultID.bytes)
        writer.append(SealedPurpose.commitRecord.rawValue)
        writer.append(formatVersion)
        return writer.bytes
    }

    func sealed(key: SymmetricKey, vaultID: VaultID) -> Data {
        var writer = ByteWriter(capacity: Self.format2ByteCount)
        writer.append(counter)
        writer.append(recordCount)
        for digest in bucketDigests { writer.append(digest) }
        let formatVersion: UInt16
        if let headerDigest, let deviceID {
            writer.append(headerDigest)
            writer.append(deviceID.bytes)
            formatVersion = 2
        } else {
            formatVersion = 1
        }
        return XChaCha20Poly1305.seal(
            writer.bytes, key: key,
            associatedData: Self.associatedData(vaultID: vaultID, formatVersion: formatVersion)
        ).combined
    }

    static func open(_ sealed: Data, key: SymmetricKey, vaultID: VaultID, formatVersion: UInt16) -> CommitRecord? {
        guard let box = try? XChaCha20Poly1305.SealedBox(combined: sealed),
            let plain = try? XChaCha20Poly1305.open(
                box, key: key, associatedData: associatedData(vaultID: vaultID, formatVersion: formatVersion)),
            plain.count == (formatVersion >= 2 ? format2ByteCount : format1ByteCount)
        else { return nil }
        var reader = ByteReader(plain, onTruncation: { VaultError(.integrityFailure, "truncated commit record") })
        guard let counter = try? reader.readUInt64(), let count = try? reader.readUInt64() else { return nil }
        var digests: [[UInt8]] = []
        for _ in 0..<Manifest.bucketCount {
            guard let digest = try? reader.read(32) else { return nil }
            digests.append(digest)
        }
        var record = CommitRecord(counter: counter, recordCount: count, bucketDigests: digests)
        if formatVersion >= 2 {
            guard let header = try? reader.read(32), let device = try? reader.read(DeviceID.byteCount) else {
                return nil
            }
            record.headerDigest = header
            record.deviceID = DeviceID(unchecked: device)
        }
        return record
    }

    /// A public fingerprint of one exact state of the vault file: BLAKE2b-256 of the sealed
    /// commit record. The high-water mark keeps it to tell two states with one counter apart.
    static func stateDigest(ofSealed sealed: Data) -> [UInt8] { BLAKE2b.hash(sealed) }
}
