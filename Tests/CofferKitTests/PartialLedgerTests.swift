import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The overview reads this month's records and the vault's summary
/// (`LedgerView.overview`): everything it shows must be what the whole vault gives, whatever
/// history was written, moved, deleted or undone before, and a record that does not describe the
/// vault as it is must never be used.
@Suite struct PartialLedgerTests {
    typealias Generator = SyncSimulation.Generator

    static let today = try! CalendarDate(parsing: "2026-11-24")
    static let passphrase = try! Passphrase("scratch")

    /// A random day from January 2024 to March 2027 (after `today` too: dated ahead).
    static func day(_ random: inout Generator) -> CalendarDate {
        let first = try! CalendarDate(parsing: "2024-01-01")
        return first.adding(days: Int.random(in: 0..<(365 * 3 + 90), using: &random))
    }

    static func money(_ random: inout Generator, _ range: ClosedRange<Int64> = 1_00...5_000_00) -> Money {
        Money(minorUnits: Int64.random(in: range, using: &random))
    }

    /// One random change of history through the ledger's own write path: values, flows, invoices
    /// (sent, paid in parts with and without flows, voided, drafts), and their moves, deletions,
    /// closures, changes of kind and undos.
    static func randomChange(_ ledger: Ledger, _ random: inout Generator) throws {
        let accounts = ledger.accounts
        guard let account = accounts.randomElement(using: &random) else {
            // Undone back to before the first account.
            let account = Account(name: "Cash", category: "Cash", kind: .asset, created: day(&random))
            return try ledger.commit("account", puts: [(account.id, .account(account))])
        }
        switch Int.random(in: 0..<12, using: &random) {
        case 0, 1, 2:
            let update = ValueUpdate(
                accountID: account.id, date: day(&random), amount: money(&random), sequence: ledger.nextUpdateSequence)
            try ledger.commit("value", puts: [(update.id, .update(update))])
        case 3, 4:
            let other = accounts.randomElement(using: &random)!
            let flow =
                Bool.random(using: &random)
                ? AccountFlow(from: account.id, order: ledger.nextUpdateSequence)
                : AccountFlow(
                    from: account.id, to: other.id == account.id ? nil : other.id, order: ledger.nextUpdateSequence)
            let transaction = Transaction(
                amount: money(&random, 1_00...900_00), type: .expense, target: .uncategorised, note: "moved",
                date: day(&random), sequence: ledger.nextTransactionSequence, flow: flow)
            try ledger.commit("flow", puts: [(transaction.id, .transaction(transaction))])
        case 5, 6:
            let issued = day(&random)
            let price = money(&random, 50_00...2_000_00)
            var invoice = Invoice(
                number: (ledger.invoices.map(\.number).max() ?? 0) + 1, clientID: UUID(),
                items: [LineItem(description: "work", quantity: Quantity(thousandths: 1000), unitPrice: price)],
                issued: issued, due: issued.adding(days: 30))
            let fate = Int.random(in: 0..<5, using: &random)
            if fate > 0 {
                invoice.stored = .sent
                invoice.sentOn = issued
            }
            if fate >= 2 {
                let half = Money(minorUnits: price.minorUnits / 2)
                let flow =
                    Bool.random(using: &random) ? AccountFlow(to: account.id, order: ledger.nextUpdateSequence) : nil
                invoice.payments.append(
                    Payment(date: issued.adding(days: Int.random(in: 0...70, using: &random)), amount: half, flow: flow)
                )
                if fate >= 3 {
                    invoice.payments.append(
                        Payment(
                            date: issued.adding(days: Int.random(in: 0...400, using: &random)),
                            amount: try price.subtracting(half)))
                }
            }
            if fate == 4, Bool.random(using: &random) {
                invoice.stored = .void
                invoice.voidedOn = issued.adding(days: Int.random(in: 0...200, using: &random))
            }
            try ledger.commit("invoice", puts: [(invoice.id, .invoice(invoice))])
        case 7:
            // A value or invoice moved to another day (another month, often).
            if var update = ledger.updates.randomElement(using: &random) {
                update.date = day(&random)
                try ledger.commit("moved value", puts: [(update.id, .update(update))])
            } else if var invoice = ledger.invoices.randomElement(using: &random), !invoice.payments.isEmpty {
                invoice.payments[0].date = day(&random)
                try ledger.commit("moved payment", puts: [(invoice.id, .invoice(invoice))])
            }
        case 8:
            if let update = ledger.updates.randomElement(using: &random) {
                try ledger.commit("deleted value", deletes: [update.id])
            } else if let invoice = ledger.invoices.randomElement(using: &random) {
                try ledger.commit("deleted invoice", deletes: [invoice.id])
            }
        case 9:
            var changed = account
            if Bool.random(using: &random) {
                changed.closed = changed.closed == nil ? day(&random) : nil
            } else {
                changed.kind = changed.kind == .asset ? .liability : .asset
            }
            try ledger.commit("account", puts: [(changed.id, .account(changed))])
        default:
            try ledger.undo()
        }
    }

