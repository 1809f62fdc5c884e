import FinanceCore
import Foundation

/// Kind 21, note: a private free-text note (`coffer note`). The record id is the note's id.
///
/// Payload versions:
/// - v1 (current): title `string`, body `string`, attachment `optional<…>` (kind tag
///   `Note.Attachment.Kind.wireTag`, then the account's, client's or invoice's id `uuid`),
///   created `date`, updated `svarint` (seconds since 1970).
extension Note: RecordPayload {
    static let recordKind = RecordKind.note

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(title)
        writer.string(body)
        writer.optional(attachment) { writer, attachment in
            writer.tag(attachment.kind)
            writer.uuid(attachment.id)
        }
        writer.date(created)
        writer.signed(updated)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Note {
        let title = try reader.string(), body = try reader.string()
        let attachment = try reader.optional { reader in
            Attachment(kind: try reader.tag(), id: try reader.uuid())
        }
        return Note(
            id: id, title: title, body: body, attachment: attachment, created: try reader.date(),
            updated: try reader.signed())
    }
}
