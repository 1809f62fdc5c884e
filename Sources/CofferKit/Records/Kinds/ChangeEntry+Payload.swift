import FinanceCore
import Foundation

/// Kind 5, change entry: one entry of the change log.
///
/// Payload versions:
/// - v1 (current): sequence `uvarint`, timestamp `svarint` (Unix seconds), summary `string`,
///   count `uvarint`, then per touched record: record id `uuid`, previous payload
///   `optional<bytes>` (absent: the change created it).
extension ChangeEntry: RecordPayload {
    static let recordKind = RecordKind.change

    func encodeFields(into writer: inout PayloadWriter) {
        writer.unsigned(sequence)
        writer.signed(timestamp)
        writer.string(summary)
        writer.list(before) { writer, before in
            writer.uuid(before.recordID)
            writer.optional(before.payload) { $0.bytes($1) }
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> ChangeEntry {
        let sequence = try reader.unsigned(), timestamp = try reader.signed(), summary = try reader.string()
        let before = try reader.list { reader in
            Before(recordID: try reader.uuid(), payload: try reader.optional { try $0.bytes() })
        }
        return ChangeEntry(sequence: sequence, timestamp: timestamp, summary: summary, before: before)
    }
}
