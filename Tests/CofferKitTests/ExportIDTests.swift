import FinanceCore
import Foundation
import Testing
import VaultCrypto
import VaultStore

@testable import CofferKit

@Suite struct ExportIDTests {
    @Test func exportedIDsParseLikeFoundation() {
        for _ in 0..<200 {
            let id = UUID()
            #expect(UUID(exportedID: id.uuidString) == id)
            #expect(UUID(exportedID: id.uuidString.lowercased()) == id)
            #expect(RecordID(uuid: id).uuid == id, "record ids and UUIDs share their 16 bytes")
        }
        for text in [
            "", "not-an-id", "123e4567-e89b-12d3-a456-42661417400", "123e4567-e89b-12d3-a456-4266141740000",
            "123e4567+e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-42661417400g",
        ] {
            #expect(UUID(exportedID: text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil)
        }
    }
}
