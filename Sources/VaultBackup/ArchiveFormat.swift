import Foundation
import VaultCrypto
import VaultStore

/// The archive header (Specs/backup-format.md, "Header"). Everything needed to check the
/// archive's structure without a key, and to derive its key from the passphrase alone.
struct ArchiveHeader: Equatable {
    static let magic = Array("COFFERBK".utf8)
    /// 1: the export row by row (records sorted by id); 2: the id table, then the export in
    /// columns; 3: the id table coded, and layouts with `n`; 4: the id table coded in columns
    /// (Specs/backup-format.md).
    static let currentFormatVersion: UInt16 = 4
    static let xzCodec: UInt8 = 1
    /// Critical flags this reader understands (none yet): any other set bit means "refuse".
    static let knownCriticalFlags: UInt16 = 0

    var formatVersion = currentFormatVersion
    var criticalFlags: UInt16 = 0
    var optionalFlags: UInt16 = 0
    var codec = xzCodec
    var schemaVersion = ExportFormat.schemaVersion
    var vaultID: [UInt8]
    var sequence: UInt64
    var created: UInt64
    var plaintextLength: UInt64
    /// The vault header when the archive was made: its passphrase slot (Argon2id parameters,
    /// salt, wrapped master key) lets the passphrase of that time re-derive the archive key.
    var vaultHeader: [UInt8]
    var fileKeyNonce: AEADNonce
    var wrappedFileKey: [UInt8]
    var streamHeader: [UInt8]
    var signer: SigningPublicKey

    /// Everything before the file-key nonce: the associated data of the wrapped file key.
    var boundPrefix: [UInt8] {
        var writer = Writer()
        writer.bytes(Self.magic)
        writer.u16(formatVersion)
        writer.u16(criticalFlags)
        writer.u16(optionalFlags)
        writer.u8(codec)
        writer.u16(schemaVersion)
        writer.bytes(vaultID)
        writer.u64(sequence)
        writer.u64(created)
        writer.u64(plaintextLength)
        writer.u16(UInt16(vaultHeader.count))
        writer.bytes(vaultHeader)
        return writer.output
    }

    func encoded() -> [UInt8] {
        var writer = Writer()
        writer.bytes(boundPrefix)
        writer.bytes(fileKeyNonce.bytes)
        writer.bytes(wrappedFileKey)
        writer.bytes(streamHeader)
        writer.bytes(signer.bytes)
        return writer.output + BLAKE2b.hash(writer.output)
    }

    /// Parses the header at the start of `bytes`; returns it and its length.
    static func parse(_ bytes: [UInt8]) throws -> (ArchiveHeader, Int) {
        var reader = Reader(bytes)
        guard bytes.count >= magic.count, Array(bytes[..<magic.count]) == magic else {
            throw BackupError(.damaged, "This file is not a Coffer archive (wrong magic bytes).")
        }
        reader.offset = magic.count
        let version = try reader.u16()
        guard version >= 1, version <= currentFormatVersion else {
            throw BackupError(
                .unsupported,
                "This archive uses format version \(version); this Coffer reads up to version \(currentFormatVersion). Upgrade Coffer."
            )
        }
        let critical = try reader.u16()
        guard critical & ~knownCriticalFlags == 0 else {
            throw BackupError(
                .unsupported,
                "This archive needs a feature this Coffer does not have (critical flags \(String(critical, radix: 16))). Upgrade Coffer."
            )
        }
        let optional = try reader.u16()
        let codec = try reader.u8()
        guard codec == xzCodec else {
            throw BackupError(
                .unsupported, "This archive uses compression codec \(codec), which this Coffer does not read.")
        }
        let schema = try reader.u16()
        guard schema >= 1, schema <= ExportFormat.schemaVersion else {
            throw BackupError(
                .unsupported,
                "This archive's records use schema version \(schema); this Coffer reads up to \(ExportFormat.schemaVersion). Upgrade Coffer."
            )
        }
        let header = ArchiveHeader(
            formatVersion: version, criticalFlags: critical, optionalFlags: optional, codec: codec,
            schemaVersion: schema,
            vaultID: try reader.bytes(16), sequence: try reader.u64(), created: try reader.u64(),
            plaintextLength: try reader.u64(),
            vaultHeader: try reader.bytes(Int(try reader.u16())),
            fileKeyNonce: try AEADNonce(try reader.bytes(AEADNonce.byteCount)),
            wrappedFileKey: try reader.bytes(SymmetricKey.byteCount + XChaCha20Poly1305.tagByteCount),
            streamHeader: try reader.bytes(SecretStream.headerByteCount),
            signer: try SigningPublicKey(try reader.bytes(32)))
        let checked = reader.offset
        guard try reader.bytes(32) == BLAKE2b.hash(Array(bytes[..<checked])) else {
            throw BackupError(.damaged, "The archive header is damaged: its checksum does not match.")
        }
        return (header, reader.offset)
    }

