import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

@Suite struct WholeVaultDecodeTests {
    @Test func anUnreadableTransactionAmongThousandsIsNamed() throws {
        try withScratchVault { vault in
            var changes: [RecordChange] = []
            for day in 0..<9000 {
                let spend = Transaction(
                    amount: Money(minorUnits: 100), type: .expense, target: .uncategorised, note: "n\(day)",
                    date: CalendarDate(dayNumber: 20000 + day % 300), sequence: UInt64(day))
                changes.append(.put(RecordID(uuid: spend.id), Data(RecordCodec.encode(.transaction(spend)))))
            }
            let ledger = try Ledger(
                vault: {
                    try vault.apply(changes); return vault
                }())
            #expect(ledger.transactions.count == 9000)
            #expect(Set(ledger.transactions.map(\.id)).count == 9000)

            let broken = RecordID.random()
            try vault.apply([.put(broken, Data([10, 2, 0xff]))])  // a transaction cut short
            do {
                _ = try Ledger(vault: vault)
                Issue.record("an unreadable record must stop the ledger")
            } catch let error as CofferError {
                #expect(error.code == .damaged && error.message.contains(broken.hex))
            }
        }
    }
}
