import CofferTestSupport
import Foundation
import Testing

@testable import FinanceCore

func pence(_ value: Int64) -> Money { Money(minorUnits: value) }

func invoice(
    _ items: [(String, String, Int64)] = [("Design", "2", 15_000)], tax: Int? = nil, issued: String = "2026-11-01",
    due: String = "2026-11-15"
) throws -> Invoice {
    Invoice(
        number: 1, clientID: UUID(),
        items: try items.map {
            LineItem(description: $0.0, quantity: try Quantity(parsing: $0.1), unitPrice: pence($0.2))
        },
        taxBasisPoints: tax, issued: date(issued), due: date(due))
}

@Suite struct InvoiceLifecycle {
    enum Action: String, CaseIterable, Sendable { case send, void, payPart, payAll, edit }

    /// Every action from every reachable state: allowed or refused.
    static let table: [(String, Action, Bool)] = [
        ("draft", .send, true), ("draft", .void, true), ("draft", .payPart, false), ("draft", .payAll, false),
        ("draft", .edit, true),
        ("sent", .send, false), ("sent", .void, true), ("sent", .payPart, true), ("sent", .payAll, true),
        ("sent", .edit, false),
        ("partly paid", .send, false), ("partly paid", .void, false), ("partly paid", .payPart, true),
        ("partly paid", .payAll, true), ("partly paid", .edit, false),
        ("paid", .send, false), ("paid", .void, false), ("paid", .payPart, false), ("paid", .payAll, false),
        ("paid", .edit, false),
        ("void", .send, false), ("void", .void, false), ("void", .payPart, false), ("void", .payAll, false),
        ("void", .edit, false),
    ]

    func state(_ name: String) throws -> Invoice {
        let draft = try invoice()
        let day = date("2026-11-02")
        switch name {
        case "draft": return draft
        case "sent": return try draft.sending(on: day)
        case "partly paid": return try draft.sending(on: day).paying(pence(10_000), on: day)
        case "paid": return try draft.sending(on: day).paying(pence(30_000), on: day)
        default: return try draft.voiding(on: day)
        }
    }

    @Test(arguments: table)
    func transitions(from: String, action: Action, allowed: Bool) throws {
        let start = try state(from)
        let day = date("2026-11-03")
        let attempt: () throws -> Invoice = {
            switch action {
            case .send: try start.sending(on: day)
            case .void: try start.voiding(on: day)
            case .payPart: try start.paying(pence(5_000), on: day)
            case .payAll: try start.paying(try start.outstanding(), on: day)
            case .edit: try start.editing(items: [], taxBasisPoints: nil, due: nil, notes: nil)
            }
        }
        if allowed {
            #expect(throws: Never.self) { _ = try attempt() }
        } else {
            #expect(throws: FinanceError.self) { _ = try attempt() }
        }
    }

    @Test func overdueIsDerivedAcrossTheDueDate() throws {
        let sent = try invoice(due: "2026-11-15").sending(on: date("2026-11-01"))
        #expect(try sent.status(on: date("2026-11-15")) == .sent)
        #expect(try sent.status(on: date("2026-11-16")) == .overdue)
        let partly = try sent.paying(pence(10_000), on: date("2026-11-20"))
        #expect(try partly.status(on: date("2026-11-20")) == .overdue)
        #expect(try partly.outstanding() == pence(20_000))
        let paid = try partly.paying(pence(20_000), on: date("2026-11-21"))
        #expect(try paid.status(on: date("2026-11-21")) == .paid)
        #expect(throws: FinanceError.self) { _ = try partly.paying(pence(20_001), on: date("2026-11-21")) }
    }
}

@Suite struct InvoiceWording {
    static let cases: [(String, String)] = [
        ("2026-11-15", "Due today"), ("2026-11-14", "Due tomorrow"), ("2026-11-12", "Due in 3 days"),
        ("2026-11-16", "Overdue by 1 day"), ("2026-11-17", "Overdue by 2 days"), ("2027-01-15", "Overdue by 61 days"),
    ]

    @Test(arguments: cases)
    func relativeDueText(today: String, expected: String) throws {
        let sent = try invoice(due: "2026-11-15").sending(on: date("2026-11-01"))
        #expect(try sent.relativeDue(on: date(today)) == expected)
    }

    @Test func paidAndVoidText() throws {
        let sent = try invoice().sending(on: date("2026-11-01"))
        let paid = try sent.paying(pence(30_000), on: date("2026-11-10"))
        #expect(try paid.relativeDue(on: date("2026-11-15")) == "Paid 5 days ago")
        #expect(try paid.relativeDue(on: date("2026-11-11")) == "Paid yesterday")
        #expect(try paid.relativeDue(on: date("2026-11-10")) == "Paid today")
        #expect(try invoice().voiding(on: date("2026-11-02")).relativeDue(on: date("2026-11-02")) == "Void")
    }

