import Foundation
import VaultCrypto

/// Purpose bytes in the associated data of the structures sealed with the integrity key.
private enum SealedPurpose: UInt8 {
    case manifestBucket = 2
    case commitRecord = 3
}

/// How one record's payload is padded and sealed (Specs/vault-format.md, "Records").
enum RecordCipher {
    /// Payloads are padded to a multiple of 64 bytes so the file shows size buckets, not sizes.
    static let paddingBlockSize = 64
    static let nonceByteCount = AEADNonce.byteCount
    static let tagByteCount = XChaCha20Poly1305.tagByteCount

    /// vault id ‖ record id ‖ version (u64 LE) ‖ format version (u16 LE): a ciphertext opens only
    /// as this record, at this version, in this vault.
    static func associatedData(vaultID: VaultID, id: RecordID, version: UInt64) -> [UInt8] {
        var writer = ByteWriter(capacity: 42)
        writer.append(vaultID.bytes)
        writer.append(id.bytes)
        writer.append(version)
        writer.append(VaultHeader.currentFormatVersion)
        return writer.bytes
    }

    /// nonce ‖ ciphertext ‖ tag, and the tag alone (the manifest's fingerprint of the ciphertext).
    static func seal(_ payload: Data, id: RecordID, version: UInt64, key: SymmetricKey, vaultID: VaultID) -> (sealed: Data, tag: [UInt8]) {
        let nonce = AEADNonce.random()
        var padded = Padding.pad(payload, blockSize: paddingBlockSize)
        defer { secureWipe(&padded) }
        let ciphertext = XChaCha20Poly1305.seal(padded, key: key, nonce: nonce,
                                                associatedData: associatedData(vaultID: vaultID, id: id, version: version))
        var sealed = Data(nonce.bytes)
        sealed.append(ciphertext)
        return (sealed, Array(ciphertext.suffix(tagByteCount)))
    }

    /// The payload, or nil when the bytes do not authenticate as this record at this version.
    static func open(_ sealed: UnsafeRawBufferPointer, id: RecordID, version: UInt64, key: SymmetricKey, vaultID: VaultID) -> Data? {
        guard sealed.count >= nonceByteCount + tagByteCount + paddingBlockSize else { return nil }
        guard let nonce = try? AEADNonce(UnsafeRawBufferPointer(rebasing: sealed[..<nonceByteCount])) else { return nil }
        let ciphertext = UnsafeRawBufferPointer(rebasing: sealed[nonceByteCount...])
        var padded = Data(count: ciphertext.count - tagByteCount)
        let ad = associatedData(vaultID: vaultID, id: id, version: version)
        let opened: Int? = padded.withUnsafeMutableBytes { out in
            do {
                try ad.withUnsafeBytes { try XChaCha20Poly1305.open(ciphertext, key: key, nonce: nonce, associatedData: $0, into: out) }
                return try Padding.unpaddedLength(of: UnsafeRawBufferPointer(out), blockSize: paddingBlockSize)
            } catch {
                return nil
            }
        }
        guard let length = opened else { return nil }
        padded.count = length
        return padded
    }

    static func tag(of sealed: UnsafeRawBufferPointer) -> [UInt8] {
        Array(sealed.suffix(tagByteCount))
    }
}

/// What the manifest knows of one record: id, version and the ciphertext's 16-byte Poly1305 tag.
/// The tag is a MAC of the ciphertext under a key only the vault holds, so it fingerprints the
/// exact ciphertext without hashing it again.
struct ManifestEntry: Equatable {
    static let byteCount = RecordID.byteCount + 8 + XChaCha20Poly1305.tagByteCount
    let id: RecordID
    let version: UInt64
    let tag: [UInt8]
}

/// The manifest: 256 buckets (by the first byte of the record id), each a sorted list of
/// entries, sealed with the integrity key. A write re-seals only the buckets it touches.
enum Manifest {
    static let bucketCount = 256

    private static func associatedData(vaultID: VaultID, bucket: Int) -> [UInt8] {
        var writer = ByteWriter(capacity: 20)
        writer.append(vaultID.bytes)
        writer.append(SealedPurpose.manifestBucket.rawValue)
        writer.append(VaultHeader.currentFormatVersion)
        writer.append(UInt8(bucket))
        return writer.bytes
    }

