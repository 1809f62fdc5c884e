import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// `coffer import json` streams the file through a small window and loads it in bulk: it must
/// read exactly what `JSONDecoder` reads, refuse what it refuses, and write nothing when it refuses.
@Suite struct ExportStreamTests {
    /// Notes full of the characters the boundary scan has to step over.
    static let awkward = [
        "plain", "a ] b } c", "quote \" inside", "back\\slash\\", "[{\"key\": [1, 2]}]", "ünïcødé ✓",
        "slash / and \\u escapes \u{e9}",
    ]

    func document() -> ExportDocument {
        var document = ExportDocument(currency: "GBP", includeReceivables: true)
        let account = UUID().uuidString.lowercased(), other = UUID().uuidString.lowercased()
        document.accounts = [
            .init(
                id: account, name: "Bank", category: "Savings", kind: "asset", growth: nil, created: "2020-01-01",
                closed: nil),
            .init(
                id: other, name: "Card", category: "Credit Cards", kind: "liability", growth: nil,
                created: "2020-01-01", closed: nil),
        ]
        document.updates = (0..<3_000).map { index in
            .init(
                id: UUID().uuidString.lowercased(), account: index % 2 == 0 ? account : other,
                date: "202\(index % 5)-0\(index % 9 + 1)-1\(index % 10)", amount: "\(index).50",
                sequence: UInt64(index + 1), note: index % 3 == 0 ? Self.awkward[index % Self.awkward.count] : nil)
        }
        document.transactions = (0..<4_000).map { index in
            .init(
                id: UUID().uuidString.lowercased(), amount: "\(index % 500).25", type: "expense",
                target: .init(kind: "uncategorised", id: nil), note: Self.awkward[index % Self.awkward.count],
                date: "2025-0\(index % 9 + 1)-04", sequence: UInt64(index + 1),
                importAccount: index % 2 == 0 ? "Current" : nil, importHash: index % 2 == 0 ? "00ff" : nil,
                flow: index % 7 == 0 ? .init(from: account, to: other, order: UInt64(10_000 + index)) : nil)
        }
        document.invoices = (0..<300).map { index in
            .init(
                id: UUID().uuidString.lowercased(), number: index + 1, client: UUID().uuidString.lowercased(),
                items: [.init(description: "Work ]}", quantity: "1", unitPrice: "10.00")], tax: nil,
                issued: "2025-01-01", due: "2025-01-31", notes: nil, status: "sent", sentOn: "2025-01-01",
                voidedOn: nil,
                payments: index % 3 == 0
                    ? [
                        .init(
                            date: "2025-02-0\(index % 9 + 1)", amount: "10.00",
                            flow: .init(from: nil, to: account, order: UInt64(20_000 + index)))
                    ]
                    : [])
        }
        return document
    }

    /// `text` in a file, read through a window of `window` bytes.
    func source(_ text: Data, window: Int, in folder: TemporaryDirectory) throws -> ExportSource {
        let file = folder.path("export-\(UUID().uuidString).json")
        try text.write(to: file)
        return try #require(ExportSource(path: file.path, windowSize: window))
    }

    /// A ledger made from `document` the plain way: decoded whole, every record put in one change.
    func expected(_ document: Data) throws -> [String: [String]] {
        let (_, records, _) = try JSONDecoder().decode(ExportDocument.self, from: document).records()
        return Self.byKind(records.map { ($0.0, $0.1) })
    }

    static func byKind(_ records: [(UUID, FinanceRecord)]) -> [String: [String]] {
        var kinds: [String: [String]] = [:]
        for (id, record) in records {
            let kind: String
            switch record {
            case .update: kind = "update"
            case .transaction: kind = "transaction"
            case .invoice: kind = "invoice"
            case .account: kind = "account"
            default: continue
            }
            kinds[kind, default: []].append("\(id) \(record)")
        }
        return kinds.mapValues { $0.sorted() }
    }

