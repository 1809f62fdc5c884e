import CofferTestSupport
import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

/// Records made now get ordered ids (`RecordIDs`), and people still name them apart: the short
/// ids of records made in one second differ, and each finds its own record.
@Suite struct OrderedIDTests {
    @Test func recordsMadeTogetherHaveOrderedIdsAndDistinctShortIds() throws {
        let directory = TemporaryDirectory()
        let ledger = try Ledger.create(
            at: directory.path("v.coffer"), passphrase: try Passphrase("ordered ids"), parameters: testParameters,
            currency: .gbp)
        let today = date("2026-11-22")
        let groceries = try ledger.category(named: "Groceries")
        let made = try (1...300).map { try ledger.spend(Money(minorUnits: Int64($0)), in: groceries, on: today) }
        #expect(made.allSatisfy { RecordIDs.isOrdered($0.id) })
        // Made in about a second: their ids share their first eight hex digits…
        #expect(Set(made.map { String($0.id.uuidString.prefix(6)) }).count < 5)
        // …but not their short ids, and every short id, or its first five digits, finds its record.
        let short = made.map { Ledger.shortID($0.id) }
        #expect(Set(short).count == 300 && short.allSatisfy { $0.count == 8 && $0.allSatisfy(\.isHexDigit) })
        for transaction in made.prefix(50) {
            #expect(try ledger.transaction(withID: Ledger.shortID(transaction.id)).id == transaction.id)
            let five = String(Ledger.shortID(transaction.id).prefix(5))
            if short.filter({ $0.hasPrefix(five) }).count == 1 {
                #expect(try ledger.transaction(withID: five).id == transaction.id)
            }
        }
    }

    /// A random (older or imported) id is named by its own first eight hex digits, as before.
    @Test func randomIdsKeepTheirFirstDigits() {
        let id = UUID(uuidString: "3F2504E0-4F89-41D3-9A0C-0305E82C3301")!
        #expect(!RecordIDs.isOrdered(id))
        #expect(Ledger.shortID(id) == "3f2504e0")
    }
}
