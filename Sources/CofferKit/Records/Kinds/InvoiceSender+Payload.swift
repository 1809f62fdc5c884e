import FinanceCore
import Foundation

/// Kind 23, invoice sender: who sends the invoices (`coffer invoice sender`), one per vault.
///
/// Payload versions:
/// - v1 (current): name, address, email, tax number, payment instructions and bank details,
///   each `optional<string>`; tax label tag (`InvoiceSender.TaxLabel.wireTag`: tax, VAT); number
///   format `string` (`INV-{0000}`, refused as malformed unless `InvoiceNumberFormat` reads it).
extension InvoiceSender: RecordPayload {
    static let recordKind = RecordKind.invoiceSender

    func encodeFields(into writer: inout PayloadWriter) {
        for text in [name, address, email, taxNumber, paymentInstructions, bankDetails] {
            writer.optional(text) { $0.string($1) }
        }
        writer.tag(taxLabel)
        writer.string(numberFormat.pattern)
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> InvoiceSender {
        let texts = try (0..<6).map { _ in try reader.optional { try $0.string() } }
        let label: TaxLabel = try reader.tag()
        guard let format = try? InvoiceNumberFormat(parsing: try reader.string()) else { throw PayloadReader.malformed }
        return InvoiceSender(
            name: texts[0], address: texts[1], email: texts[2], taxNumber: texts[3], paymentInstructions: texts[4],
            bankDetails: texts[5], taxLabel: label, numberFormat: format)
    }
}
