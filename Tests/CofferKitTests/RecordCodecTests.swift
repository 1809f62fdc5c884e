import CofferTestSupport
import FinanceCore
import Foundation
import Testing

@testable import CofferKit

@Suite struct RecordCodecTests {
    static let account = Account(
        name: "Nationwide Flex Saver — ISA £", category: "Savings", kind: .asset,
        growthRate: GrowthRate(basisPoints: 425), created: date("2025-05-01"), closed: date("2026-01-31"))
    static let records: [(UUID, FinanceRecord)] = {
        let update = ValueUpdate(
            accountID: account.id, date: date("2025-06-30"), amount: Money(minorUnits: -123_456_789), sequence: 300)
        let mortgage = Account(name: "Mortgage", category: "Mortgage", kind: .liability, created: date("1999-12-31"))
        let category = BudgetCategory(
            name: "Pet Supplies", type: .wants, sortOrder: 7, isDefault: false, isHidden: true)
        let source = IncomeSource(
            name: "Salary", amount: Money(minorUnits: 250_000), frequency: .biweekly(anchor: date("2025-01-03")))
        let monthly = IncomeSource(name: "Rent income", amount: Money(minorUnits: 90_000), frequency: .monthly)
        let spend = Transaction(
            amount: Money(minorUnits: 4_520), type: .expense, target: .category(category.id), note: "Whole Foods",
            date: date("2025-01-31"), sequence: 9)
        let imported = Transaction(
            amount: Money(minorUnits: 645), type: .expense, target: .uncategorised, note: "PRET A MANGER",
            date: date("2025-01-07"), sequence: 10, origin: StatementOrigin(account: "Current", rowHash: Array(0..<16)))
        let rules = CategoryRuleSet(
            name: "bank",
            rules: [
                .init(pattern: "TESCO*", target: .category(category.id)),
                .init(pattern: "acme", target: .source(source.id)),
            ])
        let goal = SavingsGoal(name: "Vacation", target: Money(minorUnits: 300_000), targetDate: date("2025-08-01"))
        let client = Client(name: "Acme Ltd", email: "ap@acme.example", address: "1 High St\nLondon", termsDays: 14)
        let sentInvoice = Invoice(
            number: 7, clientID: client.id,
            items: [
                LineItem(
                    description: "Design", quantity: Quantity(thousandths: 2500), unitPrice: Money(minorUnits: 3333))
            ],
            taxBasisPoints: 2000, issued: date("2026-11-01"), due: date("2026-11-15"), notes: "Thanks",
            stored: .sent, sentOn: date("2026-11-01"),
            payments: [Payment(date: date("2026-11-10"), amount: Money(minorUnits: 100))])
        let contract = Note(
            title: "Acme contract", body: "Signed copy in the blue folder.\n\tClause 4: 30 days.",
            attachment: Note.Attachment(kind: .client, id: client.id), created: date("2026-11-01"),
            updated: 1_790_000_000)
        let will = Note(title: "Will", body: "", created: date("2026-11-02"), updated: -1)
        let adjusted = Invoice(
            number: 8, clientID: client.id,
            items: sentInvoice.items + [
                .discount("Loyalty", share: 1000), .credit("Deposit", amount: Money(minorUnits: 500)),
            ],
            taxBasisPoints: 2000, issued: date("2026-11-01"), due: date("2026-11-15"), stored: .sent,
            sentOn: date("2026-11-01"), reference: "INV-2026-0008", reminders: [date("2026-11-20"), date("2026-12-01")])
        let sender = InvoiceSender(
            name: "Jane Doe", address: "2 Low Rd\nLeeds", email: "jane@example.com", taxNumber: "GB123",
            paymentInstructions: "Within 14 days\n\tplease", bankDetails: "Sort code 12-34-56", taxLabel: .vat,
            numberFormat: try! InvoiceNumberFormat(parsing: "INV-{YYYY}-{0000}"))
        return [
            (UUID(), .settings(VaultSettings(currency: try! Currency.named("JPY")))),
            (account.id, .account(account)),
            (mortgage.id, .account(mortgage)),
            (update.id, .update(update)),
            (UUID(), .categoryRate(CategoryRate(category: "Pensions", rate: GrowthRate(basisPoints: -50)))),
            (
                UUID(),
                .change(
                    ChangeEntry(
                        sequence: 7, timestamp: 1_790_000_000, summary: "Updated ISA",
                        before: [.init(recordID: UUID(), payload: [1, 2, 3]), .init(recordID: UUID(), payload: nil)]))
            ),
            (UUID(), .backupTarget(BackupTarget(path: "/media/usb/coffer backups"))),
            (category.id, .budgetCategory(category)),
            (source.id, .incomeSource(source)),
            (monthly.id, .incomeSource(monthly)),
            (spend.id, .transaction(spend)),
            (goal.id, .savingsGoal(goal)),
            (client.id, .client(client)),
            (sentInvoice.id, .invoice(sentInvoice)),
            (adjusted.id, .invoice(adjusted)),
            (UUID(), .invoiceSender(sender)),
            (UUID(), .invoiceSender(InvoiceSender())),
            (UUID(), .invoiceCounter(InvoiceCounter(lastNumber: 12))),
            (UUID(), .settings(VaultSettings(currency: .gbp, includeReceivables: false))),
            (
                UUID(),
                .backupState(
                    BackupState(
                        lastSequence: 12, verified: [.init(path: "/media/usb", sequence: 12, time: 1_790_000_000)]))
            ),
            (imported.id, .transaction(imported)),
            (rules.id, .categoryRuleSet(rules)),
            (contract.id, .note(contract)),
            (will.id, .note(will)),
        ]
    }()