    func loaded(_ ledger: Ledger) -> [String: [String]] {
        Self.byKind(
            ledger.updates.map { ($0.id, .update($0)) } + ledger.transactions.map { ($0.id, .transaction($0)) }
                + ledger.invoices.map { ($0.id, .invoice($0)) } + ledger.accounts.map { ($0.id, .account($0)) })
    }

    /// Pretty-printed with sorted keys, or compact with the members in the order Coffer's export
    /// writes them (a plain `JSONEncoder` on Linux orders keys differently from run to run).
    func encoded(_ document: ExportDocument, prettyPrintedWithSortedKeys: Bool) throws -> Data {
        let encoder = JSONEncoder()
        if prettyPrintedWithSortedKeys {
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            return try encoder.encode(document)
        }
        let members: [(String, Data)] = [
            ("format", try encoder.encode(document.format)), ("version", try encoder.encode(document.version)),
            ("currency", try encoder.encode(document.currency)),
            ("includeReceivables", try encoder.encode(document.includeReceivables)),
            ("accounts", try encoder.encode(document.accounts)), ("updates", try encoder.encode(document.updates)),
            ("transactions", try encoder.encode(document.transactions)),
            ("invoices", try encoder.encode(document.invoices)),
        ]
        return Data("{".utf8)
            + members.map { Data("\"\($0.0)\":".utf8) + $0.1 }.joined(separator: Data(",".utf8))
            + Data("}".utf8)
    }

