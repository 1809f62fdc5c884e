import FinanceCore
import Foundation

/// Kind 19, undone change: one step `coffer redo` can take back. **Local**: the redo stack belongs
/// to this copy of the vault, so sync, archives and exports leave it out.
///
/// Payload versions:
/// - v1 (current): the undone change entry's fields as kind 5 v1 writes them (sequence, timestamp,
///   summary, its records' payloads before the change), then order `uvarint` (higher: undone
///   later, redone first), count `uvarint`, then per touched record: record id `uuid`, payload
///   after the change `optional<bytes>` (absent: the change deleted it).
extension UndoneChange: RecordPayload {
    static let recordKind = RecordKind.undoneChange

    func encodeFields(into writer: inout PayloadWriter) {
        change.encodeFields(into: &writer)
        writer.unsigned(order)
        writer.list(after) { writer, after in
            writer.uuid(after.recordID)
            writer.optional(after.payload) { $0.bytes($1) }
        }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> UndoneChange {
        let change = try ChangeEntry.decodeFields(version: 1, from: &reader, id: id)
        let order = try reader.unsigned()
        let after = try reader.list { reader in
            ChangeEntry.Before(recordID: try reader.uuid(), payload: try reader.optional { try $0.bytes() })
        }
        return UndoneChange(change: change, order: order, after: after)
    }
}