    @Test(arguments: [
        (30, "1–30"), (31, "31–60"), (60, "31–60"), (61, "61–90"), (90, "61–90"), (91, "90+"), (0, "current"),
        (1, "1–30"),
    ])
    func ageingBuckets(daysLate: Int, bucket: String) throws {
        let sent = try invoice(due: "2026-01-01").sending(on: date("2025-12-01"))
        let receivables = try Receivables(invoices: [sent], today: date("2026-01-01").adding(days: daysLate))
        let amounts = receivables.ageing
        let placed: String
        switch pence(30_000) {
        case amounts.current: placed = "current"
        case amounts.days1to30: placed = "1–30"
        case amounts.days31to60: placed = "31–60"
        case amounts.days61to90: placed = "61–90"
        default: placed = amounts.over90 == pence(30_000) ? "90+" : "none"
        }
        #expect(placed == bucket)
        #expect(receivables.overdueCount == (daysLate > 0 ? 1 : 0))
    }
}

@Suite struct InvoiceTotals {
    @Test func decimalQuantitiesAndTaxRoundHalfAwayFromZero() throws {
        // 2.5 h × £33.33 = £83.325 → £83.33 (half away from zero); 0.333 × £10.00 = £3.33.
        let inv = try invoice([("Consulting", "2.5", 3_333), ("Review", "0.333", 1_000)], tax: 2000)
        #expect(try inv.items[0].total() == pence(8_333))
        #expect(try inv.items[1].total() == pence(333))
        #expect(try inv.subtotal() == pence(8_666))
        #expect(try inv.tax() == pence(1_733))  // 20% of 86.66 = 17.332 → 17.33
        #expect(try inv.total() == pence(10_399))
        let halfway = try invoice([("Half", "0.5", 1)], tax: nil)  // 0.5p → 1p
        #expect(try halfway.total() == pence(1))
        let taxHalf = try invoice([("Item", "1", 25)], tax: 1000)  // 10% of 25p = 2.5p → 3p
        #expect(try taxHalf.tax() == pence(3))
    }

    @Test func quantityParsing() throws {
        #expect(try Quantity(parsing: "2.5").thousandths == 2500)
        #expect(try Quantity(parsing: "0.125").description == "0.125")
        #expect(try Quantity(parsing: "3").description == "3")
        for bad in ["", "0", "-1", "1.2345", "abc", "1e3", "1,5"] {
            #expect(throws: FinanceError.self) { try Quantity(parsing: bad) }
        }
    }

    @Test func receivablesForNetWorthFollowTheDates() throws {
        let sent = try invoice().sending(on: date("2026-11-05"))
        let part = try sent.paying(pence(10_000), on: date("2026-11-20"))
        #expect(try Receivables.receivable([part], on: date("2026-11-04")) == .zero, "not yet sent")
        #expect(try Receivables.receivable([part], on: date("2026-11-10")) == pence(30_000))
        #expect(try Receivables.receivable([part], on: date("2026-11-20")) == pence(20_000))
        #expect(
            try Receivables.receivable([try invoice().voiding(on: date("2026-11-02"))], on: date("2026-11-10")) == .zero
        )
    }
}

/// Discounts (an amount or a share, before tax), credits (after tax) and number formats.
@Suite struct InvoiceAdjustmentTests {
    @Test func discountsComeOffBeforeTaxAndCreditsAfter() throws {
        var bill = try invoice([("Design", "2.5", 12_000), ("Hosting", "1", 1_999)], tax: 2000)
        bill.items += [.discount("Loyalty", share: 1000), .credit("Deposit", amount: pence(5_000))]
        #expect(try bill.charges() == pence(31_999))
        #expect(try bill.amount(of: bill.items[2]) == pence(-3_200), "31.999 rounds half away from zero")
        #expect(try bill.subtotal() == pence(28_799))
        #expect(try bill.tax() == pence(5_760), "on the discounted subtotal: 57.598")
        #expect(try bill.credits() == pence(-5_000))
        #expect(try bill.total() == pence(29_559))
        try bill.checkLines()
        bill.items.append(.credit("Too much", amount: pence(29_560)))
        #expect(throws: FinanceError.self) { try bill.checkLines() }
        bill.items.removeLast()
        bill.items.append(.discount("All of it and more", share: 10_001))
        #expect(throws: FinanceError.self) { try bill.checkLines() }
        bill.items = [.discount("Only a discount", amount: pence(100))]
        #expect(throws: FinanceError.self) { try bill.checkLines() }
    }

    @Test func numberFormatsMakeReferences() throws {
        let day = try CalendarDate(parsing: "2026-03-04")
        #expect(InvoiceNumberFormat.standard.reference(number: 7, issued: day) == "INV-0007")
        #expect(InvoiceNumberFormat.standard.reference(number: 12_345, issued: day) == "INV-12345")
        #expect(
            try InvoiceNumberFormat(parsing: "INV-{YYYY}-{0000}").reference(number: 7, issued: day) == "INV-2026-0007")
        #expect(try InvoiceNumberFormat(parsing: "{0}").reference(number: 7, issued: day) == "7")
        for bad in ["", "INV", "{0}{00}", "INV-{YY}-{0}", "INV {0}", "{0}}", "{0000000000}", "A<{0}>"] {
            #expect(throws: FinanceError.self, "\(bad)") { try InvoiceNumberFormat(parsing: bad) }
        }
        #expect(try invoice().reference == "INV-0001", "the default keeps older references")
    }
}