    static func fileKeyAssociatedData(_ prefix: [UInt8]) -> [UInt8] { Array("coffer-archive-key-v1".utf8) + prefix }
}

/// The export inside a format 1 archive (schema 1): every record, sorted by id, after a
/// manifest that says what should be there. Only read now; formats 2 to 4 share its manifest.
enum ExportFormat {
    static let schemaVersion: UInt16 = 1
    static let magic = Array("CFREXPV1".utf8)

    struct Manifest: Equatable {
        var recordCount: UInt64
        /// Record kind (the payload's first byte) → count.
        var countsByKind: [UInt8: UInt64]
        /// BLAKE2b-256 of the records section.
        var contentDigest: [UInt8]
        var commitCounter: UInt64
        /// e.g. "GBP 229584.25": net worth when the archive was made, for people comparing archives.
        var netWorth: String
        var appVersion: String
    }

    /// `record count u64 ‖ kinds u8 ‖ (kind u8 ‖ count u64)×kinds ‖ digest 32 ‖ commit counter
    /// u64 ‖ net worth string ‖ app version string`, the same in both export layouts.
    static func encodeManifest(_ manifest: Manifest) -> [UInt8] {
        var writer = Writer()
        writer.u64(manifest.recordCount)
        writer.u8(UInt8(manifest.countsByKind.count))
        for (kind, count) in manifest.countsByKind.sorted(by: { $0.key < $1.key }) {
            writer.u8(kind)
            writer.u64(count)
        }
        writer.bytes(manifest.contentDigest)
        writer.u64(manifest.commitCounter)
        writer.string(manifest.netWorth)
        writer.string(manifest.appVersion)
        return writer.output
    }

    static func parseManifest(_ bytes: [UInt8]) throws -> Manifest {
        var reader = Reader(bytes)
        let count = try reader.u64()
        var counts: [UInt8: UInt64] = [:]
        for _ in 0..<(try reader.u8()) { counts[try reader.u8()] = try reader.u64() }
        let manifest = Manifest(
            recordCount: count, countsByKind: counts, contentDigest: try reader.bytes(32),
            commitCounter: try reader.u64(), netWorth: try reader.string(), appVersion: try reader.string())
        guard reader.offset == bytes.count else {
            throw BackupError(.damaged, "The archive's manifest has bytes Coffer does not know.")
        }
        return manifest
    }

    /// Parses and checks an export: the records must match the manifest's count, per-kind
    /// counts and digest exactly.
    static func decode(_ bytes: [UInt8]) throws -> (Manifest, [(RecordID, Data)]) {
        var reader = Reader(bytes)
        guard try reader.bytes(magic.count) == magic else {
            throw BackupError(.damaged, "The archive's content is not a Coffer export.")
        }
        guard try reader.u16() == schemaVersion else {
            throw BackupError(.unsupported, "The archive's export schema is not one this Coffer reads.")
        }
        let manifest = try parseManifest(try reader.bytes(Int(try reader.u32())))
        let sectionStart = reader.offset
        guard BLAKE2b.hash(Array(bytes[sectionStart...])) == manifest.contentDigest else {
            throw BackupError(.damaged, "The archive's records do not match its manifest's digest.")
        }
        var records: [(RecordID, Data)] = []
        var seenCounts: [UInt8: UInt64] = [:]
        var previous: RecordID?
        while reader.offset < bytes.count {
            let id = try RecordID(try reader.bytes(RecordID.byteCount))
            guard previous.map({ $0 < id }) ?? true else {
                throw BackupError(.damaged, "The archive's records are out of order or duplicated.")
            }
            previous = id
            let payload = try reader.bytes(Int(try reader.u32()))
            seenCounts[payload.first ?? 0, default: 0] += 1
            records.append((id, Data(payload)))
        }
        guard UInt64(records.count) == manifest.recordCount, seenCounts == manifest.countsByKind else {
            throw BackupError(
                .damaged, "The archive holds \(records.count) records but its manifest lists \(manifest.recordCount).")
        }
        return (manifest, records)
    }
}