    /// Everything the overview shows of `date`, as text.
    static func overview(_ ledger: Ledger, on date: CalendarDate) throws -> String {
        let netWorth = ledger.netWorth
        let receivables = try Receivables(invoices: ledger.invoices, today: date)
        let month = BudgetMonth(containing: date)
        let budget = try ledger.budget.summary(for: month)
        return [
            "\(try netWorth.totals(on: date))", "\(try netWorth.changeSinceLastMonth(on: date))",
            "\(netWorth.hasAMonthOfHistory(on: date))", "\(try netWorth.projected(years: 1, from: date))",
            "\(try netWorth.distribution(on: date))",
            "\(try netWorth.monthEndSeries(through: date).map { "\($0.date) \($0.netWorth)" })",
            ledger.accounts.map { "\($0.name) \(String(describing: ledger.portfolio.value(of: $0, on: date)))" }
                .joined(separator: ","),
            "\(receivables.outstanding) \(receivables.overdue) \(receivables.overdueCount) \(receivables.paidThisMonth)",
            "\(budget.income) \(budget.spent) \(budget.remaining)", "\(ledger.hasInvoices) \(ledger.hasTransactions)",
        ].joined(separator: "\n")
    }

    static func partial(_ url: URL, on date: CalendarDate) throws -> Ledger {
        try open(url, for: .overview(on: date))
    }

    static func open(_ url: URL, for view: LedgerView) throws -> Ledger {
        try Ledger.open(UnlockedVaultFile.unlock(at: url, with: .passphrase(passphrase)), for: view)
    }

    @Test(arguments: [1, 2, 3])
    func theOverviewFromThisMonthAndTheMonthEndsIsTheWholeVaults(seed: UInt64) throws {
        try withScratchVault { vault in
            var random = Generator(state: seed)
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            for step in 0..<60 {
                try Self.randomChange(ledger, &random)
                // Kept up write by write, the figures are those computed afresh.
                let summary = try #require(ledger.summaryRecord?.summary)
                #expect(summary.commit == vault.commitCounter)
                let fresh = try MonthEnds.empty.recomputed(
                    from: nil, portfolio: ledger.portfolio, invoices: ledger.invoices)
                #expect(summary.monthEnds == fresh, "seed \(seed), step \(step)")
                #expect(summary.lastValueOrder + 1 >= ledger.nextUpdateSequence)
                #expect(summary.lastTransaction + 1 >= ledger.nextTransactionSequence)
                #expect(summary.lastChange >= ledger.changes.last?.entry.sequence ?? 0)
                #expect(summary.transactions == ledger.transactions.count)
            }
            let whole = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
            for text in ["2026-11-24", "2026-11-01", "2026-10-31", "2025-03-15", "2024-02-29", "2027-02-10"] {
                let date = try CalendarDate(parsing: text)
                let partial = try Self.partial(vault.url, on: date)
                #expect(partial.readsPartially && partial.vault.isPartial)
                #expect(partial.updates.count < whole.updates.count || date.year < 2025)
                #expect(try Self.overview(partial, on: date) == Self.overview(whole, on: date), "seed \(seed), \(date)")
            }
        }
    }