    @Test func everyKindRoundTrips() throws {
        for (id, record) in Self.records {
            #expect(try RecordCodec.decode(RecordCodec.encode(record), id: id) == record)
        }
    }

    @Test func versionOneUpdatesUpgradeToVersionTwoWithoutANote() throws {
        let accountID = UUID()
        // kind 3, version 1: account id, date (zig-zag days), amount (zig-zag), sequence.
        var writer = PayloadWriter()
        writer.byte(3)
        writer.byte(1)
        writer.uuid(accountID)
        writer.date(date("2025-06-30"))
        writer.signed(123_456)
        writer.unsigned(42)
        let id = UUID()
        let decoded = try RecordCodec.decode(writer.bytes, id: id)
        #expect(
            decoded
                == .update(
                    ValueUpdate(
                        id: id, accountID: accountID, date: date("2025-06-30"), amount: Money(minorUnits: 123_456),
                        sequence: 42, note: nil)))
        let upgraded = try RecordCodec.upgraded(writer.bytes, id: id)
        #expect(upgraded[1] == 2)
        #expect(try RecordCodec.decode(upgraded, id: id) == decoded)
        let withNote = ValueUpdate(
            accountID: accountID, date: date("2025-06-30"), amount: .zero, sequence: 1, note: "annual statement")
        #expect(try RecordCodec.decode(RecordCodec.encode(.update(withNote)), id: withNote.id) == .update(withNote))
    }

    @Test func versionOneTransactionsUpgradeWithoutAnOrigin() throws {
        let category = UUID()
        // kind 10, version 1: amount, type, target tag + id, note, date, sequence.
        func versionOne(targetTag: UInt8) -> [UInt8] {
            var writer = PayloadWriter()
            writer.byte(10)
            writer.byte(1)
            writer.signed(4_520)
            writer.byte(1)
            writer.byte(targetTag)
            if targetTag != 3 { writer.uuid(category) }
            writer.optional("Whole Foods") { $0.string($1) }
            writer.date(date("2025-01-31"))
            writer.unsigned(9)
            return writer.bytes
        }
        let id = UUID()
        let decoded = try RecordCodec.decode(versionOne(targetTag: 0), id: id)
        #expect(
            decoded
                == .transaction(
                    Transaction(
                        id: id, amount: Money(minorUnits: 4_520), type: .expense, target: .category(category),
                        note: "Whole Foods", date: date("2025-01-31"), sequence: 9, origin: nil)))
        let upgraded = try RecordCodec.upgraded(versionOne(targetTag: 0), id: id)
        #expect(upgraded[1] == RecordKind.transaction.currentVersion)
        #expect(try RecordCodec.decode(upgraded, id: id) == decoded)
        #expect(throws: FinanceError.self, "version 1 had no uncategorised target") {
            try RecordCodec.decode(versionOne(targetTag: 3), id: id)
        }
    }

    @Test func versionOneSettingsUpgradeWithReceivablesOn() throws {
        var writer = PayloadWriter()
        writer.byte(1)
        writer.byte(1)
        writer.string("EUR")
        #expect(
            try RecordCodec.decode(writer.bytes, id: UUID())
                == .settings(VaultSettings(currency: try Currency.named("EUR"), includeReceivables: true)))
    }

    @Test func payloadsAreCompact() {
        let update = ValueUpdate(
            accountID: UUID(), date: date("2026-11-22"), amount: Money(minorUnits: 1_234_567), sequence: 100_000)
        // kind + version + id 16 + date 3 + amount 4 + sequence 3: fits one 64-byte padding bucket.
        #expect(RecordCodec.encode(.update(update)).count <= 30)
    }

    @Test func truncatedOrExtendedPayloadsThrowAndNeverTrap() {
        for (id, record) in Self.records {
            let bytes = RecordCodec.encode(record)
            for length in 0..<bytes.count {
                #expect(throws: FinanceError.self) { try RecordCodec.decode(Array(bytes[..<length]), id: id) }
            }
            #expect(throws: FinanceError.self) { try RecordCodec.decode(bytes + [0], id: id) }
        }
    }

    @Test func newerKindsAndVersionsAreRefusedClearly() {
        var bytes = RecordCodec.encode(Self.records[1].1)
        bytes[1] = 9
        do {
            _ = try RecordCodec.decode(bytes, id: UUID())
            Issue.record("decoded a newer version")
        } catch let error as FinanceError {
            #expect(error.errorDescription?.contains("newer") == true)
        } catch { Issue.record("\(error)") }
        #expect(throws: FinanceError(.invalidRecord, "")) { try RecordCodec.decode([42, 1], id: UUID()) }
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...48, using: &generator)).map { _ in
                UInt8.random(in: 0...255, using: &generator)
            }
            _ = try? RecordCodec.decode(bytes, id: UUID())
        }
    }
}
