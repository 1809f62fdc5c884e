import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// The import reads big exports on every core; it must read exactly what `JSONDecoder` reads and
/// refuse exactly what it refuses.
@Suite struct ExportDocumentReaderTests {
    /// Notes full of the characters the boundary scan has to step over.
    static let awkward = [
        "plain", "a ] b } c", "quote \" inside", "back\\slash\\", "[{\"key\": [1, 2]}]", "ünïcødé ✓",
        "tab\tand\nnewline",
    ]

    func document() -> ExportDocument {
        var document = ExportDocument(currency: "GBP", includeReceivables: true)
        let account = UUID().uuidString.lowercased()
        document.accounts = [
            .init(
                id: account, name: "Bank", category: "Savings", kind: "asset", growth: nil, created: "2020-01-01",
                closed: nil)
        ]
        document.updates = (0..<9_000).map { index in
            .init(
                id: UUID().uuidString.lowercased(), account: account, date: "2024-01-01", amount: "\(index).50",
                sequence: UInt64(index), note: index % 3 == 0 ? Self.awkward[index % Self.awkward.count] : nil)
        }
        document.transactions = (0..<12_000).map { index in
            .init(
                id: UUID().uuidString.lowercased(), amount: "\(index % 500).25", type: "expense",
                target: .init(kind: "uncategorised", id: nil), note: Self.awkward[index % Self.awkward.count],
                date: "2025-03-04",
                sequence: UInt64(index), importAccount: index % 2 == 0 ? "Current" : nil,
                importHash: index % 2 == 0 ? "00ff" : nil)
        }
        document.invoices = (0..<300).map { index in
            .init(
                id: UUID().uuidString.lowercased(), number: index + 1, client: UUID().uuidString.lowercased(),
                items: [.init(description: "Work ]}", quantity: "1", unitPrice: "10.00")], tax: nil,
                issued: "2025-01-01", due: "2025-01-31",
                notes: nil, status: "sent", sentOn: "2025-01-01", voidedOn: nil, payments: [])
        }
        return document
    }

    func canonical(_ document: ExportDocument) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(document)
    }

    @Test(arguments: [false, true]) func readsWhatJSONDecoderReads(prettyPrinted: Bool) throws {
        let encoder = JSONEncoder()
        if prettyPrinted { encoder.outputFormatting = [.prettyPrinted] }
        let data = try encoder.encode(document())
        #expect(
            data.count >= ExportDocumentReader.parallelThreshold,
            "the document must be big enough to take the parallel path")
        let parallel = try #require(ExportDocumentReader.decodeInParallel(data))
        let plain = try JSONDecoder().decode(ExportDocument.self, from: data)
        #expect(try canonical(parallel) == canonical(plain))
        #expect(
            parallel.transactions?.count == 12_000 && parallel.updates?.count == 9_000
                && parallel.invoices?.count == 300)
    }

    @Test func refusesWhatJSONDecoderRefuses() throws {
        // Sorted keys: the damage below looks for text after the transactions array, which an
        // unordered encoding may place last (so some runs found nothing to damage and trapped).
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let valid = String(decoding: try encoder.encode(document()), as: UTF8.self)
        /// `valid` with the first `target` after the transactions array starts replaced.
        func damage(_ target: String, _ replacement: String) -> String {
            let start = valid.range(of: "\"transactions\":[")!.upperBound
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
        ]
        for (name, text) in damaged {
            let data = Data(text.utf8)
            #expect(data != Data(valid.utf8), "\(name): the damage must change the document")
            #expect(ExportDocumentReader.decodeInParallel(data) == nil, "\(name)")
            var refused = false
            do { _ = try ExportDocumentReader.decode(data) } catch is DecodingError { refused = true }
            #expect(refused, "\(name): the ordinary decoder must refuse it too")
        }
    }
}
