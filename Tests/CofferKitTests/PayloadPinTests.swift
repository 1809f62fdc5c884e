import CofferTestSupport
import FinanceCore
import Foundation
import Testing

@testable import CofferKit

/// The exact bytes of one record of every kind at every payload version ever written, as hex.
/// Today's value must encode to today's bytes, and every older version's bytes must decode to the
/// value they upgrade to. A kind or a version added without a pin here fails
/// `everyKindAndVersionIsPinned`; a field, tag or number changed by accident fails the bytes.
@Suite struct PayloadPinTests {
    struct Pin: CustomTestStringConvertible, Sendable {
        let version: UInt8
        let id: UUID
        /// Today's value: for an older version, what its bytes upgrade to.
        let record: FinanceRecord
        let hex: String
        var testDescription: String { "\(record.kind) v\(version)" }
    }

    static let idA = UUID(uuidString: "00112233-4455-6677-8899-AABBCCDDEEFF")!
    static let idB = UUID(uuidString: "0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0")!
    static let idC = UUID(uuidString: "FFEEDDCC-BBAA-9988-7766-554433221100")!
    static let eur = try! Currency.named("EUR")

    static let pins: [Pin] = [
        // 1 settings. v1: currency only, upgrades with receivables on. v2: then the receivables switch.
        Pin(
            version: 1, id: idA, record: .settings(VaultSettings(currency: eur, includeReceivables: true)),
            hex: "010103455552"),
        Pin(
            version: 2, id: idA, record: .settings(VaultSettings(currency: eur, includeReceivables: false)),
            hex: "01020345555200"),
        // 2 account.
        Pin(
            version: 1, id: idA,
            record: .account(
                Account(
                    id: idA, name: "Mortgage £", category: "Loans", kind: .liability,
                    growthRate: GrowthRate(basisPoints: -425), created: date("2025-05-01"),
                    closed: date("2026-01-31"))),
            hex: "02010b4d6f72746761676520c2a3054c6f616e730101d106e2bb020188c002"),
        // 3 value update. v1: no note, upgrades to "no note". v2: then note.
        Pin(
            version: 1, id: idA,
            record: .update(
                ValueUpdate(
                    id: idA, accountID: idB, date: date("1969-12-31"),
                    amount: Money(minorUnits: -123_456_789), sequence: 300, note: nil)),
            hex: "03010f1e2d3c4b5a69788796a5b4c3d2e1f001a9b4de75ac02"),
        Pin(
            version: 2, id: idA,
            record: .update(
                ValueUpdate(
                    id: idA, accountID: idB, date: date("1969-12-31"),
                    amount: Money(minorUnits: -123_456_789), sequence: 300, note: "payday")),
            hex: "03020f1e2d3c4b5a69788796a5b4c3d2e1f001a9b4de75ac020106706179646179"),
        // 4 category rate.
        Pin(
            version: 1, id: idA,
            record: .categoryRate(CategoryRate(category: "Pensions", rate: GrowthRate(basisPoints: -50))),
            hex: "04010850656e73696f6e7363"),
        // 5 change entry.
        Pin(
            version: 1, id: idA,
            record: .change(
                ChangeEntry(
                    sequence: 7, timestamp: 1_790_000_000, summary: "Updated ISA",
                    before: [.init(recordID: idB, payload: [1, 2, 3]), .init(recordID: idC, payload: nil)])),
            hex:
                "05010780ee89ab0d0b5570646174656420495341020f1e2d3c4b5a69788796a5b4c3d2e1f00103010203ffeeddccbbaa9988776655443322110000"
        ),
        // 6 backup target.
        Pin(
            version: 1, id: idA, record: .backupTarget(BackupTarget(path: "/media/usb/coffer backups")),
            hex: "0601192f6d656469612f7573622f636f66666572206261636b757073"),
        // 7 backup state.
        Pin(
            version: 1, id: idA,
            record: .backupState(
                BackupState(
                    lastSequence: 300,
                    verified: [
                        .init(path: "/media/usb", sequence: 12, time: 1_790_000_000),
                        .init(path: "/mnt/nas", sequence: 300, time: -1),
                    ])),
            hex: "0701ac02020a2f6d656469612f7573620c80ee89ab0d082f6d6e742f6e6173ac0201"),
        // 8 budget category.
        Pin(
            version: 1, id: idA,
            record: .budgetCategory(
                BudgetCategory(
                    id: idA, name: "Pet Supplies", type: .wants, sortOrder: 7,
                    isDefault: false, isHidden: true)),
            hex: "08010c50657420537570706c696573010e02"),
        // v2: then the account spending comes from by default.
        Pin(
            version: 2, id: idA,
            record: .budgetCategory(
                BudgetCategory(
                    id: idA, name: "Pet Supplies", type: .wants, sortOrder: 7,
                    isDefault: false, isHidden: true, account: idC)),
            hex: "08020c50657420537570706c696573010e0201ffeeddccbbaa99887766554433221100"),
        // 9 income source.
        Pin(
            version: 1, id: idA,
            record: .incomeSource(
                IncomeSource(
                    id: idA, name: "Salary", amount: Money(minorUnits: 250_000),
                    frequency: .biweekly(anchor: date("2025-01-03")))),
            hex: "09010653616c617279a0c21e01f6b902"),
        // v2: then the account it is paid into by default.
        Pin(
            version: 2, id: idA,
            record: .incomeSource(
                IncomeSource(
                    id: idA, name: "Salary", amount: Money(minorUnits: 250_000),
                    frequency: .biweekly(anchor: date("2025-01-03")), account: idC)),
            hex: "09020653616c617279a0c21e01f6b90201ffeeddccbbaa99887766554433221100"),
        // 10 budget transaction. v1: no origin and no uncategorised target. v2: both.
        Pin(
            version: 1, id: idA,
            record: .transaction(
                Transaction(
                    id: idA, amount: Money(minorUnits: 4_520), type: .income,
                    target: .source(idB), note: "Whole Foods", date: date("2025-01-31"),
                    sequence: 9, origin: nil)),
            hex: "0a01d04600010f1e2d3c4b5a69788796a5b4c3d2e1f0010b57686f6c6520466f6f6473aeba0209"),
        Pin(
            version: 2, id: idA,
            record: .transaction(
                Transaction(
                    id: idA, amount: Money(minorUnits: 645), type: .expense,
                    target: .uncategorised, note: nil, date: date("2026-01-07"),
                    sequence: 10, origin: StatementOrigin(account: "Current", rowHash: Array(0..<16)))),
            hex: "0a028a0a010300d8bf020a010743757272656e7410000102030405060708090a0b0c0d0e0f"),
        // v3: then the flow (from, to, order 300).
        Pin(
            version: 3, id: idA,
            record: .transaction(
                Transaction(
                    id: idA, amount: Money(minorUnits: 645), type: .expense,
                    target: .uncategorised, note: nil, date: date("2026-01-07"),
                    sequence: 10, origin: StatementOrigin(account: "Current", rowHash: Array(0..<16)),
                    flow: AccountFlow(from: idB, to: idC, order: 300))),
            hex:
                "0a038a0a010300d8bf020a010743757272656e7410000102030405060708090a0b0c0d0e0f01010f1e2d3c4b5a69788796a5b4c3d2e1f001ffeeddccbbaa99887766554433221100ac02"
        ),
        // 11 savings goal.
        Pin(
            version: 1, id: idA,
            record: .savingsGoal(
                SavingsGoal(
                    id: idA, name: "Vacation", target: Money(minorUnits: 300_000),
                    targetDate: date("2025-08-01"))),
            hex: "0b01085661636174696f6e01c0cf24019abd02"),
        // v2: then the savings account that holds it.
        Pin(
            version: 2, id: idA,
            record: .savingsGoal(
                SavingsGoal(
                    id: idA, name: "Vacation", target: Money(minorUnits: 300_000),
                    targetDate: date("2025-08-01"), account: idC)),
            hex: "0b02085661636174696f6e01c0cf24019abd0201ffeeddccbbaa99887766554433221100"),
        // 12 client.
        Pin(
            version: 1, id: idA,
            record: .client(
                Client(
                    id: idA, name: "Acme Ltd", email: "ap@acme.example", address: "1 High St\nLondon",
                    termsDays: 14)),
            hex: "0c010841636d65204c7464010f61704061636d652e6578616d706c6501103120486967682053740a4c6f6e646f6e1c"),
        // v2: then the account payments arrive in by default.
        Pin(
            version: 2, id: idA,
            record: .client(
                Client(
                    id: idA, name: "Acme Ltd", email: "ap@acme.example", address: "1 High St\nLondon",
                    termsDays: 14, account: idC)),
            hex:
                "0c020841636d65204c7464010f61704061636d652e6578616d706c6501103120486967682053740a4c6f6e646f6e1c01ffeeddccbbaa99887766554433221100"
        ),
        // 13 invoice.
        Pin(
            version: 1, id: idA,
            record: .invoice(
                Invoice(
                    id: idA, number: 7, clientID: idB,
                    items: [
                        LineItem(
                            description: "Design", quantity: Quantity(thousandths: 2500),
                            unitPrice: Money(minorUnits: 3333)),
                        LineItem(
                            description: "Hosting", quantity: Quantity(thousandths: 1000),
                            unitPrice: Money(minorUnits: 1200)),
                    ],
                    taxBasisPoints: 2000, issued: date("2026-11-01"), due: date("2026-11-15"),
                    notes: nil, stored: .void, sentOn: date("2026-11-01"), voidedOn: date("2026-11-20"),
                    payments: [Payment(date: date("2026-11-10"), amount: Money(minorUnits: 100))])),
            hex:
                "0d01070f1e2d3c4b5a69788796a5b4c3d2e1f0020644657369676e88278a3407486f7374696e67d00fe01201a01facc402c8c402000201acc40201d2c40201bec402c801"
        ),
        // v2: each payment then its flow (into idC, order 7).
        Pin(
            version: 2, id: idA,
            record: .invoice(
                Invoice(
                    id: idA, number: 7, clientID: idB,
                    items: [
                        LineItem(
                            description: "Design", quantity: Quantity(thousandths: 2500),
                            unitPrice: Money(minorUnits: 3333)),
                        LineItem(
                            description: "Hosting", quantity: Quantity(thousandths: 1000),
                            unitPrice: Money(minorUnits: 1200)),
                    ],
                    taxBasisPoints: 2000, issued: date("2026-11-01"), due: date("2026-11-15"),
                    notes: nil, stored: .void, sentOn: date("2026-11-01"), voidedOn: date("2026-11-20"),
                    payments: [
                        Payment(
                            date: date("2026-11-10"), amount: Money(minorUnits: 100),
                            flow: AccountFlow(to: idC, order: 7))
                    ])),
            hex:
                "0d02070f1e2d3c4b5a69788796a5b4c3d2e1f0020644657369676e88278a3407486f7374696e67d00fe01201a01facc402c8c402000201acc40201d2c40201bec402c801010001ffeeddccbbaa9988776655443322110007"
        ),
        // v3: each item then its line kind and discount share; after the payments the reference
        // (fixed at creation) and the reminders sent.
        Pin(
            version: 3, id: idA,
            record: .invoice(
                Invoice(
                    id: idA, number: 7, clientID: idB,
                    items: [
                        LineItem(
                            description: "Design", quantity: Quantity(thousandths: 2500),
                            unitPrice: Money(minorUnits: 3333)),
                        .discount("Loyalty", share: 1000),
                        .credit("Deposit", amount: Money(minorUnits: 500)),
                    ],
                    taxBasisPoints: 2000, issued: date("2026-11-01"), due: date("2026-11-15"),
                    notes: nil, stored: .void, sentOn: date("2026-11-01"), voidedOn: date("2026-11-20"),
                    payments: [
                        Payment(
                            date: date("2026-11-10"), amount: Money(minorUnits: 100),
                            flow: AccountFlow(to: idC, order: 7))
                    ], reference: "INV-2026-0007", reminders: [date("2026-11-12")])),
            hex:
                "0d03070f1e2d3c4b5a69788796a5b4c3d2e1f0030644657369676e88278a340000074c6f79616c7479d00f000101d00f074465706f736974d00fe807020001a01facc402c8c402000201acc40201d2c40201bec402c801010001ffeeddccbbaa99887766554433221100070d494e562d323032362d3030303701c2c402"
        ),
        // 14 invoice counter.
        Pin(
            version: 1, id: idA, record: .invoiceCounter(InvoiceCounter(lastNumber: 1_000)),
            hex: "0e01e807"),
        // 15 category rule set.
        Pin(
            version: 1, id: idA,
            record: .categoryRuleSet(
                CategoryRuleSet(
                    id: idA, name: "bank",
                    rules: [
                        .init(pattern: "TESCO*", target: .category(idB)), .init(pattern: "acme", target: .source(idC)),
                        .init(pattern: "ISA", target: .goal(idB)),
                    ])),
            hex:
                "0f010462616e6b0306544553434f2a000f1e2d3c4b5a69788796a5b4c3d2e1f00461636d6501ffeeddccbbaa9988776655443322110003495341020f1e2d3c4b5a69788796a5b4c3d2e1f0"
        ),
        // v2: each rule then says the text it reads and its amount range.
        Pin(
            version: 2, id: idA,
            record: .categoryRuleSet(
                CategoryRuleSet(
                    id: idA, name: "bank",
                    rules: [
                        .init(
                            pattern: "TESCO*", target: .category(idB), field: .payee, minimum: Money(minorUnits: 100),
                            maximum: Money(minorUnits: 5_000)),
                        .init(pattern: "acme", target: .source(idC)),
                        .init(
                            pattern: "ISA", target: .goal(idB), field: .description, maximum: Money(minorUnits: 20_000)),
                    ])),
            hex:
                "0f020462616e6b0306544553434f2a000f1e2d3c4b5a69788796a5b4c3d2e1f00201c80101904e0461636d6501ffeeddccbbaa9988776655443322110000000003495341020f1e2d3c4b5a69788796a5b4c3d2e1f0010001c0b802"
        ),
        // 16 sync state.
        Pin(
            version: 1, id: idA,
            record: .syncState(syncState()),
            hex:
                "100101010101010101010101010101010101066c6170746f70200707070707070707070707070707070707070707070707070707070707070707052f73796e6303ac0201020202020202020202020202020202020570686f6e652009090909090909090909090909090909090909090909090909090909090909090280c49fd50c"
        ),
        Pin(
            version: 2, id: idA,
            record: .syncState(syncState(syncedCommit: 300, syncedFile: [UInt8](repeating: 5, count: 16))),
            hex:
                "100201010101010101010101010101010101066c6170746f70200707070707070707070707070707070707070707070707070707070707070707052f73796e6303ac0201020202020202020202020202020202020570686f6e652009090909090909090909090909090909090909090909090909090909090909090280c49fd50cac021005050505050505050505050505050505"
        ),
        // 17 sync index (its bytes are Specs/sync-format.md §7's; this one is empty).
        Pin(
            version: 1, id: idA, record: .syncIndex(SyncIndexData(bytes: [1, 0, 0, 0, 0, 0, 0])),
            hex: "11010701000000000000"),
        // 18 sync conflict.
        Pin(
            version: 1, id: idA,
            record: .syncConflict(
                SyncConflict(
                    record: idA, loser: [2, 1],
                    loserStamp: SyncStamp(clock: 5, device: SyncDeviceID(unchecked: [UInt8](repeating: 3, count: 16))),
                    winner: nil,
                    winnerStamp: SyncStamp(clock: 6, device: SyncDeviceID(unchecked: [UInt8](repeating: 4, count: 16))),
                    detected: 1_700_000_000, restored: true)),
            hex:
                "120100112233445566778899aabbccddeeff01020201050303030303030303030303030303030300060404040404040404040404040404040480c49fd50c01"
        ),
        // 20 import profile. v2 adds the payee and balance columns, v3 a kept hledger rules file.
        Pin(
            version: 1, id: idA, record: .importProfile(bankProfile()),
            hex:
                "14010442616e6b01010743757272656e740001044461746500000000010a44442f4d4d2f5959595901010301013b030103474250"
        ),
        Pin(
            version: 2, id: idA, record: .importProfile(bankProfile(payee: "Payee", balance: "Balance")),
            hex:
                "14020442616e6b01010743757272656e740001044461746500000000010a44442f4d4d2f5959595901010301013b03010347425001055061796565010742616c616e6365"
        ),
        Pin(
            version: 3, id: idA,
            record: .importProfile(bankProfile(payee: "Payee", balance: "Balance", rules: "skip 1\n")),
            hex:
                "14030442616e6b01010743757272656e740001044461746500000000010a44442f4d4d2f5959595901010301013b03010347425001055061796565010742616c616e63650107736b697020310a"
        ),
        // 21 note, attached to an account; its body keeps a line break and a tab.
        Pin(
            version: 1, id: idA,
            record: .note(
                Note(
                    id: idA, title: "Pension", body: "Policy 12-345\n\tAviva",
                    attachment: Note.Attachment(kind: .account, id: idB), created: date("2025-01-03"),
                    updated: 1_700_000_000)),
            hex:
                "15010750656e73696f6e14506f6c6963792031322d3334350a09417669766101000f1e2d3c4b5a69788796a5b4c3d2e1f0f6b90280c49fd50c"
        ),
        // 22 recurring item: rent on the last day of each month, from an account, one occurrence handled.
        Pin(
            version: 1, id: idA,
            record: .recurring(
                RecurringItem(
                    id: idA, name: "Rent", amount: Money(minorUnits: 120_000), entry: .spending(category: idB),
                    rule: .monthly(day: 0), start: date("2026-10-01"), end: date("2027-09-30"), note: "flat",
                    from: idC, to: nil, handledThrough: date("2026-11-01"))),
            hex:
                "16010452656e7480d30e000f1e2d3c4b5a69788796a5b4c3d2e1f00000eec30201c6c9020104666c617401ffeeddccbbaa998877665544332211000001acc402"
        ),
        // 23 invoice sender.
        Pin(
            version: 1, id: idA,
            record: .invoiceSender(
                InvoiceSender(
                    name: "Jane Doe", address: "2 Low Rd\nLeeds", taxNumber: "GB123",
                    bankDetails: "Sort code 12-34-56\nAccount 1234", taxLabel: .vat,
                    numberFormat: try! InvoiceNumberFormat(parsing: "INV-{YYYY}-{0000}"))),
            hex:
                "170101084a616e6520446f65010e32204c6f772052640a4c65656473000105474231323300011f536f727420636f64652031322d33342d35360a4163636f756e7420313233340111494e562d7b595959597d2d7b303030307d"
        ),
        // 24 ledger summary: commit 7, grouping 2, last change 5, value order 9, transaction 3, 2
        // transactions,
        // first invoice sent in 2026-01; two months.
        Pin(
            version: 1, id: idA,
            record: .summary(
                LedgerSummary(
                    commit: 7, grouping: 2, lastChange: 5, lastValueOrder: 9, lastTransaction: 3, transactions: 2,
                    monthEnds: MonthEnds(
                        months: [
                            .init(
                                month: 2026 * 12, values: [.init(accountID: idB, value: Money(minorUnits: 120_000))],
                                receivable: .zero),
                            .init(
                                month: 2026 * 12 + 1, values: [.init(accountID: idC, value: Money(minorUnits: -5))],
                                receivable: Money(minorUnits: 50_000)),
                        ], firstSentMonth: 2026 * 12))),
            hex:
                "180107020509030201f0fb0202f0fb0200010f1e2d3c4b5a69788796a5b4c3d2e1f080d30ef2fb02a08d0601ffeeddccbbaa9988776655443322110009"
        ),
        // 19 undone change (the redo stack).
        Pin(
            version: 1, id: idA,
            record: .undoneChange(
                UndoneChange(
                    change: ChangeEntry(
                        sequence: 7, timestamp: 1_700_000_000, summary: "Spent",
                        before: [.init(recordID: idA, payload: nil)]),
                    order: 2, after: [.init(recordID: idA, payload: [10, 2])])),
            hex:
                "13010780c49fd50c055370656e740100112233445566778899aabbccddeeff00020100112233445566778899aabbccddeeff01020a02"
        ),
    ]