    /// `coffer update` reads this month's values and the summary: what it writes must be what a
    /// whole ledger would have written, numbered after every record it did not read.
    @Test(arguments: [4, 5])
    func aValueRecordedFromPartOfTheVaultIsWhatTheWholeVaultWouldHold(seed: UInt64) throws {
        try withScratchVault { vault in
            var random = Generator(state: seed)
            var ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            for round in 0..<4 {
                for _ in 0..<12 { try Self.randomChange(ledger, &random) }
                let highest = (
                    value: ledger.nextUpdateSequence, change: ledger.changes.last?.entry.sequence ?? 0,
                    // The change forgets what could be redone, as from the whole vault.
                    records: ledger.vault.recordCount - ledger.undoneChanges.count
                )
                let day = Self.today.adding(days: -Int.random(in: 0...20, using: &random))
                let partial = try Self.open(vault.url, for: .recordingValue(on: day, today: Self.today))
                #expect(partial.readsPartially && partial.vault.isPartial)
                let account = try #require(partial.accounts.filter { $0.isOpen(on: day) }.randomElement(using: &random))
                #expect(partial.portfolio.value(of: account, on: day) == ledger.portfolio.value(of: account, on: day))
                let update = try partial.recordValue(
                    of: account, amount: Money(minorUnits: Int64(round + 1) * 1_111_00), on: day)
                #expect(update.sequence >= highest.value, "numbered after the values it did not read")

                ledger = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
                #expect(ledger.vault.recordCount == highest.records + 2, "the value and its change entry")
                #expect(try ledger.vault.verify().recordCount == ledger.vault.recordCount)
                #expect(ledger.changes.last!.entry.sequence > highest.change, "after every change")
                #expect(ledger.changes.last?.entry.summary.hasPrefix("Updated \(account.name)") == true)
                #expect(ledger.portfolio.value(of: account, on: day) == update.amount)
                let summary = try #require(ledger.summaryRecord?.summary)
                #expect(summary.commit == ledger.vault.commitCounter)
                #expect(
                    summary.monthEnds
                        == (try MonthEnds.empty.recomputed(
                            from: nil, portfolio: ledger.portfolio, invoices: ledger.invoices)))
                let (a, b) = (
                    try Self.overview(Self.partial(vault.url, on: Self.today), on: Self.today),
                    try Self.overview(ledger, on: Self.today)
                )
                #expect(a == b)
                // Undo from the whole vault takes it back.
                try ledger.undo()
                #expect(
                    ledger.portfolio.value(of: account, on: day) != update.amount
                        || ledger.updates.contains {
                            $0.accountID == account.id && $0.amount == update.amount && $0.id != update.id
                        })
            }
        }
    }

    /// `coffer spend`, `earn` and `save` read the day's month's transactions, the values from that
    /// month and the summary: the budget they show and what they write must be the whole vault's.
    @Test(arguments: [6, 7])
    func anEntryRecordedFromPartOfTheVaultIsWhatTheWholeVaultWouldHold(seed: UInt64) throws {
        try withScratchVault { vault in
            var random = Generator(state: seed)
            var ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            var readLess = 0
            defer { #expect(readLess > 0, "other months' transactions are not read") }
            for round in 0..<6 {
                for _ in 0..<12 { try Self.randomChange(ledger, &random) }
                let highest = (
                    transaction: ledger.nextTransactionSequence, value: ledger.nextUpdateSequence,
                    change: ledger.changes.last?.entry.sequence ?? 0
                )
                let day = Self.today.adding(days: -Int.random(in: 0...45, using: &random))
                let month = BudgetMonth(containing: day)
                let partial = try Self.open(vault.url, for: .recordingEntry(on: day, today: Self.today))
                #expect(partial.readsPartially && partial.vault.isPartial)
                if partial.transactions.count < ledger.transactions.count { readLess += 1 }
                #expect(try partial.budget.summary(for: month).remaining == ledger.budget.summary(for: month).remaining)
                let account = partial.accounts.filter { $0.isOpen(on: day) }.randomElement(using: &random)
                let flow: Ledger.FlowAccount = account.map { .account($0) } ?? .none
                let amount = Money(minorUnits: Int64(round + 1) * 12_34)
                let entry: Transaction
                switch round % 3 {
                case 0:
                    let category = try #require(partial.budgetCategories.filter { !$0.isHidden }.first)
                    entry = try partial.spend(amount, in: category, on: day, from: flow)
                case 1:
                    let source = try #require(partial.incomeSources.first)
                    entry = try partial.earn(amount, from: source, on: day, into: flow)
                default:
                    let goal = try #require(partial.goals.first)
                    entry = try partial.save(amount, towards: goal, on: day, from: flow, to: .none)
                }
                #expect(entry.sequence >= highest.transaction, "numbered after the transactions it did not read")
                #expect((entry.flow?.order ?? highest.value) >= highest.value)

                ledger = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
                #expect(try ledger.vault.verify().recordCount == ledger.vault.recordCount)
                #expect(ledger.changes.last!.entry.sequence > highest.change, "after every change")
                #expect(ledger.transactions.contains { $0.id == entry.id })
                #expect(
                    try partial.budget.summary(for: month).remaining == ledger.budget.summary(for: month).remaining,
                    "the month's budget shown after the entry is the whole vault's")
                if let account {
                    #expect(
                        partial.portfolio.value(of: account, on: Self.today)
                            == ledger.portfolio.value(of: account, on: Self.today))
                }
                let summary = try #require(ledger.summaryRecord?.summary)
                #expect(summary.commit == ledger.vault.commitCounter)
                #expect(summary.transactions == UInt64(ledger.transactions.count))
                #expect(
                    summary.monthEnds
                        == (try MonthEnds.empty.recomputed(
                            from: nil, portfolio: ledger.portfolio, invoices: ledger.invoices)))
            }
        }
    }

    /// Another process writes between this ledger's reading and its writes (a shell, a batch, a
    /// backup writing twice): the summary this ledger makes must still be the file's, not its own
    /// stale view's.
    @Test func aWriteAfterAnotherProcessWroteMakesTheSummaryFromTheFile() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            let other = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
            let account = Account(
                name: "Bonds", category: "Investments", kind: .asset, created: try CalendarDate(parsing: "2026-03-01"))
            try other.commit("account", puts: [(account.id, .account(account))])
            _ = try other.recordValue(
                of: account, amount: Money(minorUnits: 49_000_00), on: try CalendarDate(parsing: "2026-09-15"))
            // The first ledger has not seen it, and writes twice.
            for amount in [5_00, 6_00] {
                let spend = Transaction(
                    amount: Money(minorUnits: Int64(amount)), type: .expense, target: .uncategorised, note: "later",
                    date: Self.today, sequence: ledger.nextTransactionSequence)
                try ledger.commit("spend", puts: [(spend.id, .transaction(spend))])
            }
            #expect(
                ledger.portfolio.value(of: account, on: try CalendarDate(parsing: "2026-09-15"))
                    == Money(minorUnits: 49_000_00), "read again after the other process's write")
            let whole = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
            let partial = try Self.partial(vault.url, on: Self.today)
            #expect(try Self.overview(partial, on: Self.today) == Self.overview(whole, on: Self.today))
            let summary = try #require(whole.summaryRecord?.summary)
            #expect(summary.commit == whole.vault.commitCounter, "the second write's summary is the file's")
            #expect(summary.lastValueOrder + 1 >= whole.nextUpdateSequence)
            #expect(
                summary.monthEnds
                    == (try MonthEnds.empty.recomputed(from: nil, portfolio: whole.portfolio, invoices: whole.invoices))
            )
        }
    }

    /// January of year 1, the calendar's first month, has no month before it to start a view from.
    @Test func aValueInTheCalendarsFirstMonthIsRead() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            let account = Account(
                name: "Cash", category: "Cash", kind: .asset, created: try CalendarDate(parsing: "0001-01-01"))
            try ledger.commit("account", puts: [(account.id, .account(account))])
            let day = try CalendarDate(parsing: "0001-01-05")
            let partial = try Self.open(vault.url, for: .recordingValue(on: day, today: Self.today))
            _ = try partial.recordValue(of: account, amount: Money(minorUnits: 100_00), on: day)
            let whole = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
            #expect(whole.summaryRecord?.summary.monthEnds.months.first?.month == CalendarDate.firstMonthNumber)
            for text in ["0001-01-20", "0001-02-20", "2026-11-24"] {
                let date = try CalendarDate(parsing: text)
                #expect(
                    try Self.overview(Self.partial(vault.url, on: date), on: date) == Self.overview(whole, on: date))
            }
        }
    }

    /// A change that reaches a month the view did not read is refused whole, and nothing changes.
    @Test func aWriteBeyondWhatWasReadIsRefused() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            let partial = try Self.open(vault.url, for: .recordingValue(on: Self.today, today: Self.today))
            #expect(partial.readsPartially)
            let before = try Data(contentsOf: vault.url)
            let account = try #require(partial.accounts.first)
            #expect(throws: CofferError.self) {
                try partial.recordValue(
                    of: account, amount: Money(minorUnits: 5_00), on: try CalendarDate(parsing: "2025-02-01"))
            }
            #expect(try Data(contentsOf: vault.url) == before)
        }
    }

    @Test func aViewReadsLessAndCannotWrite() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            var puts: [(UUID, FinanceRecord)] = []
            for month in 1...9 {
                let date = try CalendarDate(parsing: String(format: "2026-%02d-15", month))
                let plain = Transaction(
                    amount: Money(minorUnits: Int64(1000 * month)), type: .expense, target: .uncategorised,
                    note: "old \(month)", date: date, sequence: UInt64(900 + month))
                puts.append((plain.id, .transaction(plain)))
            }
            try ledger.commit("history", puts: puts)
            let partial = try Self.partial(vault.url, on: Self.today)
            #expect(partial.readsPartially)
            #expect(!partial.transactions.contains { $0.note == "old 3" }, "old spending is not read")
            #expect(partial.updates.count < ledger.updates.count, "old values are not read")
            #expect(partial.changes.isEmpty, "the change log is not read")
            #expect(partial.hasTransactions)
            // Spending of a month the overview did not read: its group's index was not read.
            #expect(throws: (any Error).self) { try partial.commit("nothing", puts: puts.prefix(1).map { $0 }) }
        }
    }

    /// A write that is not the ledger's (an older build, a tool, a large write cut off before its
    /// second commit) leaves the record naming an earlier commit: the view reads everything.
    @Test func aRecordOfAnotherCommitIsNotUsed() throws {
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.addDemoData(today: Self.today)
            let account = try #require(ledger.accounts.first { $0.kind == .asset })
            let old = ValueUpdate(
                accountID: account.id, date: try CalendarDate(parsing: "2025-01-10"),
                amount: Money(minorUnits: 987_654_00), sequence: ledger.nextUpdateSequence)
            // Behind the ledger's back: the summary is not refreshed.
            try vault.apply([.put(RecordID(uuid: old.id), Data(RecordCodec.encode(.update(old))))])
            let partial = try Self.partial(vault.url, on: Self.today)
            #expect(!partial.readsPartially && !partial.vault.isPartial)
            let whole = try Ledger(vault: Vault.open(at: vault.url, with: .passphrase(Self.passphrase)))
            #expect(try Self.overview(partial, on: Self.today) == Self.overview(whole, on: Self.today))
            #expect(
                try whole.netWorth.monthEndSeries(through: Self.today).contains {
                    $0.date == (try CalendarDate(parsing: "2025-01-31"))
                        && $0.netWorth.minorUnits > 987_654_00 - 10_000_000_00
                })
            // The next write brings it up to date, and views read part again.
            try whole.commit("note", puts: [])
            #expect(try Self.partial(vault.url, on: Self.today).readsPartially)
        }
    }

    /// A vault whose invoices sit where an earlier grouping put them (by the month issued): the
    /// view reads it whole until a write moves them, and the write does.
    @Test func recordsPlacedByAnEarlierGroupingAreMovedByTheNextWrite() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-regroup-\(UUID())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let url = folder.appendingPathComponent("v.coffer")
        let vault = try Vault.create(
            at: url, passphrase: Self.passphrase, parameters: KDFProfile.interactive.parameters)
        let issuedMonthGrouping: PageGrouping = { id, payload in
            guard let record = try? RecordCodec.decode(payload, id: id.uuid) else {
                return RecordGrouping.group(.setup)
            }
            if case .invoice(let invoice) = record {
                return RecordGrouping.group(.invoices, month: invoice.issued.monthNumber)
            }
            return RecordGrouping.group(of: record)
        }
        vault.grouping = issuedMonthGrouping
        let issued = try CalendarDate(parsing: "2024-03-01")
        let open = Invoice(
            number: 1, clientID: UUID(),
            items: [
                LineItem(
                    description: "work", quantity: Quantity(thousandths: 1000), unitPrice: Money(minorUnits: 500_00))
            ],
            issued: issued, due: issued.adding(days: 30), stored: .sent, sentOn: issued)
        try vault.apply([.put(RecordID(uuid: open.id), Data(RecordCodec.encode(.invoice(open))))])
        #expect(vault.recordsOutsideTheirGroup().isEmpty)
        vault.grouping = RecordGrouping.grouping
        #expect(vault.recordsOutsideTheirGroup() == [RecordID(uuid: open.id)])

        let before = try Self.partial(url, on: Self.today)
        #expect(!before.readsPartially, "no summary: the whole vault is read")
        #expect(try Receivables(invoices: before.invoices, today: Self.today).outstanding == Money(minorUnits: 500_00))

        let ledger = try Ledger(vault: Vault.open(at: url, with: .passphrase(Self.passphrase)))
        try ledger.commit("a note", puts: [])
        #expect(ledger.vault.recordsOutsideTheirGroup().isEmpty)
        let after = try Self.partial(url, on: Self.today)
        #expect(after.readsPartially)
        #expect(try Receivables(invoices: after.invoices, today: Self.today).outstanding == Money(minorUnits: 500_00))
        #expect(try Self.overview(after, on: Self.today) == Self.overview(ledger, on: Self.today))
    }
}
