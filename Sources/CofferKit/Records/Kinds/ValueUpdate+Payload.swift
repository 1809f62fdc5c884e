import FinanceCore
import Foundation

/// Kind 3, value update: an account's value on a date. The record id is the update's id.
///
/// Payload versions:
/// - v1: account id `uuid`, date `date`, amount `svarint` (minor units; for a liability the
///   amount owed), entry sequence `uvarint`.
/// - v2 (current): v1's fields, then note `optional<string>`; added with `--note`. A v1
///   payload upgrades with no note.
extension ValueUpdate: RecordPayload {
    static let recordKind = RecordKind.update

    func encodeFields(into writer: inout PayloadWriter) {
        writer.uuid(accountID)
        writer.date(date)
        writer.money(amount)
        writer.unsigned(sequence)
        writer.optional(note) { $0.string($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> ValueUpdate {
        let accountID = try reader.uuid(), date = try reader.date()
        let amount = try reader.money(), sequence = try reader.unsigned()
        let note: String?
        switch version {
        case 1: note = nil
        case 2: note = try reader.optional { try $0.string() }
        default: throw PayloadReader.malformed
        }
        return ValueUpdate(id: id, accountID: accountID, date: date, amount: amount, sequence: sequence, note: note)
    }
}
