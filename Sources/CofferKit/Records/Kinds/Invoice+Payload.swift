import FinanceCore
import Foundation

/// Kind 13, invoice. The record id is the invoice's id.
///
/// Payload versions:
/// - v1: number `uvarint`, client id `uuid`, item count `uvarint`, per item:
///   description `string`, quantity `svarint` (thousandths), unit price `svarint`; tax
///   `optional<svarint>` (basis points), issued `date`, due `date`, notes `optional<string>`,
///   status tag (`Invoice.StoredStatus.wireTag`), sent on `optional<date>`, voided on
///   `optional<date>`, payment count `uvarint`, per payment: date `date`, amount `svarint`.
/// - v2: v1's fields, except that each payment ends with its flow `optional<flow>`
///   (the account it was paid into as the flow's `to`); added with `invoice pay --into`. A v1
///   payload upgrades with no account on any payment.
/// - v3 (current): v2's fields, except that each item ends with its line kind tag
///   (`LineItem.Kind.wireTag`: charge, discount, credit) and a discount's share of the charges
///   `optional<svarint>` (basis points); then, after the payments, the reference `string` and the
///   reminder count `uvarint`, per reminder its `date`. Added with discounts, credits, number
///   formats and reminder history. A v1 or v2 payload upgrades with charge lines only, the
///   reference `INV-` and the number in four digits, and no reminders.
extension Invoice: RecordPayload {
    static let recordKind = RecordKind.invoice

    func encodeFields(into writer: inout PayloadWriter) {
        writer.unsigned(UInt64(number))
        writer.uuid(clientID)
        writer.list(items) { writer, item in
            writer.string(item.description)
            writer.signed(item.quantity.thousandths)
            writer.money(item.unitPrice)
            writer.tag(item.kind)
            writer.optional(item.shareBasisPoints) { $0.int($1) }
        }
        writer.optional(taxBasisPoints) { $0.int($1) }
        writer.date(issued)
        writer.date(due)
        writer.optional(notes) { $0.string($1) }
        writer.tag(stored)
        writer.optional(sentOn) { $0.date($1) }
        writer.optional(voidedOn) { $0.date($1) }
        writer.list(payments) { writer, payment in
            writer.date(payment.date)
            writer.money(payment.amount)
            writer.flow(payment.flow)
        }
        writer.string(reference)
        writer.list(reminders) { $0.date($1) }
    }

    static func decodeFields(version: UInt8, from reader: inout PayloadReader, id: UUID) throws -> Invoice {
        let number = try reader.unsignedInt(), clientID = try reader.uuid()
        let items = try reader.list { reader in
            let description = try reader.string(), quantity = Quantity(thousandths: try reader.signed()),
                unitPrice = try reader.money()
            guard version >= 3 else {
                return LineItem(description: description, quantity: quantity, unitPrice: unitPrice)
            }
            return LineItem(
                description: description, quantity: quantity, unitPrice: unitPrice, kind: try reader.tag(),
                shareBasisPoints: try reader.optional { try $0.int() })
        }
        let tax = try reader.optional { try $0.int() }
        let issued = try reader.date(), due = try reader.date(), notes = try reader.optional { try $0.string() }
        let stored: StoredStatus = try reader.tag()
        let sentOn = try reader.optional { try $0.date() }, voidedOn = try reader.optional { try $0.date() }
        let payments = try reader.list { reader in
            Payment(
                date: try reader.date(), amount: try reader.money(), flow: version >= 2 ? try reader.flow() : nil)
        }
        let reference = version >= 3 ? try reader.string() : nil
        let reminders = version >= 3 ? try reader.list { try $0.date() } : []
        return Invoice(
            id: id, number: number, clientID: clientID, items: items, taxBasisPoints: tax, issued: issued, due: due,
            notes: notes, stored: stored, sentOn: sentOn, voidedOn: voidedOn, payments: payments,
            reference: reference, reminders: reminders)
    }
}
