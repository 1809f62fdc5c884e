import FinanceCore
import Foundation

/// Kind 1, settings: one record per vault.
///
/// Payload versions:
/// - v1: currency code `string` (ISO 4217).
/// - v2 (current): v1's fields, then include receivables in net worth `bool`; added with the
///   receivables switch. A v1 payload upgrades with the switch on, as Coffer behaved then.
extension VaultSettings: RecordPayload {
    static let recordKind = RecordKind.settings

    func encodeFields(into writer: inout PayloadWriter) {
        writer.string(currency.code)
        writer.bool(includeReceivables)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> VaultSettings {
        let currency = try Currency.named(try reader.string())
        switch version {
        case 1: return VaultSettings(currency: currency, includeReceivables: true)
        case 2: return VaultSettings(currency: currency, includeReceivables: try reader.bool())
        default: throw PayloadReader.malformed
        }
    }
}
