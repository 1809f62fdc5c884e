import CofferTestSupport
import FinanceCore
import Foundation
import Testing

@testable import CofferKit

/// Payloads encoded by scripts/make-vectors.py from Specs/record-payloads.md alone: Coffer reads
/// each as the fields the vector names, and writes exactly the same bytes back.
@Suite struct PayloadVectorTests {
    struct Vector: Decodable {
        let kind: String
        let payload: String
    }
    struct File: Decodable { let payloads: [Vector] }

    static let vectors = try! JSONDecoder().decode(
        File.self,
        from: Data(
            contentsOf: URL(fileURLWithPath: #filePath)
                .deletingLastPathComponent().appendingPathComponent("../../Specs/vectors/payloads-v1.json").standardized
        )
    ).payloads

    func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    func uuid(_ hex: String) -> UUID {
        let b = bytes(hex)
        return UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }

    @Test func everyVectorDecodesToItsFieldsAndReencodesIdentically() throws {
        // The script's `fixed("payload account id", 16)` and `fixed("payload savings id", 16)`.
        let account = uuid("76e70884433fa42dae4bedb0d3e7af2e"), savings = uuid("98efd584ee8869a48f1a39c353c68374")
        #expect(Self.vectors.count == 6)
        for vector in Self.vectors {
            let payload = bytes(vector.payload)
            let record = try RecordCodec.decode(payload, id: UUID())
            #expect(RecordCodec.encode(record) == payload, "\(vector.kind)")
            switch record {
            case .settings(let settings):
                #expect(settings.currency.code == "JPY" && !settings.includeReceivables)
            case .account(let account):
                #expect(account.name == "Nationwide ISA £" && account.category == "Savings" && account.kind == .asset)
                #expect(
                    account.growthRate == GrowthRate(basisPoints: 425) && account.created == date("2025-05-01")
                        && account.closed == nil)
            case .update(let update):
                #expect(update.amount == Money(minorUnits: -123_456_789) && update.date == date("1969-12-31"))
                #expect(update.sequence == 300 && update.note == "payday")
            case .transaction(let transaction):
                #expect(
                    transaction.amount == Money(minorUnits: 4520) && transaction.type == .expense
                        && transaction.note == nil)
                #expect(transaction.date == date("2026-01-31") && transaction.sequence == 9)
                #expect(transaction.origin == StatementOrigin(account: "Current", rowHash: Array(0..<16)))
                #expect(transaction.flow == AccountFlow(from: account, to: savings, order: 301))
            case .client(let client):
                #expect(
                    client.name == "Acme Ltd" && client.email == nil && client.address == "1 High St\nLondon"
                        && client.termsDays == 14 && client.account == account)
            case .invoice(let invoice):
                #expect(invoice.number == 7 && invoice.items.count == 3 && invoice.items[0].description == "Design")
                #expect(
                    invoice.items.dropFirst() == [
                        .discount("Loyalty", share: 1000), .credit("Deposit", amount: Money(minorUnits: 500)),
                    ])
                #expect(invoice.reference == "INV-2026-0007" && invoice.reminders == [date("2026-11-12")])
                #expect(invoice.items[0].unitPrice == Money(minorUnits: 3333) && invoice.taxBasisPoints == 2000)
                #expect(
                    invoice.issued == date("2026-11-01") && invoice.due == date("2026-11-15") && invoice.notes == nil)
                #expect(
                    invoice.payments == [
                        Payment(
                            date: date("2026-11-10"), amount: Money(minorUnits: 100),
                            flow: AccountFlow(to: account, order: 302))
                    ])
            default:
                Issue.record("unexpected kind for \(vector.kind)")
            }
        }
    }
}
