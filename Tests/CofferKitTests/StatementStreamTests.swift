import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// A statement is imported in pieces read on every core and matched a line at a time
/// (`BankStatement`, `Ledger.importStatement`). These check it against the statement read
/// whole, serially, as the importer read it before (`reference`), planned whole
/// (`TransactionImportPlan`): the same lines, digests, duplicates and transactions, across
/// pieces, quoted line breaks, repeated rows, blank lines, zero amounts and earlier imports.
@Suite struct StatementStreamTests {
    /// The statement read whole: each record's line (one plus the line breaks in the records
    /// before it), the blank ones dropped, the header first; each digest over the trimmed
    /// fields and how many identical records came before.
    static func reference(_ text: String) -> (titles: [String], records: [StatementFile.Record]) {
        var line = 1
        var rows: [(Int, [String])] = []
        CSVRows.forEach(in: text, delimiter: ",") { fields in
            let start = line
            line += 1 + fields.reduce(0) { $0 + $1.count(where: \.isNewline) }
            if !fields.allSatisfy({ $0.trimmingCharacters(in: .whitespaces).isEmpty }) { rows.append((start, fields)) }
        }
        var seen: [[UInt8]: UInt32] = [:]
        let records = rows.dropFirst().map { start, fields in
            var content: [UInt8] = []
            for field in fields {
                let value = Array(field.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
                content += withUnsafeBytes(of: UInt32(value.count).littleEndian, Array.init) + value
            }
            let occurrence = seen[content, default: 0]
            seen[content] = occurrence + 1
            let digest = BLAKE2b.hash(
                content + withUnsafeBytes(of: occurrence.littleEndian, Array.init), outputByteCount: 16)
            return StatementFile.Record(line: start, fields: fields, digest: digest)
        }
        return (rows.first?.1 ?? [], records)
    }

    /// A statement of `count` lines over a year: repeated rows, zero amounts, quoted
    /// descriptions with line breaks and commas, blank lines, oldest or newest first.
    static func statementText(_ count: Int, newestFirst: Bool, using random: inout SeededGenerator) -> String {
        let shops = [
            "Tesco", "\"Pret, A Manger\"", "\"Two\nlines\"", "Shell", " Boots ", "\"say \"\"hi\"\"\"",
            "Caf\u{E9} \u{A0}",
            "Tab\there", "\u{2028}Odd\u{85}",
        ]
        var lines: [String] = []
        var balance: Int64 = 100_000
        for index in 0..<count {
            let day = 1 + index * 365 / max(count, 1)
            let date = String(format: "2025-%02d-%02d", 1 + (day - 1) / 31 % 12, 1 + (day - 1) % 28)
            let pence: Int64 = random.next() % 11 == 0 ? 0 : Int64(random.next() % 4_000) - 3_000
            balance += pence
            let line =
                "\(date),\(shops[Int(random.next() % UInt64(shops.count))]),\(Currency.gbp.decimalString(Money(minorUnits: pence))),\(Currency.gbp.decimalString(Money(minorUnits: balance)))"
            lines.append(line)
            // The same row again (two coffees), and now and then a blank line.
            if random.next() % 7 == 0 { lines.append(line) }
            if random.next() % 13 == 0 { lines.append(["", " , ,", " \t,\u{A0}"][Int(random.next() % 3)]) }
        }
        if newestFirst { lines.reverse() }
        return (["Date,Description,Amount,Balance"] + lines).joined(separator: random.next() % 2 == 0 ? "\n" : "\r\n")
    }

    static func open(_ text: String) throws -> BankStatement {
        try BankStatement(
            data: Data(text.utf8), name: "s.csv", delimiter: nil, skipLines: 0, hasHeader: true, encoding: .utf8,
            detectHeader: true, columns: StatementColumns(destination: .transactions), currencyColumn: nil)
    }

    @Test(arguments: [1, 300, 2_047, 2_049, 7_000])
    func piecesReadAsTheWholeTextDoes(count: Int) throws {
        var random = SeededGenerator(state: UInt64(count))
        for newestFirst in [false, true] {
            let text = Self.statementText(count, newestFirst: newestFirst, using: &random)
            let (titles, expected) = Self.reference(text)
            let statement = try Self.open(text)
            var read: [StatementFile.Record] = []
            statement.forEachRecord { read.append($0) }
            #expect(statement.titles == titles)
            #expect(statement.recordCount == expected.count)
            #expect(read.map(\.line) == expected.map(\.line))
            #expect(read.map(\.fields) == expected.map(\.fields))
            #expect(read.map(\.digest) == expected.map(\.digest))
        }
    }

    /// An earlier statement imported, then a later one that overlaps it (the same rows, and
    /// rows with the same facts but another balance): what is added is what the whole-statement
    /// plan adds, in the same order, with the same sequences.
    @Test(arguments: [40, 3_000])
    func importsWhatTheWholeStatementPlanWould(count: Int) throws {
        var random = SeededGenerator(state: 7 + UInt64(count))
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            let text = Self.statementText(count, newestFirst: false, using: &random)
            var lines = text.replacingOccurrences(of: "\r\n", with: "\n").components(separatedBy: "\n")
            // The earlier statement: about its first half, cut where a record starts.
            let half = try #require((lines.count / 2..<lines.count).first { lines[$0].hasPrefix("2025") })
            let earlier = lines.prefix(half).joined(separator: "\n")
            var options = Ledger.StatementImportOptions(fileName: "earlier.csv")
            options.account = "Current"
            _ = try ledger.importStatement(try Self.open(earlier), options)
            // The later one: all of it, some balances changed (the same facts, another row).
            for index in stride(from: 1, to: half, by: 5)
            where lines[index].hasPrefix("2025") && lines[index].hasSuffix("0") {
                lines[index] = lines[index].dropLast() + "1"
            }
            let later = lines.joined(separator: "\n")

            let (_, records) = Self.reference(later)
            let statement = try Self.open(later)
            let rows = try records.map {
                try statement.layout.row($0.fields, line: $0.line, rowHash: $0.digest, currency: .gbp)
            }
            let plan = TransactionImportPlan(
                rows: rows.map(Ledger.cleaned), account: "Current", existing: ledger.transactions, rules: nil,
                categories: ledger.budgetCategories, firstSequence: ledger.nextTransactionSequence)
            let before = Set(ledger.transactions.map(\.id))
            options.fileName = "later.csv"
            options.reportLines = true
            let result = try ledger.importStatement(statement, options)

            #expect(result.added == plan.added.count && result.duplicates == plan.duplicates.count)
            #expect(result.zeroAmountLines == plan.zeroAmountLines.count)
            #expect(plan.duplicates.count > 0, "the later statement overlaps the earlier")
            #expect(result.lines.filter { $0.status == .duplicate }.map(\.line) == plan.duplicates.map(\.line))
            let added = ledger.transactions.filter { !before.contains($0.id) }.sorted { $0.sequence < $1.sequence }
            func facts(_ transaction: Transaction) -> String {
                "\(transaction.date) \(transaction.signedAmount) \(transaction.note ?? "-") \(transaction.sequence) \(transaction.origin!.rowHash)"
            }
            #expect(added.map(facts) == plan.added.map { facts($0.transaction) })
            #expect(
                StatementLayout.closingBalance(rows)?.amount == result.closingBalance?.amount
                    && StatementLayout.closingBalance(rows)?.line == result.closingBalance?.line)
        }
    }

    /// A line that cannot be read anywhere in a long statement writes nothing; with
    /// `skipInvalid` every other line goes in.
    @Test func anUnreadableLineWritesNothingUnlessSkipped() throws {
        var random = SeededGenerator(state: 99)
        try withScratchVault { vault in
            let ledger = try Ledger(vault: vault)
            try ledger.writeWithoutHistory([(UUID(), .settings(VaultSettings(currency: .gbp)))])
            var lines = Self.statementText(3_000, newestFirst: false, using: &random).components(separatedBy: "\n")
            let broken = try #require(
                (0..<lines.count - 3).reversed().first { lines[$0].hasPrefix("2025") && !lines[$0].contains("\"") })
            lines[broken] = "2025-13-45,Broken,1.00,2.00"
            let text = lines.joined(separator: "\n")
            let statement = try Self.open(text)
            // Its line as the whole text counts them (U+2028 and U+0085 end lines too).
            let line = try #require(Self.reference(text).records.first { $0.fields[1] == "Broken" }?.line)
            let before = snapshot(ledger)
            let commits = try vault.verify().commitCounter
            let options = Ledger.StatementImportOptions(fileName: "s.csv")
            #expect(throws: CofferError.self) { try ledger.importStatement(statement, options) }
            #expect(snapshot(ledger) == before)
            #expect(snapshot(try Ledger(vault: vault)) == before)
            #expect(try vault.verify().commitCounter == commits, "not even the default categories are written")

            var skipping = options
            skipping.skipInvalid = true
            let result = try ledger.importStatement(statement, skipping)
            #expect(result.invalid.map(\.line) == [line])
            #expect(result.added > 2_000 && ledger.transactions.count == result.added)

            // The same statement again adds nothing, and writes nothing.
            let again = try vault.verify().commitCounter
            let repeated = try ledger.importStatement(statement, skipping)
            #expect(repeated.added == 0 && repeated.duplicates == result.added)
            #expect(try vault.verify().commitCounter == again)
        }
    }

    /// What needs every line is found in every piece: a day above 12 or a currency that only a
    /// late piece holds.
    @Test func aLatePieceSettlesTheDateFormatAndNamesItsCurrency() throws {
        var lines = ["Date,Description,Amount,Currency"]
        for index in 0..<6_000 {
            let day = index == 5_500 ? 25 : 1 + index % 12
            lines.append(
                String(format: "%02d/%02d/2025,Shop,-1.00,%@", day, 1 + index / 7 % 12, index == 5_800 ? "usd" : "GBP"))
        }
        let statement = try Self.open(lines.joined(separator: "\n"))
        #expect(statement.layout.datePattern.description == "DD/MM/YYYY")
        #expect(statement.currencies == ["GBP", "USD"])
        #expect(throws: CofferError.self, "without that day no line tells day-first from month-first") {
            _ = try Self.open(Array(lines.prefix(5_000)).joined(separator: "\n"))
        }
    }
}
