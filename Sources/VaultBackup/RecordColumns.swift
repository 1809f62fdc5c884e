import Foundation
import VaultStore

/// Records in the archive's column-shaped, compressed encoding outside an archive: a sync
/// folder's snapshot carries its records in it (Specs/sync-format.md §4, packed body 2), so a
/// whole vault's first publish costs what a backup does and takes the archive's size.
///
/// The bytes are `export length u64 ‖ the content of a format 4 archive` (Specs/backup-format.md,
/// "Body, format 4": the counts, the coded id table, then the xz stream of the export with its
/// manifest, whose commit counter is 0 and whose net worth and app version are empty).
package enum RecordColumns {
    /// The most records one encoding holds: what an archive's export holds.
    package static let maximumRecords = Int(Int32.max)

    /// The encoding of `records`, and each record's place in it (its export position) by its
    /// index in `records`: what `decode` hands the records back in.
    package static func encode(_ records: CollectedRecords, layouts: [UInt16: ColumnLayout], preset: UInt32) throws -> (
        bytes: [UInt8], positions: [Int32]
    ) {
        let written = try ColumnExport.write(
            records, layouts: layouts,
            manifest: { count, counts, digest in
                ExportFormat.encodeManifest(
                    .init(
                        recordCount: count, countsByKind: counts, contentDigest: digest, commitCounter: 0,
                        netWorth: "", appVersion: ""))
            },
            writer: try XZ.BlockWriter(
                preset: preset, threads: Archive.compressionThreads,
                blockSize: Archive.compressionBlock))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + written.prefix.count + written.compressed.count)
        withUnsafeBytes(of: written.exportLength.littleEndian) { bytes += $0 }
        bytes += written.prefix
        bytes += written.compressed
        return (bytes, written.positions)
    }

    /// Hands every record of `bytes` to `visit` in export order (each payload valid only during
    /// the call), after checking what an archive's reader checks: the id table, every block, each
    /// id once, and the manifest's counts and digest. Returns how many records there were.
    /// Only ever called on bytes already authenticated; a failure is a `BackupError(.damaged)`.
    @discardableResult
    package static func decode(
        _ bytes: UnsafeRawBufferPointer, visit: (RecordID, UnsafeRawBufferPointer) throws -> Void
    ) throws -> Int {
        guard bytes.count >= 8 else { throw ColumnExport.truncated }
        let exportLength = UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self))
        let manifest = try withoutActuallyEscaping(visit) { visit in
            try ColumnExport.read(
                UnsafeRawBufferPointer(rebasing: bytes[8...]), format: 4, exportLength: exportLength, visit: visit)
        }
        return Int(manifest.recordCount)
    }
}
