import FinanceCore
import Foundation

/// Kind 6, backup target: a folder `coffer backup create` writes to by default.
///
/// Payload versions:
/// - v1 (current): folder path `string`.
extension BackupTarget: RecordPayload {
    static let recordKind = RecordKind.backupTarget

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(path)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> BackupTarget {
        BackupTarget(path: try reader.string())
    }
}