    static func seal(_ entries: [ManifestEntry], bucket: Int, key: SymmetricKey, vaultID: VaultID) -> Data {
        var writer = ByteWriter(capacity: entries.count * ManifestEntry.byteCount)
        for entry in entries {
            writer.append(entry.id.bytes)
            writer.append(entry.version)
            writer.append(entry.tag)
        }
        let nonce = AEADNonce.random()
        var sealed = Data(nonce.bytes)
        sealed.append(XChaCha20Poly1305.seal(writer.bytes, key: key, nonce: nonce,
                                             associatedData: associatedData(vaultID: vaultID, bucket: bucket)))
        return sealed
    }

    /// The bucket's entries, or nil when it does not authenticate or is malformed.
    static func open(_ sealed: Data, bucket: Int, key: SymmetricKey, vaultID: VaultID) -> [ManifestEntry]? {
        guard sealed.count >= AEADNonce.byteCount + XChaCha20Poly1305.tagByteCount,
              let nonce = try? AEADNonce(sealed.prefix(AEADNonce.byteCount)),
              let plain = try? XChaCha20Poly1305.open(sealed.dropFirst(AEADNonce.byteCount), key: key, nonce: nonce,
                                                      associatedData: associatedData(vaultID: vaultID, bucket: bucket)),
              plain.count % ManifestEntry.byteCount == 0 else { return nil }
        var reader = ByteReader(plain, onTruncation: { VaultError(.integrityFailure, "truncated manifest") })
        var entries: [ManifestEntry] = []
        entries.reserveCapacity(plain.count / ManifestEntry.byteCount)
        while reader.remaining > 0 {
            guard let id = try? RecordID(reader.read(RecordID.byteCount)),
                  let version = try? reader.readUInt64(),
                  let tag = try? reader.read(XChaCha20Poly1305.tagByteCount),
                  id.bucket == bucket, entries.last.map({ $0.id < id }) ?? true else { return nil }
            entries.append(ManifestEntry(id: id, version: version, tag: tag))
        }
        return entries
    }

    static func digest(ofSealed sealed: Data) -> [UInt8] { BLAKE2b.hash(sealed) }
}

/// The commit record: a counter, the record count and the BLAKE2b-256 digest of every sealed
/// manifest bucket, itself sealed with the integrity key. Together with the buckets it is a
/// keyed hash over the whole set of (record id, version, ciphertext tag): any record deleted,
/// added, duplicated or replaced by an older copy changes it.
struct CommitRecord: Equatable {
    static let plaintextByteCount = 8 + 8 + Manifest.bucketCount * 32

    var counter: UInt64
    var recordCount: UInt64
    var bucketDigests: [[UInt8]]

    private static func associatedData(vaultID: VaultID) -> [UInt8] {
        var writer = ByteWriter(capacity: 19)
        writer.append(vaultID.bytes)
        writer.append(SealedPurpose.commitRecord.rawValue)
        writer.append(VaultHeader.currentFormatVersion)
        return writer.bytes
    }

    func sealed(key: SymmetricKey, vaultID: VaultID) -> Data {
        var writer = ByteWriter(capacity: Self.plaintextByteCount)
        writer.append(counter)
        writer.append(recordCount)
        for digest in bucketDigests { writer.append(digest) }
        let nonce = AEADNonce.random()
        var sealed = Data(nonce.bytes)
        sealed.append(XChaCha20Poly1305.seal(writer.bytes, key: key, nonce: nonce,
                                             associatedData: Self.associatedData(vaultID: vaultID)))
        return sealed
    }

    static func open(_ sealed: Data, key: SymmetricKey, vaultID: VaultID) -> CommitRecord? {
        guard sealed.count > AEADNonce.byteCount,
              let nonce = try? AEADNonce(sealed.prefix(AEADNonce.byteCount)),
              let plain = try? XChaCha20Poly1305.open(sealed.dropFirst(AEADNonce.byteCount), key: key, nonce: nonce,
                                                      associatedData: associatedData(vaultID: vaultID)),
              plain.count == plaintextByteCount else { return nil }
        var reader = ByteReader(plain, onTruncation: { VaultError(.integrityFailure, "truncated commit record") })
        guard let counter = try? reader.readUInt64(), let count = try? reader.readUInt64() else { return nil }
        var digests: [[UInt8]] = []
        for _ in 0..<Manifest.bucketCount {
            guard let digest = try? reader.read(32) else { return nil }
            digests.append(digest)
        }
        return CommitRecord(counter: counter, recordCount: count, bucketDigests: digests)
    }
}
