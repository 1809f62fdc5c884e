import FinanceCore
import Foundation

/// Kind 12, client. The record id is the client's id.
///
/// Payload versions:
/// - v1 (current): name `string`, email `optional<string>`, address `optional<string>`, payment
///   terms in days `svarint`.
extension Client: RecordPayload {
    static let recordKind = RecordKind.client

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.optional(email) { $0.string($1) }
        writer.optional(address) { $0.string($1) }
        writer.int(termsDays)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Client {
        let name = try reader.string(), email = try reader.optional { try $0.string() },
            address = try reader.optional { try $0.string() }
        return Client(id: id, name: name, email: email, address: address, termsDays: try reader.int())
    }
}