    @Test(arguments: [(false, 1 << 12), (true, 1 << 16), (false, 4 << 20)])
    func readsWhatJSONDecoderReads(prettyPrinted: Bool, window: Int) throws {
        let folder = TemporaryDirectory()
        let data = try encoded(document(), prettyPrintedWithSortedKeys: prettyPrinted)
        // Coffer's order loads each long section as it comes; sorted keys put `version` last, so
        // every long section is loaded after the whole file is read.
        var streamable: [String: Bool] = [:]
        _ = try ExportOutline(ExportSource(data: data, windowSize: window)) { section, _, members in
            streamable[section] = ExportDocument.Converter(prerequisitesIn: members) != nil
            return false
        }
        #expect(streamable == ["updates": !prettyPrinted, "transactions": !prettyPrinted, "invoices": !prettyPrinted])
        let ledger = try Ledger.create(
            at: folder.path("v.coffer"), passphrase: try Passphrase("stream passphrase"), parameters: testParameters,
            currency: .gbp)
        let (count, _) = try ledger.importExport(try source(data, window: window, in: folder), from: "x.json")
        #expect(count == 2 + 3_000 + 4_000 + 300)
        let expected = try expected(data)
        #expect(loaded(ledger) == expected)
        // The summary the import wrote is the one a whole read makes.
        let summary = try #require(ledger.summaryRecord?.summary)
        #expect(ledger.isCurrent(summary))
        #expect(
            summary.monthEnds
                == (try MonthEnds.empty.recomputed(from: nil, portfolio: ledger.portfolio, invoices: ledger.invoices)))
        #expect(summary.transactions == 4_000 && summary.lastTransaction == 4_000)
        #expect(summary.lastValueOrder == ledger.nextUpdateSequence - 1 && summary.lastChange == 1)
        #expect(try ledger.vault.verify().recordCount == ledger.vault.recordCount)
        // One change, undone whole.
        try ledger.undo()
        #expect(ledger.updates.isEmpty && ledger.transactions.isEmpty && ledger.invoices.isEmpty)
    }

    @Test func refusesWhatJSONDecoderRefusesAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let valid = String(decoding: try encoder.encode(document()), as: UTF8.self)
        /// `valid` with the first `target` after `section` starts replaced.
        func damage(_ target: String, _ replacement: String, after section: String = "\"transactions\":[") -> String {
            let start = valid.range(of: section)!.upperBound
            let found = valid.range(of: target, range: start..<valid.endIndex)!
            return valid.replacingCharacters(in: found, with: replacement)
        }
        let damaged = [
            "truncated": String(valid.dropLast(200)),
            "a number where an amount string belongs": damage("\"amount\":\"499.25\"", "\"amount\":499.25"),
            "a brace closing an array": damage("}],", "}},"),
            "a missing comma between elements": damage("},{", "}{"),
            "a stray bracket between elements": damage("},{", "}],[{"),
            "trailing garbage": valid + "]",
            "a control character in a string": damage("a ] b } c", "a \u{01} b"),
            "a second updates section": valid.replacingOccurrences(
                of: "\"version\":", with: "\"updates\":[],\"version\":"),
        ]
        let ledger = try Ledger.create(
            at: folder.path("v.coffer"), passphrase: try Passphrase("stream passphrase"), parameters: testParameters,
            currency: .gbp)
        let before = snapshot(ledger), counter = ledger.vault.commitCounter
        for (name, text) in damaged {
            let data = Data(text.utf8)
            #expect(data != Data(valid.utf8), "\(name): the damage must change the document")
            #expect(throws: DecodingError.self, "\(name)") {
                try ledger.importExport(try source(data, window: 1 << 12, in: folder), from: "x.json")
            }
            #expect(ledger.vault.commitCounter == counter && snapshot(ledger) == before, "\(name)")
        }
    }

    @Test func aBadItemAnywhereNamesItselfAndWritesNothing() throws {
        let folder = TemporaryDirectory()
        var document = document()
        let last = document.transactions!.count - 1
        let good = document.transactions![last]
        document.transactions![last] = .init(
            id: good.id, amount: good.amount, type: good.type, target: good.target, note: good.note,
            date: "2025-02-30", sequence: good.sequence, importAccount: nil, importHash: nil)
        let ledger = try Ledger.create(
            at: folder.path("v.coffer"), passphrase: try Passphrase("stream passphrase"), parameters: testParameters,
            currency: .gbp)
        let before = snapshot(ledger), counter = ledger.vault.commitCounter
        let data = try JSONEncoder().encode(document)
        let error = try #require(throws: CofferError.self) {
            try ledger.importExport(try source(data, window: 1 << 12, in: folder), from: "x.json")
        }
        #expect(error.message.hasPrefix("transactions[\(last)]:"), "\(error.message)")
        #expect(ledger.vault.commitCounter == counter && snapshot(ledger) == before)

        // A decoding failure deep in a section is placed in the section, not in its slice.
        var text = String(decoding: try JSONEncoder().encode(self.document()), as: UTF8.self)
        // Keys come in any order (an unsorted encoding), so the number may end its object; 2500 is
        // the 2,500th update's or transaction's, whichever section the encoder put first.
        let marker = try #require(text.range(of: "\"sequence\":2500"))
        text.replaceSubrange(marker, with: "\"sequence\":\"2500\"")
        let decoding = try #require(throws: DecodingError.self) {
            try ledger.importExport(try source(Data(text.utf8), window: 1 << 12, in: folder), from: "x.json")
        }
        #expect(ExportSource.describe(decoding).hasSuffix("[2499].sequence"), "\(ExportSource.describe(decoding))")
        #expect(ledger.vault.commitCounter == counter)
    }

    @Test func anIdGivenTwiceIsRefused() throws {
        let folder = TemporaryDirectory()
        var document = document()
        let update = document.updates![10]
        document.updates![20] = update
        let ledger = try Ledger.create(
            at: folder.path("v.coffer"), passphrase: try Passphrase("stream passphrase"), parameters: testParameters,
            currency: .gbp)
        let counter = ledger.vault.commitCounter
        let error = try #require(throws: CofferError.self) {
            try ledger.importExport(
                try source(try JSONEncoder().encode(document), window: 1 << 16, in: folder), from: "x.json")
        }
        #expect(error.message.contains("one id"))
        #expect(ledger.vault.commitCounter == counter)
        #expect(try ledger.vault.verify().recordCount == ledger.vault.recordCount)
    }
}