    /// The import profile its pins hold (v1 has no payee or balance column; only v3 a rules file).
    static func bankProfile(payee: String? = nil, balance: String? = nil, rules: String? = nil) -> ImportProfile {
        var profile = ImportProfile(id: idA, name: "Bank")
        profile.destination = .transactions
        (profile.account, profile.dateColumn, profile.dateFormat) = ("Current", "Date", "DD/MM/YYYY")
        (profile.decimalComma, profile.skipRows, profile.delimiter) = (true, 3, ";")
        (profile.encoding, profile.currency) = (.cp1252, "GBP")
        (profile.payeeColumn, profile.balanceColumn, profile.hledgerRules) = (payee, balance, rules)
        return profile
    }

    /// The sync state both its pins hold (v1 reads as "synced commit unknown").
    static func syncState(syncedCommit: UInt64 = 0, syncedFile: [UInt8] = []) -> SyncState {
        SyncState(
            device: SyncDeviceID(unchecked: [UInt8](repeating: 1, count: 16)), deviceName: "laptop",
            signingSeed: [UInt8](repeating: 7, count: 32), folder: "/sync", published: 3, clock: 300,
            devices: [
                SyncDeviceID(unchecked: [UInt8](repeating: 2, count: 16)): SyncState.KnownDevice(
                    name: "phone", publicKey: [UInt8](repeating: 9, count: 32), applied: 2, lastHeard: 1_700_000_000)
            ], syncedCommit: syncedCommit, syncedFile: syncedFile)
    }

    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map { UInt8(hex.dropFirst($0).prefix(2), radix: 16)! }
    }

    @Test(arguments: pins) func currentVersionEncodesToThePinnedBytes(pin: Pin) throws {
        guard pin.version == pin.record.kind.currentVersion else { return }
        #expect(RecordCodec.encode(pin.record) == Self.bytes(pin.hex))
        #expect(try RecordCodec.decode(Self.bytes(pin.hex), id: pin.id) == pin.record)
    }

    @Test(arguments: pins) func olderVersionDecodesToItsUpgradedValue(pin: Pin) throws {
        guard pin.version < pin.record.kind.currentVersion else { return }
        let bytes = Self.bytes(pin.hex)
        #expect(try RecordCodec.decode(bytes, id: pin.id) == pin.record)
        #expect(try RecordCodec.upgraded(bytes, id: pin.id) == RecordCodec.encode(pin.record))
    }

    /// Adding a kind, or raising a kind's version, without pinning its bytes here fails.
    @Test func everyKindAndVersionIsPinned() {
        struct KindVersion: Hashable { let kind: UInt8, version: UInt8 }
        let expected = RecordKind.allCases.flatMap { kind in
            (1...kind.currentVersion).map { KindVersion(kind: kind.rawValue, version: $0) }
        }
        let pinned = Self.pins.map { KindVersion(kind: $0.record.kind.rawValue, version: $0.version) }
        #expect(Set(pinned) == Set(expected))
        #expect(pinned.count == expected.count, "one pin per kind and version")
        for pin in Self.pins {
            #expect(
                Array(Self.bytes(pin.hex).prefix(2)) == [pin.record.kind.rawValue, pin.version],
                "\(pin.testDescription): header bytes")
        }
    }

    /// Kind numbers and current versions are stored in every payload: pinned by value, so an
    /// edit to `RecordKind` that moves one fails here as well as in the bytes above.
    @Test func kindNumbersAndCurrentVersionsArePinned() {
        let pinned: [RecordKind: (number: UInt8, version: UInt8)] = [
            .settings: (1, 2), .account: (2, 1), .update: (3, 2), .categoryRate: (4, 1), .change: (5, 1),
            .backupTarget: (6, 1),
            .backupState: (7, 1), .budgetCategory: (8, 2), .incomeSource: (9, 2), .transaction: (10, 3),
            .savingsGoal: (11, 2),
            .client: (12, 2), .invoice: (13, 3), .invoiceCounter: (14, 1), .categoryRuleSet: (15, 2),
            .syncState: (16, 2), .syncIndex: (17, 1), .syncConflict: (18, 1), .undoneChange: (19, 1),
            .importProfile: (20, 3), .note: (21, 1), .recurring: (22, 1), .invoiceSender: (23, 1),
            .summary: (24, 1),
        ]
        #expect(RecordKind.allCases.count == pinned.count)
        for kind in RecordKind.allCases {
            #expect(kind.rawValue == pinned[kind]?.number, "\(kind)")
            #expect(kind.currentVersion == pinned[kind]?.version, "\(kind)")
        }
    }

    /// Every stored enum's tags, pinned by value: reordering cases in FinanceCore cannot move a
    /// tag, and an added case without a tag here (or a changed tag) fails.
    @Test func enumWireTagsArePinnedByValue() {
        func tags<Value: WireTagged & Hashable>(_: Value.Type) -> [Value: UInt8] {
            Dictionary(uniqueKeysWithValues: Value.allCases.map { ($0, $0.wireTag) })
        }
        #expect(tags(AccountKind.self) == [.asset: 0, .liability: 1])
        #expect(tags(BudgetType.self) == [.needs: 0, .wants: 1, .savings: 2])
        #expect(tags(CategoryRuleSet.Rule.Field.self) == [.any: 0, .description: 1, .payee: 2])
        #expect(tags(TransactionType.self) == [.income: 0, .expense: 1, .savings: 2])
        #expect(tags(Invoice.StoredStatus.self) == [.draft: 0, .sent: 1, .void: 2])
        #expect(tags(Note.Attachment.Kind.self) == [.account: 0, .client: 1, .invoice: 2])
        #expect(tags(LineItem.Kind.self) == [.charge: 0, .discount: 1, .credit: 2])
        #expect(tags(InvoiceSender.TaxLabel.self) == [.tax: 0, .vat: 1])
        #expect(
            Dictionary(uniqueKeysWithValues: RecurringItem.EntryTag.allCases.map { ($0, $0.rawValue) })
                == [.spending: 0, .income: 1, .saving: 2, .invoice: 3])
        #expect(
            Dictionary(uniqueKeysWithValues: RecurringItem.RuleTag.allCases.map { ($0, $0.rawValue) })
                == [.monthly: 0, .weekly: 1, .biweekly: 2, .yearly: 3])
        #expect(
            Dictionary(uniqueKeysWithValues: IncomeFrequency.WireTag.allCases.map { ($0, $0.rawValue) })
                == [.monthly: 0, .biweekly: 1, .variable: 2])
        #expect(
            Dictionary(uniqueKeysWithValues: Transaction.Target.WireTag.allCases.map { ($0, $0.rawValue) })
                == [.category: 0, .source: 1, .goal: 2, .uncategorised: 3])
        #expect(
            [IncomeFrequency.monthly, .biweekly(anchor: date("2025-01-03")), .variable].map(\.wireTag) == [
                .monthly, .biweekly, .variable,
            ])
        #expect(
            [Transaction.Target.category(Self.idA), .source(Self.idA), .goal(Self.idA), .uncategorised].map(\.wireTag)
                == [.category, .source, .goal, .uncategorised])
    }

    /// Each tag reads back as its own case, and no other byte reads as anything.
    @Test func everyByteReadsAsItsCaseOrNothing() {
        func check<Value: WireTagged & Equatable>(_: Value.Type) {
            for byte in UInt8.min...UInt8.max {
                #expect(Value(wireTag: byte) == Value.allCases.first { $0.wireTag == byte }, "\(Value.self) \(byte)")
            }
            #expect(
                Set(Value.allCases.map(\.wireTag)).count == Value.allCases.count, "\(Value.self): tags are distinct")
        }
        check(AccountKind.self)
        check(BudgetType.self)
        check(CategoryRuleSet.Rule.Field.self)
        check(TransactionType.self)
        check(Invoice.StoredStatus.self)
        check(Note.Attachment.Kind.self)
        check(LineItem.Kind.self)
        check(InvoiceSender.TaxLabel.self)
    }

    /// A tag or flag byte no reader knows, in every pinned payload that stores one, is a
    /// malformed record: it throws, never traps, and never reads as some other case.
    @Test func unknownTagsAreMalformedRecords() {
        // (kind, version, offset of the tag byte in the pinned bytes, the bytes valid there)
        let tagged: [(RecordKind, UInt8, Int, ClosedRange<UInt8>, String)] = [
            (.settings, 2, 6, 0...1, "include receivables"),
            (.account, 1, 20, 0...1, "account kind"),
            (.budgetCategory, 1, 15, 0...2, "budget type"),
            (.budgetCategory, 1, 17, 0...3, "flags"),
            (.incomeSource, 1, 12, 0...2, "frequency"),
            (.transaction, 1, 4, 0...2, "transaction type"),
            (.transaction, 1, 5, 0...2, "v1 target (no uncategorised)"),
            (.transaction, 2, 4, 0...2, "transaction type"),
            (.transaction, 2, 5, 0...3, "target"),
            (.invoice, 1, 53, 0...2, "invoice status"),
            (.invoice, 3, 31, 0...2, "line kind"),
            (.invoice, 3, 72, 0...2, "invoice status"),
            (.invoiceSender, 1, 70, 0...1, "tax label"),
            (.categoryRuleSet, 1, 15, 0...2, "rule target (no uncategorised)"),
            (.categoryRuleSet, 2, 32, 0...2, "rule field"),
            (.note, 1, 31, 0...1, "note attachment present"),
            (.note, 1, 32, 0...2, "note attachment kind"),
            (.recurring, 1, 10, 0...3, "recurring entry"),
            (.recurring, 1, 27, 0...3, "recurring rule"),
        ]
        for (kind, version, offset, valid, field) in tagged {
            let pin = Self.pins.first { $0.record.kind == kind && $0.version == version }!
            let bytes = Self.bytes(pin.hex)
            #expect(valid.contains(bytes[offset]), "\(field): the offset points at a tag")
            for unknown in UInt8.min...UInt8.max where !valid.contains(unknown) {
                var damaged = bytes
                damaged[offset] = unknown
                #expect(throws: FinanceError(.invalidRecord, ""), "\(field) \(unknown)") {
                    try RecordCodec.decode(damaged, id: pin.id)
                }
            }
        }
    }
}