/// Little-endian writer and bounds-checked reader for the archive layouts.
struct Writer {
    private(set) var output: [UInt8] = []
    mutating func bytes(_ value: [UInt8]) { output += value }
    mutating func u8(_ value: UInt8) { output.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { output += $0 } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { output += $0 } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { output += $0 } }
    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8.prefix(Int(UInt16.max)))
        u16(UInt16(utf8.count))
        bytes(utf8)
    }
}

struct Reader {
    let input: [UInt8]
    var offset = 0
    init(_ input: [UInt8]) { self.input = input }

    mutating func bytes(_ count: Int) throws -> [UInt8] {
        guard count >= 0, input.count - offset >= count else {
            throw BackupError(.damaged, "The archive is truncated.")
        }
        defer { offset += count }
        return Array(input[offset..<offset + count])
    }
    mutating func u8() throws -> UInt8 { try bytes(1)[0] }
    mutating func u16() throws -> UInt16 { try bytes(2).reversed().reduce(0) { $0 << 8 | UInt16($1) } }
    mutating func u32() throws -> UInt32 { try bytes(4).reversed().reduce(0) { $0 << 8 | UInt32($1) } }
    mutating func u64() throws -> UInt64 { try bytes(8).reversed().reduce(0) { $0 << 8 | UInt64($1) } }
    mutating func string() throws -> String {
        guard let text = String(validating: try bytes(Int(try u16())), as: UTF8.self) else {
            throw BackupError(.damaged, "The archive holds malformed text.")
        }
        return text
    }
}

/// Fuzzing's way in to everything that reads an archive: the file (header and chunk framing,
/// which run before any signature or key check), its signature text, the xz stream and the
/// decrypted content formats (which a self-made archive with a known passphrase can reach):
/// format 1's export, format 2's and 3's blocks and layouts (rebuilt by one thread and by two),
/// and their whole bodies (id table, xz, blocks).
/// Package-only: the fuzzer is part of this package, no client of the library is.
package func fuzzArchiveReader(_ bytes: [UInt8]) {
    if let (_, headerLength) = try? ArchiveHeader.parse(bytes) {
        _ = try? Archive.chunkRanges(bytes, from: headerLength)
    }
    _ = try? MinisignSignature(parsing: String(decoding: bytes, as: UTF8.self))
    _ = try? XZ.decompress(bytes, expectedLength: 1 << 20, memoryLimit: 32 << 20)
    _ = try? ExportFormat.decode(bytes)
    bytes.withUnsafeBytes { input in
        let ids = UnsafeRawBufferPointer(rebasing: input.prefix(64))
        _ = try? ColumnBlockDecoder.decode(input, ids: ids, sharing: nil) { _, _, _ in }
        // The same block shared with another thread from its third record, which holds a few.
        _ = try? ColumnBlockDecoder.decode(input, ids: ids, sharing: .init(records: 2, heldBytes: 256)) { _, _, _ in }
        _ = try? ColumnExport.read(input, format: 2, exportLength: 1 << 20, visit: { _, _ in })
        _ = try? ColumnExport.read(input, format: 3, exportLength: 1 << 20, visit: { _, _ in })
        _ = try? ColumnExport.read(input, format: 4, exportLength: 1 << 20, visit: { _, _ in })
    }
}
