import FinanceCore
import Foundation

/// Kind 12, client. The record id is the client's id.
///
/// Payload versions:
/// - v1: name `string`, email `optional<string>`, address `optional<string>`, payment
///   terms in days `svarint`.
/// - v2 (current): v1's fields, then the account payments arrive in by default `optional<uuid>`;
///   added with flows. A v1 payload upgrades with none.
extension Client: RecordPayload {
    static let recordKind = RecordKind.client

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.optional(email) { $0.string($1) }
        writer.optional(address) { $0.string($1) }
        writer.int(termsDays)
        writer.optional(account) { $0.uuid($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Client {
        let name = try reader.string(), email = try reader.optional { try $0.string() },
            address = try reader.optional { try $0.string() }
        let termsDays = try reader.int()
        return Client(
            id: id, name: name, email: email, address: address, termsDays: termsDays,
            account: version >= 2 ? try reader.optional { try $0.uuid() } : nil)
    }
}
