import FinanceCore
import Foundation

/// Kind 20, import profile: what one bank's statements need, kept so the next month's import
/// names only the profile. The record id is the profile's id.
///
/// Payload versions:
/// - v1: name `string`, destination `u8` (0 unset, 1 transactions, 2 updates),
///   account, rule set, then the date, amount, debit, credit and description columns, then the
///   date format, each `optional<string>`; flags `u8` (1 decimal comma, 2 negate, 4 no header
///   row); lines to skip `optional<uvarint>`; separator `optional<string>`; encoding `u8` (1
///   UTF-8, 2 ISO-8859-1, 3 Windows-1252); currency `optional<string>`.
/// - v2: v1, then the payee and balance columns, each `optional<string>` (a v1 profile has
///   neither).
/// - v3 (current): v2, then the text of an hledger rules file, `optional<string>` (an older
///   profile has none).
extension ImportProfile: RecordPayload {
    static let recordKind = RecordKind.importProfile

    private static let destinationTags: [StatementColumns.Destination: UInt8] = [.transactions: 1, .updates: 2]
    private static let encodingTags: [StatementFile.Encoding: UInt8] = [.utf8: 1, .latin1: 2, .cp1252: 3]

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(name)
        writer.byte(destination.flatMap { Self.destinationTags[$0] } ?? 0)
        for text in [
            account, ruleSet, dateColumn, amountColumn, debitColumn, creditColumn, descriptionColumn, dateFormat,
        ] {
            writer.optional(text) { $0.string($1) }
        }
        writer.byte((decimalComma ? 1 : 0) | (negate ? 2 : 0) | (noHeader ? 4 : 0))
        writer.optional(skipRows) { $0.unsigned(UInt64($1)) }
        writer.optional(delimiter) { $0.string($1) }
        writer.byte(Self.encodingTags[encoding]!)
        writer.optional(currency) { $0.string($1) }
        writer.optional(payeeColumn) { $0.string($1) }
        writer.optional(balanceColumn) { $0.string($1) }
        writer.optional(hledgerRules) { $0.string($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> ImportProfile {
        var profile = ImportProfile(id: id, name: try reader.string())
        let destination = try reader.byte()
        guard destination == 0 || destinationTags.values.contains(destination) else {
            throw FinanceError(.invalidRecord, "unknown import destination \(destination)")
        }
        profile.destination = destinationTags.first { $0.value == destination }?.key
        let texts = try (0..<8).map { _ in try reader.optional { try $0.string() } }
        (profile.account, profile.ruleSet, profile.dateColumn, profile.amountColumn) = (
            texts[0], texts[1], texts[2], texts[3]
        )
        (profile.debitColumn, profile.creditColumn, profile.descriptionColumn, profile.dateFormat) = (
            texts[4], texts[5], texts[6], texts[7]
        )
        let flags = try reader.byte()
        guard flags & ~7 == 0 else { throw FinanceError(.invalidRecord, "unknown import profile flags \(flags)") }
        (profile.decimalComma, profile.negate, profile.noHeader) = (flags & 1 != 0, flags & 2 != 0, flags & 4 != 0)
        profile.skipRows = try reader.optional { try $0.unsignedInt() }
        profile.delimiter = try reader.optional { try $0.string() }
        let encoding = try reader.byte()
        guard let decoded = encodingTags.first(where: { $0.value == encoding })?.key else {
            throw FinanceError(.invalidRecord, "unknown encoding \(encoding)")
        }
        profile.encoding = decoded
        profile.currency = try reader.optional { try $0.string() }
        if version >= 2 {
            profile.payeeColumn = try reader.optional { try $0.string() }
            profile.balanceColumn = try reader.optional { try $0.string() }
            if version >= 3 { profile.hledgerRules = try reader.optional { try $0.string() } }
        }
        return profile
    }
}
