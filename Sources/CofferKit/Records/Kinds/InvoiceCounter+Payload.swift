import FinanceCore
import Foundation

/// Kind 14, invoice counter: the last invoice number issued, written outside the change log so
/// numbers are never reused.
///
/// Payload versions:
/// - v1 (current): last invoice number issued `uvarint`.
extension InvoiceCounter: RecordPayload {
    static let recordKind = RecordKind.invoiceCounter

    func encodeFields(into writer: inout PayloadWriter) {
        writer.unsigned(UInt64(lastNumber))
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> InvoiceCounter {
        InvoiceCounter(lastNumber: try reader.unsignedInt())
    }
}
