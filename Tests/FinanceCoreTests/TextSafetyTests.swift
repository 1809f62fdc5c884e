import Foundation
import Testing

@testable import FinanceCore

@Suite struct TextSafetyTests {
    @Test func printableReplacesControlsButKeepsTheAllowedSequences() {
        #expect(TextSafety.printable("a\u{1B}]2;T\u{07}b\nc") == "a\u{FFFD}]2;T\u{FFFD}b\nc")
        #expect(
            TextSafety.printable("\u{1B}[1mbold\u{1B}[0m \u{1B}[2J", keeping: ["\u{1B}[1m", "\u{1B}[0m"])
                == "\u{1B}[1mbold\u{1B}[0m \u{FFFD}[2J")
        #expect(TextSafety.printable("plain £ text") == "plain £ text")
    }
}
