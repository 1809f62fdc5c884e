import FinanceCore
import Foundation

/// Kind 7, backup state: the vault's backup bookkeeping (archives leave it out).
///
/// Payload versions:
/// - v1 (current): last sequence issued `uvarint`, count `uvarint`, then per destination: path
///   `string`, newest verified sequence `uvarint`, verified at `svarint` (Unix seconds).
extension BackupState: RecordPayload {
    static let recordKind = RecordKind.backupState

    func encodeFields(into writer: inout PayloadWriter) {
        writer.unsigned(lastSequence)
        writer.list(verified) { writer, verified in
            writer.string(verified.path)
            writer.unsigned(verified.sequence)
            writer.signed(verified.time)
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> BackupState {
        let lastSequence = try reader.unsigned()
        let verified = try reader.list { reader in
            Verified(path: try reader.string(), sequence: try reader.unsigned(), time: try reader.signed())
        }
        return BackupState(lastSequence: lastSequence, verified: verified)
    }
}
